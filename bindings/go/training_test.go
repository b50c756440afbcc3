package cairn_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// ---- helpers ----

func closeAll[T interface{ Close() }](t testing.TB, items ...T) {
	t.Cleanup(func() {
		for _, it := range items {
			it.Close()
		}
	})
}

func readF32(t *testing.T, x *cairn.Tensor) []float32 {
	t.Helper()
	v, err := cairn.Read[float32](x)
	ok(t, err)
	return v
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func wantFloats(t *testing.T, what string, got []float32, want ...float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if !near(float64(got[i]), float64(want[i]), 1e-5) {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

// ---- GradientTape ----

// y = sum(x * x * w): dy/dx = 2 x w; w is not watched, so unconnected.
func TestTapeGradient(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2}, []float32{1, -2})
	w := tensor(t, ctx, []int64{2}, []float32{3, 0.5})
	tape := must(cairn.NewGradientTape(ctx))
	defer tape.Close()
	ok(t, tape.Watch(x))
	sq := must(ops.Mul(ctx, x, x))
	prod := must(ops.Mul(ctx, sq, w))
	y := must(ops.Sum(ctx, prod, ops.SumAxis([]int64{0})))
	closeAll(t, sq, prod, y)

	grads := must(tape.Gradient(y, []*cairn.Tensor{x, w}))
	closeAll(t, grads...)
	if grads[1] != nil {
		t.Errorf("the gradient of an unwatched tensor is %v, want nil", grads[1])
	}
	wantFloats(t, "dy/dx", readF32(t, grads[0]), 6, -2)

	_, err := tape.Gradient(y, []*cairn.Tensor{x})
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "non-persistent")
}

func TestTapePersistentZeroAndOutputGradient(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2}, []float32{1, 2})
	other := tensor(t, ctx, []int64{3}, []float32{1, 1, 1})
	tape := must(cairn.NewGradientTape(ctx, cairn.WithPersistent(true)))
	defer tape.Close()
	ok(t, tape.Watch(x))
	ok(t, tape.Watch(other))
	y := must(ops.Mul(ctx, x, x)) // dy/dx = 2x per element
	defer y.Close()

	g1 := must(tape.Gradient(y, []*cairn.Tensor{x, other}, cairn.WithUnconnected(cairn.UnconnectedZero)))
	closeAll(t, g1...)
	wantFloats(t, "d sum(x^2)/dx", readF32(t, g1[0]), 2, 4)
	wantFloats(t, "unconnected as zeros", readF32(t, g1[1]), 0, 0, 0)

	weights := tensor(t, ctx, []int64{2}, []float32{10, -1})
	g2 := must(tape.Gradient(y, []*cairn.Tensor{x}, cairn.WithOutputGradient(weights)))
	closeAll(t, g2...)
	wantFloats(t, "weighted", readF32(t, g2[0]), 20, -4)
}

func TestTapeStopRecordingAndWatchErrors(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{}, []float32{3})
	tape := must(cairn.NewGradientTape(ctx, cairn.WithPersistent(true)))
	defer tape.Close()
	ok(t, tape.Watch(x))
	tape.StopRecording()
	hidden := must(ops.Mul(ctx, x, x)) // not recorded
	tape.ResumeRecording()
	seen := must(ops.Mul(ctx, x, x))
	closeAll(t, hidden, seen)

	g := must(tape.Gradient(hidden, []*cairn.Tensor{x}))
	if g[0] != nil {
		t.Errorf("an op run while stopped was recorded: %v", g[0])
	}
	g = must(tape.Gradient(seen, []*cairn.Tensor{x}))
	closeAll(t, g...)
	wantFloats(t, "after resume", readF32(t, g[0]), 6)

	ints := tensor(t, ctx, []int64{1}, []int32{1})
	wantCode(t, tape.Watch(ints), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
	tape.Close()
	wantError(t, tape.Watch(x), "FAILED_PRECONDITION: GradientTape.Watch: tape is closed")
}

