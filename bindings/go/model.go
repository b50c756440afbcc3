package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"unsafe"
)

// ---- Models (tf.keras.Model): compile, fit, evaluate, predict ----

// Model is a Keras model (keras.Sequential([...]) with compile and fit): a Sequential that can be
// compiled with an optimizer, a loss and metrics, then trained with Fit, scored with Evaluate and
// run with Predict. It is a Sequential and a Layer, so it goes wherever those do: Call, Weights,
// Summary, Add, a checkpoint's children (docs/models.md).
//
// Compiling sets the optimizer as the model's edge "optimizer" (as tf_keras does): a checkpoint
// of {"model": model} saves the optimizer too, and restores it into a fresh model (RestoreModel).
// One Fit, Evaluate, Predict, TrainOnBatch or TestOnBatch at a time per model: a second concurrent
// call is FAILED_PRECONDITION.
type Model struct {
	*Sequential
}

func (m *Model) object() *Object {
	if m == nil || m.Sequential == nil {
		return nil
	}
	return m.Sequential.object()
}

// NewModel creates a model of layers, called in order (keras.Sequential(layers)); the model keeps
// its own references. Takes WithLayerName (default "sequential", "sequential_1", ...).
func NewModel(ctx *Context, layers []*Layer, options ...LayerOption) (*Model, error) {
	cfg, opts, err := layerSetup("NewModel", ctx, cModelOptionsInit, options, "name")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	if err := checkEach("NewModel", "layer", layers); err != nil {
		return nil, err
	}
	cfg.str(&opts.name, cfg.name)
	if len(layers) > 0 {
		hs := allocArrayRaw[*C.cairn_object](len(layers))
		cfg.cstrings = append(cfg.cstrings, unsafe.Pointer(&hs[0]))
		for i, l := range layers {
			hs[i] = handleOf(l)
		}
		opts.layers = &hs[0]
		opts.n_layers = C.size_t(len(layers))
	}
	var out *C.cairn_object
	err = cModelCreate(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(layers)
	if err != nil {
		return nil, err
	}
	return wrapModel(newObject(out)), nil
}

func wrapModel(o *Object) *Model { return &Model{&Sequential{&Layer{o}}} }

// Share returns a second handle to the model, closed independently (a callback hook keeps the
// model it is lent this way).
func (m *Model) Share() (*Model, error) {
	if err := checkOpen("Model.Share", "model", m); err != nil {
		return nil, err
	}
	o, err := m.object().Share()
	if err != nil {
		return nil, err
	}
	return wrapModel(o), nil
}

// CompileOption configures Model.Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	metrics                []string
	fromLogits, runEagerly *bool
}

// WithMetrics sets the metrics computed besides the loss, in order: "accuracy" (sparse
// categorical, or binary after a binary crossentropy), "sparse_categorical_accuracy",
// "binary_accuracy", "mse", "mae".
func WithMetrics(names ...string) CompileOption {
	return func(c *compileConfig) { c.metrics = append(c.metrics, names...) }
}

// WithFromLogits says whether the crossentropy losses take logits (default true) or
// probabilities.
func WithFromLogits(on bool) CompileOption {
	return func(c *compileConfig) { c.fromLogits = &on }
}

// WithRunEagerly runs the training step eagerly instead of as a compiled function (default
// false); the weights come out the same bit for bit.
func WithRunEagerly(on bool) CompileOption {
	return func(c *compileConfig) { c.runEagerly = &on }
}

// Compile configures the model for training with optimizer (the model keeps a reference) and
// loss: "sparse_categorical_crossentropy", "binary_crossentropy", "mean_squared_error" ("mse") or
// "mean_absolute_error" ("mae"). Compiling again replaces the configuration. Errors:
// INVALID_ARGUMENT for an unknown loss or metric, or a metric given twice.
func (m *Model) Compile(optimizer *Optimizer, loss string, options ...CompileOption) error {
	if err := checkOpen("Model.Compile", "model", m, "optimizer", optimizer); err != nil {
		return err
	}
	var cfg compileConfig
	for _, o := range options {
		o(&cfg)
	}
	var a cArena
	defer a.free()
	opts := allocIn[C.cairn_compile_options](&a)
	if err := cCompileOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return err
	}
	opts.optimizer = handleOf(optimizer)
	opts.loss = a.str(loss)
	setBool(&opts.from_logits, cfg.fromLogits)
	setBool(&opts.run_eagerly, cfg.runEagerly)
	if len(cfg.metrics) > 0 {
		names := allocArray[*C.char](&a, len(cfg.metrics))
		for i, name := range cfg.metrics {
			names[i] = a.str(name)
		}
		opts.metrics = &names[0]
		opts.n_metrics = C.size_t(len(names))
	}
	err := cModelCompile(handleOf(m), opts)
	runtime.KeepAlive(m)
	runtime.KeepAlive(optimizer)
	return err
}

