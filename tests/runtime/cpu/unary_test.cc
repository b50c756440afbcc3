#include <complex>
#include <functional>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const std::vector<DType> kFloats = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
const std::vector<DType> kSignedInts = {DType::Int8, DType::Int16, DType::Int32, DType::Int64};

double tol(DType t) {
  switch (t) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 1e-5;
    default: return 1e-2;  // float16, bfloat16
  }
}

// Runs `op` on `xs` in every float dtype and compares with `ref` evaluated in double on the values
// the input actually holds (after rounding to the dtype).
void check_float_op(const char* op, const std::vector<double>& xs, const std::function<double(double)>& ref,
                    std::initializer_list<NamedAttr> attrs = {}) {
  for (DType t : kFloats) {
    CAPTURE(op);
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, xs, {static_cast<int64_t>(xs.size())});
    std::vector<double> want;
    for (double v : as_doubles(x)) want.push_back(ref(v));
    Tensor y = run1(op, {x}, attrs);
    CHECK(y.dtype() == t);
    CHECK(y.shape() == x.shape());
    check_close(as_doubles(y), want, tol(t));
  }
}

double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ref_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
const double kSeluAlpha = 1.6732632423543772848170429916717;
const double kSeluScale = 1.0507009873554804934193349852946;

std::vector<double> run_f64(const char* op, const std::vector<double>& xs, std::initializer_list<NamedAttr> attrs = {}) {
  return as_doubles(run1(op, {make<double>(xs, {static_cast<int64_t>(xs.size())})}, attrs));
}

}  // namespace

TEST_CASE("transcendental ops match std:: in double on every float dtype") {
  check_float_op("Exp", {-3, -1, 0, 0.5, 2.25}, [](double x) { return std::exp(x); });
  check_float_op("Log", {0.1, 1, 2.5, 10, 300}, [](double x) { return std::log(x); });
  check_float_op("Log1p", {-0.5, 0, 1e-3, 3}, [](double x) { return std::log1p(x); });
  check_float_op("Sqrt", {0, 0.25, 1, 2, 9, 1000}, [](double x) { return std::sqrt(x); });
  check_float_op("Rsqrt", {0.25, 1, 2, 9, 1000}, [](double x) { return 1.0 / std::sqrt(x); });
  check_float_op("Sin", {-2, -0.5, 0, 1, 3}, [](double x) { return std::sin(x); });
  check_float_op("Cos", {-2, -0.5, 0, 1, 3}, [](double x) { return std::cos(x); });
  check_float_op("Tanh", {-4, -0.5, 0, 1, 3}, [](double x) { return std::tanh(x); });
  check_float_op("Sigmoid", {-8, -1, 0, 1, 5}, ref_sigmoid);
  check_float_op("Erf", {-2, -0.3, 0, 0.7, 2}, [](double x) { return std::erf(x); });
  check_float_op("Elu", {-3, -0.5, 0, 1.5, 4}, [](double x) { return x > 0 ? x : std::exp(x) - 1; });
  check_float_op("Selu", {-3, -0.5, 0, 1.5, 4},
                 [](double x) { return x > 0 ? kSeluScale * x : kSeluScale * kSeluAlpha * (std::exp(x) - 1); });
  check_float_op("Softplus", {-5, -1, 0, 1, 5}, [](double x) { return std::log(1 + std::exp(x)); });
  check_float_op("Gelu", {-3, -1, -0.25, 0, 0.5, 2}, ref_gelu);
  check_float_op("Gelu", {-3, -1, -0.25, 0, 0.5, 2}, ref_gelu, {attr_bool("approximate", false)});
  check_float_op("Gelu", {-3, -1, -0.25, 0, 0.5, 2}, ref_gelu_tanh, {attr_bool("approximate", true)});
}

TEST_CASE("Gelu's two forms differ measurably") {
  // At x = 1 the exact form is 0.841345 and the tanh form 0.841192: the attribute really switches.
  auto exact = run_f64("Gelu", {1.0});
  auto approx = run_f64("Gelu", {1.0}, {attr_bool("approximate", true)});
  CHECK(exact[0] == doctest::Approx(0.8413447460685429).epsilon(1e-12));
  CHECK(approx[0] == doctest::Approx(0.8411919906082768).epsilon(1e-12));
}

