// Registers the Vulkan backend with the runtime: "vulkan" and "vulkan:N" devices, and a kernel
// for every op that has none on Vulkan, which falls back to the CPU (when allowed) or raises
// Unimplemented naming op, dtype and device.
#include <mutex>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/vulkan_device.h"
#include "runtime/ops/registry.h"

namespace cairn::gpu {

namespace {

std::vector<PhysicalDevice> list_physical(Context& ctx) {
  std::vector<PhysicalDeviceInfo> infos;
  const GpuOptions& o = ctx.gpu_options();
  if (o.vk_instance) {
    // External mode: the engine's instance lists the devices; Cairn makes no instance of its own.
    Ref<Instance> borrowed = Instance::borrow(static_cast<VkInstance>(o.vk_instance));
    auto handles = borrowed->physical_devices();
    for (uint32_t i = 0; i < handles.size(); ++i) infos.push_back(describe(handles[i], i));
  } else {
    infos = list_devices();
  }
  std::vector<PhysicalDevice> out;
  for (const PhysicalDeviceInfo& info : infos) out.push_back(physical_device(info));
  return out;
}

Ref<Device> create_device(Context& ctx, const LogicalDeviceSpec& spec) {
  // Every op's registration has run by now (static initializers), so the rest of the registry
  // can be given the fallback kernel once.
  static std::once_flag once;
  std::call_once(once, [] {
    for (const OpDef* def : OpRegistry::global().list())
      if (!def->kernels[static_cast<int>(DeviceKind::Vulkan)])
        OpRegistry::global().add_kernel(def->name, DeviceKind::Vulkan, no_vulkan_kernel);
  });
  return VulkanDevice::create(ctx, spec);
}

struct Registration {
  Registration() { register_device_backend({"vulkan", list_physical, create_device}); }
} registration;

}  // namespace

}  // namespace cairn::gpu
