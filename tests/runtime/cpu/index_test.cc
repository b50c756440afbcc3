#include "runtime/ops/registry.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const DType kAllTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::Int16,
                           DType::Int32,   DType::Int64,   DType::UInt8,   DType::Complex64, DType::Bool};
const DType kNumberTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                              DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8,    DType::Complex64};

using Ints = std::vector<int64_t>;

std::vector<double> iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
  return v;
}

// Small non-negative integers as dtype t; bools hold v mod 2 so patterns survive.
Tensor typed(DType t, std::vector<double> v, const Shape& s) {
  if (t == DType::Bool)
    for (double& x : v) x = std::fmod(x, 2.0);
  return make_as(t, v, s);
}

void check_same(const Tensor& got, const Tensor& want) {
  CHECK(got.dtype() == want.dtype());
  CHECK_MESSAGE(got.shape() == want.shape(), got.shape().str() << " vs " << want.shape().str());
  CHECK(as_doubles(got) == as_doubles(want));
}

Tensor gather(const Tensor& p, const Tensor& i, int64_t axis = 0, int64_t batch_dims = 0) {
  return run1("GatherV2", {p, i}, {attr_int("axis", axis), attr_int("batch_dims", batch_dims)});
}

Tensor scatter(const Tensor& indices, const Tensor& updates, const Ints& shape) {
  return run1("ScatterNd", {indices, updates}, {attr_ints("shape", shape)});
}

}  // namespace

// ---------------- GatherV2 ----------------

TEST_CASE("GatherV2 takes slices along an axis for every dtype") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    Tensor p = typed(t, iota(6), {3, 2});  // [[0,1],[2,3],[4,5]]
    check_same(gather(p, make<int32_t>({2, 0}, {2})), typed(t, {4, 5, 0, 1}, {2, 2}));
    check_same(gather(p, make<int64_t>({1, 1, 0}, {3}), 1), typed(t, {1, 1, 0, 3, 3, 2, 5, 5, 4}, {3, 3}));
    check_same(gather(p, make<int64_t>({1, 1, 0}, {3}), -1), typed(t, {1, 1, 0, 3, 3, 2, 5, 5, 4}, {3, 3}));
    // 2-D indices, scalar index, empty indices
    check_same(gather(p, make<int32_t>({0, 2, 1, 0}, {2, 2})), typed(t, {0, 1, 4, 5, 2, 3, 0, 1}, {2, 2, 2}));
    check_same(gather(p, scalar(int32_t{1})), typed(t, {2, 3}, {2}));
    check_same(gather(p, make<int32_t>({}, {0})), typed(t, {}, {0, 2}));
    check_same(gather(typed(t, {}, {0, 2}), make<int64_t>({}, {0})), typed(t, {}, {0, 2}));
    // middle axis of a 3-D tensor
    check_same(gather(typed(t, iota(12), {2, 3, 2}), make<int32_t>({2, 0}, {2}), 1),
               typed(t, {4, 5, 0, 1, 10, 11, 6, 7}, {2, 2, 2}));
  }
  // complex values keep their imaginary parts
  Tensor c = make<complex64>({{1, 2}, {3, 4}}, {2});
  CHECK(values<complex64>(gather(c, make<int32_t>({1, 0, 1}, {3}))) == std::vector<complex64>{{3, 4}, {1, 2}, {3, 4}});
}

TEST_CASE("GatherV2 with batch_dims") {
  Tensor p = make_as(DType::Float32, iota(6), {2, 3});  // [[0,1,2],[3,4,5]]
  Tensor i = make<int32_t>({0, 2, 1, 1}, {2, 2});
  check_same(gather(p, i, 1, 1), make_as(DType::Float32, {0, 2, 4, 4}, {2, 2}));
  check_same(gather(p, i, 1, -1), make_as(DType::Float32, {0, 2, 4, 4}, {2, 2}));
  // params [2,3,2], indices [2,1], axis 2: out[b,o,n] = params[b,o,idx[b,n]]
  Tensor p3 = make_as(DType::Int32, iota(12), {2, 3, 2});
  check_same(gather(p3, make<int64_t>({1, 0}, {2, 1}), 2, 1), make_as(DType::Int32, {1, 3, 5, 6, 8, 10}, {2, 3, 1}));
  // batch_dims == indices rank: one index per batch
  check_same(gather(p, make<int32_t>({2, 0}, {2}), 1, 1), make_as(DType::Float32, {2, 3}, {2}));
}

