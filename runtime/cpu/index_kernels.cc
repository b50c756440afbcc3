// CPU kernels for the indexing ops in ops/index_ops.cc. Index values are validated before any
// output is written; gathers move whole slices with memcpy.
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cpu/array_util.h"
#include "runtime/cpu/axis.h"
#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

// "[1,2]": the coordinates of flat element `flat` of `s`.
std::string coords_str(int64_t flat, const Shape& s) {
  int64_t c[kMaxRank] = {};
  for (int d = s.rank() - 1; d >= 0; --d) {
    c[d] = s[d] == 0 ? 0 : flat % s[d];
    flat = s[d] == 0 ? 0 : flat / s[d];
  }
  std::string out = "[";
  for (int d = 0; d < s.rank(); ++d) out += (d ? "," : "") + std::to_string(c[d]);
  return out + "]";
}

// Calls f(TypeTag<I>) for an int32 or int64 index tensor (uint8 too, for OneHot).
template <class F>
void visit_index(const KernelContext& kc, DType t, F&& f) {
  switch (t) {
    case DType::Int32: f(TypeTag<int32_t>{}); break;
    case DType::Int64: f(TypeTag<int64_t>{}); break;
    case DType::UInt8: f(TypeTag<uint8_t>{}); break;
    default: throw_unsupported_dtype(kc, t);
  }
}

// ---- GatherV2 ----

// Output slices [b, e) of a gather viewed as [batch * outer, n] slices of E bytes (E == 0: `bytes`).
template <size_t E, class I>
void gather_range(char* dst, const char* src, const I* idx, int64_t b, int64_t e, int64_t n, int64_t outer,
                  int64_t limit, int64_t bytes = static_cast<int64_t>(E)) {
  int64_t j = b % n, bo = b / n;
  const I* ib = idx + (bo / outer) * n;     // this batch's indices
  const char* sb = src + bo * limit * bytes;  // params[bo, 0, :]
  for (int64_t t = b; t < e; ++t) {
    std::memcpy(dst + t * bytes, sb + static_cast<int64_t>(ib[j]) * bytes, E ? E : static_cast<size_t>(bytes));
    if (++j == n) {
      j = 0;
      ++bo;
      sb += limit * bytes;
      ib = idx + (bo / outer) * n;
    }
  }
}

template <class I>
void gather(KernelContext& kc) {
  const Tensor& params = kc.input(0);
  const Tensor& indices = kc.input(1);
  Tensor& out = kc.output(0);
  const int pr = params.rank(), ir = indices.rank();
  int64_t bd64 = kc.attrs.i("batch_dims");
  if (bd64 < 0) bd64 += ir;
  const int bd = static_cast<int>(bd64);
  const int axis = normalize_axis(kc.attrs.i("axis"), pr, kc.op());
  const Shape& ps = params.shape();
  const int64_t batches = product(ps, 0, bd), outer = product(ps, bd, axis), limit = ps[axis];
  const int64_t inner = product(ps, axis + 1, pr), n = product(indices.shape(), bd, ir);
  const I* idx = indices.data<I>();
  const int64_t count = indices.num_elements();
  for (int64_t k = 0; k < count; ++k) {
    const int64_t v = static_cast<int64_t>(idx[k]);
    if (v < 0 || v >= limit)
      raise(Code::InvalidArgument, "{}: indices{} = {} is not in [0, {}) (dimension {} of params shape {})", kc.op(),
            coords_str(k, indices.shape()), v, limit, axis, ps.str());
  }
  const int64_t items = batches * outer * n;
  if (items == 0 || inner == 0) return;
  const size_t elem = dtype_size(params.dtype());
  const int64_t slice_bytes = inner * static_cast<int64_t>(elem);
  const char* src = static_cast<const char*>(params.raw_data());
  char* dst = static_cast<char*>(out.raw_mutable_data());
  kc.pool.parallel_for(items, std::max<int64_t>(1, kCopyGrainBytes / slice_bytes), [&](int64_t b, int64_t e) {
    switch (slice_bytes) {  // single elements: fixed-size copies the compiler inlines
      case 1: gather_range<1>(dst, src, idx, b, e, n, outer, limit); break;
      case 2: gather_range<2>(dst, src, idx, b, e, n, outer, limit); break;
      case 4: gather_range<4>(dst, src, idx, b, e, n, outer, limit); break;
      case 8: gather_range<8>(dst, src, idx, b, e, n, outer, limit); break;
      default: gather_range<0>(dst, src, idx, b, e, n, outer, limit, slice_bytes);
    }
  });
}

