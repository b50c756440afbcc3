// Array and shape ops: reshaping, transposing, slicing (and StridedSliceGrad), joining and
// splitting, tiling, padding, reversing, and the constructors Fill and Range. TensorFlow raw-op
// names and semantics; values TensorFlow takes as input tensors (shape, perm, begin/size,
// multiples, paddings...) are attributes with TensorFlow's input names.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/array_util.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {

namespace {

// A shape from dims known to be non-negative; rank and element-count overflow are checked.
Shape checked_shape(const std::vector<int64_t>& dims, const char* op) {
  return Shape::from(dims.data(), dims.size(), op);
}

}  // namespace

// ---- StridedSlice resolution (TensorFlow's sparse -> dense spec) ----

StridedSliceSpec strided_slice_spec(const Shape& in, const Attrs& attrs, const char* op) {
  const std::vector<int64_t> begin = attrs.ints("begin"), end = attrs.ints("end"), strides = attrs.ints("strides");
  const int64_t begin_mask = attrs.i("begin_mask"), end_mask = attrs.i("end_mask");
  int64_t ellipsis_mask = attrs.i("ellipsis_mask");
  const int64_t new_axis_mask = attrs.i("new_axis_mask"), shrink_mask = attrs.i("shrink_axis_mask");
  if (begin.size() != end.size() || begin.size() != strides.size())
    raise(Code::InvalidArgument, "{}: begin, end and strides must have the same length, got {}, {} and {}", op,
          begin.size(), end.size(), strides.size());
  constexpr int kMaxSpec = 32;
  if (begin.size() > static_cast<size_t>(kMaxSpec))
    raise(Code::InvalidArgument, "{}: at most {} slice entries are supported, got {}", op, kMaxSpec, begin.size());
  for (int64_t m : {begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask})
    if (m < 0) raise(Code::InvalidArgument, "{}: masks must be non-negative, got {}", op, m);
  if ((ellipsis_mask & (ellipsis_mask - 1)) != 0)
    raise(Code::InvalidArgument, "{}: ellipsis_mask {} has more than one bit set; only one ellipsis is allowed", op,
          ellipsis_mask);
  for (size_t i = 0; i < strides.size(); ++i)
    if (strides[i] == 0) raise(Code::InvalidArgument, "{}: strides[{}] is 0; strides must be non-zero", op, i);

  int sparse_dims = static_cast<int>(begin.size());
  auto bit = [](int64_t mask, int i) { return ((mask >> i) & 1) != 0; };
  // New axes after the ellipsis reduce how many input dimensions the ellipsis covers; without an
  // ellipsis there is an implicit one at the end.
  bool ellipsis_seen = false;
  int new_axis_after_ellipsis = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && bit(new_axis_mask, i) && !bit(ellipsis_mask, i)) ++new_axis_after_ellipsis;
    if (bit(ellipsis_mask, i)) ellipsis_seen = true;
  }
  if (!ellipsis_seen) {
    ellipsis_mask |= int64_t{1} << sparse_dims;
    ++sparse_dims;
  }

  const int rank = in.rank();
  StridedSliceSpec spec;
  spec.rank = rank;
  int64_t d_begin[kMaxRank] = {}, d_end[kMaxRank] = {}, d_stride[kMaxRank] = {};
  bool d_begin_masked[kMaxRank] = {}, d_end_masked[kMaxRank] = {}, d_shrink[kMaxRank] = {};
  // Output dimensions in order: >= 0 an input dimension, -1 a new axis; shrunk axes are left out.
  std::vector<int> final_dims;
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (bit(ellipsis_mask, i)) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + new_axis_after_ellipsis, rank);
      for (; full < next; ++full) {
        d_begin[full] = d_end[full] = 0;
        d_stride[full] = 1;
        d_begin_masked[full] = d_end_masked[full] = true;
        final_dims.push_back(full);
      }
    } else if (bit(new_axis_mask, i)) {
      final_dims.push_back(-1);
    } else {
      if (full == rank)
        raise(Code::InvalidArgument, "{}: slice entry {} indexes dimension {} but the input {} has rank {}", op, i,
              full, in.str(), rank);
      d_begin[full] = begin[i];
      d_end[full] = end[i];
      d_stride[full] = strides[i];
      d_begin_masked[full] = bit(begin_mask, i);
      d_end_masked[full] = bit(end_mask, i);
      d_shrink[full] = bit(shrink_mask, i);
      if (!d_shrink[full]) final_dims.push_back(full);
      ++full;
    }
  }
  // Dimensions after the last entry are taken whole (already covered by the implicit ellipsis).
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = in[d], stride = d_stride[d];
    int64_t b, e;
    if (d_shrink[d]) {
      if (stride < 0)
        raise(Code::InvalidArgument, "{}: dimension {} is shrunk (indexed) but has negative stride {}", op, d,
              stride);
      const int64_t fwd = d_begin[d] < 0 ? dim + d_begin[d] : d_begin[d];
      if (fwd < 0 || fwd >= dim)
        raise(Code::InvalidArgument, "{}: index {} is out of bounds for dimension {} of size {} (input shape {})", op,
              d_begin[d], d, dim, in.str());
      b = fwd;
      e = fwd + 1;
    } else {
      // Valid positions: [0, dim] going forward, [-1, dim - 1] going backward.
      const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
      auto canonical = [&](int64_t x, bool masked, bool is_end) {
        if (masked) return (stride > 0) == is_end ? hi : lo;
        const int64_t fwd = x < 0 ? dim + x : x;  // dim >= 0, so this cannot overflow
        return std::max(lo, std::min(hi, fwd));
      };
      b = canonical(d_begin[d], d_begin_masked[d], false);
      e = canonical(d_end[d], d_end_masked[d], true);
    }
    const int64_t interval = e - b;
    int64_t size;
    if (interval == 0 || ((interval < 0) != (stride < 0))) {
      size = 0;
    } else {
      // |interval| <= dim + 1 and |stride| >= 1: the quotient is exact and cannot overflow.
      size = interval / stride + (interval % stride != 0 ? 1 : 0);
    }
    spec.begin[d] = b;
    spec.stride[d] = stride;
    spec.size[d] = size;
  }
  for (int f : final_dims) {
    if (spec.out.rank() == kMaxRank)
      raise(Code::InvalidArgument, "{}: the result would have rank {}, more than the maximum of {}", op,
            final_dims.size(), kMaxRank);
    spec.out.push_back(f < 0 ? 1 : spec.size[f]);
  }
  return spec;
}

