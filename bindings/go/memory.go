package cairn

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Go collector paces itself on the Go heap, where a Tensor is a few bytes: the megabytes of
// tensor data behind it live in C and are invisible to it. A training step that leaves its
// tensors to the finalizers makes little Go garbage, so collections (and with them the finalizers
// that free the data) come far too rarely: issue 14 measured 515 MB leaked per 1,000 steps of a
// 256-unit Dense layer. Go has no API to tell the collector about external memory, so the binding
// counts the data bytes of the Tensors it holds open and runs runtime.GC itself when they grew
// past a GOGC-like goal since the last collection it started.
var native struct {
	live    atomic.Int64 // data bytes of the open Tensors (cairn_tensor_nbytes at creation)
	floor   atomic.Int64 // the least live has been since the last collection started here
	trigger atomic.Int64 // a Tensor made while live is above this starts a collection
	percent atomic.Int64 // growth over floor, in percent, that triggers; negative: never
	minimum atomic.Int64 // growth below this never triggers
	running atomic.Bool  // a collection started here is under way
	count   atomic.Int64 // collections started here
	// Held to set floor and trigger from live: without it, collectForNative could write a floor
	// read before the finalizers' last frees, and keep the trigger too high.
	mu sync.Mutex
}

// Defaults of the native-memory trigger: a collection when the native bytes doubled since the
// last one (GOGC's default ratio), but never for less than 64 MiB of growth, so small programs
// are not collected on every step.
const (
	defaultNativeGCPercent = 100
	defaultNativeGCMinimum = 64 << 20
)

func init() {
	native.percent.Store(defaultNativeGCPercent)
	native.minimum.Store(defaultNativeGCMinimum)
	// CAIRN_NATIVE_GC is to the native bytes what GOGC is to the heap: a percent, or "off".
	if v, ok := os.LookupEnv("CAIRN_NATIVE_GC"); ok {
		if strings.EqualFold(v, "off") {
			native.percent.Store(-1)
		} else if p, err := strconv.Atoi(v); err == nil {
			native.percent.Store(int64(p))
		}
	}
	setNativeTrigger(0)
}

// setNativeTrigger sets the floor and the trigger that follows from it; hold native.mu (or run
// init).
func setNativeTrigger(floor int64) {
	native.floor.Store(floor)
	p := native.percent.Load()
	if p < 0 {
		native.trigger.Store(math.MaxInt64)
		return
	}
	growth := max(floor/100*p, native.minimum.Load())
	native.trigger.Store(floor + growth)
}

// trackNative counts n more bytes held by Tensors, and collects when that crosses the trigger.
func trackNative(n int64) {
	if native.live.Add(n) > native.trigger.Load() {
		collectForNative()
	}
}

// untrackNative counts n bytes freed; a new low lowers the floor, and with it the trigger (the
// finalizers that a collection queued free their tensors after runtime.GC returns).
func untrackNative(n int64) {
	if native.live.Add(-n) < native.floor.Load() {
		lowerNativeFloor()
	}
}

// lowerNativeFloor is untrackNative's rare path, apart so that untrackNative inlines.
//
//go:noinline
func lowerNativeFloor() {
	native.mu.Lock()
	defer native.mu.Unlock()
	if live := native.live.Load(); live < native.floor.Load() {
		setNativeTrigger(live)
	}
}

// collectForNative runs one collection at a time; a goroutine that finds one running goes on.
// It collects on the goroutine that crossed the trigger, which slows the fastest allocator down
// until the finalizers caught up.
func collectForNative() {
	if !native.running.CompareAndSwap(false, true) {
		return
	}
	runtime.GC()
	native.count.Add(1)
	native.mu.Lock()
	setNativeTrigger(native.live.Load())
	native.mu.Unlock()
	native.running.Store(false)
}

// SetNativeGCPercent sets how much the native bytes of open Tensors (NativeBytes) may grow, in
// percent of what they were after the last collection, before the binding runs runtime.GC so
// that the finalizers free the tensors nobody closed. It is GOGC for tensor data, which the Go
// collector cannot see: 100 (the default, or the environment's CAIRN_NATIVE_GC) lets them
// double; a negative value turns the trigger off. It returns the previous setting.
func SetNativeGCPercent(percent int) int {
	native.mu.Lock()
	defer native.mu.Unlock()
	old := native.percent.Swap(int64(percent))
	setNativeTrigger(native.floor.Load())
	return int(old)
}

// SetNativeGCMinimum sets the least growth of the native bytes, in bytes, that triggers a
// collection (default 64 MiB), and returns the previous setting.
func SetNativeGCMinimum(bytes int64) int64 {
	native.mu.Lock()
	defer native.mu.Unlock()
	old := native.minimum.Swap(max(bytes, 0))
	setNativeTrigger(native.floor.Load())
	return old
}

// NativeBytes is the size of the data of the Tensors this binding holds open (closed ones and
// the ones finalizers freed are not counted). Approximately: new tensors are added in batches of
// 64 KiB (or 64 tensors) per goroutine, so up to that much of the newest small tensors may be
// missing, and tensors of less than 256 bytes leave the count when the collector frees their Go
// side rather than on Close. A tensor that shares its buffer with another (Tensor.CopyToDevice to
// its own device, the inputs of a Function body) counts in full.
func NativeBytes() int64 { return native.live.Load() }

// NativeGCs is how many collections the native bytes have triggered so far.
func NativeGCs() int64 { return native.count.Load() }
