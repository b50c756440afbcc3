#include "tests/gpu/vk_test_util.h"

#include <cstdlib>

#include "runtime/core/refcount.h"

namespace cairn::test {

namespace {
struct EnableValidation {
  EnableValidation() { setenv("CAIRN_VULKAN_VALIDATION", "1", 0); }
} enable_validation;
}  // namespace

Context& vk_ctx() {
  static Context* c = [] {
    ContextOptions o;
    o.device = "vulkan";
    o.num_threads = 2;
    o.seed = 42;
    return new Context(o);
  }();
  return *c;
}

gpu::VulkanDevice& vk_device() { return static_cast<gpu::VulkanDevice&>(vk_ctx().default_device()); }

Tensor to_vk(const Tensor& t) { return tensor_on_device(t, vk_ctx().default_device()); }
Tensor to_cpu(const Tensor& t) { return tensor_on_device(t, ctx().cpu()); }

}  // namespace cairn::test
