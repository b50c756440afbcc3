// Data movement for every dtype through strided.comp, which moves 8-, 16- or 32-bit words:
// plain copies (Identity, StopGradient, Reshape, ExpandDims, Squeeze), Transpose, Slice,
// StridedSlice, StridedSliceGrad, ConcatV2, Pack, Split, Unpack, Tile, Pad, Reverse and Fill.
#include <vector>

#include "gpu/vulkan/kernels/move.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/array_util.h"
#include "runtime/cpu/axis.h"
#include "runtime/ops/array_util.h"

namespace cairn::gpu {

std::vector<int64_t> row_major(const Shape& s) {
  std::vector<int64_t> strides(static_cast<size_t>(s.rank()));
  int64_t step = 1;
  for (int d = s.rank() - 1; d >= 0; --d) strides[static_cast<size_t>(d)] = step, step *= s[d];
  return strides;
}

bool can_move(KernelContext& kc, DType dtype) {
  size_t elem = dtype_size(dtype);
  VulkanDevice& dev = vulkan(kc.device);
  if ((elem == 1 && !dev.supports_int8_storage()) || (elem == 2 && !dev.supports(DType::Float16))) {
    fallback_or_unimplemented(kc, dtype, "the device lacks 8/16-bit storage");
    return false;
  }
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
    fallback_or_unimplemented(kc, dtype);
    return false;
  }
  return true;
}

void record_move(KernelContext& kc, DType dtype, const Tensor& src, const Tensor& dst, Move m) {
  size_t elem = dtype_size(dtype);
  int64_t words = elem == 8 ? 2 : 1;  // 8-byte elements move as two 32-bit words
  const char* shader = elem == 1 ? "strided_w8" : elem == 2 ? "strided_w16" : "strided_w32";
  int64_t n = 1;
  for (int64_t d : m.dims) n *= d;
  if (n == 0) return;
  check_indexable(kc, n * words);
  check_indexable(kc, src.num_elements() * words);
  check_indexable(kc, dst.num_elements() * words);
  // Drop size-1 dims; merge a dim into the one outside it when both sides stay contiguous.
  Move merged;
  for (size_t d = 0; d < m.dims.size(); ++d) {
    int64_t size = m.dims[d], mod = m.mods[d] ? m.mods[d] : size;
    if (size == 1 && mod == 1) continue;
    bool plain = mod == size;
    if (!merged.dims.empty() && plain && merged.mods.back() == merged.dims.back() &&
        merged.in_strides.back() == m.in_strides[d] * size && merged.out_strides.back() == m.out_strides[d] * size) {
      merged.dims.back() *= size;
      merged.mods.back() = merged.dims.back();
      merged.in_strides.back() = m.in_strides[d];
      merged.out_strides.back() = m.out_strides[d];
      continue;
    }
    merged.add(size, m.in_strides[d], m.out_strides[d], mod);
  }
  if (words == 2) merged.add(2, 1, 1, 2);
  if (merged.dims.empty()) merged.add(1, 0, 0, 1);
  if (merged.dims.size() > static_cast<size_t>(kMaxShaderRank))
    return fallback_or_unimplemented(kc, dtype, "more than 6 moved dimensions");
  StridedPush p{};
  p.n = static_cast<uint32_t>(n * words);
  p.rank = static_cast<uint32_t>(merged.dims.size());
  p.in_base = static_cast<int32_t>(m.in_base * words);
  p.out_base = static_cast<uint32_t>(m.out_base * words);
  size_t last = merged.dims.size() - (words == 2 ? 1 : 0);
  for (size_t d = 0; d < merged.dims.size(); ++d) {
    int64_t scale = d < last ? words : 1;
    p.dims[d] = static_cast<uint32_t>(merged.dims[d]);
    p.mods[d] = static_cast<uint32_t>(merged.mods[d]);
    p.in_strides[d] = static_cast<int32_t>(merged.in_strides[d] * scale);
    p.out_strides[d] = static_cast<uint32_t>(merged.out_strides[d] * scale);
  }
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(shader, 2, sizeof(StridedPush));
  dev.dispatch(pl, {src.buffer(), dst.buffer()}, &p, groups_for(p.n));
}

void record_fill(KernelContext& kc, const Tensor& value, const Tensor& dst) {
  Move m;
  m.add(dst.num_elements(), 0, 1);
  record_move(kc, dst.dtype(), value, dst, m);
}