TEST_CASE("sign, magnitude and rounding ops on every float dtype") {
  const std::vector<double> xs = {-2.75, -1.5, -0.25, 0, 0.5, 1, 3.25};
  check_float_op("Neg", xs, [](double x) { return -x; });
  check_float_op("Abs", xs, [](double x) { return std::fabs(x); });
  check_float_op("Sign", xs, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); });
  check_float_op("Square", xs, [](double x) { return x * x; });
  check_float_op("Reciprocal", {-2.75, -1.5, -0.25, 0.5, 1, 3.25}, [](double x) { return 1 / x; });
  check_float_op("Relu", xs, [](double x) { return x > 0 ? x : 0.0; });
  check_float_op("Relu6", {-3, -0.5, 0, 2.5, 6, 7.5, 100}, [](double x) { return std::min(std::max(x, 0.0), 6.0); });
  check_float_op("Floor", xs, [](double x) { return std::floor(x); });
  check_float_op("Ceil", xs, [](double x) { return std::ceil(x); });
}

TEST_CASE("Round rounds halves to even on every float dtype") {
  for (DType t : kFloats) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 2.25, 2.75, -2.75, -0.25, 7}, {12});
    check_close(as_doubles(run1("Round", {x})), {-2, -2, 0, 0, 2, 2, 4, 2, 3, -3, 0, 7}, 0);
  }
  // The fractional part stays exact near the largest non-integers.
  CHECK(values<float>(run1("Round", {make<float>({8388607.5f, 8388606.5f, -8388607.5f}, {3})})) ==
        std::vector<float>{8388608.0f, 8388606.0f, -8388608.0f});
  CHECK(values<double>(run1("Round", {make<double>({4503599627370495.5, 4503599627370494.5}, {2})})) ==
        std::vector<double>{4503599627370496.0, 4503599627370494.0});
  // Negative values that round to zero keep the sign: -0.
  auto r = values<double>(run1("Round", {make<double>({-0.5, -0.25, 0.25}, {3})}));
  CHECK(r[0] == 0.0);
  CHECK(std::signbit(r[0]));
  CHECK(std::signbit(r[1]));
  CHECK(!std::signbit(r[2]));
}

TEST_CASE("integer Neg, Abs, Sign, Square, Reciprocal, Relu, Relu6 on every integer dtype") {
  for (DType t : kSignedInts) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {-7, -1, 0, 1, 3, 8}, {6});
    CHECK(run1("Neg", {x}).dtype() == t);
    check_close(as_doubles(run1("Neg", {x})), {7, 1, 0, -1, -3, -8}, 0);
    check_close(as_doubles(run1("Abs", {x})), {7, 1, 0, 1, 3, 8}, 0);
    check_close(as_doubles(run1("Sign", {x})), {-1, -1, 0, 1, 1, 1}, 0);
    check_close(as_doubles(run1("Square", {x})), {49, 1, 0, 1, 9, 64}, 0);
    check_close(as_doubles(run1("Relu", {x})), {0, 0, 0, 1, 3, 8}, 0);
    check_close(as_doubles(run1("Relu6", {x})), {0, 0, 0, 1, 3, 6}, 0);
    check_close(as_doubles(run1("Reciprocal", {make_as(t, {-1, 1, 2, -3, 100}, {5})})), {-1, 1, 0, 0, 0}, 0);
  }
  // uint8 takes Square, Relu, Relu6 (not the signed-only ops).
  Tensor u = make<uint8_t>({0, 1, 3, 8, 200}, {5});
  CHECK(values<uint8_t>(run1("Square", {u})) == std::vector<uint8_t>{0, 1, 9, 64, 64});  // 40000 mod 256
  CHECK(values<uint8_t>(run1("Relu", {u})) == std::vector<uint8_t>{0, 1, 3, 8, 200});
  CHECK(values<uint8_t>(run1("Relu6", {u})) == std::vector<uint8_t>{0, 1, 3, 6, 6});
}

TEST_CASE("integer overflow wraps like TensorFlow") {
  CHECK(values<int32_t>(run1("Neg", {make<int32_t>({INT32_MIN, INT32_MAX}, {2})})) ==
        std::vector<int32_t>{INT32_MIN, -INT32_MAX});
  CHECK(values<int8_t>(run1("Abs", {make<int8_t>({-128, -127}, {2})})) == std::vector<int8_t>{-128, 127});
  CHECK(values<int64_t>(run1("Abs", {make<int64_t>({INT64_MIN}, {1})})) == std::vector<int64_t>{INT64_MIN});
  CHECK(values<int8_t>(run1("Square", {make<int8_t>({16, -12}, {2})})) == std::vector<int8_t>{0, -112});  // 256, 144
  CHECK(values<int16_t>(run1("Square", {make<int16_t>({-1, 256}, {2})})) == std::vector<int16_t>{1, 0});
  CHECK(values<int32_t>(run1("Square", {make<int32_t>({65536, 46341}, {2})})) ==
        std::vector<int32_t>{0, static_cast<int32_t>(46341u * 46341u)});
  CHECK(values<int64_t>(run1("Reciprocal", {make<int64_t>({INT64_MIN}, {1})})) == std::vector<int64_t>{0});
}

