#include <cstring>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const DType kAllTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::Int16,
                           DType::Int32,   DType::Int64,   DType::UInt8,   DType::Complex64, DType::Bool};

std::vector<double> iota(int64_t n, double from = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = from + static_cast<double>(i);
  return v;
}

// A tensor of dtype t holding `v` (small non-negative integers). Bool tensors hold v mod 2 so the
// pattern survives; complex tensors get a distinct imaginary part (0.5 - v).
Tensor typed(DType t, const std::vector<double>& v, const Shape& s) {
  if (t == DType::Bool) {
    std::vector<double> b;
    for (double x : v) b.push_back(std::fmod(x, 2.0));
    return make_as(t, b, s);
  }
  if (t == DType::Complex64) {
    std::vector<complex64> c;
    for (double x : v) c.emplace_back(static_cast<float>(x), 0.5f - static_cast<float>(x));
    return make<complex64>(c, s);
  }
  return make_as(t, v, s);
}

std::vector<unsigned char> bytes(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.num_elements()) * dtype_size(t.dtype());
  const unsigned char* p = static_cast<const unsigned char*>(t.raw_data());
  return n == 0 ? std::vector<unsigned char>() : std::vector<unsigned char>(p, p + n);
}

// Data movement is exact: same dtype, shape and bytes.
void check_same(const Tensor& got, const Tensor& want) {
  CHECK(dtype_name(got.dtype()) == std::string(dtype_name(want.dtype())));
  CHECK_MESSAGE(got.shape() == want.shape(), got.shape().str() << " vs " << want.shape().str());
  CHECK(bytes(got) == bytes(want));
}

// Runs `op` on typed(t, in) for every dtype and compares with typed(t, want).
void check_all_types(const char* op, const std::vector<double>& in, const Shape& in_shape,
                     std::initializer_list<NamedAttr> attrs, const std::vector<double>& want, const Shape& want_shape,
                     bool with_complex = true) {
  for (DType t : kAllTypes) {
    if (t == DType::Complex64 && !with_complex) continue;
    CAPTURE(dtype_name(t));
    check_same(run1(op, {typed(t, in, in_shape)}, attrs), typed(t, want, want_shape));
  }
}

using Ints = std::vector<int64_t>;

// Reference transpose by explicit coordinate arithmetic.
std::vector<double> ref_transpose(const std::vector<double>& in, const Shape& s, const Ints& perm, Shape* out_shape) {
  const int r = s.rank();
  Shape os;
  for (int i = 0; i < r; ++i) os.push_back(s[static_cast<int>(perm[i])]);
  *out_shape = os;
  std::vector<double> out(in.size());
  for (int64_t o = 0; o < os.num_elements(); ++o) {
    int64_t c[8], rem = o;
    for (int d = r - 1; d >= 0; --d) {
      c[d] = rem % os[d];
      rem /= os[d];
    }
    int64_t ic[8];
    for (int d = 0; d < r; ++d) ic[perm[d]] = c[d];
    int64_t flat = 0;
    for (int d = 0; d < r; ++d) flat = flat * s[d] + ic[d];
    out[static_cast<size_t>(o)] = in[static_cast<size_t>(flat)];
  }
  return out;
}

}  // namespace

// ---------------- Reshape / ExpandDims / Squeeze ----------------

TEST_CASE("Reshape keeps the elements and infers -1") {
  const auto v = iota(6);
  check_all_types("Reshape", v, {2, 3}, {attr_ints("shape", {3, 2})}, v, {3, 2});
  const Ints inferred = {2, -1};
  check_all_types("Reshape", v, {6}, {attr_ints("shape", inferred)}, v, {2, 3});
  const Ints lead = {-1, 1, 2};
  CHECK(run1("Reshape", {make_as(DType::Float32, v, {2, 3})}, {attr_ints("shape", lead)}).shape() == Shape{3, 1, 2});
  // scalar <-> [1,1]
  const Ints ones = {1, 1}, none = {};
  CHECK(run1("Reshape", {scalar(7.0f)}, {attr_ints("shape", ones)}).shape() == Shape{1, 1});
  Tensor back = run1("Reshape", {make<float>({7}, {1, 1})}, {attr_ints("shape", none)});
  CHECK(back.shape() == Shape{});
  CHECK(values<float>(back) == std::vector<float>{7});
  const Ints neg1 = {-1};
  CHECK(run1("Reshape", {scalar(7.0f)}, {attr_ints("shape", neg1)}).shape() == Shape{1});
  // empty tensors
  const Ints e1 = {3, 0}, e2 = {-1, 3};
  CHECK(run1("Reshape", {make<float>({}, {0, 3})}, {attr_ints("shape", e1)}).shape() == Shape{3, 0});
  CHECK(run1("Reshape", {make<float>({}, {0, 3})}, {attr_ints("shape", e2)}).shape() == Shape{0, 3});
  // rank 8
  const Ints r8 = {1, 2, 1, 3, 1, 1, 1, 1};
  check_all_types("Reshape", v, {6}, {attr_ints("shape", r8)}, v, {1, 2, 1, 3, 1, 1, 1, 1});
}

TEST_CASE("Reshape errors name both shapes") {
  Tensor x = make_as(DType::Float32, iota(6), {2, 3});
  const Ints bad = {4}, two = {-1, -1}, neg = {2, -3}, uneven = {4, -1}, zero = {0, -1}, r9 = {1, 1, 1, 1, 1, 1, 1, 1, 6};
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", bad)}), Code::InvalidArgument,
                    "Reshape: cannot reshape input shape [2,3] (6 elements) into shape [4] (4 elements)");
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", two)}), Code::InvalidArgument, "more than one -1");
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", neg)}), Code::InvalidArgument,
                    "shape [2,-3] has negative dimension -3");
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", uneven)}), Code::InvalidArgument,
                    "cannot reshape input shape [2,3] (6 elements) into shape [4,-1]");
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", zero)}), Code::InvalidArgument,
                    "cannot infer the -1 dimension of shape [0,-1]");
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", r9)}), Code::InvalidArgument, "more than the maximum of 8");
  CHECK_THROWS_CODE(run1("Reshape", {x}), Code::InvalidArgument, "missing required attribute 'shape'");
  const Ints huge = {INT64_MAX, 2}, huge_inferred = {-1, INT64_MAX, 2};
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", huge)}), Code::InvalidArgument,
                    "into shape [9223372036854775807,2] (too many elements)");
  CHECK_THROWS_CODE(run1("Reshape", {x}, {attr_ints("shape", huge_inferred)}), Code::InvalidArgument,
                    "cannot reshape input shape [2,3] (6 elements) into shape [-1,9223372036854775807,2]");
}