namespace {

// ---- Shape functions ----

void reshape_shape(ShapeContext& c) {
  std::vector<int64_t> dims = c.attrs.ints("shape");
  const Shape& in = c.in(0);
  if (dims.size() > static_cast<size_t>(kMaxRank))
    raise(Code::InvalidArgument, "Reshape: shape {} has rank {}, more than the maximum of {}", ints_str(dims),
          dims.size(), kMaxRank);
  int unknown = -1;
  int64_t known = 1;
  bool overflow = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0)
        raise(Code::InvalidArgument, "Reshape: shape {} has more than one -1 dimension", ints_str(dims));
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      raise(Code::InvalidArgument, "Reshape: shape {} has negative dimension {} at index {}", ints_str(dims), dims[i],
            i);
    } else {
      if (dims[i] != 0 && known > INT64_MAX / dims[i]) overflow = true;
      else known *= dims[i];
    }
  }
  const int64_t n = in.num_elements();
  if (unknown >= 0) {
    if (known == 0)
      raise(Code::InvalidArgument,
            "Reshape: cannot infer the -1 dimension of shape {} because the other dimensions multiply to 0 "
            "(input shape {})",
            ints_str(dims), in.str());
    if (overflow || n % known != 0)
      raise(Code::InvalidArgument, "Reshape: cannot reshape input shape {} ({} elements) into shape {}", in.str(), n,
            ints_str(dims));
    dims[unknown] = n / known;
  } else if (overflow || known != n) {
    raise(Code::InvalidArgument, "Reshape: cannot reshape input shape {} ({} elements) into shape {} ({} elements)",
          in.str(), n, ints_str(dims), overflow ? std::string("too many") : std::to_string(known));
  }
  c.set_out(0, checked_shape(dims, "Reshape"));
}

