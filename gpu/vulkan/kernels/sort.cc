// Sort and TopKV2 (sort.comp): each element's output position is its rank in its row, counted
// in parallel; stable, NaNs last ascending and first descending, like the CPU.
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/axis.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

// Records the ranking over x viewed as [outer, r, inner], keeping ranks below k.
void record_sort(KernelContext& kc, const Tensor& x, const Tensor& values, const Tensor* indices, int axis, int64_t k,
                 bool descending) {
  check_indexable(kc, x.num_elements());
  SortPush p{};
  p.total = static_cast<uint32_t>(x.num_elements());
  p.r = static_cast<uint32_t>(x.shape()[axis]);
  p.inner = static_cast<uint32_t>(product(x.shape(), axis + 1, x.rank()));
  p.k = static_cast<uint32_t>(k);
  p.descending = descending ? 1 : 0;
  VulkanDevice& dev = vulkan(kc.device);
  uint32_t top_k = indices ? 1 : 0;
  Pipeline& pl = dev.pipeline(variant("sort", x.dtype()).c_str(), 3, sizeof(SortPush), {top_k});
  // Sort writes no indices: its output is bound in their place and never written there.
  const Buffer* index_buffer = indices ? indices->buffer() : values.buffer();
  dev.dispatch(pl, {x.buffer(), values.buffer(), index_buffer}, &p, groups_for(p.total));
}

void sort_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& out = kc.output(0);
  if (!has_variant(kc, x.dtype())) return;
  if (out.num_elements() == 0) return;
  int axis = normalize_axis(kc.attrs.i("axis"), x.rank(), kc.op());
  record_sort(kc, x, out, nullptr, axis, x.shape()[axis], kc.attrs.b("descending"));
}

void top_k_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& values = kc.output(0);
  Tensor& indices = kc.output(1);
  if (!has_variant(kc, x.dtype())) return;
  if (values.num_elements() == 0) return;
  record_sort(kc, x, values, &indices, x.rank() - 1, kc.attrs.i("k"), true);
}

}  // namespace

CAIRN_REGISTER_KERNEL("Sort", DeviceKind::Vulkan, sort_kernel);
CAIRN_REGISTER_KERNEL("TopKV2", DeviceKind::Vulkan, top_k_kernel);

}  // namespace cairn::gpu
