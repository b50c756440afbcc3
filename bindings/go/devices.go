package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"unsafe"
)

// Device configuration (tf.config): the Devices section of cairn.h. Configure a context right
// after NewContext: its devices initialize at its first tensor, op, device lookup or
// LogicalDevices call, and from then on every setter fails with FAILED_PRECONDITION saying so
// (TensorFlow's "cannot be modified after being initialized"). See docs/devices-bindings.md.

// PhysicalDevice describes one physical device (cairn_physical_device_info): the CPU ("cpu:0",
// always first) or a Vulkan device ("vulkan:N", the driver's order).
type PhysicalDevice struct {
	Name        string       // "cpu:0", "vulkan:0"
	Type        string       // "CPU" or "VULKAN"
	Description string       // "x86_64, 2 cores"; a Vulkan device's driver name
	DeviceType  string       // "cpu" for the host; for Vulkan "discrete", "integrated", "virtual", "cpu", "other"
	Memory      uint64       // bytes the device may hold: RAM, or the largest device-local heap's budget
	Queues      int          // compute queues; the logical devices of a split device take one each where there are several
	Heaps       []MemoryHeap // its memory heaps, budgets and usage as queried now
}

// MemoryHeap is one memory heap of a physical device (cairn_memory_heap).
type MemoryHeap struct {
	Size        uint64 // bytes
	Budget      uint64 // bytes the process may use now: the driver's VK_EXT_memory_budget figure where sane, else Size
	Usage       uint64 // bytes the process uses (0 where the driver does not say)
	DeviceLocal bool   // device-local memory (always true for the CPU's heap)
}

// LogicalDeviceConfig is one logical device of a split physical device
// (cairn_logical_device_config); the zero value has no memory limit.
type LogicalDeviceConfig struct {
	MemoryLimit uint64 // bytes its tensors may hold; 0: no limit
}

// LogicalDevice describes one logical device, what tensors live on (cairn_logical_device_info).
type LogicalDevice struct {
	Name        string // "cpu", "cpu:1", "vulkan:0"
	Physical    string // the physical device it is made from
	MemoryLimit uint64 // bytes; 0: no limit
}

// MemoryInfo is a logical device's memory (cairn_memory_info, tf.config.experimental.get_memory_info).
type MemoryInfo struct {
	Current uint64 // bytes held by its tensors now (a few closed ones under 256 bytes may wait: Tensor.Close)
	Peak    uint64 // the most held since creation or the last ResetMemoryStats
	Limit   uint64 // its memory limit; 0: none
	Budget  uint64 // bytes it may use now: RAM on the CPU, the driver's live budget on Vulkan
}

// PhysicalDevices lists the physical devices, the CPU first, each with its heaps. Listing loads
// the Vulkan driver but does not initialize the context's devices.
func (c *Context) PhysicalDevices() ([]PhysicalDevice, error) {
	const fn = "Context.PhysicalDevices"
	cctx, err := c.use(fn)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(c)
	var n C.size_t
	if err := cContextPhysicalDeviceCount(cctx, &n); err != nil {
		return nil, err
	}
	devices := make([]PhysicalDevice, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var info C.cairn_physical_device_info
		if err := cPhysicalDeviceInfoInit(&info, C.uint32_t(unsafe.Sizeof(info))); err != nil {
			return nil, err
		}
		if err := cContextPhysicalDevice(cctx, i, &info); err != nil {
			return nil, err
		}
		d := PhysicalDevice{
			Name:        C.GoString(info.name), // borrowed by C for the process's life; copied anyway
			Type:        C.GoString(info._type),
			Description: C.GoString(info.description),
			DeviceType:  C.GoString(info.device_type),
			Memory:      uint64(info.memory),
			Queues:      int(info.queues),
			Heaps:       make([]MemoryHeap, 0, int(info.num_heaps)),
		}
		for h := C.size_t(0); h < C.size_t(info.num_heaps); h++ {
			var heap C.cairn_memory_heap
			if err := cMemoryHeapInit(&heap, C.uint32_t(unsafe.Sizeof(heap))); err != nil {
				return nil, err
			}
			if err := cContextPhysicalDeviceHeap(cctx, i, h, &heap); err != nil {
				return nil, err
			}
			d.Heaps = append(d.Heaps, MemoryHeap{
				Size:        uint64(heap.size),
				Budget:      uint64(heap.budget),
				Usage:       uint64(heap.usage),
				DeviceLocal: heap.device_local != 0,
			})
		}
		devices = append(devices, d)
	}
	return devices, nil
}

