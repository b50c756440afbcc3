// CPU kernels for the array ops in ops/array_ops.cc. Pure data movement works on bytes with the
// element size (see array_util.h); only Pad's constant, Fill and Range look at element types.
#include <cstring>
#include <vector>

#include "runtime/cpu/array_util.h"
#include "runtime/cpu/axis.h"
#include "runtime/cpu/elementwise.h"
#include "runtime/ops/array_util.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

size_t elem_size(const Tensor& t) { return dtype_size(t.dtype()); }
const char* in_bytes(const Tensor& t) { return static_cast<const char*>(t.raw_data()); }
char* out_bytes(const Tensor& t) { return static_cast<char*>(t.raw_mutable_data()); }

// Reshape, ExpandDims, Squeeze: same bytes, new shape.
void copy_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  copy_bytes(kc.pool, kc.output(0).raw_mutable_data(), in.raw_data(),
             static_cast<size_t>(in.num_elements()) * elem_size(in));
}

void transpose_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  const int rank = in.rank();
  std::vector<int64_t> perm = kc.attrs.ints("perm");
  if (perm.empty())
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  int64_t in_strides[kMaxRank], src[kMaxRank], dst[kMaxRank];
  row_major_strides(in.shape(), in_strides);
  row_major_strides(out.shape(), dst);
  for (int i = 0; i < rank; ++i) src[i] = in_strides[perm[i]];
  if (out.num_elements() == 0) return;
  strided_copy(kc.pool, elem_size(in), rank, out.shape().dims(), out_bytes(out), dst, in_bytes(in), src);
}

void slice_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  if (out.num_elements() == 0) return;
  const AttrValue& begin = kc.attrs.get("begin");
  int64_t strides[kMaxRank], dst[kMaxRank];
  row_major_strides(in.shape(), strides);
  row_major_strides(out.shape(), dst);
  int64_t offset = 0;
  for (int i = 0; i < in.rank(); ++i) offset += begin.ints[i] * strides[i];
  const size_t elem = elem_size(in);
  strided_copy(kc.pool, elem, in.rank(), out.shape().dims(), out_bytes(out), dst,
               in_bytes(in) + offset * static_cast<int64_t>(elem), strides);
}

void strided_slice_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  if (out.num_elements() == 0) return;
  const StridedSliceSpec spec = strided_slice_spec(in.shape(), kc.attrs, kc.op());
  int64_t in_strides[kMaxRank], src[kMaxRank], dst[kMaxRank];
  row_major_strides(in.shape(), in_strides);
  int64_t offset = 0, stride = 1;
  for (int i = spec.rank - 1; i >= 0; --i) {
    offset += spec.begin[i] * in_strides[i];
    src[i] = spec.stride[i] * in_strides[i];
    dst[i] = stride;
    stride *= spec.size[i];
  }
  const size_t elem = elem_size(in);
  strided_copy(kc.pool, elem, spec.rank, spec.size, out_bytes(out), dst,
               in_bytes(in) + offset * static_cast<int64_t>(elem), src);
}

// The forward slice's copy run backwards: zero the output, then write dy at the strided
// positions. A negative step is walked from its far end so every destination stride is positive
// (strided_copy allows negative strides only on the source); positions never repeat.
void strided_slice_grad_kernel(KernelContext& kc) {
  const Tensor& dy = kc.input(0);
  Tensor& out = kc.output(0);
  const size_t elem = elem_size(out);
  if (out.num_elements() == 0) return;
  std::memset(out.raw_mutable_data(), 0, static_cast<size_t>(out.num_elements()) * elem);
  if (dy.num_elements() == 0) return;
  const StridedSliceSpec spec = strided_slice_spec(out.shape(), kc.attrs, kc.op());
  int64_t out_strides[kMaxRank], dst[kMaxRank], src[kMaxRank];
  row_major_strides(out.shape(), out_strides);
  int64_t dst_offset = 0, src_offset = 0, stride = 1;
  for (int i = spec.rank - 1; i >= 0; --i) {
    const int64_t step = spec.stride[i], last = spec.size[i] - 1;
    if (step > 0) {
      dst_offset += spec.begin[i] * out_strides[i];
      dst[i] = step * out_strides[i];
      src[i] = stride;
    } else {
      dst_offset += (spec.begin[i] + last * step) * out_strides[i];
      dst[i] = -step * out_strides[i];
      src_offset += last * stride;
      src[i] = -stride;
    }
    stride *= spec.size[i];
  }
  strided_copy(kc.pool, elem, spec.rank, spec.size, out_bytes(out) + dst_offset * static_cast<int64_t>(elem), dst,
               in_bytes(dy) + src_offset * static_cast<int64_t>(elem), src);
}

