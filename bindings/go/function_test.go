package cairn_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// ---- Compiled functions: the seed's quiz, ported ----

// callOne calls f, which returns one output, and reads it as float32 or float64.
func callOne[E float32 | float64](t *testing.T, f *cairn.Function, inputs ...*cairn.Tensor) []E {
	t.Helper()
	out, err := f.Call(inputs...)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	defer closeNow(out)
	values, err := cairn.Read[E](out[0])
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return values
}

// newFunction makes a function closed when the test ends.
func newFunction(t *testing.T, ctx *cairn.Context, name string, body cairn.FunctionBody,
	options ...cairn.FunctionOption) *cairn.Function {
	t.Helper()
	f, err := cairn.NewFunction(ctx, name, body, options...)
	if err != nil {
		t.Fatalf("NewFunction: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// square is x * x, counting its traces: the counter is the host side effect of the quiz.
func square(traces *int) cairn.FunctionBody {
	return func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		*traces++
		y, err := ops.Mul(ctx, in[0], in[0])
		return []*cairn.Tensor{y}, err
	}
}

// The host body runs while tracing only: the same signature replays the graph without entering
// Go, a new shape or a new dtype traces again.
func TestFunctionTracesOncePerSignature(t *testing.T) {
	ctx := newContext(t)
	traces := 0
	f := newFunction(t, ctx, "square", square(&traces))

	if got := callOne[float32](t, f, tensor(t, ctx, []int64{2}, []float32{1, 2})); !slices.Equal(got, []float32{1, 4}) {
		t.Errorf("first call: %v", got)
	}
	if got := callOne[float32](t, f, tensor(t, ctx, []int64{2}, []float32{3, -4})); !slices.Equal(got, []float32{9, 16}) {
		t.Errorf("replay: %v", got)
	}
	if traces != 1 || f.NumTraces() != 1 {
		t.Fatalf("after a replay: %d traces of the body, NumTraces %d; want 1 and 1", traces, f.NumTraces())
	}

	callOne[float32](t, f, tensor(t, ctx, []int64{3}, []float32{1, 2, 3})) // new shape
	if got := callOne[float64](t, f, tensor(t, ctx, []int64{2}, []float64{1.5, 2})); !slices.Equal(got, []float64{2.25, 4}) {
		t.Errorf("float64 call: %v", got)
	}
	callOne[float64](t, f, tensor(t, ctx, []int64{2}, []float64{5, 6})) // float64 replay
	if traces != 3 || f.NumTraces() != 3 {
		t.Errorf("after a new shape and a new dtype: %d traces, NumTraces %d; want 3 and 3", traces, f.NumTraces())
	}
	want := []string{"float32[2]", "float32[3]", "float64[2]"}
	for i, w := range want {
		if got, err := f.Signature(i); err != nil || got != w {
			t.Errorf("Signature(%d) = %q, %v; want %q", i, got, err, w)
		}
	}
	dump, err := f.Dump(2)
	if err != nil || !strings.Contains(dump, "Mul") || !strings.Contains(dump, "float64[2]") {
		t.Errorf("Dump(2) = %q, %v; want a Mul node over float64[2]", dump, err)
	}
	_, err = f.Dump(3)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "trace 3")
	_, err = f.Signature(-1)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "trace -1")
}

// Replays run no Go code at all: a body that fails on any run after its first still replays.
func TestFunctionReplayDoesNotEnterGo(t *testing.T) {
	ctx := newContext(t)
	ran := false
	f := newFunction(t, ctx, "once", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		if ran {
			panic("the body ran during a replay")
		}
		ran = true
		y, err := ops.Neg(ctx, in[0])
		return []*cairn.Tensor{y}, err
	})
	for i := 0; i < 5; i++ {
		if got := callOne[float32](t, f, tensor(t, ctx, []int64{1}, []float32{float32(i)})); got[0] != -float32(i) {
			t.Errorf("call %d: %v", i, got)
		}
	}
}

