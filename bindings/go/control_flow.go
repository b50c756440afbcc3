package cairn

/*
#cgo CFLAGS: -DCAIRN_EXPERIMENTAL
#include <stdint.h>
#include "cairn/cairn.h"

// The branch trampoline in callbacks.go: `which` is 0 or 1 (then/else of a cond, cond/body of a
// loop), so one user_data (the handle of a branchPair) serves both callbacks of a call.
extern cairn_status *cairnGoBranchCall(void *user_data, int which, cairn_context *ctx, cairn_tensor **inputs,
                                       size_t n_inputs, cairn_tensor **outputs, size_t n_outputs);

static cairn_status *cairn_go_branch_0(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                       size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  return cairnGoBranchCall(user_data, 0, ctx, (cairn_tensor **)inputs, n_inputs, outputs, n_outputs);
}

static cairn_status *cairn_go_branch_1(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                       size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  return cairnGoBranchCall(user_data, 1, ctx, (cairn_tensor **)inputs, n_inputs, outputs, n_outputs);
}

// cairn_cond over the Go branches behind the runtime/cgo handle `h` (kept in C memory only, as an
// integer). The runtime uses the callbacks only during the call, so the caller deletes h after.
static cairn_status *cairn_go_cond(cairn_context *ctx, const cairn_tensor *pred, cairn_tensor **operands,
                                   size_t n_operands, uintptr_t h, cairn_tensor **outputs, size_t n_outputs) {
  return cairn_cond(ctx, pred, operands, n_operands, cairn_go_branch_0, cairn_go_branch_1, (void *)h, outputs,
                    n_outputs);
}

// cairn_while_loop over the Go cond (0) and body (1) behind `h`.
static cairn_status *cairn_go_while_loop(cairn_context *ctx, uintptr_t h, cairn_tensor **loop_vars, size_t n_loop_vars,
                                         int64_t max_iterations, cairn_tensor **outputs) {
  return cairn_while_loop(ctx, cairn_go_branch_0, cairn_go_branch_1, (void *)h, loop_vars, n_loop_vars,
                          max_iterations, outputs);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// ---- Control flow (tf.cond, tf.while_loop, tf.TensorArray) ----
//
// Eagerly, Cond reads the predicate and runs one branch, and WhileLoop runs cond and body until
// cond gives false: the Go callbacks run every time. Inside a Function's body they are captured:
// each callback is traced once into a subgraph (both branches of a Cond, cond and body of a
// loop), and a replay picks the branch and counts the iterations on the device, so a loop's trip
// count may depend on the data. Callbacks have the FunctionBody contract: they receive a context
// and inputs valid only during the call, and the runtime takes (closes) the tensors they return,
// so a callback may return one of its inputs unchanged. Inside a trace the inputs are symbolic.

// Cond is tf.cond: then(operands) when pred (a bool tensor of one element) is true, otherwise
// otherwise(operands). Both branches must return numOutputs tensors of equal dtypes and shapes.
// A branch may use tensors and variables from around the Cond (they are captured when traced).
// A Go error or panic in a branch comes back wrapped (errors.Is reaches it); a non-bool predicate
// or mismatched branches give INVALID_ARGUMENT. The caller closes the outputs.
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func Cond(ctx *Context, pred *Tensor, operands []*Tensor, then, otherwise FunctionBody, numOutputs int) ([]*Tensor, error) {
	if err := checkOpen("Cond", "context", ctx, "pred", pred); err != nil {
		return nil, err
	}
	if err := checkEach("Cond", "operand", operands); err != nil {
		return nil, err
	}
	if then == nil || otherwise == nil {
		return nil, newError(CodeInvalidArgument, "Cond: a branch is nil")
	}
	if numOutputs < 0 {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("Cond: numOutputs %d is negative", numOutputs))
	}
	branches := &branchPair{
		names: [2]string{"Cond's then branch", "Cond's else branch"},
		fns:   [2]FunctionBody{then, otherwise},
		wants: [2]string{fmt.Sprintf("Cond was asked for %d", numOutputs), fmt.Sprintf("Cond was asked for %d", numOutputs)},
	}
	h := cgo.NewHandle(branches)
	defer h.Delete()
	ins := cTensors(operands)
	outs := make([]*C.cairn_tensor, numOutputs+1) // Go memory holding only C pointers; never empty
	status := C.cairn_go_cond(ctx.handle(), pred.handle(), unsafe.SliceData(ins), C.size_t(len(operands)),
		C.uintptr_t(h), unsafe.SliceData(outs), C.size_t(numOutputs))
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(pred)
	runtime.KeepAlive(operands)
	return branches.results(takeStatus(status), outs[:numOutputs])
}

// WhileOption configures WhileLoop.
type WhileOption func(*whileConfig)

type whileConfig struct {
	maxIterations int64
}

// WithMaxIterations stops the loop after n iterations even if cond is still true
// (tf.while_loop's maximum_iterations); -1 (the default) is no limit.
func WithMaxIterations(n int64) WhileOption {
	return func(c *whileConfig) { c.maxIterations = n }
}

// WhileLoop is tf.while_loop: while cond(vars) gives true, vars = body(vars); it returns the final
// vars (close them). cond returns one bool tensor of one element; body returns one tensor per
// loop variable, each with its variable's dtype and shape (else INVALID_ARGUMENT). A TensorArray
// (NewTensorArray) can be a loop variable, to collect one result per iteration. A Go error or
// panic in cond or body comes back wrapped (errors.Is reaches it).
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func WhileLoop(ctx *Context, cond, body FunctionBody, loopVars []*Tensor, options ...WhileOption) ([]*Tensor, error) {
	if err := checkOpen("WhileLoop", "context", ctx); err != nil {
		return nil, err
	}
	if err := checkEach("WhileLoop", "loop variable", loopVars); err != nil {
		return nil, err
	}
	cfg := whileConfig{maxIterations: -1}
	for _, set := range options {
		set(&cfg)
	}
	if cond == nil || body == nil {
		return nil, newError(CodeInvalidArgument, "WhileLoop: cond or body is nil")
	}
	n := len(loopVars)
	branches := &branchPair{
		names: [2]string{"WhileLoop's cond", "WhileLoop's body"},
		fns:   [2]FunctionBody{cond, body},
		wants: [2]string{"a loop condition returns 1 (a bool scalar)", fmt.Sprintf("the loop has %d variable(s)", n)},
	}
	h := cgo.NewHandle(branches)
	defer h.Delete()
	vars := cTensors(loopVars)
	outs := make([]*C.cairn_tensor, n+1)
	status := C.cairn_go_while_loop(ctx.handle(), C.uintptr_t(h), unsafe.SliceData(vars), C.size_t(n),
		C.int64_t(cfg.maxIterations), unsafe.SliceData(outs))
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(loopVars)
	return branches.results(takeStatus(status), outs[:n])
}

// branchPair is what the branch trampoline reaches through a Cond's or WhileLoop's handle: the two
// callbacks and the first Go error one of them gave. The callbacks run only inside the C call,
// on its thread, so no lock is needed.
type branchPair struct {
	names [2]string       // for messages: "Cond's then branch"
	fns   [2]FunctionBody // 0: then / cond, 1: else / body
	wants [2]string       // the expected result count, in words, for a wrong-count error
	err   error
}

// run runs callback which (0 or 1) for the trampoline; a failure is kept for the Go caller and
// the runtime gets a failed status, which ends the Cond or WhileLoop.
func (b *branchPair) run(which int, cctx *C.cairn_context, inputs, outputs []*C.cairn_tensor) *C.cairn_status {
	what := b.names[which]
	err := runHostCallback(cctx, b.fns[which], what, inputs, outputs, func(got int) error {
		return newError(CodeInvalidArgument, fmt.Sprintf("%s returned %d output(s), but %s", what, got, b.wants[which]))
	})
	if err == nil {
		return nil
	}
	if b.err == nil {
		b.err = fmt.Errorf("%s: %w", what, err)
	}
	return hostStatus(err)
}

// results turns the C call's outcome into the Go one: the callback's own error when one failed
// (the status then only repeats it), else the status, else the outputs.
func (b *branchPair) results(status error, outs []*C.cairn_tensor) ([]*Tensor, error) {
	if b.err != nil {
		return nil, b.err
	}
	if status != nil {
		return nil, status
	}
	results := make([]*Tensor, len(outs))
	for i, p := range outs {
		results[i] = newTensor(p)
	}
	return results, nil
}

// cTensors is the C handles of ts in Go memory that holds only C pointers (never empty, so its
// data pointer is valid); nil or closed tensors give NULL, which the C API reports.
func cTensors(ts []*Tensor) []*C.cairn_tensor {
	handles := make([]*C.cairn_tensor, len(ts)+1)
	for i, t := range ts {
		handles[i] = t.handle()
	}
	return handles
}

// branchPairOf is the branchPair behind a Cond's or WhileLoop's handle.
func branchPairOf(h cgo.Handle) *branchPair {
	return h.Value().(*branchPair)
}

// ---- TensorArray ----

// NewTensorArray is tf.TensorArray with a fixed size: size elements of dtype and elementShape (nil
// for scalars), all zero, held as one tensor of shape [size, elementShape...]. It can be a
// WhileLoop variable, and the tensor itself is the stacked array (tf.TensorArray.stack). Writes
// return a new array; elements never written read as zeros.
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func NewTensorArray(ctx *Context, dtype DType, size int64, elementShape []int64) (*Tensor, error) {
	if err := checkOpen("NewTensorArray", "context", ctx); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cTensorArrayCreate(ctx.handle(), C.cairn_dtype(dtype), C.int64_t(size),
		(*C.int64_t)(unsafe.SliceData(elementShape)), C.size_t(len(elementShape)), &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// TensorArrayWrite is array with element index (an int32 or int64 scalar tensor) set to value (an
// element's dtype and shape); array is unchanged. Eagerly an index outside [0, size) is
// OUT_OF_RANGE; inside a trace it has no value yet, and an out-of-range write leaves the array as
// it was (keep the index in range with the loop condition).
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func TensorArrayWrite(ctx *Context, array, index, value *Tensor) (*Tensor, error) {
	if err := checkOpen("TensorArrayWrite", "context", ctx, "array", array, "index", index, "value", value); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cTensorArrayWrite(ctx.handle(), array.handle(), index.handle(), value.handle(), &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(array)
	runtime.KeepAlive(index)
	runtime.KeepAlive(value)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// TensorArrayRead is element index (an int32 or int64 scalar tensor) of array. Any tensor of
// shape [n, ...] reads as an array of n elements, so a sequence input can be read step by step.
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func TensorArrayRead(ctx *Context, array, index *Tensor) (*Tensor, error) {
	if err := checkOpen("TensorArrayRead", "context", ctx, "array", array, "index", index); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cTensorArrayRead(ctx.handle(), array.handle(), index.handle(), &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(array)
	runtime.KeepAlive(index)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}