void concat_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  if (out.num_elements() == 0) return;
  const int n = kc.num_inputs;
  const int axis = normalize_axis(kc.attrs.i("axis"), out.rank(), kc.op());
  const int64_t elem = static_cast<int64_t>(elem_size(out));
  std::vector<const char*> srcs(n);
  std::vector<int64_t> widths(n);
  for (int j = 0; j < n; ++j) {
    srcs[j] = in_bytes(kc.input(j));
    widths[j] = product(kc.input(j).shape(), axis, out.rank()) * elem;
  }
  concat_rows(kc.pool, product(out.shape(), 0, axis), n, srcs.data(), widths.data(), out_bytes(out));
}

void pack_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  if (out.num_elements() == 0) return;
  const int n = kc.num_inputs;
  const Shape& in = kc.input(0).shape();
  const int64_t axis = kc.attrs.i("axis");
  const int a = static_cast<int>(axis < 0 ? axis + in.rank() + 1 : axis);
  std::vector<const char*> srcs(n);
  std::vector<int64_t> widths(n, product(in, a, in.rank()) * static_cast<int64_t>(elem_size(out)));
  for (int j = 0; j < n; ++j) srcs[j] = in_bytes(kc.input(j));
  concat_rows(kc.pool, product(in, 0, a), n, srcs.data(), widths.data(), out_bytes(out));
}

// Unpack and Split: the input's dimension at `axis` is cut into num_outputs equal pieces.
void split_along_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  const AxisSplit sp = split_at_axis(in.shape(), kc.attrs.i("axis"), kc.op());
  const int n = kc.num_outputs;
  if (n == 0 || in.num_elements() == 0) return;
  const int64_t piece = sp.n / n;
  const int64_t width = piece * sp.inner * static_cast<int64_t>(elem_size(in));
  std::vector<char*> dsts(n);
  std::vector<int64_t> widths(n, width);
  for (int j = 0; j < n; ++j) dsts[j] = out_bytes(kc.output(j));
  split_rows(kc.pool, sp.outer, n, in_bytes(in), dsts.data(), widths.data());
}

// Coordinates of output rows (all dimensions but the last), advanced one row at a time.
struct RowCoords {
  int rank;  // number of row dimensions
  const Shape& shape;
  int64_t c[kMaxRank] = {};
  void seek(int64_t row) {
    for (int d = rank - 1; d >= 0; --d) {
      c[d] = row % shape[d];
      row /= shape[d];
    }
  }
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      if (++c[d] < shape[d]) return;
      c[d] = 0;
    }
  }
};

void tile_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  const int64_t n_out = out.num_elements();
  if (n_out == 0) return;
  const size_t elem = elem_size(in);
  const int r = in.rank();
  if (r == 0) {
    std::memcpy(out.raw_mutable_data(), in.raw_data(), elem);
    return;
  }
  const Shape& is = in.shape();
  const Shape& os = out.shape();
  int64_t in_strides[kMaxRank];
  row_major_strides(is, in_strides);
  const int64_t in_w = is[r - 1], out_w = os[r - 1];
  const int64_t row_bytes = out_w * static_cast<int64_t>(elem);
  const char* src = in_bytes(in);
  char* dst = out_bytes(out);
  kc.pool.parallel_for(n_out / out_w, std::max<int64_t>(1, kCopyGrainBytes / row_bytes), [&](int64_t b, int64_t e) {
    RowCoords rc{r - 1, os};
    rc.seek(b);
    for (int64_t row = b; row < e; ++row, rc.next()) {
      int64_t off = 0;
      for (int d = 0; d < r - 1; ++d) off += (rc.c[d] % is[d]) * in_strides[d];
      char* d = dst + row * row_bytes;
      std::memcpy(d, src + off * static_cast<int64_t>(elem), static_cast<size_t>(in_w) * elem);
      // Double the filled prefix until the row is complete.
      for (int64_t done = in_w; done < out_w;) {
        const int64_t chunk = std::min(done, out_w - done);
        std::memcpy(d + done * static_cast<int64_t>(elem), d, static_cast<size_t>(chunk) * elem);
        done += chunk;
      }
    }
  });
}

