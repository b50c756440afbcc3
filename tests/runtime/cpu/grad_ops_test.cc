// The ops added for gradients: StridedSliceGrad, UnsortedSegmentSum and GatherNd.
#include "runtime/ops/registry.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

using Ints = std::vector<int64_t>;

const DType kGradTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64};

std::vector<double> iota(int64_t n, double from = 1) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = from + static_cast<double>(i);
  return v;
}

void check_same(const Tensor& got, const Tensor& want) {
  CHECK(got.dtype() == want.dtype());
  CHECK_MESSAGE(got.shape() == want.shape(), got.shape().str() << " vs " << want.shape().str());
  CHECK(as_doubles(got) == as_doubles(want));
}

// begin/end/strides plus masks, shared by StridedSlice and StridedSliceGrad.
struct SliceSpec {
  Ints begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_mask = 0;
};

std::vector<NamedAttr> slice_attrs(const SliceSpec& s) {
  return {attr_ints("begin", s.begin),         attr_ints("end", s.end),
          attr_ints("strides", s.strides),     attr_int("begin_mask", s.begin_mask),
          attr_int("end_mask", s.end_mask),    attr_int("ellipsis_mask", s.ellipsis_mask),
          attr_int("new_axis_mask", s.new_axis_mask), attr_int("shrink_axis_mask", s.shrink_mask)};
}

Tensor slice_grad(const Tensor& dy, const Ints& shape, const SliceSpec& s) {
  std::vector<NamedAttr> attrs = slice_attrs(s);
  attrs.push_back(attr_ints("shape", shape));
  return run_op(ctx(), "StridedSliceGrad", {dy}, attrs)[0];
}

Tensor strided_slice(const Tensor& x, const SliceSpec& s) { return run_op(ctx(), "StridedSlice", {x}, slice_attrs(s))[0]; }

Tensor segment_sum(const Tensor& data, const Tensor& ids, int64_t n) {
  return run1("UnsortedSegmentSum", {data, ids}, {attr_int("num_segments", n)});
}

Tensor gather_nd(const Tensor& params, const Tensor& indices) { return run1("GatherNd", {params, indices}); }

}  // namespace

// ---------------- StridedSliceGrad ----------------

TEST_CASE("StridedSliceGrad writes dy where the slice read and zeros elsewhere") {
  for (DType t : kGradTypes) {
    CAPTURE(dtype_name(t));
    // x[1:6:2] of a length-6 vector reads positions 1, 3, 5.
    check_same(slice_grad(make_as(t, {7, 8, 9}, {3}), {6}, {{1}, {6}, {2}}), make_as(t, {0, 7, 0, 8, 0, 9}, {6}));
    // x[::-2] reads 4, 2, 0: dy[0] lands at 4.
    check_same(slice_grad(make_as(t, {1, 2, 3}, {3}), {5}, {{0}, {0}, {-2}, 1, 1}), make_as(t, {3, 0, 2, 0, 1}, {5}));
    // x[1, ::2] of [3,4] (shrink on axis 0) reads (1,0) and (1,2).
    check_same(slice_grad(make_as(t, {5, 6}, {2}), {3, 4}, {{1, 0}, {2, 4}, {1, 2}, 0, 0, 0, 0, 1}),
               make_as(t, {0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0}, {3, 4}));
    // x[None, 2:0:-1, -1] of [3,2]... (new axis, negative step, shrink with a negative index)
    check_same(slice_grad(make_as(t, {4, 5}, {1, 2}), {3, 2}, {{0, 2, -1}, {0, 0, 0}, {1, -1, 1}, 0, 0, 0, 1, 4}),
               make_as(t, {0, 0, 0, 5, 0, 4}, {3, 2}));
    // x[..., 1] of [2,2,3]
    check_same(slice_grad(make_as(t, {1, 2, 3, 4}, {2, 2}), {2, 2, 3}, {{0, 1}, {0, 2}, {1, 1}, 0, 0, 1, 0, 2}),
               make_as(t, {0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0}, {2, 2, 3}));
  }
}