TEST_CASE("GatherV2 on large inputs matches a reference") {
  const int rows = 1000, cols = 64, n = 5000;
  std::vector<double> pv(rows * cols);
  for (size_t k = 0; k < pv.size(); ++k) pv[k] = static_cast<double>(k % 2039);
  std::vector<int32_t> iv(n);
  for (int k = 0; k < n; ++k) iv[k] = (k * 7919) % rows;
  auto got = as_doubles(gather(make_as(DType::Float32, pv, {rows, cols}), make<int32_t>(iv, {n})));
  REQUIRE(got.size() == static_cast<size_t>(n * cols));
  for (int k = 0; k < n; ++k)
    for (int c = 0; c < cols; ++c) REQUIRE(got[k * cols + c] == pv[iv[k] * cols + c]);
  // single elements per index (inner size 1), along the last axis
  auto col = as_doubles(gather(make_as(DType::Float64, pv, {rows, cols}), make<int64_t>({63, 0}, {2}), 1));
  for (int r = 0; r < rows; ++r) {
    REQUIRE(col[r * 2] == pv[r * cols + 63]);
    REQUIRE(col[r * 2 + 1] == pv[r * cols]);
  }
}

TEST_CASE("GatherV2 errors") {
  Tensor p = make_as(DType::Float32, iota(6), {3, 2});
  CHECK_THROWS_CODE(gather(p, make<int32_t>({0, 3}, {2})), Code::InvalidArgument,
                    "GatherV2: indices[1] = 3 is not in [0, 3) (dimension 0 of params shape [3,2])");
  CHECK_THROWS_CODE(gather(p, make<int64_t>({0, 1, -1, 0}, {2, 2})), Code::InvalidArgument,
                    "indices[1,0] = -1 is not in [0, 3)");
  CHECK_THROWS_CODE(gather(p, make<int32_t>({2}, {1}), 1), Code::InvalidArgument, "indices[0] = 2 is not in [0, 2)");
  CHECK_THROWS_CODE(gather(make<float>({}, {0, 2}), make<int32_t>({0}, {1})), Code::InvalidArgument,
                    "indices[0] = 0 is not in [0, 0)");
  CHECK_THROWS_CODE(gather(p, make<int32_t>({0}, {1}), 2), Code::InvalidArgument,
                    "GatherV2: axis 2 is out of range [-2, 2) for params shape [3,2]");
  CHECK_THROWS_CODE(gather(scalar(1.0f), make<int32_t>({0}, {1})), Code::InvalidArgument, "axis 0 is out of range");
  CHECK_THROWS_CODE(gather(p, make<int32_t>({0}, {1}), 0, 2), Code::InvalidArgument,
                    "GatherV2: batch_dims 2 is out of range [-1, 1] for indices shape [1]");
  CHECK_THROWS_CODE(gather(p, make<int32_t>({0, 0, 0}, {3, 1}), 0, 1), Code::InvalidArgument,
                    "GatherV2: axis 0 must be at least batch_dims 1");
  CHECK_THROWS_CODE(gather(p, make<int32_t>({0, 0}, {2, 1}), 1, 1), Code::InvalidArgument,
                    "params shape [3,2] and indices shape [2,1] must match in the first 1 (batch) dimensions");
  CHECK_THROWS_CODE(gather(p, make<float>({0}, {1})), Code::InvalidArgument, "input 'indices' has dtype float32");
  CHECK_THROWS_CODE(gather(make<float>({1}, {1, 1, 1, 1, 1, 1, 1, 1}), make<int32_t>({0, 0}, {1, 2})),
                    Code::InvalidArgument, "the result would have rank 9");
}

// ---------------- ScatterNd ----------------

