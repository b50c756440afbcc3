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

// logFuncOf is the LogFunc behind h, or nil when h was deleted: a message that arrives after its
// context was closed is dropped.
func logFuncOf(h cgo.Handle) (fn LogFunc) {
	defer func() {
		if recover() != nil {
			fn = nil
		}
	}()
	return h.Value().(LogFunc)
}
