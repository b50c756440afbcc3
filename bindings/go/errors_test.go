package cairn_test

import (
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// Misuse the binding can see is reported in its own terms, naming the Go function and the
// argument: a closed handle is FAILED_PRECONDITION, a nil one INVALID_ARGUMENT, and no C-level
// wording ("ctx is NULL", "input 0 is NULL") comes through.
func TestMisuseIsReportedInGoTerms(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{1}, []float32{2})
	closedT := tensor(t, ctx, []int64{1}, []float32{3})
	closedT.Close()
	closedCtx := must(cairn.NewContext())
	closedCtx.Close()

	tape := must(cairn.NewGradientTape(ctx))
	ok(t, tape.Watch(x))
	y := must(ops.Mul(ctx, x, x))
	defer y.Close()
	_, err := tape.Gradient(y, []*cairn.Tensor{x, closedT})
	wantError(t, err, "FAILED_PRECONDITION: GradientTape.Gradient: source 1 is closed")
	_, err = tape.Gradient(y, []*cairn.Tensor{x}, cairn.WithOutputGradient(closedT))
	wantError(t, err, "FAILED_PRECONDITION: GradientTape.Gradient: output gradient (WithOutputGradient) is closed")
	tape.Close()
	_, err = cairn.NewGradientTape(closedCtx)
	wantError(t, err, "FAILED_PRECONDITION: NewGradientTape: context is closed")

	dense := must(cairn.NewDense(ctx, 1))
	_, err = dense.Call(closedT, false)
	wantError(t, err, "FAILED_PRECONDITION: Layer.Call: input is closed")
	dense.Close()
	_, err = dense.Call(x, false)
	wantError(t, err, "FAILED_PRECONDITION: Layer.Call: layer is closed")
	_, err = cairn.NewDense(closedCtx, 1)
	wantError(t, err, "FAILED_PRECONDITION: NewDense: context is closed")
	_, err = cairn.NewMaxPool2D(nil)
	wantError(t, err, "INVALID_ARGUMENT: NewMaxPool2D: context is nil")

	v := newVariable(t, ctx, []float32{1})
	opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd))
	defer opt.Close()
	wantError(t, opt.ApplyGradients([]*cairn.Tensor{closedT}, []*cairn.Variable{v}),
		"FAILED_PRECONDITION: Optimizer.ApplyGradients: gradient 0 is closed")
	wantError(t, opt.ApplyGradients([]*cairn.Tensor{x}, []*cairn.Variable{nil}),
		"INVALID_ARGUMENT: Optimizer.ApplyGradients: variable 0 is nil")

	_, err = cairn.Loss(ctx, cairn.LossKindMeanSquaredError, x, closedT, false)
	wantError(t, err, "FAILED_PRECONDITION: Loss: yPred is closed")
	metric := must(cairn.NewMetric(ctx, cairn.MetricKindMean, "m"))
	metric.Close()
	wantError(t, metric.Update(x, nil), "FAILED_PRECONDITION: Metric.Update: metric is closed")

	double := func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		z, err := ops.Add(ctx, in[0], in[0])
		return []*cairn.Tensor{z}, err
	}
	f := must(cairn.NewFunction(ctx, "double", double))
	_, err = f.Call(closedT)
	wantError(t, err, "FAILED_PRECONDITION: Function.Call: input 0 is closed")
	_, err = f.Dump(-1)
	wantError(t, err, "OUT_OF_RANGE: Function.Dump: trace -1 of function 'double' (traces count from 0)")
	f.Close()
	_, err = f.Call(x)
	wantError(t, err, "FAILED_PRECONDITION: Function.Call: function is closed")
	_, err = f.Signature(0)
	wantError(t, err, "FAILED_PRECONDITION: Function.Signature: function is closed")

	pred := tensor(t, ctx, nil, []bool{true})
	_, err = cairn.Cond(ctx, pred, []*cairn.Tensor{x, closedT}, double, double, 1)
	wantError(t, err, "FAILED_PRECONDITION: Cond: operand 1 is closed")
	_, err = cairn.TensorArrayRead(ctx, closedT, x)
	wantError(t, err, "FAILED_PRECONDITION: TensorArrayRead: array is closed")
	wantError(t, closedCtx.Synchronize(), "FAILED_PRECONDITION: Context.Synchronize: context is closed")
}

// Error() is "<CODE>: <message>" as in every binding; a sentinel is its code alone.
func TestErrorText(t *testing.T) {
	err := &cairn.Error{Code: cairn.CodeInvalidArgument, Message: "Add: incompatible shapes [2,3] and [4]"}
	wantError(t, err, "INVALID_ARGUMENT: Add: incompatible shapes [2,3] and [4]")
	wantError(t, cairn.ErrNotFound, "NOT_FOUND")
}