// Trainable variables are watched when read, unless WithWatchAccessedVariables(false); a
// non-trainable one only by WatchVariable.
func TestTapeVariables(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{2, 3}, cairn.WithVariableName("v"))
	frozen := newVariable(t, ctx, []float32{4, 5}, cairn.WithTrainable(false))
	closeAll(t, v, frozen)

	squareSum := func(tape *cairn.GradientTape, vars ...*cairn.Variable) []*cairn.Tensor {
		var total *cairn.Tensor
		for _, variable := range vars {
			r := must(variable.Read())
			sq := must(ops.Mul(ctx, r, r))
			s := must(ops.Sum(ctx, sq, ops.SumAxis([]int64{0})))
			closeAll(t, r, sq, s)
			if total == nil {
				total = s
			} else {
				total = must(ops.Add(ctx, total, s))
				closeAll(t, total)
			}
		}
		g := must(tape.GradientVariables(total, vars))
		closeAll(t, g...)
		return g
	}

	tape := must(cairn.NewGradientTape(ctx))
	g := squareSum(tape, v, frozen)
	tape.Close()
	wantFloats(t, "d/dv", readF32(t, g[0]), 4, 6)
	if g[1] != nil {
		t.Errorf("a non-trainable variable was watched on read")
	}

	tape = must(cairn.NewGradientTape(ctx))
	ok(t, tape.WatchVariable(frozen))
	g = squareSum(tape, frozen)
	tape.Close()
	wantFloats(t, "d/dfrozen", readF32(t, g[0]), 8, 10)

	tape = must(cairn.NewGradientTape(ctx, cairn.WithWatchAccessedVariables(false)))
	g = squareSum(tape, v)
	tape.Close()
	if g[0] != nil {
		t.Errorf("WithWatchAccessedVariables(false) still watched a read")
	}
}

// The tape pins its goroutine to one thread, so its ops are recorded even if the scheduler would
// move the goroutine, and another goroutine cannot use it.
func TestTapeBelongsToItsGoroutine(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{}, []float32{2})
	for round := 0; round < 50; round++ {
		tape := must(cairn.NewGradientTape(ctx))
		ok(t, tape.Watch(x))
		y := x
		for i := 0; i < 20; i++ { // give the scheduler chances to move the goroutine
			next := must(ops.Mul(ctx, y, x))
			closeAll(t, next)
			y = next
		}
		g := must(tape.Gradient(y, []*cairn.Tensor{x}))
		if g[0] == nil {
			t.Fatalf("round %d: ops were not recorded", round)
		}
		g[0].Close()
		tape.Close()
	}

	tape := must(cairn.NewGradientTape(ctx))
	defer tape.Close()
	ok(t, tape.Watch(x))
	y := must(ops.Mul(ctx, x, x))
	defer y.Close()
	done := make(chan error)
	go func() {
		_, err := tape.Gradient(y, []*cairn.Tensor{x})
		done <- err
	}()
	wantCode(t, <-done, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "thread")
}

// ---- Optimizers and schedules ----

// SGD with momentum on v = 5 and gradient 10: m = -lr g = -1, v = 4.
func TestOptimizerSGD(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{5})
	opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(0.1), cairn.WithMomentum(0.9)))
	closeAll(t, v)
	defer opt.Close()
	if opt.Kind() != cairn.ObjectKindOptimizer {
		t.Errorf("kind %v", opt.Kind())
	}
	_, err := opt.Slot(v, "momentum")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "momentum")

	g := tensor(t, ctx, []int64{}, []float32{10})
	ok(t, opt.ApplyGradients([]*cairn.Tensor{g}, []*cairn.Variable{v}))
	wantValue(t, v, float32(4))
	if n := must(opt.Iterations()); n != 1 {
		t.Errorf("iterations %d, want 1", n)
	}
	if lr := must(opt.LearningRate()); !near(lr, 0.1, 1e-7) { // float32 inside
		t.Errorf("learning rate %v", lr)
	}
	slot := must(opt.Slot(v, "momentum"))
	defer slot.Close()
	wantValue(t, slot, float32(-1))

	ok(t, opt.SetLearningRate(0.5))
	if lr := must(opt.LearningRate()); lr != 0.5 {
		t.Errorf("learning rate after SetLearningRate: %v", lr)
	}
	// A nil gradient skips its variable, but the step still counts; all nil is an error.
	other := newVariable(t, ctx, []float32{1})
	defer other.Close()
	ok(t, opt.ApplyGradients([]*cairn.Tensor{nil, g}, []*cairn.Variable{v, other}))
	wantValue(t, v, float32(4))
	wantValue(t, other, float32(-4))
	wantCode(t, opt.ApplyGradients([]*cairn.Tensor{nil}, []*cairn.Variable{v}), cairn.CodeInvalidArgument,
		cairn.ErrInvalidArgument, "no gradients")
	if n := must(opt.Iterations()); n != 2 {
		t.Errorf("iterations %d, want 2", n)
	}

	_, err = cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(-1))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "learning_rate")
	wantCode(t, opt.ApplyGradients([]*cairn.Tensor{g}, nil), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument,
		"1 gradients for 0 variables")
	wrongShape := tensor(t, ctx, []int64{2}, []float32{1, 1})
	wantCode(t, opt.ApplyGradients([]*cairn.Tensor{wrongShape}, []*cairn.Variable{v}), cairn.CodeInvalidArgument,
		cairn.ErrInvalidArgument, "Variable")
	notOptimizer := &cairn.Optimizer{Object: v.Object}
	_, err = notOptimizer.Iterations()
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "optimizer")
}