// SetVisibleDevices makes only these physical devices (and the CPU, always) visible: logical
// devices are made from them. No names hides every Vulkan device. The environment variable
// CAIRN_VISIBLE_DEVICES ("cpu:0,vulkan:1") does the same when a context is created.
// NOT_FOUND names an unknown device; FAILED_PRECONDITION once the devices are initialized.
func (c *Context) SetVisibleDevices(names ...string) error {
	cctx, err := c.use("Context.SetVisibleDevices")
	if err != nil {
		return err
	}
	array, free := cStrings(names)
	defer free()
	err = cContextSetVisibleDevices(cctx, array, C.size_t(len(names)))
	runtime.KeepAlive(c)
	return err
}

// VisibleDevices is the visible physical devices, e.g. ["cpu:0" "vulkan:0"].
func (c *Context) VisibleDevices() ([]string, error) {
	cctx, err := c.use("Context.VisibleDevices")
	if err != nil {
		return nil, err
	}
	var out *C.char
	err = cContextVisibleDevices(cctx, &out)
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	defer cFree(unsafe.Pointer(out))
	s := C.GoString(out)
	if s == "" {
		return []string{}, nil
	}
	return strings.Split(s, ","), nil
}

// SetMemoryGrowth sets the memory growth of a Vulkan physical device: true (the default)
// allocates as tensors need memory; false reserves each of its logical devices' memory limit (or
// most of the budget without one) when the device is created. INVALID_ARGUMENT for the CPU,
// NOT_FOUND for an unknown device, FAILED_PRECONDITION once the devices are initialized.
func (c *Context) SetMemoryGrowth(physical string, grow bool) error {
	cctx, err := c.use("Context.SetMemoryGrowth")
	if err != nil {
		return err
	}
	name := C.CString(physical)
	defer C.free(unsafe.Pointer(name))
	var g C.int32_t
	if grow {
		g = 1
	}
	err = cContextSetMemoryGrowth(cctx, name, g)
	runtime.KeepAlive(c)
	return err
}

// MemoryGrowth is the memory growth setting of a physical device (true for the CPU).
func (c *Context) MemoryGrowth(physical string) (bool, error) {
	cctx, err := c.use("Context.MemoryGrowth")
	if err != nil {
		return false, err
	}
	name := C.CString(physical)
	defer C.free(unsafe.Pointer(name))
	var out C.int32_t
	err = cContextMemoryGrowth(cctx, name, &out)
	runtime.KeepAlive(c)
	return out != 0, err
}

// SetLogicalDevices splits physical device `physical` ("cpu:0", "vulkan:0") into one logical
// device per config (1 to 64), to run multi-device code on one device; a single config sets a
// memory limit for the whole device. The CPU's become "cpu:0".."cpu:N-1"; Vulkan's are numbered
// across the visible Vulkan devices. INVALID_ARGUMENT for a count out of range or limits above
// the device's memory (alone or added up), NOT_FOUND for an unknown device, FAILED_PRECONDITION
// when the device was configured already or the devices are initialized.
func (c *Context) SetLogicalDevices(physical string, configs ...LogicalDeviceConfig) error {
	cctx, err := c.use("Context.SetLogicalDevices")
	if err != nil {
		return err
	}
	name := C.CString(physical)
	defer C.free(unsafe.Pointer(name))
	var array *C.cairn_logical_device_config
	if len(configs) > 0 {
		// In C memory: a Go slice of C structs would do too, but this keeps cgo's pointer rules trivial.
		size := C.size_t(unsafe.Sizeof(C.cairn_logical_device_config{}))
		array = (*C.cairn_logical_device_config)(C.calloc(C.size_t(len(configs)), size))
		defer C.free(unsafe.Pointer(array))
		raw := unsafe.Slice(array, len(configs))
		for i, cfg := range configs {
			if err := cLogicalDeviceConfigInit(&raw[i], C.uint32_t(size)); err != nil {
				return err
			}
			raw[i].memory_limit = C.uint64_t(cfg.MemoryLimit)
		}
	}
	err = cContextSetLogicalDevices(cctx, name, array, C.size_t(len(configs)))
	runtime.KeepAlive(c)
	return err
}

