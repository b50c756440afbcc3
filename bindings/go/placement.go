package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"
)

// WithDevice runs fn inside a device scope of c on `name` ("cpu", "vulkan:0", any device name the
// context resolves), tf.device's counterpart: ops without inputs, tensors made from Go values and
// variables created in fn go to that device, and with soft placement on, ops with inputs run there
// too (docs/placement.md). Scopes nest.
//
// Device scopes belong to an OS thread, so WithDevice locks the goroutine to its thread while fn
// runs: work fn starts on other goroutines is outside the scope. The scope is closed when fn
// returns or panics (the panic goes on). An unknown device name is ErrNotFound, and fn is not run.
// fn must not Close c.
func (c *Context) WithDevice(name string, fn func() error) (err error) {
	if err := checkOpen("Context.WithDevice", "context", c); err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cDeviceScopeEnter(c.handle(), cname); err != nil {
		runtime.KeepAlive(c)
		return err
	}
	defer func() {
		// fn must not Close c: the scope then stays open (harmlessly, holding the runtime's
		// context) until the thread ends.
		if ptr := c.handle(); ptr != nil {
			err = errors.Join(err, cDeviceScopeExit(ptr))
		}
		runtime.KeepAlive(c)
	}()
	return fn()
}

// DeviceScope is the device of the innermost device scope of c open on the calling goroutine's
// thread ("" when none). Outside WithDevice the goroutine may move between threads, so this is
// meaningful inside fn only.
func (c *Context) DeviceScope() string {
	ptr := c.handle()
	if ptr == nil {
		return ""
	}
	var name *C.char
	if err := cDeviceScopeCurrent(ptr, &name); err != nil || name == nil {
		runtime.KeepAlive(c)
		return ""
	}
	s := C.GoString(name)
	runtime.KeepAlive(c)
	return s
}

// SetSoftPlacement turns soft placement on or off for c (default off). On, an op whose inputs are
// on different devices, or that runs inside WithDevice, runs on the scope's device (else its first
// input's) with the other inputs copied there; each copy is counted (AutoCopies). Off, inputs on
// different devices are ErrInvalidArgument: no copy is ever implicit.
func (c *Context) SetSoftPlacement(on bool) error {
	if err := checkOpen("Context.SetSoftPlacement", "context", c); err != nil {
		return err
	}
	err := cContextSetSoftPlacement(c.handle(), C.int32_t(cBool(on)))
	runtime.KeepAlive(c)
	return err
}

// SoftPlacement reports whether soft placement is on.
func (c *Context) SoftPlacement() (bool, error) {
	if err := checkOpen("Context.SoftPlacement", "context", c); err != nil {
		return false, err
	}
	var on C.int32_t
	err := cContextSoftPlacement(c.handle(), &on)
	runtime.KeepAlive(c)
	return on != 0, err
}

// AutoCopies is the number of input copies soft placement has made in c so far, on every thread.
func (c *Context) AutoCopies() (uint64, error) {
	if err := checkOpen("Context.AutoCopies", "context", c); err != nil {
		return 0, err
	}
	var n C.uint64_t
	err := cContextAutoCopies(c.handle(), &n)
	runtime.KeepAlive(c)
	return uint64(n), err
}
