// Per-axis kernels over an [outer, r, inner] view: Softmax, LogSoftmax and Cumsum (axis.comp),
// ArgMax and ArgMin (argreduce.comp, int32 or int64 indices).
#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/axis.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

AxisPush axis_push(KernelContext& kc, const Tensor& x, int64_t axis) {
  const AxisSplit sp = split_at_axis(x.shape(), axis, kc.op());
  check_indexable(kc, x.num_elements());
  return AxisPush{static_cast<uint32_t>(sp.outer), static_cast<uint32_t>(sp.n), static_cast<uint32_t>(sp.inner), 0, 0};
}

template <uint32_t Op>
void softmax_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  DType dt = x.dtype();
  if (!has_variant(kc, dt)) return;
  if (x.rank() == 0) return fallback_or_unimplemented(kc, dt, "a scalar has no axis");
  AxisPush p = axis_push(kc, x, kc.attrs.i("axis"));
  if (x.num_elements() == 0) return;
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("axis", dt).c_str(), 2, sizeof(AxisPush), {Op});
  dev.dispatch(pl, {x.buffer(), kc.output(0).buffer()}, &p, groups_for(int64_t{p.outer} * p.inner));
}

void cumsum_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  DType dt = x.dtype();
  if (!has_variant(kc, dt)) return;
  if (x.num_elements() == 0) return;
  if (x.rank() == 0) {
    // A scalar is its own sum (or zero, exclusive); the CPU treats it as one element.
    return fallback_or_unimplemented(kc, dt, "a scalar input");
  }
  AxisPush p = axis_push(kc, x, kc.attrs.i("axis"));
  p.exclusive = kc.attrs.b("exclusive");
  p.reverse = kc.attrs.b("reverse");
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("axis", dt).c_str(), 2, sizeof(AxisPush), {AOP_CUMSUM});
  dev.dispatch(pl, {x.buffer(), kc.output(0).buffer()}, &p, groups_for(int64_t{p.outer} * p.inner));
}

template <uint32_t Op>
void arg_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  DType dt = x.dtype();
  if (!has_variant(kc, dt)) return;
  AxisPush p = axis_push(kc, x, kc.attrs.i("axis"));
  if (y.num_elements() == 0) return;
  uint32_t i64 = y.dtype() == DType::Int64 ? 1 : 0;
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("argreduce", dt).c_str(), 2, sizeof(AxisPush), {Op, i64});
  dev.dispatch(pl, {x.buffer(), y.buffer()}, &p, groups_for(int64_t{p.outer} * p.inner));
}

}  // namespace

CAIRN_REGISTER_KERNEL("Softmax", DeviceKind::Vulkan, softmax_kernel<AOP_SOFTMAX>);
CAIRN_REGISTER_KERNEL("LogSoftmax", DeviceKind::Vulkan, softmax_kernel<AOP_LOG_SOFTMAX>);
CAIRN_REGISTER_KERNEL("Cumsum", DeviceKind::Vulkan, cumsum_kernel);
CAIRN_REGISTER_KERNEL("ArgMax", DeviceKind::Vulkan, arg_kernel<AOP_ARGMAX>);
CAIRN_REGISTER_KERNEL("ArgMin", DeviceKind::Vulkan, arg_kernel<AOP_ARGMIN>);

}  // namespace cairn::gpu