func TestOptimizerKindsAndSlots(t *testing.T) {
	ctx := newContext(t)
	cases := []struct {
		kind    cairn.OptimizerKind
		options []cairn.OptimizerOption
		slots   []string
	}{
		{cairn.OptimizerKindSgd, []cairn.OptimizerOption{cairn.WithMomentum(0.5), cairn.WithNesterov(true)}, []string{"momentum"}},
		{cairn.OptimizerKindAdam, []cairn.OptimizerOption{cairn.WithBeta1(0.8), cairn.WithBeta2(0.99), cairn.WithEpsilon(1e-6)}, []string{"m", "v"}},
		{cairn.OptimizerKindAdamw, []cairn.OptimizerOption{cairn.WithWeightDecay(0.01)}, []string{"m", "v"}},
		{cairn.OptimizerKindRmsprop, []cairn.OptimizerOption{cairn.WithRho(0.8), cairn.WithMomentum(0.1), cairn.WithCentered(true)},
			[]string{"rms", "momentum", "mg"}},
	}
	for _, c := range cases {
		v := newVariable(t, ctx, []float32{1, -1})
		opt := must(cairn.NewOptimizer(ctx, c.kind, append(c.options, cairn.WithLearningRate(0.1))...))
		g := tensor(t, ctx, []int64{2}, []float32{1, -1})
		ok(t, opt.ApplyGradients([]*cairn.Tensor{g}, []*cairn.Variable{v}))
		got := must(cairn.ReadValue[float32](v))
		if !(got[0] < 1 && got[1] > -1) {
			t.Errorf("%v: a step against the gradient moved v to %v", c.kind, got)
		}
		for _, name := range c.slots {
			slot, err := opt.Slot(v, name)
			if err != nil {
				t.Errorf("%v: slot %q: %v", c.kind, name, err)
				continue
			}
			slot.Close()
		}
		opt.Close()
		v.Close()
	}
	_, err := cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithBeta1(1.5))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "beta_1")
}

func TestSchedules(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{1})
	g := tensor(t, ctx, []int64{}, []float32{0})
	defer v.Close()
	step := func(opt *cairn.Optimizer) {
		ok(t, opt.ApplyGradients([]*cairn.Tensor{g}, []*cairn.Variable{v}))
	}
	exp := must(cairn.NewExponentialDecay(ctx, 0.1, 1, 0.5, false))
	defer exp.Close()
	opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithSchedule(exp)))
	defer opt.Close()
	for i, want := range []float64{0.1, 0.05, 0.025} {
		if lr := must(opt.LearningRate()); !near(lr, want, 1e-7) {
			t.Errorf("exponential decay at step %d: %v, want %v", i, lr, want)
		}
		step(opt)
	}
	wantCode(t, opt.SetLearningRate(1), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "schedule")

	cos := must(cairn.NewCosineDecay(ctx, 1, 2, 0))
	defer cos.Close()
	opt2 := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithSchedule(cos)))
	defer opt2.Close()
	for i, want := range []float64{1, 0.5, 0, 0} {
		if lr := must(opt2.LearningRate()); !near(lr, want, 1e-7) {
			t.Errorf("cosine decay at step %d: %v, want %v", i, lr, want)
		}
		step(opt2)
	}
	_, err := cairn.NewExponentialDecay(ctx, 0.1, 0, 0.5, false)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "decay_steps")
	_, err = cairn.NewCosineDecay(ctx, 0.1, -1, 0)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "decay_steps")
}

