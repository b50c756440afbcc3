// GatherNd and ScatterNd (nd_index.comp turns coordinate tuples into row ids, then gather.comp
// or segment.comp does the rest), and Where (where.comp). As with GatherV2, bad indices cannot be
// reported from the GPU without a round trip: GatherNd gives zeros and ScatterNd drops the update
// (TensorFlow's GPU behaviour); the CPU raises InvalidArgument. ScatterNd adds duplicates in
// index order, like the CPU, so float results match it exactly.
#include <algorithm>

#include "gpu/vulkan/kernels/move.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/axis.h"

namespace cairn::gpu {

namespace {

// int32 row ids for the index tuples (the last dimension of `indices`) into `dims[0..k)`; -1 for
// a tuple outside them.
Tensor row_ids(KernelContext& kc, const Tensor& indices, const Shape& dims, int k, int64_t rows) {
  VulkanDevice& dev = vulkan(kc.device);
  Tensor ids = Tensor::allocate(dev, DType::Int32, Shape{rows});
  check_indexable(kc, product(dims, 0, k));
  check_indexable(kc, 2 * indices.num_elements());
  NdIndexPush p{};
  p.rows = static_cast<uint32_t>(rows);
  p.k = static_cast<uint32_t>(k);
  for (int d = 0; d < k; ++d) p.dims[d] = static_cast<uint32_t>(dims[d]);
  uint32_t i64 = indices.dtype() == DType::Int64 ? 1 : 0;
  Pipeline& pl = dev.pipeline("nd_index", 2, sizeof(NdIndexPush), {i64});
  dev.dispatch(pl, {indices.buffer(), ids.buffer()}, &p, groups_for(rows));
  return ids;
}

int64_t index_rows(const Tensor& indices) { return product(indices.shape(), 0, indices.rank() - 1); }

void gather_nd_kernel(KernelContext& kc) {
  const Tensor& params = kc.input(0);
  const Tensor& indices = kc.input(1);
  Tensor& out = kc.output(0);
  DType dt = params.dtype();
  if (!can_move(kc, dt)) return;
  if (out.num_elements() == 0) return;
  int k = static_cast<int>(indices.shape()[indices.rank() - 1]);
  int64_t rows = index_rows(indices);
  int64_t words = dtype_size(dt) == 8 ? 2 : 1;
  check_indexable(kc, out.num_elements() * words);
  check_indexable(kc, params.num_elements() * words);
  Tensor ids = row_ids(kc, indices, params.shape(), k, rows);
  GatherPush p{};
  p.inner = static_cast<uint32_t>(product(params.shape(), k, params.rank()) * words);
  p.total = static_cast<uint32_t>(rows) * p.inner;
  p.n = static_cast<uint32_t>(product(params.shape(), 0, k));
  p.count = static_cast<uint32_t>(rows);
  size_t elem = dtype_size(dt);
  const char* shader = elem == 1 ? "gather_w8" : elem == 2 ? "gather_w16" : "gather_w32";
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(shader, 3, sizeof(GatherPush), {static_cast<uint32_t>(words), 0u});
  dev.dispatch(pl, {params.buffer(), ids.buffer(), out.buffer()}, &p, groups_for(p.total));
}

void scatter_nd_kernel(KernelContext& kc) {
  const Tensor& indices = kc.input(0);
  const Tensor& updates = kc.input(1);
  Tensor& out = kc.output(0);
  DType dt = updates.dtype();
  if (!has_variant(kc, dt)) return;
  if (out.num_elements() == 0) return;
  check_indexable(kc, out.num_elements());
  check_indexable(kc, updates.num_elements());
  int k = static_cast<int>(indices.shape()[indices.rank() - 1]);
  int64_t rows = index_rows(indices);
  Tensor ids = row_ids(kc, indices, out.shape(), k, rows);
  SegmentPush p{};
  p.total = static_cast<uint32_t>(out.num_elements());
  p.rows = static_cast<uint32_t>(rows);
  p.inner = static_cast<uint32_t>(product(out.shape(), k, out.rank()));
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("segment", dt).c_str(), 3, sizeof(SegmentPush), {0u});
  dev.dispatch(pl, {updates.buffer(), ids.buffer(), out.buffer()}, &p, groups_for(p.total));
}

// where.comp's view of an element: words per element, and the mask of the sign-carrying word of
// floats (every `period`-th word) so that -0.0 counts as zero.
struct WordLayout {
  uint32_t words = 1, mask = 0xffffffffu, period = 1;
  const char* shader = "where_w32";
};

WordLayout word_layout(DType dt) {
  WordLayout w;
  size_t elem = dtype_size(dt);
  if (elem == 1) w.shader = "where_w8";
  if (elem == 2) w.shader = "where_w16";
  if (elem >= 8) w.words = static_cast<uint32_t>(elem / 4);
  switch (dt) {
    case DType::Float16:
    case DType::BFloat16: w.mask = 0x7fffu; break;
    case DType::Float32:
    case DType::Complex64: w.mask = 0x7fffffffu; break;
    case DType::Float64: w.mask = 0x7fffffffu, w.period = 2; break;
    default: break;
  }
  return w;
}

void where_kernel(KernelContext& kc) {
  const Tensor& cond = kc.input(0);
  DType dt = cond.dtype();
  if (!can_move(kc, dt)) return;
  const Shape& s = cond.shape();
  WordLayout layout = word_layout(dt);
  check_indexable(kc, cond.num_elements() * layout.words);
  check_indexable(kc, 2 * cond.num_elements() * std::max(1, s.rank()));
  WherePush p{};
  p.n = static_cast<uint32_t>(cond.num_elements());
  p.rank = static_cast<uint32_t>(s.rank());
  for (int d = 0; d < s.rank(); ++d) p.dims[d] = static_cast<uint32_t>(s[d]);
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(layout.shader, 3, sizeof(WherePush), {layout.words, layout.mask, layout.period});
  // The output's size depends on the data: count first and read the count back.
  Tensor count = Tensor::allocate(dev, DType::Int32, Shape{});
  p.count_only = 1;
  dev.dispatch(pl, {cond.buffer(), count.buffer(), count.buffer()}, &p, 1);
  uint32_t num_true = 0;
  dev.read(*count.buffer(), &num_true, sizeof(num_true));
  Tensor& out = kc.allocate_output(0, DType::Int64, Shape{static_cast<int64_t>(num_true), s.rank()});
  if (out.num_elements() == 0) return;
  p.count_only = 0;
  dev.dispatch(pl, {cond.buffer(), out.buffer(), count.buffer()}, &p, 1);
}

}  // namespace

CAIRN_REGISTER_KERNEL("GatherNd", DeviceKind::Vulkan, gather_nd_kernel);
CAIRN_REGISTER_KERNEL("ScatterNd", DeviceKind::Vulkan, scatter_nd_kernel);
CAIRN_REGISTER_KERNEL("Where", DeviceKind::Vulkan, where_kernel);

}  // namespace cairn::gpu
