// The Vulkan instance and physical-device enumeration. Cairn owns one process-wide instance,
// created on first use; an engine may instead hand in its own (external mode), which Cairn never
// destroys. CAIRN_VULKAN_VALIDATION=1 enables the Khronos validation layer with a debug messenger
// that counts errors (tests fail on any).
#pragma once

#include "gpu/vulkan/loader.h"

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/refcount.h"
#include "runtime/eager/context.h"

namespace cairn::gpu {

// One memory heap. `budget` and `usage` are the driver's VK_EXT_memory_budget figures after
// sane_heap_budget (without the extension: budget == size, usage == 0).
struct HeapInfo {
  uint64_t size = 0;
  bool device_local = false;
  uint64_t budget = 0;
  uint64_t usage = 0;
};

// A heap's budget and this process's use of it, as Cairn believes them.
struct HeapBudget {
  uint64_t budget = 0;
  uint64_t usage = 0;
  bool fallback = false;  // the driver's figures were missing or rejected
};

// The rules for a driver's VK_EXT_memory_budget figures of one heap of `size` bytes. Drivers have
// reported a budget above the heap's size (Intel on Windows, llama.cpp#29277), a budget that
// underflowed to nearly 2^64 (RADV's small heap), and 0; the spec requires
// 0 < budget <= size and lets usage pass the budget only when the process oversubscribes. So:
//  - not reported (no extension): budget = size, usage = 0;
//  - budget 0, or budget above size (the underflow included): budget = size;
//  - usage above size: clamped to size;
//  - usage above the (sane) budget: the budget cannot be trusted either, budget = size (and usage
//    is then at most size by the rule before).
// `fallback` says whether any rule changed the driver's figures.
HeapBudget sane_heap_budget(uint64_t size, bool reported, uint64_t budget, uint64_t usage);

struct PhysicalDeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t api_version = 0;
  std::vector<HeapInfo> heaps;
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;
  uint64_t max_storage_buffer_range = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_shared_memory = 0;
  uint64_t min_storage_offset_alignment = 0;
  uint32_t max_storage_buffers = 0;  // maxPerStageDescriptorStorageBuffers
  bool float16_storage = false;  // storageBuffer16BitAccess
  bool int8_storage = false;     // storageBuffer8BitAccess
  uint32_t compute_queues = 0;   // queues of the first family with compute
  bool memory_budget = false;    // the device lists VK_EXT_memory_budget
  uint64_t max_allocation = 0;   // maxMemoryAllocationSize (0: not reported)
};

class Instance : public RefCounted {
 public:
  // The process-wide instance; throws Unavailable when there is no loader or driver.
  static Ref<Instance> shared();
  // Wraps an engine's instance; Cairn destroys nothing.
  static Ref<Instance> borrow(VkInstance instance);
  ~Instance() override;

  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }
  // Physical devices in the driver's order; "vulkan:N" is index N here.
  std::vector<VkPhysicalDevice> physical_devices() const;

 private:
  Instance() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool owned_ = false;
  bool validation_ = false;
};

PhysicalDeviceInfo describe(VkPhysicalDevice device, uint32_t index);
// The device's heaps now, with budgets when `with_budget` (the device lists VK_EXT_memory_budget;
// querying needs nothing enabled on a VkDevice, only Vulkan 1.1's vkGetPhysicalDeviceMemoryProperties2,
// which the instance's API version 1.2 provides).
std::vector<HeapInfo> query_heaps(VkPhysicalDevice device, bool with_budget);
// The heap whose budget PhysicalDevice::memory reports: the largest device-local heap (a small
// device-local heap is often the PCIe BAR window, llama.cpp#22368), else the largest heap; -1 when
// there are none.
int main_heap(const std::vector<HeapInfo>& heaps);
// The compute queue logical device `split_index` of a split physical device takes.
inline uint32_t split_queue_index(uint32_t split_index, uint32_t queue_count) {
  return queue_count ? split_index % queue_count : 0;
}
// Every physical device of the shared instance; throws Unavailable without Vulkan.
std::vector<PhysicalDeviceInfo> list_devices();
// The index "vulkan" picks: the first discrete GPU, then integrated, then virtual, then CPU.
uint32_t preferred_device(const std::vector<PhysicalDeviceInfo>& devices);
// How the runtime's device configuration sees a device: name "vulkan:N", heaps (with budgets),
// queues; memory = main_heap's budget.
PhysicalDevice physical_device(const PhysicalDeviceInfo& info);

// Validation messages of error severity seen so far (only counted with validation on).
uint64_t validation_error_count();
bool validation_requested();

}  // namespace cairn::gpu
