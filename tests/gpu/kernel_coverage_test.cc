// Every op in the registry has a Vulkan kernel, or is on the commented exception list below.
// A kernel here is a real one: the backend gives ops without one `no_vulkan_kernel` (CPU
// fallback or Unimplemented), which does not count.
#include <set>
#include <string>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

// Ops that deliberately have no Vulkan kernel, each with the reason.
const std::set<std::string> kNoVulkanKernel = {
};

TEST_CASE("every registered op has a Vulkan kernel or a documented exception") {
  vk_ctx();  // creating a Vulkan device installs the fallback kernel for the rest
  std::string missing, stale;
  for (const OpDef* def : OpRegistry::global().list()) {
    KernelFn fn = def->kernels[static_cast<int>(DeviceKind::Vulkan)];
    bool has_kernel = fn != nullptr && fn != gpu::no_vulkan_kernel;
    bool excepted = kNoVulkanKernel.count(def->name) > 0;
    if (!has_kernel && !excepted) missing += " " + def->name;
    if (has_kernel && excepted) stale += " " + def->name;
  }
  INFO("ops without a Vulkan kernel:" << missing);
  CHECK(missing.empty());
  INFO("ops on the exception list that now have a kernel:" << stale);
  CHECK(stale.empty());
}

}  // namespace
}  // namespace cairn::test