// ModelData is what Fit, Evaluate and Predict take: a *Dataset whose elements are (x, y) (more
// components ignored; Predict uses x only), batched already, or XY, tensors sliced into batches
// along their first dimension.
type ModelData interface {
	fillModelData(fn, what string, d *C.cairn_model_data) error
}

func (ds *Dataset) fillModelData(fn, what string, d *C.cairn_model_data) error {
	if err := checkOpen(fn, what, ds); err != nil {
		return err
	}
	d.dataset = ds.handle()
	return nil
}

// XY is in-memory data for Fit, Evaluate and Predict: inputs X and targets Y (Predict needs no
// Y), their first dimension the samples, batched by WithBatchSize and, in Fit, shuffled each epoch
// (WithShuffle, WithShuffleSeed).
type XY struct {
	X, Y *Tensor
}

func (xy XY) fillModelData(fn, what string, d *C.cairn_model_data) error {
	if err := checkOpen(fn, what+" X", xy.X); err != nil {
		return err
	}
	d.x = xy.X.handle()
	if xy.Y != nil {
		if err := checkOpen(fn, what+" Y", xy.Y); err != nil {
			return err
		}
		d.y = xy.Y.handle()
	}
	return nil
}

// modelData is data as a cairn_model_data in a's C memory.
func modelData(fn, what string, data ModelData, a *cArena) (*C.cairn_model_data, error) {
	if data == nil {
		return nil, handleError(fn, what, true)
	}
	d := allocIn[C.cairn_model_data](a)
	if err := cModelDataInit(d, C.uint32_t(unsafe.Sizeof(*d))); err != nil {
		return nil, err
	}
	return d, data.fillModelData(fn, what, d)
}

// ModelOption configures Fit, Evaluate or Predict; each lists the options it takes and refuses
// the others with INVALID_ARGUMENT. Options not given keep the C API's defaults.
type ModelOption func(*modelConfig)

type modelConfig struct {
	set                                                         []string
	epochs, batchSize, initialEpoch, stepsPerEpoch, seed, steps *int64
	validationBatchSize, validationFreq                         *int64
	shuffle                                                     *bool
	verbose                                                     *Verbose
	validation                                                  ModelData
	callbacks                                                   []*Callback
}

func modelOption(name string, apply func(*modelConfig)) ModelOption {
	return func(c *modelConfig) {
		c.set = append(c.set, name)
		apply(c)
	}
}

// WithEpochs sets the number of epochs Fit runs to (default 1; with WithInitialEpoch, the epoch
// to end before).
func WithEpochs(n int64) ModelOption {
	return modelOption("WithEpochs", func(c *modelConfig) { c.epochs = &n })
}

// WithBatchSize sets the batch size of XY data (default 32; a Dataset is batched already).
func WithBatchSize(n int64) ModelOption {
	return modelOption("WithBatchSize", func(c *modelConfig) { c.batchSize = &n })
}

// WithInitialEpoch sets the epoch Fit starts at (default 0), to resume.
func WithInitialEpoch(n int64) ModelOption {
	return modelOption("WithInitialEpoch", func(c *modelConfig) { c.initialEpoch = &n })
}

// WithStepsPerEpoch makes each epoch n batches from one iterator that runs on across epochs (a
// repeated dataset); default: one pass over the data per epoch.
func WithStepsPerEpoch(n int64) ModelOption {
	return modelOption("WithStepsPerEpoch", func(c *modelConfig) { c.stepsPerEpoch = &n })
}

// WithShuffle says whether Fit reshuffles XY data each epoch (default true).
func WithShuffle(on bool) ModelOption {
	return modelOption("WithShuffle", func(c *modelConfig) { c.shuffle = &on })
}

