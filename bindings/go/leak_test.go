package cairn_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn.dev/cairn"
)

// residentBytes reads the process's resident set size from /proc/self/statm.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	pages, err := strconv.ParseInt(strings.Fields(string(raw))[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// Each round holds a 4 KiB tensor, so leaking the 100,000 rounds a test makes would add about
// 400 MiB; the resident size may grow by a fraction of that from allocator caching, never by all
// of it.
const (
	leakRounds    = 100_000
	leakElements  = 1024
	leakTolerance = 64 << 20
)

func checkFlat(t *testing.T, makeAndDrop func(ctx *cairn.Context, data []float32, i int)) {
	ctx := newContext(t)
	data := make([]float32, leakElements)
	checkRounds(t, leakRounds, func(i int) { makeAndDrop(ctx, data, i) })
}

// checkRounds runs round rounds/10 times to warm up the allocators, then rounds times, and fails
// when the resident size grew by more than leakTolerance over the second run.
func checkRounds(t *testing.T, rounds int, round func(i int)) {
	start := time.Now()
	churn := func(n int) {
		for i := 0; i < n; i++ {
			round(i)
		}
		runtime.GC()
		runtime.GC() // the first cycle queues finalizers; the second lets their frees settle
	}
	churn(rounds / 10)
	before := residentBytes(t)
	churn(rounds)
	after := residentBytes(t)
	t.Logf("resident: %d KiB before, %d KiB after %d rounds (%v)", before>>10, after>>10, rounds, time.Since(start))
	if after-before > leakTolerance {
		t.Errorf("resident memory grew by %d MiB over %d rounds", (after-before)>>20, rounds)
	}
}

func TestNoLeakWithClose(t *testing.T) {
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		x, err := cairn.NewTensor(ctx, []int64{leakElements}, data)
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
	})
}

func TestNoLeakWithFinalizersOnly(t *testing.T) {
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		if _, err := cairn.NewTensor(ctx, []int64{leakElements}, data); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			runtime.GC() // native memory is invisible to the Go heap's pacing: nudge
		}
	})
}

// objectRound makes a variable holding a new 4 KiB tensor, a trackable, and an edge between them;
// if any of them leaked, the tensor's memory would go with it.
func objectRound(t *testing.T, ctx *cairn.Context, data []float32) (*cairn.Tensor, *cairn.Variable, *cairn.Object) {
	x, err := cairn.NewTensor(ctx, []int64{leakElements}, data)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cairn.NewVariable(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cairn.NewTrackable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Set("v", v); err != nil {
		t.Fatal(err)
	}
	return x, v, tr
}

func TestNoObjectLeakWithClose(t *testing.T) {
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		x, v, tr := objectRound(t, ctx, data)
		x.Close()
		v.Close()
		tr.Close()
	})
}

func TestNoObjectLeakWithFinalizersOnly(t *testing.T) {
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		objectRound(t, ctx, data)
		if i%1000 == 999 {
			runtime.GC()
		}
	})
}

func TestContextsAreFreedByFinalizers(t *testing.T) {
	for i := 0; i < 1000; i++ {
		if _, err := cairn.NewContext(cairn.WithLogFunc(func(cairn.LogLevel, string) {})); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
}

// A training step per round: a variable holding a new 4 KiB tensor, a tape, a gradient and an SGD
// optimizer whose momentum slot is another 4 KiB; closing all of them must free all of it.
func TestNoTrainingLeakWithClose(t *testing.T) {
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		x := must(cairn.NewTensor(ctx, []int64{leakElements}, data))
		v := must(cairn.NewVariable(ctx, x))
		x.Close()
		opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd, cairn.WithMomentum(0.9)))
		tape := must(cairn.NewGradientTape(ctx))
		r := must(v.Read())
		loss := must(cairn.Loss(ctx, cairn.LossKindMeanSquaredError, r, r, false))
		grads := must(tape.GradientVariables(loss, []*cairn.Variable{v}))
		tape.Close()
		if err := opt.ApplyGradients(grads, []*cairn.Variable{v}); err != nil {
			t.Fatal(err)
		}
		grads[0].Close()
		loss.Close()
		r.Close()
		opt.Close()
		v.Close()
	})
}

// A compiled function per round, whose graph captures a new 4 KiB tensor as a constant: traced,
// replayed and closed, it must free its graph and release its Go body.
func TestNoFunctionLeakWithClose(t *testing.T) {
	one := make([]float32, leakElements)
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		captured := must(cairn.NewTensor(ctx, []int64{leakElements}, data))
		f := must(cairn.NewFunction(ctx, "add_captured", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			y, err := cairn.RunOp(ctx, "Add", []*cairn.Tensor{in[0], captured}, nil, 1)
			return y, err
		}))
		x := must(cairn.NewTensor(ctx, []int64{leakElements}, one))
		for call := 0; call < 2; call++ { // a trace, then a replay
			closeNow(must(f.Call(x)))
		}
		x.Close()
		captured.Close()
		f.Close()
	})
}

// An eager Cond and a one-iteration WhileLoop per round, on a 4 KiB tensor, with callbacks that
// hold a new 4 KiB Go buffer: the outputs must be freed and each call's callbacks released.
func TestNoControlFlowLeakWithClose(t *testing.T) {
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		held := make([]byte, 4096) // reachable only through the callbacks' handle
		x := must(cairn.NewTensor(ctx, []int64{leakElements}, data))
		pred := must(cairn.NewTensor(ctx, nil, []bool{i%2 == 0}))
		negate := func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			held[0]++
			return cairn.RunOp(ctx, "Neg", in[:1], nil, 1)
		}
		closeNow(must(cairn.Cond(ctx, pred, []*cairn.Tensor{x, pred}, negate, negate, 1)))
		keepGoing := func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			held[1]++
			return in[1:2], nil
		}
		closeNow(must(cairn.WhileLoop(ctx, keepGoing, negate2(held), []*cairn.Tensor{x, pred},
			cairn.WithMaxIterations(1))))
		pred.Close()
		x.Close()
	})
}