TEST_CASE("ExpandDims inserts a size-1 dimension at positive and negative axes") {
  const auto v = iota(6);
  check_all_types("ExpandDims", v, {2, 3}, {attr_int("axis", 0)}, v, {1, 2, 3});
  Tensor x = make_as(DType::Float32, v, {2, 3});
  CHECK(run1("ExpandDims", {x}, {attr_int("axis", 1)}).shape() == Shape{2, 1, 3});
  CHECK(run1("ExpandDims", {x}, {attr_int("axis", 2)}).shape() == Shape{2, 3, 1});
  CHECK(run1("ExpandDims", {x}, {attr_int("axis", -1)}).shape() == Shape{2, 3, 1});
  CHECK(run1("ExpandDims", {x}, {attr_int("axis", -3)}).shape() == Shape{1, 2, 3});
  CHECK(run1("ExpandDims", {scalar(int32_t{4})}, {attr_int("axis", 0)}).shape() == Shape{1});
  CHECK(run1("ExpandDims", {scalar(int32_t{4})}, {attr_int("axis", -1)}).shape() == Shape{1});
  CHECK(run1("ExpandDims", {make<float>({}, {0})}, {attr_int("axis", 0)}).shape() == Shape{1, 0});
  CHECK_THROWS_CODE(run1("ExpandDims", {x}, {attr_int("axis", 3)}), Code::InvalidArgument,
                    "ExpandDims: axis 3 is out of range [-3, 2] for input shape [2,3]");
  CHECK_THROWS_CODE(run1("ExpandDims", {x}, {attr_int("axis", -4)}), Code::InvalidArgument, "axis -4 is out of range");
  Tensor r8 = make<float>({1}, {1, 1, 1, 1, 1, 1, 1, 1});
  CHECK_THROWS_CODE(run1("ExpandDims", {r8}, {attr_int("axis", 0)}), Code::InvalidArgument, "rank 9");
}

TEST_CASE("Squeeze removes all or the listed size-1 dimensions") {
  const auto v = iota(6);
  check_all_types("Squeeze", v, {1, 2, 1, 3}, {}, v, {2, 3});
  const Ints two = {2}, neg = {-4}, both = {0, -2};
  Tensor x = make_as(DType::Float32, v, {1, 2, 1, 3});
  CHECK(run1("Squeeze", {x}, {attr_ints("squeeze_dims", two)}).shape() == Shape{1, 2, 3});
  CHECK(run1("Squeeze", {x}, {attr_ints("squeeze_dims", neg)}).shape() == Shape{2, 1, 3});
  CHECK(run1("Squeeze", {x}, {attr_ints("squeeze_dims", both)}).shape() == Shape{2, 3});
  CHECK(run1("Squeeze", {make<float>({5}, {1, 1})}).shape() == Shape{});
  CHECK(run1("Squeeze", {scalar(1.0f)}).shape() == Shape{});
  CHECK(run1("Squeeze", {make<float>({}, {0, 1})}).shape() == Shape{0});
  const Ints one = {1}, out = {4};
  CHECK_THROWS_CODE(run1("Squeeze", {x}, {attr_ints("squeeze_dims", one)}), Code::InvalidArgument,
                    "Squeeze: cannot squeeze dimension 1 of input shape [1,2,1,3]: its size is 2, not 1");
  CHECK_THROWS_CODE(run1("Squeeze", {x}, {attr_ints("squeeze_dims", out)}), Code::InvalidArgument,
                    "Squeeze: axis 4 is out of range for rank 4");
}

// ---------------- Transpose ----------------

TEST_CASE("Transpose permutes dimensions for every dtype") {
  const Ints p10 = {1, 0}, p201 = {2, 0, 1}, none = {};
  check_all_types("Transpose", iota(6), {2, 3}, {attr_ints("perm", p10)}, {0, 3, 1, 4, 2, 5}, {3, 2});
  // out[k][i][j] = in[i][j][k] for in [2,2,3]
  check_all_types("Transpose", iota(12), {2, 2, 3}, {attr_ints("perm", p201)}, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11},
                  {3, 2, 2});
  // empty perm reverses the axes
  check_all_types("Transpose", iota(6), {2, 3}, {}, {0, 3, 1, 4, 2, 5}, {3, 2});
  check_all_types("Transpose", {5}, {}, {attr_ints("perm", none)}, {5}, {});
  CHECK(run1("Transpose", {make<float>({}, {0, 3})}).shape() == Shape{3, 0});
  // identity and size-1 dimensions
  const Ints id = {0, 1, 2}, p021 = {0, 2, 1};
  check_all_types("Transpose", iota(6), {1, 2, 3}, {attr_ints("perm", id)}, iota(6), {1, 2, 3});
  check_all_types("Transpose", iota(6), {2, 1, 3}, {attr_ints("perm", p021)}, iota(6), {2, 3, 1});
}

TEST_CASE("Transpose matches a reference on large, tiled and rank-8 inputs") {
  struct Case {
    Shape shape;
    Ints perm;
  };
  const Case cases[] = {
      {{300, 257}, {1, 0}},
      {{3, 40, 50}, {0, 2, 1}},
      {{40, 3, 50}, {2, 1, 0}},
      {{7, 33, 65}, {2, 0, 1}},
      {{2, 3, 2, 2, 3, 2, 1, 2}, {7, 0, 6, 1, 5, 2, 4, 3}},
      {{2, 3, 2, 2, 3, 2, 2, 2}, {1, 0, 3, 2, 5, 4, 7, 6}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.shape.str());
    const auto v = [&] {
      std::vector<double> r = iota(c.shape.num_elements());
      for (double& x : r) x = std::fmod(x * 7, 97);  // exact in every dtype below
      return r;
    }();
    Shape os;
    const auto want = ref_transpose(v, c.shape, c.perm, &os);
    for (DType t : {DType::Float32, DType::UInt8, DType::Float16, DType::Float64, DType::Complex64, DType::Bool}) {
      CAPTURE(dtype_name(t));
      check_same(run1("Transpose", {typed(t, v, c.shape)}, {attr_ints("perm", c.perm)}), typed(t, want, os));
    }
  }
}