TEST_CASE("ScatterNd adds updates into zeros for every numeric dtype") {
  for (DType t : kNumberTypes) {
    CAPTURE(dtype_name(t));
    // duplicates add
    check_same(scatter(make<int32_t>({1, 3, 1}, {3, 1}), make_as(t, {9, 10, 11}, {3}), {5}),
               make_as(t, {0, 20, 0, 10, 0}, {5}));
    // full coordinates into a matrix
    check_same(scatter(make<int64_t>({0, 1, 1, 0}, {2, 2}), make_as(t, {5, 6}, {2}), {2, 2}),
               make_as(t, {0, 5, 6, 0}, {2, 2}));
    // row slices
    check_same(scatter(make<int32_t>({0, 2}, {2, 1}), make_as(t, {1, 2, 3, 4}, {2, 2}), {3, 2}),
               make_as(t, {1, 2, 0, 0, 3, 4}, {3, 2}));
    // 2-D batch of indices
    check_same(scatter(make<int32_t>({0, 1, 1, 3}, {2, 2, 1}), make_as(t, {1, 2, 3, 4}, {2, 2}), {4}),
               make_as(t, {1, 5, 0, 4}, {4}));
    // no indices: all zeros; an index of length 0 addresses the whole output
    check_same(scatter(make<int32_t>({}, {0, 1}), make_as(t, {}, {0}), {3}), make_as(t, {0, 0, 0}, {3}));
    check_same(scatter(make<int32_t>({}, {2, 0}), make_as(t, {1, 2, 3, 4}, {2, 2}), {2}), make_as(t, {4, 6}, {2}));
    check_same(scatter(make<int32_t>({}, {0, 1}), make_as(t, {}, {0, 0}), {3, 0}), make_as(t, {}, {3, 0}));
  }
  auto c = values<complex64>(scatter(make<int32_t>({0, 0}, {2, 1}), make<complex64>({{1, 1}, {2, -1}}, {2}), {2}));
  CHECK(c == std::vector<complex64>{{3, 0}, {0, 0}});
  // integers wrap instead of overflowing
  CHECK(values<int8_t>(scatter(make<int32_t>({0, 0}, {2, 1}), make<int8_t>({100, 100}, {2}), {1})) ==
        std::vector<int8_t>{-56});
}

TEST_CASE("ScatterNd accumulates 16-bit floats in float and splits wide slices") {
  const int n = 3000;
  std::vector<int32_t> idx(n, 0);
  Tensor ones = make_as(DType::Float16, std::vector<double>(n, 1.0), {n});
  // Adding 1 to a float16 stalls at 2048; accumulating in float reaches 3000 (exact in float16).
  check_close(as_doubles(scatter(make<int32_t>(idx, {n, 1}), ones, {2})), {3000, 0});
  Tensor bones = make_as(DType::BFloat16, std::vector<double>(n, 1.0), {n});
  check_close(as_doubles(scatter(make<int32_t>(idx, {n, 1}), bones, {1})), {3008}, 0);  // 3000 rounded to bfloat16
  const int w = 20000;
  std::vector<double> up(2 * w);
  for (int k = 0; k < 2 * w; ++k) up[k] = static_cast<double>(k % 101);
  auto got = as_doubles(scatter(make<int64_t>({1, 1}, {2, 1}), make_as(DType::Float64, up, {2, w}), {2, w}));
  for (int k = 0; k < w; ++k) {
    REQUIRE(got[k] == 0);
    REQUIRE(got[w + k] == up[k] + up[w + k]);
  }
}