// Variables are captured by reference: an assign between calls changes what a replay computes,
// and an assign inside the body happens on every replay.
func TestFunctionCapturesVariablesByReference(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{10, 20})
	defer v.Close()
	steps := newVariable(t, ctx, []float32{0})
	defer steps.Close()
	one := tensor(t, ctx, nil, []float32{1})
	traces := 0
	f := newFunction(t, ctx, "square_plus_var", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		traces++
		if err := steps.AssignAdd(one); err != nil { // a captured eager tensor, by value
			return nil, err
		}
		sq, err := ops.Mul(ctx, in[0], in[0])
		if err != nil {
			return nil, err
		}
		defer sq.Close()
		value, err := v.Read()
		if err != nil {
			return nil, err
		}
		defer value.Close()
		y, err := ops.Add(ctx, sq, value)
		return []*cairn.Tensor{y}, err
	})
	x := tensor(t, ctx, []int64{2}, []float32{1, 2})
	if got := callOne[float32](t, f, x); !slices.Equal(got, []float32{11, 24}) {
		t.Errorf("first call: %v", got)
	}
	ok(t, v.Assign(tensor(t, ctx, []int64{2}, []float32{0, -1})))
	if got := callOne[float32](t, f, x); !slices.Equal(got, []float32{1, 3}) {
		t.Errorf("after assign: %v, want the live value used", got)
	}
	callOne[float32](t, f, x)
	if traces != 1 {
		t.Errorf("%d traces", traces)
	}
	wantValue(t, steps, float32(3)) // the body's AssignAdd ran in every call
}

// An input signature with -1 gives one trace for every length; inputs that do not match are refused.
func TestFunctionInputSignature(t *testing.T) {
	ctx := newContext(t)
	traces := 0
	f := newFunction(t, ctx, "any_length", square(&traces),
		cairn.WithInputSignature(cairn.TensorSpec{DType: cairn.Float32, Shape: []int64{-1}}))
	for n := 1; n <= 5; n++ {
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(i + n)
		}
		got := callOne[float32](t, f, tensor(t, ctx, []int64{int64(n)}, data))
		if len(got) != n || got[n-1] != data[n-1]*data[n-1] {
			t.Errorf("length %d: %v", n, got)
		}
	}
	// The second length is traced once more, to check the graph does not depend on the length.
	if traces != 2 || f.NumTraces() != 1 {
		t.Errorf("%d traces, NumTraces %d; want 2 and 1", traces, f.NumTraces())
	}
	if sig, err := f.Signature(0); err != nil || sig != "float32[-1]" {
		t.Errorf("Signature(0) = %q, %v", sig, err)
	}
	_, err := f.Call(tensor(t, ctx, []int64{2}, []float64{1, 2}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "float64")
	_, err = f.Call(tensor(t, ctx, []int64{1, 2}, []float32{1, 2}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")

	_, err = cairn.NewFunction(ctx, "bad", square(&traces),
		cairn.WithInputSignature(cairn.TensorSpec{DType: cairn.Float32, Shape: []int64{-2}}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "-2")
}

var errHost = errors.New("the host said no")

// A Go error, a panic, an op error in the body and a wrong output count come back from Call, and
// nothing is cached: the next call traces again.
func TestFunctionBodyErrors(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2}, []float32{1, 2})
	cases := []struct {
		name  string
		body  func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error)
		check func(t *testing.T, err error)
	}{
		{"go error", func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) {
			return nil, fmt.Errorf("checking: %w", errHost)
		}, func(t *testing.T, err error) {
			if !errors.Is(err, errHost) || !strings.Contains(err.Error(), "function 'go error': checking") {
				t.Errorf("got %v", err)
			}
		}},
		{"panic", func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) {
			panic("boom")
		}, func(t *testing.T, err error) {
			if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
				t.Errorf("got %v", err)
			}
		}},
		{"panic with an error", func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) {
			panic(errHost)
		}, func(t *testing.T, err error) {
			if !errors.Is(err, errHost) {
				t.Errorf("got %v", err)
			}
		}},
		{"op error", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			y, err := ops.MatMul(ctx, in[0], in[0]) // vectors: an op error while tracing
			return []*cairn.Tensor{y}, err
		}, func(t *testing.T, err error) {
			wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "MatMul")
		}},
		{"two outputs", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			a := must(ops.Neg(ctx, in[0]))
			b := must(ops.Abs(ctx, in[0]))
			return []*cairn.Tensor{a, b}, nil
		}, func(t *testing.T, err error) {
			wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "returned 2 output(s)")
		}},
		{"nil output", func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) {
			return []*cairn.Tensor{nil}, nil
		}, func(t *testing.T, err error) {
			wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "output 0 of the body is nil")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs := 0
			f := newFunction(t, ctx, c.name, func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
				runs++
				return c.body(ctx, in)
			})
			for i := 0; i < 2; i++ {
				out, err := f.Call(x)
				if out != nil {
					t.Errorf("outputs %v with error %v", out, err)
				}
				c.check(t, err)
			}
			if runs != 2 || f.NumTraces() != 0 {
				t.Errorf("body ran %d times, NumTraces %d; want 2 and 0 (nothing cached)", runs, f.NumTraces())
			}
		})
	}
}