// WithShuffleSeed sets the seed of Fit's shuffle of XY data (default 0).
func WithShuffleSeed(seed int64) ModelOption {
	return modelOption("WithShuffleSeed", func(c *modelConfig) { c.seed = &seed })
}

// WithValidationData validates on data after every WithValidationFreq-th epoch; its values join
// the logs as "val_loss", "val_...". Default: no validation.
func WithValidationData(data ModelData) ModelOption {
	return modelOption("WithValidationData", func(c *modelConfig) { c.validation = data })
}

// WithValidationBatchSize sets the batch size of XY validation data (default: the batch size).
func WithValidationBatchSize(n int64) ModelOption {
	return modelOption("WithValidationBatchSize", func(c *modelConfig) { c.validationBatchSize = &n })
}

// WithValidationFreq validates after every n-th epoch (default 1).
func WithValidationFreq(n int64) ModelOption {
	return modelOption("WithValidationFreq", func(c *modelConfig) { c.validationFreq = &n })
}

// WithVerbose sets how Fit reports progress (default VerboseAuto: a bar on a terminal, else one
// line per epoch).
func WithVerbose(v Verbose) ModelOption {
	return modelOption("WithVerbose", func(c *modelConfig) { c.verbose = &v })
}

// WithCallbacks adds callbacks, called in order; they are borrowed for the call.
func WithCallbacks(callbacks ...*Callback) ModelOption {
	return modelOption("WithCallbacks", func(c *modelConfig) { c.callbacks = append(c.callbacks, callbacks...) })
}

// WithSteps limits Evaluate or Predict to n batches (default: until the data ends).
func WithSteps(n int64) ModelOption {
	return modelOption("WithSteps", func(c *modelConfig) { c.steps = &n })
}

func newModelConfig(fn string, options []ModelOption, allowed ...string) (*modelConfig, error) {
	c := &modelConfig{}
	for _, o := range options {
		o(c)
	}
	for _, name := range c.set {
		if !slices.Contains(allowed, name) {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: option %s does not apply (it takes %s)",
				fn, name, strings.Join(allowed, ", ")))
		}
	}
	return c, checkEach(fn, "callback", c.callbacks)
}

func setInt(dst *C.int64_t, v *int64) {
	if v != nil {
		*dst = C.int64_t(*v)
	}
}

// callbackArray is the callbacks as a C array in a; nil for none.
func callbackArray(a *cArena, cbs []*Callback) (**C.cairn_callback, C.size_t) {
	if len(cbs) == 0 {
		return nil, 0
	}
	arr := allocArray[*C.cairn_callback](a, len(cbs))
	for i, cb := range cbs {
		arr[i] = cb.ptr
	}
	return &arr[0], C.size_t(len(cbs))
}

// modelCall is the start of Fit, Evaluate and Predict (fn): the options (refusing those not in
// allowed), the model's check, then the data and the options struct T (filled by its C _init
// function) in a's C memory.
func modelCall[T any](fn string, m *Model, data ModelData, options []ModelOption, a *cArena,
	init func(*T, C.uint32_t) error, allowed ...string) (*modelConfig, *C.cairn_model_data, *T, error) {
	cfg, err := newModelConfig(fn, options, allowed...)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkOpen(fn, "model", m); err != nil {
		return nil, nil, nil, err
	}
	d, err := modelData(fn, "data", data, a)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := allocIn[T](a)
	return cfg, d, opts, init(opts, C.uint32_t(unsafe.Sizeof(*opts)))
}

