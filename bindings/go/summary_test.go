package cairn_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// eventCount reads the event file with the binding's record reader: the file_version record plus
// one per event.
func eventCount(t *testing.T, path string) int {
	t.Helper()
	r := must(cairn.OpenRecordReader(path))
	defer r.Close()
	return len(readAll(t, r))
}

func newSummaryWriter(t *testing.T, logdir string, options ...cairn.SummaryWriterOption) *cairn.SummaryWriter {
	t.Helper()
	w := must(cairn.NewSummaryWriter(logdir, options...))
	t.Cleanup(func() { ok(t, w.Close()) })
	return w
}

func TestSummaryWriterWritesEachKind(t *testing.T) {
	ctx := newContext(t)
	logdir := filepath.Join(t.TempDir(), "logs", "run1")
	w := newSummaryWriter(t, logdir, cairn.WithMaxQueue(2), cairn.WithFlushInterval(0), cairn.WithFilenameSuffix("go"))
	path := must(w.Path())
	if filepath.Dir(path) != logdir || !strings.HasPrefix(filepath.Base(path), "events.out.tfevents.") ||
		!strings.HasSuffix(path, ".go") {
		t.Errorf("Path() = %s", path)
	}
	ok(t, w.Scalar("loss", 0.5, 1))
	ok(t, w.Text("note", "hello *TensorBoard*", 1))
	ok(t, w.ScalarTensor(ctx, "acc", scalar(ctx, float32(0.75)), 1))
	ok(t, w.Histogram(ctx, "weights", tensor(t, ctx, []int64{6}, []float64{1, 2, 2, 3, 3, 3}), 0, 1))
	ok(t, w.Image(ctx, "image", tensor(t, ctx, []int64{2, 4, 4, 1}, make([]uint8, 32)), 1, 1))
	ok(t, w.Audio(ctx, "audio", tensor(t, ctx, []int64{1, 100, 1}, make([]float32, 100)), 8000, -1, 1))
	ok(t, w.Flush())
	if n := eventCount(t, path); n != 7 {
		t.Errorf("%d records after Flush, want 7 (file_version and 6 summaries)", n)
	}

	err := w.ScalarTensor(ctx, "not_a_scalar", tensor(t, ctx, []int64{2}, []float32{1, 2}), 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "not_a_scalar")
	err = w.Histogram(ctx, "nan", tensor(t, ctx, []int64{1}, []float32{float32(math.NaN())}), 0, 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "nan")
	err = w.Image(ctx, "bad_image", tensor(t, ctx, []int64{4, 4}, make([]uint8, 16)), 1, 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "bad_image")

	ok(t, w.Close())
	ok(t, w.Close())
	wantError(t, w.Scalar("late", 1, 1), "FAILED_PRECONDITION: SummaryWriter.Scalar: summary writer is closed")
	wantError(t, w.Flush(), "FAILED_PRECONDITION: SummaryWriter.Flush: summary writer is closed")
	wantError(t, w.ScalarTensor(ctx, "late", scalar(ctx, float32(1)), 1),
		"FAILED_PRECONDITION: SummaryWriter.ScalarTensor: summary writer is closed")
	_, err = w.Path()
	wantError(t, err, "FAILED_PRECONDITION: SummaryWriter.Path: summary writer is closed")
	if n := eventCount(t, path); n != 7 {
		t.Errorf("%d records after Close, want 7", n)
	}
}

func TestSummaryDefaultWriterAndStep(t *testing.T) {
	defer cairn.SetSummaryStep(cairn.DefaultStep)
	defer cairn.ClearDefaultSummaryWriter()
	var none *cairn.SummaryWriter // the default writer

	// No default writer: nothing is written, no error (tf.summary's rule).
	ok(t, none.Scalar("ignored", 1, 1))
	if _, set := cairn.SummaryStep(); set {
		t.Fatal("a default step is set at the start")
	}
	w := newSummaryWriter(t, t.TempDir())
	w.SetDefault()
	wantCode(t, none.Scalar("needs_step", 1, cairn.DefaultStep), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "needs_step")
	cairn.SetSummaryStep(5)
	if step, set := cairn.SummaryStep(); !set || step != 5 {
		t.Errorf("SummaryStep() = %d, %v", step, set)
	}
	ok(t, none.Scalar("a", 1, cairn.DefaultStep))
	ok(t, none.Text("b", "text", 6))
	cairn.ClearDefaultSummaryWriter()
	ok(t, none.Scalar("dropped", 1, cairn.DefaultStep))
	ok(t, none.Flush())
	ok(t, w.Flush())
	if n := eventCount(t, must(w.Path())); n != 3 {
		t.Errorf("%d records, want 3 (file_version and 2 summaries to the default writer)", n)
	}
}

// Inside a compiled function the tensor summaries are recorded and write on every call, at the
// default step of that call; the graph of a trace is one more event.
func TestSummaryInsideFunctionWritesOnEveryCall(t *testing.T) {
	defer cairn.SetSummaryStep(cairn.DefaultStep)
	ctx := newContext(t)
	w := newSummaryWriter(t, t.TempDir())
	traces := 0
	f := newFunction(t, ctx, "logged_square", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		traces++
		y, err := ops.Mul(ctx, in[0], in[0])
		if err != nil {
			return nil, err
		}
		if err := w.ScalarTensor(ctx, "square", y, cairn.DefaultStep); err != nil {
			y.Close()
			return nil, err
		}
		return []*cairn.Tensor{y}, nil
	})
	for step := int64(1); step <= 3; step++ {
		cairn.SetSummaryStep(step)
		callOne[float32](t, f, scalar(ctx, float32(step)))
	}
	if traces != 1 {
		t.Errorf("%d traces, want 1", traces)
	}
	ok(t, w.Graph(f, 0, 0))
	wantCode(t, w.Graph(f, 1, 0), cairn.CodeOutOfRange, cairn.ErrOutOfRange, "")
	ok(t, w.Flush())
	if n := eventCount(t, must(w.Path())); n != 5 {
		t.Errorf("%d records, want 5 (file_version, 3 calls, the graph)", n)
	}
	closed := must(cairn.NewFunction(ctx, "closed", func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) {
		return nil, nil
	}))
	closed.Close()
	wantError(t, w.Graph(closed, 0, 0), "FAILED_PRECONDITION: SummaryWriter.Graph: function is closed")
}

func TestSummaryWriterErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	ok(t, os.WriteFile(file, nil, 0o644))
	_, err := cairn.NewSummaryWriter(filepath.Join(file, "logs"))
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "logs")
	_, err = cairn.NewSummaryWriter(t.TempDir(), cairn.WithMaxQueue(0))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
}

// A writer is shared by goroutines: every event arrives (test_go runs this under -race too).
func TestSummaryWriterConcurrent(t *testing.T) {
	w := newSummaryWriter(t, t.TempDir())
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := w.Scalar("loss", float64(i), int64(i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	ok(t, w.Flush())
	if n := eventCount(t, must(w.Path())); n != 401 {
		t.Errorf("%d records, want 401", n)
	}
}