void transpose_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  std::vector<int64_t> perm = c.attrs.ints("perm");
  const int rank = in.rank();
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (perm.size() != static_cast<size_t>(rank))
    raise(Code::InvalidArgument, "Transpose: perm {} has {} entries but the input {} has rank {}", ints_str(perm),
          perm.size(), in.str(), rank);
  bool seen[kMaxRank] = {};
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      raise(Code::InvalidArgument, "Transpose: perm {} is not a permutation of 0..{}", ints_str(perm), rank - 1);
    seen[p] = true;
    out.push_back(in[static_cast<int>(p)]);
  }
  c.set_out(0, out);
}

void expand_dims_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const int64_t axis = c.attrs.i("axis");
  const int rank = in.rank();
  if (axis < -rank - 1 || axis > rank)
    raise(Code::InvalidArgument, "ExpandDims: axis {} is out of range [{}, {}] for input shape {}", axis, -rank - 1,
          rank, in.str());
  if (rank == kMaxRank)
    raise(Code::InvalidArgument, "ExpandDims: the result would have rank {}, more than the maximum of {}", rank + 1,
          kMaxRank);
  const int a = static_cast<int>(axis < 0 ? axis + rank + 1 : axis);
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (i == a) out.push_back(1);
    out.push_back(in[i]);
  }
  if (a == rank) out.push_back(1);
  c.set_out(0, out);
}

void squeeze_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const AttrValue& dims = c.attrs.get("squeeze_dims");
  bool drop[kMaxRank] = {};
  if (dims.n_ints == 0) {
    for (int i = 0; i < in.rank(); ++i) drop[i] = in[i] == 1;
  } else {
    for (size_t k = 0; k < dims.n_ints; ++k) {
      const int a = normalize_axis(dims.ints[k], in.rank(), "Squeeze");
      if (in[a] != 1)
        raise(Code::InvalidArgument, "Squeeze: cannot squeeze dimension {} of input shape {}: its size is {}, not 1",
              dims.ints[k], in.str(), in[a]);
      drop[a] = true;
    }
  }
  Shape out;
  for (int i = 0; i < in.rank(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  c.set_out(0, out);
}

void slice_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const std::vector<int64_t> begin = c.attrs.ints("begin"), size = c.attrs.ints("size");
  const size_t rank = static_cast<size_t>(in.rank());
  if (begin.size() != rank || size.size() != rank)
    raise(Code::InvalidArgument, "Slice: begin {} and size {} must both have {} entries (the rank of input shape {})",
          ints_str(begin), ints_str(size), rank, in.str());
  Shape out;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t dim = in[static_cast<int>(i)], b = begin[i];
    if (b < 0 || b > dim)
      raise(Code::InvalidArgument, "Slice: begin[{}] = {} is out of range [0, {}] for input shape {}", i, b, dim,
            in.str());
    int64_t s = size[i];
    if (s == -1) s = dim - b;
    if (s < 0)
      raise(Code::InvalidArgument, "Slice: size[{}] = {} is negative (only -1, meaning 'to the end', is allowed)", i,
            s);
    if (s > dim - b)
      raise(Code::InvalidArgument, "Slice: begin[{}] = {} plus size[{}] = {} exceeds dimension {} of input shape {}", i,
            b, i, s, dim, in.str());
    out.push_back(s);
  }
  c.set_out(0, out);
}

void strided_slice_shape(ShapeContext& c) { c.set_out(0, strided_slice_spec(c.in(0), c.attrs, "StridedSlice").out); }

