#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const std::vector<DType> kNumberTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                         DType::Int8,    DType::Int16,   DType::Int32,   DType::Int64,
                                         DType::UInt8,   DType::Complex64};
const std::vector<DType> kRealTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                                       DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8};

Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false) {
  return run1("Cumsum", {x}, {attr_int("axis", axis), attr_bool("exclusive", exclusive), attr_bool("reverse", reverse)});
}

std::vector<Tensor> top_k(const Tensor& x, int64_t k) { return run_op(ctx(), "TopKV2", {x}, {attr_int("k", k)}); }

Tensor sort(const Tensor& x, int64_t axis = -1, bool descending = false) {
  return run1("Sort", {x}, {attr_int("axis", axis), attr_bool("descending", descending)});
}

std::vector<double> ramp(size_t n, int mod) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 37 + 11) % mod);
  return v;
}

}  // namespace

TEST_CASE("Cumsum over every number dtype: exclusive and reverse") {
  for (DType t : kNumberTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {1, 2, 3, 4}, {4});
    Tensor y = cumsum(x);
    CHECK(y.dtype() == t);
    CHECK(y.shape() == Shape{4});
    check_close(as_doubles(y), {1, 3, 6, 10});
    check_close(as_doubles(cumsum(x, 0, true)), {0, 1, 3, 6});
    check_close(as_doubles(cumsum(x, 0, false, true)), {10, 9, 7, 4});
    check_close(as_doubles(cumsum(x, -1, true, true)), {9, 7, 4, 0});
    Tensor m = make_as(t, {1, 2, 3, 4, 5, 6}, {2, 3});
    check_close(as_doubles(cumsum(m, 0)), {1, 2, 3, 5, 7, 9});
    check_close(as_doubles(cumsum(m, 1)), {1, 3, 6, 4, 9, 15});
    check_close(as_doubles(cumsum(m, -1, true)), {0, 1, 3, 0, 4, 9});
    check_close(as_doubles(cumsum(m, -2, false, true)), {5, 7, 9, 4, 5, 6});
  }
}

TEST_CASE("Cumsum over a middle axis with a wide inner dimension matches a loop") {
  const int64_t a = 3, n = 6, inner = 1100;
  std::vector<double> v = ramp(a * n * inner, 9);
  Tensor x = make_as(DType::Int32, v, {a, n, inner});
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      CAPTURE(exclusive);
      CAPTURE(reverse);
      std::vector<double> want(v.size());
      for (int64_t o = 0; o < a; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          double s = 0;
          for (int64_t step = 0; step < n; ++step) {
            int64_t i = reverse ? n - 1 - step : step;
            size_t k = static_cast<size_t>((o * n + i) * inner + j);
            if (exclusive) {
              want[k] = s;
              s += v[k];
            } else {
              s += v[k];
              want[k] = s;
            }
          }
        }
      check_close(as_doubles(cumsum(x, 1, exclusive, reverse)), want, 0);
    }
}

TEST_CASE("Cumsum edge cases and errors") {
  CHECK(values<int8_t>(cumsum(make<int8_t>({100, 100}, {2}))) == std::vector<int8_t>{100, -56});  // wraps
  auto c = values<complex64>(cumsum(make<complex64>({{1, 2}, {3, -1}}, {2})));
  CHECK(c[1] == complex64(4, 1));
  // float32 accumulates in double: 1 + many tiny values is not lost.
  std::vector<float> v(100001, 1e-8f);
  v[0] = 1.0f;
  CHECK(values<float>(cumsum(make<float>(v, {100001}))).back() == doctest::Approx(1.001).epsilon(1e-6));
  CHECK(cumsum(make<float>({}, {0, 3}), 1).shape() == Shape{0, 3});
  CHECK(cumsum(make<float>({}, {2, 0}), 1).shape() == Shape{2, 0});
  CHECK(values<float>(cumsum(make<float>({5}, {1}), 0, true)) == std::vector<float>{0});
  CHECK_THROWS_CODE(cumsum(scalar(1.0f)), Code::InvalidArgument, "Cumsum: axis 0 is out of range for rank 0");
  CHECK_THROWS_CODE(cumsum(make<float>({1, 2}, {2}), 1), Code::InvalidArgument, "Cumsum: axis 1 is out of range for rank 1");
  CHECK_THROWS_CODE(cumsum(make<float>({1, 2}, {2}), -2), Code::InvalidArgument, "Cumsum: axis -2 is out of range for rank 1");
  CHECK_THROWS_CODE(cumsum(make<bool>({true}, {1})), Code::InvalidArgument, "which Cumsum does not accept");
}