TEST_CASE("complex unary ops match std::complex<double>") {
  using cd = std::complex<double>;
  const std::vector<complex64> zs = {{1, 2}, {-0.5f, 0.25f}, {3, -1}, {0.1f, 0}};
  struct Case {
    const char* op;
    std::function<cd(cd)> ref;
  };
  const std::vector<Case> cases = {
      {"Neg", [](cd z) { return -z; }},
      {"Square", [](cd z) { return z * z; }},
      {"Reciprocal", [](cd z) { return 1.0 / z; }},
      {"Sign", [](cd z) { return z / std::abs(z); }},
      {"Exp", [](cd z) { return std::exp(z); }},
      {"Log", [](cd z) { return std::log(z); }},
      {"Sqrt", [](cd z) { return std::sqrt(z); }},
      {"Rsqrt", [](cd z) { return 1.0 / std::sqrt(z); }},
      {"Sin", [](cd z) { return std::sin(z); }},
      {"Cos", [](cd z) { return std::cos(z); }},
      {"Tanh", [](cd z) { return std::tanh(z); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op);
    Tensor y = run1(c.op, {make<complex64>(zs, {4})});
    REQUIRE(y.dtype() == DType::Complex64);
    auto got = values<complex64>(y);
    for (size_t i = 0; i < zs.size(); ++i) {
      cd want = c.ref(cd(zs[i].real(), zs[i].imag()));
      CHECK(std::abs(cd(got[i].real(), got[i].imag()) - want) <= 1e-5 * (1 + std::abs(want)));
    }
  }
  auto s = values<complex64>(run1("Sign", {make<complex64>({{0, 0}}, {1})}));
  CHECK(s[0] == complex64(0, 0));
}

TEST_CASE("Sigmoid and Softplus do not overflow for large |x|") {
  for (DType t : kFloats) {
    CAPTURE(dtype_name(t));
    // float16 holds +-1000 as +-inf; the limits are the same.
    Tensor x = make_as(t, {-1000, -100, 100, 1000, INFINITY, -INFINITY, NAN}, {7});
    check_close(as_doubles(run1("Sigmoid", {x})), {0, ref_sigmoid(as_doubles(x)[1]), 1, 1, 1, 0, NAN}, tol(t));
    auto sp = as_doubles(run1("Softplus", {x}));
    check_close(sp, {0, sp[1], as_doubles(x)[2], as_doubles(x)[3], INFINITY, 0, NAN}, tol(t));
    CHECK(sp[1] >= 0);
    CHECK(sp[1] < 1e-40);
  }
  auto sp = run_f64("Softplus", {-100, 100, -40, 40, 0});
  CHECK(sp[0] == doctest::Approx(3.720075976020836e-44).epsilon(1e-12));
  CHECK(sp[1] == 100.0);
  CHECK(sp[2] == doctest::Approx(4.248354255291589e-18).epsilon(1e-12));
  CHECK(sp[3] == 40.0);
  CHECK(sp[4] == doctest::Approx(std::log(2.0)).epsilon(1e-15));
  // float32: softplus(-100) is a subnormal near 3.7e-44 (about 26 times the smallest one).
  auto spf = values<float>(run1("Softplus", {make<float>({-100.0f, 100.0f}, {2})}));
  CHECK(spf[0] == doctest::Approx(3.72e-44).epsilon(0.05));
  CHECK(spf[1] == 100.0f);
  auto sg = run_f64("Sigmoid", {-1000, -700, -40, 40, 1000});
  CHECK(sg[0] == 0.0);
  CHECK(sg[1] / std::exp(-700.0) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(sg[2] == doctest::Approx(4.248354255291589e-18).epsilon(1e-12));  // no 1 - x cancellation
  CHECK(sg[3] == 1.0);
  CHECK(sg[4] == 1.0);
}

TEST_CASE("special values: NaN, infinities and signed zeros") {
  const double inf = INFINITY;
  for (DType t : kFloats) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {NAN, inf, -inf, -0.0, 0.0}, {5});
    check_close(as_doubles(run1("Exp", {x})), {NAN, inf, 0, 1, 1});
    check_close(as_doubles(run1("Log", {x})), {NAN, inf, NAN, -inf, -inf});
    check_close(as_doubles(run1("Sqrt", {x})), {NAN, inf, NAN, 0, 0});
    check_close(as_doubles(run1("Rsqrt", {x})), {NAN, 0, NAN, -inf, inf});
    check_close(as_doubles(run1("Reciprocal", {x})), {NAN, 0, -0.0, -inf, inf});
    check_close(as_doubles(run1("Tanh", {x})), {NAN, 1, -1, 0, 0});
    check_close(as_doubles(run1("Erf", {x})), {NAN, 1, -1, 0, 0});
    check_close(as_doubles(run1("Log1p", {make_as(t, {-1, -2, NAN, inf}, {4})})), {-inf, NAN, NAN, inf});
    check_close(as_doubles(run1("Sin", {x})), {NAN, NAN, NAN, 0, 0});
    check_close(as_doubles(run1("Neg", {x})), {NAN, -inf, inf, 0, 0});
    check_close(as_doubles(run1("Abs", {x})), {NAN, inf, inf, 0, 0});
    check_close(as_doubles(run1("Sign", {x})), {NAN, 1, -1, 0, 0});
    check_close(as_doubles(run1("Square", {x})), {NAN, inf, inf, 0, 0});
    check_close(as_doubles(run1("Relu", {x})), {NAN, inf, 0, 0, 0});
    check_close(as_doubles(run1("Relu6", {x})), {NAN, 6, 0, 0, 0});
    check_close(as_doubles(run1("Elu", {x})), {NAN, inf, -1, 0, 0});
    check_close(as_doubles(run1("Selu", {x})), {NAN, inf, -kSeluScale * kSeluAlpha, 0, 0}, tol(t));
    check_close(as_doubles(run1("Gelu", {x})), {NAN, inf, 0, 0, 0});
    check_close(as_doubles(run1("Gelu", {x}, {attr_bool("approximate", true)})), {NAN, inf, 0, 0, 0});
    check_close(as_doubles(run1("Floor", {x})), {NAN, inf, -inf, 0, 0});
    check_close(as_doubles(run1("Ceil", {x})), {NAN, inf, -inf, 0, 0});
    check_close(as_doubles(run1("Round", {x})), {NAN, inf, -inf, 0, 0});
    // Large negative inputs give (negative) zero, not NaN.
    check_close(as_doubles(run1("Gelu", {make_as(t, {-40, -1000}, {2})})), {0, 0});
    check_close(as_doubles(run1("Gelu", {make_as(t, {-40, -1000}, {2})}, {attr_bool("approximate", true)})), {0, 0});
  }
  // Signed zeros are kept where IEEE says so (checked in float64, where the bits are easy to read).
  auto neg = run_f64("Neg", {0.0, -0.0});
  CHECK(std::signbit(neg[0]));
  CHECK(!std::signbit(neg[1]));
  CHECK(!std::signbit(run_f64("Abs", {-0.0})[0]));
  CHECK(std::signbit(run_f64("Sign", {-0.0})[0]));
  CHECK(run_f64("Reciprocal", {-0.0})[0] == -inf);
  CHECK(std::signbit(run_f64("Ceil", {-0.5})[0]));
}

