package cairn

/*
#include "cairn/cairn.h"
*/
import "C"

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