TEST_CASE("TopKV2 over every real dtype; ties take the lower index") {
  for (DType t : kRealTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {3, 1, 4, 1, 5, 9, 2, 6}, {8});
    auto out = top_k(x, 3);
    REQUIRE(out.size() == 2);
    CHECK(out[0].dtype() == t);
    CHECK(out[1].dtype() == DType::Int32);
    CHECK(out[0].shape() == Shape{3});
    check_close(as_doubles(out[0]), {9, 6, 5});
    CHECK(values<int32_t>(out[1]) == std::vector<int32_t>{5, 7, 4});
    auto ties = top_k(make_as(t, {1, 3, 3, 2, 3}, {5}), 2);
    check_close(as_doubles(ties[0]), {3, 3});
    CHECK(values<int32_t>(ties[1]) == std::vector<int32_t>{1, 2});
    // k = n sorts the whole row (ties by index), per row of a matrix.
    auto all = top_k(make_as(t, {2, 7, 2, 5, 5, 1}, {2, 3}), 3);
    CHECK(all[0].shape() == Shape{2, 3});
    check_close(as_doubles(all[0]), {7, 2, 2, 5, 5, 1});
    CHECK(values<int32_t>(all[1]) == std::vector<int32_t>{1, 0, 2, 0, 1, 2});
  }
}

TEST_CASE("TopKV2 with NaN, k = 0, the TopK alias, and a large reference") {
  auto nan = top_k(make<float>({1, NAN, 3, -INFINITY}, {4}), 3);
  check_close(as_doubles(nan[0]), {NAN, 3, 1});
  CHECK(values<int32_t>(nan[1]) == std::vector<int32_t>{1, 2, 0});
  auto none = top_k(make<float>({1, 2, 3, 4, 5, 6}, {2, 3}), 0);
  CHECK(none[0].shape() == Shape{2, 0});
  CHECK(none[1].shape() == Shape{2, 0});
  CHECK(top_k(make<float>({}, {0, 3}), 2)[0].shape() == Shape{0, 2});
  auto alias = run_op(ctx(), "TopK", {make<int32_t>({4, 8, 6}, {3})}, {attr_int("k", 1), attr_bool("sorted", false)});
  CHECK(values<int32_t>(alias[0]) == std::vector<int32_t>{8});
  CHECK(values<int32_t>(alias[1]) == std::vector<int32_t>{1});
  // 40 rows of 1000 values with many ties, against a stable sort by value.
  const int64_t rows = 40, n = 1000, k = 37;
  std::vector<double> v = ramp(rows * n, 101);
  auto out = top_k(make_as(DType::Int16, v, {rows, n}), k);
  auto got_v = as_doubles(out[0]);
  auto got_i = values<int32_t>(out[1]);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return v[r * n + a] > v[r * n + b]; });
    for (int64_t i = 0; i < k; ++i) {
      REQUIRE(got_i[r * k + i] == idx[i]);
      REQUIRE(got_v[r * k + i] == v[r * n + idx[i]]);
    }
  }
}

TEST_CASE("TopKV2 errors") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THROWS_CODE(top_k(x, 4), Code::InvalidArgument, "TopKV2: k (4) must not exceed the last dimension (3) of input [2,3]");
  CHECK_THROWS_CODE(top_k(x, -1), Code::InvalidArgument, "TopKV2: attribute 'k' must be at least 0, got -1");
  CHECK_THROWS_CODE(top_k(scalar(1.0f), 0), Code::InvalidArgument, "TopKV2: input must have rank >= 1, got shape []");
  CHECK_THROWS_CODE(run_op(ctx(), "TopKV2", {x}), Code::InvalidArgument, "TopKV2: missing required attribute 'k'");
  CHECK_THROWS_CODE(top_k(make<complex64>({{1, 0}}, {1}), 1), Code::InvalidArgument, "which TopKV2 does not accept");
}