// negate2 is a loop body over (x, pred) that negates x and keeps pred.
func negate2(held []byte) cairn.FunctionBody {
	return func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		held[2]++
		y, err := cairn.RunOp(ctx, "Neg", in[:1], nil, 1)
		if err != nil {
			return nil, err
		}
		return []*cairn.Tensor{y[0], in[1]}, nil
	}
}

// An Example per round holding a new 4 KiB float list, serialized, parsed back and parsed into a
// tensor; closing all of it must free all of it.
func TestNoExampleLeakWithClose(t *testing.T) {
	specs := []cairn.FeatureSpec{{Key: "x", Shape: []int64{leakElements}}}
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		ex := must(cairn.NewExample())
		if err := ex.SetFloats("x", data); err != nil {
			t.Fatal(err)
		}
		record := must(ex.Serialize())
		ex.Close()
		back := must(cairn.ParseExample(record))
		back.Close()
		out := must(cairn.ParseExamples(ctx, [][]byte{record}, specs))
		out[0][0].Close()
	})
}

// A record reader per round over a file of one 4 KiB record, and a profile of one op: closed, they
// must free their buffers.
func TestNoRecordReaderOrProfileLeakWithClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.tfrecord")
	w := must(cairn.OpenRecordWriter(path))
	if err := w.Write(make([]byte, 4*leakElements)); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		r := must(cairn.OpenRecordReader(path, cairn.WithBufferSize(8192)))
		if _, got, err := r.Next(); !got || err != nil {
			t.Fatal(got, err)
		}
		r.Close()
		if i%100 == 0 {
			if err := cairn.StartProfiler(); err != nil {
				t.Fatal(err)
			}
			x := must(cairn.NewTensor(ctx, []int64{leakElements}, data))
			x.Close()
			p := must(cairn.StopProfiler())
			p.Close()
		}
	})
}

// A reader every other round over a safetensors file of one 8 KiB tensor (checksummed, with
// metadata): listed, verified, loaded and closed; a leaked reader or value would keep its 8 KiB.
func TestNoWeightsReaderLeakWithClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.safetensors")
	saveOneVariable(t, newContext(t), path, 2*leakElements, cairn.WeightsFormatSafetensors,
		cairn.WithMetadata(map[string]string{"k": "v"}))
	checkFlat(t, func(ctx *cairn.Context, data []float32, i int) {
		if i%2 != 0 {
			return
		}
		r := must(cairn.OpenCheckpointReader(path))
		if len(r.Entries()) != 1 || len(r.Metadata()) != 2 || r.Format() != cairn.WeightsFormatSafetensors {
			t.Fatal(r.Entries(), r.Metadata())
		}
		if checked, err := r.Verify("v"); !checked || err != nil {
			t.Fatal(checked, err)
		}
		must(r.Load(ctx, "v")).Close()
		r.Close()
	})
}

// saveOneVariable saves a trackable holding one float32 variable "v" of n elements to path.
func saveOneVariable(t *testing.T, ctx *cairn.Context, path string, n int, format cairn.WeightsFormat, options ...cairn.WeightsOption) {
	tr, v := oneVariable(ctx, n)
	defer tr.Close()
	defer v.Close()
	if err := tr.SaveWeights(path, format, options...); err != nil {
		t.Fatal(err)
	}
}

// oneVariable is a trackable holding a float32 variable "v" of n elements.
func oneVariable(ctx *cairn.Context, n int) (*cairn.Object, *cairn.Variable) {
	x := must(cairn.NewTensor(ctx, []int64{int64(n)}, make([]float32, n)))
	defer x.Close()
	v := must(cairn.NewVariable(ctx, x))
	tr := must(cairn.NewTrackable(ctx))
	if err := tr.Set("v", v); err != nil {
		panic(err)
	}
	return tr, v
}

// Saving a 2 MiB variable's weights in each format in turn, loading them back, and exporting its
// checkpoint as TensorFlow's, 60 times: a leaked copy of the values per round would add 120 MiB.
// (Saves sync to disk: fewer, bigger rounds than checkFlat's.)
func TestNoWeightsSaveLoadLeakWithClose(t *testing.T) {
	dir := t.TempDir()
	ctx := newContext(t)
	formats := []cairn.WeightsFormat{cairn.WeightsFormatSafetensors, cairn.WeightsFormatTf, cairn.WeightsFormatCairn}
	checkRounds(t, 60, func(i int) {
		tr, v := oneVariable(ctx, 512*1024)
		path := filepath.Join(dir, "round")
		if err := tr.SaveWeights(path, formats[i%len(formats)]); err != nil {
			t.Fatal(err)
		}
		if n, err := tr.LoadWeights(path); n != 1 || err != nil {
			t.Fatal(n, err)
		}
		ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"tr": tr}))
		if err := ckpt.Export(filepath.Join(dir, "exported"), cairn.WeightsFormatTf); err != nil {
			t.Fatal(err)
		}
		ckpt.Close()
		v.Close()
		tr.Close()
	})
}