// The body's context and inputs are the trace's: kept past it, they fail cleanly; closing them
// inside the body does no harm.
func TestFunctionBodyHandlesEndWithTheTrace(t *testing.T) {
	ctx := newContext(t)
	var keptCtx *cairn.Context
	var keptInput *cairn.Tensor
	f := newFunction(t, ctx, "keeper", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		keptCtx, keptInput = ctx, in[0]
		if _, err := cairn.Read[float32](in[0]); err == nil {
			return nil, errors.New("a symbolic input had a value")
		}
		y, err := ops.Neg(ctx, in[0])
		ctx.Close() // the runtime's context: closing it does nothing
		return []*cairn.Tensor{y}, err
	})
	if got := callOne[float32](t, f, tensor(t, ctx, []int64{1}, []float32{2})); got[0] != -2 {
		t.Errorf("got %v", got)
	}
	_, err := ops.Neg(keptCtx, tensor(t, ctx, []int64{1}, []float32{1}))
	wantError(t, err, "FAILED_PRECONDITION: Neg: context is closed")
	_, err = ops.Neg(ctx, keptInput)
	wantError(t, err, "FAILED_PRECONDITION: Neg: input 0 is closed")
	if got := callOne[float32](t, f, tensor(t, ctx, []int64{1}, []float32{5})); got[0] != -5 {
		t.Errorf("replay after the trace: %v", got)
	}
}

// Several outputs, several inputs, and no output at all (a function run for its assigns).
func TestFunctionOutputCounts(t *testing.T) {
	ctx := newContext(t)
	f := newFunction(t, ctx, "sum_and_product", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		s, err := ops.Add(ctx, in[0], in[1])
		if err != nil {
			return nil, err
		}
		p, err := ops.Mul(ctx, in[0], in[1])
		return []*cairn.Tensor{s, p}, err
	}, cairn.WithNumOutputs(2))
	out, err := f.Call(tensor(t, ctx, nil, []int32{3}), tensor(t, ctx, nil, []int32{4}))
	ok(t, err)
	defer closeNow(out)
	if s, p := must(cairn.Read[int32](out[0])), must(cairn.Read[int32](out[1])); s[0] != 7 || p[0] != 12 {
		t.Errorf("sum %v, product %v", s, p)
	}

	v := newVariable(t, ctx, []float32{1})
	defer v.Close()
	double := newFunction(t, ctx, "double_v", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		value, err := v.Read()
		if err != nil {
			return nil, err
		}
		defer value.Close()
		return nil, v.AssignAdd(value)
	}, cairn.WithNumOutputs(0))
	for i := 0; i < 3; i++ {
		out, err := double.Call()
		if err != nil || len(out) != 0 {
			t.Fatalf("Call: %v, %v", out, err)
		}
	}
	wantValue(t, v, float32(8))

	_, err = cairn.NewFunction(ctx, "negative", square(new(int)), cairn.WithNumOutputs(-1))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "WithNumOutputs(-1)")
	_, err = cairn.NewFunction(ctx, "nil body", nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "body is nil")
	_, err = cairn.NewFunction(ctx, "", square(new(int)))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "name")
}

// Retracing often is logged once the number of traces reaches the threshold.
func TestFunctionRetraceWarning(t *testing.T) {
	var mu sync.Mutex
	var messages []string
	ctx := newContext(t, cairn.WithLogFunc(func(level cairn.LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, message)
	}))
	f := newFunction(t, ctx, "shapes", square(new(int)), cairn.WithRetraceWarning(3))
	for n := 1; n <= 3; n++ {
		callOne[float32](t, f, tensor(t, ctx, []int64{int64(n)}, make([]float32, n)))
		mu.Lock()
		warned := slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, "'shapes' has been traced 3") })
		mu.Unlock()
		if warned != (n == 3) {
			t.Errorf("after %d traces: warned %v (%q)", n, warned, messages)
		}
	}
}

