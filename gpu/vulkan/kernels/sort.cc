// Sort and TopKV2 (sort.comp): a bitonic sort of each row's indices, the row padded to a power of
// two with sentinels; ties broken by index, so stable, NaNs last ascending and first descending,
// like the CPU. One dispatch per bitonic step: log2(pw) * (log2(pw) + 1) / 2 of them, plus two.
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/axis.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

// Records the sort over x viewed as [outer, r, inner], keeping ranks below k.
void record_sort(KernelContext& kc, const Tensor& x, const Tensor& values, const Tensor* indices, int axis, int64_t k,
                 bool descending) {
  check_indexable(kc, x.num_elements());
  const int64_t r = x.shape()[axis];
  const int64_t lines = x.num_elements() / r;
  int64_t pw = 1;
  while (pw < r) pw *= 2;
  check_indexable(kc, lines * pw);  // the scratch indices
  SortPush p{};
  p.lines = static_cast<uint32_t>(lines);
  p.r = static_cast<uint32_t>(r);
  p.inner = static_cast<uint32_t>(product(x.shape(), axis + 1, x.rank()));
  p.k = static_cast<uint32_t>(k);
  p.descending = descending ? 1 : 0;
  p.pw = static_cast<uint32_t>(pw);
  VulkanDevice& dev = vulkan(kc.device);
  uint32_t top_k = indices ? 1 : 0;
  Pipeline& pl = dev.pipeline(variant("sort", x.dtype()).c_str(), 4, sizeof(SortPush), {top_k});
  Tensor slots = Tensor::allocate(dev, DType::Int32, Shape{lines * pw});
  // Sort writes no indices: its output is bound in their place and never written there.
  const Buffer* index_buffer = indices ? indices->buffer() : values.buffer();
  const Buffer* buffers[] = {x.buffer(), values.buffer(), index_buffer, slots.buffer()};
  p.mode = 0;
  dev.dispatch(pl, buffers, 4, &p, groups_for(lines * pw));
  p.mode = 1;
  for (int64_t kk = 2; kk <= pw; kk *= 2) {
    for (int64_t jj = kk / 2; jj >= 1; jj /= 2) {
      p.kk = static_cast<uint32_t>(kk);
      p.jj = static_cast<uint32_t>(jj);
      dev.dispatch(pl, buffers, 4, &p, groups_for(lines * pw / 2));
    }
  }
  p.mode = 2;
  dev.dispatch(pl, buffers, 4, &p, groups_for(lines * k));
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