namespace {

void copy_kernel(KernelContext& kc) {
  vulkan(kc.device).copy(*kc.input(0).buffer(), 0, *kc.output(0).buffer(), 0, kc.input(0).nbytes());
}

// A contiguous walk of `shape` on both sides, the input starting at `in_base` with `in_strides`.
Move contiguous_out(const Shape& shape, const std::vector<int64_t>& in_strides, int64_t in_base) {
  Move m;
  std::vector<int64_t> out = row_major(shape);
  for (int d = 0; d < shape.rank(); ++d) m.add(shape[d], in_strides[static_cast<size_t>(d)], out[static_cast<size_t>(d)]);
  m.in_base = in_base;
  return m;
}

void transpose_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (!can_move(kc, x.dtype())) return;
  int rank = x.rank();
  std::vector<int64_t> perm = kc.attrs.ints("perm");
  if (perm.empty())
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  std::vector<int64_t> in = row_major(x.shape()), src(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) src[static_cast<size_t>(d)] = in[static_cast<size_t>(perm[static_cast<size_t>(d)])];
  record_move(kc, x.dtype(), x, y, contiguous_out(y.shape(), src, 0));
}

void slice_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  if (!can_move(kc, x.dtype())) return;
  const AttrValue& begin = kc.attrs.get("begin");
  std::vector<int64_t> in = row_major(x.shape());
  int64_t base = 0;
  for (int d = 0; d < x.rank(); ++d) base += begin.ints[d] * in[static_cast<size_t>(d)];
  record_move(kc, x.dtype(), x, kc.output(0), contiguous_out(kc.output(0).shape(), in, base));
}

void strided_slice_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (!can_move(kc, x.dtype()) || y.num_elements() == 0) return;
  const StridedSliceSpec spec = strided_slice_spec(x.shape(), kc.attrs, kc.op());
  std::vector<int64_t> in = row_major(x.shape());
  Move m;
  int64_t out_stride = y.num_elements();
  for (int d = 0; d < spec.rank; ++d) {
    out_stride /= spec.size[d];
    m.add(spec.size[d], spec.stride[d] * in[static_cast<size_t>(d)], out_stride);
    m.in_base += spec.begin[d] * in[static_cast<size_t>(d)];
  }
  record_move(kc, x.dtype(), x, y, m);
}

// Zeros the output (a fill, which takes bytes 0 for every dtype), then moves dy to the strided
// positions; the positions never repeat.
void strided_slice_grad_kernel(KernelContext& kc) {
  const Tensor& dy = kc.input(0);
  Tensor& out = kc.output(0);
  if (!can_move(kc, out.dtype()) || out.num_elements() == 0) return;
  VulkanDevice& dev = vulkan(kc.device);
  dev.fill(*out.buffer(), 0);
  if (dy.num_elements() == 0) return;
  const StridedSliceSpec spec = strided_slice_spec(out.shape(), kc.attrs, kc.op());
  std::vector<int64_t> os = row_major(out.shape());
  Move m;
  int64_t in_stride = dy.num_elements();
  for (int d = 0; d < spec.rank; ++d) {
    in_stride /= spec.size[d];
    int64_t step = spec.stride[d], last = spec.size[d] - 1;
    // Negative steps are walked from the far end so every output stride is positive.
    if (step > 0) {
      m.add(spec.size[d], in_stride, step * os[static_cast<size_t>(d)]);
      m.out_base += spec.begin[d] * os[static_cast<size_t>(d)];
    } else {
      m.add(spec.size[d], -in_stride, -step * os[static_cast<size_t>(d)]);
      m.out_base += (spec.begin[d] + last * step) * os[static_cast<size_t>(d)];
      m.in_base += last * in_stride;
    }
  }
  record_move(kc, out.dtype(), dy, out, m);
}

// Concat/Pack: input j is an [outer, width_j] block placed at column offset_j of [outer, total].
void concat_along(KernelContext& kc, int64_t outer, const std::vector<int64_t>& widths) {
  Tensor& out = kc.output(0);
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  int64_t offset = 0;
  for (int j = 0; j < kc.num_inputs; ++j) {
    Move m;
    m.add(outer, widths[static_cast<size_t>(j)], total);
    m.add(widths[static_cast<size_t>(j)], 1, 1);
    m.out_base = offset;
    record_move(kc, out.dtype(), kc.input(j), out, m);
    offset += widths[static_cast<size_t>(j)];
  }
}

void concat_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  if (!can_move(kc, out.dtype()) || out.num_elements() == 0) return;
  int axis = normalize_axis(kc.attrs.i("axis"), out.rank(), kc.op());
  std::vector<int64_t> widths;
  for (int j = 0; j < kc.num_inputs; ++j) widths.push_back(product(kc.input(j).shape(), axis, out.rank()));
  concat_along(kc, product(out.shape(), 0, axis), widths);
}

void pack_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  if (!can_move(kc, out.dtype()) || out.num_elements() == 0) return;
  const Shape& in = kc.input(0).shape();
  int64_t axis = kc.attrs.i("axis");
  int a = static_cast<int>(axis < 0 ? axis + in.rank() + 1 : axis);
  std::vector<int64_t> widths(static_cast<size_t>(kc.num_inputs), product(in, a, in.rank()));
  concat_along(kc, product(in, 0, a), widths);
}

