package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// The replica trampoline in distribute_export.go.
extern cairn_status *cairnGoReplicaCall(void *user_data, cairn_context *ctx, cairn_replica_context *replica,
                                        cairn_tensor **outputs, size_t n_outputs);

// cairn_strategy_run over the Go step behind the runtime/cgo handle `h`. The Go side keeps the
// replicas' results itself, so the C run has no outputs.
static cairn_status *cairn_go_strategy_run(cairn_strategy *s, uintptr_t h) {
  return cairn_strategy_run(s, cairnGoReplicaCall, (void *)h, NULL, 0);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// ---- Mirrored replicas (tf.distribute.MirroredStrategy) ----

// Strategy is tf.distribute.MirroredStrategy: one replica per logical device, variables made in
// its Scope mirrored on every device, a step run once per replica in parallel (Run) with
// all-reduces across the replicas (Replica.AllReduce), and a model compiled in its Scope trains
// with Fit on every replica (docs/distribute.md). Split one device into logical devices first to
// have several on one machine. Run is not reentrant; the other methods may be called from any
// goroutine. Close it when done (a model compiled with it keeps what it needs).
type Strategy struct {
	ptr     *C.cairn_strategy
	ctx     *Context
	devices []string
}

// StrategyOption configures NewMirroredStrategy.
type StrategyOption func(*C.cairn_mirrored_options)

// WithCollectiveTimeout sets how long a replica waits in an all-reduce for the others before
// DEADLINE_EXCEEDED naming the replicas that did not arrive (default 120 s; at least 1 ms).
func WithCollectiveTimeout(d time.Duration) StrategyOption {
	return func(o *C.cairn_mirrored_options) { o.collective_timeout_ms = C.int64_t(d.Milliseconds()) }
}

// NewMirroredStrategy is a mirrored strategy over devices ("cpu:0", "cpu:1": distinct logical
// devices of one type), or over every logical device of the default device's type when none is
// given. ErrNotFound for an unknown device, ErrInvalidArgument for a duplicate or a mix of types.
func NewMirroredStrategy(ctx *Context, devices ...string) (*Strategy, error) {
	return NewMirroredStrategyWithOptions(ctx, devices)
}

// NewMirroredStrategyWithOptions is NewMirroredStrategy with options (WithCollectiveTimeout).
// ErrInvalidArgument for a timeout below 1 ms.
func NewMirroredStrategyWithOptions(ctx *Context, devices []string, options ...StrategyOption) (*Strategy, error) {
	if err := checkOpen("NewMirroredStrategy", "context", ctx); err != nil {
		return nil, err
	}
	opts := (*C.cairn_mirrored_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_mirrored_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cMirroredOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	for _, set := range options {
		set(opts)
	}
	names := (**C.char)(C.calloc(C.size_t(len(devices)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(names))
	cnames := unsafe.Slice(names, len(devices))
	for i, d := range devices {
		cnames[i] = C.CString(d)
		defer C.free(unsafe.Pointer(cnames[i]))
	}
	var list **C.char
	if len(devices) > 0 {
		list = names
	}
	var ptr *C.cairn_strategy
	err := cMirroredStrategyCreate(ctx.handle(), list, C.size_t(len(devices)), opts, &ptr)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return wrapStrategy(ptr, ctx), nil
}

// wrapStrategy owns a new C strategy of ctx, with its replicas' devices.
func wrapStrategy(ptr *C.cairn_strategy, ctx *Context) *Strategy {
	s := &Strategy{ptr: ptr, ctx: ctx}
	n := int(cStrategyNumReplicas(s.ptr))
	for r := range n {
		s.devices = append(s.devices, C.GoString(cStrategyDevice(s.ptr, C.size_t(r))))
	}
	runtime.SetFinalizer(s, (*Strategy).Close)
	return s
}

// Close frees the strategy (its replica threads end). Closing twice does nothing; Close must not
// race with Run.
func (s *Strategy) Close() {
	if s == nil || s.ptr == nil {
		return
	}
	runtime.SetFinalizer(s, nil)
	cStrategyFree(s.ptr)
	s.ptr = nil
}

// check is the binding's error for a nil or closed strategy, named by fn.
func (s *Strategy) check(fn string) error {
	if s == nil || s.ptr == nil {
		return handleError(fn, "strategy", s == nil)
	}
	return nil
}

// NumReplicas is the number of replicas (0 once closed).
func (s *Strategy) NumReplicas() int {
	if s == nil || s.ptr == nil {
		return 0
	}
	return len(s.devices)
}

// Devices are the replicas' logical devices, replica 0's first.
func (s *Strategy) Devices() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.devices...)
}

// Scope runs fn inside the strategy's scope (strategy.scope()): variables made in fn (directly, by
// layers, by optimizers) are mirrored on every replica device, and a model created and compiled in
// fn trains on every replica. Scopes belong to an OS thread, so Scope locks the goroutine to its
// thread while fn runs: work fn starts on other goroutines is outside the scope. The scope is left
// when fn returns or panics (the panic goes on). Scopes nest.
func (s *Strategy) Scope(fn func() error) (err error) {
	if err := s.check("Strategy.Scope"); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cStrategyScopeEnter(s.ptr); err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, cStrategyScopeExit(s.ptr))
		runtime.KeepAlive(s)
	}()
	return fn()
}