TEST_CASE("Transpose rejects perms that are not permutations") {
  Tensor x = make_as(DType::Float32, iota(6), {2, 3});
  const Ints short_perm = {0}, dup = {0, 0}, big = {0, 2}, neg = {-1, 0};
  CHECK_THROWS_CODE(run1("Transpose", {x}, {attr_ints("perm", short_perm)}), Code::InvalidArgument,
                    "Transpose: perm [0] has 1 entries but the input [2,3] has rank 2");
  CHECK_THROWS_CODE(run1("Transpose", {x}, {attr_ints("perm", dup)}), Code::InvalidArgument,
                    "perm [0,0] is not a permutation of 0..1");
  CHECK_THROWS_CODE(run1("Transpose", {x}, {attr_ints("perm", big)}), Code::InvalidArgument, "not a permutation");
  CHECK_THROWS_CODE(run1("Transpose", {x}, {attr_ints("perm", neg)}), Code::InvalidArgument, "not a permutation");
}

// ---------------- Slice ----------------

TEST_CASE("Slice takes a block with size -1 meaning to the end") {
  const Ints b11 = {1, 1}, s2m1 = {2, -1};
  check_all_types("Slice", iota(12), {3, 4}, {attr_ints("begin", b11), attr_ints("size", s2m1)}, {5, 6, 7, 9, 10, 11},
                  {2, 3});
  const Ints b0 = {0, 2}, s0 = {3, 1};
  check_all_types("Slice", iota(12), {3, 4}, {attr_ints("begin", b0), attr_ints("size", s0)}, {2, 6, 10}, {3, 1});
  // 3-D: in[1:2, 0:2, 1:3] of arange(24).reshape(2,3,4)
  const Ints b3 = {1, 0, 1}, s3 = {1, 2, 2};
  check_all_types("Slice", iota(24), {2, 3, 4}, {attr_ints("begin", b3), attr_ints("size", s3)}, {13, 14, 17, 18},
                  {1, 2, 2});
  // empty results, scalars, begin at the end
  const Ints be = {3, 0}, se = {0, 4}, none = {};
  CHECK(run1("Slice", {make_as(DType::Float32, iota(12), {3, 4})}, {attr_ints("begin", be), attr_ints("size", se)})
            .shape() == Shape{0, 4});
  check_all_types("Slice", {9}, {}, {attr_ints("begin", none), attr_ints("size", none)}, {9}, {});
  // rank 8
  const Ints b8 = {0, 1, 0, 0, 0, 0, 0, 1}, s8 = {-1, 1, -1, -1, -1, -1, -1, 1};
  check_all_types("Slice", iota(16), {1, 2, 1, 2, 1, 2, 1, 2}, {attr_ints("begin", b8), attr_ints("size", s8)},
                  {9, 11, 13, 15}, {1, 1, 1, 2, 1, 2, 1, 1});
}

TEST_CASE("Slice is bounds-checked") {
  Tensor x = make_as(DType::Float32, iota(12), {3, 4});
  const Ints b_out = {0, 5}, s_ok = {1, 1}, b_neg = {-1, 0}, b1 = {1, 1}, s_big = {1, 4}, s_neg = {1, -2}, b_short = {0};
  CHECK_THROWS_CODE(run1("Slice", {x}, {attr_ints("begin", b_out), attr_ints("size", s_ok)}), Code::InvalidArgument,
                    "Slice: begin[1] = 5 is out of range [0, 4] for input shape [3,4]");
  CHECK_THROWS_CODE(run1("Slice", {x}, {attr_ints("begin", b_neg), attr_ints("size", s_ok)}), Code::InvalidArgument,
                    "begin[0] = -1 is out of range");
  CHECK_THROWS_CODE(run1("Slice", {x}, {attr_ints("begin", b1), attr_ints("size", s_big)}), Code::InvalidArgument,
                    "Slice: begin[1] = 1 plus size[1] = 4 exceeds dimension 4 of input shape [3,4]");
  CHECK_THROWS_CODE(run1("Slice", {x}, {attr_ints("begin", b1), attr_ints("size", s_neg)}), Code::InvalidArgument,
                    "size[1] = -2 is negative");
  CHECK_THROWS_CODE(run1("Slice", {x}, {attr_ints("begin", b_short), attr_ints("size", s_ok)}), Code::InvalidArgument,
                    "must both have 2 entries");
}

// ---------------- StridedSlice ----------------

namespace {
struct SS {
  Ints begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
};

Tensor strided(const Tensor& x, const SS& s) {
  return run1("StridedSlice", {x},
              {attr_ints("begin", s.begin), attr_ints("end", s.end), attr_ints("strides", s.strides),
               attr_int("begin_mask", s.begin_mask), attr_int("end_mask", s.end_mask),
               attr_int("ellipsis_mask", s.ellipsis_mask), attr_int("new_axis_mask", s.new_axis_mask),
               attr_int("shrink_axis_mask", s.shrink_axis_mask)});
}

void check_strided(const std::vector<double>& in, const Shape& in_shape, const SS& s, const std::vector<double>& want,
                   const Shape& want_shape) {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    check_same(strided(typed(t, in, in_shape), s), typed(t, want, want_shape));
  }
}
}  // namespace

