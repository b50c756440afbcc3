package cairn_test

// Mirrored replicas (Strategy): a run with an all-reduce on 2 logical CPU devices, reduce, batches
// and iterators split over the replicas, failing and panicking steps (errors naming the replica, no
// hang), fit of a model made in the strategy's scope against one device, and bad input.

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn.dev/cairn"
)

// splitContext is a context seeded 1 whose CPU is split into n logical devices (n > 1).
func splitContext(t testing.TB, n int) *cairn.Context {
	t.Helper()
	ctx := newContext(t, cairn.WithSeed(1))
	if n > 1 {
		ok(t, cairn.SplitCPUForTest(ctx, n))
	}
	return ctx
}

func newStrategy(t testing.TB, ctx *cairn.Context, devices ...string) *cairn.Strategy {
	t.Helper()
	s := must(cairn.NewMirroredStrategy(ctx, devices...))
	t.Cleanup(s.Close)
	return s
}

func TestStrategyRunAllReduce(t *testing.T) {
	ctx := splitContext(t, 2)
	s := newStrategy(t, ctx)
	if s.NumReplicas() != 2 || !slices.Equal(s.Devices(), []string{"cpu:0", "cpu:1"}) {
		t.Fatalf("replicas %d on %v", s.NumReplicas(), s.Devices())
	}
	out, err := s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		mine, err := cairn.NewTensor(r.Context(), nil, []float32{float32(r.ID() + 1)})
		if err != nil {
			return nil, err
		}
		sum, err := r.AllReduce(cairn.ReductionSum, mine)
		if err != nil {
			mine.Close()
			return nil, err
		}
		return []*cairn.Tensor{sum[0], mine}, nil
	})
	ok(t, err)
	if len(out) != 2 {
		t.Fatalf("%d replicas' results", len(out))
	}
	own := make([]*cairn.Tensor, 2)
	for r, rs := range out {
		t.Cleanup(func() { closeAll(t, rs...) })
		if v := must(cairn.Read[float32](rs[0])); v[0] != 3 {
			t.Errorf("replica %d: all-reduced sum %v, want 3", r, v)
		}
		if d := rs[0].Device(); d != s.Devices()[r] {
			t.Errorf("replica %d: sum on %s, want %s", r, d, s.Devices()[r])
		}
		own[r] = rs[1]
	}
	mean := must(s.Reduce(cairn.ReductionMean, own))
	defer mean.Close()
	if v := must(cairn.Read[float32](mean)); v[0] != 1.5 {
		t.Errorf("Reduce mean %v, want 1.5", v)
	}
	_, err = s.Reduce(cairn.ReductionSum, own[:1])
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "1 values for 2 replicas")

	// The replica's ID and device as the step sees them.
	seen, err := s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		return []*cairn.Tensor{must(cairn.NewTensor(r.Context(), nil, []int32{int32(r.ID())}))}, nil
	})
	ok(t, err)
	for r, rs := range seen {
		if v := must(cairn.Read[int32](rs[0])); int(v[0]) != r || rs[0].Device() != s.Devices()[r] {
			t.Errorf("replica %d saw id %v on %s", r, v, rs[0].Device())
		}
		closeAll(t, rs...)
	}
}

func TestStrategyFailingReplica(t *testing.T) {
	ctx := splitContext(t, 2)
	s := must(cairn.NewMirroredStrategyWithOptions(ctx, nil, cairn.WithCollectiveTimeout(60*time.Second)))
	defer s.Close()
	bad := errors.New("the replica's data is bad")
	// Replica 1 fails; replica 0 waits in an all-reduce that can never complete: it ends at once.
	start := time.Now()
	_, err := s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		if r.ID() == 1 {
			return nil, &cairn.Error{Code: cairn.CodeDataLoss, Message: bad.Error()}
		}
		one := must(cairn.NewTensor(r.Context(), nil, []float32{1}))
		defer one.Close()
		sum, err := r.AllReduce(cairn.ReductionSum, one)
		closeAll(t, sum...)
		return nil, err
	})
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "replica 1")
	if !strings.Contains(err.Error(), "the replica's data is bad") {
		t.Errorf("error %q does not carry the step's message", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("the failed run took %v", time.Since(start))
	}

	// A plain Go error (UNKNOWN) is reachable with errors.Is; a panic becomes an error.
	_, err = s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		if r.ID() == 0 {
			return nil, bad
		}
		return nil, nil
	})
	if !errors.Is(err, bad) || !errors.Is(err, cairn.ErrUnknown) || !strings.Contains(err.Error(), "replica 0") {
		t.Errorf("Go error: %v", err)
	}
	_, err = s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		if r.ID() == 1 {
			panic("boom")
		}
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "replica 1") || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("panic: %v", err)
	}

	// The strategy still works.
	out, err := s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) { return nil, nil })
	ok(t, err)
	if len(out) != 2 || len(out[0]) != 0 {
		t.Errorf("empty run gave %v", out)
	}
}