// Fit trains the model (keras Model.fit) on data and returns the history. It builds the model
// on the first batch if needed. Takes WithEpochs, WithBatchSize, WithInitialEpoch,
// WithStepsPerEpoch, WithShuffle, WithShuffleSeed, WithValidationData, WithValidationBatchSize,
// WithValidationFreq, WithVerbose and WithCallbacks.
//
// Errors: FAILED_PRECONDITION for a model not compiled or busy; INVALID_ARGUMENT for bad options
// or data; a step's error; a callback's error, which ends the fit (the error returned wraps the Go
// error a Callbacks hook returned, so errors.Is and errors.As see it). On an error the weights keep
// the updates of the steps that ran.
func (m *Model) Fit(data ModelData, options ...ModelOption) (*History, error) {
	var a cArena
	defer a.free()
	const fn = "Model.Fit"
	cfg, d, opts, err := modelCall(fn, m, data, options, &a, cFitOptionsInit, "WithEpochs", "WithBatchSize",
		"WithInitialEpoch", "WithStepsPerEpoch", "WithShuffle", "WithShuffleSeed", "WithValidationData",
		"WithValidationBatchSize", "WithValidationFreq", "WithVerbose", "WithCallbacks")
	if err != nil {
		return nil, err
	}
	setInt(&opts.epochs, cfg.epochs)
	setInt(&opts.batch_size, cfg.batchSize)
	setInt(&opts.initial_epoch, cfg.initialEpoch)
	setInt(&opts.steps_per_epoch, cfg.stepsPerEpoch)
	setBool(&opts.shuffle, cfg.shuffle)
	setInt(&opts.seed, cfg.seed)
	setInt(&opts.validation_batch_size, cfg.validationBatchSize)
	setInt(&opts.validation_freq, cfg.validationFreq)
	if cfg.verbose != nil {
		opts.verbose = C.cairn_verbose(*cfg.verbose)
	}
	if cfg.validation != nil {
		if opts.validation, err = modelData(fn, "validation data", cfg.validation, &a); err != nil {
			return nil, err
		}
	}
	opts.callbacks, opts.n_callbacks = callbackArray(&a, cfg.callbacks)
	var out *C.cairn_history
	err = cModelFit(handleOf(m), d, opts, &out)
	runtime.KeepAlive(m)
	runtime.KeepAlive(data)
	runtime.KeepAlive(cfg)
	if err = withHookFailure(err, cfg.callbacks); err != nil {
		cHistoryFree(out)
		return nil, err
	}
	defer cHistoryFree(out)
	return historyOf(out), nil
}

// Evaluate is the loss and metrics over data in inference mode (keras Model.evaluate). Takes
// WithBatchSize, WithSteps and WithCallbacks (their OnTestEnd hooks run). Errors: as Fit.
func (m *Model) Evaluate(data ModelData, options ...ModelOption) (Logs, error) {
	var a cArena
	defer a.free()
	cfg, d, opts, err := modelCall("Model.Evaluate", m, data, options, &a, cEvaluateOptionsInit,
		"WithBatchSize", "WithSteps", "WithCallbacks")
	if err != nil {
		return Logs{}, err
	}
	setInt(&opts.batch_size, cfg.batchSize)
	setInt(&opts.steps, cfg.steps)
	opts.callbacks, opts.n_callbacks = callbackArray(&a, cfg.callbacks)
	var out *C.cairn_logs
	err = cModelEvaluate(handleOf(m), d, opts, &out)
	runtime.KeepAlive(m)
	runtime.KeepAlive(data)
	runtime.KeepAlive(cfg)
	return takeLogs(out, withHookFailure(err, cfg.callbacks))
}