// Replica is what a step sees during Strategy.Run: its replica and the context to run ops with.
// It is valid only during that call.
type Replica struct {
	ptr *C.cairn_replica_context
	ctx *Context
}

// ID is the replica's index, 0 .. NumReplicas-1.
func (r *Replica) ID() int { return int(cReplicaID(r.handle())) }

// Device is the replica's logical device, e.g. "cpu:1".
func (r *Replica) Device() string {
	if p := cReplicaDevice(r.handle()); p != nil {
		return C.GoString(p)
	}
	return ""
}

// Context is the context to run the replica's ops with; ops without inputs run on its device.
func (r *Replica) Context() *Context { return r.ctx }

func (r *Replica) handle() *C.cairn_replica_context {
	if r == nil {
		return nil
	}
	return r.ptr
}

// AllReduce combines tensors across the replicas: every replica calls it with tensors of the same
// dtypes and shapes, in the same order, and each gets the results (close them) on its own device,
// reduced in replica order whatever the arrival order, so every replica gets the same bits.
// ErrDeadlineExceeded when a replica does not arrive within the collective timeout, ErrAborted
// when another replica failed.
func (r *Replica) AllReduce(reduction Reduction, tensors ...*Tensor) ([]*Tensor, error) {
	if r.handle() == nil {
		return nil, newError(CodeFailedPrecondition, "Replica.AllReduce: the replica's step has returned")
	}
	if err := checkEach("Replica.AllReduce", "tensor", tensors); err != nil {
		return nil, err
	}
	ins := handlesOf(tensors)
	outs := make([]*C.cairn_tensor, len(tensors)+1)
	err := cReplicaAllReduce(r.ptr, C.cairn_reduction(reduction), unsafe.SliceData(ins), C.size_t(len(tensors)),
		unsafe.SliceData(outs))
	runtime.KeepAlive(tensors)
	if err != nil {
		return nil, err
	}
	return tensorsOf(outs[:len(tensors)]), nil
}

// ReplicaFunc is a step Strategy.Run calls once per replica. Its results belong to Run's caller.
type ReplicaFunc func(r *Replica) ([]*Tensor, error)

// replicaRun is what the trampoline reaches through the handle: the step and each replica's
// results or error.
type replicaRun struct {
	fn      ReplicaFunc
	mu      sync.Mutex
	results [][]*Tensor
	errs    []error
}

