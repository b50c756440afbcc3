package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// Stores an engine's Vulkan handles in `o`. They arrive as integers so that Go never holds them
// as pointers (they are C objects the Go garbage collector must not look at).
static void cairn_go_vulkan_set_handles(cairn_vulkan_options *o, uintptr_t instance, uintptr_t physical_device,
                                        uintptr_t device, uint32_t queue_family, uintptr_t queue) {
  o->instance = (void *)instance;
  o->physical_device = (void *)physical_device;
  o->device = (void *)device;
  o->queue_family = queue_family;
  o->queue = (void *)queue;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// VulkanDevice describes one Vulkan physical device (cairn_vulkan_device_info). Index N is the
// device named "vulkan:N".
type VulkanDevice struct {
	Index                 int
	Name                  string // the driver's device name
	Type                  VulkanDeviceType
	APIVersion            uint32 // VK_MAKE_API_VERSION encoding; see APIVersionString
	DeviceLocalMemory     uint64 // bytes in device-local heaps
	TotalMemory           uint64 // bytes in all heaps
	SubgroupSize          uint32
	SubgroupArithmetic    bool   // reductions use subgroup operations
	Float16               bool   // float16 tensors have kernels (16-bit storage)
	MaxStorageBufferRange uint64 // the largest tensor in bytes
	MaxSharedMemory       uint32 // bytes of workgroup shared memory
}

// DeviceName is the name contexts and tensors use for the device, "vulkan:N".
func (d VulkanDevice) DeviceName() string { return fmt.Sprintf("vulkan:%d", d.Index) }

// APIVersionString is the API version as "major.minor.patch".
func (d VulkanDevice) APIVersionString() string {
	v := d.APIVersion
	return fmt.Sprintf("%d.%d.%d", (v>>22)&0x7f, (v>>12)&0x3ff, v&0xfff)
}

// VulkanAvailable reports whether a Vulkan loader and driver report at least one device; false
// too when the loaded libcairn's ABI is not this package's (NewContext says why).
func VulkanAvailable() bool { return checkLibrary("VulkanAvailable") == nil && cVulkanAvailable() == 1 }

// VulkanDeviceCount is the number of Vulkan devices ("vulkan:0" .. "vulkan:N-1"). It fails with
// UNAVAILABLE without a Vulkan loader or driver.
func VulkanDeviceCount() (int, error) {
	if err := checkLibrary("VulkanDeviceCount"); err != nil {
		return 0, err
	}
	var n C.size_t
	if err := cVulkanDeviceCount(&n); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DescribeVulkanDevice describes device `index`: OUT_OF_RANGE for an index past the last device
// (INVALID_ARGUMENT for a negative one), UNAVAILABLE without Vulkan.
func DescribeVulkanDevice(index int) (VulkanDevice, error) {
	if err := checkLibrary("DescribeVulkanDevice"); err != nil {
		return VulkanDevice{}, err
	}
	if index < 0 {
		return VulkanDevice{}, newError(CodeInvalidArgument, fmt.Sprintf("DescribeVulkanDevice: index must be >= 0, got %d", index))
	}
	var info C.cairn_vulkan_device_info
	if err := cVulkanDeviceInfoInit(&info, C.uint32_t(unsafe.Sizeof(info))); err != nil {
		return VulkanDevice{}, err
	}
	if err := cVulkanDeviceDescribe(C.size_t(index), &info); err != nil {
		return VulkanDevice{}, err
	}
	return VulkanDevice{
		Index:                 index,
		Name:                  C.GoString(info.name), // borrowed by C for the process's life; copied here anyway
		Type:                  VulkanDeviceType(info._type),
		APIVersion:            uint32(info.api_version),
		DeviceLocalMemory:     uint64(info.device_local_memory),
		TotalMemory:           uint64(info.total_memory),
		SubgroupSize:          uint32(info.subgroup_size),
		SubgroupArithmetic:    info.subgroup_arithmetic != 0,
		Float16:               info.float16 != 0,
		MaxStorageBufferRange: uint64(info.max_storage_buffer_range),
		MaxSharedMemory:       uint32(info.max_shared_memory),
	}, nil
}

// VulkanDevices lists every Vulkan device in index order. It fails with UNAVAILABLE without a
// Vulkan loader or driver (check VulkanAvailable first to treat that as "no devices").
func VulkanDevices() ([]VulkanDevice, error) {
	n, err := VulkanDeviceCount()
	if err != nil {
		return nil, err
	}
	devices := make([]VulkanDevice, 0, n)
	for i := 0; i < n; i++ {
		d, err := DescribeVulkanDevice(i)
		if err != nil {
			return nil, err
		}
		devices = append(devices, d)
	}
	return devices, nil
}

// VulkanOptions are the Vulkan settings of NewVulkanContext (cairn_vulkan_options). The zero
// value is the C defaults: Cairn's own instance and device, no memory limit, no CPU fallback.
type VulkanOptions struct {
	// External mode, experimental as in the C API: an engine's own VkInstance, VkPhysicalDevice,
	// VkDevice and VkQueue as integers (e.g. uintptr(unsafe.Pointer(handle)) from a Vulkan
	// binding). Set all four or none.
	// Cairn destroys none of them and runs only 32-bit dtypes there; the engine must not use the
	// queue from another goroutine while Cairn records work on it.
	Instance       uintptr
	PhysicalDevice uintptr
	Device         uintptr
	QueueFamily    uint32 // the family of Queue
	Queue          uintptr
	// MemoryLimit is the bytes of device memory each Vulkan device of the context may hold; 0 means
	// no limit. Exceeding it gives RESOURCE_EXHAUSTED.
	MemoryLimit uint64
	// CPUFallback runs ops without a Vulkan kernel for their dtype on the CPU (inputs and outputs
	// copied; counted by Context.VulkanFallbackCount) instead of failing with UNIMPLEMENTED.
	CPUFallback bool
}

// NewVulkanContext creates a context with Vulkan settings. Without WithDevice its default device
// is "vulkan" (the first discrete GPU, then integrated, virtual, then a CPU implementation);
// WithDevice("cpu") keeps the CPU as default while the Vulkan settings apply to "vulkan:N".
// Fails with UNAVAILABLE without a Vulkan driver, INVALID_ARGUMENT for partial external handles.
func NewVulkanContext(vk VulkanOptions, options ...ContextOption) (*Context, error) {
	if err := checkLibrary("NewVulkanContext"); err != nil {
		return nil, err
	}
	copts := (*C.cairn_vulkan_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_vulkan_options{}))))
	defer C.free(unsafe.Pointer(copts))
	if err := cVulkanOptionsInit(copts, C.uint32_t(unsafe.Sizeof(*copts))); err != nil {
		return nil, err
	}
	// Only what the caller set: a zero field keeps the C default.
	if vk.Instance != 0 || vk.PhysicalDevice != 0 || vk.Device != 0 || vk.QueueFamily != 0 || vk.Queue != 0 {
		C.cairn_go_vulkan_set_handles(copts, C.uintptr_t(vk.Instance), C.uintptr_t(vk.PhysicalDevice),
			C.uintptr_t(vk.Device), C.uint32_t(vk.QueueFamily), C.uintptr_t(vk.Queue))
	}
	if vk.MemoryLimit != 0 {
		copts.memory_limit = C.uint64_t(vk.MemoryLimit)
	}
	if vk.CPUFallback {
		copts.cpu_fallback = cBool(true)
	}
	return createContext("NewVulkanContext", options, func(opts *C.cairn_context_options, out **C.cairn_context) error {
		return cContextCreateVulkan(opts, copts, out)
	})
}

// VulkanFallbackCount is how many op calls on the context's Vulkan device `device` ("" for the
// context's default device) ran on the CPU through VulkanOptions.CPUFallback. Fails with
// INVALID_ARGUMENT when the device is not a Vulkan device, NOT_FOUND for an unknown one.
func (c *Context) VulkanFallbackCount(device string) (uint64, error) {
	if err := checkOpen("Context.VulkanFallbackCount", "context", c); err != nil {
		return 0, err
	}
	var name *C.char
	if device != "" {
		name = C.CString(device)
		defer C.free(unsafe.Pointer(name))
	}
	var n C.uint64_t
	err := cVulkanFallbackCount(c.handle(), name, &n)
	runtime.KeepAlive(c)
	if err != nil {
		return 0, err
	}
	return uint64(n), nil
}

// Synchronize waits until the work queued on every device of the context has finished. Vulkan
// records eager ops and submits them in batches; reading a tensor waits by itself, so this is
// for timing and for handing results to an engine sharing the device.
func (c *Context) Synchronize() error {
	if err := checkOpen("Context.Synchronize", "context", c); err != nil {
		return err
	}
	err := cContextSynchronize(c.handle())
	runtime.KeepAlive(c)
	return err
}