func TestStrategySplitBatchAndIterator(t *testing.T) {
	ctx := splitContext(t, 2)
	s := newStrategy(t, ctx, "cpu:1", "cpu:0")
	g := tensor(t, ctx, []int64{5, 2}, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	parts := must(s.SplitBatch(g))
	defer closeAll(t, parts...)
	if !slices.Equal(parts[0].Shape(), []int64{3, 2}) || !slices.Equal(parts[1].Shape(), []int64{2, 2}) ||
		parts[0].Device() != "cpu:1" {
		t.Errorf("parts %v on %s, %v", parts[0].Shape(), parts[0].Device(), parts[1].Shape())
	}
	if v := must(cairn.Read[float32](parts[1])); !slices.Equal(v, []float32{6, 7, 8, 9}) {
		t.Errorf("replica 1's part %v", v)
	}
	_, err := s.SplitBatch(tensor(t, ctx, nil, []float32{1}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_strategy_split_batch")

	y := tensor(t, ctx, []int64{5}, []int32{0, 1, 2, 3, 4})
	ds := must(cairn.NewDatasetFromTensorSlices(ctx, []string{"x", "y"}, g, y))
	defer ds.Close()
	batched := must(ds.Batch(4, false))
	defer batched.Close()
	it := must(batched.Iterate())
	defer it.Close()
	first := must(s.IteratorNext(it))
	if len(first) != 2 || len(first[0]) != 2 || !slices.Equal(first[1][0].Shape(), []int64{2, 2}) {
		t.Errorf("first batch %v", first)
	}
	if v := must(cairn.Read[int32](first[1][1])); !slices.Equal(v, []int32{2, 3}) {
		t.Errorf("replica 1's labels %v", v)
	}
	for _, p := range first {
		closeAll(t, p...)
	}
	// The last global batch has 1 row for 2 replicas.
	_, err = s.IteratorNext(it)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
	_, err = s.IteratorNext(it)
	if !errors.Is(err, cairn.ErrEndOfData) {
		t.Errorf("after the data: %v", err)
	}

	loss := tensor(t, ctx, []int64{4}, []float32{1, 2, 3, 4})
	avg := must(cairn.ComputeAverageLoss(ctx, loss, 8))
	defer avg.Close()
	if v := must(cairn.Read[float32](avg)); v[0] != 1.25 {
		t.Errorf("ComputeAverageLoss %v, want 1.25", v)
	}
	_, err = cairn.ComputeAverageLoss(ctx, loss, 0)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "global_batch_size")
}

// trainWeights is Dense(16, relu) -> Dense(3) with SGD, made and compiled in s's scope when s is not
// nil, trained 3 epochs of 16-row global batches on 64 blobs; its weights, concatenated.
func trainWeights(t *testing.T, ctx *cairn.Context, s *cairn.Strategy) []float32 {
	t.Helper()
	var model *cairn.Model
	build := func() error {
		hidden := must(cairn.NewDense(ctx, 16, cairn.WithActivation("relu")))
		defer hidden.Close()
		out := must(cairn.NewDense(ctx, 3))
		defer out.Close()
		model = must(cairn.NewModel(ctx, []*cairn.Layer{hidden, out}))
		sgd := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithLearningRate(0.1)))
		defer sgd.Close()
		return model.Compile(sgd, "sparse_categorical_crossentropy")
	}
	if s != nil {
		ok(t, s.Scope(build))
	} else {
		ok(t, build())
	}
	defer model.Close()
	x, y := blobs(t, ctx, 64)
	must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(3), cairn.WithBatchSize(16), silent))
	var all []float32
	for _, v := range must(model.Weights(false)) {
		value := must(v.Read())
		all = append(all, must(cairn.Read[float32](value))...)
		value.Close()
		v.Close()
	}
	return all
}

func TestStrategyFitMatchesOneDevice(t *testing.T) {
	one := splitContext(t, 1)
	two := splitContext(t, 2)
	s := newStrategy(t, two)
	w1 := trainWeights(t, one, nil)
	w2 := trainWeights(t, two, s)
	if len(w1) != 4*16+16+16*3+3 || len(w2) != len(w1) {
		t.Fatalf("%d and %d weights", len(w1), len(w2))
	}
	var maxW, maxDiff float64
	for i := range w1 {
		maxW = math.Max(maxW, math.Abs(float64(w1[i])))
		maxDiff = math.Max(maxDiff, math.Abs(float64(w1[i]-w2[i])))
	}
	// The replicas' gradients are summed in another order than one device's: the bound of the
	// float reduction order over 12 SGD steps (as tests/capi/distribute_test.c).
	t.Logf("max |w2 - w1| = %g, max |w| = %g", maxDiff, maxW)
	if maxDiff > 1e-5*maxW || maxW < 0.1 {
		t.Errorf("max |w2 - w1| = %g, max |w| = %g", maxDiff, maxW)
	}
}

func TestStrategyBadInput(t *testing.T) {
	ctx := splitContext(t, 2)
	_, err := cairn.NewMirroredStrategy(ctx, "cpu:0", "cpu:7")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "cpu:7")
	_, err = cairn.NewMirroredStrategy(ctx, "cpu:1", "cpu:1")
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cpu:1")
	_, err = cairn.NewMirroredStrategyWithOptions(ctx, nil, cairn.WithCollectiveTimeout(0))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "collective_timeout_ms")
	_, err = cairn.NewMirroredStrategy(nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewMirroredStrategy: context is nil")

	s := must(cairn.NewMirroredStrategy(ctx))
	// A scope's error is returned, and the scope is left on a panic too.
	sentinel := errors.New("stop")
	if err := s.Scope(func() error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("Scope: %v", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = s.Scope(func() error { panic("in scope") })
	}()
	ok(t, s.Scope(func() error { return nil }))
	_, err = s.Run(nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Strategy.Run: fn is nil")
	// A run cannot start another.
	_, err = s.Run(func(r *cairn.Replica) ([]*cairn.Tensor, error) {
		_, err := s.Run(func(*cairn.Replica) ([]*cairn.Tensor, error) { return nil, nil })
		return nil, err
	})
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "replica")
	s.Close()
	s.Close()
	_, err = s.Run(func(*cairn.Replica) ([]*cairn.Tensor, error) { return nil, nil })
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "Strategy.Run: strategy is closed")
	if s.NumReplicas() != 0 {
		t.Errorf("a closed strategy has %d replicas", s.NumReplicas())
	}
}