void gather_kernel(KernelContext& kc) {
  visit_index(kc, kc.input(1).dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<I, uint8_t>) gather<I>(kc);
    else throw_unsupported_dtype(kc, kc.input(1).dtype());
  });
}

// ---- ScatterNd ----

// a + b without signed-overflow UB for integers (wraps, like TensorFlow's CPU kernels).
template <class T>
T add_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// Element offsets into a tensor of `out_shape` of the slices that the rows of `indices` (the
// last dimension holds k coordinates) address, and the slice size; throws on an out-of-range
// coordinate. Shared by ScatterNd and GatherNd.
template <class I>
std::vector<int64_t> nd_offsets(const KernelContext& kc, const Tensor& indices, const Shape& out_shape,
                                int64_t* slice_out) {
  const int ir = indices.rank();
  const int k = static_cast<int>(indices.shape()[ir - 1]);
  const int64_t rows = product(indices.shape(), 0, ir - 1);
  const int64_t slice = product(out_shape, k, out_shape.rank());
  *slice_out = slice;
  // Rows without coordinates (k == 0) address the whole tensor and need no check. If that tensor is
  // empty too, nothing moves: the rows, which the indices' zero elements do not bound (2^31 rows of
  // nothing), are not walked.
  if (k == 0 && slice == 0) return {};
  int64_t strides[kMaxRank];  // in slices
  int64_t s = 1;
  for (int j = k - 1; j >= 0; --j) {
    strides[j] = s;
    s *= out_shape[j];
  }
  const I* idx = indices.data<I>();
  std::vector<int64_t> offsets(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    int64_t off = 0;
    for (int j = 0; j < k; ++j) {
      const int64_t v = static_cast<int64_t>(idx[i * k + j]);
      if (v < 0 || v >= out_shape[j]) {
        std::string row = "[";
        for (int q = 0; q < k; ++q) row += (q ? "," : "") + std::to_string(static_cast<int64_t>(idx[i * k + q]));
        Shape lead;
        for (int q = 0; q < ir - 1; ++q) lead.push_back(indices.shape()[q]);
        raise(Code::InvalidArgument, "{}: index {} at indices{} is out of bounds for shape {}", kc.op(), row + "]",
              coords_str(i, lead), out_shape.str());
      }
      off += v * strides[j];
    }
    offsets[static_cast<size_t>(i)] = off * slice;
  }
  *slice_out = slice;
  return offsets;
}

template <class T, class Acc>
void scatter_add(ThreadPool& pool, Acc* acc, const T* upd, const std::vector<int64_t>& offsets, int64_t slice) {
  const int64_t rows = static_cast<int64_t>(offsets.size());
  // Columns are independent, and each column adds its rows in index order: deterministic.
  pool.parallel_for(slice, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, rows)), [&](int64_t b, int64_t e) {
    for (int64_t i = 0; i < rows; ++i) {
      Acc* o = acc + offsets[static_cast<size_t>(i)];
      const T* u = upd + i * slice;
      for (int64_t c = b; c < e; ++c) o[c] = add_wrap<Acc>(o[c], static_cast<Acc>(widen(u[c])));
    }
  });
}

// out = 0, then row i of `updates` ([rows, slice]) is added at offsets[i] (ScatterNd and
// UnsortedSegmentSum).
void zero_and_accumulate(KernelContext& kc, const Tensor& updates, Tensor& out, const std::vector<int64_t>& offsets,
                         int64_t slice) {
  const int64_t n_out = out.num_elements();
  if (n_out == 0) return;
  std::memset(out.raw_mutable_data(), 0, static_cast<size_t>(n_out) * dtype_size(out.dtype()));
  if (slice == 0 || offsets.empty()) return;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_numeric_v<T>) {
      const T* upd = updates.data<T>();
      T* o = out.mutable_data<T>();
      if constexpr (is_half<T>::value) {
        // Accumulate 16-bit floats in float, round once at the end.
        std::vector<float> acc(static_cast<size_t>(n_out), 0.0f);
        scatter_add<T, float>(kc.pool, acc.data(), upd, offsets, slice);
        for (int64_t i = 0; i < n_out; ++i) o[i] = convert<T>(acc[static_cast<size_t>(i)]);
      } else {
        scatter_add<T, T>(kc.pool, o, upd, offsets, slice);
      }
    } else {
      throw_unsupported_dtype(kc, out.dtype());
    }
  });
}

