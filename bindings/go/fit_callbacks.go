package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// The model-callback trampolines in callbacks.go.
extern cairn_status *cairnGoHookTrain(void *user_data, int which, cairn_object *model, cairn_logs *logs);
extern cairn_status *cairnGoHookStep(void *user_data, int which, cairn_object *model, int64_t n, cairn_logs *logs);
extern cairn_status *cairnGoLRSchedule(void *user_data, int64_t epoch, double lr, double *out);
extern void cairnGoHooksRelease(void *user_data);

static cairn_status *cairn_go_on_train_begin(void *u, cairn_object *m) { return cairnGoHookTrain(u, 0, m, NULL); }
static cairn_status *cairn_go_on_train_end(void *u, cairn_object *m, const cairn_logs *l) {
  return cairnGoHookTrain(u, 1, m, (cairn_logs *)l);
}
static cairn_status *cairn_go_on_test_end(void *u, cairn_object *m, const cairn_logs *l) {
  return cairnGoHookTrain(u, 2, m, (cairn_logs *)l);
}
static cairn_status *cairn_go_on_epoch_begin(void *u, cairn_object *m, int64_t e) { return cairnGoHookStep(u, 0, m, e, NULL); }
static cairn_status *cairn_go_on_epoch_end(void *u, cairn_object *m, int64_t e, const cairn_logs *l) {
  return cairnGoHookStep(u, 1, m, e, (cairn_logs *)l);
}
static cairn_status *cairn_go_on_batch_begin(void *u, cairn_object *m, int64_t b) { return cairnGoHookStep(u, 2, m, b, NULL); }
static cairn_status *cairn_go_on_batch_end(void *u, cairn_object *m, int64_t b, const cairn_logs *l) {
  return cairnGoHookStep(u, 3, m, b, (cairn_logs *)l);
}

// A callback calling the Go hooks behind the runtime/cgo handle h (stored only in C memory, as an
// integer); the runtime deletes the handle (release) when the callback is freed.
static cairn_status *cairn_go_callback_create(uintptr_t h, cairn_callback_hooks *hooks, cairn_callback **out) {
  hooks->user_data = (void *)h;
  hooks->on_train_begin = cairn_go_on_train_begin;
  hooks->on_train_end = cairn_go_on_train_end;
  hooks->on_epoch_begin = cairn_go_on_epoch_begin;
  hooks->on_epoch_end = cairn_go_on_epoch_end;
  hooks->on_train_batch_begin = cairn_go_on_batch_begin;
  hooks->on_train_batch_end = cairn_go_on_batch_end;
  hooks->on_test_end = cairn_go_on_test_end;
  hooks->release = cairnGoHooksRelease;
  return cairn_callback_create(hooks, out);
}