TEST_CASE("IsNan and IsFinite on every float dtype") {
  for (DType t : kFloats) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {0, -0.0, 1.5, INFINITY, -INFINITY, NAN}, {2, 3});
    Tensor n = run1("IsNan", {x});
    CHECK(n.dtype() == DType::Bool);
    CHECK(n.shape() == Shape{2, 3});
    CHECK(bools(n) == std::vector<int>{0, 0, 0, 0, 0, 1});
    CHECK(bools(run1("IsFinite", {x})) == std::vector<int>{1, 1, 1, 0, 0, 0});
  }
  // float16 overflows to inf on the way in; IsFinite sees it.
  CHECK(bools(run1("IsFinite", {make_as(DType::Float16, {70000, 60000}, {2})})) == std::vector<int>{0, 1});
}

TEST_CASE("unary ops keep empty and scalar shapes") {
  for (const char* op : {"Exp", "Neg", "Relu", "Round", "Gelu", "Sigmoid"}) {
    CAPTURE(op);
    Tensor e = run1(op, {make_as(DType::Float32, {}, {0, 3})});
    CHECK(e.shape() == Shape{0, 3});
    CHECK(e.dtype() == DType::Float32);
    Tensor s = run1(op, {scalar(2.0)});
    CHECK(s.shape() == Shape{});
    CHECK(s.dtype() == DType::Float64);
  }
  CHECK(values<double>(run1("Square", {scalar(-3.0)})) == std::vector<double>{9});
  CHECK(run1("IsNan", {make_as(DType::Float16, {}, {0})}).shape() == Shape{0});
  CHECK(run1("Abs", {make<int32_t>({}, {2, 0})}).shape() == Shape{2, 0});
  // Integer Reciprocal of an empty tensor has no zero to complain about.
  CHECK(run1("Reciprocal", {make<int32_t>({}, {0})}).shape() == Shape{0});
}

