// Helpers shared by the Vulkan kernels: dtype variants, group counts, and what happens when a
// kernel has no variant for a dtype (CPU fallback when the context allows it, else Unimplemented).
#pragma once

#include <cstdint>
#include <string>

#include "gpu/vulkan/vulkan_device.h"
#include "runtime/ops/op_def.h"
#include "runtime/ops/registry.h"

namespace cairn::gpu {

// "f32", "f16", "i32" for the dtypes with shader variants; nullptr otherwise.
const char* dtype_suffix(DType dtype);
inline std::string variant(const char* family, DType dtype) { return std::string(family) + "_" + dtype_suffix(dtype); }

// Workgroups for `n` invocations of `local` each; grid-stride shaders walk the rest past 65535.
inline uint32_t groups_for(int64_t n, uint32_t local = 256) {
  int64_t g = (n + local - 1) / local;
  return static_cast<uint32_t>(g < 1 ? 1 : (g > 65535 ? 65535 : g));
}

// Runs the op's CPU kernel on copies of the inputs and copies the outputs back (counted), when
// the context enabled CPU fallback; otherwise throws Unimplemented naming op, dtype and device.
void fallback_or_unimplemented(KernelContext& kc, DType dtype, const char* why = nullptr);

// True when the device has shaders for `dtype`; otherwise falls back (or throws) and returns false.
bool has_variant(KernelContext& kc, DType dtype);

// Throws InvalidArgument when a tensor has more elements than 32-bit shader indexing reaches.
void check_indexable(KernelContext& kc, int64_t elements);

// A kernel that always falls back (or throws); installed for ops without a Vulkan kernel.
void no_vulkan_kernel(KernelContext& kc);

}  // namespace cairn::gpu
