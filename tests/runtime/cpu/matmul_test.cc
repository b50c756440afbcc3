#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {
// Reference: plain triple loop in double.
std::vector<double> ref_matmul(const std::vector<double>& a, const std::vector<double>& b, int m, int k, int n) {
  std::vector<double> c(m * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}
std::vector<double> ramp(int n, double scale) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = ((i * 7) % 11 - 5) * scale;
  return v;
}
std::vector<double> transpose(const std::vector<double>& a, int r, int c) {
  std::vector<double> t(a.size());
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) t[j * r + i] = a[i * c + j];
  return t;
}
}  // namespace

TEST_CASE("MatMul matches a reference for every dtype, with transposes") {
  const int m = 5, k = 7, n = 3;
  auto a = ramp(m * k, 1.0), b = ramp(k * n, 1.0);
  auto want = ref_matmul(a, b, m, k, n);
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64,
                  DType::Complex64}) {
    CAPTURE(dtype_name(t));
    Tensor ta = make_as(t, a, {m, k}), tb = make_as(t, b, {k, n});
    Tensor c = run1("MatMul", {ta, tb});
    CHECK(c.shape() == Shape{m, n});
    check_close(as_doubles(c), want, t == DType::BFloat16 ? 1e-2 : 1e-3);
    Tensor at = make_as(t, transpose(a, m, k), {k, m}), bt = make_as(t, transpose(b, k, n), {n, k});
    check_close(as_doubles(run1("MatMul", {at, bt}, {attr_bool("transpose_a", true), attr_bool("transpose_b", true)})),
                want, t == DType::BFloat16 ? 1e-2 : 1e-3);
  }
}

TEST_CASE("batched MatMul broadcasts batch dimensions") {
  const int m = 2, k = 3, n = 2;
  auto a = ramp(2 * m * k, 0.5);  // batch [2,1]
  auto b = ramp(3 * k * n, 2.0);  // batch [3]
  Tensor c = run1("MatMul", {make_as(DType::Float32, a, {2, 1, m, k}), make_as(DType::Float32, b, {3, k, n})});
  CHECK(c.shape() == Shape{2, 3, m, n});
  auto got = as_doubles(c);
  for (int ai = 0; ai < 2; ++ai) {
    for (int bi = 0; bi < 3; ++bi) {
      std::vector<double> am(a.begin() + ai * m * k, a.begin() + (ai + 1) * m * k);
      std::vector<double> bm(b.begin() + bi * k * n, b.begin() + (bi + 1) * k * n);
      int o = (ai * 3 + bi) * m * n;
      check_close(std::vector<double>(got.begin() + o, got.begin() + o + m * n), ref_matmul(am, bm, m, k, n));
    }
  }
}

TEST_CASE("MatMul shape errors name both shapes") {
  Tensor a = make_as(DType::Float32, ramp(6, 1), {2, 3});
  Tensor b = make_as(DType::Float32, ramp(8, 1), {4, 2});
  CHECK_THROWS_CODE(run1("MatMul", {a, b}), Code::InvalidArgument, "MatMul: inner dimensions do not match: [2,3] and [4,2]");
  CHECK_THROWS_CODE(run1("MatMul", {make_as(DType::Float32, {1, 2}, {2}), b}), Code::InvalidArgument, "rank >= 2");
  CHECK_THROWS_CODE(run1("MatMul", {a, a}, {attr_int("transpose_b", 1)}), Code::InvalidArgument,
                    "attribute 'transpose_b' must be BOOL, got INT");
}

TEST_CASE("MatMul with empty dimensions") {
  Tensor a = make_as(DType::Float32, {}, {2, 0});
  Tensor b = make_as(DType::Float32, {}, {0, 3});
  Tensor c = run1("MatMul", {a, b});
  CHECK(c.shape() == Shape{2, 3});
  check_close(as_doubles(c), std::vector<double>(6, 0.0));
  CHECK(run1("MatMul", {make_as(DType::Float32, {}, {0, 4}), make_as(DType::Float32, ramp(8, 1), {4, 2})}).shape() ==
        Shape{0, 2});
}

}  // namespace cairn