TEST_CASE("StridedSlice matches NumPy slicing") {
  const auto x = iota(12);  // x = arange(12).reshape(3, 4)
  const Shape xs{3, 4};
  // x[1:3, ::2]
  check_strided(x, xs, {{1, 0}, {3, 4}, {1, 2}}, {4, 6, 8, 10}, {2, 2});
  // x[::-1, ::-1]
  check_strided(x, xs, {{0, 0}, {0, 0}, {-1, -1}, 3, 3}, {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, {3, 4});
  // x[2:0:-1, 3:0:-2]
  check_strided(x, xs, {{2, 3}, {0, 0}, {-1, -2}}, {11, 9, 7, 5}, {2, 2});
  // x[-1]  (shrink)
  check_strided(x, xs, {{-1}, {0}, {1}, 0, 0, 0, 0, 1}, {8, 9, 10, 11}, {4});
  // x[..., 1]
  check_strided(x, xs, {{0, 1}, {0, 2}, {1, 1}, 0, 0, 1, 0, 2}, {1, 5, 9}, {3});
  // x[:, None, 1:3]
  check_strided(x, xs, {{0, 0, 1}, {0, 0, 3}, {1, 1, 1}, 1, 1, 0, 2, 0}, {1, 2, 5, 6, 9, 10}, {3, 1, 2});
  // x[None, ...]
  check_strided(x, xs, {{0, 0}, {0, 0}, {1, 1}, 0, 0, 2, 1, 0}, x, {1, 3, 4});
  // x[-100:100, 1:100]  (clamped)
  check_strided(x, xs, {{-100, 1}, {100, 100}, {1, 1}}, {1, 2, 3, 5, 6, 7, 9, 10, 11}, {3, 3});
  // x[5:10]  (empty)
  check_strided(x, xs, {{5}, {10}, {1}}, {}, {0, 4});
  // x[1:1]  and  x[2:1]  (empty intervals)
  check_strided(x, xs, {{1}, {1}, {1}}, {}, {0, 4});
  check_strided(x, xs, {{2}, {1}, {1}}, {}, {0, 4});
  // x[10:-10:-1, 0]  (negative stride, clamped both ends, shrink)
  check_strided(x, xs, {{10, 0}, {-10, 0}, {-1, 1}, 0, 0, 0, 0, 2}, {8, 4, 0}, {3});
  // x[1, 2]  (scalar)
  check_strided(x, xs, {{1, 2}, {0, 0}, {1, 1}, 0, 0, 0, 0, 3}, {6}, {});
  // x[0:3:5]  (stride beyond the end)
  check_strided(x, xs, {{0}, {3}, {5}}, {0, 1, 2, 3}, {1, 4});
  // x[:, -1:-5:-1]
  check_strided(x, xs, {{0, -1}, {0, -5}, {1, -1}, 1, 1}, {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}, {3, 4});
  // x[:, ::-3] on the begin/end masks with negative stride
  check_strided(x, xs, {{0, 0}, {0, 0}, {1, -3}, 3, 3}, {3, 0, 7, 4, 11, 8}, {3, 2});
  // x[1:, :-1]  begin_mask on dim 1 only
  check_strided(x, xs, {{1, 0}, {0, -1}, {1, 1}, 2, 1}, {4, 5, 6, 8, 9, 10}, {2, 3});

  const auto y = iota(24);  // y = arange(24).reshape(2, 3, 4)
  const Shape ys{2, 3, 4};
  // y[1, ..., ::-3]
  check_strided(y, ys, {{1, 0, 0}, {2, 0, 0}, {1, 1, -3}, 4, 4, 2, 0, 1}, {15, 12, 19, 16, 23, 20}, {3, 2});
  // y[..., None]
  check_strided(y, ys, {{0, 0}, {0, 0}, {1, 1}, 0, 0, 1, 2, 0}, y, {2, 3, 4, 1});
  // y[None, ..., None, 2]
  check_strided(y, ys, {{0, 0, 0, 2}, {0, 0, 0, 3}, {1, 1, 1, 1}, 0, 0, 2, 5, 8}, {2, 6, 10, 14, 18, 22},
                {1, 2, 3, 1});
  // y[:, 1]  (implicit ellipsis at the end keeps the last dimension)
  check_strided(y, ys, {{0, 1}, {0, 2}, {1, 1}, 1, 1, 0, 0, 2}, {4, 5, 6, 7, 16, 17, 18, 19}, {2, 4});
  // y[...]  (an ellipsis alone is the identity)
  check_strided(y, ys, {{0}, {0}, {1}, 0, 0, 1}, y, ys);
  // y[-1, -1, -1]
  check_strided(y, ys, {{-1, -1, -1}, {0, 0, 0}, {1, 1, 1}, 0, 0, 0, 0, 7}, {23}, {});
  // empty input
  check_strided({}, {0, 3}, {{0, 1}, {0, 3}, {1, 1}, 1, 0}, {}, {0, 2});
  // rank 8: z[..., ::-1] of a [1,2,1,2,1,1,1,2] tensor
  check_strided(iota(8), {1, 2, 1, 2, 1, 1, 1, 2}, {{0, 0}, {0, 0}, {1, -1}, 2, 2, 1}, {1, 0, 3, 2, 5, 4, 7, 6},
                {1, 2, 1, 2, 1, 1, 1, 2});
}

TEST_CASE("StridedSlice errors") {
  Tensor x = make_as(DType::Float32, iota(12), {3, 4});
  CHECK_THROWS_CODE(strided(x, {{0}, {3}, {0}}), Code::InvalidArgument, "StridedSlice: strides[0] is 0");
  CHECK_THROWS_CODE(strided(x, {{0, 0}, {3}, {1}}), Code::InvalidArgument,
                    "begin, end and strides must have the same length, got 2, 1 and 1");
  CHECK_THROWS_CODE(strided(x, {{0, 0}, {1, 1}, {1, 1}, 0, 0, 3}), Code::InvalidArgument, "only one ellipsis");
  CHECK_THROWS_CODE(strided(x, {{3}, {4}, {1}, 0, 0, 0, 0, 1}), Code::InvalidArgument,
                    "index 3 is out of bounds for dimension 0 of size 3");
  CHECK_THROWS_CODE(strided(x, {{-4}, {0}, {1}, 0, 0, 0, 0, 1}), Code::InvalidArgument, "index -4 is out of bounds");
  CHECK_THROWS_CODE(strided(x, {{0, 0, 0}, {1, 1, 1}, {1, 1, 1}}), Code::InvalidArgument,
                    "slice entry 2 indexes dimension 2 but the input [3,4] has rank 2");
  CHECK_THROWS_CODE(strided(x, {{1}, {0}, {-1}, 0, 0, 0, 0, 1}), Code::InvalidArgument, "negative stride");
  CHECK_THROWS_CODE(strided(x, {{0}, {1}, {1}, -1}), Code::InvalidArgument, "masks must be non-negative");
  Tensor r8 = make<float>({1}, {1, 1, 1, 1, 1, 1, 1, 1});
  CHECK_THROWS_CODE(strided(r8, {{0, 0}, {0, 0}, {1, 1}, 0, 0, 2, 1}), Code::InvalidArgument,
                    "more than the maximum of 8");
  const Ints many(33, 0), many_strides(33, 1);
  CHECK_THROWS_CODE(strided(x, {many, many, many_strides}), Code::InvalidArgument,
                    "at most 32 slice entries are supported, got 33");
}

// ---------------- ConcatV2 / Pack ----------------

TEST_CASE("ConcatV2 joins along an axis for every dtype") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    Tensor a = typed(t, {0, 1, 2, 3}, {2, 2});
    Tensor b = typed(t, {4, 5, 6, 7, 8, 9}, {2, 3});
    check_same(run_op(ctx(), "ConcatV2", {a, b}, {attr_int("axis", 1)})[0],
               typed(t, {0, 1, 4, 5, 6, 2, 3, 7, 8, 9}, {2, 5}));
    check_same(run_op(ctx(), "ConcatV2", {a, b}, {attr_int("axis", -1)})[0],
               typed(t, {0, 1, 4, 5, 6, 2, 3, 7, 8, 9}, {2, 5}));
    Tensor c = typed(t, {10, 11}, {1, 2});
    check_same(run_op(ctx(), "ConcatV2", {a, c, a}, {attr_int("axis", 0)})[0],
               typed(t, {0, 1, 2, 3, 10, 11, 0, 1, 2, 3}, {5, 2}));
    // one input; empty inputs take no space
    check_same(run_op(ctx(), "ConcatV2", {a}, {attr_int("axis", 0)})[0], a);
    Tensor e = typed(t, {}, {0, 2});
    check_same(run_op(ctx(), "ConcatV2", {e, a, e}, {attr_int("axis", 0)})[0], a);
    check_same(run_op(ctx(), "ConcatV2", {e, e}, {attr_int("axis", 1)})[0], typed(t, {}, {0, 4}));
    check_same(run_op(ctx(), "ConcatV2", {typed(t, {1}, {1}), typed(t, {2, 3}, {2})})[0], typed(t, {1, 2, 3}, {3}));
  }
}

