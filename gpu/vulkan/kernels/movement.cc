// Data movement for every dtype: plain copies (Identity, StopGradient, Reshape, ExpandDims,
// Squeeze) and Transpose through strided.comp, which moves 8-, 16- or 32-bit words.
#include <vector>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

void copy_kernel(KernelContext& kc) {
  vulkan(kc.device).copy(*kc.input(0).buffer(), 0, *kc.output(0).buffer(), 0, kc.input(0).nbytes());
}

void transpose_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  VulkanDevice& dev = vulkan(kc.device);
  size_t elem = dtype_size(x.dtype());
  int rank = x.rank();
  std::vector<int64_t> perm = kc.attrs.ints("perm");
  if (perm.empty())
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  // Input strides in words; 8-byte elements are two 32-bit words (an extra innermost dim).
  uint32_t words = elem == 8 ? 2 : 1;
  const char* shader = elem == 1 ? "strided_w8" : elem == 2 ? "strided_w16" : "strided_w32";
  if ((elem == 1 && !dev.supports_int8_storage()) || (elem == 2 && !dev.supports(DType::Float16)))
    return fallback_or_unimplemented(kc, x.dtype(), "the device lacks 8/16-bit storage");
  check_indexable(kc, x.num_elements() * words);
  if (y.num_elements() == 0) return;
  std::vector<int64_t> in_strides(static_cast<size_t>(rank));
  int64_t step = words;
  for (int d = rank - 1; d >= 0; --d) in_strides[d] = step, step *= x.shape()[d];
  // Output dims (size-1 dims dropped), then merge dims that stay contiguous in the input.
  std::vector<int64_t> dims, strides;
  for (int d = 0; d < rank; ++d) {
    int64_t size = y.shape()[d], stride = in_strides[static_cast<size_t>(perm[d])];
    if (size == 1) continue;
    if (!dims.empty() && strides.back() == stride * size) {
      dims.back() *= size;
      strides.back() = stride;
      continue;
    }
    dims.push_back(size);
    strides.push_back(stride);
  }
  if (words == 2) dims.push_back(2), strides.push_back(1);
  if (dims.empty()) dims.push_back(1), strides.push_back(0);
  if (dims.size() > kMaxShaderRank) return fallback_or_unimplemented(kc, x.dtype(), "more than 6 moved dimensions");
  StridedPush p{};
  p.n = static_cast<uint32_t>(y.num_elements() * words);
  p.rank = static_cast<uint32_t>(dims.size());
  uint32_t out_step = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    p.dims[d] = static_cast<uint32_t>(dims[d]);
    p.mods[d] = static_cast<uint32_t>(dims[d]);
    p.in_strides[d] = static_cast<int32_t>(strides[d]);
    p.out_strides[d] = out_step;
    out_step *= p.dims[d];
  }
  Pipeline& pl = dev.pipeline(shader, 2, sizeof(StridedPush));
  dev.dispatch(pl, {x.buffer(), y.buffer()}, &p, groups_for(p.n));
}

}  // namespace

CAIRN_REGISTER_KERNEL("Identity", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("StopGradient", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("Reshape", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("ExpandDims", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("Squeeze", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("Transpose", DeviceKind::Vulkan, transpose_kernel);

}  // namespace cairn::gpu