// A whole training step (Dense forward, tape gradient, SGD apply) is captured once and replayed:
// the loss falls, the weights reach y = 2x + 1, and the optimizer counts every replay.
func TestFunctionCapturesATrainingStep(t *testing.T) {
	ctx := newContext(t)
	dense := must(cairn.NewDense(ctx, 1, cairn.WithKernelInitializer("zeros")))
	defer dense.Close()
	model := must(cairn.NewSequential(ctx, []*cairn.Layer{dense}))
	defer model.Close()
	opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(0.1)))
	defer opt.Close()
	traces := 0
	step := newFunction(t, ctx, "train_step", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		traces++
		tape, err := cairn.NewGradientTape(ctx)
		if err != nil {
			return nil, err
		}
		defer tape.Close()
		pred, err := model.Call(in[0], true)
		if err != nil {
			return nil, err
		}
		defer pred.Close()
		loss, err := cairn.Loss(ctx, cairn.LossKindMeanSquaredError, in[1], pred, false)
		if err != nil {
			return nil, err
		}
		weights, err := model.Weights(true)
		if err != nil {
			return nil, err
		}
		defer closeNow(weights)
		grads, err := tape.GradientVariables(loss, weights)
		if err != nil {
			return nil, err
		}
		defer closeNow(grads)
		return []*cairn.Tensor{loss}, opt.ApplyGradients(grads, weights)
	})
	x := tensor(t, ctx, []int64{4, 1}, []float32{0, 1, 2, 3})
	y := tensor(t, ctx, []int64{4, 1}, []float32{1, 3, 5, 7})
	first := callOne[float32](t, step, x, y)[0]
	last := first
	for i := 0; i < 300; i++ {
		last = callOne[float32](t, step, x, y)[0]
	}
	if traces != 1 || step.NumTraces() != 1 {
		t.Errorf("%d traces, NumTraces %d; want 1", traces, step.NumTraces())
	}
	if !(last < first*1e-3) {
		t.Errorf("loss went from %v to %v", first, last)
	}
	if n := must(opt.Iterations()); n != 301 {
		t.Errorf("iterations %d, want 301", n)
	}
	weights := must(model.Weights(true))
	defer closeNow(weights)
	kernel := must(cairn.ReadValue[float32](weights[0]))
	bias := must(cairn.ReadValue[float32](weights[1]))
	if !near(float64(kernel[0]), 2, 0.01) || !near(float64(bias[0]), 1, 0.01) {
		t.Errorf("kernel %v, bias %v; want 2 and 1", kernel, bias)
	}
	dump := must(step.Dump(0))
	for _, op := range []string{"MatMul", "ReadVariable", "AssignVariable"} {
		if !strings.Contains(dump, op) {
			t.Errorf("the captured step has no %s node:\n%s", op, dump)
		}
	}
}

// Goroutines calling one function at once each get their own result, and each failing trace
// its own error (the body fails with a message naming the input's length).
func TestConcurrentFunctionCalls(t *testing.T) {
	ctx := newContext(t)
	f := newFunction(t, ctx, "odd_lengths_fail", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		if n := in[0].Shape()[0]; n%2 == 1 {
			return nil, fmt.Errorf("length %d is odd", n)
		}
		y, err := ops.Neg(ctx, in[0])
		return []*cairn.Tensor{y}, err
	})
	var wg sync.WaitGroup
	failures := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			x := must(cairn.NewTensor(ctx, []int64{int64(n)}, make([]float32, n)))
			defer x.Close()
			for i := 0; i < 20; i++ {
				out, err := f.Call(x)
				want := fmt.Sprintf("length %d is odd", n)
				switch {
				case n%2 == 1 && (err == nil || !strings.HasSuffix(err.Error(), want)):
					failures <- fmt.Sprintf("length %d: got %v, want %q", n, err, want)
				case n%2 == 0 && err != nil:
					failures <- fmt.Sprintf("length %d: %v", n, err)
				case n%2 == 0 && out[0].NumElements() != int64(n):
					failures <- fmt.Sprintf("length %d: output %v", n, out[0])
				}
				closeNow(out)
			}
		}(g + 1)
	}
	wg.Wait()
	close(failures)
	for msg := range failures {
		t.Error(msg)
	}
}

// A static input's value keys the cache: the body reads it while tracing (here, how many times
// to double x), a new value retraces, a known one replays.
func TestFunctionStaticInputs(t *testing.T) {
	ctx := newContext(t)
	traces := 0
	f := newFunction(t, ctx, "double_n_times", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		traces++
		n, err := cairn.Read[float32](in[1])
		if err != nil {
			return nil, err
		}
		y := in[0]
		for k := 0; k < int(n[0]); k++ {
			if y, err = ops.Add(ctx, y, y); err != nil {
				return nil, err
			}
		}
		return []*cairn.Tensor{y}, nil // n > 0 in this test: y is a new tensor
	}, cairn.WithStaticInputs(1))
	x := tensor(t, ctx, []int64{2}, []float32{1, 3})
	for _, c := range []struct {
		n      float32
		want   []float32
		traces int
	}{{2, []float32{4, 12}, 1}, {3, []float32{8, 24}, 2}, {2, []float32{4, 12}, 2}} {
		got := callOne[float32](t, f, x, tensor(t, ctx, nil, []float32{c.n}))
		if !slices.Equal(got, c.want) || traces != c.traces {
			t.Errorf("n = %v: got %v after %d traces; want %v after %d", c.n, got, traces, c.want, c.traces)
		}
	}
	err := f.Export(t.TempDir() + "/static.cairnfn")
	wantCode(t, err, cairn.CodeUnimplemented, cairn.ErrUnimplemented, "static inputs")
}
