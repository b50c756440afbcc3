package cairn_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn.dev/cairn"
)

// blobs is a small 3-class problem: n points of 4 features, class k centred at +2 on feature k.
func blobs(t testing.TB, ctx *cairn.Context, n int) (x, y *cairn.Tensor) {
	t.Helper()
	xs := make([]float32, 0, n*4)
	ys := make([]int32, n)
	for i := range n {
		k := i % 3
		ys[i] = int32(k)
		for f := range 4 {
			v := float32(math.Sin(float64(i*7+f*13))) * 0.8
			if f == k {
				v += 2
			}
			xs = append(xs, v)
		}
	}
	return tensor(t, ctx, []int64{int64(n), 4}, xs), tensor(t, ctx, []int64{int64(n)}, ys)
}

// newTestModel is Dense(8, relu) -> Dense(3), compiled with Adam, sparse crossentropy and accuracy.
func newTestModel(t testing.TB, ctx *cairn.Context, options ...cairn.CompileOption) *cairn.Model {
	t.Helper()
	hidden := must(cairn.NewDense(ctx, 8, cairn.WithActivation("relu")))
	defer hidden.Close()
	out := must(cairn.NewDense(ctx, 3))
	defer out.Close()
	model := must(cairn.NewModel(ctx, []*cairn.Layer{hidden, out}, cairn.WithLayerName("mlp")))
	adam := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.05)))
	defer adam.Close()
	ok(t, model.Compile(adam, "sparse_categorical_crossentropy", append([]cairn.CompileOption{cairn.WithMetrics("accuracy")}, options...)...))
	return model
}

// modelFixture is a context seeded 1, n samples of blobs and a compiled newTestModel, closed when
// the test ends.
func modelFixture(t *testing.T, n int) (*cairn.Context, *cairn.Tensor, *cairn.Tensor, *cairn.Model) {
	t.Helper()
	ctx := newContext(t, cairn.WithSeed(1))
	x, y := blobs(t, ctx, n)
	model := newTestModel(t, ctx)
	t.Cleanup(func() { closeAll(t, x, y); model.Close() })
	return ctx, x, y, model
}

var silent = cairn.WithVerbose(cairn.VerboseSilent)

func TestModelFitEvaluatePredict(t *testing.T) {
	ctx, x, y, model := modelFixture(t, 96)

	h := must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(5), cairn.WithBatchSize(16), silent,
		cairn.WithValidationData(cairn.XY{X: x, Y: y}), cairn.WithValidationFreq(2)))
	if !slices.Equal(h.Epochs, []int64{0, 1, 2, 3, 4}) {
		t.Errorf("history epochs %v", h.Epochs)
	}
	if want := []string{"loss", "accuracy", "val_loss", "val_accuracy"}; !slices.Equal(h.Names, want) {
		t.Errorf("history names %v, want %v", h.Names, want)
	}
	loss := h.Values["loss"]
	if len(loss) != 5 || len(h.Values["val_loss"]) != 2 || !(loss[4] < loss[0]/2) {
		t.Errorf("loss %v (want 5 values falling by half), val_loss %v (want 2)", loss, h.Values["val_loss"])
	}

	logs := must(model.Evaluate(cairn.XY{X: x, Y: y}, cairn.WithBatchSize(32)))
	if !slices.Equal(logs.Names, []string{"loss", "accuracy"}) {
		t.Errorf("evaluate names %v", logs.Names)
	}
	if acc := must(logs.Get("accuracy")); acc < 0.9 {
		t.Errorf("accuracy %v after 5 epochs", acc)
	}
	if _, err := logs.Get("precision"); !errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "loss, accuracy") {
		t.Errorf("Get of a missing name: %v", err)
	}
	if logs.Map()["loss"] != logs.Values[0] || !strings.HasPrefix(logs.String(), "loss: ") {
		t.Errorf("Map %v, String %q", logs.Map(), logs.String())
	}

	pred := must(model.Predict(cairn.XY{X: x}, cairn.WithBatchSize(40)))
	defer pred.Close()
	if !slices.Equal(pred.Shape(), []int64{96, 3}) {
		t.Errorf("predict shape %v", pred.Shape())
	}

	// The same with a Dataset.
	slicesDS := must(cairn.NewDatasetFromTensorSlices(ctx, []string{"x", "y"}, x, y))
	defer slicesDS.Close()
	ds := must(slicesDS.Batch(32, false))
	defer ds.Close()
	h = must(model.Fit(ds, cairn.WithEpochs(2), silent))
	if len(h.Values["loss"]) != 2 {
		t.Errorf("dataset fit history %v", h.Values)
	}
	dpred := must(model.Predict(ds))
	defer dpred.Close()
	if !slices.Equal(dpred.Shape(), []int64{96, 3}) {
		t.Errorf("dataset predict shape %v", dpred.Shape())
	}

	// train_on_batch and test_on_batch.
	before := must(model.TestOnBatch(x, y))
	for range 5 {
		must(model.TrainOnBatch(x, y))
	}
	after := must(model.TestOnBatch(x, y))
	if !(after.Values[0] < before.Values[0]) {
		t.Errorf("TrainOnBatch: loss %v then %v", before.Values[0], after.Values[0])
	}
}

