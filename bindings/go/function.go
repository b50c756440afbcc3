package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// The function trampolines in callbacks.go.
extern cairn_status *cairnGoFunctionCall(void *user_data, cairn_context *ctx, cairn_tensor **inputs, size_t n_inputs,
                                         cairn_tensor **outputs, size_t n_outputs);
extern void cairnGoFunctionRelease(void *user_data);

static cairn_status *cairn_go_function_shim(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                            size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  return cairnGoFunctionCall(user_data, ctx, (cairn_tensor **)inputs, n_inputs, outputs, n_outputs);
}

// Creates a function over the Go body behind the runtime/cgo handle `h`; the runtime deletes the
// handle (release) when the function is freed. The handle lives only in C memory, as an integer.
static cairn_status *cairn_go_function_create(cairn_context *ctx, const char *name, uintptr_t h,
                                              cairn_function_options *o, cairn_function **out) {
  o->release = cairnGoFunctionRelease;
  return cairn_function_create(ctx, name, cairn_go_function_shim, (void *)h, o, out);
}

// The Function.Call whose trace runs on this thread, as a number Go gives each call. A trace runs
// inside cairn_function_call on the caller's thread, so the trampoline reads the number of the
// call it belongs to. It is per call, not per thread: once cairn_function_call returns, another
// goroutine may run its own Call on this thread before the first one has read its outcome.
static __thread uint64_t cairn_go_current_call;

static uint64_t cairn_go_function_current_call(void) { return cairn_go_current_call; }

// cairn_function_call, marking this thread as running Function.Call number `call` meanwhile
// (restored after, for a function called while another one traces).
static cairn_status *cairn_go_function_call(cairn_function *fn, cairn_tensor **inputs, size_t n_inputs,
                                            cairn_tensor **outputs, size_t n_outputs, uint64_t call) {
  uint64_t outer = cairn_go_current_call;
  cairn_go_current_call = call;
  cairn_status *status = cairn_function_call(fn, inputs, n_inputs, outputs, n_outputs);
  cairn_go_current_call = outer;
  return status;
}

*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ---- Compiled functions (tf.function) ----

// FunctionBody is the Go code a Function traces. It receives the context to run ops on and the
// symbolic inputs, and returns the outputs. While it runs, ops, variable reads and assigns,
// layers, tapes and optimizers record into a graph instead of computing: the tensors it sees have
// no values (Read fails on them). The ctx and the inputs are valid only during the call; the
// Function takes the returned tensors (it closes them once it has them), so return tensors made in
// the body, not ones used afterwards. An error or a panic is returned by Function.Call.
type FunctionBody func(ctx *Context, inputs []*Tensor) ([]*Tensor, error)

// Function is tf.function: its body is traced into a graph the first time it is called with a
// new input signature (each input's dtype and shape, or the WithInputSignature it was given), and
// later calls with that signature replay the graph without running any Go code. Side effects of
// the body (printing, counting) therefore happen only while tracing. Variables are captured by
// reference: a replay reads and writes their live values. Eager tensors the body uses are captured
// by value when it is traced.
//
// A Function may be called from several goroutines at once. Close frees it and the body (it must
// not race with a call).
type Function struct {
	ptr   *C.cairn_function
	state *functionState
	body  cgo.Handle // deleted by the runtime (release) when ptr is freed
}

// callNumbers numbers every Function.Call, so that a failed trace's error reaches the call it
// ran in (see cairn_go_current_call).
var callNumbers atomic.Uint64

// functionState is what the trampolines reach through the handle.
type functionState struct {
	name       string
	body       FunctionBody
	numOutputs int

	mu     sync.Mutex
	failed map[C.uint64_t]error // a body's error, by the number of the Call it failed in
}

// TensorSpec is one input of an input signature: a dtype and a shape whose dims may be -1 (any
// size). A nil Shape is a scalar.
type TensorSpec struct {
	DType DType
	Shape []int64
}

// FunctionOption configures NewFunction.
type FunctionOption func(*functionConfig)

type functionConfig struct {
	signature      []TensorSpec
	hasSignature   bool
	retraceWarning *int
	numOutputs     int
	staticInputs   []int
}

// WithInputSignature fixes the inputs' dtypes and shapes (tf.function's input_signature): one trace
// serves every call whose inputs match, with -1 matching any size, and other inputs are refused.
func WithInputSignature(specs ...TensorSpec) FunctionOption {
	return func(c *functionConfig) { c.signature, c.hasSignature = specs, true }
}