static cairn_status *cairn_go_lr_scheduler(uintptr_t h, cairn_callback **out) {
  return cairn_callback_learning_rate_scheduler(cairnGoLRSchedule, (void *)h, cairnGoHooksRelease, out);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// ---- Callbacks of Fit and Evaluate (keras.callbacks) ----

// Callback is a callback of Model.Fit and Model.Evaluate: a built-in one (NewModelCheckpoint,
// NewTensorBoard, NewEarlyStopping, NewLearningRateScheduler, NewReduceLROnPlateau, NewCSVLogger,
// NewBackupAndRestore) or one written in Go (NewCallback). A callback may be passed to several
// calls, one at a time. Close it when done (one that a running Fit uses stays alive until that Fit
// ends); the collector closes one left unreachable.
type Callback struct {
	ptr   *C.cairn_callback
	state *hookState // a NewCallback's hooks; nil for a built-in callback
}

func newCallback(p *C.cairn_callback, state *hookState) *Callback {
	cb := &Callback{ptr: p, state: state}
	runtime.SetFinalizer(cb, (*Callback).Close)
	return cb
}

// Close frees the callback. Closing twice does nothing.
func (cb *Callback) Close() {
	if cb == nil || cb.ptr == nil {
		return
	}
	runtime.SetFinalizer(cb, nil)
	cCallbackFree(cb.ptr)
	cb.ptr = nil
}

func (cb *Callback) handle() *C.cairn_callback {
	if cb == nil {
		return nil
	}
	return cb.ptr
}

// Callbacks are the hooks of a callback written in Go (keras.callbacks.Callback). Embed
// BaseCallback to implement only the hooks you need. Each hook gets the model being trained (a
// handle lent for the call, closed after it: Share it to keep the model) and returns nil, or an error that ends the Fit (or
// Evaluate) with it; a panic in a hook is recovered and ends the Fit as an error. Call
// model.StopTraining() to end the Fit after the current batch. Hooks run on the goroutine that
// called Fit. Epochs and batches count from 0.
type Callbacks interface {
	OnTrainBegin(model *Model) error
	OnTrainEnd(model *Model, logs Logs) error
	OnEpochBegin(model *Model, epoch int64) error
	OnEpochEnd(model *Model, epoch int64, logs Logs) error
	OnTrainBatchBegin(model *Model, batch int64) error
	OnTrainBatchEnd(model *Model, batch int64, logs Logs) error
	OnTestEnd(model *Model, logs Logs) error
}

// BaseCallback implements every hook of Callbacks as doing nothing; embed it in your callback.
type BaseCallback struct{}

// OnTrainBegin does nothing.
func (BaseCallback) OnTrainBegin(*Model) error { return nil }

// OnTrainEnd does nothing.
func (BaseCallback) OnTrainEnd(*Model, Logs) error { return nil }

// OnEpochBegin does nothing.
func (BaseCallback) OnEpochBegin(*Model, int64) error { return nil }

// OnEpochEnd does nothing.
func (BaseCallback) OnEpochEnd(*Model, int64, Logs) error { return nil }

// OnTrainBatchBegin does nothing.
func (BaseCallback) OnTrainBatchBegin(*Model, int64) error { return nil }

// OnTrainBatchEnd does nothing.
func (BaseCallback) OnTrainBatchEnd(*Model, int64, Logs) error { return nil }

// OnTestEnd does nothing.
func (BaseCallback) OnTestEnd(*Model, Logs) error { return nil }

// hookState is what the C callback's handle holds: the Go hooks (or a schedule) and the last
// error one of them returned, which Fit wraps into its error.
type hookState struct {
	hooks    Callbacks
	schedule func(epoch int64, lr float64) (float64, error)
	mu       sync.Mutex
	failure  error
}

func (s *hookState) fail(err error) *C.cairn_status {
	s.mu.Lock()
	s.failure = err
	s.mu.Unlock()
	return hostStatus(err)
}

func (s *hookState) takeFailure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.failure
	s.failure = nil
	return err
}

func hookStateOf(h cgo.Handle) *hookState {
	return h.Value().(*hookState)
}

// NewCallback makes a callback of Fit and Evaluate from Go hooks. The callback holds hooks until
// it is freed (Close, or the collector).
func NewCallback(hooks Callbacks) (*Callback, error) {
	if hooks == nil {
		return nil, handleError("NewCallback", "hooks", true)
	}
	state := &hookState{hooks: hooks}
	h := cgo.NewHandle(state)
	c := cAlloc[C.cairn_callback_hooks]()
	defer C.free(unsafe.Pointer(c))
	if err := cCallbackHooksInit(c, C.uint32_t(unsafe.Sizeof(*c))); err != nil {
		h.Delete()
		return nil, err
	}
	var out *C.cairn_callback
	if err := takeStatus(C.cairn_go_callback_create(C.uintptr_t(h), c, &out)); err != nil {
		h.Delete() // creation failed: release is not called
		return nil, err
	}
	return newCallback(out, state), nil
}

// runHook calls a Go hook with the lent model (no reference of its own: Share it to keep it),
// turning a panic into an error (a panic must not
// unwind into C) and an error into the status that ends the fit.
func (s *hookState) runHook(name string, model *C.cairn_object, call func(*Model) error) (status *C.cairn_status) {
	m := wrapModel(&Object{ptr: model, lent: true})
	defer func() { m.Object.ptr = nil }() // the handle is the runtime's: it is closed after the hook
	defer func() {
		if r := recover(); r != nil {
			if e, isErr := r.(error); isErr {
				status = s.fail(fmt.Errorf("%s panicked: %w", name, e))
			} else {
				status = s.fail(fmt.Errorf("%s panicked: %v", name, r))
			}
		}
	}()
	if err := call(m); err != nil {
		return s.fail(err)
	}
	return nil
}

