package cairn

/*
#include <stdint.h>

// The cgo.Handle of the innermost open Scope of this OS thread, 0 when none is open. A Scope locks
// its goroutine to its thread while open, so this is also the goroutine's innermost Scope. The C
// helpers that make tensors (gocairn_adopt, gocairn_run1) read it in the cgo call they make anyway.
__thread uintptr_t gocairn_scope;

static uintptr_t gocairn_scope_get(void) { return gocairn_scope; }
static void gocairn_scope_set(uintptr_t h) { gocairn_scope = h; }
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
)

// Scope frees, when it closes, every Tensor made inside it on its goroutine, except those kept
// (Keep) or returned from Scoped: the Tensors of a training step (activations, losses, gradients,
// values read from variables) go when the step ends, closed or not.
//
//	s := cairn.NewScope()
//	defer s.Close()
//	loss, err := cairn.Loss(...)   // in s: freed by s.Close
//	s.Keep(w)                      // w outlives s; Close it, or leave it to the collector
//
// A Tensor is in the innermost Scope open on the goroutine that made it, whatever made it
// (NewTensor, ops, layers, Loss, a tape's gradients, Variable.Read, Function.Call, iterators).
// Scopes nest; NewScope locks its goroutine to its OS thread until Close (as a GradientTape does),
// so use a Scope on the goroutine that opened it: Tensors made on other goroutines are not in it,
// and Close on another goroutine is an error. Using a Tensor after its Scope freed it is the
// error FAILED_PRECONDITION "<function>: tensor is closed (freed by its Scope ...)". (WithScope
// is something else: the Module whose name scope prefixes a variable's name.)
type Scope struct {
	handle  cgo.Handle // in gocairn_scope while this is the innermost Scope; 0 once closed
	parent  *Scope     // the enclosing Scope on the same goroutine; nil: none
	tensors []*Tensor  // made in this Scope (or passed up to it) and not kept; nil entries were kept
}

// NewScope opens a Scope on the calling goroutine, inside the one already open there if any.
// Close it on this goroutine (defer s.Close()).
func NewScope() *Scope {
	runtime.LockOSThread()
	s := &Scope{parent: scopeOf(uintptr(C.gocairn_scope_get()))}
	s.handle = cgo.NewHandle(s)
	C.gocairn_scope_set(C.uintptr_t(s.handle))
	return s
}

// Scoped runs body in a new Scope and frees what body made there, except the tensors it returns,
// which move to the enclosing Scope (or, when none is open, to the caller: Close them or leave
// them to the collector). On an error every tensor made in the Scope is freed, returned or not.
//
//	out, err := cairn.Scoped(func(s *cairn.Scope) ([]*cairn.Tensor, error) { ... })
func Scoped(body func(s *Scope) ([]*Tensor, error)) ([]*Tensor, error) {
	s := NewScope()
	defer s.Close()
	out, err := body(s)
	if err != nil {
		return nil, err
	}
	for _, t := range out {
		if s.remove(t) && s.parent != nil && s.parent.handle != 0 {
			s.parent.tensors = append(s.parent.tensors, t)
		}
	}
	return out, nil
}

// scopeOf is the Scope of a handle from gocairn_scope (always an open Scope's), nil for 0.
func scopeOf(h uintptr) *Scope {
	if h == 0 {
		return nil
	}
	return cgo.Handle(h).Value().(*Scope)
}

// add puts t in the Scope, called on the Scope's goroutine as t is made.
func (s *Scope) add(t *Tensor) { s.tensors = append(s.tensors, t) }

// remove takes t out of the Scope; false when it was not there.
func (s *Scope) remove(t *Tensor) bool {
	for i := len(s.tensors) - 1; i >= 0; i-- { // kept tensors are usually recent ones
		if s.tensors[i] == t {
			s.tensors[i] = nil
			return true
		}
	}
	return false
}

// Keep takes tensors out of this Scope and the Scopes around it, so that no Scope frees them:
// the caller owns them (Close them, or leave them to the collector). Tensors in no Scope, nil
// and closed ones are ignored. Call it on the Scope's goroutine, before Close.
func (s *Scope) Keep(tensors ...*Tensor) {
	for _, t := range tensors {
		for in := s; in != nil && t != nil; in = in.parent {
			if in.remove(t) {
				break
			}
		}
	}
}

// Len is how many Tensors the Scope holds (made in it and not kept, closed ones included).
func (s *Scope) Len() int {
	n := 0
	for _, t := range s.tensors {
		if t != nil {
			n++
		}
	}
	return n
}

// Close frees the Tensors of the Scope (and first those of the Scopes opened inside it and left
// open) and unlocks the goroutine from its thread. Closing twice does nothing. On a goroutine
// where the Scope is not open it frees nothing and returns FAILED_PRECONDITION.
func (s *Scope) Close() error {
	if s == nil || s.handle == 0 {
		return nil
	}
	inner := []*Scope{}
	for in := scopeOf(uintptr(C.gocairn_scope_get())); in != s; in = in.parent {
		if in == nil {
			return newError(CodeFailedPrecondition,
				"Scope.Close: the scope is not open on this goroutine (close it on the goroutine that opened it)")
		}
		inner = append(inner, in)
	}
	for _, in := range append(inner, s) { // innermost first
		parent := uintptr(0)
		if in.parent != nil {
			parent = uintptr(in.parent.handle)
		}
		C.gocairn_scope_set(C.uintptr_t(parent))
		in.handle.Delete()
		in.handle = 0
		runtime.UnlockOSThread()
		for _, t := range in.tensors {
			t.freeInScope()
		}
		in.tensors = nil
	}
	return nil
}
