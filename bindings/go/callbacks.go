package cairn

// The C-callable trampolines. A file with //export may hold only declarations in its preamble,
// so the C shims that point the C API at these live beside their users (context.go).

/*
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"unsafe"
)

// cairnGoLog receives a context's log messages; userData is the runtime/cgo handle of its LogFunc.
//
//export cairnGoLog
func cairnGoLog(userData unsafe.Pointer, level C.cairn_log_level, message *C.char) {
	fn := logFuncOf(cgo.Handle(uintptr(userData)))
	if fn == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil { // a panic must not unwind into C
			fmt.Fprintf(os.Stderr, "cairn: log callback panicked: %v\n", r)
		}
	}()
	fn(LogLevel(level), C.GoString(message))
}

// cairnGoLogRelease is the context's log_release: the runtime calls it once, when no log message
// can come any more, and the LogFunc's handle goes.
//
//export cairnGoLogRelease
func cairnGoLogRelease(userData unsafe.Pointer) {
	deleteHandle(cgo.Handle(uintptr(userData)))
}

// deleteHandle deletes a callback's handle (a LogFunc's, a Function's); 0 (no callback) and a
// handle already deleted are ignored (handles are never reused, so a second delete cannot hit
// another callback).
func deleteHandle(h cgo.Handle) {
	if h == 0 {
		return
	}
	defer func() { _ = recover() }() // Delete panics on a deleted handle; a panic must not unwind into C
	h.Delete()
}

// logFuncOf is the LogFunc behind h, or nil when h was deleted: a message that arrives after
// log_release is dropped (the runtime promises there is none).
func logFuncOf(h cgo.Handle) (fn LogFunc) {
	defer func() {
		if recover() != nil {
			fn = nil
		}
	}()
	return h.Value().(LogFunc)
}

// cairnGoFunctionCall is a Function's traced body as the C API calls it (cairn_function_fn);
// userData is the runtime/cgo handle of its functionState. It runs on the thread of the
// Function.Call that traces.
//
//export cairnGoFunctionCall
func cairnGoFunctionCall(userData unsafe.Pointer, ctx *C.cairn_context, inputs **C.cairn_tensor, nInputs C.size_t,
	outputs **C.cairn_tensor, nOutputs C.size_t) *C.cairn_status {
	state := functionStateOf(cgo.Handle(uintptr(userData)))
	return state.trace(ctx, unsafe.Slice(inputs, int(nInputs)), unsafe.Slice(outputs, int(nOutputs)))
}

// cairnGoFunctionRelease is a Function's release: the runtime calls it once, when the function
// is freed, and the body's handle goes.
//
//export cairnGoFunctionRelease
func cairnGoFunctionRelease(userData unsafe.Pointer) {
	deleteHandle(cgo.Handle(uintptr(userData)))
}

// cairnGoBranchCall is a Cond branch or a WhileLoop's cond or body as the C API calls it
// (cairn_function_fn through the shims of control_flow.go); userData is the runtime/cgo handle of
// the call's branchPair and which picks the callback. It runs on the thread of the Cond or
// WhileLoop call (eagerly, or while a Function traces).
//
//export cairnGoBranchCall
func cairnGoBranchCall(userData unsafe.Pointer, which C.int, ctx *C.cairn_context, inputs **C.cairn_tensor,
	nInputs C.size_t, outputs **C.cairn_tensor, nOutputs C.size_t) *C.cairn_status {
	branches := branchPairOf(cgo.Handle(uintptr(userData)))
	return branches.run(int(which), ctx, unsafe.Slice(inputs, int(nInputs)), unsafe.Slice(outputs, int(nOutputs)))
}

// cairnGoDataCall is a Dataset.Map or Dataset.Filter body as the C API calls it
// (cairn_function_fn, through the shim of dataset.go); userData is the runtime/cgo handle of its
// dataCallback. It runs on the thread that builds the dataset (tracing) or on Cairn's worker
// threads (eager), several at once.
//
//export cairnGoDataCall
func cairnGoDataCall(userData unsafe.Pointer, ctx *C.cairn_context, inputs **C.cairn_tensor, nInputs C.size_t,
	outputs **C.cairn_tensor, nOutputs C.size_t) *C.cairn_status {
	cb := dataCallbackOf(cgo.Handle(uintptr(userData)))
	return cb.call(ctx, unsafe.Slice(inputs, int(nInputs)), unsafe.Slice(outputs, int(nOutputs)))
}

// cairnGoGenerator is a generator dataset's cairn_generator_fn; userData is the runtime/cgo handle
// of its dataCallback. It runs on Cairn's worker threads.
//
//export cairnGoGenerator
func cairnGoGenerator(userData unsafe.Pointer, ctx *C.cairn_context, index C.int64_t, outputs **C.cairn_tensor,
	nOutputs C.size_t, got *C.cairn_bool) *C.cairn_status {
	cb := dataCallbackOf(cgo.Handle(uintptr(userData)))
	return cb.generate(ctx, int64(index), unsafe.Slice(outputs, int(nOutputs)), got)
}

// cairnGoDatasetFn is an interleave's cairn_dataset_fn (through the shim of dataset.go); userData
// is the runtime/cgo handle of its dataCallback. It runs on Cairn's worker threads.
//
//export cairnGoDatasetFn
func cairnGoDatasetFn(userData unsafe.Pointer, ctx *C.cairn_context, element **C.cairn_tensor, n C.size_t,
	out **C.cairn_dataset) *C.cairn_status {
	cb := dataCallbackOf(cgo.Handle(uintptr(userData)))
	return cb.makeDataset(ctx, unsafe.Slice(element, int(n)), out)
}

// cairnGoDataRelease is the release of a dataset callback: the runtime calls it once, when the
// last dataset using the callback is freed, and the handle goes.
//
//export cairnGoDataRelease
func cairnGoDataRelease(userData unsafe.Pointer) {
	deleteHandle(cgo.Handle(uintptr(userData)))
}

// cairnGoHookTrain is a NewCallback hook without a step number (fit_callbacks.go's shims): which
// is 0 on_train_begin, 1 on_train_end, 2 on_test_end; userData is the runtime/cgo handle of its
// hookState. It runs on the goroutine that called Fit or Evaluate.
//
//export cairnGoHookTrain
func cairnGoHookTrain(userData unsafe.Pointer, which C.int, model *C.cairn_object, logs *C.cairn_logs) *C.cairn_status {
	s := hookStateOf(cgo.Handle(uintptr(userData)))
	switch which {
	case 0:
		return s.runHook("OnTrainBegin", model, func(m *Model) error { return s.hooks.OnTrainBegin(m) })
	case 1:
		return s.runHook("OnTrainEnd", model, func(m *Model) error { return s.hooks.OnTrainEnd(m, logsOf(logs)) })
	default:
		return s.runHook("OnTestEnd", model, func(m *Model) error { return s.hooks.OnTestEnd(m, logsOf(logs)) })
	}
}

// cairnGoHookStep is a NewCallback hook with an epoch or batch number n: which is 0
// on_epoch_begin, 1 on_epoch_end, 2 on_train_batch_begin, 3 on_train_batch_end.
//
//export cairnGoHookStep
func cairnGoHookStep(userData unsafe.Pointer, which C.int, model *C.cairn_object, n C.int64_t, logs *C.cairn_logs) *C.cairn_status {
	s := hookStateOf(cgo.Handle(uintptr(userData)))
	k := int64(n)
	switch which {
	case 0:
		return s.runHook("OnEpochBegin", model, func(m *Model) error { return s.hooks.OnEpochBegin(m, k) })
	case 1:
		return s.runHook("OnEpochEnd", model, func(m *Model) error { return s.hooks.OnEpochEnd(m, k, logsOf(logs)) })
	case 2:
		return s.runHook("OnTrainBatchBegin", model, func(m *Model) error { return s.hooks.OnTrainBatchBegin(m, k) })
	default:
		return s.runHook("OnTrainBatchEnd", model, func(m *Model) error { return s.hooks.OnTrainBatchEnd(m, k, logsOf(logs)) })
	}
}

// cairnGoLRSchedule is a NewLearningRateScheduler's cairn_lr_schedule_fn; userData is the
// runtime/cgo handle of its hookState.
//
//export cairnGoLRSchedule
func cairnGoLRSchedule(userData unsafe.Pointer, epoch C.int64_t, lr C.double, out *C.double) *C.cairn_status {
	return hookStateOf(cgo.Handle(uintptr(userData))).runSchedule(int64(epoch), float64(lr), out)
}

// cairnGoHooksRelease is the release of a NewCallback or NewLearningRateScheduler callback: the
// runtime calls it once, when the callback is freed, and the handle goes.
//
//export cairnGoHooksRelease
func cairnGoHooksRelease(userData unsafe.Pointer) {
	deleteHandle(cgo.Handle(uintptr(userData)))
}