// ---- Layers ----

func TestDenseAndSequential(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	dense := must(cairn.NewDense(ctx, 3, cairn.WithActivation("relu"), cairn.WithKernelInitializer("ones"),
		cairn.WithBiasInitializer("ones"), cairn.WithLayerName("hidden")))
	noBias := must(cairn.NewDense(ctx, 2, cairn.WithUseBias(false)))
	model := must(cairn.NewSequential(ctx, []*cairn.Layer{dense}, cairn.WithLayerName("model")))
	closeAll(t, dense, noBias)
	defer model.Close()
	ok(t, model.Add(noBias))
	if model.Kind() != cairn.ObjectKindLayer {
		t.Errorf("kind %v", model.Kind())
	}
	if n := must(model.CountParams()); n != 0 {
		t.Errorf("params before the first call: %d", n)
	}
	y := must(model.Call(x, false))
	defer y.Close()
	if !slices.Equal(y.Shape(), []int64{2, 2}) {
		t.Errorf("output shape %v", y.Shape())
	}
	hidden := must(dense.Call(x, false))
	defer hidden.Close()
	wantFloats(t, "relu(x @ ones + 1)", readF32(t, hidden), 7, 7, 7, 16, 16, 16)
	if n := must(model.CountParams()); n != 12+6 {
		t.Errorf("params %d, want 18", n)
	}
	weights := must(model.Weights(true))
	closeAll(t, weights...)
	names := make([]string, len(weights))
	for i, w := range weights {
		names[i] = w.Name()
	}
	if len(names) != 3 || !strings.Contains(names[0], "hidden") || !strings.Contains(names[0], "kernel") {
		t.Errorf("weights %v", names)
	}
	summary := must(model.Summary())
	for _, want := range []string{`Model: "model"`, "hidden (Dense)", "Total params: 18"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	first := must(model.Get("layer-0"))
	defer first.Close()
	asLayer := must(first.AsLayer())
	if !asLayer.Same(dense) {
		t.Errorf("layer-0 is not the dense layer")
	}

	_, err := cairn.NewDense(ctx, 0)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "units")
	_, err = cairn.NewDense(ctx, 2, cairn.WithPadding("SAME"))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewDense: option padding does not apply")
	bad := tensor(t, ctx, []int64{2, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	_, err = dense.Call(bad, false)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "hidden")
	v := newVariable(t, ctx, []float32{1})
	defer v.Close()
	wantCode(t, model.Add(v), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "layer")
	_, err = v.AsLayer()
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "not a LAYER")
}