// NewLearningRateScheduler sets the optimizer's learning rate to schedule(epoch, current rate) at
// each epoch's start (keras LearningRateScheduler). An error (or panic) from schedule ends the Fit
// with it; from the Fit, INVALID_ARGUMENT for a rate that is negative or not finite, and
// FAILED_PRECONDITION for an optimizer with a Schedule.
func NewLearningRateScheduler(schedule func(epoch int64, lr float64) (float64, error)) (*Callback, error) {
	if schedule == nil {
		return nil, handleError("NewLearningRateScheduler", "schedule", true)
	}
	state := &hookState{schedule: schedule}
	h := cgo.NewHandle(state)
	var out *C.cairn_callback
	if err := takeStatus(C.cairn_go_lr_scheduler(C.uintptr_t(h), &out)); err != nil {
		h.Delete()
		return nil, err
	}
	return newCallback(out, state), nil
}

// runSchedule calls the schedule of a NewLearningRateScheduler (cairnGoLRSchedule).
func (s *hookState) runSchedule(epoch int64, lr float64, out *C.double) (status *C.cairn_status) {
	defer func() {
		if r := recover(); r != nil {
			status = s.fail(fmt.Errorf("the learning-rate schedule panicked: %v", r))
		}
	}()
	v, err := s.schedule(epoch, lr)
	if err != nil {
		return s.fail(err)
	}
	*out = C.double(v)
	return nil
}

// ---- Built-in callbacks ----

// CallbackOption configures a built-in callback; each constructor lists those it takes and
// refuses the others with INVALID_ARGUMENT. Options not given keep the C API's defaults.
// WithMaxToKeep (a ManagerOption) is one too, for NewModelCheckpoint.
type CallbackOption interface {
	applyCallback(*callbackConfig)
}

type callbackConfig struct {
	set                                                        []string
	monitor                                                    *string
	mode                                                       *MonitorMode
	maxToKeep, saveFreq, updateFreq, histogramFreq, patience   *int64
	startFromEpoch, cooldown                                   *int64
	profile                                                    *[2]int64
	saveBestOnly, writeGraph, restoreBest, appendRows, deleteC *bool
	minDelta, baseline, factor, minLR                          *float64
	separator                                                  *byte
}

type callbackOption struct {
	name  string
	apply func(*callbackConfig)
}

func (o callbackOption) applyCallback(c *callbackConfig) {
	c.set = append(c.set, o.name)
	o.apply(c)
}

// applyCallback lets WithMaxToKeep set NewModelCheckpoint's max_to_keep; the other manager
// options do not apply to a callback.
func (o ManagerOption) applyCallback(c *callbackConfig) {
	var m managerConfig
	o(&m)
	switch {
	case m.maxToKeep != nil:
		c.set = append(c.set, "WithMaxToKeep")
		c.maxToKeep = m.maxToKeep
	case m.name != nil:
		c.set = append(c.set, "WithCheckpointName")
	default:
		c.set = append(c.set, "WithKeepCheckpointEveryNHours")
	}
}

func cbOption(name string, apply func(*callbackConfig)) CallbackOption {
	return callbackOption{name, apply}
}

// WithMonitor names the log value watched (default "val_loss"): NewModelCheckpoint's
// save-best-only, NewEarlyStopping, NewReduceLROnPlateau.
func WithMonitor(name string) CallbackOption {
	return cbOption("WithMonitor", func(c *callbackConfig) { c.monitor = &name })
}

// WithMonitorMode says which way the monitored value improves (default MonitorModeAuto: max for
// names containing "acc", else min).
func WithMonitorMode(mode MonitorMode) CallbackOption {
	return cbOption("WithMonitorMode", func(c *callbackConfig) { c.mode = &mode })
}

// WithSaveBestOnly makes NewModelCheckpoint save only when the monitored value improves (default
// false).
func WithSaveBestOnly(on bool) CallbackOption {
	return cbOption("WithSaveBestOnly", func(c *callbackConfig) { c.saveBestOnly = &on })
}

// WithSaveFreq makes NewModelCheckpoint or NewBackupAndRestore save every n batches (default 0:
// at each epoch's end).
func WithSaveFreq(n int64) CallbackOption {
	return cbOption("WithSaveFreq", func(c *callbackConfig) { c.saveFreq = &n })
}