// StridedSliceGrad: the gradient of StridedSlice scattered back into a zero tensor of `shape`,
// the forward input's shape. dy must have the forward output's shape.
void strided_slice_grad_shape(ShapeContext& c) {
  const std::vector<int64_t> dims = c.attrs.ints("shape");
  const Shape in = checked_shape(dims, "StridedSliceGrad");
  const StridedSliceSpec spec = strided_slice_spec(in, c.attrs, "StridedSliceGrad");
  if (c.in(0) != spec.out)
    raise(Code::InvalidArgument,
          "StridedSliceGrad: dy has shape {} but slicing an input of shape {} with these attributes gives {}",
          c.in(0).str(), in.str(), spec.out.str());
  c.set_out(0, in);
}

void concat_shape(ShapeContext& c) {
  const Shape& first = c.in(0);
  if (first.rank() == 0)
    raise(Code::InvalidArgument, "ConcatV2: cannot concatenate scalars (input 0 has shape [])");
  const int64_t axis_attr = c.attrs.i("axis");
  if (axis_attr < -first.rank() || axis_attr >= first.rank())
    raise(Code::InvalidArgument, "ConcatV2: axis {} is out of range [{}, {}) for input shape {}", axis_attr,
          -first.rank(), first.rank(), first.str());
  const int axis = normalize_axis(axis_attr, first.rank(), "ConcatV2");
  Shape out = first;
  int64_t total = first[axis];
  for (int i = 1; i < c.num_inputs; ++i) {
    const Shape& s = c.in(i);
    bool ok = s.rank() == first.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == axis || s[d] == first[d];
    if (!ok)
      raise(Code::InvalidArgument,
            "ConcatV2: input {} has shape {} but input 0 has shape {}; shapes must match except on axis {}", i, s.str(),
            first.str(), axis);
    // Zero-element inputs exist with any dimension (float16[INT64_MAX, 0]), so the sum can overflow.
    if (__builtin_add_overflow(total, s[axis], &total))
      raise(Code::InvalidArgument, "ConcatV2: the inputs' sizes on axis {} add up to more than int64 holds", axis);
  }
  out.set_dim(axis, total);
  c.set_out(0, out);
}

void pack_shape(ShapeContext& c) {
  const Shape& first = c.in(0);
  const int rank = first.rank();
  for (int i = 1; i < c.num_inputs; ++i)
    if (c.in(i) != first)
      raise(Code::InvalidArgument, "Pack: input {} has shape {} but input 0 has shape {}; all must match", i,
            c.in(i).str(), first.str());
  const int64_t axis = c.attrs.i("axis");
  if (axis < -rank - 1 || axis > rank)
    raise(Code::InvalidArgument, "Pack: axis {} is out of range [{}, {}] for inputs of shape {}", axis, -rank - 1,
          rank, first.str());
  if (rank == kMaxRank)
    raise(Code::InvalidArgument, "Pack: the result would have rank {}, more than the maximum of {}", rank + 1,
          kMaxRank);
  const int a = static_cast<int>(axis < 0 ? axis + rank + 1 : axis);
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (i == a) out.push_back(c.num_inputs);
    out.push_back(first[i]);
  }
  if (a == rank) out.push_back(c.num_inputs);
  c.set_out(0, out);
}

void unpack_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  if (in.rank() == 0) raise(Code::InvalidArgument, "Unpack: cannot unpack a scalar");
  const int64_t axis_attr = c.attrs.i("axis");
  if (axis_attr < -in.rank() || axis_attr >= in.rank())
    raise(Code::InvalidArgument, "Unpack: axis {} is out of range [{}, {}) for input shape {}", axis_attr, -in.rank(),
          in.rank(), in.str());
  const int axis = normalize_axis(axis_attr, in.rank(), "Unpack");
  const int64_t num = c.attrs.i("num");
  if (num != in[axis])
    raise(Code::InvalidArgument, "Unpack: attribute 'num' is {} but dimension {} of input shape {} is {}", num, axis,
          in.str(), in[axis]);
  Shape out;
  for (int i = 0; i < in.rank(); ++i)
    if (i != axis) out.push_back(in[i]);
  for (int k = 0; k < c.num_outputs; ++k) c.set_out(k, out);
}

