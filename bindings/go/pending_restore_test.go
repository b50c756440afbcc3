package cairn_test

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"cairn.dev/cairn"
)

// pendingModel is a two-layer Sequential, not built yet, and an Adam optimizer.
func pendingModel(t *testing.T, ctx *cairn.Context, init string) (*cairn.Sequential, *cairn.Optimizer) {
	t.Helper()
	hidden := must(cairn.NewDense(ctx, 3, cairn.WithActivation("tanh"), cairn.WithKernelInitializer(init),
		cairn.WithBiasInitializer(init)))
	out := must(cairn.NewDense(ctx, 2, cairn.WithKernelInitializer(init), cairn.WithBiasInitializer(init)))
	model := must(cairn.NewSequential(ctx, []*cairn.Layer{hidden, out}))
	hidden.Close()
	out.Close()
	opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.05)))
	return model, opt
}

// pendingCall calls the model on a fixed batch (the first call builds it).
func pendingCall(t *testing.T, ctx *cairn.Context, model *cairn.Sequential) {
	t.Helper()
	x := tensor(t, ctx, []int64{2, 4}, []float32{0.5, -1, 2, 0.25, -0.75, 1.5, 0, 1})
	defer x.Close()
	must(model.Call(x, false)).Close()
}

// pendingStep is one Adam step with fixed gradients that depend on step.
func pendingStep(t *testing.T, ctx *cairn.Context, model *cairn.Sequential, opt *cairn.Optimizer, step int) {
	t.Helper()
	weights := must(model.Weights(true))
	defer closeAll(t, weights...)
	grads := make([]*cairn.Tensor, len(weights))
	for i, w := range weights {
		value := must(w.Read())
		shape := value.Shape()
		value.Close()
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		g := make([]float32, n)
		for j := range g {
			g[j] = 0.1*float32(step+1)*float32(j%5-2) + 0.01*float32(i)
		}
		grads[i] = tensor(t, ctx, shape, g)
	}
	ok(t, opt.ApplyGradients(grads, weights))
	for _, g := range grads {
		g.Close()
	}
}

// pendingState is every weight's value, then (with slots) Adam's m and v of each.
func pendingState(t *testing.T, model *cairn.Sequential, opt *cairn.Optimizer, slots bool) [][]float32 {
	t.Helper()
	weights := must(model.Weights(true))
	defer closeAll(t, weights...)
	read := func(v *cairn.Variable) []float32 {
		value := must(v.Read())
		defer value.Close()
		return must(cairn.Read[float32](value))
	}
	var state [][]float32
	for _, w := range weights {
		state = append(state, read(w))
	}
	for _, name := range []string{"m", "v"} {
		for _, w := range weights {
			if !slots {
				break
			}
			slot := must(opt.Slot(w, name))
			state = append(state, read(slot))
			slot.Close()
		}
	}
	return state
}

func sameState(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}

// TensorFlow's Checkpoint(model=fresh, optimizer=opt).restore(path) as Go writes it: the status is
// dropped and the checkpoint closed before the model is built. The values wait on the model and
// the optimizer, not on the checkpoint: the first Call and the first step restore them, bit for bit.
func TestPendingRestoreOutlivesCheckpointAndStatus(t *testing.T) {
	var mu sync.Mutex
	var warnings []string
	ctx := newContext(t, cairn.WithLogFunc(func(level cairn.LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, message)
	}))
	path := filepath.Join(t.TempDir(), "ckpt")

	trained, trainedOpt := pendingModel(t, ctx, "glorot_uniform")
	defer trained.Close()
	defer trainedOpt.Close()
	pendingCall(t, ctx, trained)
	pendingStep(t, ctx, trained, trainedOpt, 0)
	pendingStep(t, ctx, trained, trainedOpt, 1)
	saver := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": trained, "optimizer": trainedOpt}))
	ok(t, saver.Write(path))
	saver.Close()
	saved := pendingState(t, trained, trainedOpt, true)
	pendingStep(t, ctx, trained, trainedOpt, 2)
	nextStep := pendingState(t, trained, trainedOpt, true)

	fresh, opt := pendingModel(t, ctx, "ones")
	defer fresh.Close()
	defer opt.Close()
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": fresh, "optimizer": opt}))
	if _, err := ckpt.Restore(path); err != nil { // the status is dropped at once
		t.Fatal(err)
	}
	ckpt.Close()
	for i := 0; i < 2; i++ { // the dropped status's finalizer frees it
		runtime.GC()
	}

	pendingCall(t, ctx, fresh) // builds the layers: their weights take the saved values
	if got := pendingState(t, fresh, opt, false); !sameState(got, saved[:len(got)]) {
		t.Fatalf("weights after the first call: got %v, want %v", got, saved[:len(got)])
	}
	pendingStep(t, ctx, fresh, opt, 2) // creates the slots: restored, then updated
	if got := pendingState(t, fresh, opt, true); !sameState(got, nextStep) {
		t.Fatalf("after the next step: got %v, want %v", got, nextStep)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range warnings {
		if strings.Contains(w, "never restored") {
			t.Errorf("everything was restored, yet: %s", w)
		}
	}
}