// LogicalDevices lists the logical devices, the CPU's first. It initializes the devices, which
// closes the configuration.
func (c *Context) LogicalDevices() ([]LogicalDevice, error) {
	cctx, err := c.use("Context.LogicalDevices")
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(c)
	var n C.size_t
	if err := cContextLogicalDeviceCount(cctx, &n); err != nil {
		return nil, err
	}
	devices := make([]LogicalDevice, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var info C.cairn_logical_device_info
		if err := cLogicalDeviceInfoInit(&info, C.uint32_t(unsafe.Sizeof(info))); err != nil {
			return nil, err
		}
		if err := cContextLogicalDevice(cctx, i, &info); err != nil {
			return nil, err
		}
		devices = append(devices, LogicalDevice{
			Name:        C.GoString(info.name),
			Physical:    C.GoString(info.physical),
			MemoryLimit: uint64(info.memory_limit),
		})
	}
	return devices, nil
}

// SetThreads sets the thread counts: intra-op (one op's work, counting the caller) and inter-op
// (independent work such as a mirrored strategy's replicas); 0 = all cores. INVALID_ARGUMENT
// outside 0..4096, FAILED_PRECONDITION once the devices are initialized.
func (c *Context) SetThreads(intraOp, interOp int) error {
	const fn = "Context.SetThreads"
	cctx, err := c.use(fn)
	if err != nil {
		return err
	}
	for _, n := range []int{intraOp, interOp} {
		if n < math.MinInt32 || n > math.MaxInt32 {
			return newError(CodeInvalidArgument, fmt.Sprintf("%s: thread count %d does not fit in an int32", fn, n))
		}
	}
	err = cContextSetThreads(cctx, C.int32_t(intraOp), C.int32_t(interOp))
	runtime.KeepAlive(c)
	return err
}

// Threads is the thread counts set (0 = all cores): intra-op, then inter-op.
func (c *Context) Threads() (intraOp, interOp int, err error) {
	cctx, err := c.use("Context.Threads")
	if err != nil {
		return 0, 0, err
	}
	var intra, inter C.int32_t
	err = cContextThreads(cctx, &intra, &inter)
	runtime.KeepAlive(c)
	return int(intra), int(inter), err
}

// MemoryInfo is the memory of logical device `device` ("cpu", "cpu:1", "vulkan:0"), creating it
// if needed. NOT_FOUND for an unknown device.
func (c *Context) MemoryInfo(device string) (MemoryInfo, error) {
	cctx, err := c.use("Context.MemoryInfo")
	if err != nil {
		return MemoryInfo{}, err
	}
	name := C.CString(device)
	defer C.free(unsafe.Pointer(name))
	var info C.cairn_memory_info
	if err := cMemoryInfoInit(&info, C.uint32_t(unsafe.Sizeof(info))); err != nil {
		return MemoryInfo{}, err
	}
	err = cContextMemoryInfo(cctx, name, &info)
	runtime.KeepAlive(c)
	if err != nil {
		return MemoryInfo{}, err
	}
	return MemoryInfo{
		Current: uint64(info.current),
		Peak:    uint64(info.peak),
		Limit:   uint64(info.limit),
		Budget:  uint64(info.budget),
	}, nil
}

// ResetMemoryStats sets the device's peak to its current use. NOT_FOUND for an unknown device.
func (c *Context) ResetMemoryStats(device string) error {
	cctx, err := c.use("Context.ResetMemoryStats")
	if err != nil {
		return err
	}
	name := C.CString(device)
	defer C.free(unsafe.Pointer(name))
	err = cContextResetMemoryStats(cctx, name)
	runtime.KeepAlive(c)
	return err
}

// DevicesInitialized reports whether the context's devices are initialized (the configuration
// is then closed).
func (c *Context) DevicesInitialized() (bool, error) {
	cctx, err := c.use("Context.DevicesInitialized")
	if err != nil {
		return false, err
	}
	var out C.int32_t
	err = cContextDevicesInitialized(cctx, &out)
	runtime.KeepAlive(c)
	return out != 0, err
}