func TestConvPoolFlatten(t *testing.T) {
	ctx := newContext(t)
	// One 4x4 single-channel image holding 0..15.
	pixels := make([]float32, 16)
	for i := range pixels {
		pixels[i] = float32(i)
	}
	img := tensor(t, ctx, []int64{1, 4, 4, 1}, pixels)

	conv := must(cairn.NewConv2D(ctx, 2, cairn.WithKernelSize(2, 2), cairn.WithStrides(2, 2), cairn.WithPadding("VALID"),
		cairn.WithKernelInitializer("ones"), cairn.WithActivation("linear")))
	defer conv.Close()
	y := must(conv.Call(img, false))
	defer y.Close()
	if !slices.Equal(y.Shape(), []int64{1, 2, 2, 2}) {
		t.Errorf("conv output shape %v", y.Shape())
	}
	wantFloats(t, "2x2 sums", readF32(t, y), 10, 10, 18, 18, 42, 42, 50, 50)
	same := must(cairn.NewConv2D(ctx, 1, cairn.WithPadding("SAME"), cairn.WithUseBias(false)))
	defer same.Close()
	ys := must(same.Call(img, false))
	defer ys.Close()
	if !slices.Equal(ys.Shape(), []int64{1, 4, 4, 1}) {
		t.Errorf("SAME conv output shape %v", ys.Shape())
	}
	if n := must(same.CountParams()); n != 9 {
		t.Errorf("3x3 conv without bias has %d params", n)
	}

	maxPool := must(cairn.NewMaxPool2D(ctx))
	avgPool := must(cairn.NewAvgPool2D(ctx, cairn.WithPoolSize(2, 2), cairn.WithStrides(2, 2)))
	flatten := must(cairn.NewFlatten(ctx, cairn.WithLayerName("flat")))
	closeAll(t, maxPool, avgPool, flatten)
	mx := must(maxPool.Call(img, false))
	av := must(avgPool.Call(img, false))
	fl := must(flatten.Call(mx, false))
	closeAll(t, mx, av, fl)
	wantFloats(t, "max pool", readF32(t, mx), 5, 7, 13, 15)
	wantFloats(t, "avg pool", readF32(t, av), 2.5, 4.5, 10.5, 12.5)
	if !slices.Equal(fl.Shape(), []int64{1, 4}) {
		t.Errorf("flatten shape %v", fl.Shape())
	}

	_, err := cairn.NewConv2D(ctx, 0)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "filters")
	_, err = cairn.NewMaxPool2D(ctx, cairn.WithActivation("relu"))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "option activation")
	flatVec := tensor(t, ctx, []int64{4}, []float32{1, 2, 3, 4})
	_, err = conv.Call(flatVec, false)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "4-D")
}

func TestEmbeddingNormDropoutActivation(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(5))
	emb := must(cairn.NewEmbedding(ctx, 10, 4))
	defer emb.Close()
	ids := tensor(t, ctx, []int64{3}, []int32{1, 9, 1})
	e := must(emb.Call(ids, false))
	defer e.Close()
	got := readF32(t, e)
	if !slices.Equal(e.Shape(), []int64{3, 4}) || !slices.Equal(got[0:4], got[8:12]) {
		t.Errorf("embedding: shape %v values %v", e.Shape(), got)
	}
	outOfRange := tensor(t, ctx, []int64{1}, []int32{10})
	_, err := emb.Call(outOfRange, false)
	if err == nil {
		t.Errorf("an index past input_dim was accepted")
	}

	x := tensor(t, ctx, []int64{2, 2}, []float32{1, 3, 10, 30})
	ln := must(cairn.NewLayerNorm(ctx, cairn.WithEpsilon(1e-6), cairn.WithAxis(-1), cairn.WithCenter(true), cairn.WithScale(true)))
	defer ln.Close()
	yl := must(ln.Call(x, false))
	defer yl.Close()
	wantFloats(t, "layer norm", readF32(t, yl), -1, 1, -1, 1)

	bn := must(cairn.NewBatchNorm(ctx, cairn.WithMomentum(0.5), cairn.WithScale(false)))
	defer bn.Close()
	yb := must(bn.Call(x, true))
	defer yb.Close()
	all := must(bn.Weights(false))
	trainable := must(bn.Weights(true))
	closeAll(t, all...)
	closeAll(t, trainable...)
	if len(all) != 3 || len(trainable) != 1 { // beta; moving_mean, moving_variance
		t.Errorf("batch norm: %d weights, %d trainable", len(all), len(trainable))
	}
	// moving_mean = 0.5 * 0 + 0.5 * batch mean [5.5, 16.5]
	var movingMean *cairn.Variable
	for _, w := range all {
		if strings.Contains(w.Name(), "moving_mean") {
			movingMean = w
		}
	}
	if movingMean == nil {
		t.Fatalf("no moving_mean among the weights")
	}
	wantValue(t, movingMean, float32(2.75), float32(8.25))
	_, err = cairn.NewLayerNorm(ctx, cairn.WithMomentum(0.5))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewLayerNorm: option momentum does not apply")

	ones := make([]float32, 1000)
	for i := range ones {
		ones[i] = 1
	}
	big := tensor(t, ctx, []int64{1000}, ones)
	drop := must(cairn.NewDropout(ctx, 0.5, cairn.WithDropoutSeed(3)))
	defer drop.Close()
	train := must(drop.Call(big, true))
	infer := must(drop.Call(big, false))
	closeAll(t, train, infer)
	zeros, twos := 0, 0
	for _, v := range readF32(t, train) {
		switch v {
		case 0:
			zeros++
		case 2:
			twos++
		}
	}
	if zeros+twos != 1000 || zeros < 400 || zeros > 600 {
		t.Errorf("dropout in training: %d zeros, %d twos", zeros, twos)
	}
	if !slices.Equal(readF32(t, infer), ones) {
		t.Errorf("dropout changed its input outside training")
	}
	_, err = cairn.NewDropout(ctx, 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "rate")

	relu := must(cairn.NewActivation(ctx, "relu"))
	defer relu.Close()
	signed := tensor(t, ctx, []int64{3}, []float32{-1, 0, 2})
	r := must(relu.Call(signed, false))
	defer r.Close()
	wantFloats(t, "relu", readF32(t, r), 0, 0, 2)
	_, err = cairn.NewActivation(ctx, "swishy")
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "swishy")
}