// TestModelIsASequential: a Model goes wherever a Layer or a Sequential does.
func TestModelIsASequential(t *testing.T) {
	ctx, x, _, model := modelFixture(t, 8)
	out := must(model.Call(x, false))
	out.Close()
	weights := must(model.Weights(true))
	if len(weights) != 4 {
		t.Errorf("%d weights", len(weights))
	}
	closeAll(t, weights...)
	if s := must(model.Summary()); !strings.Contains(s, "mlp") {
		t.Errorf("summary:\n%s", s)
	}
	outer := must(cairn.NewSequential(ctx, []*cairn.Layer{model.Layer}))
	defer outer.Close()
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": model}))
	defer ckpt.Close()
	path := must(ckpt.Save(filepath.Join(t.TempDir(), "ckpt")))
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// recorder is a Go callback that records its hooks.
type recorder struct {
	cairn.BaseCallback
	calls []string
}

func (r *recorder) OnTrainBegin(*cairn.Model) error {
	r.calls = append(r.calls, "train_begin")
	return nil
}
func (r *recorder) OnEpochBegin(_ *cairn.Model, e int64) error {
	r.calls = append(r.calls, "epoch_begin "+string(rune('0'+e)))
	return nil
}
func (r *recorder) OnTrainBatchEnd(_ *cairn.Model, b int64, logs cairn.Logs) error {
	if len(logs.Names) == 0 || logs.Names[0] != "loss" {
		r.calls = append(r.calls, "bad logs")
	}
	r.calls = append(r.calls, "batch_end "+string(rune('0'+b)))
	return nil
}
func (r *recorder) OnEpochEnd(_ *cairn.Model, e int64, logs cairn.Logs) error {
	r.calls = append(r.calls, "epoch_end "+string(rune('0'+e))+" "+strings.Join(logs.Names, ","))
	return nil
}
func (r *recorder) OnTrainEnd(*cairn.Model, cairn.Logs) error {
	r.calls = append(r.calls, "train_end")
	return nil
}
func (r *recorder) OnTestEnd(*cairn.Model, cairn.Logs) error {
	r.calls = append(r.calls, "test_end")
	return nil
}

// hookFunc is a callback whose OnTrainBatchEnd is a function.
type hookFunc struct {
	cairn.BaseCallback
	batchEnd func(m *cairn.Model, batch int64) error
}

func (h hookFunc) OnTrainBatchEnd(m *cairn.Model, batch int64, _ cairn.Logs) error {
	return h.batchEnd(m, batch)
}

var errStop = errors.New("stop here")

func TestGoCallbacks(t *testing.T) {
	_, x, y, model := modelFixture(t, 12)
	data := cairn.XY{X: x, Y: y}

	// Hooks in order; the test hooks of validation and of Evaluate.
	rec := &recorder{}
	cb := must(cairn.NewCallback(rec))
	must(model.Fit(data, cairn.WithEpochs(2), cairn.WithBatchSize(6), silent, cairn.WithCallbacks(cb),
		cairn.WithValidationData(data)))
	want := []string{"train_begin", "epoch_begin 0", "batch_end 0", "batch_end 1", "test_end",
		"epoch_end 0 loss,accuracy,val_loss,val_accuracy", "epoch_begin 1", "batch_end 0", "batch_end 1", "test_end",
		"epoch_end 1 loss,accuracy,val_loss,val_accuracy", "train_end"}
	if !slices.Equal(rec.calls, want) {
		t.Errorf("hooks\n got %q\nwant %q", rec.calls, want)
	}
	rec.calls = nil
	must(model.Evaluate(data, cairn.WithCallbacks(cb)))
	if !slices.Equal(rec.calls, []string{"test_end"}) {
		t.Errorf("evaluate hooks %q", rec.calls)
	}
	cb.Close()
	cb.Close()

	// StopTraining from a hook ends fit after the batch.
	stopper := must(cairn.NewCallback(hookFunc{batchEnd: func(m *cairn.Model, batch int64) error {
		if batch == 1 {
			m.StopTraining()
		}
		return nil
	}}))
	defer stopper.Close()
	h := must(model.Fit(data, cairn.WithEpochs(5), cairn.WithBatchSize(3), silent, cairn.WithCallbacks(stopper)))
	if len(h.Epochs) != 1 {
		t.Errorf("StopTraining: %d epochs ran", len(h.Epochs))
	}

	// An error ends fit with its message, and errors.Is sees it.
	failing := must(cairn.NewCallback(hookFunc{batchEnd: func(*cairn.Model, int64) error { return errStop }}))
	defer failing.Close()
	_, err := model.Fit(data, cairn.WithEpochs(2), silent, cairn.WithCallbacks(failing))
	if !errors.Is(err, errStop) || !strings.Contains(err.Error(), "stop here") {
		t.Errorf("a hook's error: %v", err)
	}
	var cerr *cairn.Error
	if !errors.As(err, &cerr) {
		t.Errorf("a hook's error is not a *cairn.Error: %T", err)
	}

	// A panic becomes an error; fit can run again afterwards.
	panicking := must(cairn.NewCallback(hookFunc{batchEnd: func(*cairn.Model, int64) error { panic("boom") }}))
	defer panicking.Close()
	_, err = model.Fit(data, cairn.WithEpochs(1), silent, cairn.WithCallbacks(panicking))
	if err == nil || !strings.Contains(err.Error(), "OnTrainBatchEnd panicked: boom") {
		t.Errorf("a hook's panic: %v", err)
	}
	must(model.Fit(data, silent))

	// The callback's Go value lives while C holds it: dropped handles are released by the collector.
	for range 3 {
		_ = must(cairn.NewCallback(&recorder{}))
	}
}

func TestBuiltInCallbacks(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(1))
	x, y := blobs(t, ctx, 48)
	defer closeAll(t, x, y)
	data := cairn.XY{X: x, Y: y}
	dir := t.TempDir()

	// Each constructed, with its options.
	for _, made := range []func() (*cairn.Callback, error){
		func() (*cairn.Callback, error) {
			return cairn.NewModelCheckpoint(ctx, filepath.Join(dir, "best"), cairn.WithMaxToKeep(2), cairn.WithMonitor("loss"),
				cairn.WithMonitorMode(cairn.MonitorModeMin), cairn.WithSaveBestOnly(true), cairn.WithSaveFreq(0))
		},
		func() (*cairn.Callback, error) {
			return cairn.NewTensorBoard(filepath.Join(dir, "tb"), cairn.WithUpdateFreq(2), cairn.WithHistogramFreq(1),
				cairn.WithWriteGraph(true), cairn.WithProfileBatches(1, 2))
		},
		func() (*cairn.Callback, error) {
			return cairn.NewEarlyStopping(cairn.WithMonitor("loss"), cairn.WithMinDelta(0.01), cairn.WithPatience(2),
				cairn.WithBaseline(5), cairn.WithRestoreBestWeights(true), cairn.WithStartFromEpoch(1))
		},
		func() (*cairn.Callback, error) {
			return cairn.NewReduceLROnPlateau(cairn.WithMonitor("loss"), cairn.WithFactor(0.5), cairn.WithPatience(1),
				cairn.WithMinDelta(1e-3), cairn.WithCooldown(1), cairn.WithMinLR(1e-4))
		},
		func() (*cairn.Callback, error) {
			return cairn.NewCSVLogger(filepath.Join(dir, "log.tsv"), cairn.WithCSVSeparator('\t'), cairn.WithCSVAppend(true))
		},
		func() (*cairn.Callback, error) {
			return cairn.NewBackupAndRestore(ctx, filepath.Join(dir, "bk"), cairn.WithSaveFreq(3), cairn.WithDeleteCheckpoint(false))
		},
	} {
		cb := must(made())
		model := newTestModel(t, ctx)
		must(model.Fit(data, cairn.WithEpochs(3), cairn.WithBatchSize(16), silent, cairn.WithCallbacks(cb)))
		model.Close()
		cb.Close()
	}
	for _, sub := range []string{"best", "tb/train", "bk"} {
		if entries, err := os.ReadDir(filepath.Join(dir, sub)); err != nil || len(entries) == 0 {
			t.Errorf("%s: %v, %d entries", sub, err, len(entries))
		}
	}

	// ModelCheckpoint: ckpt-N per epoch, max_to_keep kept.
	model := newTestModel(t, ctx)
	defer model.Close()
	ckptDir := filepath.Join(dir, "ckpt")
	ck := must(cairn.NewModelCheckpoint(ctx, ckptDir, cairn.WithMaxToKeep(2)))
	defer ck.Close()
	csvPath := filepath.Join(dir, "log.csv")
	csv := must(cairn.NewCSVLogger(csvPath))
	defer csv.Close()
	must(model.Fit(data, cairn.WithEpochs(4), cairn.WithBatchSize(16), silent, cairn.WithCallbacks(ck, csv)))
	if latest := must(cairn.LatestCheckpoint(ctx, ckptDir)); filepath.Base(latest) != "ckpt-4" {
		t.Errorf("latest checkpoint %q", latest)
	}
	if matches, _ := filepath.Glob(filepath.Join(ckptDir, "ckpt-1*")); len(matches) != 0 {
		t.Errorf("ckpt-1 kept beyond max_to_keep 2: %v", matches)
	}
	// CSVLogger: a header and one row per epoch.
	rows := strings.Split(strings.TrimSpace(string(must(os.ReadFile(csvPath)))), "\n")
	if len(rows) != 5 || rows[0] != "epoch,loss,accuracy" || !strings.HasPrefix(rows[4], "3,") {
		t.Errorf("CSV rows %q", rows)
	}

	// EarlyStopping: an impossible min_delta stops after patience + 1 epochs.
	early := must(cairn.NewEarlyStopping(cairn.WithMonitor("loss"), cairn.WithMinDelta(100), cairn.WithPatience(1)))
	defer early.Close()
	h := must(model.Fit(data, cairn.WithEpochs(10), silent, cairn.WithCallbacks(early)))
	if len(h.Epochs) != 2 {
		t.Errorf("EarlyStopping: %d epochs ran", len(h.Epochs))
	}

	// LearningRateScheduler: the closure is called each epoch and sets the rate.
	var seen []int64
	sched := must(cairn.NewLearningRateScheduler(func(epoch int64, lr float64) (float64, error) {
		seen = append(seen, epoch)
		return 0.01 / float64(epoch+1), nil
	}))
	defer sched.Close()
	must(model.Fit(data, cairn.WithEpochs(3), silent, cairn.WithCallbacks(sched)))
	if !slices.Equal(seen, []int64{0, 1, 2}) {
		t.Errorf("schedule called for epochs %v", seen)
	}
	opt := must(must(model.Get("optimizer")).AsOptimizer())
	if lr := must(opt.LearningRate()); math.Abs(lr-0.01/3) > 1e-6 {
		t.Errorf("learning rate %v after the schedule", lr)
	}
	opt.Close()
	// A schedule's error and panic end fit.
	bad := must(cairn.NewLearningRateScheduler(func(int64, float64) (float64, error) { return 0, errStop }))
	defer bad.Close()
	if _, err := model.Fit(data, silent, cairn.WithCallbacks(bad)); !errors.Is(err, errStop) {
		t.Errorf("schedule error: %v", err)
	}
	worse := must(cairn.NewLearningRateScheduler(func(int64, float64) (float64, error) { panic("no rate") }))
	defer worse.Close()
	if _, err := model.Fit(data, silent, cairn.WithCallbacks(worse)); err == nil || !strings.Contains(err.Error(), "no rate") {
		t.Errorf("schedule panic: %v", err)
	}
	negative := must(cairn.NewLearningRateScheduler(func(int64, float64) (float64, error) { return -1, nil }))
	defer negative.Close()
	if _, err := model.Fit(data, silent, cairn.WithCallbacks(negative)); !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Errorf("negative rate: %v", err)
	}

	// Bad options: the C constructor's error, or the binding's for an option that does not apply.
	if _, err := cairn.NewModelCheckpoint(ctx, ""); !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := cairn.NewEarlyStopping(cairn.WithPatience(-1)); !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Errorf("negative patience: %v", err)
	}
	if _, err := cairn.NewReduceLROnPlateau(cairn.WithFactor(1.5)); !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Errorf("factor 1.5: %v", err)
	}
	if _, err := cairn.NewCSVLogger(csvPath, cairn.WithPatience(1)); err == nil ||
		!strings.Contains(err.Error(), "NewCSVLogger: option WithPatience does not apply") {
		t.Errorf("an option that does not apply: %v", err)
	}
	if _, err := cairn.NewModelCheckpoint(ctx, ckptDir, cairn.WithCheckpointName("x")); err == nil ||
		!strings.Contains(err.Error(), "WithCheckpointName does not apply") {
		t.Errorf("a manager option that does not apply: %v", err)
	}
}