// WithUpdateFreq makes NewTensorBoard also write "batch_<name>" values every n batches (default 0:
// per epoch only).
func WithUpdateFreq(n int64) CallbackOption {
	return cbOption("WithUpdateFreq", func(c *callbackConfig) { c.updateFreq = &n })
}

// WithHistogramFreq makes NewTensorBoard write a histogram of every weight every n epochs
// (default 0: none).
func WithHistogramFreq(n int64) CallbackOption {
	return cbOption("WithHistogramFreq", func(c *callbackConfig) { c.histogramFreq = &n })
}

// WithWriteGraph says whether NewTensorBoard writes the compiled training step's graph (default
// true).
func WithWriteGraph(on bool) CallbackOption {
	return cbOption("WithWriteGraph", func(c *callbackConfig) { c.writeGraph = &on })
}

// WithProfileBatches makes NewTensorBoard profile batches first..last of the first epoch (default:
// no profile).
func WithProfileBatches(first, last int64) CallbackOption {
	return cbOption("WithProfileBatches", func(c *callbackConfig) { c.profile = &[2]int64{first, last} })
}

// WithMinDelta sets the smallest change that counts as an improvement (NewEarlyStopping default 0,
// NewReduceLROnPlateau default 0.0001).
func WithMinDelta(d float64) CallbackOption {
	return cbOption("WithMinDelta", func(c *callbackConfig) { c.minDelta = &d })
}

// WithPatience sets the epochs without improvement before NewEarlyStopping stops (default 0) or
// NewReduceLROnPlateau reduces (default 10).
func WithPatience(n int64) CallbackOption {
	return cbOption("WithPatience", func(c *callbackConfig) { c.patience = &n })
}

// WithBaseline makes NewEarlyStopping restart its waiting only past v (default: no baseline).
func WithBaseline(v float64) CallbackOption {
	return cbOption("WithBaseline", func(c *callbackConfig) { c.baseline = &v })
}

// WithRestoreBestWeights makes NewEarlyStopping assign the best epoch's weights back when it
// stops (default false).
func WithRestoreBestWeights(on bool) CallbackOption {
	return cbOption("WithRestoreBestWeights", func(c *callbackConfig) { c.restoreBest = &on })
}

// WithStartFromEpoch makes NewEarlyStopping ignore the epochs before n (default 0).
func WithStartFromEpoch(n int64) CallbackOption {
	return cbOption("WithStartFromEpoch", func(c *callbackConfig) { c.startFromEpoch = &n })
}

// WithFactor sets NewReduceLROnPlateau's factor, in [0, 1) (default 0.1).
func WithFactor(f float64) CallbackOption {
	return cbOption("WithFactor", func(c *callbackConfig) { c.factor = &f })
}

// WithCooldown sets the epochs NewReduceLROnPlateau waits after a reduction (default 0).
func WithCooldown(n int64) CallbackOption {
	return cbOption("WithCooldown", func(c *callbackConfig) { c.cooldown = &n })
}

// WithMinLR sets NewReduceLROnPlateau's lowest learning rate (default 0).
func WithMinLR(lr float64) CallbackOption {
	return cbOption("WithMinLR", func(c *callbackConfig) { c.minLR = &lr })
}

// WithCSVSeparator sets NewCSVLogger's field separator, one ASCII character (default ',').
func WithCSVSeparator(sep byte) CallbackOption {
	return cbOption("WithCSVSeparator", func(c *callbackConfig) { c.separator = &sep })
}

// WithCSVAppend makes NewCSVLogger append rows to an existing file, writing the header only to an
// empty one (default false: a new file).
func WithCSVAppend(on bool) CallbackOption {
	return cbOption("WithCSVAppend", func(c *callbackConfig) { c.appendRows = &on })
}

// WithDeleteCheckpoint says whether NewBackupAndRestore removes its backup when Fit ends normally
// (default true).
func WithDeleteCheckpoint(on bool) CallbackOption {
	return cbOption("WithDeleteCheckpoint", func(c *callbackConfig) { c.deleteC = &on })
}

