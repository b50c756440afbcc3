package cairn

// The C-callable trampoline of Strategy.Run (distribute.go holds the shim that points the C API
// at it: a file with //export may hold only declarations in its preamble).

/*
#include "cairn/cairn.h"
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// cairnGoReplicaCall is a Strategy.Run step as the C API calls it (cairn_replica_fn); userData is
// the runtime/cgo handle of the run's replicaRun. It runs on the strategy's replica threads, all
// at once. The C run has no outputs: the Go side keeps the results.
//
//export cairnGoReplicaCall
func cairnGoReplicaCall(userData unsafe.Pointer, ctx *C.cairn_context, replica *C.cairn_replica_context,
	outputs **C.cairn_tensor, nOutputs C.size_t) *C.cairn_status {
	return replicaRunOf(cgo.Handle(uintptr(userData))).call(ctx, replica)
}