// WithRetraceWarning logs a warning (through the context's log) when the number of traces reaches
// n (default 5); 0 turns it off.
func WithRetraceWarning(n int) FunctionOption {
	return func(c *functionConfig) { c.retraceWarning = &n }
}

// WithStaticInputs marks inputs whose values, not only their dtypes and shapes, key the trace cache
// (tf.function's rule for Python scalars). The body receives them with values it may read (a loop
// count, a flag) and the trace bakes them in: a new value retraces. Each is a numeric or bool tensor
// of at most 1024 elements. Functions with static inputs cannot be exported yet.
func WithStaticInputs(indexes ...int) FunctionOption {
	return func(c *functionConfig) { c.staticInputs = indexes }
}

// WithNumOutputs sets how many tensors the body returns (default 1), hence how many Call returns.
// The C API needs the count before the body runs, so it is part of the Function, not learnt from
// the first trace.
func WithNumOutputs(n int) FunctionOption {
	return func(c *functionConfig) { c.numOutputs = n }
}

// NewFunction wraps body as a Function named name (for messages and dumps). Close it when done.
func NewFunction(ctx *Context, name string, body FunctionBody, options ...FunctionOption) (*Function, error) {
	if err := checkOpen("NewFunction", "context", ctx); err != nil {
		return nil, err
	}
	cfg := functionConfig{numOutputs: 1}
	for _, set := range options {
		set(&cfg)
	}
	if body == nil {
		return nil, newError(CodeInvalidArgument, "NewFunction: body is nil")
	}
	if cfg.numOutputs < 0 {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("NewFunction: WithNumOutputs(%d) is negative", cfg.numOutputs))
	}
	opts := (*C.cairn_function_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_function_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cFunctionOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	if cfg.retraceWarning != nil {
		if int64(*cfg.retraceWarning) != int64(int32(*cfg.retraceWarning)) {
			return nil, newError(CodeInvalidArgument,
				fmt.Sprintf("NewFunction: retrace warning %d does not fit in an int32", *cfg.retraceWarning))
		}
		opts.retrace_warning = C.int32_t(*cfg.retraceWarning)
	}
	if cfg.hasSignature {
		specs, free, err := cSignature(cfg.signature)
		defer free()
		if err != nil {
			return nil, err
		}
		opts.input_signature = specs
		opts.n_input_signature = C.size_t(len(cfg.signature))
	}
	if len(cfg.staticInputs) > 0 {
		static := (*C.int64_t)(C.calloc(C.size_t(len(cfg.staticInputs)), C.size_t(unsafe.Sizeof(C.int64_t(0)))))
		defer C.free(unsafe.Pointer(static))
		for i, index := range cfg.staticInputs {
			unsafe.Slice(static, len(cfg.staticInputs))[i] = C.int64_t(index)
		}
		opts.static_inputs = static
		opts.n_static_inputs = C.size_t(len(cfg.staticInputs))
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))

	state := &functionState{name: name, body: body, numOutputs: cfg.numOutputs, failed: map[C.uint64_t]error{}}
	f := &Function{state: state, body: cgo.NewHandle(state)}
	err := takeStatus(C.cairn_go_function_create(ctx.handle(), cname, C.uintptr_t(f.body), opts, &f.ptr))
	runtime.KeepAlive(ctx)
	if err != nil {
		// No function was made, so the runtime never calls release: the handle is ours to delete.
		deleteHandle(f.body)
		return nil, err
	}
	runtime.SetFinalizer(f, (*Function).Close)
	return f, nil
}

// cSignature copies specs into C memory (cairn_function_create borrows it), each element started
// from cairn_tensor_spec_init; call free after, error or not. Empty specs still get a non-NULL
// array: an empty signature (no inputs) is a signature.
func cSignature(specs []TensorSpec) (*C.cairn_tensor_spec, func(), error) {
	dims := 0
	for _, s := range specs {
		dims += len(s.Shape)
	}
	array := (*C.cairn_tensor_spec)(C.calloc(C.size_t(len(specs)+1), C.size_t(unsafe.Sizeof(C.cairn_tensor_spec{}))))
	shapes := (*C.int64_t)(C.calloc(C.size_t(dims+1), C.size_t(unsafe.Sizeof(C.int64_t(0)))))
	cspecs := unsafe.Slice(array, len(specs))
	cdims := unsafe.Slice(shapes, dims)
	free := func() {
		C.free(unsafe.Pointer(array))
		C.free(unsafe.Pointer(shapes))
	}
	next := 0
	for i, s := range specs {
		if err := cTensorSpecInit(&cspecs[i], C.uint32_t(unsafe.Sizeof(cspecs[i]))); err != nil {
			return nil, free, err
		}
		cspecs[i].dtype = C.cairn_dtype(s.DType)
		cspecs[i].rank = C.size_t(len(s.Shape))
		cspecs[i].shape = (*C.int64_t)(unsafe.Add(unsafe.Pointer(shapes), next*int(unsafe.Sizeof(C.int64_t(0)))))
		for _, d := range s.Shape {
			cdims[next] = C.int64_t(d)
			next++
		}
	}
	return array, free, nil
}