TEST_CASE("StridedSliceGrad is the adjoint of StridedSlice") {
  // Slicing the gradient gives dy back, for every combination of masks exercised here.
  const std::vector<std::pair<Ints, SliceSpec>> specs = {
      {{4, 5}, {{1, -1}, {4, 0}, {2, -2}}},
      {{4, 5}, {{0, 1}, {0, 0}, {-1, 3}, 1, 3}},
      {{2, 3, 4}, {{0, 1}, {0, 4}, {1, 2}, 0, 0, 1}},
      {{2, 3, 4}, {{0, 0, 2}, {0, 0, 3}, {1, 1, 1}, 0, 0, 2, 1, 4}},
      {{3, 4}, {{5, -9}, {-9, 9}, {-1, 3}}},  // clamped bounds
      {{4, 3}, {{3, 0}, {1, 3}, {1, 1}}},      // empty
  };
  for (const auto& [dims, spec] : specs) {
    const Shape shape = Shape::from(dims.data(), dims.size(), "test");
    CAPTURE(shape.str());
    const Shape out = strided_slice(make_as(DType::Float64, iota(shape.num_elements()), shape), spec).shape();
    Tensor dy = make_as(DType::Float64, iota(out.num_elements(), 10), out);
    Tensor g = slice_grad(dy, dims, spec);
    CHECK(g.shape() == shape);
    check_same(strided_slice(g, spec), dy);
    // Everything not read is zero: the gradient holds exactly dy's values.
    double total = 0;
    for (double v : as_doubles(g)) total += v;
    double want = 0;
    for (double v : as_doubles(dy)) want += v;
    CHECK(total == want);
  }
}

TEST_CASE("StridedSliceGrad errors") {
  CHECK_THROWS_CODE(slice_grad(make<float>({1, 2}, {2}), {6}, {{1}, {6}, {2}}), Code::InvalidArgument,
                    "StridedSliceGrad: dy has shape [2] but slicing an input of shape [6] with these attributes gives [3]");
  CHECK_THROWS_CODE(slice_grad(make<float>({1}, {1}), {3}, {{0}, {1}, {0}}), Code::InvalidArgument,
                    "StridedSliceGrad: strides[0] is 0");
  CHECK_THROWS_CODE(slice_grad(make<float>({1}, {}), {3}, {{5}, {6}, {1}, 0, 0, 0, 0, 1}), Code::InvalidArgument,
                    "StridedSliceGrad: index 5 is out of bounds for dimension 0");
  CHECK_THROWS_CODE(slice_grad(make<float>({1}, {1}), {-3}, {{0}, {1}, {1}}), Code::InvalidArgument, "StridedSliceGrad");
}

// ---------------- UnsortedSegmentSum ----------------

TEST_CASE("UnsortedSegmentSum adds rows into their segments") {
  for (DType t : kGradTypes) {
    CAPTURE(dtype_name(t));
    // repeated ids add; segment 2 gets nothing
    check_same(segment_sum(make_as(t, {1, 2, 3, 4, 5}, {5}), make<int32_t>({0, 1, 0, 3, 1}, {5}), 4),
               make_as(t, {4, 7, 0, 4}, {4}));
    // rows of a matrix
    check_same(segment_sum(make_as(t, iota(6), {3, 2}), make<int64_t>({1, 1, 0}, {3}), 2),
               make_as(t, {5, 6, 4, 6}, {2, 2}));
    // 2-D ids over a [2,2,2] tensor: slices of 2
    check_same(segment_sum(make_as(t, iota(8), {2, 2, 2}), make<int32_t>({2, 0, 2, 2}, {2, 2}), 3),
               make_as(t, {3, 4, 0, 0, 1 + 5 + 7, 2 + 6 + 8}, {3, 2}));
    // ids with the same shape as data: scalars
    check_same(segment_sum(make_as(t, {1, 2, 3, 4}, {2, 2}), make<int32_t>({1, 1, 0, 1}, {2, 2}), 2),
               make_as(t, {3, 7}, {2}));
    // no data, and no segments
    check_same(segment_sum(make_as(t, {}, {0, 3}), make<int32_t>({}, {0}), 2), make_as(t, {0, 0, 0, 0, 0, 0}, {2, 3}));
    check_same(segment_sum(make_as(t, {}, {0}), make<int64_t>({}, {0}), 0), make_as(t, {}, {0}));
  }
}