TEST_CASE("ScatterNd errors") {
  Tensor u = make<float>({1, 2}, {2});
  CHECK_THROWS_CODE(scatter(make<int32_t>({0, 5}, {2, 1}), u, {5}), Code::InvalidArgument,
                    "ScatterNd: index [5] at indices[1] is out of bounds for shape [5]");
  CHECK_THROWS_CODE(scatter(make<int64_t>({0, -1, 1, 1}, {2, 2}), u, {2, 2}), Code::InvalidArgument,
                    "index [0,-1] at indices[0] is out of bounds for shape [2,2]");
  CHECK_THROWS_CODE(scatter(make<int32_t>({0, 1}, {2, 1}), make<float>({1, 2, 3}, {3}), {5}), Code::InvalidArgument,
                    "ScatterNd: updates has shape [3] but indices shape [2,1] and shape [5] require [2]");
  CHECK_THROWS_CODE(scatter(make<int32_t>({0, 1}, {2, 1}), make<float>({1, 2}, {2}), {5, 2}), Code::InvalidArgument,
                    "require [2,2]");
  CHECK_THROWS_CODE(scatter(scalar(int32_t{0}), make<float>({1}, {}), {5}), Code::InvalidArgument,
                    "indices must have rank >= 1");
  CHECK_THROWS_CODE(scatter(make<int32_t>({0, 0}, {1, 2}), make<float>({1}, {1}), {5}), Code::InvalidArgument,
                    "the last dimension of indices [1,2] (2) is larger than the rank of shape [5] (1)");
  CHECK_THROWS_CODE(scatter(make<int32_t>({0}, {1, 1}), make<bool>({true}, {1}), {2}), Code::InvalidArgument,
                    "input 'updates' has dtype bool");
  CHECK_THROWS_CODE(scatter(make<int32_t>({0}, {1, 1}), make<float>({1}, {1}), {-2}), Code::InvalidArgument,
                    "ScatterNd: dimension 0 is negative (-2)");
}

// ---------------- Where ----------------

namespace {
Tensor where(const Tensor& c) { return run1("Where", {c}); }
}  // namespace

TEST_CASE("Where lists the coordinates of true elements in row-major order") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    // [[1,0,1],[0,0,1]]
    Tensor w = where(make_as(t, {1, 0, 1, 0, 0, 1}, {2, 3}));
    CHECK(w.dtype() == DType::Int64);
    CHECK(w.shape() == Shape{3, 2});
    CHECK(values<int64_t>(w) == std::vector<int64_t>{0, 0, 0, 2, 1, 2});
    CHECK(where(make_as(t, {0, 0}, {2})).shape() == Shape{0, 1});
  }
  CHECK(values<int64_t>(where(make<bool>({true, false, true}, {3}))) == std::vector<int64_t>{0, 2});
  // -0.0 is false, NaN is true
  CHECK(values<int64_t>(where(make<float>({-0.0f, NAN, 0.0f, 2.0f}, {4}))) == std::vector<int64_t>{1, 3});
  CHECK(values<int64_t>(where(make_as(DType::Float16, {-0.0, NAN, 0.5}, {3}))) == std::vector<int64_t>{1, 2});
  // complex: either part non-zero
  CHECK(values<int64_t>(where(make<complex64>({{0, 0}, {0, 1}, {2, 0}}, {3}))) == std::vector<int64_t>{1, 2});
  // scalars and empty tensors
  CHECK(where(scalar(true)).shape() == Shape{1, 0});
  CHECK(where(scalar(0.0f)).shape() == Shape{0, 0});
  CHECK(where(make<float>({}, {0, 3})).shape() == Shape{0, 2});
  // rank 3
  Tensor w3 = where(make<int32_t>({0, 1, 0, 0, 0, 0, 1, 1}, {2, 2, 2}));
  CHECK(values<int64_t>(w3) == std::vector<int64_t>{0, 0, 1, 1, 1, 0, 1, 1, 1});
}

TEST_CASE("Where on a large input matches a reference") {
  const int rows = 400, cols = 500;
  std::vector<uint8_t> v(rows * cols);
  std::vector<int64_t> want;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const bool on = ((r * cols + c) % 7 == 0) || (r == 399 && c == 499);
      v[r * cols + c] = on ? 3 : 0;
      if (on) {
        want.push_back(r);
        want.push_back(c);
      }
    }
  Tensor w = where(make<uint8_t>(v, {rows, cols}));
  CHECK(w.shape() == Shape{static_cast<int64_t>(want.size() / 2), 2});
  CHECK(values<int64_t>(w) == want);
  // The same data as one long row and as a column: flat positions.
  std::vector<int64_t> flat, col;
  for (size_t k = 0; k < want.size(); k += 2) {
    flat.push_back(want[k] * cols + want[k + 1]);
    col.push_back(want[k] * cols + want[k + 1]);
    col.push_back(0);
  }
  CHECK(values<int64_t>(where(make<uint8_t>(v, {rows * cols}))) == flat);
  CHECK(values<int64_t>(where(make<uint8_t>(v, {rows * cols, 1}))) == col);
}

