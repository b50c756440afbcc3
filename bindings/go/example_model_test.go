package cairn_test

import (
	"fmt"
	"log"

	"cairn.dev/cairn"
)

// stopBelow is a callback written in Go: it ends fit once the loss is below a bound.
type stopBelow struct {
	cairn.BaseCallback // the hooks it does not implement do nothing
	loss               float64
}

func (s stopBelow) OnEpochEnd(model *cairn.Model, epoch int64, logs cairn.Logs) error {
	loss, err := logs.Get("loss")
	if err == nil && loss < s.loss {
		model.StopTraining()
	}
	return err
}

// A model learns y = 2x - 1 with Fit, a Go callback ends training early, and Predict runs it.
func ExampleModel_Fit() {
	ctx, err := cairn.NewContext(cairn.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	x, _ := cairn.NewTensor(ctx, []int64{4, 1}, []float32{0, 1, 2, 3})
	y, _ := cairn.NewTensor(ctx, []int64{4, 1}, []float32{-1, 1, 3, 5})
	dense, _ := cairn.NewDense(ctx, 1)
	model, err := cairn.NewModel(ctx, []*cairn.Layer{dense})
	if err != nil {
		log.Fatal(err)
	}
	sgd, _ := cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(0.05))
	if err := model.Compile(sgd, "mse"); err != nil {
		log.Fatal(err)
	}
	stop, _ := cairn.NewCallback(stopBelow{loss: 1e-3})
	defer stop.Close()
	history, err := model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(1000), cairn.WithVerbose(cairn.VerboseSilent),
		cairn.WithCallbacks(stop))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(history.Names, len(history.Epochs) < 1000)
	prediction, err := model.Predict(cairn.XY{X: x})
	if err != nil {
		log.Fatal(err)
	}
	values, _ := cairn.Read[float32](prediction)
	fmt.Printf("%.1f\n", values)
	// Output:
	// [loss] true
	// [-1.0 1.0 3.0 5.0]
}
