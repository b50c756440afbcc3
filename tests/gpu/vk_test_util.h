// Vulkan test helpers. Linking this turns on the Khronos validation layer for the test binary
// (CAIRN_VULKAN_VALIDATION=1, unless the environment says otherwise); every check of a Vulkan
// result also checks that the layer reported no errors.
#pragma once

#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/vulkan_device.h"
#include "tests/util/test_util.h"

namespace cairn::test {

// A context whose default device is "vulkan" (lavapipe here), shared by a test binary.
Context& vk_ctx();
gpu::VulkanDevice& vk_device();
Tensor to_vk(const Tensor& t);
Tensor to_cpu(const Tensor& t);

#define CHECK_NO_VALIDATION_ERRORS() CHECK(::cairn::gpu::validation_error_count() == 0)

}  // namespace cairn::test
