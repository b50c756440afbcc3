package cairn

/*
#cgo CFLAGS: -DCAIRN_EXPERIMENTAL
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// ---- Export and load of compiled functions (docs/graph_export.md) ----

// Export writes every trace of f, with the current values of the variables they read or write,
// to path (replaced atomically). Any binding loads the file with its load function, and C with
// cairn_function_load. FAILED_PRECONDITION before the first Call (there is nothing to export);
// UNIMPLEMENTED when a trace captured a string constant.
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func (f *Function) Export(path string) error {
	if err := checkOpen("Function.Export", "function", f); err != nil {
		return err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err := cFunctionExport(f.ptr, cpath)
	runtime.KeepAlive(f)
	return err
}

// LoadFunction loads a function written by Export (in any language) into ctx. It runs without
// any Go body: the first call for each input shape re-traces the stored graph, and it owns fresh
// variables initialised from the file. A call whose inputs fit none of the stored signatures
// fails with NOT_FOUND, listing them. The file does not say how many outputs the function
// returns, so the caller does: WithNumOutputs (default 1) is the only option that applies.
// Errors: NOT_FOUND for a missing file, DATA_LOSS for a damaged one, INVALID_ARGUMENT for a file
// that is not an exported function. Name is the path. Close the function when done.
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func LoadFunction(ctx *Context, path string, options ...FunctionOption) (*Function, error) {
	if err := checkOpen("LoadFunction", "context", ctx); err != nil {
		return nil, err
	}
	cfg := functionConfig{numOutputs: 1}
	for _, set := range options {
		set(&cfg)
	}
	if cfg.hasSignature || cfg.retraceWarning != nil {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("LoadFunction %s: only WithNumOutputs applies "+
			"to a loaded function (its signatures are the file's, and it never warns about retracing)", path))
	}
	if cfg.numOutputs < 0 {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("LoadFunction: WithNumOutputs(%d) is negative", cfg.numOutputs))
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var ptr *C.cairn_function
	err := cFunctionLoad(ctx.handle(), cpath, &ptr)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	// No body and no handle: the runtime owns what replays the stored graph.
	f := &Function{ptr: ptr, state: &functionState{name: path, numOutputs: cfg.numOutputs, failed: map[C.uint64_t]error{}}}
	runtime.SetFinalizer(f, (*Function).Close)
	return f, nil
}

// GraphDef is trace i as TensorFlow GraphDef text format ("node { name: ... op: ... }"), for
// TensorBoard's graph view: parse it into a tf.compat.v1.GraphDef and write it with
// tf.summary.graph. OUT_OF_RANGE for i >= NumTraces.
//
// Experimental: it wraps the C API's CAIRN_EXPERIMENTAL part, which may still change in a 1.x
// release.
func (f *Function) GraphDef(i int) (string, error) {
	return f.text("Function.GraphDef", i, cFunctionGraphdef)
}
