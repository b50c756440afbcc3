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

// float32: 1e-5 relative (transcendentals 1e-4: the GPU's exp/log/tanh differ in the last bits);
// float16: one part in 500; int32: exact.
double tolerance(DType dt, bool transcendental);

// Uniform values in [lo, hi] (rounded for integer dtypes) from a fixed seed.
Tensor random_tensor(DType dt, const Shape& s, double lo, double hi, uint32_t seed);

// complex64 values with real and imaginary parts uniform in [-1, 1] from a fixed seed.
Tensor random_complex(const Shape& s, uint32_t seed);

// |got - want| <= tol * (1 + |want|) elementwise, for complex64 tensors of one shape.
void check_complex_close(const Tensor& got, const Tensor& want, double tol);

// Runs `op` on the CPU and on Vulkan (inputs copied there) and checks every output: on Vulkan,
// same dtype and shape, values within `tol` (relative, see check_close).
void compare(const std::string& op, const std::vector<Tensor>& inputs, const std::vector<NamedAttr>& attrs,
             double tol);

#define CHECK_NO_VALIDATION_ERRORS() CHECK(::cairn::gpu::validation_error_count() == 0)

}  // namespace cairn::test