TEST_CASE("ConcatV2 on large inputs matches a reference") {
  const int rows = 300;
  std::vector<double> av(rows * 100), bv(rows * 50);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>(i % 1000);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = -static_cast<double>(i % 1000);
  Tensor a = make_as(DType::Float32, av, {rows, 100}), b = make_as(DType::Float32, bv, {rows, 50});
  auto got = as_doubles(run_op(ctx(), "ConcatV2", {a, b}, {attr_int("axis", 1)})[0]);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < 150; ++c)
      REQUIRE(got[r * 150 + c] == (c < 100 ? av[r * 100 + c] : bv[r * 50 + c - 100]));
  // Large contiguous blocks along axis 0
  std::vector<double> big(1 << 18);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 4099);
  Tensor t = make_as(DType::Float64, big, {1 << 18});
  auto joined = as_doubles(run_op(ctx(), "ConcatV2", {t, t}, {attr_int("axis", 0)})[0]);
  for (size_t i = 0; i < joined.size(); ++i) REQUIRE(joined[i] == big[i % big.size()]);
}

TEST_CASE("ConcatV2 errors name the mismatching input") {
  Tensor a = make<float>({0, 1, 2, 3}, {2, 2});
  Tensor b = make<float>({0, 1, 2, 3, 4, 5}, {3, 2});
  CHECK_THROWS_CODE(run_op(ctx(), "ConcatV2", {a, a, b}, {attr_int("axis", 1)}), Code::InvalidArgument,
                    "ConcatV2: input 2 has shape [3,2] but input 0 has shape [2,2]; shapes must match except on axis 1");
  CHECK_THROWS_CODE(run_op(ctx(), "ConcatV2", {a, make<float>({1, 2}, {2})}, {attr_int("axis", 0)}),
                    Code::InvalidArgument, "input 1 has shape [2] but input 0 has shape [2,2]");
  CHECK_THROWS_CODE(run_op(ctx(), "ConcatV2", {a, a}, {attr_int("axis", 2)}), Code::InvalidArgument,
                    "ConcatV2: axis 2 is out of range [-2, 2) for input shape [2,2]");
  CHECK_THROWS_CODE(run_op(ctx(), "ConcatV2", {scalar(1.0f), scalar(2.0f)}), Code::InvalidArgument,
                    "cannot concatenate scalars");
  CHECK_THROWS_CODE(run_op(ctx(), "ConcatV2", {a, make<int32_t>({0, 1, 2, 3}, {2, 2})}), Code::InvalidArgument,
                    "has dtype int32 but 'values' has float32");
  CHECK_THROWS_CODE(run_op(ctx(), "ConcatV2", std::vector<Tensor>{}), Code::InvalidArgument, "at least 1 inputs");
}

TEST_CASE("Pack stacks along a new axis") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    Tensor a = typed(t, {0, 1}, {2}), b = typed(t, {2, 3}, {2}), c = typed(t, {4, 5}, {2});
    check_same(run_op(ctx(), "Pack", {a, b, c})[0], typed(t, {0, 1, 2, 3, 4, 5}, {3, 2}));
    check_same(run_op(ctx(), "Pack", {a, b, c}, {attr_int("axis", 1)})[0], typed(t, {0, 2, 4, 1, 3, 5}, {2, 3}));
    check_same(run_op(ctx(), "Pack", {a, b, c}, {attr_int("axis", -1)})[0], typed(t, {0, 2, 4, 1, 3, 5}, {2, 3}));
    check_same(run_op(ctx(), "Pack", {a, b, c}, {attr_int("axis", -2)})[0], typed(t, {0, 1, 2, 3, 4, 5}, {3, 2}));
    check_same(run_op(ctx(), "Pack", {typed(t, {1}, {}), typed(t, {2}, {})})[0], typed(t, {1, 2}, {2}));
    check_same(run_op(ctx(), "Pack", {typed(t, {}, {0}), typed(t, {}, {0})}, {attr_int("axis", 1)})[0],
               typed(t, {}, {0, 2}));
  }
  // [2,2] inputs along the middle axis
  Tensor x = make<int32_t>({0, 1, 2, 3}, {2, 2}), y = make<int32_t>({4, 5, 6, 7}, {2, 2});
  Tensor z = run_op(ctx(), "Pack", {x, y}, {attr_int("axis", 1)})[0];
  CHECK(z.shape() == Shape{2, 2, 2});
  CHECK(values<int32_t>(z) == std::vector<int32_t>{0, 1, 4, 5, 2, 3, 6, 7});
  CHECK_THROWS_CODE(run_op(ctx(), "Pack", {x, make<int32_t>({1, 2}, {2})}), Code::InvalidArgument,
                    "Pack: input 1 has shape [2] but input 0 has shape [2,2]");
  CHECK_THROWS_CODE(run_op(ctx(), "Pack", {x, y}, {attr_int("axis", 3)}), Code::InvalidArgument,
                    "Pack: axis 3 is out of range [-3, 2]");
  CHECK_THROWS_CODE(run_op(ctx(), "Pack", {x, y}, {attr_int("axis", -4)}), Code::InvalidArgument,
                    "axis -4 is out of range");
  Tensor r8 = make<float>({1}, {1, 1, 1, 1, 1, 1, 1, 1});
  CHECK_THROWS_CODE(run_op(ctx(), "Pack", {r8, r8}), Code::InvalidArgument, "Pack: the result would have rank 9");
}

// ---------------- Unpack / Split ----------------

