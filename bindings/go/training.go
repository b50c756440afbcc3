package cairn

/*
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// The calling thread, as an integer: GradientTape.Close compares it with the creating thread.
static uintptr_t cairn_go_thread_id(void) { return (uintptr_t)pthread_self(); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// ---- Gradient tape (tf.GradientTape) ----

// GradientTape records the ops its goroutine runs on watched tensors and on trainable variables
// read while it is recording, and computes gradients from them.
//
// The library records only the OS thread that created the tape, so NewGradientTape locks the
// calling goroutine to its thread (runtime.LockOSThread) and Close unlocks it: create, use and
// close a tape on one goroutine, and close it (defer tape.Close()) before that goroutine goes on
// to unrelated work. Ops run by other goroutines are not recorded.
type GradientTape struct {
	ptr    *C.cairn_tape
	thread C.uintptr_t // the thread locked for the tape; 0 once unlocked
}

// TapeOption sets a field of cairn_tape_options; unset fields keep the defaults.
type TapeOption func(*C.cairn_tape_options)

// WithPersistent allows several Gradient calls on one tape (default false: one call).
func WithPersistent(on bool) TapeOption {
	return func(o *C.cairn_tape_options) { o.persistent = cBool(on) }
}

// WithWatchAccessedVariables says whether trainable variables are watched when they are read
// (default true); without it only Watch and WatchVariable choose what is recorded.
func WithWatchAccessedVariables(on bool) TapeOption {
	return func(o *C.cairn_tape_options) { o.watch_accessed_variables = cBool(on) }
}

// NewGradientTape starts a tape on the calling goroutine, which it locks to its OS thread until
// Close. Close it when done.
func NewGradientTape(ctx *Context, options ...TapeOption) (*GradientTape, error) {
	if err := checkOpen("NewGradientTape", "context", ctx); err != nil {
		return nil, err
	}
	opts := (*C.cairn_tape_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_tape_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cTapeOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	for _, set := range options {
		set(opts)
	}
	runtime.LockOSThread()
	var out *C.cairn_tape
	err := cTapeCreate(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	tp := &GradientTape{ptr: out, thread: C.cairn_go_thread_id()}
	runtime.SetFinalizer(tp, (*GradientTape).Close)
	return tp, nil
}

// Close stops recording, frees the tape and unlocks the goroutine from its thread. Called from
// another goroutine (or by the finalizer) it frees the tape but cannot unlock the creating
// goroutine, which then stays locked until it exits. Closing twice does nothing.
func (tp *GradientTape) Close() {
	if tp == nil || tp.ptr == nil {
		return
	}
	runtime.SetFinalizer(tp, nil)
	cTapeFree(tp.ptr)
	tp.ptr = nil
	// While the creating goroutine is locked, no other goroutine runs on its thread, so being on
	// that thread means being that goroutine.
	if tp.thread != 0 && C.cairn_go_thread_id() == tp.thread {
		tp.thread = 0
		runtime.UnlockOSThread()
	}
}

func (tp *GradientTape) handle() *C.cairn_tape {
	if tp == nil {
		return nil
	}
	return tp.ptr
}

// Watch records the ops run on t (a floating dtype) from now on.
func (tp *GradientTape) Watch(t *Tensor) error {
	if err := checkOpen("GradientTape.Watch", "tape", tp, "tensor", t); err != nil {
		return err
	}
	err := cTapeWatch(tp.handle(), t.handle())
	runtime.KeepAlive(tp)
	runtime.KeepAlive(t)
	return err
}

// WatchVariable records the reads of v (also a non-trainable one) from now on.
func (tp *GradientTape) WatchVariable(v *Variable) error {
	if err := checkOpen("GradientTape.WatchVariable", "tape", tp, "variable", v); err != nil {
		return err
	}
	err := cTapeWatchVariable(tp.handle(), handleOf(v))
	runtime.KeepAlive(tp)
	runtime.KeepAlive(v)
	return err
}

// StopRecording pauses recording (tf.GradientTape.stop_recording) until ResumeRecording.
func (tp *GradientTape) StopRecording() {
	cTapeStopRecording(tp.handle())
	runtime.KeepAlive(tp)
}

// ResumeRecording resumes recording after StopRecording.
func (tp *GradientTape) ResumeRecording() {
	cTapeResumeRecording(tp.handle())
	runtime.KeepAlive(tp)
}

// GradientOption configures Gradient and GradientVariables.
type GradientOption func(*gradientConfig)

type gradientConfig struct {
	outputGradient *Tensor
	unconnected    Unconnected
}

// WithOutputGradient weights the target: the gradient is that of sum(target * g) (default: ones).
func WithOutputGradient(g *Tensor) GradientOption {
	return func(c *gradientConfig) { c.outputGradient = g }
}

// WithUnconnected chooses the answer for a source the target does not depend on: UnconnectedNone
// (the default) gives a nil *Tensor, UnconnectedZero zeros of the source's shape.
func WithUnconnected(u Unconnected) GradientOption {
	return func(c *gradientConfig) { c.unconnected = u }
}

// Gradient is d(target)/d(source) for each source (a non-scalar target is summed). A
// non-persistent tape allows one call. Entries are nil for unconnected sources under
// UnconnectedNone; close the others.
func (tp *GradientTape) Gradient(target *Tensor, sources []*Tensor, options ...GradientOption) ([]*Tensor, error) {
	if err := checkOpen("GradientTape.Gradient", "tape", tp, "target", target); err != nil {
		return nil, err
	}
	if err := checkEach("GradientTape.Gradient", "source", sources); err != nil {
		return nil, err
	}
	handles := make([]*C.cairn_tensor, len(sources)) // Go memory holding only C pointers
	for i, s := range sources {
		handles[i] = s.handle()
	}
	return tp.gradient(options, len(sources), func(g *C.cairn_tensor, u C.cairn_unconnected, out **C.cairn_tensor) error {
		err := cTapeGradient(tp.handle(), target.handle(), unsafe.SliceData(handles), C.size_t(len(handles)), g, u, out)
		runtime.KeepAlive(target)
		runtime.KeepAlive(sources)
		return err
	})
}

// GradientVariables is Gradient for variables: the sum over every recorded read of each.
func (tp *GradientTape) GradientVariables(target *Tensor, vars []*Variable, options ...GradientOption) ([]*Tensor, error) {
	if err := checkOpen("GradientTape.GradientVariables", "tape", tp, "target", target); err != nil {
		return nil, err
	}
	if err := checkEach("GradientTape.GradientVariables", "variable", vars); err != nil {
		return nil, err
	}
	handles := objectHandles(vars)
	return tp.gradient(options, len(vars), func(g *C.cairn_tensor, u C.cairn_unconnected, out **C.cairn_tensor) error {
		err := cTapeGradientVariables(tp.handle(), target.handle(), unsafe.SliceData(handles), C.size_t(len(handles)), g, u, out)
		runtime.KeepAlive(target)
		runtime.KeepAlive(vars)
		return err
	})
}

func (tp *GradientTape) gradient(options []GradientOption, n int,
	call func(*C.cairn_tensor, C.cairn_unconnected, **C.cairn_tensor) error) ([]*Tensor, error) {
	cfg := gradientConfig{unconnected: UnconnectedNone}
	for _, set := range options {
		set(&cfg)
	}
	if g := cfg.outputGradient; g != nil && g.ptr == nil {
		return nil, handleError("GradientTape.Gradient", "output gradient (WithOutputGradient)", false)
	}
	grads := make([]*C.cairn_tensor, n+1) // one spare slot so the pointer is never nil
	err := call(cfg.outputGradient.handle(), C.cairn_unconnected(cfg.unconnected), unsafe.SliceData(grads))
	runtime.KeepAlive(tp)
	runtime.KeepAlive(cfg.outputGradient)
	if err != nil {
		return nil, err
	}
	out := make([]*Tensor, n)
	for i, g := range grads[:n] {
		if g != nil {
			out[i] = newTensor(g)
		}
	}
	return out, nil
}

// objectHandles is the C handles of vars, in Go memory that holds only C pointers.
func objectHandles(vars []*Variable) []*C.cairn_object {
	handles := make([]*C.cairn_object, len(vars))
	for i, v := range vars {
		handles[i] = handleOf(v)
	}
	return handles
}

// ---- Learning-rate schedules ----

// Schedule is a learning-rate schedule (a tracked object), given to NewOptimizer by WithSchedule.
type Schedule struct {
	*Object
}

func (s *Schedule) object() *Object {
	if s == nil {
		return nil
	}
	return s.Object
}

// NewExponentialDecay is lr0 * rate^(step / decaySteps), with a floored exponent when staircase.
func NewExponentialDecay(ctx *Context, initialLearningRate float64, decaySteps int64, decayRate float64,
	staircase bool) (*Schedule, error) {
	if err := checkOpen("NewExponentialDecay", "context", ctx); err != nil {
		return nil, err
	}
	opts := cAlloc[C.cairn_exponential_decay_options]()
	defer C.free(unsafe.Pointer(opts))
	if err := cExponentialDecayOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	opts.initial_learning_rate, opts.decay_steps = C.double(initialLearningRate), C.int64_t(decaySteps)
	opts.decay_rate, opts.staircase = C.double(decayRate), cBool(staircase)
	var out *C.cairn_object
	err := cScheduleExponentialDecay(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return &Schedule{newObject(out)}, nil
}

// NewCosineDecay is lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decaySteps) / decaySteps)) + alpha).
func NewCosineDecay(ctx *Context, initialLearningRate float64, decaySteps int64, alpha float64) (*Schedule, error) {
	if err := checkOpen("NewCosineDecay", "context", ctx); err != nil {
		return nil, err
	}
	opts := cAlloc[C.cairn_cosine_decay_options]()
	defer C.free(unsafe.Pointer(opts))
	if err := cCosineDecayOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	opts.initial_learning_rate, opts.decay_steps = C.double(initialLearningRate), C.int64_t(decaySteps)
	opts.alpha = C.double(alpha)
	var out *C.cairn_object
	err := cScheduleCosineDecay(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return &Schedule{newObject(out)}, nil
}

// ---- Optimizers (tf.keras.optimizers) ----

// Optimizer is a tracked object (kind OPTIMIZER): put it in a checkpoint to save its step
// counter, hyperparameters and slot variables. A slot is saved only with its variable, and a
// restored slot comes back when the next step creates it.
type Optimizer struct {
	*Object
}

func (o *Optimizer) object() *Object {
	if o == nil {
		return nil
	}
	return o.Object
}

// OptimizerOption configures NewOptimizer; unset fields keep the C defaults
// (CAIRN_OPTIMIZER_OPTIONS_INIT). Options a kind has no use for are ignored.
type OptimizerOption interface {
	applyOptimizer(*optimizerConfig)
}

type optimizerConfig struct {
	opts     *C.cairn_optimizer_options
	schedule *Schedule
}

type optimizerOption func(*optimizerConfig)

func (f optimizerOption) applyOptimizer(c *optimizerConfig) { f(c) }

func optimizerField(set func(*C.cairn_optimizer_options)) OptimizerOption {
	return optimizerOption(func(c *optimizerConfig) { set(c.opts) })
}

// WithLearningRate sets a constant learning rate (default 0.01).
func WithLearningRate(lr float64) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.learning_rate = C.double(lr) })
}

// WithSchedule makes the learning rate follow s (the optimizer keeps it); WithLearningRate is
// then ignored and SetLearningRate fails.
func WithSchedule(s *Schedule) OptimizerOption {
	return optimizerOption(func(c *optimizerConfig) { c.schedule = s })
}

// WithNesterov uses Nesterov momentum (SGD; default false).
func WithNesterov(on bool) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.nesterov = cBool(on) })
}

// WithBeta1 sets Adam's first-moment decay (default 0.9).
func WithBeta1(b float64) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.beta_1 = C.double(b) })
}

// WithBeta2 sets Adam's second-moment decay (default 0.999).
func WithBeta2(b float64) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.beta_2 = C.double(b) })
}

// WithWeightDecay sets AdamW's decoupled weight decay (default 0.004).
func WithWeightDecay(wd float64) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.weight_decay = C.double(wd) })
}

// WithRho sets RMSprop's decay (default 0.9).
func WithRho(rho float64) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.rho = C.double(rho) })
}

// WithCentered makes RMSprop centered (default false).
func WithCentered(on bool) OptimizerOption {
	return optimizerField(func(o *C.cairn_optimizer_options) { o.centered = cBool(on) })
}

// SharedOption is an option both optimizers and normalisation layers take: WithMomentum and
// WithEpsilon.
type SharedOption struct {
	name  string
	value float64
}

// WithMomentum sets an optimizer's momentum (SGD, RMSprop; default 0) or BatchNorm's moving-average
// momentum (default 0.99).
func WithMomentum(m float64) SharedOption { return SharedOption{"momentum", m} }

// WithEpsilon sets an optimizer's epsilon (default 1e-7) or a normalisation layer's (default 1e-3).
func WithEpsilon(eps float64) SharedOption { return SharedOption{"epsilon", eps} }

func (s SharedOption) applyOptimizer(c *optimizerConfig) {
	if s.name == "momentum" {
		c.opts.momentum = C.double(s.value)
	} else {
		c.opts.epsilon = C.double(s.value)
	}
}

func (s SharedOption) applyLayer(c *layerConfig) {
	c.mark(s.name)
	v := s.value
	if s.name == "momentum" {
		c.momentum = &v
	} else {
		c.epsilon = &v
	}
}

// NewOptimizer creates an optimizer of kind (OptimizerKindSgd, OptimizerKindAdam,
// OptimizerKindAdamw, OptimizerKindRmsprop). Errors: INVALID_ARGUMENT naming a bad option.
func NewOptimizer(ctx *Context, kind OptimizerKind, options ...OptimizerOption) (*Optimizer, error) {
	if err := checkOpen("NewOptimizer", "context", ctx); err != nil {
		return nil, err
	}
	cfg := optimizerConfig{opts: (*C.cairn_optimizer_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_optimizer_options{}))))}
	defer C.free(unsafe.Pointer(cfg.opts))
	if err := cOptimizerOptionsInit(cfg.opts, C.uint32_t(unsafe.Sizeof(*cfg.opts))); err != nil {
		return nil, err
	}
	cfg.opts.kind = C.cairn_optimizer_kind(kind)
	for _, o := range options {
		o.applyOptimizer(&cfg)
	}
	if cfg.schedule != nil {
		cfg.opts.schedule = handleOf(cfg.schedule)
	}
	var out *C.cairn_object
	err := cOptimizerCreate(ctx.handle(), cfg.opts, &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(cfg.schedule)
	if err != nil {
		return nil, err
	}
	return &Optimizer{newObject(out)}, nil
}

// ApplyGradients updates each vars[i] with grads[i] (a nil gradient skips its variable), then
// counts one step. On error (a dtype or shape mismatch, a variable not trainable or given twice,
// named in the message) nothing is updated.
func (o *Optimizer) ApplyGradients(grads []*Tensor, vars []*Variable) error {
	if err := checkOpen("Optimizer.ApplyGradients", "optimizer", o); err != nil {
		return err
	}
	if err := checkEach("Optimizer.ApplyGradients", "variable", vars); err != nil {
		return err
	}
	for i, g := range grads { // a nil gradient (unconnected) is skipped; a closed one is misuse
		if g != nil && g.ptr == nil {
			return handleError("Optimizer.ApplyGradients", fmt.Sprintf("gradient %d", i), false)
		}
	}
	if len(grads) != len(vars) {
		return newError(CodeInvalidArgument, fmt.Sprintf("ApplyGradients: %d gradients for %d variables", len(grads), len(vars)))
	}
	gh := make([]*C.cairn_tensor, len(grads))
	for i, g := range grads {
		gh[i] = g.handle()
	}
	vh := objectHandles(vars)
	err := cOptimizerApplyGradients(handleOf(o), unsafe.SliceData(gh), unsafe.SliceData(vh), C.size_t(len(vh)))
	runtime.KeepAlive(o)
	runtime.KeepAlive(grads)
	runtime.KeepAlive(vars)
	return err
}

// Iterations is the number of ApplyGradients calls so far (the checkpointed "iter").
func (o *Optimizer) Iterations() (int64, error) {
	if err := checkOpen("Optimizer.Iterations", "optimizer", o); err != nil {
		return 0, err
	}
	var n C.int64_t
	err := cOptimizerIterations(handleOf(o), &n)
	runtime.KeepAlive(o)
	return int64(n), err
}

// LearningRate is the rate the next update uses (the schedule's value at the current step).
func (o *Optimizer) LearningRate() (float64, error) {
	if err := checkOpen("Optimizer.LearningRate", "optimizer", o); err != nil {
		return 0, err
	}
	var lr C.double
	err := cOptimizerLearningRate(handleOf(o), &lr)
	runtime.KeepAlive(o)
	return float64(lr), err
}

// SetLearningRate replaces a constant learning rate; FAILED_PRECONDITION under a schedule.
func (o *Optimizer) SetLearningRate(lr float64) error {
	if err := checkOpen("Optimizer.SetLearningRate", "optimizer", o); err != nil {
		return err
	}
	err := cOptimizerSetLearningRate(handleOf(o), C.double(lr))
	runtime.KeepAlive(o)
	return err
}

// Slot is the slot variable name ("m", "v", "momentum", "rms", "mg") the optimizer holds for v;
// NOT_FOUND before v's first update. Close the handle when done.
func (o *Optimizer) Slot(v *Variable, name string) (*Variable, error) {
	if err := checkOpen("Optimizer.Slot", "optimizer", o, "variable", v); err != nil {
		return nil, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var out *C.cairn_object
	err := cOptimizerGetSlot(handleOf(o), handleOf(v), cname, &out)
	runtime.KeepAlive(o)
	runtime.KeepAlive(v)
	if err != nil {
		return nil, err
	}
	return &Variable{newObject(out)}, nil
}

// AsOptimizer is o as an Optimizer, sharing o's handle; an error unless o is an optimizer.
func (o *Object) AsOptimizer() (*Optimizer, error) {
	if err := o.expectKind("AsOptimizer", ObjectKindOptimizer); err != nil {
		return nil, err
	}
	return &Optimizer{o}, nil
}

// ---- Losses and metrics ----

// Loss is the mean loss over every element as a scalar of yPred's dtype, built from registered
// ops so a tape differentiates it. fromLogits applies to the cross-entropies:
// LossKindBinaryCrossentropy (yTrue in {0, 1}) and LossKindSparseCategoricalCrossentropy (yTrue
// int class ids, yPred [..., classes]).
func Loss(ctx *Context, kind LossKind, yTrue, yPred *Tensor, fromLogits bool) (*Tensor, error) {
	if err := checkOpen("Loss", "context", ctx, "yTrue", yTrue, "yPred", yPred); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cLoss(ctx.handle(), C.cairn_loss_kind(kind), yTrue.handle(), yPred.handle(), cBool(fromLogits), &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(yTrue)
	runtime.KeepAlive(yPred)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// Metric is a streaming metric: a tracked object with float64 "total" and "count" variables, so
// it can be checkpointed.
type Metric struct {
	*Object
}

func (m *Metric) object() *Object {
	if m == nil {
		return nil
	}
	return m.Object
}

// NewMetric creates a metric: MetricKindMean (the mean of every value seen) or
// MetricKindAccuracy (int labels against the argmax of scores, or equality). name "" gives
// "mean" / "accuracy".
func NewMetric(ctx *Context, kind MetricKind, name string) (*Metric, error) {
	if err := checkOpen("NewMetric", "context", ctx); err != nil {
		return nil, err
	}
	var cname *C.char
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var out *C.cairn_object
	err := cMetricCreate(ctx.handle(), C.cairn_metric_kind(kind), cname, &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return &Metric{newObject(out)}, nil
}

// Update accumulates: a Mean takes (values, nil), an Accuracy (yTrue, yPred).
func (m *Metric) Update(a, b *Tensor) error {
	if err := checkOpen("Metric.Update", "metric", m, "first tensor", a); err != nil {
		return err
	}
	if b != nil && b.ptr == nil {
		return handleError("Metric.Update", "second tensor", false)
	}
	err := cMetricUpdate(handleOf(m), a.handle(), b.handle())
	runtime.KeepAlive(m)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return err
}

// Result is the current value (0 when nothing was accumulated).
func (m *Metric) Result() (float64, error) {
	if err := checkOpen("Metric.Result", "metric", m); err != nil {
		return 0, err
	}
	var r C.double
	err := cMetricResult(handleOf(m), &r)
	runtime.KeepAlive(m)
	return float64(r), err
}

// Reset sets total and count to zero.
func (m *Metric) Reset() error {
	if err := checkOpen("Metric.Reset", "metric", m); err != nil {
		return err
	}
	err := cMetricReset(handleOf(m))
	runtime.KeepAlive(m)
	return err
}
