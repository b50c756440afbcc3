// Command example adds two tensors with Cairn's Go binding.
package main

import (
	"fmt"
	"log"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func main() {
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	x, err := cairn.NewTensor(ctx, []int64{2, 2}, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	y, err := cairn.NewTensor(ctx, []int64{2}, []float32{10, 20})
	if err != nil {
		log.Fatal(err)
	}
	defer y.Close()

	z, err := ops.Add(ctx, x, y) // y broadcasts over x's rows
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()
	values, err := cairn.Read[float32](z)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(z.Shape(), values)
}
