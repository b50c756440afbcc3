package cairn_test

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn.dev/cairn"
)

// The README's hand-written training step, 10,000 times, on a 256-unit Dense layer over 256
// inputs (a 256 KiB kernel, so each step makes about 600 KiB of tensors: the activations, the
// loss and the gradients). Issue 14: before the binding counted native bytes, relying on
// finalizers leaked about 515 MB per 1,000 steps, because the Go heap barely grows and so the
// collector never ran. Resident memory after step 10,000 may exceed that after step 1,000 by at
// most trainingGrowthLimit; the loop stops early once it is over, so a leak fails fast instead of
// taking the machine's memory.
const (
	trainingSteps       = 10_000
	trainingWarmup      = 1_000
	trainingUnits       = 256
	trainingBatch       = 16
	trainingGrowthLimit = 48 << 20
)

// vmRSS is the process's resident set size (VmRSS in /proc/self/status) in bytes.
func vmRSS(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// trainingSetup is the model, optimizer and one batch of the README's training loop.
type trainingSetup struct {
	ctx   *cairn.Context
	model *cairn.Layer
	opt   *cairn.Optimizer
	x, y  *cairn.Tensor
}

func newTrainingSetup(t *testing.T) *trainingSetup {
	ctx := newContext(t, cairn.WithSeed(7))
	xs := make([]float32, trainingBatch*trainingUnits)
	ys := make([]int32, trainingBatch)
	for i := range xs {
		xs[i] = float32(i%17) / 17
	}
	for i := range ys {
		ys[i] = int32(i % trainingUnits)
	}
	s := &trainingSetup{
		ctx:   ctx,
		model: must(cairn.NewDense(ctx, trainingUnits)),
		opt:   must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.001))),
		x:     must(cairn.NewTensor(ctx, []int64{trainingBatch, trainingUnits}, xs)),
		y:     must(cairn.NewTensor(ctx, []int64{trainingBatch}, ys)),
	}
	t.Cleanup(func() { s.x.Close(); s.y.Close(); s.model.Close(); s.opt.Close() })
	return s
}

// runTraining calls step trainingSteps times and checks that resident memory stays flat after
// the warm-up (the model's variables and Adam's slots exist after the first step; the allocators
// settle within the warm-up). step returns the loss it read.
func runTraining(t *testing.T, step func(s *trainingSetup) float32) {
	s := newTrainingSetup(t)
	start := time.Now()
	var atWarmup int64
	first, last := float32(0), float32(0)
	for i := 1; i <= trainingSteps; i++ {
		loss := step(s)
		if i == 1 {
			first = loss
		}
		last = loss
		if i == trainingWarmup {
			atWarmup = vmRSS(t)
		}
		if i > trainingWarmup && i%500 == 0 {
			if grown := vmRSS(t) - atWarmup; grown > trainingGrowthLimit {
				t.Fatalf("resident memory grew by %d MiB between step %d and step %d (limit %d MiB)",
					grown>>20, trainingWarmup, i, trainingGrowthLimit>>20)
			}
		}
	}
	end := vmRSS(t)
	t.Logf("VmRSS %d MiB after step %d, %d MiB after step %d (%+d KiB); loss %.4f -> %.4f; %v",
		atWarmup>>20, trainingWarmup, end>>20, trainingSteps, (end-atWarmup)>>10, first, last, time.Since(start))
	if !(last < first) {
		t.Errorf("the loss did not fall: %v -> %v", first, last)
	}
}

// The README's step with nothing closed: the finalizers, and the collections that the native
// bytes of the binding's tensors trigger, must free it all.
func TestTrainingMemoryFlatWithFinalizersOnly(t *testing.T) {
	runTraining(t, leftToFinalizers)
}

// leftToFinalizers is the README's step closing nothing but the tape.
func leftToFinalizers(s *trainingSetup) float32 {
	tape := must(cairn.NewGradientTape(s.ctx))
	logits := must(s.model.Call(s.x, true))
	loss := must(cairn.Loss(s.ctx, cairn.LossKindSparseCategoricalCrossentropy, s.y, logits, true))
	weights := must(s.model.Weights(true))
	grads := must(tape.GradientVariables(loss, weights))
	tape.Close()
	if err := s.opt.ApplyGradients(grads, weights); err != nil {
		panic(err)
	}
	return must(cairn.Read[float32](loss))[0]
}

// The same step closing everything it makes.
func TestTrainingMemoryFlatWithClose(t *testing.T) {
	runTraining(t, func(s *trainingSetup) float32 {
		tape := must(cairn.NewGradientTape(s.ctx))
		defer tape.Close()
		logits := must(s.model.Call(s.x, true))
		defer logits.Close()
		loss := must(cairn.Loss(s.ctx, cairn.LossKindSparseCategoricalCrossentropy, s.y, logits, true))
		defer loss.Close()
		weights := must(s.model.Weights(true))
		defer closeNow(weights)
		grads := must(tape.GradientVariables(loss, weights))
		defer closeNow(grads)
		if err := s.opt.ApplyGradients(grads, weights); err != nil {
			t.Fatal(err)
		}
		return must(cairn.Read[float32](loss))[0]
	})
}

// The README's step in a Scope, closing nothing else by hand but the tape.
func TestTrainingMemoryFlatWithScope(t *testing.T) {
	runTraining(t, func(s *trainingSetup) float32 {
		scope := cairn.NewScope()
		defer scope.Close()
		tape := must(cairn.NewGradientTape(s.ctx))
		defer tape.Close()
		logits := must(s.model.Call(s.x, true))
		loss := must(cairn.Loss(s.ctx, cairn.LossKindSparseCategoricalCrossentropy, s.y, logits, true))
		weights := must(s.model.Weights(true))
		grads := must(tape.GradientVariables(loss, weights))
		if err := s.opt.ApplyGradients(grads, weights); err != nil {
			t.Fatal(err)
		}
		return must(cairn.Read[float32](loss))[0]
	})
}

// Without the native-memory trigger, the finalizers-only step leaks as issue 14 found: the
// bound of runTraining is what the trigger keeps, not something any loop meets. Stops as soon as
// the growth is over the bound (a few hundred steps).
//
// Go's own collections (every few MiB of Go allocations here) free what the finalizers hold: at
// GOGC=100 the growth between two of them is close to the bound, and the test failed in 3 of 4
// runs of the memory tests ("stayed flat"). So Go's collector is off for its length.
func TestTrainingMemoryGrowsWithTriggerOff(t *testing.T) {
	defer cairn.SetNativeGCPercent(cairn.SetNativeGCPercent(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	s := newTrainingSetup(t)
	start := vmRSS(t)
	for i := 1; i <= trainingSteps; i++ {
		leftToFinalizers(s)
		if vmRSS(t)-start > 2*trainingGrowthLimit {
			t.Logf("with the trigger off, resident memory grew by over %d MiB in %d steps", 2*trainingGrowthLimit>>20, i)
			return
		}
	}
	t.Errorf("resident memory stayed flat for %d steps with the trigger off: this test shows nothing", trainingSteps)
}
