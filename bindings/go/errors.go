package cairn

/*
#include "cairn/cairn.h"
*/
import "C"

import "fmt"

// Error is a failed call: the cairn_code and the message of a cairn_status, or an error the
// binding itself found (then Code says which kind, as the C API would).
//
// Match codes with errors.Is and the sentinels: errors.Is(err, ErrInvalidArgument). Reach the
// fields with errors.As(err, &cerr) where cerr is a *Error.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "cairn: " + e.Code.String()
	}
	return e.Code.String() + ": " + e.Message
}

// Is makes every sentinel (an *Error without a message) match the errors with its code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// takeStatus turns a status into an error and frees it; the one place statuses are freed.
func takeStatus(s *C.cairn_status) error {
	if s == nil {
		return nil
	}
	defer cStatusFree(s)
	return &Error{Code: Code(cStatusCode(s)), Message: C.GoString(cStatusMessage(s))}
}

// newError makes an error the binding found itself, shaped like the C API's.
func newError(code Code, message string) error {
	return &Error{Code: code, Message: message}
}

// handleError is the binding's own error for a handle it will not pass to C: INVALID_ARGUMENT
// "<fn>: <what> is nil" for a nil one, FAILED_PRECONDITION "<fn>: <what> is closed" for a closed
// one. fn is the Go function or method ("Tensor.Bytes"), what names the argument ("tensor",
// "input 1", "context").
func handleError(fn, what string, isNil bool) error {
	if isNil {
		return newError(CodeInvalidArgument, fn+": "+what+" is nil")
	}
	return newError(CodeFailedPrecondition, fn+": "+what+" is closed")
}

// checkOpen is the first step of a call of fn that passes handles to C: args alternate a name
// for the error ("object", "child", "value") and a handle (*Context, *Tensor, any Tracked,
// *Checkpoint, *RestoreStatus, *CheckpointManager, *CheckpointReader, *Function, *GradientTape).
// The first nil or closed one gives handleError, so the C API never sees a NULL the binding could
// have named.
func checkOpen(fn string, args ...any) error {
	for i := 0; i+1 < len(args); i += 2 {
		what := args[i].(string)
		isNil, closed := false, false
		switch h := args[i+1].(type) {
		case nil:
			isNil = true
		case *Context:
			isNil, closed = h == nil, h != nil && h.ptr == nil
		case *Tensor:
			isNil, closed = h == nil, h != nil && h.ptr == nil
		case Tracked:
			o := h.object()
			isNil, closed = o == nil, o != nil && o.handle() == nil
		case *Checkpoint:
			isNil, closed = h == nil, h != nil && h.handle() == nil
		case *RestoreStatus:
			isNil, closed = h == nil, h != nil && h.handle() == nil
		case *CheckpointManager:
			isNil, closed = h == nil, h != nil && h.handle() == nil
		case *CheckpointReader:
			isNil, closed = h == nil, h != nil && h.handle() == nil
		case *Function:
			isNil, closed = h == nil, h != nil && h.handle() == nil
		case *GradientTape:
			isNil, closed = h == nil, h != nil && h.handle() == nil
		default:
			panic(fmt.Sprintf("cairn: checkOpen(%s): no handle type %T", fn, h))
		}
		if isNil || closed {
			return handleError(fn, what, isNil)
		}
	}
	return nil
}