void split_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  if (in.rank() == 0) raise(Code::InvalidArgument, "Split: cannot split a scalar");
  const int64_t axis_attr = c.attrs.i("axis");
  if (axis_attr < -in.rank() || axis_attr >= in.rank())
    raise(Code::InvalidArgument, "Split: axis {} is out of range [{}, {}) for input shape {}", axis_attr, -in.rank(),
          in.rank(), in.str());
  const int axis = normalize_axis(axis_attr, in.rank(), "Split");
  const int64_t num = c.attrs.i("num_split");
  if (in[axis] % num != 0)
    raise(Code::InvalidArgument, "Split: dimension {} of input shape {} (size {}) does not divide evenly into {} pieces",
          axis, in.str(), in[axis], num);
  Shape out = in;
  out.set_dim(axis, in[axis] / num);
  for (int k = 0; k < c.num_outputs; ++k) c.set_out(k, out);
}

void tile_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const std::vector<int64_t> m = c.attrs.ints("multiples");
  if (m.size() != static_cast<size_t>(in.rank()))
    raise(Code::InvalidArgument, "Tile: multiples {} has {} entries but the input {} has rank {}", ints_str(m),
          m.size(), in.str(), in.rank());
  std::vector<int64_t> dims(m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0) raise(Code::InvalidArgument, "Tile: multiples[{}] = {} is negative", i, m[i]);
    const int64_t d = in[static_cast<int>(i)];
    if (d != 0 && m[i] > INT64_MAX / d)
      raise(Code::InvalidArgument, "Tile: dimension {} ({} * {}) overflows int64", i, d, m[i]);
    dims[i] = d * m[i];
  }
  c.set_out(0, checked_shape(dims, "Tile"));
}

void pad_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const std::vector<int64_t> p = c.attrs.ints("paddings");
  if (p.size() != 2 * static_cast<size_t>(in.rank()))
    raise(Code::InvalidArgument,
          "Pad: paddings has {} entries but input shape {} needs {} (a [before, after] pair per dimension)", p.size(),
          in.str(), 2 * in.rank());
  std::vector<int64_t> dims(static_cast<size_t>(in.rank()));
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t before = p[2 * i], after = p[2 * i + 1];
    if (before < 0 || after < 0)
      raise(Code::InvalidArgument, "Pad: paddings for dimension {} are [{}, {}]; they must be non-negative", i, before,
            after);
    if (before > INT64_MAX - in[i] || after > INT64_MAX - in[i] - before)
      raise(Code::InvalidArgument, "Pad: padded dimension {} overflows int64", i);
    dims[i] = in[i] + before + after;
  }
  c.set_out(0, checked_shape(dims, "Pad"));
}

void reverse_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const AttrValue& axis = c.attrs.get("axis");
  bool seen[kMaxRank] = {};
  for (size_t k = 0; k < axis.n_ints; ++k) {
    const int a = normalize_axis(axis.ints[k], in.rank(), "Reverse");
    if (seen[a]) raise(Code::InvalidArgument, "Reverse: axis {} is given more than once", a);
    seen[a] = true;
  }
  c.set_out(0, in);
}

void fill_shape(ShapeContext& c) {
  if (c.in(0).rank() != 0)
    raise(Code::InvalidArgument, "Fill: value must be a scalar, got shape {}", c.in(0).str());
  c.set_out(0, checked_shape(c.attrs.ints("dims"), "Fill"));
}

