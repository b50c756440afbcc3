// Command fit trains a two-layer model on the digits CSV with Model.Fit, a ModelCheckpoint and a
// TensorBoard callback, evaluates it, restores the last checkpoint into a fresh model and
// predicts with it: the Go version of examples/c/fit_digits.c, shown in the README.
//
//	usage: fit digits.csv DIR   (checkpoints in DIR/checkpoints, TensorBoard runs in DIR/logs)
package main

import (
	"fmt"
	"log"
	"os"
	"slices"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func main() {
	csv, dir := os.Args[1], os.Args[2]
	ctx := must(cairn.NewContext(cairn.WithSeed(1)))
	defer ctx.Close()
	columns := append(slices.Repeat([]cairn.DType{cairn.Float32}, 64), cairn.Int32) // 64 pixels, a label
	data := must(must(cairn.NewDatasetCSV(ctx, []string{csv}, columns)).Map("xy", pack, cairn.WithOutputNames("x", "y")))
	train, test := must(must(data.Take(1440)).Batch(32, false)), must(must(data.Skip(1440)).Batch(512, false))
	model := must(newModel(ctx))
	checkpoints, board := must(cairn.NewModelCheckpoint(ctx, dir+"/checkpoints")), must(cairn.NewTensorBoard(dir+"/logs"))
	must(model.Fit(train, cairn.WithEpochs(20), cairn.WithCallbacks(checkpoints, board)))
	fmt.Println("test:", must(model.Evaluate(test)))
	fresh := must(newModel(ctx)) // restored before it is built: the values wait on it
	check(cairn.RestoreModel(ctx, fresh, must(cairn.LatestCheckpoint(ctx, dir+"/checkpoints"))))
	fmt.Println("predictions:", must(fresh.Predict(test)).Shape(), "restored:", must(fresh.Evaluate(test)))
}

// pack makes a CSV record's 64 pixel columns one float32[64] vector x, beside the label y.
func pack(ctx *cairn.Context, columns []*cairn.Tensor) ([]*cairn.Tensor, error) {
	x, err := ops.Pack(ctx, columns[:64], ops.PackAxis(0))
	return []*cairn.Tensor{x, columns[64]}, err
}

// newModel is Dense(64, relu) -> Dense(10) logits, compiled with Adam and sparse crossentropy.
func newModel(ctx *cairn.Context) (*cairn.Model, error) {
	hidden := must(cairn.NewDense(ctx, 64, cairn.WithActivation("relu")))
	model := must(cairn.NewModel(ctx, []*cairn.Layer{hidden, must(cairn.NewDense(ctx, 10))}))
	adam := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.003)))
	return model, model.Compile(adam, "sparse_categorical_crossentropy", cairn.WithMetrics("accuracy"))
}

// must is v, or it ends the program with err (every error is checked).
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func check(err error) { must(0, err) }