TEST_CASE("UnsortedSegmentSum errors name the id") {
  Tensor data = make<float>({1, 2, 3}, {3});
  CHECK_THROWS_CODE(segment_sum(data, make<int32_t>({0, 4, 1}, {3}), 3), Code::InvalidArgument,
                    "UnsortedSegmentSum: segment_ids[1] = 4 is not in [0, 3) (num_segments)");
  CHECK_THROWS_CODE(segment_sum(make<float>({1, 2, 3, 4}, {2, 2}), make<int64_t>({0, 1, -1, 0}, {2, 2}), 2),
                    Code::InvalidArgument, "segment_ids[1,0] = -1 is not in [0, 2)");
  CHECK_THROWS_CODE(segment_sum(data, make<int32_t>({0, 1}, {2}), 3), Code::InvalidArgument,
                    "UnsortedSegmentSum: segment_ids shape [2] must be a prefix of data shape [3]");
  CHECK_THROWS_CODE(segment_sum(data, make<int32_t>({0, 1, 0}, {3}), -1), Code::InvalidArgument, "num_segments");
  CHECK_THROWS_CODE(segment_sum(data, make<float>({0, 1, 0}, {3}), 2), Code::InvalidArgument,
                    "input 'segment_ids' has dtype float32");
}

// ---------------- GatherNd ----------------

TEST_CASE("GatherNd picks elements and slices by coordinates") {
  for (DType t : kGradTypes) {
    CAPTURE(dtype_name(t));
    Tensor p = make_as(t, iota(6), {2, 3});  // [[1,2,3],[4,5,6]]
    // full coordinates: elements (duplicates allowed)
    check_same(gather_nd(p, make<int32_t>({1, 2, 0, 0, 1, 2}, {3, 2})), make_as(t, {6, 1, 6}, {3}));
    // one coordinate: rows
    check_same(gather_nd(p, make<int64_t>({1, 0}, {2, 1})), make_as(t, {4, 5, 6, 1, 2, 3}, {2, 3}));
    // a batch of coordinate rows keeps its leading shape
    check_same(gather_nd(p, make<int32_t>({0, 1, 1, 1, 1, 0, 0, 2}, {2, 2, 2})), make_as(t, {2, 5, 4, 3}, {2, 2}));
    // slices of a 3-D tensor
    Tensor q = make_as(t, iota(8), {2, 2, 2});
    check_same(gather_nd(q, make<int32_t>({1, 0}, {1, 2})), make_as(t, {5, 6}, {1, 2}));
    // empty coordinates take the whole tensor; no rows give an empty result
    check_same(gather_nd(p, make<int32_t>({}, {2, 0})), make_as(t, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, {2, 2, 3}));
    check_same(gather_nd(p, make<int32_t>({}, {0, 2})), make_as(t, {}, {0}));
  }
}

TEST_CASE("GatherNd errors") {
  Tensor p = make<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THROWS_CODE(gather_nd(p, make<int32_t>({0, 3}, {1, 2})), Code::InvalidArgument,
                    "GatherNd: index [0,3] at indices[0] is out of bounds for shape [2,3]");
  CHECK_THROWS_CODE(gather_nd(p, make<int64_t>({0, 0, -1, 1}, {2, 2})), Code::InvalidArgument,
                    "index [-1,1] at indices[1]");
  CHECK_THROWS_CODE(gather_nd(p, make<int32_t>({0, 0, 0}, {1, 3})), Code::InvalidArgument,
                    "GatherNd: the last dimension of indices [1,3] (3) is larger than the rank of params shape [2,3] (2)");
  CHECK_THROWS_CODE(gather_nd(p, scalar(int32_t{0})), Code::InvalidArgument, "GatherNd: indices must have rank >= 1");
}

}  // namespace cairn