// Close frees the function and its traces, and releases the body. Closing twice does nothing.
func (f *Function) Close() {
	if f == nil || f.ptr == nil {
		return
	}
	runtime.SetFinalizer(f, nil)
	cFunctionFree(f.ptr) // calls cairnGoFunctionRelease, which deletes f.body
	f.ptr = nil
}

func (f *Function) handle() *C.cairn_function {
	if f == nil {
		return nil
	}
	return f.ptr
}

// Name is the name given to NewFunction.
func (f *Function) Name() string { return f.state.name }

// Call runs the function on inputs: it traces the body on a new signature and replays the cached
// graph otherwise. It returns the WithNumOutputs outputs (close them). An error of the body, or a
// panic in it, comes back wrapped (errors.Is and errors.As reach it), and nothing is cached: the
// next call with that signature traces again.
func (f *Function) Call(inputs ...*Tensor) ([]*Tensor, error) {
	if err := checkOpen("Function.Call", "function", f); err != nil {
		return nil, err
	}
	if err := checkEach("Function.Call", "input", inputs); err != nil {
		return nil, err
	}
	n := f.state.numOutputs
	handles := make([]*C.cairn_tensor, len(inputs)+1) // Go memory holding only C pointers; never empty
	for i, t := range inputs {
		handles[i] = t.handle()
	}
	outs := make([]*C.cairn_tensor, n+1)
	call := C.uint64_t(callNumbers.Add(1))
	err := takeStatus(C.cairn_go_function_call(f.ptr, unsafe.SliceData(handles), C.size_t(len(inputs)),
		unsafe.SliceData(outs), C.size_t(n), call))
	runtime.KeepAlive(f)
	runtime.KeepAlive(inputs)
	if bodyErr := f.state.takeFailure(call); bodyErr != nil {
		return nil, fmt.Errorf("function '%s': %w", f.state.name, bodyErr)
	}
	if err != nil {
		return nil, err
	}
	results := make([]*Tensor, n)
	for i, p := range outs[:n] {
		results[i] = newTensor(p)
	}
	return results, nil
}

// NumTraces is how many times the body has been traced (one per distinct signature).
func (f *Function) NumTraces() int {
	n := int(cFunctionNumTraces(f.handle()))
	runtime.KeepAlive(f)
	return n
}

