package cairn_test

import (
	"fmt"
	"log"
	"os"

	"cairn.dev/cairn"
)

// A module with a variable, saved by a manager and restored into a fresh copy of the program's
// objects, as the next run of a training program would.
func ExampleCheckpointManager() {
	dir, err := os.MkdirTemp("", "cairn-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	for run := 1; run <= 2; run++ {
		// Build the objects: net.w = Variable([1, 2], name "net/w:0").
		net, err := cairn.NewModule(ctx, "net")
		if err != nil {
			log.Fatal(err)
		}
		initial, _ := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
		w, err := cairn.NewVariable(ctx, initial, cairn.WithVariableName("w"), cairn.WithScope(net))
		initial.Close()
		if err != nil {
			log.Fatal(err)
		}
		if err := net.Set("w", w); err != nil {
			log.Fatal(err)
		}
		ckpt, err := cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": net})
		if err != nil {
			log.Fatal(err)
		}
		manager, err := cairn.NewCheckpointManager(ckpt, dir, cairn.WithMaxToKeep(3))
		if err != nil {
			log.Fatal(err)
		}

		// Restore the latest checkpoint, if any ("" restores nothing), then train a step and save.
		status, err := ckpt.Restore(manager.Latest())
		if err != nil {
			log.Fatal(err)
		}
		status.Close()
		value, _ := cairn.ReadValue[float32](w)
		fmt.Println("run", run, w.Name(), "starts at", value)
		step, _ := cairn.NewTensor(ctx, []int64{2}, []float32{10, 10})
		if err := w.AssignAdd(step); err != nil {
			log.Fatal(err)
		}
		step.Close()
		if _, err := manager.Save(); err != nil {
			log.Fatal(err)
		}

		manager.Close()
		ckpt.Close()
		w.Close()
		net.Close()
	}

	reader, err := cairn.OpenCheckpointReader(dir + "/ckpt-2")
	if err != nil {
		log.Fatal(err)
	}
	defer reader.Close()
	for _, e := range reader.Entries() {
		fmt.Println(e.Key, e.DType, e.Shape)
	}
	// Output:
	// run 1 net/w:0 starts at [1 2]
	// run 2 net/w:0 starts at [11 12]
	// _CHECKPOINTABLE_OBJECT_GRAPH string []
	// model/w/.ATTRIBUTES/VARIABLE_VALUE float32 [2]
	// save_counter/.ATTRIBUTES/VARIABLE_VALUE int64 []
}
