// Sum, Mean, Prod, Max, Min over any set of axes (reduce.comp), and All/Any through int32. Each
// run of adjacent reduced axes is one [outer, r, inner] pass; Mean divides once, in the last pass,
// by the total count.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

struct AxisRun {
  int first, last;  // inclusive
};

std::vector<AxisRun> reduced_runs(const KernelContext& kc, int rank) {
  const AttrValue& a = kc.attrs.get("axis");
  std::vector<bool> reduced(static_cast<size_t>(rank), a.n_ints == 0);
  for (size_t i = 0; i < a.n_ints; ++i) reduced[static_cast<size_t>(normalize_axis(a.ints[i], rank, kc.op()))] = true;
  std::vector<AxisRun> runs;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) continue;
    if (!runs.empty() && runs.back().last == d - 1)
      runs.back().last = d;
    else
      runs.push_back({d, d});
  }
  return runs;
}

// Records the reduction of `x` into `out` (same dtype, which has a variant) over the op's axes.
void run_reduce(KernelContext& kc, uint32_t op, bool is_mean, const Tensor& x, const Tensor& out) {
  DType dt = x.dtype();
  VulkanDevice& dev = vulkan(kc.device);
  check_indexable(kc, x.num_elements());
  if (out.num_elements() == 0) return;

  Shape shape = x.shape();
  std::vector<AxisRun> runs = reduced_runs(kc, shape.rank());
  int64_t total = 1;
  for (const AxisRun& run : runs)
    for (int d = run.first; d <= run.last; ++d) total *= shape[d];
  if (runs.empty()) {  // nothing reduced: a copy
    dev.copy(*x.buffer(), 0, *out.buffer(), 0, x.nbytes());
    return;
  }
  Pipeline& pl = dev.pipeline(variant("reduce", dt).c_str(), 2, sizeof(ReducePush), {op});
  Tensor current = x;
  for (size_t i = 0; i < runs.size(); ++i) {
    const AxisRun& run = runs[i];
    int64_t outer = 1, r = 1, inner = 1;
    for (int d = 0; d < run.first; ++d) outer *= shape[d];
    for (int d = run.first; d <= run.last; ++d) r *= shape[d], shape.set_dim(d, 1);
    for (int d = run.last + 1; d < shape.rank(); ++d) inner *= shape[d];
    bool last = i + 1 == runs.size();
    Tensor next = last ? out : Tensor::allocate(dev, dt, shape);
    ReducePush p{static_cast<uint32_t>(outer), static_cast<uint32_t>(r), static_cast<uint32_t>(inner), 0, 0};
    // Integer Mean of nothing is 0 (no division by zero); float Mean of nothing is 0/0 = NaN.
    if (is_mean && last && (total > 0 || dt != DType::Int32)) p.mean = 1, p.divisor = static_cast<uint32_t>(total);
    uint32_t groups = inner > 1 ? groups_for(outer * inner) : static_cast<uint32_t>(std::min<int64_t>(outer, 65535));
    dev.dispatch(pl, {current.buffer(), next.buffer()}, &p, groups);
    current = next;
  }
}

bool can_reduce(KernelContext& kc, DType dt) {
  if (!has_variant(kc, dt)) return false;
  if (vulkan(kc.device).supports_subgroup_reduce()) return true;
  fallback_or_unimplemented(kc, dt, "the device lacks subgroup arithmetic");
  return false;
}

template <uint32_t Op, bool IsMean>
void reduce_kernel(KernelContext& kc) {
  if (!can_reduce(kc, kc.input(0).dtype())) return;
  run_reduce(kc, Op, IsMean, kc.input(0), kc.output(0));
}

// Records Cast from `x` to `y` through cast.comp (`from`/`to`: its dtype names).
void record_cast(VulkanDevice& dev, const char* from, const char* to, const Tensor& x, const Tensor& y) {
  if (x.num_elements() == 0) return;
  CastPush p{static_cast<uint32_t>(x.num_elements())};
  std::string shader = std::string("cast_") + from + "_" + to;
  Pipeline& pl = dev.pipeline(shader.c_str(), 2, sizeof(CastPush));
  dev.dispatch(pl, {x.buffer(), y.buffer()}, &p, groups_for(p.n));
}

// All / Any: bools widened to int32, reduced with Min / Max, narrowed back.
template <uint32_t Op>
void bool_reduce_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& out = kc.output(0);
  VulkanDevice& dev = vulkan(kc.device);
  if (!dev.supports_int8_storage()) return fallback_or_unimplemented(kc, x.dtype(), "the device lacks 8-bit storage");
  if (!can_reduce(kc, DType::Int32)) return;
  check_indexable(kc, x.num_elements());
  if (out.num_elements() == 0) return;
  if (x.num_elements() == 0) {
    // All of nothing is true, Any of nothing is false (int32 Min/Max identities would say true).
    dev.fill(*out.buffer(), Op == ROP_MIN ? 0x01010101u : 0u);
    return;
  }
  Tensor wide = Tensor::allocate(dev, DType::Int32, x.shape());
  Tensor reduced = Tensor::allocate(dev, DType::Int32, out.shape());
  record_cast(dev, "u8", "i32", x, wide);
  run_reduce(kc, Op, false, wide, reduced);
  record_cast(dev, "i32", "bool", reduced, out);
}

}  // namespace

CAIRN_REGISTER_KERNEL("Sum", DeviceKind::Vulkan, (reduce_kernel<ROP_SUM, false>));
CAIRN_REGISTER_KERNEL("Mean", DeviceKind::Vulkan, (reduce_kernel<ROP_SUM, true>));
CAIRN_REGISTER_KERNEL("Prod", DeviceKind::Vulkan, (reduce_kernel<ROP_PROD, false>));
CAIRN_REGISTER_KERNEL("Max", DeviceKind::Vulkan, (reduce_kernel<ROP_MAX, false>));
CAIRN_REGISTER_KERNEL("Min", DeviceKind::Vulkan, (reduce_kernel<ROP_MIN, false>));
CAIRN_REGISTER_KERNEL("All", DeviceKind::Vulkan, bool_reduce_kernel<ROP_MIN>);
CAIRN_REGISTER_KERNEL("Any", DeviceKind::Vulkan, bool_reduce_kernel<ROP_MAX>);

}  // namespace cairn::gpu