// Range's length (the kernel reads it from the output shape). Integers are exact.
void range_shape(ShapeContext& c) {
  const double start = c.attrs.f("start"), limit = c.attrs.f("limit"), delta = c.attrs.f("delta");
  const DType dtype = c.attrs.dtype("dtype");
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    raise(Code::InvalidArgument, "Range: start, limit and delta must be finite, got {}, {} and {}", start, limit,
          delta);
  if (delta == 0) raise(Code::InvalidArgument, "Range: delta must not be 0");
  if (delta > 0 && start > limit)
    raise(Code::InvalidArgument, "Range: start {} is greater than limit {} but delta {} is positive", start, limit,
          delta);
  if (delta < 0 && start < limit)
    raise(Code::InvalidArgument, "Range: start {} is less than limit {} but delta {} is negative", start, limit, delta);
  int64_t size = 0;
  if (dtype_is_integer(dtype)) {
    visit_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        // start and limit must be values of the dtype; delta only an integer (it may be negative
        // for unsigned types). Every element produced lies between start and limit.
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;  // exclusive
        const double lo64 = -9223372036854775808.0, hi64 = 9223372036854775808.0;
        const char* names[3] = {"start", "limit", "delta"};
        const double vals[3] = {start, limit, delta};
        for (int k = 0; k < 3; ++k) {
          const bool ok = std::floor(vals[k]) == vals[k] && vals[k] >= (k == 2 ? lo64 : lo) && vals[k] < (k == 2 ? hi64 : hi);
          if (!ok)
            raise(Code::InvalidArgument, "Range: {} = {} is not representable as {}", names[k], vals[k],
                  dtype_name(dtype));
        }
      }
    });
    const int64_t s = static_cast<int64_t>(start), l = static_cast<int64_t>(limit), d = static_cast<int64_t>(delta);
    const uint64_t span = d > 0 ? static_cast<uint64_t>(l) - static_cast<uint64_t>(s)
                                : static_cast<uint64_t>(s) - static_cast<uint64_t>(l);
    const uint64_t step = d > 0 ? static_cast<uint64_t>(d) : uint64_t{0} - static_cast<uint64_t>(d);
    const uint64_t n = span / step + (span % step != 0 ? 1 : 0);
    if (n > static_cast<uint64_t>(INT64_MAX)) raise(Code::InvalidArgument, "Range: {} elements is too many", n);
    size = static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(std::fabs((limit - start) / delta));
    if (!(n <= 4611686018427387904.0))  // 2^62
      raise(Code::InvalidArgument, "Range: {} elements is too many", n);
    size = static_cast<int64_t>(n);
  }
  c.set_out(0, Shape{size});
}