// Run calls fn once per replica, in parallel, each on the strategy's thread for that replica
// inside a device scope of its device, and waits for all of them. It returns each replica's
// results, replica 0's first (close them). When a step fails (an error or a panic), the other
// replicas' all-reduces end at once, and Run returns the error, naming the replica and its device,
// with the C code; errors.Is and errors.As reach the step's own error too. No result is kept then.
func (s *Strategy) Run(fn ReplicaFunc) ([][]*Tensor, error) {
	if err := s.check("Strategy.Run"); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, newError(CodeInvalidArgument, "Strategy.Run: fn is nil")
	}
	n := len(s.devices)
	state := &replicaRun{fn: fn, results: make([][]*Tensor, n), errs: make([]error, n)}
	h := cgo.NewHandle(state)
	defer h.Delete()
	err := takeStatus(C.cairn_go_strategy_run(s.ptr, C.uintptr_t(h)))
	runtime.KeepAlive(s)
	if err != nil {
		for _, rs := range state.results {
			closeTensors(rs)
		}
		for r, stepErr := range state.errs {
			if stepErr != nil {
				return nil, &replicaError{err: err, step: stepErr, replica: r}
			}
		}
		return nil, err
	}
	return state.results, nil
}

// replicaError is Run's error for a failed step: the C API's (its code and message, which names
// the replica), wrapping the step's own error too.
type replicaError struct {
	err     error
	step    error
	replica int
}

func (e *replicaError) Error() string   { return e.err.Error() }
func (e *replicaError) Unwrap() []error { return []error{e.err, e.step} }