template <class I>
void scatter_nd(KernelContext& kc) {
  Tensor& out = kc.output(0);
  int64_t slice = 0;
  const std::vector<int64_t> offsets = nd_offsets<I>(kc, kc.input(0), out.shape(), &slice);
  zero_and_accumulate(kc, kc.input(1), out, offsets, slice);
}

void scatter_nd_kernel(KernelContext& kc) {
  visit_index(kc, kc.input(0).dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<I, uint8_t>) scatter_nd<I>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

// ---- GatherNd ----

template <class I>
void gather_nd(KernelContext& kc) {
  const Tensor& params = kc.input(0);
  Tensor& out = kc.output(0);
  int64_t slice = 0;
  const std::vector<int64_t> offsets = nd_offsets<I>(kc, kc.input(1), params.shape(), &slice);
  if (out.num_elements() == 0) return;
  const int64_t slice_bytes = slice * static_cast<int64_t>(dtype_size(params.dtype()));
  const char* src = static_cast<const char*>(params.raw_data());
  char* dst = static_cast<char*>(out.raw_mutable_data());
  const int64_t rows = static_cast<int64_t>(offsets.size());
  const int64_t elem = static_cast<int64_t>(dtype_size(params.dtype()));
  kc.pool.parallel_for(rows, std::max<int64_t>(1, kCopyGrainBytes / slice_bytes), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      std::memcpy(dst + r * slice_bytes, src + offsets[static_cast<size_t>(r)] * elem, static_cast<size_t>(slice_bytes));
  });
}

void gather_nd_kernel(KernelContext& kc) {
  visit_index(kc, kc.input(1).dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<I, uint8_t>) gather_nd<I>(kc);
    else throw_unsupported_dtype(kc, kc.input(1).dtype());
  });
}

// ---- UnsortedSegmentSum ----

template <class I>
void unsorted_segment_sum(KernelContext& kc) {
  const Tensor& data = kc.input(0);
  const Tensor& ids = kc.input(1);
  Tensor& out = kc.output(0);
  const int64_t num_segments = kc.attrs.i("num_segments");
  const int64_t slice = product(data.shape(), ids.rank(), data.rank());
  const I* id = ids.data<I>();
  std::vector<int64_t> offsets(static_cast<size_t>(ids.num_elements()));
  for (size_t i = 0; i < offsets.size(); ++i) {
    const int64_t v = static_cast<int64_t>(id[i]);
    if (v < 0 || v >= num_segments)
      raise(Code::InvalidArgument, "{}: segment_ids{} = {} is not in [0, {}) (num_segments)", kc.op(),
            coords_str(static_cast<int64_t>(i), ids.shape()), v, num_segments);
    offsets[i] = v * slice;
  }
  zero_and_accumulate(kc, data, out, offsets, slice);
}

void unsorted_segment_sum_kernel(KernelContext& kc) {
  visit_index(kc, kc.input(1).dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<I, uint8_t>) unsorted_segment_sum<I>(kc);
    else throw_unsupported_dtype(kc, kc.input(1).dtype());
  });
}

// ---- Where ----

constexpr int64_t kWhereBlock = 1 << 16;

template <class T>
bool nonzero(T v) {
  return widen(v) != compute_t<T>(0);
}