// failAt is a callback that fails at global batch n (counting from 1).
type failAt struct {
	cairn.BaseCallback
	n, seen int
}

func (f *failAt) OnTrainBatchEnd(*cairn.Model, int64, cairn.Logs) error {
	if f.seen++; f.seen == f.n {
		return errors.New("simulated crash")
	}
	return nil
}

// backupRun trains a fresh model in a fresh context seeded 1 for 3 epochs with BackupAndRestore
// in dir (a backup every 2 batches) and the extra callbacks, and returns its weights.
func backupRun(t *testing.T, dir string, extra ...*cairn.Callback) ([][]float32, error) {
	t.Helper()
	ctx, x, y, model := modelFixture(t, 40)
	backup := must(cairn.NewBackupAndRestore(ctx, dir, cairn.WithSaveFreq(2)))
	defer backup.Close()
	_, err := model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(3), cairn.WithBatchSize(8), silent,
		cairn.WithCallbacks(append([]*cairn.Callback{backup}, extra...)...))
	if err != nil {
		return nil, err
	}
	weights := must(model.Weights(false))
	defer closeAll(t, weights...)
	var values [][]float32
	for _, w := range weights {
		v := must(w.Read())
		values = append(values, must(cairn.Read[float32](v)))
		v.Close()
	}
	return values, nil
}

