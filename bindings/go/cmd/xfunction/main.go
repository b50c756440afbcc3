// Command xfunction is the Go side of the cross-language function test (tests/xlang/SPEC.md,
// "Compiled functions"; tests/xlang/functions.sh runs it against the other languages):
//
//	xfunction export PATH   trains y = x @ w + b for three SGD steps through a captured training
//	                        step, traces predict on the query, exports it to PATH and prints
//	                        the losses and predict's outputs
//	xfunction load PATH     loads a function file from any language and prints its outputs on
//	                        the query
//
// Values are printed as the hex of their float32 bits, so equal lines mean equal values.
package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// The spec's data.
var (
	w0     = []float32{0.5, -0.25}
	b0     = []float32{0.1}
	trainX = []float32{1, 0, 0, 1, 1, 1, 2, -1}
	trainY = []float32{1, 2, 3, 0.5}
	query  = []float32{1, 2, 3, -1, 0.5, 0.25}
)

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || (args[0] != "export" && args[0] != "load") {
		fmt.Fprintln(stderr, "usage: xfunction export|load PATH")
		return 2
	}
	ctx, err := cairn.NewContext()
	if err != nil {
		fmt.Fprintln(stderr, "xfunction:", err)
		return 1
	}
	defer ctx.Close()
	if args[0] == "export" {
		err = exportFunction(ctx, args[1], stdout)
	} else {
		err = loadFunction(ctx, args[1], stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "xfunction:", err)
		return 1
	}
	return 0
}

type model struct {
	w, b *cairn.Variable
	opt  *cairn.Optimizer
}

// affine is x @ w + b, reading both variables.
func (m *model) affine(ctx *cairn.Context, x *cairn.Tensor) (*cairn.Tensor, error) {
	w, err := m.w.Read()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	b, err := m.b.Read()
	if err != nil {
		return nil, err
	}
	defer b.Close()
	xw, err := ops.MatMul(ctx, x, w)
	if err != nil {
		return nil, err
	}
	defer xw.Close()
	return ops.Add(ctx, xw, b)
}

func (m *model) predict(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
	y, err := m.affine(ctx, in[0])
	return []*cairn.Tensor{y}, err
}

// trainStep is one SGD step on the mean squared error; it returns the loss.
func (m *model) trainStep(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
	tape, err := cairn.NewGradientTape(ctx)
	if err != nil {
		return nil, err
	}
	defer tape.Close()
	y, err := m.affine(ctx, in[0])
	if err != nil {
		return nil, err
	}
	defer y.Close()
	loss, err := cairn.Loss(ctx, cairn.LossKindMeanSquaredError, in[1], y, false)
	if err != nil {
		return nil, err
	}
	vars := []*cairn.Variable{m.w, m.b}
	grads, err := tape.GradientVariables(loss, vars)
	if err == nil {
		defer grads[0].Close()
		defer grads[1].Close()
		err = m.opt.ApplyGradients(grads, vars)
	}
	if err != nil {
		loss.Close()
		return nil, err
	}
	return []*cairn.Tensor{loss}, nil
}

func exportFunction(ctx *cairn.Context, path string, out io.Writer) error {
	var m model
	var err error
	if m.w, err = variable(ctx, "w", []int64{2, 1}, w0); err != nil {
		return err
	}
	defer m.w.Close()
	if m.b, err = variable(ctx, "b", []int64{1}, b0); err != nil {
		return err
	}
	defer m.b.Close()
	if m.opt, err = cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(0.1)); err != nil {
		return err
	}
	defer m.opt.Close()
	step, err := cairn.NewFunction(ctx, "train_step", m.trainStep)
	if err != nil {
		return err
	}
	defer step.Close()
	predict, err := cairn.NewFunction(ctx, "predict", m.predict)
	if err != nil {
		return err
	}
	defer predict.Close()

	x, err := cairn.NewTensor(ctx, []int64{4, 2}, trainX)
	if err != nil {
		return err
	}
	defer x.Close()
	y, err := cairn.NewTensor(ctx, []int64{4, 1}, trainY)
	if err != nil {
		return err
	}
	defer y.Close()
	for i := 0; i < 3; i++ {
		if err := callAndPrint(out, "loss", step, x, y); err != nil {
			return err
		}
	}
	q, err := cairn.NewTensor(ctx, []int64{3, 2}, query)
	if err != nil {
		return err
	}
	defer q.Close()
	if err := callAndPrint(out, "predict", predict, q); err != nil {
		return err
	}
	return predict.Export(path)
}

func loadFunction(ctx *cairn.Context, path string, out io.Writer) error {
	f, err := cairn.LoadFunction(ctx, path)
	if err != nil {
		return err
	}
	defer f.Close()
	q, err := cairn.NewTensor(ctx, []int64{3, 2}, query)
	if err != nil {
		return err
	}
	defer q.Close()
	return callAndPrint(out, "predict", f, q)
}

func variable(ctx *cairn.Context, name string, shape []int64, values []float32) (*cairn.Variable, error) {
	t, err := cairn.NewTensor(ctx, shape, values)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return cairn.NewVariable(ctx, t, cairn.WithVariableName(name))
}

// callAndPrint calls f and prints label and the float32 bits of its one output.
func callAndPrint(out io.Writer, label string, f *cairn.Function, inputs ...*cairn.Tensor) error {
	results, err := f.Call(inputs...)
	if err != nil {
		return err
	}
	defer results[0].Close()
	values, err := cairn.Read[float32](results[0])
	if err != nil {
		return err
	}
	var line strings.Builder
	line.WriteString(label)
	for _, v := range values {
		fmt.Fprintf(&line, " %08x", math.Float32bits(v))
	}
	fmt.Fprintln(out, line.String())
	return nil
}