// ---------------- OneHot ----------------

namespace {
Tensor one_hot(const Tensor& i, int64_t depth, std::initializer_list<NamedAttr> more = {}) {
  std::vector<NamedAttr> attrs = {attr_int("depth", depth)};
  attrs.insert(attrs.end(), more.begin(), more.end());
  const OpDef& def = OpRegistry::global().get("OneHot");
  const Tensor* in[1] = {&i};
  Tensor out;
  run_op(ctx(), def, in, 1, attrs.data(), static_cast<int>(attrs.size()), &out, 1);
  return out;
}
}  // namespace

TEST_CASE("OneHot encodes along a new axis; out-of-range indices are all off") {
  Tensor i = make<int32_t>({0, 2, -1, 5}, {4});
  Tensor f = one_hot(i, 3);
  CHECK(f.dtype() == DType::Float32);
  CHECK(f.shape() == Shape{4, 3});
  CHECK(values<float>(f) == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  Tensor a0 = one_hot(i, 3, {attr_int("axis", 0)});
  CHECK(a0.shape() == Shape{3, 4});
  CHECK(values<float>(a0) == std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    Tensor o = one_hot(make<int64_t>({1, 0}, {2}), 2,
                       {attr_dtype("dtype", t), attr_float("on_value", 5), attr_float("off_value", 2)});
    check_same(o, make_as(t, {2, 5, 5, 2}, {2, 2}));
  }
  CHECK(bools(one_hot(make<int32_t>({1, 0, 7}, {3}), 2, {attr_dtype("dtype", DType::Bool)})) ==
        std::vector<int>{0, 1, 1, 0, 0, 0});
  // uint8 indices, 2-D indices along the middle axis
  CHECK(values<int32_t>(one_hot(make<uint8_t>({2, 0}, {2}), 3, {attr_dtype("dtype", DType::Int32)})) ==
        std::vector<int32_t>{0, 0, 1, 1, 0, 0});
  Tensor m = one_hot(make<int32_t>({0, 1, 2, 0}, {2, 2}), 3, {attr_int("axis", 1)});
  CHECK(m.shape() == Shape{2, 3, 2});
  CHECK(values<float>(m) == std::vector<float>{1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0});
  // on/off values convert to the dtype: -1.5 truncates for integers
  CHECK(values<int16_t>(one_hot(make<int32_t>({0}, {1}), 2,
                                {attr_dtype("dtype", DType::Int16), attr_float("off_value", -1.5)})) ==
        std::vector<int16_t>{1, -1});
  // scalars, depth 0 and empty indices
  CHECK(values<float>(one_hot(scalar(int32_t{1}), 3)) == std::vector<float>{0, 1, 0});
  CHECK(one_hot(i, 0).shape() == Shape{4, 0});
  CHECK(one_hot(make<int32_t>({}, {0}), 3).shape() == Shape{0, 3});
}

TEST_CASE("OneHot errors") {
  Tensor i = make<int32_t>({0, 1}, {2});
  CHECK_THROWS_CODE(one_hot(i, 3, {attr_int("axis", -2)}), Code::InvalidArgument,
                    "OneHot: axis -2 must be -1 or in [0, 1] for indices shape [2]");
  CHECK_THROWS_CODE(one_hot(i, 3, {attr_int("axis", 2)}), Code::InvalidArgument, "axis 2 must be -1 or in [0, 1]");
  CHECK_THROWS_CODE(one_hot(i, -1), Code::InvalidArgument, "attribute 'depth' must be at least 0, got -1");
  CHECK_THROWS_CODE(one_hot(make<float>({0}, {1}), 3), Code::InvalidArgument, "input 'indices' has dtype float32");
  CHECK_THROWS_CODE(one_hot(make<int32_t>({0}, {1, 1, 1, 1, 1, 1, 1, 1}), 3), Code::InvalidArgument,
                    "the result would have rank 9");
  CHECK_THROWS_CODE(one_hot(i, 3, {attr_dtype("dtype", DType::String)}), Code::InvalidArgument,
                    "attribute 'dtype' does not accept dtype string");
}

}  // namespace cairn
