package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// The log trampolines in callbacks.go.
extern void cairnGoLog(void *user_data, cairn_log_level level, char *message);
extern void cairnGoLogRelease(void *user_data);

static void cairn_go_log_shim(void *user_data, cairn_log_level level, const char *message) {
  cairnGoLog(user_data, level, (char *)message);
}

// Routes `o`'s log messages to the Go function behind the runtime/cgo handle `h`, and has the
// runtime delete the handle (log_release) once no message can come any more. The handle is stored
// only in C memory, as a pointer-sized integer.
static void cairn_go_set_log(cairn_context_options *o, uintptr_t h) {
  o->log_fn = cairn_go_log_shim;
  o->log_user_data = (void *)h;
  o->log_release = cairnGoLogRelease;
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Context owns devices, the thread pool, the log callback and the RNG seed. It may be used from
// several goroutines at once. Tensors made from it stay valid after it is closed, and objects and
// checkpoints made from it keep it alive: its LogFunc may be called until the last of them is
// closed too.
type Context struct {
	ptr      *C.cairn_context
	borrowed bool // the context a Function's body gets while tracing: the runtime's, not ours to free
}

// ContextOption sets a field of cairn_context_options; unset fields keep the C defaults
// (CAIRN_CONTEXT_OPTIONS_INIT).
type ContextOption func(*contextConfig)

type contextConfig struct {
	device     *string
	numThreads *int
	seed       *uint64
	logLevel   *LogLevel
	logFunc    LogFunc
}

// LogFunc receives the context's log messages. It is called from whichever thread logs, so it
// must be safe for concurrent use. A panic inside it is recovered and printed to stderr. The
// binding holds it (in a runtime/cgo handle) until the runtime says no call can come any more:
// after Close and the last object or checkpoint made from the context.
type LogFunc func(level LogLevel, message string)

// WithDevice sets the default device: "cpu" (the default), "vulkan" or "vulkan:N".
func WithDevice(name string) ContextOption {
	return func(c *contextConfig) { c.device = &name }
}

// WithNumThreads sets the number of intra-op threads including the caller; 0 (default) uses all cores.
func WithNumThreads(n int) ContextOption {
	return func(c *contextConfig) { c.numThreads = &n }
}

// WithSeed sets the base seed of random ops (default 0).
func WithSeed(seed uint64) ContextOption {
	return func(c *contextConfig) { c.seed = &seed }
}

// WithLogLevel sets the least severe level delivered (default LogWarning).
func WithLogLevel(level LogLevel) ContextOption {
	return func(c *contextConfig) { c.logLevel = &level }
}

// WithLogFunc sends log messages to fn instead of stderr.
func WithLogFunc(fn LogFunc) ContextOption {
	return func(c *contextConfig) { c.logFunc = fn }
}

// NewContext creates a context. Close it when done.
func NewContext(options ...ContextOption) (*Context, error) {
	return createContext("NewContext", options, cContextCreate)
}

// createContext fills cairn_context_options from `options` (in C memory, with the log callback
// behind a cgo handle) and makes the context with `create`, one of the C constructors. `fn`
// names the Go constructor in errors.
func createContext(fn string, options []ContextOption,
	create func(*C.cairn_context_options, **C.cairn_context) error) (*Context, error) {
	if err := checkLibrary(fn); err != nil {
		return nil, err
	}
	var cfg contextConfig
	for _, set := range options {
		set(&cfg)
	}
	opts := (*C.cairn_context_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_context_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cContextOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	if cfg.device != nil {
		device := C.CString(*cfg.device)
		defer C.free(unsafe.Pointer(device))
		opts.device = device
	}
	if cfg.numThreads != nil {
		if *cfg.numThreads > math.MaxInt32 {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: num_threads %d does not fit in an int32", fn, *cfg.numThreads))
		}
		opts.num_threads = C.int32_t(*cfg.numThreads)
	}
	if cfg.seed != nil {
		opts.seed = C.uint64_t(*cfg.seed)
	}
	if cfg.logLevel != nil {
		opts.log_level = C.cairn_log_level(*cfg.logLevel)
	}
	var log cgo.Handle
	if cfg.logFunc != nil {
		log = cgo.NewHandle(cfg.logFunc)
		C.cairn_go_set_log(opts, C.uintptr_t(log))
	}
	c := &Context{}
	if err := create(opts, &c.ptr); err != nil {
		// No context was made, so the runtime never calls log_release: the handle is ours to delete.
		deleteHandle(log)
		return nil, err
	}
	runtime.SetFinalizer(c, (*Context).Close)
	return c, nil
}

// Close drops the context. Tensors made from it stay valid; objects and checkpoints made from it
// keep it alive until they are closed. Closing twice does nothing, and neither does closing the
// context a Function's body receives (the runtime owns that one).
func (c *Context) Close() {
	if c == nil || c.ptr == nil || c.borrowed {
		return
	}
	runtime.SetFinalizer(c, nil)
	cContextFree(c.ptr)
	c.ptr = nil
}

// handle is the C context, NULL for a nil or closed Context.
func (c *Context) handle() *C.cairn_context {
	if c == nil {
		return nil
	}
	return c.ptr
}

// use is the C context for a call of fn, or the binding's error for a nil or closed Context.
func (c *Context) use(fn string) (*C.cairn_context, error) {
	if c == nil || c.ptr == nil {
		return nil, handleError(fn, "context", c == nil)
	}
	return c.ptr, nil
}

// Device is the name of the context's default device, e.g. "cpu"; "" after Close.
func (c *Context) Device() string {
	name := C.GoString(cContextDevice(c.handle()))
	runtime.KeepAlive(c)
	return name
}