// call runs the step for replica rc (through cairnGoReplicaCall), turning a panic into an error;
// the returned status fails the C run.
func (run *replicaRun) call(cctx *C.cairn_context, rc *C.cairn_replica_context) *C.cairn_status {
	ctx := &Context{ptr: cctx, borrowed: true}
	replica := &Replica{ptr: rc, ctx: ctx}
	defer func() { ctx.ptr, replica.ptr = nil, nil }() // both die with the callback
	id := int(cReplicaID(rc))
	results, err := run.step(replica)
	if err == nil {
		if i := indexOfClosed(results); i >= 0 {
			err = newError(CodeInvalidArgument, fmt.Sprintf("result %d of the step is nil or closed", i))
		}
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if id < 0 || id >= len(run.results) {
		closeTensors(results)
		return hostStatus(newError(CodeInternal, fmt.Sprintf("Strategy.Run: replica id %d out of range", id)))
	}
	if err != nil {
		closeTensors(results)
		run.errs[id] = err
		return hostStatus(err)
	}
	run.results[id] = results
	return nil
}

func (run *replicaRun) step(r *Replica) (results []*Tensor, err error) {
	defer func() {
		if p := recover(); p != nil { // a panic must not unwind into C
			results = nil
			if e, isErr := p.(error); isErr {
				err = fmt.Errorf("the step panicked: %w", e)
			} else {
				err = fmt.Errorf("the step panicked: %v", p)
			}
		}
	}()
	return run.fn(r)
}

// indexOfClosed is the index of the first nil or closed tensor in ts, or -1.
func indexOfClosed(ts []*Tensor) int {
	for i, t := range ts {
		if t.handle() == nil {
			return i
		}
	}
	return -1
}

// replicaRunOf is the run behind a handle.
func replicaRunOf(h cgo.Handle) *replicaRun { return h.Value().(*replicaRun) }

// Reduce combines one tensor per replica (one output of Run, replica 0's first) into one on
// replica 0's device, in replica order (strategy.reduce). Close the result.
func (s *Strategy) Reduce(reduction Reduction, perReplica []*Tensor) (*Tensor, error) {
	if err := s.check("Strategy.Reduce"); err != nil {
		return nil, err
	}
	if err := checkEach("Strategy.Reduce", "value", perReplica); err != nil {
		return nil, err
	}
	ins := handlesOf(perReplica)
	var out *C.cairn_tensor
	err := cStrategyReduce(s.ptr, C.cairn_reduction(reduction), unsafe.SliceData(ins), C.size_t(len(perReplica)), &out)
	runtime.KeepAlive(s)
	runtime.KeepAlive(perReplica)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// SplitBatch splits a global batch along dimension 0 into one part per replica (the first
// replicas take one more row when it does not divide), each on its replica's device. Close them.
// ErrInvalidArgument for a scalar or fewer rows than replicas.
func (s *Strategy) SplitBatch(global *Tensor) ([]*Tensor, error) {
	if err := s.check("Strategy.SplitBatch"); err != nil {
		return nil, err
	}
	if err := checkOpen("Strategy.SplitBatch", "global", global); err != nil {
		return nil, err
	}
	outs := make([]*C.cairn_tensor, len(s.devices)+1)
	err := cStrategySplitBatch(s.ptr, global.handle(), unsafe.SliceData(outs), C.size_t(len(s.devices)))
	runtime.KeepAlive(s)
	runtime.KeepAlive(global)
	if err != nil {
		return nil, err
	}
	return tensorsOf(outs[:len(s.devices)]), nil
}

// IteratorNext is the next global batch of it, each component split as SplitBatch does
// (strategy.experimental_distribute_dataset): parts[r] are replica r's components, in the
// dataset's order. ErrEndOfData at the end of the data. The iterator stays an ordinary one
// (checkpoint it with the model to resume).
func (s *Strategy) IteratorNext(it *Iterator) ([][]*Tensor, error) {
	if err := s.check("Strategy.IteratorNext"); err != nil {
		return nil, err
	}
	if err := checkOpen("Strategy.IteratorNext", "iterator", it); err != nil {
		return nil, err
	}
	n, k := len(s.devices), len(it.names)
	outs := make([]*C.cairn_tensor, n*k+1)
	err := cStrategyIteratorNext(s.ptr, it.handle(), unsafe.SliceData(outs), C.size_t(n*k))
	runtime.KeepAlive(s)
	runtime.KeepAlive(it)
	if err != nil {
		if cerr, ok := err.(*Error); ok && cerr.Code == CodeOutOfRange {
			return nil, &endOfData{cerr}
		}
		return nil, err
	}
	parts := make([][]*Tensor, n)
	for r := range parts {
		parts[r] = tensorsOf(outs[r*k : (r+1)*k])
	}
	return parts, nil
}

// ComputeAverageLoss is sum(perExampleLoss) / globalBatchSize (tf.nn.compute_average_loss): a
// replica's loss scaled so that the sum of the replicas' gradients is the gradient of the global
// batch's mean loss. ErrInvalidArgument for globalBatchSize below 1.
func ComputeAverageLoss(ctx *Context, perExampleLoss *Tensor, globalBatchSize int64) (*Tensor, error) {
	if err := checkOpen("ComputeAverageLoss", "context", ctx, "loss", perExampleLoss); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cComputeAverageLoss(ctx.handle(), perExampleLoss.handle(), C.int64_t(globalBatchSize), &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(perExampleLoss)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// handlesOf is the C handles of ts in Go memory holding only C pointers; never empty.
func handlesOf(ts []*Tensor) []*C.cairn_tensor {
	hs := make([]*C.cairn_tensor, len(ts)+1)
	for i, t := range ts {
		hs[i] = t.handle()
	}
	return hs
}

// tensorsOf wraps new handles.
func tensorsOf(ps []*C.cairn_tensor) []*Tensor {
	ts := make([]*Tensor, len(ps))
	for i, p := range ps {
		ts[i] = newTensor(p)
	}
	return ts
}

// splitDevice splits physical device `physical` of ctx into n logical devices with the default
// configuration (cairn_context_set_logical_devices); the distribution tests use it through
// distribute_internal_test.go.
func splitDevice(ctx *Context, physical string, n int) error {
	if n < 1 {
		return newError(CodeInvalidArgument, fmt.Sprintf("splitDevice: %d logical devices", n))
	}
	size := C.size_t(unsafe.Sizeof(C.cairn_logical_device_config{}))
	configs := (*C.cairn_logical_device_config)(C.calloc(C.size_t(n), size))
	defer C.free(unsafe.Pointer(configs))
	for i := range unsafe.Slice(configs, n) {
		if err := cLogicalDeviceConfigInit(&unsafe.Slice(configs, n)[i], C.uint32_t(size)); err != nil {
			return err
		}
	}
	name := C.CString(physical)
	defer C.free(unsafe.Pointer(name))
	err := cContextSetLogicalDevices(ctx.handle(), name, configs, C.size_t(n))
	runtime.KeepAlive(ctx)
	return err
}
