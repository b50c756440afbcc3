// Index-driven and generated tensors: GatherV2 (gather.comp, every dtype), OneHot (onehot.comp),
// UnsortedSegmentSum (segment.comp), Range (range.comp) and the random ops with the CPU's Philox
// streams (random.comp). Indices are int32 or int64. Bad indices cannot be reported from the GPU
// without a round trip: Gather gives zeros, OneHot an `off` row, UnsortedSegmentSum drops the
// row (TensorFlow's GPU behaviour); the CPU raises InvalidArgument instead.
#include <cmath>

#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/kernels/move.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/core/philox.h"
#include "runtime/cpu/axis.h"

namespace cairn::gpu {

namespace {

// 1 for int64 indices (read as word pairs), 0 for int32; otherwise falls back and returns -1.
int index_mode(KernelContext& kc, DType dt) {
  if (dt == DType::Int32) return 0;
  if (dt == DType::Int64) return 1;
  fallback_or_unimplemented(kc, dt, "indices must be int32 or int64");
  return -1;
}

void gather_kernel(KernelContext& kc) {
  const Tensor& params = kc.input(0);
  const Tensor& indices = kc.input(1);
  Tensor& out = kc.output(0);
  DType dt = params.dtype();
  if (!can_move(kc, dt)) return;
  int i64 = index_mode(kc, indices.dtype());
  if (i64 < 0) return;
  if (kc.attrs.i("batch_dims") != 0) return fallback_or_unimplemented(kc, dt, "batch_dims != 0");
  int axis = normalize_axis(kc.attrs.i("axis"), params.rank(), kc.op());
  int64_t words = dtype_size(dt) == 8 ? 2 : 1;
  check_indexable(kc, out.num_elements() * words);
  check_indexable(kc, params.num_elements() * words);
  if (out.num_elements() == 0) return;
  GatherPush p{};
  p.total = static_cast<uint32_t>(out.num_elements() * words);
  p.n = static_cast<uint32_t>(params.shape()[axis]);
  p.count = static_cast<uint32_t>(indices.num_elements());
  p.inner = static_cast<uint32_t>(product(params.shape(), axis + 1, params.rank()) * words);
  size_t elem = dtype_size(dt);
  const char* shader = elem == 1 ? "gather_w8" : elem == 2 ? "gather_w16" : "gather_w32";
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(shader, 3, sizeof(GatherPush), {static_cast<uint32_t>(words), static_cast<uint32_t>(i64)});
  dev.dispatch(pl, {params.buffer(), indices.buffer(), out.buffer()}, &p, groups_for(p.total));
}

void one_hot_kernel(KernelContext& kc) {
  const Tensor& indices = kc.input(0);
  Tensor& out = kc.output(0);
  DType dt = out.dtype();
  if (!has_variant(kc, dt)) return;
  int i64 = index_mode(kc, indices.dtype());
  if (i64 < 0) return;
  check_indexable(kc, out.num_elements());
  if (out.num_elements() == 0) return;
  int64_t axis_attr = kc.attrs.i("axis");
  int axis = axis_attr == -1 ? indices.rank() : static_cast<int>(axis_attr);
  OneHotPush p{};
  p.total = static_cast<uint32_t>(out.num_elements());
  p.depth = static_cast<uint32_t>(kc.attrs.i("depth"));
  p.inner = static_cast<uint32_t>(product(indices.shape(), axis, indices.rank()));
  double on = kc.attrs.f("on_value"), off = kc.attrs.f("off_value");
  p.on = static_cast<float>(on);
  p.off = static_cast<float>(off);
  // Integer outputs: the CPU's conversion (truncation; the values are small in practice).
  p.ion = static_cast<int32_t>(on);
  p.ioff = static_cast<int32_t>(off);
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("onehot", dt).c_str(), 2, sizeof(OneHotPush), {static_cast<uint32_t>(i64)});
  dev.dispatch(pl, {indices.buffer(), out.buffer()}, &p, groups_for(p.total));
}

void segment_sum_kernel(KernelContext& kc) {
  const Tensor& data = kc.input(0);
  const Tensor& ids = kc.input(1);
  Tensor& out = kc.output(0);
  DType dt = data.dtype();
  if (!has_variant(kc, dt)) return;
  int i64 = index_mode(kc, ids.dtype());
  if (i64 < 0) return;
  check_indexable(kc, data.num_elements());
  check_indexable(kc, out.num_elements());
  if (out.num_elements() == 0) return;
  int64_t rows = ids.num_elements();
  SegmentPush p{};
  p.total = static_cast<uint32_t>(out.num_elements());
  p.rows = static_cast<uint32_t>(rows);
  p.inner = static_cast<uint32_t>(rows == 0 ? 1 : data.num_elements() / rows);
  if (rows == 0) p.inner = static_cast<uint32_t>(out.num_elements() / std::max<int64_t>(1, kc.attrs.i("num_segments")));
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("segment", dt).c_str(), 3, sizeof(SegmentPush), {static_cast<uint32_t>(i64)});
  dev.dispatch(pl, {data.buffer(), ids.buffer(), out.buffer()}, &p, groups_for(p.total));
}

void range_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  DType dt = out.dtype();
  if (!has_variant(kc, dt)) return;
  check_indexable(kc, out.num_elements());
  if (out.num_elements() == 0) return;
  double start = kc.attrs.f("start"), delta = kc.attrs.f("delta");
  RangePush p{};
  p.n = static_cast<uint32_t>(out.num_elements());
  p.start = static_cast<float>(start);
  p.delta = static_cast<float>(delta);
  p.istart = static_cast<int32_t>(static_cast<int64_t>(start));
  p.idelta = static_cast<int32_t>(static_cast<int64_t>(delta));
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("range", dt).c_str(), 1, sizeof(RangePush));
  dev.dispatch(pl, {out.buffer()}, &p, groups_for(p.n));
}

template <uint32_t Op>
void random_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  DType dt = out.dtype();
  if (!has_variant(kc, dt)) return;  // the registry allows only floats
  check_indexable(kc, out.num_elements() + 3);
  if (out.num_elements() == 0) return;
  const philox::Key key = philox::op_key(kc.attrs.i("seed"), kc.attrs.i("seed2"), kc.random_seed);
  RandomPush p{static_cast<uint32_t>(out.num_elements()), key[0], key[1]};
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("random", dt).c_str(), 1, sizeof(RandomPush), {Op});
  dev.dispatch(pl, {out.buffer()}, &p, groups_for((int64_t{p.n} + 3) / 4));
}

}  // namespace

CAIRN_REGISTER_KERNEL("GatherV2", DeviceKind::Vulkan, gather_kernel);
CAIRN_REGISTER_KERNEL("OneHot", DeviceKind::Vulkan, one_hot_kernel);
CAIRN_REGISTER_KERNEL("UnsortedSegmentSum", DeviceKind::Vulkan, segment_sum_kernel);
CAIRN_REGISTER_KERNEL("Range", DeviceKind::Vulkan, range_kernel);
CAIRN_REGISTER_KERNEL("RandomUniform", DeviceKind::Vulkan, random_kernel<RND_UNIFORM>);
CAIRN_REGISTER_KERNEL("RandomStandardNormal", DeviceKind::Vulkan, random_kernel<RND_NORMAL>);
CAIRN_REGISTER_KERNEL("TruncatedNormal", DeviceKind::Vulkan, random_kernel<RND_TRUNCATED>);

}  // namespace cairn::gpu
