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

// Error is "<CODE>: <message>", the same in every binding, e.g. "INVALID_ARGUMENT: Add:
// incompatible shapes [2,3] and [4]"; a sentinel (no message) is its code alone.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
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
// *Checkpoint, *RestoreStatus, *CheckpointManager, *CheckpointReader, *Function, *GradientTape,
// *RecordWriter, *RecordReader, *Example, *SummaryWriter, *Profile, *Dataset, *Callback, *Mpi).
// The first nil or closed one gives handleError, so the C API never sees a NULL the binding could
// have named.
func checkOpen(fn string, args ...any) error {
	for i := 0; i+1 < len(args); i += 2 {
		if isNil, closed := handleState(fn, args[i+1]); isNil || closed {
			return stateError(fn, args[i].(string), args[i+1], isNil)
		}
	}
	return nil
}

// checkEach is checkOpen over a slice: element i is named "<what> i" ("source 1").
func checkEach[H any](fn, what string, hs []H) error {
	for i, h := range hs {
		if isNil, closed := handleState(fn, h); isNil || closed {
			return stateError(fn, fmt.Sprintf("%s %d", what, i), h, isNil)
		}
	}
	return nil
}

// allOpen says whether no Tensor of ts is nil or closed: checkEach's answer for the inputs of an
// op call, without its type switch.
func allOpen(ts []*Tensor) bool {
	for _, t := range ts {
		if t == nil || t.ptr == nil {
			return false
		}
	}
	return true
}

// stateError is handleError, or for a Tensor its own (which says when its Scope freed it).
func stateError(fn, what string, h any, isNil bool) error {
	if t, ok := h.(*Tensor); ok {
		return t.closedError(fn, what)
	}
	return handleError(fn, what, isNil)
}

// handleState says whether h, one of checkOpen's handle types, is nil or closed.
func handleState(fn string, h any) (isNil, closed bool) {
	switch h := h.(type) {
	case nil:
		return true, false
	case *Context:
		return h == nil, h != nil && h.ptr == nil
	case *Tensor:
		return h == nil, h != nil && h.ptr == nil
	case Tracked:
		o := h.object()
		return o == nil, o != nil && o.handle() == nil
	case *Checkpoint:
		return h == nil, h != nil && h.handle() == nil
	case *RestoreStatus:
		return h == nil, h != nil && h.handle() == nil
	case *CheckpointManager:
		return h == nil, h != nil && h.handle() == nil
	case *CheckpointReader:
		return h == nil, h != nil && h.handle() == nil
	case *Function:
		return h == nil, h != nil && h.handle() == nil
	case *GradientTape:
		return h == nil, h != nil && h.handle() == nil
	case *RecordWriter:
		return h == nil, h != nil && h.handle() == nil
	case *RecordReader:
		return h == nil, h != nil && h.handle() == nil
	case *Example:
		return h == nil, h != nil && h.handle() == nil
	case *SummaryWriter:
		return h == nil, h != nil && h.ptr == nil
	case *Profile:
		return h == nil, h != nil && h.handle() == nil
	case *Dataset:
		return h == nil, h != nil && h.handle() == nil
	case *Callback:
		return h == nil, h != nil && h.handle() == nil
	case *Mpi:
		return h == nil, h != nil && h.ptr == nil
	}
	panic(fmt.Sprintf("cairn: %s: checkOpen has no case for %T", fn, h))
}