// NumOutputs is how many outputs trace i (0 = the first) returns: what WithNumOutputs must say
// for Call, useful for a loaded function. OUT_OF_RANGE for a trace that does not exist.
func (f *Function) NumOutputs(i int) (int, error) {
	if err := checkOpen("Function.NumOutputs", "function", f); err != nil {
		return 0, err
	}
	if i < 0 {
		return 0, newError(CodeOutOfRange, fmt.Sprintf("Function.NumOutputs: trace %d of function '%s' (traces count from 0)", i, f.state.name))
	}
	var n C.size_t
	err := cFunctionNumOutputs(f.handle(), C.size_t(i), &n)
	runtime.KeepAlive(f)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// Dump is the graph of trace i (0 = the first) as text: one line per node with its op,
// attributes, inputs and output dtypes and shapes, then the results.
func (f *Function) Dump(i int) (string, error) {
	return f.text("Function.Dump", i, cFunctionDump)
}

// Signature is the input signature of trace i as text, e.g. "float32[2,3], int32[]".
func (f *Function) Signature(i int) (string, error) {
	return f.text("Function.Signature", i, cFunctionSignature)
}

func (f *Function) text(fn string, i int, get func(*C.cairn_function, C.size_t, **C.char) error) (string, error) {
	if err := checkOpen(fn, "function", f); err != nil {
		return "", err
	}
	if i < 0 {
		return "", newError(CodeOutOfRange, fmt.Sprintf("%s: trace %d of function '%s' (traces count from 0)", fn, i, f.state.name))
	}
	var out *C.char
	err := get(f.handle(), C.size_t(i), &out)
	runtime.KeepAlive(f)
	if err != nil {
		return "", err
	}
	defer cFree(unsafe.Pointer(out))
	return C.GoString(out), nil
}

// trace runs the body for cairn_function_call (through cairnGoFunctionCall): it wraps the
// symbolic inputs, calls the body and hands its outputs to the runtime. A failure is kept for
// the Call it runs in, and the runtime gets a failed status so that nothing is cached.
func (s *functionState) trace(cctx *C.cairn_context, inputs, outputs []*C.cairn_tensor) *C.cairn_status {
	if err := s.runBody(cctx, inputs, outputs); err != nil {
		call := C.cairn_go_function_current_call()
		s.mu.Lock()
		s.failed[call] = err
		s.mu.Unlock()
		return hostStatus(err)
	}
	return nil
}

// hostStatus is the status a failed body returns to the C API: the Go error's message, and its
// code when it is (or wraps) a Cairn error, so raw-layer callers see the real failure too.
// Function.Call still returns the Go error itself (errors.Is and errors.As reach it).
func hostStatus(err error) *C.cairn_status {
	code := CodeUnknown
	var cerr *Error
	if errors.As(err, &cerr) {
		code = cerr.Code
	}
	msg := C.CString(err.Error())
	defer C.free(unsafe.Pointer(msg))
	return C.cairn_status_create(C.cairn_code(code), msg)
}

// takeFailure is the body's error in Function.Call number call, if any, and forgets it.
func (s *functionState) takeFailure(call C.uint64_t) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.failed[call]
	delete(s.failed, call)
	return err
}

func (s *functionState) runBody(cctx *C.cairn_context, inputs, outputs []*C.cairn_tensor) error {
	return runHostCallback(cctx, s.body, "the body", inputs, outputs, func(got int) error {
		return newError(CodeInvalidArgument, fmt.Sprintf("the body returned %d output(s), but the function was "+
			"created for %d (WithNumOutputs)", got, len(outputs)))
	})
}

// runHostCallback runs a Go callback for the C API (a Function's body, a cond branch, a loop's
// cond or body): it wraps the runtime's context and the borrowed inputs, calls fn and shares its
// results into the output slots, which the runtime takes. what names fn in messages ("the body");
// wrongCount is the error for a result count other than len(outputs).
func runHostCallback(cctx *C.cairn_context, fn FunctionBody, what string, inputs, outputs []*C.cairn_tensor,
	wrongCount func(got int) error) error {
	ctx := &Context{ptr: cctx, borrowed: true}
	defer func() { ctx.ptr = nil }() // the runtime's handle dies with the callback
	ins := make([]*Tensor, len(inputs))
	defer closeTensors(ins)
	for i, p := range inputs {
		var shared *C.cairn_tensor
		if err := cTensorShare(p, &shared); err != nil {
			return err
		}
		ins[i] = newTensor(shared)
	}
	results, err := callHost(fn, what, ctx, ins)
	defer closeTensors(results)
	if err != nil {
		return err
	}
	if len(results) != len(outputs) {
		return wrongCount(len(results))
	}
	for i, r := range results {
		if r.handle() == nil {
			return newError(CodeInvalidArgument, fmt.Sprintf("output %d of %s is nil or closed", i, what))
		}
		// The runtime takes outputs[i] (also on a later error), and the callback's handle is closed.
		if err := cTensorShare(r.handle(), &outputs[i]); err != nil {
			return err
		}
	}
	runtime.KeepAlive(results)
	return nil
}

// callHost calls fn, turning a panic into an error: a panic must not unwind into C.
func callHost(fn FunctionBody, what string, ctx *Context, inputs []*Tensor) (results []*Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			results = nil
			if e, isErr := r.(error); isErr {
				err = fmt.Errorf("%s panicked: %w", what, e)
			} else {
				err = fmt.Errorf("%s panicked: %v", what, r)
			}
		}
	}()
	return fn(ctx, inputs)
}

func closeTensors(ts []*Tensor) {
	for _, t := range ts {
		t.Close()
	}
}

// functionStateOf is the state behind a function's handle.
func functionStateOf(h cgo.Handle) *functionState {
	return h.Value().(*functionState)
}