// ---- Losses and metrics ----

func TestLosses(t *testing.T) {
	ctx := newContext(t)
	yTrue := tensor(t, ctx, []int64{2}, []float32{0, 1})
	yPred := tensor(t, ctx, []int64{2}, []float32{1, -1})
	probs := tensor(t, ctx, []int64{2}, []float32{0.25, 0.5})
	labels := tensor(t, ctx, []int64{1}, []int32{1})
	logits := tensor(t, ctx, []int64{1, 2}, []float32{0, 0})
	cases := []struct {
		kind       cairn.LossKind
		yTrue      *cairn.Tensor
		yPred      *cairn.Tensor
		fromLogits bool
		want       float64
	}{
		{cairn.LossKindMeanSquaredError, yTrue, yPred, false, (1 + 4) / 2.0},
		{cairn.LossKindMeanAbsoluteError, yTrue, yPred, false, (1 + 2) / 2.0},
		{cairn.LossKindBinaryCrossentropy, yTrue, probs, false, (-math.Log(0.75) - math.Log(0.5)) / 2},
		{cairn.LossKindSparseCategoricalCrossentropy, labels, logits, true, math.Log(2)},
	}
	for _, c := range cases {
		loss := must(cairn.Loss(ctx, c.kind, c.yTrue, c.yPred, c.fromLogits))
		got := readF32(t, loss)
		if loss.Rank() != 0 || !near(float64(got[0]), c.want, 1e-4) {
			t.Errorf("%v: %v (rank %d), want %v", c.kind, got, loss.Rank(), c.want)
		}
		loss.Close()
	}
	_, err := cairn.Loss(ctx, cairn.LossKind(99), yTrue, yPred, false)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "unknown loss")
}

func TestMetrics(t *testing.T) {
	ctx := newContext(t)
	mean := must(cairn.NewMetric(ctx, cairn.MetricKindMean, ""))
	acc := must(cairn.NewMetric(ctx, cairn.MetricKindAccuracy, "acc"))
	closeAll(t, mean, acc)
	if r := must(mean.Result()); r != 0 {
		t.Errorf("an empty mean is %v", r)
	}
	ok(t, mean.Update(tensor(t, ctx, []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}), nil))
	ok(t, mean.Update(tensor(t, ctx, []int64{}, []float32{10}), nil))
	if r := must(mean.Result()); !near(r, 31.0/7, 1e-12) {
		t.Errorf("mean %v, want 31/7", r)
	}
	labels := tensor(t, ctx, []int64{3}, []int32{0, 1, 1})
	scores := tensor(t, ctx, []int64{3, 2}, []float32{0.9, 0.1, 0.2, 0.8, 0.7, 0.3})
	ok(t, acc.Update(labels, scores))
	if r := must(acc.Result()); !near(r, 2.0/3, 1e-12) {
		t.Errorf("accuracy %v, want 2/3", r)
	}
	ok(t, acc.Reset())
	if r := must(acc.Result()); r != 0 {
		t.Errorf("accuracy after Reset: %v", r)
	}
	vars := must(acc.Variables(false))
	closeAll(t, vars...)
	if len(vars) != 2 {
		t.Errorf("a metric has %d variables, want total and count", len(vars))
	}
	wantCode(t, mean.Update(labels, labels), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "b must be NULL")
	_, err := cairn.NewMetric(ctx, cairn.MetricKind(7), "")
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "metric")
}