// Unpack and Split: the input's dimension at `axis` cut into num_outputs equal pieces.
void split_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  if (!can_move(kc, in.dtype())) return;
  const AxisSplit sp = split_at_axis(in.shape(), kc.attrs.i("axis"), kc.op());
  int n = kc.num_outputs;
  if (n == 0 || in.num_elements() == 0) return;
  int64_t width = sp.n / n * sp.inner;
  for (int j = 0; j < n; ++j) {
    Move m;
    m.add(sp.outer, sp.n * sp.inner, width);
    m.add(width, 1, 1);
    m.in_base = j * width;
    record_move(kc, in.dtype(), in, kc.output(j), m);
  }
}

void tile_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (!can_move(kc, x.dtype())) return;
  std::vector<int64_t> in = row_major(x.shape()), out = row_major(y.shape());
  Move m;
  for (int d = 0; d < x.rank(); ++d)
    m.add(y.shape()[d], in[static_cast<size_t>(d)], out[static_cast<size_t>(d)], x.shape()[d]);
  if (x.rank() == 0) m.add(1, 0, 0);
  record_move(kc, x.dtype(), x, y, m);
}

// The constant of Pad/Fill as a one-element tensor on the device.
Tensor device_scalar(KernelContext& kc, DType dtype, double v) {
  unsigned char bytes[16];
  convert_scalar(dtype, v, bytes);
  Tensor t = Tensor::allocate(kc.device, dtype, Shape{});
  kc.device.write(*t.buffer(), bytes, dtype_size(dtype));
  return t;
}

void pad_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (!can_move(kc, x.dtype()) || y.num_elements() == 0) return;
  record_fill(kc, device_scalar(kc, x.dtype(), kc.attrs.f("constant_values")), y);
  const AttrValue& pads = kc.attrs.get("paddings");
  std::vector<int64_t> in = row_major(x.shape()), out = row_major(y.shape());
  Move m;
  for (int d = 0; d < x.rank(); ++d) {
    m.add(x.shape()[d], in[static_cast<size_t>(d)], out[static_cast<size_t>(d)]);
    m.out_base += pads.ints[2 * d] * out[static_cast<size_t>(d)];
  }
  record_move(kc, x.dtype(), x, y, m);
}

void reverse_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  if (!can_move(kc, x.dtype())) return;
  int r = x.rank();
  const AttrValue& axis = kc.attrs.get("axis");
  std::vector<bool> rev(static_cast<size_t>(r), false);
  for (size_t k = 0; k < axis.n_ints; ++k) rev[static_cast<size_t>(normalize_axis(axis.ints[k], r, kc.op()))] = true;
  std::vector<int64_t> in = row_major(x.shape()), src = in;
  int64_t base = 0;
  for (int d = 0; d < r; ++d)
    if (rev[static_cast<size_t>(d)]) {
      src[static_cast<size_t>(d)] = -in[static_cast<size_t>(d)];
      base += (x.shape()[d] - 1) * in[static_cast<size_t>(d)];
    }
  record_move(kc, x.dtype(), x, kc.output(0), contiguous_out(x.shape(), src, base));
}

void fill_kernel(KernelContext& kc) {
  Tensor& y = kc.output(0);
  if (!can_move(kc, y.dtype())) return;
  record_fill(kc, kc.input(0), y);
}

}  // namespace

CAIRN_REGISTER_KERNEL("Identity", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("StopGradient", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("Reshape", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("ExpandDims", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("Squeeze", DeviceKind::Vulkan, copy_kernel);
CAIRN_REGISTER_KERNEL("Transpose", DeviceKind::Vulkan, transpose_kernel);
CAIRN_REGISTER_KERNEL("Slice", DeviceKind::Vulkan, slice_kernel);
CAIRN_REGISTER_KERNEL("StridedSlice", DeviceKind::Vulkan, strided_slice_kernel);
CAIRN_REGISTER_KERNEL("StridedSliceGrad", DeviceKind::Vulkan, strided_slice_grad_kernel);
CAIRN_REGISTER_KERNEL("ConcatV2", DeviceKind::Vulkan, concat_kernel);
CAIRN_REGISTER_KERNEL("Pack", DeviceKind::Vulkan, pack_kernel);
CAIRN_REGISTER_KERNEL("Split", DeviceKind::Vulkan, split_kernel);
CAIRN_REGISTER_KERNEL("Unpack", DeviceKind::Vulkan, split_kernel);
CAIRN_REGISTER_KERNEL("Tile", DeviceKind::Vulkan, tile_kernel);
CAIRN_REGISTER_KERNEL("Pad", DeviceKind::Vulkan, pad_kernel);
CAIRN_REGISTER_KERNEL("Reverse", DeviceKind::Vulkan, reverse_kernel);
CAIRN_REGISTER_KERNEL("Fill", DeviceKind::Vulkan, fill_kernel);

}  // namespace cairn::gpu
