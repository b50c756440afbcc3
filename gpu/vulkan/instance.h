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

struct HeapInfo {
  uint64_t size = 0;
  bool device_local = false;
};

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
// Every physical device of the shared instance; throws Unavailable without Vulkan.
std::vector<PhysicalDeviceInfo> list_devices();
// The index "vulkan" picks: the first discrete GPU, then integrated, then virtual, then CPU.
uint32_t preferred_device(const std::vector<PhysicalDeviceInfo>& devices);
// How the runtime's device configuration sees a device: name "vulkan:N", heaps, queues.
PhysicalDevice physical_device(const PhysicalDeviceInfo& info);

// Validation messages of error severity seen so far (only counted with validation on).
uint64_t validation_error_count();
bool validation_requested();

}  // namespace cairn::gpu