template <class T>
void where(KernelContext& kc) {
  const Tensor& in = kc.input(0);
  const Shape& s = in.shape();
  const int r = s.rank();
  const int64_t n = in.num_elements();
  const T* p = in.data<T>();
  if (r == 0 || n == 0) {
    kc.allocate_output(0, DType::Int64, Shape{r == 0 && nonzero(p[0]) ? 1 : 0, r});
    return;
  }
  // Blocks of whole rows (the last dimension): count per block, then each block writes at its
  // prefix offset. Block boundaries do not depend on the thread count.
  const int64_t width = s[r - 1], rows = n / width;
  const int64_t block_rows = std::max<int64_t>(1, kWhereBlock / width);
  const int64_t blocks = (rows + block_rows - 1) / block_rows;
  std::vector<int64_t> counts(static_cast<size_t>(blocks) + 1, 0);
  kc.pool.parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      int64_t c = 0;
      for (int64_t i = blk * block_rows * width, end = std::min(rows, (blk + 1) * block_rows) * width; i < end; ++i)
        c += nonzero(p[i]) ? 1 : 0;
      counts[static_cast<size_t>(blk) + 1] = c;
    }
  });
  for (int64_t blk = 0; blk < blocks; ++blk) counts[blk + 1] += counts[blk];
  const int64_t total = counts[static_cast<size_t>(blocks)];
  Tensor& out = kc.allocate_output(0, DType::Int64, Shape{total, r});
  if (total == 0) return;
  int64_t* o = out.mutable_data<int64_t>();
  kc.pool.parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t row0 = blk * block_rows, row1 = std::min(rows, row0 + block_rows);
      int64_t c[kMaxRank] = {};  // coordinates of the current row (first r - 1 entries)
      for (int64_t d = r - 2, rem = row0; d >= 0; --d) {
        c[d] = rem % s[static_cast<int>(d)];
        rem /= s[static_cast<int>(d)];
      }
      int64_t* w = o + counts[static_cast<size_t>(blk)] * r;
      for (int64_t row = row0; row < row1; ++row) {
        const T* pr = p + row * width;
        for (int64_t col = 0; col < width; ++col) {
          if (!nonzero(pr[col])) continue;
          for (int d = 0; d < r - 1; ++d) w[d] = c[d];
          w[r - 1] = col;
          w += r;
        }
        for (int d = r - 2; d >= 0; --d) {
          if (++c[d] < s[d]) break;
          c[d] = 0;
        }
      }
    }
  });
}

void where_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) { where<typename decltype(tag)::type>(kc); });
}

// ---- OneHot ----

template <class I>
void one_hot(KernelContext& kc) {
  const Tensor& indices = kc.input(0);
  Tensor& out = kc.output(0);
  const int64_t n_out = out.num_elements();
  if (n_out == 0) return;
  const DType dtype = out.dtype();
  const size_t elem = dtype_size(dtype);
  unsigned char on[16], off[16];
  convert_scalar(dtype, kc.attrs.f("on_value"), on);
  convert_scalar(dtype, kc.attrs.f("off_value"), off);
  const int64_t axis_attr = kc.attrs.i("axis");
  const int axis = axis_attr == -1 ? indices.rank() : static_cast<int>(axis_attr);
  const int64_t depth = kc.attrs.i("depth");
  const int64_t inner = product(indices.shape(), axis, indices.rank());
  const int64_t count = indices.num_elements();
  char* dst = static_cast<char*>(out.raw_mutable_data());
  fill_elements(kc.pool, dst, n_out, off, elem);
  const I* idx = indices.data<I>();
  kc.pool.parallel_for(count, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t v = static_cast<int64_t>(idx[t]);
      if (v < 0 || v >= depth) continue;
      const int64_t o = t / inner, i = t % inner;
      std::memcpy(dst + ((o * depth + v) * inner + i) * static_cast<int64_t>(elem), on, elem);
    }
  });
}

void one_hot_kernel(KernelContext& kc) {
  visit_index(kc, kc.input(0).dtype(), [&](auto tag) { one_hot<typename decltype(tag)::type>(kc); });
}

CAIRN_REGISTER_KERNEL("GatherV2", DeviceKind::CPU, gather_kernel);
CAIRN_REGISTER_KERNEL("ScatterNd", DeviceKind::CPU, scatter_nd_kernel);
CAIRN_REGISTER_KERNEL("GatherNd", DeviceKind::CPU, gather_nd_kernel);
CAIRN_REGISTER_KERNEL("UnsortedSegmentSum", DeviceKind::CPU, unsorted_segment_sum_kernel);
CAIRN_REGISTER_KERNEL("Where", DeviceKind::CPU, where_kernel);
CAIRN_REGISTER_KERNEL("OneHot", DeviceKind::CPU, one_hot_kernel);

}  // namespace
}  // namespace cairn
