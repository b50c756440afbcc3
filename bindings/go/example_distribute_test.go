package cairn_test

import (
	"fmt"
	"log"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// A mirrored strategy over two logical CPU devices: each replica sums its part of a global batch
// and the replicas all-reduce their partial sums, so every replica holds the global sum.
func ExampleStrategy_Run() {
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	// Split the CPU into "cpu:0" and "cpu:1" (the device configuration does this; here the tests'
	// helper, before any device is used).
	if err := cairn.SplitCPUForTest(ctx, 2); err != nil {
		log.Fatal(err)
	}
	strategy, err := cairn.NewMirroredStrategy(ctx) // every CPU device
	if err != nil {
		log.Fatal(err)
	}
	defer strategy.Close()

	batch, err := cairn.NewTensor(ctx, []int64{6}, []float32{1, 2, 3, 4, 5, 6})
	if err != nil {
		log.Fatal(err)
	}
	defer batch.Close()
	parts, err := strategy.SplitBatch(batch) // parts[r] is on replica r's device
	if err != nil {
		log.Fatal(err)
	}
	results, err := strategy.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		partial, err := ops.Sum(r.Context(), parts[r.ID()])
		if err != nil {
			return nil, err
		}
		defer partial.Close()
		return r.AllReduce(cairn.ReductionSum, partial)
	})
	if err != nil {
		log.Fatal(err)
	}
	for r, outs := range results {
		sum, err := cairn.Read[float32](outs[0])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("replica %d on %s: %v\n", r, strategy.Devices()[r], sum[0])
		outs[0].Close()
		parts[r].Close()
	}
	// Output:
	// replica 0 on cpu:0: 21
	// replica 1 on cpu:1: 21
}