TEST_CASE("Unpack splits along an axis and removes it") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = typed(t, iota(6), {3, 2});
    auto rows = run_op(ctx(), "Unpack", {x}, {attr_int("num", 3)});
    REQUIRE(rows.size() == 3);
    check_same(rows[0], typed(t, {0, 1}, {2}));
    check_same(rows[1], typed(t, {2, 3}, {2}));
    check_same(rows[2], typed(t, {4, 5}, {2}));
    auto cols = run_op(ctx(), "Unpack", {x}, {attr_int("num", 2), attr_int("axis", -1)});
    REQUIRE(cols.size() == 2);
    check_same(cols[0], typed(t, {0, 2, 4}, {3}));
    check_same(cols[1], typed(t, {1, 3, 5}, {3}));
    auto scalars = run_op(ctx(), "Unpack", {typed(t, {7, 8}, {2})}, {attr_int("num", 2)});
    check_same(scalars[1], typed(t, {8}, {}));
  }
  // 3-D, middle axis
  auto mid = run_op(ctx(), "Unpack", {make_as(DType::Int32, iota(12), {2, 3, 2})}, {attr_int("num", 3), attr_int("axis", 1)});
  CHECK(as_doubles(mid[1]) == std::vector<double>{2, 3, 8, 9});
  CHECK(run_op(ctx(), "Unpack", {make<float>({}, {0, 2})}, {attr_int("num", 0)}).empty());
  auto empties = run_op(ctx(), "Unpack", {make<float>({}, {2, 0})}, {attr_int("num", 2)});
  CHECK(empties[1].shape() == Shape{0});

  Tensor x = make<float>({0, 1, 2, 3, 4, 5}, {3, 2});
  CHECK_THROWS_CODE(run_op(ctx(), "Unpack", {x}, {attr_int("num", 2)}), Code::InvalidArgument,
                    "Unpack: attribute 'num' is 2 but dimension 0 of input shape [3,2] is 3");
  CHECK_THROWS_CODE(run_op(ctx(), "Unpack", {x}, {attr_int("num", 2), attr_int("axis", 2)}), Code::InvalidArgument,
                    "Unpack: axis 2 is out of range [-2, 2)");
  CHECK_THROWS_CODE(run_op(ctx(), "Unpack", {scalar(1.0f)}, {attr_int("num", 1)}), Code::InvalidArgument,
                    "cannot unpack a scalar");
  CHECK_THROWS_CODE(run_op(ctx(), "Unpack", {x}), Code::InvalidArgument, "missing required attribute 'num'");
}

TEST_CASE("Split cuts into equal pieces") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = typed(t, iota(8), {4, 2});
    auto halves = run_op(ctx(), "Split", {x}, {attr_int("num_split", 2)});
    REQUIRE(halves.size() == 2);
    check_same(halves[0], typed(t, {0, 1, 2, 3}, {2, 2}));
    check_same(halves[1], typed(t, {4, 5, 6, 7}, {2, 2}));
    auto cols = run_op(ctx(), "Split", {x}, {attr_int("num_split", 2), attr_int("axis", -1)});
    check_same(cols[0], typed(t, {0, 2, 4, 6}, {4, 1}));
    check_same(cols[1], typed(t, {1, 3, 5, 7}, {4, 1}));
    auto one = run_op(ctx(), "Split", {x}, {attr_int("num_split", 1)});
    REQUIRE(one.size() == 1);
    check_same(one[0], x);
  }
  // [2,6] along axis 1 into 3
  auto parts = run_op(ctx(), "Split", {make_as(DType::Int64, iota(12), {2, 6})}, {attr_int("axis", 1), attr_int("num_split", 3)});
  CHECK(as_doubles(parts[0]) == std::vector<double>{0, 1, 6, 7});
  CHECK(as_doubles(parts[2]) == std::vector<double>{4, 5, 10, 11});
  auto empty = run_op(ctx(), "Split", {make<float>({}, {0, 4})}, {attr_int("axis", 1), attr_int("num_split", 2)});
  CHECK(empty[1].shape() == Shape{0, 2});

  Tensor x = make<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  CHECK_THROWS_CODE(run_op(ctx(), "Split", {x}, {attr_int("axis", 1), attr_int("num_split", 2)}), Code::InvalidArgument,
                    "Split: dimension 1 of input shape [2,3] (size 3) does not divide evenly into 2 pieces");
  CHECK_THROWS_CODE(run_op(ctx(), "Split", {x}, {attr_int("num_split", 0)}), Code::InvalidArgument,
                    "attribute 'num_split' must be at least 1, got 0");
  CHECK_THROWS_CODE(run_op(ctx(), "Split", {x}, {attr_int("axis", -3), attr_int("num_split", 1)}),
                    Code::InvalidArgument, "Split: axis -3 is out of range [-2, 2)");
  CHECK_THROWS_CODE(run_op(ctx(), "Split", {scalar(1.0f)}, {attr_int("num_split", 1)}), Code::InvalidArgument,
                    "cannot split a scalar");
}

// ---------------- Tile ----------------

TEST_CASE("Tile repeats along every dimension") {
  const Ints m23 = {2, 3};
  check_all_types("Tile", iota(4), {2, 2}, {attr_ints("multiples", m23)},
                  {0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}, {4, 6});
  const Ints m3 = {3}, m0 = {0, 2}, none = {}, m121 = {1, 2, 1};
  check_all_types("Tile", {4, 5}, {2}, {attr_ints("multiples", m3)}, {4, 5, 4, 5, 4, 5}, {6});
  check_all_types("Tile", iota(4), {2, 2}, {attr_ints("multiples", m0)}, {}, {0, 4});
  check_all_types("Tile", {6}, {}, {attr_ints("multiples", none)}, {6}, {});
  check_all_types("Tile", iota(4), {2, 1, 2}, {attr_ints("multiples", m121)}, {0, 1, 0, 1, 2, 3, 2, 3}, {2, 2, 2});
  // A single column repeated many times (the doubling copy), and rank 8.
  const Ints wide = {1, 1000};
  Tensor col = run1("Tile", {make<int16_t>({3, 4}, {2, 1})}, {attr_ints("multiples", wide)});
  auto cv = values<int16_t>(col);
  REQUIRE(cv.size() == 2000);
  for (size_t i = 0; i < cv.size(); ++i) REQUIRE(cv[i] == (i < 1000 ? 3 : 4));
  const Ints m8 = {1, 2, 1, 1, 1, 1, 1, 2};
  check_all_types("Tile", {1, 2}, {1, 1, 1, 1, 1, 1, 1, 2}, {attr_ints("multiples", m8)}, {1, 2, 1, 2, 1, 2, 1, 2},
                  {1, 2, 1, 1, 1, 1, 1, 4});
}