TEST_CASE("Sort over every real dtype, ascending and descending, along any axis") {
  for (DType t : kRealTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {3, 1, 4, 1, 5, 9, 2, 6}, {8});
    Tensor y = sort(x);
    CHECK(y.dtype() == t);
    check_close(as_doubles(y), {1, 1, 2, 3, 4, 5, 6, 9});
    check_close(as_doubles(sort(x, 0, true)), {9, 6, 5, 4, 3, 2, 1, 1});
    Tensor m = make_as(t, {5, 1, 4, 2, 3, 6}, {2, 3});
    check_close(as_doubles(sort(m)), {1, 4, 5, 2, 3, 6});
    check_close(as_doubles(sort(m, 0)), {2, 1, 4, 5, 3, 6});
    check_close(as_doubles(sort(m, -2, true)), {5, 3, 6, 2, 1, 4});
    check_close(as_doubles(sort(m, 1, true)), {5, 4, 1, 6, 3, 2});
  }
}

TEST_CASE("Sort is stable and puts NaN last ascending, first descending") {
  auto signs = [](const Tensor& t) {
    std::vector<int> s;
    for (float v : values<float>(t)) s.push_back(std::signbit(v) ? 1 : 0);
    return s;
  };
  // -0.0 and 0.0 compare equal, so their order is the input order in both directions.
  CHECK(signs(sort(make<float>({0.0f, -0.0f, 0.0f}, {3}))) == std::vector<int>{0, 1, 0});
  CHECK(signs(sort(make<float>({-0.0f, 0.0f, -1.0f}, {3}))) == std::vector<int>{1, 1, 0});
  CHECK(signs(sort(make<float>({-0.0f, 0.0f, 1.0f}, {3}), -1, true)) == std::vector<int>{0, 1, 0});
  check_close(as_doubles(sort(make<double>({3, NAN, 1, NAN, 2}, {5}))), {1, 2, 3, NAN, NAN});
  check_close(as_doubles(sort(make<double>({3, NAN, 1, NAN, 2}, {5}), 0, true)), {NAN, NAN, 3, 2, 1});
  check_close(as_doubles(sort(make<float>({INFINITY, NAN, -INFINITY}, {3}))), {-INFINITY, INFINITY, NAN});
  // Strided lines (axis 0 of a wide matrix) against std::sort.
  const int64_t n = 50, cols = 700;
  std::vector<double> v = ramp(n * cols, 97);
  auto got = as_doubles(sort(make_as(DType::Float32, v, {n, cols}), 0));
  for (int64_t j = 0; j < cols; ++j) {
    std::vector<double> col(n);
    for (int64_t i = 0; i < n; ++i) col[i] = v[i * cols + j];
    std::sort(col.begin(), col.end());
    for (int64_t i = 0; i < n; ++i) REQUIRE(got[i * cols + j] == col[i]);
  }
  CHECK(sort(make<float>({}, {0, 4})).shape() == Shape{0, 4});
  CHECK(sort(make<float>({}, {3, 0}), 0).shape() == Shape{3, 0});
}

TEST_CASE("Sort errors") {
  CHECK_THROWS_CODE(sort(scalar(1.0f)), Code::InvalidArgument, "Sort: axis -1 is out of range for rank 0");
  CHECK_THROWS_CODE(sort(make<float>({1, 2}, {2}), 1), Code::InvalidArgument, "Sort: axis 1 is out of range for rank 1");
  CHECK_THROWS_CODE(sort(make<bool>({true}, {1})), Code::InvalidArgument, "which Sort does not accept");
  CHECK_THROWS_CODE(sort(make<complex64>({{1, 0}}, {1})), Code::InvalidArgument, "which Sort does not accept");
}

}  // namespace cairn