TEST_CASE("large unary inputs give the same result as element by element") {
  std::vector<float> xs(100003);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.01f;
  auto y = values<float>(run1("Tanh", {make<float>(xs, {static_cast<int64_t>(xs.size())})}));
  auto r = values<float>(run1("Relu", {make<float>(xs, {static_cast<int64_t>(xs.size())})}));
  // Tanh is vectorized (xsimd, within 2 ulp of libm: docs/simd.md): compare with one element run alone.
  auto alone = [](float x) { return values<float>(run1("Tanh", {make<float>({x}, {1})}))[0]; };
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i < 2001) REQUIRE(y[i] == alone(xs[i]));  // the values repeat every 2001 elements
    else REQUIRE(y[i] == y[i % 2001]);
    REQUIRE(r[i] == (xs[i] > 0 ? xs[i] : 0.0f));
  }
}

TEST_CASE("unary ops reject dtypes they do not accept") {
  Tensor i32 = make<int32_t>({1, 2}, {2});
  Tensor u8 = make<uint8_t>({1, 2}, {2});
  Tensor c64 = make<complex64>({{1, 1}}, {1});
  Tensor b = make<bool>({true}, {1});
  CHECK_THROWS_CODE(run1("Exp", {i32}), Code::InvalidArgument, "Exp: input 'x' has dtype int32, which Exp does not accept");
  for (const char* op : {"Log1p", "Sigmoid", "Erf", "Elu", "Selu", "Softplus", "Gelu", "Floor", "Ceil", "Round",
                         "IsNan", "IsFinite", "Sqrt", "Tanh"}) {
    CAPTURE(op);
    CHECK_THROWS_CODE(run1(op, {i32}), Code::InvalidArgument, "has dtype int32, which");
  }
  for (const char* op : {"Log1p", "Sigmoid", "Erf", "Elu", "Selu", "Softplus", "Gelu", "Floor", "Ceil", "Round",
                         "IsNan", "IsFinite", "Abs", "Relu", "Relu6"}) {
    CAPTURE(op);
    CHECK_THROWS_CODE(run1(op, {c64}), Code::InvalidArgument, "has dtype complex64, which");
  }
  for (const char* op : {"Neg", "Abs", "Sign", "Reciprocal"}) {
    CAPTURE(op);
    CHECK_THROWS_CODE(run1(op, {u8}), Code::InvalidArgument, "has dtype uint8, which");
  }
  for (const char* op : {"Neg", "Square", "Relu", "Exp", "IsNan"}) {
    CAPTURE(op);
    CHECK_THROWS_CODE(run1(op, {b}), Code::InvalidArgument, "has dtype bool, which");
  }
  CHECK_THROWS_CODE(run1("Neg", {i32, i32}), Code::InvalidArgument, "Neg: expected 1 input, got 2");
  CHECK_THROWS_CODE(run1("Gelu", {make<float>({1}, {1})}, {attr_int("approximate", 1)}), Code::InvalidArgument,
                    "Gelu: attribute 'approximate' must be BOOL, got INT");
  CHECK_THROWS_CODE(run1("Exp", {make<float>({1}, {1})}, {attr_bool("approximate", true)}), Code::InvalidArgument,
                    "Exp: unknown attribute 'approximate'");
}

TEST_CASE("integer Reciprocal of zero is an error") {
  for (DType t : kSignedInts) {
    CAPTURE(dtype_name(t));
    CHECK_THROWS_CODE(run1("Reciprocal", {make_as(t, {2, 0}, {2})}), Code::InvalidArgument,
                      "Reciprocal: integer division by zero");
  }
}

}  // namespace cairn
