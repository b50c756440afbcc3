// Sum, Mean, Prod, Max, Min over any set of axes (reduce.comp). Each run of adjacent reduced axes
// is one [outer, r, inner] pass; Mean divides once, in the last pass, by the total count.
#include <algorithm>
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

template <uint32_t Op, bool IsMean>
void reduce_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& out = kc.output(0);
  DType dt = x.dtype();
  if (!has_variant(kc, dt)) return;
  VulkanDevice& dev = vulkan(kc.device);
  if (!dev.supports_subgroup_reduce())
    return fallback_or_unimplemented(kc, dt, "the device lacks subgroup arithmetic");
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
  Pipeline& pl = dev.pipeline(variant("reduce", dt).c_str(), 2, sizeof(ReducePush), {Op});
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
    if (IsMean && last && (total > 0 || dt != DType::Int32)) p.mean = 1, p.divisor = static_cast<uint32_t>(total);
    uint32_t groups = inner > 1 ? groups_for(outer * inner) : static_cast<uint32_t>(std::min<int64_t>(outer, 65535));
    dev.dispatch(pl, {current.buffer(), next.buffer()}, &p, groups);
    current = next;
  }
}

}  // namespace

CAIRN_REGISTER_KERNEL("Sum", DeviceKind::Vulkan, (reduce_kernel<ROP_SUM, false>));
CAIRN_REGISTER_KERNEL("Mean", DeviceKind::Vulkan, (reduce_kernel<ROP_SUM, true>));
CAIRN_REGISTER_KERNEL("Prod", DeviceKind::Vulkan, (reduce_kernel<ROP_PROD, false>));
CAIRN_REGISTER_KERNEL("Max", DeviceKind::Vulkan, (reduce_kernel<ROP_MAX, false>));
CAIRN_REGISTER_KERNEL("Min", DeviceKind::Vulkan, (reduce_kernel<ROP_MIN, false>));

}  // namespace cairn::gpu