// ---- Training ----

// sgdStep is one step of full-batch gradient descent on the mean squared error of model(x) vs y.
func sgdStep(t *testing.T, ctx *cairn.Context, model *cairn.Sequential, opt *cairn.Optimizer, x, y *cairn.Tensor) float64 {
	t.Helper()
	tape := must(cairn.NewGradientTape(ctx))
	defer tape.Close()
	pred := must(model.Call(x, true))
	defer pred.Close()
	loss := must(cairn.Loss(ctx, cairn.LossKindMeanSquaredError, y, pred, false))
	defer loss.Close()
	weights := must(model.Weights(true))
	defer closeNow(weights)
	grads := must(tape.GradientVariables(loss, weights))
	defer closeNow(grads)
	ok(t, opt.ApplyGradients(grads, weights))
	return float64(readF32(t, loss)[0])
}

func closeNow[T interface{ Close() }](items []T) {
	for _, it := range items {
		it.Close()
	}
}

// Dense(1) with SGD fits y = 2x + 1.
func TestFitLine(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(1))
	xs := []float32{-1, -0.5, 0, 0.5, 1, 1.5}
	ys := make([]float32, len(xs))
	for i, x := range xs {
		ys[i] = 2*x + 1
	}
	x := tensor(t, ctx, []int64{6, 1}, xs)
	y := tensor(t, ctx, []int64{6, 1}, ys)
	dense := must(cairn.NewDense(ctx, 1))
	defer dense.Close()
	model := must(cairn.NewSequential(ctx, []*cairn.Layer{dense}))
	opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(0.1)))
	defer model.Close()
	defer opt.Close()

	first := sgdStep(t, ctx, model, opt, x, y)
	last := first
	for i := 0; i < 300; i++ {
		last = sgdStep(t, ctx, model, opt, x, y)
	}
	if !(last < first/100) {
		t.Errorf("loss went from %v to %v", first, last)
	}
	weights := must(model.Weights(true))
	defer closeNow(weights)
	kernel := must(cairn.ReadValue[float32](weights[0]))
	bias := must(cairn.ReadValue[float32](weights[1]))
	if !near(float64(kernel[0]), 2, 0.01) || !near(float64(bias[0]), 1, 0.01) {
		t.Errorf("kernel %v, bias %v; want 2 and 1", kernel, bias)
	}
	if n := must(opt.Iterations()); n != 301 {
		t.Errorf("iterations %d", n)
	}
}