// callbackSetup gathers options for constructor fn (refusing those not in allowed) and returns
// the options struct T in a's C memory, filled by its C _init function.
func callbackSetup[T any](fn string, a *cArena, init func(*T, C.uint32_t) error, options []CallbackOption,
	allowed ...string) (*callbackConfig, *T, error) {
	c := &callbackConfig{}
	for _, o := range options {
		if o == nil {
			return nil, nil, handleError(fn, "option", true)
		}
		o.applyCallback(c)
	}
	for _, name := range c.set {
		if !slices.Contains(allowed, name) {
			return nil, nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: option %s does not apply (it takes %s)",
				fn, name, strings.Join(allowed, ", ")))
		}
	}
	opts := allocIn[T](a)
	return c, opts, init(opts, C.uint32_t(unsafe.Sizeof(*opts)))
}

func setMode(dst *C.cairn_monitor_mode, v *MonitorMode) {
	if v != nil {
		*dst = C.cairn_monitor_mode(*v)
	}
}

func setFloat(dst *C.double, v *float64) {
	if v != nil {
		*dst = C.double(*v)
	}
}

func callbackOrError(p *C.cairn_callback, err error) (*Callback, error) {
	if err != nil {
		return nil, err
	}
	return newCallback(p, nil), nil
}

// NewModelCheckpoint saves {"model": model} (with its optimizer) through a checkpoint manager in
// directory (keras ModelCheckpoint): files "ckpt-N", N the epoch number from 1, or the global
// step with WithSaveFreq. Restore one with RestoreModel (LatestCheckpoint finds the newest).
// Takes WithMaxToKeep (default 5), WithMonitor, WithMonitorMode, WithSaveBestOnly and
// WithSaveFreq. Errors: INVALID_ARGUMENT for an empty directory; from the Fit, the manager's
// errors (a directory it cannot create).
func NewModelCheckpoint(ctx *Context, directory string, options ...CallbackOption) (*Callback, error) {
	const fn = "NewModelCheckpoint"
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	var a cArena
	defer a.free()
	c, opts, err := callbackSetup(fn, &a, cModelCheckpointOptionsInit, options,
		"WithMaxToKeep", "WithMonitor", "WithMonitorMode", "WithSaveBestOnly", "WithSaveFreq")
	if err != nil {
		return nil, err
	}
	opts.directory = a.str(directory)
	setInt(&opts.max_to_keep, c.maxToKeep)
	if c.monitor != nil {
		opts.monitor = a.str(*c.monitor)
	}
	setMode(&opts.mode, c.mode)
	setBool(&opts.save_best_only, c.saveBestOnly)
	setInt(&opts.save_freq, c.saveFreq)
	var out *C.cairn_callback
	err = cCallbackModelCheckpoint(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	return callbackOrError(out, err)
}

// NewTensorBoard writes TensorBoard event files under logdir (keras TensorBoard): "epoch_loss",
// "epoch_accuracy", ... per epoch in logdir/train (validation values in logdir/validation),
// "epoch_learning_rate", and the training step's graph. Takes WithUpdateFreq, WithHistogramFreq,
// WithWriteGraph and WithProfileBatches. Errors: INVALID_ARGUMENT for an empty logdir or negative
// frequencies.
func NewTensorBoard(logdir string, options ...CallbackOption) (*Callback, error) {
	var a cArena
	defer a.free()
	c, opts, err := callbackSetup("NewTensorBoard", &a, cTensorboardOptionsInit, options,
		"WithUpdateFreq", "WithHistogramFreq", "WithWriteGraph", "WithProfileBatches")
	if err != nil {
		return nil, err
	}
	opts.logdir = a.str(logdir)
	setInt(&opts.update_freq, c.updateFreq)
	setInt(&opts.histogram_freq, c.histogramFreq)
	setBool(&opts.write_graph, c.writeGraph)
	if c.profile != nil {
		setPair(&opts.profile_batch_begin, &opts.profile_batch_end, c.profile)
	}
	var out *C.cairn_callback
	return callbackOrError(out, cCallbackTensorboard(opts, &out))
}

// NewEarlyStopping stops Fit when the monitored value stops improving (keras EarlyStopping).
// Takes WithMonitor (default "val_loss"), WithMinDelta, WithPatience, WithMonitorMode,
// WithBaseline, WithRestoreBestWeights and WithStartFromEpoch. Errors: INVALID_ARGUMENT for a
// negative patience.
func NewEarlyStopping(options ...CallbackOption) (*Callback, error) {
	var a cArena
	defer a.free()
	c, opts, err := callbackSetup("NewEarlyStopping", &a, cEarlyStoppingOptionsInit, options,
		"WithMonitor", "WithMinDelta", "WithPatience", "WithMonitorMode", "WithBaseline",
		"WithRestoreBestWeights", "WithStartFromEpoch")
	if err != nil {
		return nil, err
	}
	if c.monitor != nil {
		opts.monitor = a.str(*c.monitor)
	}
	setFloat(&opts.min_delta, c.minDelta)
	setInt(&opts.patience, c.patience)
	setMode(&opts.mode, c.mode)
	if c.baseline != nil {
		opts.has_baseline = 1
		opts.baseline = C.double(*c.baseline)
	}
	setBool(&opts.restore_best_weights, c.restoreBest)
	setInt(&opts.start_from_epoch, c.startFromEpoch)
	var out *C.cairn_callback
	return callbackOrError(out, cCallbackEarlyStopping(opts, &out))
}

// NewReduceLROnPlateau multiplies the learning rate by a factor after epochs without improvement
// (keras ReduceLROnPlateau). Takes WithMonitor, WithFactor, WithPatience, WithMonitorMode,
// WithMinDelta, WithCooldown and WithMinLR. Errors: INVALID_ARGUMENT for a factor outside [0, 1)
// or a negative patience, cooldown or minimum rate.
func NewReduceLROnPlateau(options ...CallbackOption) (*Callback, error) {
	var a cArena
	defer a.free()
	c, opts, err := callbackSetup("NewReduceLROnPlateau", &a, cReduceLrOptionsInit, options,
		"WithMonitor", "WithFactor", "WithPatience", "WithMonitorMode", "WithMinDelta", "WithCooldown", "WithMinLR")
	if err != nil {
		return nil, err
	}
	if c.monitor != nil {
		opts.monitor = a.str(*c.monitor)
	}
	setFloat(&opts.factor, c.factor)
	setInt(&opts.patience, c.patience)
	setMode(&opts.mode, c.mode)
	setFloat(&opts.min_delta, c.minDelta)
	setInt(&opts.cooldown, c.cooldown)
	setFloat(&opts.min_lr, c.minLR)
	var out *C.cairn_callback
	return callbackOrError(out, cCallbackReduceLrOnPlateau(opts, &out))
}

// NewCSVLogger writes a header "epoch,loss,..." and one row per epoch to path (keras CSVLogger),
// values in the shortest text that reads back as the same float64. Takes WithCSVSeparator and
// WithCSVAppend. Errors: INVALID_ARGUMENT for an empty path; from the Fit, INVALID_ARGUMENT naming
// a file it cannot open.
func NewCSVLogger(path string, options ...CallbackOption) (*Callback, error) {
	var a cArena
	defer a.free()
	c, opts, err := callbackSetup("NewCSVLogger", &a, cCsvLoggerOptionsInit, options, "WithCSVSeparator", "WithCSVAppend")
	if err != nil {
		return nil, err
	}
	opts.path = a.str(path)
	if c.separator != nil {
		opts.separator = C.char(*c.separator)
	}
	setBool(&opts.append, c.appendRows)
	var out *C.cairn_callback
	return callbackOrError(out, cCallbackCsvLogger(opts, &out))
}

// NewBackupAndRestore makes Fit fault-tolerant (keras BackupAndRestore): it backs up the model,
// the optimizer, fit's position (epoch, batch, the iterator's state) and the metrics in directory;
// when a Fit starts and a backup exists (the process died, or a Fit ended with an error), it
// restores it and continues from the batch after the backup, so the final weights equal an
// uninterrupted run's bit for bit (for models without random layers, with the same data, batch
// size and seed). Takes WithSaveFreq (default: each epoch's end) and WithDeleteCheckpoint.
// Errors: INVALID_ARGUMENT for an empty directory or a negative frequency.
func NewBackupAndRestore(ctx *Context, directory string, options ...CallbackOption) (*Callback, error) {
	const fn = "NewBackupAndRestore"
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	var a cArena
	defer a.free()
	c, opts, err := callbackSetup(fn, &a, cBackupOptionsInit, options, "WithSaveFreq", "WithDeleteCheckpoint")
	if err != nil {
		return nil, err
	}
	opts.directory = a.str(directory)
	setInt(&opts.save_freq, c.saveFreq)
	setBool(&opts.delete_checkpoint, c.deleteC)
	var out *C.cairn_callback
	err = cCallbackBackupAndRestore(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	return callbackOrError(out, err)
}
