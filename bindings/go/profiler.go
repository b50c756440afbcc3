package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// ---- Profiler (tf.profiler, tf.summary.trace_on / trace_export) ----

// ProfilerOption sets a field of cairn_profiler_options.
type ProfilerOption func(*C.cairn_profiler_options)

// WithMaxEvents sets how many events are kept (default 1000000, more than 0); later ones are
// counted as dropped.
func WithMaxEvents(n uint64) ProfilerOption {
	return func(o *C.cairn_profiler_options) { o.max_events = C.uint64_t(n) }
}

// WithVulkanTimestamps records GPU timestamps on Vulkan devices that support them (default true).
func WithVulkanTimestamps(on bool) ProfilerOption {
	return func(o *C.cairn_profiler_options) { o.vulkan_timestamps = cBool(on) }
}

// StartProfiler turns the profiler on for the whole process, clearing what an earlier profile
// left: each eager op, each replay of a Function and each node of it, and each batch of Vulkan
// work records its name, device, start and duration until StopProfiler. Errors:
// FAILED_PRECONDITION when it is already on; INVALID_ARGUMENT for WithMaxEvents(0).
func StartProfiler(options ...ProfilerOption) error {
	if err := checkLibrary("StartProfiler"); err != nil {
		return err
	}
	var o C.cairn_profiler_options
	if err := cProfilerOptionsInit(&o, C.uint32_t(unsafe.Sizeof(o))); err != nil {
		return err
	}
	for _, opt := range options {
		opt(&o)
	}
	return cProfilerStart(&o)
}

// ProfilerActive says whether the profiler is on.
func ProfilerActive() bool { return cProfilerActive() != 0 }

// StopProfiler turns the profiler off and returns what it recorded, events sorted by start.
// Errors: FAILED_PRECONDITION when it is off.
func StopProfiler() (*Profile, error) {
	var out *C.cairn_profile
	if err := cProfilerStop(&out); err != nil {
		return nil, err
	}
	p := &Profile{ptr: out}
	runtime.SetFinalizer(p, (*Profile).Close)
	return p, nil
}

// Profile is a stopped profile. It may be read from several goroutines at once. Close it (a
// finalizer frees a forgotten one).
type Profile struct {
	ptr *C.cairn_profile
}

// ProfileEvent is one recorded event.
type ProfileEvent struct {
	Name     string        // the op ("Add"), replayed node ("MatMul_3"), function, or GPU batch
	Category string        // "eager", "graph", "function" or "gpu"
	Device   string        // "cpu", "vulkan:0"
	Start    time.Duration // since StartProfiler
	Duration time.Duration
}

// Close frees the profile. Closing twice does nothing.
func (p *Profile) Close() {
	if p == nil || p.ptr == nil {
		return
	}
	runtime.SetFinalizer(p, nil)
	cProfileFree(p.ptr)
	p.ptr = nil
}

func (p *Profile) handle() *C.cairn_profile {
	if p == nil {
		return nil
	}
	return p.ptr
}

// EventCount is how many events the profile holds; 0 after Close.
func (p *Profile) EventCount() int {
	var n C.size_t
	if p.handle() == nil || cProfileEventCount(p.ptr, &n) != nil {
		return 0
	}
	runtime.KeepAlive(p)
	return int(n)
}

// Dropped is how many events were not kept because the WithMaxEvents limit was reached.
func (p *Profile) Dropped() uint64 {
	var n C.uint64_t
	if p.handle() == nil || cProfileDropped(p.ptr, &n) != nil {
		return 0
	}
	runtime.KeepAlive(p)
	return uint64(n)
}

// Event is event i (0 = the earliest). Errors: OUT_OF_RANGE for i outside [0, EventCount).
func (p *Profile) Event(i int) (ProfileEvent, error) {
	if err := checkOpen("Profile.Event", "profile", p); err != nil {
		return ProfileEvent{}, err
	}
	if i < 0 {
		return ProfileEvent{}, newError(CodeOutOfRange, fmt.Sprintf("Profile.Event: event %d (events count from 0)", i))
	}
	var name, category, device *C.char
	var start, duration C.int64_t
	err := cProfileEvent(p.ptr, C.size_t(i), &name, &category, &device, &start, &duration)
	defer runtime.KeepAlive(p)
	if err != nil {
		return ProfileEvent{}, err
	}
	return ProfileEvent{
		Name: C.GoString(name), Category: C.GoString(category), Device: C.GoString(device),
		Start: time.Duration(start), Duration: time.Duration(duration),
	}, nil
}

// Events are all the events, sorted by start.
func (p *Profile) Events() ([]ProfileEvent, error) {
	events := make([]ProfileEvent, p.EventCount())
	for i := range events {
		e, err := p.Event(i)
		if err != nil {
			return nil, err
		}
		events[i] = e
	}
	return events, nil
}

// ChromeTrace is the profile as Chrome trace-event JSON (Perfetto, chrome://tracing).
func (p *Profile) ChromeTrace() (string, error) {
	if err := checkOpen("Profile.ChromeTrace", "profile", p); err != nil {
		return "", err
	}
	var out *C.char
	err := cProfileChromeTrace(p.ptr, &out)
	runtime.KeepAlive(p)
	return takeString(out, err)
}

// ExportChromeTrace writes the Chrome trace-event JSON to path. Errors: UNAVAILABLE naming the path.
func (p *Profile) ExportChromeTrace(path string) error {
	if err := checkOpen("Profile.ExportChromeTrace", "profile", p); err != nil {
		return err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err := cProfileExportChromeTrace(p.ptr, cpath)
	runtime.KeepAlive(p)
	return err
}

// ExportToLogdir writes the trace gzipped where TensorBoard's profile plugin looks,
// "<logdir>/plugins/profile/<runName>/<hostname>.trace.json.gz", and returns that path. An empty
// runName means the date and time. Errors: INVALID_ARGUMENT for a runName with '/'; UNAVAILABLE
// naming the path.
func (p *Profile) ExportToLogdir(logdir, runName string) (string, error) {
	if err := checkOpen("Profile.ExportToLogdir", "profile", p); err != nil {
		return "", err
	}
	cdir, crun := C.CString(logdir), C.CString(runName)
	defer C.free(unsafe.Pointer(cdir))
	defer C.free(unsafe.Pointer(crun))
	var out *C.char
	err := cProfileExportToLogdir(p.ptr, cdir, crun, &out)
	runtime.KeepAlive(p)
	return takeString(out, err)
}