func TestBackupAndRestoreResumesExactly(t *testing.T) {
	want := must(backupRun(t, filepath.Join(t.TempDir(), "uninterrupted")))
	dir := filepath.Join(t.TempDir(), "interrupted")
	crash := must(cairn.NewCallback(&failAt{n: 8})) // mid-epoch 1 (5 batches an epoch), after the backup at step 8
	defer crash.Close()
	if _, err := backupRun(t, dir, crash); err == nil || !strings.Contains(err.Error(), "simulated crash") {
		t.Fatalf("the interrupted run: %v", err)
	}
	counter := &failAt{n: -1}
	counting := must(cairn.NewCallback(counter))
	defer counting.Close()
	got := must(backupRun(t, dir, counting))
	if counter.seen != 7 { // 15 batches in all; the backup at step 8
		t.Errorf("the resumed run trained %d batches, want 7", counter.seen)
	}
	if len(got) != len(want) {
		t.Fatalf("%d weights, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("weight %d differs after the resumed run", i)
		}
	}
}

func TestRestoreModelIntoFreshModel(t *testing.T) {
	ctx, x, y, model := modelFixture(t, 48)
	dir := filepath.Join(t.TempDir(), "ckpt")
	ck := must(cairn.NewModelCheckpoint(ctx, dir))
	defer ck.Close()
	must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(3), silent, cairn.WithCallbacks(ck)))
	want := must(cairn.Read[float32](must(model.Predict(cairn.XY{X: x}))))

	// One expression: the checkpoint and its status are gone before the fresh model is built.
	fresh := newTestModel(t, ctx)
	defer fresh.Close()
	ok(t, cairn.RestoreModel(ctx, fresh, must(cairn.LatestCheckpoint(ctx, dir))))
	if n := must(fresh.CountParams()); n != 0 {
		t.Fatalf("the fresh model is built already (%d params)", n)
	}
	got := must(cairn.Read[float32](must(fresh.Predict(cairn.XY{X: x}))))
	if !slices.Equal(got, want) {
		t.Error("the restored model predicts differently")
	}
	// The optimizer came back too: its step count is the original's.
	origOpt := must(must(model.Get("optimizer")).AsOptimizer())
	freshOpt := must(must(fresh.Get("optimizer")).AsOptimizer())
	must(fresh.TrainOnBatch(x, y)) // creates the slots, restored on creation
	if a, b := must(origOpt.Iterations()), must(freshOpt.Iterations()); b != a+1 {
		t.Errorf("iterations: original %d, restored then one step %d", a, b)
	}
}

