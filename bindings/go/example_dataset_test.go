package cairn_test

import (
	"fmt"
	"log"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// The README's pipeline, smaller: range -> map "double" (traced once, four elements at a time) ->
// batch, read with a range-over-func loop; the iterator's state restores into a fresh iterator.
func ExampleDataset_Map() {
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	r, err := cairn.NewDatasetRange(ctx, 0, 7, 1)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	double := func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		two, err := cairn.NewTensor(ctx, nil, []int64{2})
		if err != nil {
			return nil, err
		}
		defer two.Close()
		y, err := ops.Mul(ctx, in[0], two)
		return []*cairn.Tensor{y}, err
	}
	m, err := r.Map("double", double, cairn.WithParallelCalls(4), cairn.WithOutputNames("x"))
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	b, err := m.Batch(3, false)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	fmt.Println(b.Cardinality(), must(b.Spec()))

	it, err := b.Iterate()
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	var state []byte
	for e, err := range it.All() {
		if err != nil {
			log.Fatal(err)
		}
		x, err := e.Get("x")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(must(cairn.Read[int64](x)))
		e.Close()
		if it.Position() == 1 {
			state = must(it.Save())
		}
	}
	again, err := b.Iterate()
	if err != nil {
		log.Fatal(err)
	}
	defer again.Close()
	if err := again.Restore(state); err != nil {
		log.Fatal(err)
	}
	e, err := again.Next()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	fmt.Println("after restore:", must(cairn.Read[int64](e.Tensors[0])))
	// Output:
	// 3 [x: int64[-1]]
	// [0 2 4]
	// [6 8 10]
	// [12]
	// after restore: [6 8 10]
}