// Predict is the model's outputs for every batch of data's x, concatenated along the first
// dimension (keras Model.predict); it needs no Compile. Takes WithBatchSize and WithSteps. The
// tensor follows the binding's rules (a Scope open on this goroutine frees it; Close it or leave
// it to the collector).
func (m *Model) Predict(data ModelData, options ...ModelOption) (*Tensor, error) {
	var a cArena
	defer a.free()
	cfg, d, opts, err := modelCall("Model.Predict", m, data, options, &a, cPredictOptionsInit, "WithBatchSize", "WithSteps")
	if err != nil {
		return nil, err
	}
	setInt(&opts.batch_size, cfg.batchSize)
	setInt(&opts.steps, cfg.steps)
	var out *C.cairn_tensor
	err = cModelPredict(handleOf(m), d, opts, &out)
	runtime.KeepAlive(m)
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// TrainOnBatch runs one training step on the batch (x, y) and returns that batch's loss and
// metrics. Errors: as Fit.
func (m *Model) TrainOnBatch(x, y *Tensor) (Logs, error) {
	return m.onBatch("Model.TrainOnBatch", x, y, cModelTrainOnBatch)
}

// TestOnBatch is the loss and metrics of the batch (x, y), without training. Errors: as Fit.
func (m *Model) TestOnBatch(x, y *Tensor) (Logs, error) {
	return m.onBatch("Model.TestOnBatch", x, y, cModelTestOnBatch)
}

func (m *Model) onBatch(fn string, x, y *Tensor,
	call func(*C.cairn_object, *C.cairn_tensor, *C.cairn_tensor, **C.cairn_logs) error) (Logs, error) {
	if err := checkOpen(fn, "model", m, "x", x, "y", y); err != nil {
		return Logs{}, err
	}
	var out *C.cairn_logs
	err := call(handleOf(m), x.handle(), y.handle(), &out)
	runtime.KeepAlive(m)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	return takeLogs(out, err)
}

// StopTraining asks a running Fit to stop after the current batch (keras model.stop_training =
// True); for callbacks. Does nothing for a nil or closed model.
func (m *Model) StopTraining() {
	cModelStopTraining(handleOf(m))
	runtime.KeepAlive(m)
}

// Save writes the whole model into directory (keras model.save): model.json (the layers' configs
// and the compile configuration), weights.ckpt (a checkpoint of {"model": model}: weights,
// optimizer, slots) and serving.cairnfn (the forward pass at the built input shape with any batch
// size, for LoadFunction without the code that built the model). A failed save leaves an earlier
// one whole. Errors: FAILED_PRECONDITION for a model never called; UNIMPLEMENTED for an optimizer
// with a Schedule; I/O errors naming the path.
func (m *Model) Save(directory string) error {
	if err := checkOpen("Model.Save", "model", m); err != nil {
		return err
	}
	cdir := C.CString(directory)
	defer C.free(unsafe.Pointer(cdir))
	err := cModelSave(handleOf(m), cdir)
	runtime.KeepAlive(m)
	return err
}

// LoadModel loads a model Model.Save wrote (keras.models.load_model): built, compiled as it was,
// with its weights and the optimizer's step and slots, ready to predict or train on. Errors:
// NOT_FOUND for a directory without a saved model; INVALID_ARGUMENT naming the file and field of
// a config it cannot read; the checkpoint's errors for damaged weights.
func LoadModel(ctx *Context, directory string) (*Model, error) {
	if err := checkOpen("LoadModel", "context", ctx); err != nil {
		return nil, err
	}
	cdir := C.CString(directory)
	defer C.free(unsafe.Pointer(cdir))
	var out *C.cairn_object
	err := cModelLoad(ctx.handle(), cdir, &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return wrapModel(newObject(out)), nil
}

// RestoreModel restores the checkpoint at path (as ModelCheckpoint writes it: the root's child
// "model", with its optimizer) into model: TensorFlow's one-expression
// Checkpoint(model=model).restore(path).expect_partial(). The checkpoint and its status are
// dropped before RestoreModel returns, and nothing is lost: values of weights and optimizer slots
// that do not exist yet (a fresh model, built by its first Fit, Predict or Call) wait on the model
// and are assigned when they appear. Errors: as Checkpoint.Restore.
func RestoreModel(ctx *Context, model Tracked, path string) error {
	ckpt, err := NewCheckpoint(ctx, map[string]Tracked{"model": model})
	if err != nil {
		return err
	}
	defer ckpt.Close()
	status, err := ckpt.Restore(path)
	if err != nil {
		return err
	}
	status.ExpectPartial()
	status.Close()
	return nil
}

// LatestCheckpoint is the path of the newest checkpoint a ModelCheckpoint (or a CheckpointManager)
// keeps in directory, or "" when there is none (tf.train.latest_checkpoint).
func LatestCheckpoint(ctx *Context, directory string) (string, error) {
	root, err := NewTrackable(ctx)
	if err != nil {
		return "", err
	}
	defer root.Close()
	ckpt, err := NewCheckpoint(ctx, map[string]Tracked{"root": root})
	if err != nil {
		return "", err
	}
	defer ckpt.Close()
	manager, err := NewCheckpointManager(ckpt, directory)
	if err != nil {
		return "", err
	}
	defer manager.Close()
	return manager.Latest(), nil
}

// ---- Logs and History ----

// Logs are the named values fit reports (keras logs): "loss", then each compiled metric, then
// after validation "val_loss", "val_...", in that order. A Go copy: nothing to close.
type Logs struct {
	Names  []string
	Values []float64
}

// Get is the value named name. Errors: NOT_FOUND naming it and listing those present.
func (l Logs) Get(name string) (float64, error) {
	if i := slices.Index(l.Names, name); i >= 0 {
		return l.Values[i], nil
	}
	return math.NaN(), newError(CodeNotFound, fmt.Sprintf("Logs.Get: no value named %q (the logs have: %s)",
		name, strings.Join(l.Names, ", ")))
}

// Map is the values by name.
func (l Logs) Map() map[string]float64 {
	m := make(map[string]float64, len(l.Names))
	for i, name := range l.Names {
		m[name] = l.Values[i]
	}
	return m
}

// String is "loss: 0.1234 - accuracy: 0.9500", Keras' progress-line format.
func (l Logs) String() string {
	parts := make([]string, len(l.Names))
	for i, name := range l.Names {
		parts[i] = fmt.Sprintf("%s: %.4f", name, l.Values[i])
	}
	return strings.Join(parts, " - ")
}

// logsOf copies C logs (borrowed or owned) into Go.
func logsOf(p *C.cairn_logs) Logs {
	n := int(cLogsSize(p))
	l := Logs{Names: make([]string, n), Values: make([]float64, n)}
	for i := range n {
		l.Names[i] = C.GoString(cLogsName(p, C.size_t(i)))
		l.Values[i] = float64(cLogsValue(p, C.size_t(i)))
	}
	return l
}

func takeLogs(p *C.cairn_logs, err error) (Logs, error) {
	defer cLogsFree(p)
	if err != nil {
		return Logs{}, err
	}
	return logsOf(p), nil
}

// History is what Fit returns (keras History): the epochs run and, per log name, one value per
// epoch that had it (validation names only for validated epochs).
type History struct {
	Epochs []int64              // the number of each epoch run (from 0)
	Names  []string             // the log names, in log order
	Values map[string][]float64 // per name, one value per epoch that had it
}

func historyOf(p *C.cairn_history) *History {
	h := &History{Values: map[string][]float64{}}
	for i := range int(cHistoryNumEpochs(p)) {
		h.Epochs = append(h.Epochs, int64(cHistoryEpoch(p, C.size_t(i))))
	}
	for i := range int(cHistoryNumNames(p)) {
		name := C.GoString(cHistoryName(p, C.size_t(i)))
		h.Names = append(h.Names, name)
		cname := C.CString(name)
		var n C.size_t
		values := cHistoryValues(p, cname, &n)
		C.free(unsafe.Pointer(cname))
		vs := make([]float64, int(n))
		for j, v := range unsafe.Slice((*C.double)(values), int(n)) {
			vs[j] = float64(v)
		}
		h.Values[name] = vs
	}
	return h
}

// ---- C memory for option structs ----

// cArena holds C allocations (option structs, arrays and strings that point at each other, which
// Go memory may not) freed together.
type cArena struct {
	ptrs []unsafe.Pointer
}

func allocIn[T any](a *cArena) *T {
	p := cAlloc[T]()
	a.ptrs = append(a.ptrs, unsafe.Pointer(p))
	return p
}

func allocArray[T any](a *cArena, n int) []T {
	s := allocArrayRaw[T](n)
	a.ptrs = append(a.ptrs, unsafe.Pointer(&s[0]))
	return s
}

// allocArrayRaw is n zeroed Ts in C memory (n > 0); free &s[0] with C.free.
func allocArrayRaw[T any](n int) []T {
	var zero T
	return unsafe.Slice((*T)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(zero)))), n)
}

// str is s in C memory; NULL for "".
func (a *cArena) str(s string) *C.char {
	if s == "" {
		return nil
	}
	p := C.CString(s)
	a.ptrs = append(a.ptrs, unsafe.Pointer(p))
	return p
}

func (a *cArena) free() {
	for _, p := range a.ptrs {
		C.free(p)
	}
	a.ptrs = nil
}

// hookError is a fit's error that a Go hook caused: the C API's error (which says which hook)
// wrapping the hook's own error.
type hookError struct {
	api  error
	hook error
}

func (e *hookError) Error() string   { return e.api.Error() }
func (e *hookError) Unwrap() []error { return []error{e.api, e.hook} }

// withHookFailure is err, wrapping the Go error of the Callbacks hook that caused it, if any.
func withHookFailure(err error, cbs []*Callback) error {
	var cause error
	for _, cb := range cbs {
		if cb.state != nil {
			if e := cb.state.takeFailure(); e != nil && cause == nil {
				cause = e
			}
		}
	}
	if err == nil || cause == nil {
		return err
	}
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		return err
	}
	return &hookError{api: err, hook: cause}
}