func TestModelErrors(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(1))
	x, y := blobs(t, ctx, 8)
	defer closeAll(t, x, y)
	data := cairn.XY{X: x, Y: y}
	bare := must(cairn.NewModel(ctx, nil))
	defer bare.Close()
	if _, err := bare.Fit(data, silent); !errors.Is(err, cairn.ErrFailedPrecondition) {
		t.Errorf("fit before compile: %v", err)
	}
	model := newTestModel(t, ctx)
	defer model.Close()
	for name, check := range map[string]func() error{
		"epochs 0":     func() error { _, err := model.Fit(data, cairn.WithEpochs(0)); return err },
		"batch size 0": func() error { _, err := model.Fit(data, cairn.WithBatchSize(0)); return err },
		"x without y":  func() error { _, err := model.Fit(cairn.XY{X: x}, silent); return err },
		"unknown loss": func() error {
			opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindSgd))
			defer opt.Close()
			return model.Compile(opt, "hinge")
		},
	} {
		if err := check(); !errors.Is(err, cairn.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	short := tensor(t, ctx, []int64{3}, []int32{0, 1, 2})
	defer short.Close()
	if _, err := model.Fit(cairn.XY{X: x, Y: short}, silent); err == nil || !strings.Contains(err.Error(), "cairn_model_fit") {
		t.Errorf("x and y of different sizes: %v", err)
	}
	// The binding's own errors name the Go method.
	if _, err := model.Fit(nil); err == nil || !strings.Contains(err.Error(), "Model.Fit: data is nil") {
		t.Errorf("nil data: %v", err)
	}
	if _, err := model.Predict(data, cairn.WithEpochs(2)); err == nil || !strings.Contains(err.Error(), "WithEpochs does not apply") {
		t.Errorf("an option that does not apply: %v", err)
	}
	closed := must(cairn.NewCallback(&recorder{}))
	closed.Close()
	if _, err := model.Fit(data, cairn.WithCallbacks(closed)); !errors.Is(err, cairn.ErrFailedPrecondition) {
		t.Errorf("a closed callback: %v", err)
	}
	var none *cairn.Model
	if _, err := none.Evaluate(data); err == nil || !strings.Contains(err.Error(), "Model.Evaluate: model is nil") {
		t.Errorf("nil model: %v", err)
	}
	none.StopTraining()
}

// TestCallbackValueLifetime: the Go value behind a NewCallback stays alive while the C callback
// holds it (no other reference), and is released once the callback is freed.
func TestCallbackValueLifetime(t *testing.T) {
	_, x, y, model := modelFixture(t, 6)
	released := make(chan struct{})
	calls := new(int)
	cb := func() *cairn.Callback {
		counter := &countingHooks{calls: calls}
		runtime.SetFinalizer(counter, func(*countingHooks) { close(released) })
		return must(cairn.NewCallback(counter))
	}()
	for range 3 {
		runtime.GC()
	}
	must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(2), silent, cairn.WithCallbacks(cb)))
	if *calls != 2 {
		t.Errorf("the hooks ran %d times, want 2", *calls)
	}
	select {
	case <-released:
		t.Fatal("the callback's Go value was collected while C held it")
	default:
	}
	cb.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-released:
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the callback's Go value is still held after Close")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type countingHooks struct {
	cairn.BaseCallback
	calls *int
}