void pad_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  const int64_t n_out = out.num_elements();
  if (n_out == 0) return;
  const size_t elem = elem_size(in);
  const int r = in.rank();
  if (r == 0) {
    std::memcpy(out.raw_mutable_data(), in.raw_data(), elem);
    return;
  }
  unsigned char value[16];
  convert_scalar(in.dtype(), kc.attrs.f("constant_values"), value);
  char* dst = out_bytes(out);
  if (in.num_elements() == 0) {
    fill_elements(kc.pool, dst, n_out, value, elem);
    return;
  }
  const AttrValue& pads = kc.attrs.get("paddings");
  const Shape& is = in.shape();
  const Shape& os = out.shape();
  int64_t in_strides[kMaxRank];
  row_major_strides(is, in_strides);
  const int64_t e = static_cast<int64_t>(elem);
  const int64_t out_w = os[r - 1], in_w = is[r - 1], left = pads.ints[2 * (r - 1)];
  const int64_t right = out_w - left - in_w;
  const char* src = in_bytes(in);
  kc.pool.parallel_for(n_out / out_w, std::max<int64_t>(1, kCopyGrainBytes / (out_w * e)), [&](int64_t b, int64_t end) {
    RowCoords rc{r - 1, os};
    rc.seek(b);
    for (int64_t row = b; row < end; ++row, rc.next()) {
      char* d = dst + row * out_w * e;
      bool inside = true;
      int64_t off = 0;
      for (int k = 0; k < r - 1 && inside; ++k) {
        const int64_t c = rc.c[k] - pads.ints[2 * k];
        inside = c >= 0 && c < is[k];
        off += c * in_strides[k];
      }
      if (!inside) {
        fill_elements(d, out_w, value, elem);
        continue;
      }
      fill_elements(d, left, value, elem);
      std::memcpy(d + left * e, src + off * e, static_cast<size_t>(in_w * e));
      fill_elements(d + (left + in_w) * e, right, value, elem);
    }
  });
}

void reverse_kernel(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  if (out.num_elements() == 0) return;
  const int r = in.rank();
  const AttrValue& axis = kc.attrs.get("axis");
  bool rev[kMaxRank] = {};
  for (size_t k = 0; k < axis.n_ints; ++k) rev[normalize_axis(axis.ints[k], r, kc.op())] = true;
  int64_t strides[kMaxRank], src[kMaxRank];
  row_major_strides(in.shape(), strides);
  int64_t offset = 0;
  for (int i = 0; i < r; ++i) {
    src[i] = rev[i] ? -strides[i] : strides[i];
    if (rev[i]) offset += (in.shape()[i] - 1) * strides[i];
  }
  const size_t elem = elem_size(in);
  strided_copy(kc.pool, elem, r, in.shape().dims(), out_bytes(out), strides,
               in_bytes(in) + offset * static_cast<int64_t>(elem), src);
}

void fill_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  fill_elements(kc.pool, out.raw_mutable_data(), out.num_elements(), kc.input(0).raw_data(), elem_size(out));
}

void range_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  const int64_t n = out.num_elements();
  const double start = kc.attrs.f("start"), delta = kc.attrs.f("delta");
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_int_v<T>) {
      // start + i * delta in wrapping unsigned arithmetic: every value produced lies between
      // start and limit, so the result is exact.
      const uint64_t s = static_cast<uint64_t>(static_cast<int64_t>(start));
      const uint64_t d = static_cast<uint64_t>(static_cast<int64_t>(delta));
      T* p = out.mutable_data<T>();
      kc.pool.parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = static_cast<T>(static_cast<int64_t>(s + static_cast<uint64_t>(i) * d));
      });
    } else if constexpr (is_real_v<T>) {
      T* p = out.mutable_data<T>();
      kc.pool.parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = convert<T>(start + static_cast<double>(i) * delta);
      });
    } else {
      throw_unsupported_dtype(kc, out.dtype());
    }
  });
}

CAIRN_REGISTER_KERNEL("Reshape", DeviceKind::CPU, copy_kernel);
CAIRN_REGISTER_KERNEL("ExpandDims", DeviceKind::CPU, copy_kernel);
CAIRN_REGISTER_KERNEL("Squeeze", DeviceKind::CPU, copy_kernel);
CAIRN_REGISTER_KERNEL("Transpose", DeviceKind::CPU, transpose_kernel);
CAIRN_REGISTER_KERNEL("Slice", DeviceKind::CPU, slice_kernel);
CAIRN_REGISTER_KERNEL("StridedSlice", DeviceKind::CPU, strided_slice_kernel);
CAIRN_REGISTER_KERNEL("StridedSliceGrad", DeviceKind::CPU, strided_slice_grad_kernel);
CAIRN_REGISTER_KERNEL("ConcatV2", DeviceKind::CPU, concat_kernel);
CAIRN_REGISTER_KERNEL("Pack", DeviceKind::CPU, pack_kernel);
CAIRN_REGISTER_KERNEL("Unpack", DeviceKind::CPU, split_along_kernel);
CAIRN_REGISTER_KERNEL("Split", DeviceKind::CPU, split_along_kernel);
CAIRN_REGISTER_KERNEL("Tile", DeviceKind::CPU, tile_kernel);
CAIRN_REGISTER_KERNEL("Pad", DeviceKind::CPU, pad_kernel);
CAIRN_REGISTER_KERNEL("Reverse", DeviceKind::CPU, reverse_kernel);
CAIRN_REGISTER_KERNEL("Fill", DeviceKind::CPU, fill_kernel);
CAIRN_REGISTER_KERNEL("Range", DeviceKind::CPU, range_kernel);

}  // namespace
}  // namespace cairn
