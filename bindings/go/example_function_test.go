package cairn_test

import (
	"fmt"
	"log"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// The README's example: a function traced once for every length of float32 vector, reading a
// variable by reference.
func ExampleNewFunction() {
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	init, err := cairn.NewTensor(ctx, nil, []float32{2})
	if err != nil {
		log.Fatal(err)
	}
	defer init.Close()
	w, err := cairn.NewVariable(ctx, init)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	calls := 0
	step, err := cairn.NewFunction(ctx, "step", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		calls++ // a side effect: runs only while tracing
		v, err := w.Read()
		if err != nil {
			return nil, err
		}
		defer v.Close()
		y, err := ops.Mul(ctx, in[0], v)
		return []*cairn.Tensor{y}, err
	}, cairn.WithInputSignature(cairn.TensorSpec{DType: cairn.Float32, Shape: []int64{-1}}))
	if err != nil {
		log.Fatal(err)
	}
	defer step.Close()

	for _, xs := range [][]float32{{1, 2}, {1, 2, 3}} {
		x, err := cairn.NewTensor(ctx, []int64{int64(len(xs))}, xs)
		if err != nil {
			log.Fatal(err)
		}
		out, err := step.Call(x)
		if err != nil {
			log.Fatal(err)
		}
		ys, err := cairn.Read[float32](out[0])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ys)
		out[0].Close()
		x.Close()
	}
	sig, err := step.Signature(0)
	if err != nil {
		log.Fatal(err)
	}
	// The body ran twice: a relaxed signature's second shape is traced too and compared with the
	// first trace (docs/graph.md); the graphs are the same, so one trace serves both.
	fmt.Println(calls, step.NumTraces(), sig)
	// Output:
	// [2 4]
	// [2 4 6]
	// 2 1 float32[-1]
}