func (c *countingHooks) OnEpochEnd(*cairn.Model, int64, cairn.Logs) error {
	*c.calls++
	return nil
}

// TestConcurrentModels: models fit on several goroutines at once, each with its Go callback; a
// second Fit of a model that is fitting is FAILED_PRECONDITION.
func TestConcurrentModels(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(1))
	x, y := blobs(t, ctx, 48)
	defer closeAll(t, x, y)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			model := newTestModel(t, ctx)
			defer model.Close()
			calls := new(int)
			cb, err := cairn.NewCallback(&countingHooks{calls: calls})
			if err != nil {
				errs[i] = err
				return
			}
			defer cb.Close()
			if _, errs[i] = model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(3), silent, cairn.WithCallbacks(cb)); errs[i] == nil && *calls != 3 {
				errs[i] = fmt.Errorf("%d epoch ends", *calls)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}

	model := newTestModel(t, ctx)
	defer model.Close()
	var inner error
	reenter := must(cairn.NewCallback(hookFunc{batchEnd: func(m *cairn.Model, batch int64) error {
		_, inner = m.Fit(cairn.XY{X: x, Y: y}, silent)
		return nil
	}}))
	defer reenter.Close()
	must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(1), cairn.WithBatchSize(48), silent, cairn.WithCallbacks(reenter)))
	if !errors.Is(inner, cairn.ErrFailedPrecondition) {
		t.Errorf("a Fit inside a Fit of the same model: %v", inner)
	}
}