CAIRN_REGISTER_OP(OpBuilder("Reshape")
                      .summary("Same elements in a new shape; `shape` may hold one -1, inferred from the element count.")
                      .input("tensor", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("shape")
                      .shape(reshape_shape));

CAIRN_REGISTER_OP(OpBuilder("Transpose")
                      .summary("Permutes dimensions: output dim i is input dim perm[i]; empty `perm` reverses them.")
                      .input("x", "T")
                      .output("y", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr("perm", {})
                      .shape(transpose_shape));

CAIRN_REGISTER_OP(OpBuilder("ExpandDims")
                      .summary("Inserts a size-1 dimension at `axis` (in [-rank-1, rank]).")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .int_attr_required("axis")
                      .shape(expand_dims_shape));

CAIRN_REGISTER_OP(OpBuilder("Squeeze")
                      .summary("Removes size-1 dimensions: those in `squeeze_dims`, or all of them when it is empty.")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr("squeeze_dims", {})
                      .shape(squeeze_shape));

CAIRN_REGISTER_OP(OpBuilder("Slice")
                      .summary("The block starting at `begin` with extent `size` (-1: to the end of that dimension).")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("begin")
                      .ints_attr_required("size")
                      .shape(slice_shape));

CAIRN_REGISTER_OP(OpBuilder("StridedSlice")
                      .summary("Python-style input[begin:end:strides] with TensorFlow's begin/end/ellipsis/new-axis/"
                               "shrink-axis masks; out-of-range bounds clamp, an out-of-range shrunk index is an error.")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("begin")
                      .ints_attr_required("end")
                      .ints_attr_required("strides")
                      .int_attr("begin_mask", 0)
                      .int_attr("end_mask", 0)
                      .int_attr("ellipsis_mask", 0)
                      .int_attr("new_axis_mask", 0)
                      .int_attr("shrink_axis_mask", 0)
                      .shape(strided_slice_shape));

CAIRN_REGISTER_OP(OpBuilder("StridedSliceGrad")
                      .summary("StridedSlice's gradient: a zero tensor of `shape` (the forward input's shape) with "
                               "`dy` written at the positions the forward slice read; attributes as StridedSlice's.")
                      .input("dy", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("shape")
                      .ints_attr_required("begin")
                      .ints_attr_required("end")
                      .ints_attr_required("strides")
                      .int_attr("begin_mask", 0)
                      .int_attr("end_mask", 0)
                      .int_attr("ellipsis_mask", 0)
                      .int_attr("new_axis_mask", 0)
                      .int_attr("shrink_axis_mask", 0)
                      .shape(strided_slice_grad_shape));

CAIRN_REGISTER_OP(OpBuilder("ConcatV2")
                      .summary("Joins `values` along `axis`; all other dimensions must match.")
                      .variadic_input("values", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .int_attr("axis", 0)
                      .shape(concat_shape));

CAIRN_REGISTER_OP(OpBuilder("Pack")
                      .summary("Stacks same-shaped `values` along a new dimension at `axis` (in [-rank-1, rank]).")
                      .variadic_input("values", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .int_attr("axis", 0)
                      .shape(pack_shape));

CAIRN_REGISTER_OP(OpBuilder("Unpack")
                      .summary("Splits `value` into `num` tensors along `axis`, removing that dimension.")
                      .input("value", "T")
                      .variadic_output("output", "T", "num")
                      .type_attr("T", dtypes::kAll)
                      .int_attr_required("num", 0)
                      .int_attr("axis", 0)
                      .shape(unpack_shape));

CAIRN_REGISTER_OP(OpBuilder("Split")
                      .summary("Splits `value` along `axis` into `num_split` equal pieces (the size must divide evenly).")
                      .input("value", "T")
                      .variadic_output("output", "T", "num_split")
                      .type_attr("T", dtypes::kAll)
                      .int_attr("axis", 0)
                      .int_attr_required("num_split", 1)
                      .shape(split_shape));

CAIRN_REGISTER_OP(OpBuilder("Tile")
                      .summary("Repeats the input multiples[i] times along dimension i.")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("multiples")
                      .shape(tile_shape));

CAIRN_REGISTER_OP(OpBuilder("Pad")
                      .summary("Pads with `constant_values` (converted to T): `paddings` is the flattened [rank, 2] "
                               "list of [before, after] counts (TensorFlow's PadV2).")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("paddings")
                      .float_attr("constant_values", 0)
                      .shape(pad_shape)
                      .alias("PadV2"));

CAIRN_REGISTER_OP(OpBuilder("Reverse")
                      .summary("Reverses the dimensions listed in `axis` (TensorFlow's ReverseV2).")
                      .input("tensor", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("axis")
                      .shape(reverse_shape)
                      .alias("ReverseV2"));

CAIRN_REGISTER_OP(OpBuilder("Fill")
                      .summary("A tensor of shape `dims` with every element equal to the scalar `value`.")
                      .input("value", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .ints_attr_required("dims")
                      .shape(fill_shape));

CAIRN_REGISTER_OP(OpBuilder("Range")
                      .summary("start, start + delta, ... up to but excluding limit, as `dtype`; integer dtypes need "
                               "integral start/limit/delta and are computed exactly.")
                      .output("output", "dtype")
                      .float_attr_required("start")
                      .float_attr_required("limit")
                      .float_attr("delta", 1)
                      .dtype_attr("dtype", dtypes::kReal, DType::Float32)
                      .shape(range_shape));

}  // namespace
}  // namespace cairn