TEST_CASE("Tile validates multiples") {
  Tensor x = make<float>({1, 2, 3, 4}, {2, 2});
  const Ints short_m = {2}, neg = {1, -1}, huge = {INT64_MAX / 2, INT64_MAX / 2};
  CHECK_THROWS_CODE(run1("Tile", {x}, {attr_ints("multiples", short_m)}), Code::InvalidArgument,
                    "Tile: multiples [2] has 1 entries but the input [2,2] has rank 2");
  CHECK_THROWS_CODE(run1("Tile", {x}, {attr_ints("multiples", neg)}), Code::InvalidArgument,
                    "Tile: multiples[1] = -1 is negative");
  CHECK_THROWS_CODE(run1("Tile", {x}, {attr_ints("multiples", huge)}), Code::InvalidArgument, "overflows int64");
}

// ---------------- Pad ----------------

TEST_CASE("Pad surrounds with a constant converted to the dtype") {
  const Ints p = {1, 0, 0, 2};
  // (complex is checked separately: typed() gives complex values an imaginary part)
  check_all_types("Pad", {1, 2, 3, 4}, {2, 2}, {attr_ints("paddings", p)}, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0},
                  {3, 4}, false);
  for (DType t : kAllTypes) {
    if (t == DType::Complex64) continue;  // typed() gives complex values an imaginary part
    CAPTURE(dtype_name(t));
    check_same(run1("Pad", {typed(t, {1, 2, 3, 4}, {2, 2})}, {attr_ints("paddings", p), attr_float("constant_values", 3)}),
               typed(t, {3, 3, 3, 3, 1, 2, 3, 3, 3, 4, 3, 3}, {3, 4}));
  }
  // complex: the constant is real
  Tensor cz = run1("Pad", {make<complex64>({{1, 1}, {3, -2}}, {1, 2})},
                   {attr_ints("paddings", Ints{1, 0, 1, 1}), attr_float("constant_values", 2)});
  CHECK(cz.shape() == Shape{2, 4});
  CHECK(values<complex64>(cz) ==
        std::vector<complex64>{{2, 0}, {2, 0}, {2, 0}, {2, 0}, {2, 0}, {1, 1}, {3, -2}, {2, 0}});
  CHECK(values<complex64>(run1("Pad", {make<complex64>({}, {0})}, {attr_ints("paddings", Ints{0, 2})})) ==
        std::vector<complex64>{{0, 0}, {0, 0}});
  // float constants are converted: 2.5 truncates for integers, is exact for float16
  check_close(as_doubles(run1("PadV2", {make<int32_t>({1}, {1})}, {attr_ints("paddings", Ints{0, 1}),
                                                                   attr_float("constant_values", 2.5)})),
              {1, 2});
  check_close(as_doubles(run1("Pad", {make_as(DType::Float16, {1}, {1})}, {attr_ints("paddings", Ints{1, 0}),
                                                                          attr_float("constant_values", 2.5)})),
              {2.5, 1});
  // 3-D, zero padding in the middle dimension
  const Ints p3 = {0, 1, 0, 0, 1, 1};
  check_all_types("Pad", iota(4), {1, 2, 2}, {attr_ints("paddings", p3)},
                  {0, 0, 1, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {2, 2, 4}, false);
  // scalars, empty inputs, all-zero paddings
  check_all_types("Pad", {5}, {}, {attr_ints("paddings", Ints{})}, {5}, {});
  check_all_types("Pad", {}, {0, 2}, {attr_ints("paddings", Ints{1, 1, 0, 0})}, {0, 0, 0, 0}, {2, 2}, false);
  check_all_types("Pad", iota(4), {2, 2}, {attr_ints("paddings", Ints{0, 0, 0, 0})}, iota(4), {2, 2});
}

TEST_CASE("Pad validates paddings") {
  Tensor x = make<float>({1, 2, 3, 4}, {2, 2});
  CHECK_THROWS_CODE(run1("Pad", {x}, {attr_ints("paddings", Ints{1, 1, 1})}), Code::InvalidArgument,
                    "Pad: paddings has 3 entries but input shape [2,2] needs 4");
  CHECK_THROWS_CODE(run1("Pad", {x}, {attr_ints("paddings", Ints{0, 0, -1, 0})}), Code::InvalidArgument,
                    "Pad: paddings for dimension 1 are [-1, 0]; they must be non-negative");
  CHECK_THROWS_CODE(run1("Pad", {x}, {attr_ints("paddings", Ints{INT64_MAX, 0, 0, 0})}), Code::InvalidArgument,
                    "overflows int64");
}

// ---------------- Reverse ----------------

TEST_CASE("Reverse flips the listed axes") {
  check_all_types("Reverse", iota(6), {2, 3}, {attr_ints("axis", Ints{1})}, {2, 1, 0, 5, 4, 3}, {2, 3});
  check_all_types("ReverseV2", iota(6), {2, 3}, {attr_ints("axis", Ints{0})}, {3, 4, 5, 0, 1, 2}, {2, 3});
  check_all_types("Reverse", iota(6), {2, 3}, {attr_ints("axis", Ints{0, -1})}, {5, 4, 3, 2, 1, 0}, {2, 3});
  check_all_types("Reverse", iota(6), {2, 3}, {attr_ints("axis", Ints{})}, iota(6), {2, 3});
  // middle axis of [2,3,2]: whole rows move
  check_all_types("Reverse", iota(12), {2, 3, 2}, {attr_ints("axis", Ints{1})}, {4, 5, 2, 3, 0, 1, 10, 11, 8, 9, 6, 7},
                  {2, 3, 2});
  check_all_types("Reverse", {}, {0, 3}, {attr_ints("axis", Ints{1})}, {}, {0, 3});
  check_all_types("Reverse", {4}, {}, {attr_ints("axis", Ints{})}, {4}, {});
  // rank 8, every axis reversed = reversed flat order
  std::vector<double> v = iota(16), rv(v.rbegin(), v.rend());
  check_all_types("Reverse", v, {2, 1, 2, 1, 2, 1, 2, 1}, {attr_ints("axis", Ints{0, 1, 2, 3, 4, 5, 6, 7})}, rv,
                  {2, 1, 2, 1, 2, 1, 2, 1});
  // long single rows go through the pool: reversed, and every third element backwards
  const int n = 100000;
  std::vector<int32_t> lv(n);
  for (int k = 0; k < n; ++k) lv[k] = k * 3 + 1;
  auto rl = values<int32_t>(run1("Reverse", {make<int32_t>(lv, {n})}, {attr_ints("axis", Ints{0})}));
  for (int k = 0; k < n; ++k) REQUIRE(rl[k] == lv[n - 1 - k]);
  auto sl = values<int32_t>(strided(make<int32_t>(lv, {n}), {{-1}, {0}, {-3}, 0, 1}));
  REQUIRE(sl.size() == static_cast<size_t>((n + 2) / 3));
  for (size_t k = 0; k < sl.size(); ++k) REQUIRE(sl[k] == lv[n - 1 - 3 * k]);

  Tensor x = make<float>({1, 2, 3, 4}, {2, 2});
  CHECK_THROWS_CODE(run1("Reverse", {x}, {attr_ints("axis", Ints{1, -1})}), Code::InvalidArgument,
                    "Reverse: axis 1 is given more than once");
  CHECK_THROWS_CODE(run1("Reverse", {x}, {attr_ints("axis", Ints{2})}), Code::InvalidArgument,
                    "Reverse: axis 2 is out of range for rank 2");
}