// TestModelSaveLoad: a loaded model predicts the same without the code that built it, and trains
// on from the saved optimizer state.
func TestModelSaveLoad(t *testing.T) {
	ctx, x, y, model := modelFixture(t, 24)
	dir := filepath.Join(t.TempDir(), "saved")
	if err := model.Save(dir); !errors.Is(err, cairn.ErrFailedPrecondition) || !strings.Contains(err.Error(), "cairn_model_save") {
		t.Errorf("saving a model never called: %v", err)
	}
	must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithEpochs(2), silent))
	ok(t, model.Save(dir))
	loaded := must(cairn.LoadModel(ctx, dir))
	defer loaded.Close()
	want := must(cairn.Read[float32](must(model.Predict(cairn.XY{X: x}))))
	got := must(cairn.Read[float32](must(loaded.Predict(cairn.XY{X: x}))))
	if !slices.Equal(got, want) {
		t.Error("the loaded model predicts differently")
	}
	// One more epoch each: equal weights only if the optimizer's step and slots came back.
	must(model.Fit(cairn.XY{X: x, Y: y}, cairn.WithShuffle(false), silent))
	must(loaded.Fit(cairn.XY{X: x, Y: y}, cairn.WithShuffle(false), silent))
	want, got = modelWeights(t, model), modelWeights(t, loaded)
	if !slices.Equal(got, want) {
		t.Error("one more epoch after loading gives other weights than the original's")
	}
	_, err := cairn.LoadModel(ctx, filepath.Join(t.TempDir(), "none"))
	if !errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "cairn_model_load") {
		t.Errorf("loading from an empty directory: %v", err)
	}
}

// modelWeights is all of model's weights, in order, flattened.
func modelWeights(t *testing.T, model *cairn.Model) []float32 {
	t.Helper()
	weights := must(model.Weights(false))
	defer closeNow(weights)
	var all []float32
	for _, w := range weights {
		all = append(all, must(cairn.ReadValue[float32](w))...)
	}
	return all
}

// TestLentModel: the model a hook gets is the one being fit, usable during the hook and closed
// after it; Share keeps it.
func TestLentModel(t *testing.T) {
	_, x, y, model := modelFixture(t, 6)
	var lent, kept *cairn.Model
	cb := must(cairn.NewCallback(hookFunc{batchEnd: func(m *cairn.Model, batch int64) error {
		if !m.Same(model) {
			return errors.New("not the model being fit")
		}
		lent, kept = m, must(m.Share())
		m.Close() // does nothing: the handle is lent
		return nil
	}}))
	defer cb.Close()
	must(model.Fit(cairn.XY{X: x, Y: y}, silent, cairn.WithCallbacks(cb)))
	defer kept.Close()
	if _, err := lent.Summary(); !errors.Is(err, cairn.ErrFailedPrecondition) {
		t.Errorf("the lent model after the hook: %v", err)
	}
	if !kept.Same(model) || must(kept.CountParams()) == 0 {
		t.Error("the shared handle is not the trained model")
	}
}