// A model and an Adam optimizer round-trip through a checkpoint: the weights and step counter
// come back at once, the slots when the next step creates them.
func TestCheckpointWithOptimizer(t *testing.T) {
	dir := t.TempDir()
	x0, y0 := []float32{1, 2}, []float32{3, 5}
	build := func(ctx *cairn.Context) (*cairn.Sequential, *cairn.Optimizer, *cairn.Checkpoint, *cairn.Tensor, *cairn.Tensor) {
		dense := must(cairn.NewDense(ctx, 1, cairn.WithLayerName("d")))
		defer dense.Close()
		model := must(cairn.NewSequential(ctx, []*cairn.Layer{dense}))
		opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.01)))
		ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": model, "optimizer": opt}))
		closeAll(t, model.Object, opt.Object)
		closeAll(t, ckpt)
		return model, opt, ckpt, tensor(t, ctx, []int64{2, 1}, x0), tensor(t, ctx, []int64{2, 1}, y0)
	}

	ctxA := newContext(t, cairn.WithSeed(1))
	modelA, optA, ckptA, x, y := build(ctxA)
	sgdStep(t, ctxA, modelA, optA, x, y)
	sgdStep(t, ctxA, modelA, optA, x, y)
	path := must(ckptA.Save(filepath.Join(dir, "ckpt")))
	weightsA := must(modelA.Weights(true))
	defer closeNow(weightsA)
	mA := must(optA.Slot(weightsA[0], "m"))
	defer mA.Close()
	savedKernel := must(cairn.ReadValue[float32](weightsA[0]))

	reader := must(cairn.OpenCheckpointReader(path))
	defer reader.Close()
	var slotKeys []string
	for _, e := range reader.Entries() {
		if strings.Contains(e.Key, ".OPTIMIZER_SLOT") {
			slotKeys = append(slotKeys, e.Key)
		}
	}
	if len(slotKeys) != 4 { // m and v for kernel and bias
		t.Errorf("slot keys %v", slotKeys)
	}

	ctxB := newContext(t, cairn.WithSeed(2))
	modelB, optB, ckptB, xB, yB := build(ctxB)
	status := must(ckptB.Restore(path))
	defer status.Close()
	status.ExpectPartial()
	if n := must(optB.Iterations()); n != 2 {
		t.Errorf("restored iterations %d, want 2", n)
	}
	out := must(modelB.Call(xB, false)) // builds the model: the restored weights appear
	out.Close()
	weightsB := must(modelB.Weights(true))
	defer closeNow(weightsB)
	wantValue(t, weightsB[0], savedKernel...)
	_, err := optB.Slot(weightsB[0], "m")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "m")

	// The next step on both sides must agree: B's slots were restored, not started from zero.
	sgdStep(t, ctxA, modelA, optA, x, y)
	sgdStep(t, ctxB, modelB, optB, xB, yB)
	mB := must(optB.Slot(weightsB[0], "m"))
	defer mB.Close()
	wantValue(t, mB, must(cairn.ReadValue[float32](mA))...)
	wantValue(t, weightsB[0], must(cairn.ReadValue[float32](weightsA[0]))...)
	if n := must(optB.Iterations()); n != 3 {
		t.Errorf("iterations after the step: %d, want 3", n)
	}
	ok(t, status.AssertConsumed())
}

// Nested tapes give a second derivative: d2(x^3)/dx2 = 6x = 12 at x = 2. Each tape locks the
// goroutine once and its Close unlocks once, so nesting is safe.
func TestNestedTapes(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{}, []float32{2})
	outer := must(cairn.NewGradientTape(ctx))
	defer outer.Close()
	ok(t, outer.Watch(x))
	inner := must(cairn.NewGradientTape(ctx))
	ok(t, inner.Watch(x))
	sq := must(ops.Mul(ctx, x, x))
	cube := must(ops.Mul(ctx, sq, x))
	closeAll(t, sq, cube)
	first := must(inner.Gradient(cube, []*cairn.Tensor{x}))
	inner.Close()
	closeAll(t, first...)
	wantFloats(t, "3x^2", readF32(t, first[0]), 12)
	second := must(outer.Gradient(first[0], []*cairn.Tensor{x}))
	closeAll(t, second...)
	wantFloats(t, "6x", readF32(t, second[0]), 12)
}

// Goroutines sharing a context each record only their own ops on their own tapes (run under the
// race detector by bindings/test_go).
func TestConcurrentTapes(t *testing.T) {
	ctx := newContext(t)
	const workers, rounds = 4, 50
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			errs <- func() error {
				x, err := cairn.NewTensor(ctx, []int64{}, []float32{float32(w + 1)})
				if err != nil {
					return err
				}
				defer x.Close()
				for i := 0; i < rounds; i++ {
					tape, err := cairn.NewGradientTape(ctx)
					if err != nil {
						return err
					}
					if err := tape.Watch(x); err != nil {
						return err
					}
					y, err := ops.Mul(ctx, x, x)
					if err != nil {
						return err
					}
					g, err := tape.Gradient(y, []*cairn.Tensor{x})
					tape.Close()
					y.Close()
					if err != nil {
						return err
					}
					v, err := cairn.Read[float32](g[0])
					g[0].Close()
					if err != nil {
						return err
					}
					if v[0] != float32(2*(w+1)) {
						return fmt.Errorf("worker %d round %d: gradient %v, want %d", w, i, v, 2*(w+1))
					}
				}
				return nil
			}()
		}(w)
	}
	for w := 0; w < workers; w++ {
		ok(t, <-errs)
	}
}