// ---------------- Fill / Range ----------------

TEST_CASE("Fill broadcasts a scalar to a shape") {
  for (DType t : kAllTypes) {
    CAPTURE(dtype_name(t));
    check_same(run1("Fill", {typed(t, {3}, {})}, {attr_ints("dims", Ints{2, 3})}), typed(t, {3, 3, 3, 3, 3, 3}, {2, 3}));
    check_same(run1("Fill", {typed(t, {5}, {})}, {attr_ints("dims", Ints{})}), typed(t, {5}, {}));
    check_same(run1("Fill", {typed(t, {5}, {})}, {attr_ints("dims", Ints{4, 0})}), typed(t, {}, {4, 0}));
  }
  // large, through the pool
  auto big = values<int32_t>(run1("Fill", {scalar(int32_t{-7})}, {attr_ints("dims", Ints{1000, 300})}));
  for (int32_t v : big) REQUIRE(v == -7);
  CHECK_THROWS_CODE(run1("Fill", {make<float>({1, 2}, {2})}, {attr_ints("dims", Ints{2})}), Code::InvalidArgument,
                    "Fill: value must be a scalar, got shape [2]");
  CHECK_THROWS_CODE(run1("Fill", {scalar(1.0f)}, {attr_ints("dims", Ints{2, -1})}), Code::InvalidArgument,
                    "Fill: dimension 1 is negative (-1)");
}

namespace {
Tensor range(double start, double limit, double delta, DType t) {
  return run_op(ctx(), "Range", std::vector<Tensor>{},
                {attr_float("start", start), attr_float("limit", limit), attr_float("delta", delta),
                 attr_dtype("dtype", t)})[0];
}
}  // namespace

TEST_CASE("Range counts from start toward limit") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::Int16,
                  DType::Int32, DType::Int64, DType::UInt8}) {
    CAPTURE(dtype_name(t));
    Tensor r = range(1, 10, 3, t);
    CHECK(r.dtype() == t);
    CHECK(as_doubles(r) == std::vector<double>{1, 4, 7});
    CHECK(as_doubles(range(10, 1, -3, t)) == std::vector<double>{10, 7, 4});
    CHECK(as_doubles(range(0, 5, 1, t)) == std::vector<double>{0, 1, 2, 3, 4});
    CHECK(range(4, 4, 1, t).shape() == Shape{0});
  }
  // delta defaults to 1, dtype to float32
  Tensor d = run_op(ctx(), "Range", std::vector<Tensor>{}, {attr_float("start", 2), attr_float("limit", 5)})[0];
  CHECK(values<float>(d) == std::vector<float>{2, 3, 4});
  CHECK(as_doubles(range(0, 1, 0.25, DType::Float64)) == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(as_doubles(range(0, 1.1, 0.5, DType::Float32)) == std::vector<double>{0, 0.5, 1});
  check_close(as_doubles(range(1, -0.5, -0.5, DType::Float32)), {1, 0.5, 0});
  CHECK(as_doubles(range(-5, -14, -4, DType::Int8)) == std::vector<double>{-5, -9, -13});
  // int64 is exact past 2^53
  auto big = values<int64_t>(range(9007199254740990.0, 9007199254740994.0, 1, DType::Int64));
  CHECK(big == std::vector<int64_t>{9007199254740990LL, 9007199254740991LL, 9007199254740992LL, 9007199254740993LL});
  // extreme int8 bounds
  auto full = values<int8_t>(range(-128, 127, 127, DType::Int8));
  CHECK(full == std::vector<int8_t>{-128, -1, 126});
}

TEST_CASE("Range errors") {
  CHECK_THROWS_CODE(range(0, 5, 0, DType::Float32), Code::InvalidArgument, "Range: delta must not be 0");
  CHECK_THROWS_CODE(range(5, 0, 1, DType::Float32), Code::InvalidArgument,
                    "Range: start 5 is greater than limit 0 but delta 1 is positive");
  CHECK_THROWS_CODE(range(0, 5, -1, DType::Int32), Code::InvalidArgument,
                    "Range: start 0 is less than limit 5 but delta -1 is negative");
  CHECK_THROWS_CODE(range(0.5, 5, 1, DType::Int32), Code::InvalidArgument, "Range: start = 0.5 is not representable as int32");
  CHECK_THROWS_CODE(range(0, 300, 1, DType::UInt8), Code::InvalidArgument, "limit = 300 is not representable as uint8");
  CHECK_THROWS_CODE(range(0, 5, 0.5, DType::Int64), Code::InvalidArgument, "delta = 0.5 is not representable as int64");
  CHECK_THROWS_CODE(range(0, NAN, 1, DType::Float32), Code::InvalidArgument, "must be finite");
  CHECK_THROWS_CODE(range(0, 1e300, 1e-300, DType::Float64), Code::InvalidArgument, "is too many");
  CHECK_THROWS_CODE(range(0, 5, 1, DType::Complex64), Code::InvalidArgument, "does not accept dtype complex64");
  CHECK_THROWS_CODE(range(0, 5, 1, DType::Bool), Code::InvalidArgument, "does not accept dtype bool");
  CHECK_THROWS_CODE(run_op(ctx(), "Range", std::vector<Tensor>{}, {attr_float("start", 1)}), Code::InvalidArgument,
                    "missing required attribute 'limit'");
}

}  // namespace cairn
