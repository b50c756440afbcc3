#include <cfloat>
#include <cstring>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {
const std::vector<DType> kAllDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                       DType::Int8,    DType::Int16,   DType::Int32,   DType::Int64,
                                       DType::UInt8,   DType::Complex64, DType::Bool};
const std::vector<DType> kReal = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                                  DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8};

Tensor cast(const Tensor& x, DType to, bool truncate = false) {
  return run1("Cast", {x}, {attr_dtype("DstT", to), attr_bool("Truncate", truncate)});
}

double f16_value(double v) { return static_cast<float>(float16(static_cast<float>(v))); }
}  // namespace

// ---------------------------------------------------------------------------------------------- Cast

TEST_CASE("Cast between every pair of dtypes") {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      CAPTURE(dtype_name(from));
      CAPTURE(dtype_name(to));
      Tensor x = make_as(from, {0, 1, 2, 100}, {2, 2});
      Tensor y = cast(x, to);
      CHECK(y.dtype() == to);
      CHECK(y.shape() == Shape{2, 2});
      std::vector<double> want = (from == DType::Bool || to == DType::Bool) ? std::vector<double>{0, 1, 1, 1}
                                                                           : std::vector<double>{0, 1, 2, 100};
      check_close(as_doubles(y), want, 0);
      if (to == DType::Complex64) {
        for (complex64 v : values<complex64>(y)) CHECK(v.imag() == 0.0f);
      }
    }
  }
}

TEST_CASE("Cast float to integer truncates toward zero and saturates") {
  Tensor f = make<float>({-1.7f, 1.7f, 2.5f, -0.0f, -2.5f}, {5});
  CHECK(values<int32_t>(cast(f, DType::Int32)) == std::vector<int32_t>{-1, 1, 2, 0, -2});
  Tensor big = make<float>({1e10f, -1e10f, INFINITY, -INFINITY, NAN}, {5});
  CHECK(values<int32_t>(cast(big, DType::Int32)) == std::vector<int32_t>{INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0});
  CHECK(values<int64_t>(cast(make<float>({1e19f, -1e19f, NAN}, {3}), DType::Int64)) ==
        std::vector<int64_t>{INT64_MAX, INT64_MIN, 0});
  CHECK(values<uint8_t>(cast(make<float>({300, -5, 255.9f, 7.9f}, {4}), DType::UInt8)) ==
        std::vector<uint8_t>{255, 0, 255, 7});
  CHECK(values<int8_t>(cast(make<double>({1000, -1000, -128.9}, {3}), DType::Int8)) ==
        std::vector<int8_t>{127, -128, -128});
  CHECK(values<int16_t>(cast(make_as(DType::Float16, {60000, -60000, NAN}, {3}), DType::Int16)) ==
        std::vector<int16_t>{INT16_MAX, INT16_MIN, 0});
  CHECK(values<int32_t>(cast(make_as(DType::BFloat16, {-3.5, 1e20}, {2}), DType::Int32)) ==
        std::vector<int32_t>{-3, INT32_MAX});
}

TEST_CASE("Cast between integers wraps like C") {
  CHECK(values<uint8_t>(cast(make<int32_t>({300, -1, 256}, {3}), DType::UInt8)) == std::vector<uint8_t>{44, 255, 0});
  CHECK(values<int32_t>(cast(make<int64_t>({(int64_t{1} << 32) + 5, -1}, {2}), DType::Int32)) ==
        std::vector<int32_t>{5, -1});
  CHECK(values<int8_t>(cast(make<uint8_t>({200, 127}, {2}), DType::Int8)) == std::vector<int8_t>{-56, 127});
  CHECK(values<int64_t>(cast(make<int8_t>({-128, 127}, {2}), DType::Int64)) == std::vector<int64_t>{-128, 127});
  // int64 to float32 rounds to nearest.
  CHECK(values<float>(cast(make<int64_t>({(int64_t{1} << 24) + 1}, {1}), DType::Float32)) ==
        std::vector<float>{16777216.0f});
}

TEST_CASE("Cast to and from bool and complex") {
  Tensor f = make<float>({0, -0.0f, 0.5f, NAN, -3, INFINITY}, {6});
  CHECK(bools(cast(f, DType::Bool)) == std::vector<int>{0, 0, 1, 1, 1, 1});
  CHECK(bools(cast(make<int32_t>({0, 7, -1}, {3}), DType::Bool)) == std::vector<int>{0, 1, 1});
  Tensor b = make<bool>({true, false}, {2});
  CHECK(values<float>(cast(b, DType::Float32)) == std::vector<float>{1, 0});
  CHECK(values<uint8_t>(cast(b, DType::UInt8)) == std::vector<uint8_t>{1, 0});
  CHECK(values<complex64>(cast(b, DType::Complex64)) == std::vector<complex64>{{1, 0}, {0, 0}});
  // complex -> real keeps the real part; complex -> bool looks at both parts.
  Tensor c = make<complex64>({{3.5f, 2}, {-1.25f, -7}, {0, 1}, {0, 0}}, {4});
  CHECK(values<float>(cast(c, DType::Float32)) == std::vector<float>{3.5f, -1.25f, 0, 0});
  CHECK(values<double>(cast(c, DType::Float64)) == std::vector<double>{3.5, -1.25, 0, 0});
  CHECK(values<int32_t>(cast(c, DType::Int32)) == std::vector<int32_t>{3, -1, 0, 0});
  CHECK(bools(cast(c, DType::Bool)) == std::vector<int>{1, 1, 1, 0});
  check_close(as_doubles(cast(c, DType::BFloat16)), {3.5, -1.25, 0, 0}, 0);
  CHECK(values<complex64>(cast(make<double>({2.5, -1}, {2}), DType::Complex64)) ==
        std::vector<complex64>{{2.5f, 0}, {-1, 0}});
  CHECK(values<complex64>(cast(c, DType::Complex64)) == values<complex64>(c));
}

TEST_CASE("Cast between float widths rounds to nearest even, or toward zero with Truncate") {
  const double ulp16 = std::ldexp(1.0, -10), ulp_bf = std::ldexp(1.0, -7), ulp32 = std::ldexp(1.0, -23);
  // float32 -> float16: a tie, a value above the tie, their negatives, a subnormal, overflow, inf, NaN.
  Tensor x = make<float>({static_cast<float>(1 + 1.5 * ulp16), static_cast<float>(1 + 1.75 * ulp16),
                          static_cast<float>(-(1 + 1.5 * ulp16)), static_cast<float>(1.6 * std::ldexp(1.0, -24)),
                          1e6f, INFINITY, -1e6f, NAN},
                         {8});
  check_close(as_doubles(cast(x, DType::Float16)),
              {1 + 2 * ulp16, 1 + 2 * ulp16, -(1 + 2 * ulp16), 2 * std::ldexp(1.0, -24), INFINITY, INFINITY, -INFINITY,
               NAN},
              0);
  check_close(as_doubles(cast(x, DType::Float16, true)),
              {1 + ulp16, 1 + ulp16, -(1 + ulp16), std::ldexp(1.0, -24), 65504, INFINITY, -65504, NAN}, 0);
  // float32 -> bfloat16
  Tensor y = make<float>({static_cast<float>(1 + 0.5 * ulp_bf), static_cast<float>(1 + 1.5 * ulp_bf),
                          static_cast<float>(1 + 0.75 * ulp_bf), static_cast<float>(-(1 + 0.75 * ulp_bf)), FLT_MAX},
                         {5});
  check_close(as_doubles(cast(y, DType::BFloat16)), {1, 1 + 2 * ulp_bf, 1 + ulp_bf, -(1 + ulp_bf), INFINITY}, 0);
  check_close(as_doubles(cast(y, DType::BFloat16, true)), {1, 1 + ulp_bf, 1, -1, 3.3895313892515355e38}, 0);
  // float64 -> float32
  Tensor z = make<double>({1 + 0.75 * ulp32, -(1 + 0.75 * ulp32), 1e300, 0.1}, {4});
  check_close(as_doubles(cast(z, DType::Float32)), {1 + ulp32, -(1 + ulp32), INFINITY, static_cast<float>(0.1)}, 0);
  check_close(as_doubles(cast(z, DType::Float32, true)),
              {1, -1, FLT_MAX, std::nextafter(static_cast<float>(0.1), 0.0f)}, 0);
  // float64 -> float16 goes through one rounding decision on the exact value.
  Tensor w = make<double>({1 + 1.5 * ulp16 + std::ldexp(1.0, -40)}, {1});
  check_close(as_doubles(cast(w, DType::Float16)), {1 + 2 * ulp16}, 0);
  check_close(as_doubles(cast(w, DType::Float16, true)), {1 + ulp16}, 0);
  // bfloat16 -> float16: range narrows.
  Tensor v = make_as(DType::BFloat16, {1e10, 3}, {2});
  check_close(as_doubles(cast(v, DType::Float16)), {INFINITY, 3}, 0);
  check_close(as_doubles(cast(v, DType::Float16, true)), {65504, 3}, 0);
  // Truncate does not change exact widening casts or float -> int.
  Tensor h = make_as(DType::Float16, {f16_value(0.1), -2.5}, {2});
  CHECK(as_doubles(cast(h, DType::Float32, true)) == as_doubles(h));
  CHECK(values<int32_t>(cast(make<float>({2.7f, -2.7f}, {2}), DType::Int32, true)) == std::vector<int32_t>{2, -2});
  // Default Truncate is false.
  check_close(as_doubles(run1("Cast", {x}, {attr_dtype("DstT", DType::Float16)})), as_doubles(cast(x, DType::Float16)), 0);
}

TEST_CASE("Cast keeps empty and scalar shapes and handles large inputs") {
  Tensor e = cast(make<float>({}, {3, 0}), DType::Int64);
  CHECK(e.shape() == Shape{3, 0});
  CHECK(e.dtype() == DType::Int64);
  Tensor s = cast(scalar(2.75), DType::Int32);
  CHECK(s.shape() == Shape{});
  CHECK(values<int32_t>(s) == std::vector<int32_t>{2});
  CHECK(values<double>(cast(scalar(1.5), DType::Float64)) == std::vector<double>{1.5});  // same dtype: a copy
  std::vector<int32_t> big(70001);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int32_t>(i) - 35000;
  auto got = values<double>(cast(make<int32_t>(big, {static_cast<int64_t>(big.size())}), DType::Float64));
  for (size_t i = 0; i < big.size(); ++i) REQUIRE(got[i] == static_cast<double>(big[i]));
}

TEST_CASE("Cast errors") {
  Tensor x = make<float>({1}, {1});
  CHECK_THROWS_CODE(run1("Cast", {x}), Code::InvalidArgument, "Cast: missing required attribute 'DstT'");
  CHECK_THROWS_CODE(cast(x, DType::String), Code::InvalidArgument, "Cast: attribute 'DstT' does not accept dtype string");
  CHECK_THROWS_CODE(cast(x, DType::Invalid), Code::InvalidArgument, "Cast: attribute 'DstT' does not accept dtype");
  CHECK_THROWS_CODE(run1("Cast", {x}, {attr_int("DstT", 3)}), Code::InvalidArgument,
                    "Cast: attribute 'DstT' must be DTYPE, got INT");
  CHECK_THROWS_CODE(run1("Cast", {x}, {attr_dtype("DstT", DType::Int32), attr_int("Truncate", 1)}),
                    Code::InvalidArgument, "Cast: attribute 'Truncate' must be BOOL, got INT");
  // SrcT is inferred; a conflicting explicit value is rejected.
  CHECK_THROWS_CODE(run1("Cast", {x}, {attr_dtype("DstT", DType::Int32), attr_dtype("SrcT", DType::Int32)}),
                    Code::InvalidArgument, "Cast: input 'x' has dtype float32 but attribute 'SrcT' is int32");
  CHECK_THROWS_CODE(run1("Cast", {x, x}, {attr_dtype("DstT", DType::Int32)}), Code::InvalidArgument,
                    "Cast: expected 1 input, got 2");
}

// ------------------------------------------------------------------------ Identity, ZerosLike, OnesLike

TEST_CASE("Identity copies every dtype exactly") {
  for (DType t : kAllDTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {0, 1, 2, 3, 4, 5}, {2, 3});
    Tensor y = run1("Identity", {x});
    CHECK(y.dtype() == t);
    CHECK(y.shape() == Shape{2, 3});
    REQUIRE(y.nbytes() == x.nbytes());
    CHECK(std::memcmp(y.raw_data(), x.raw_data(), x.nbytes()) == 0);
    CHECK(run1("Identity", {make_as(t, {}, {0, 4})}).shape() == Shape{0, 4});
  }
  // Bits are kept: NaN payloads, signed zeros, complex imaginary parts.
  auto d = values<double>(run1("Identity", {make<double>({-0.0, NAN, INFINITY}, {3})}));
  CHECK(std::signbit(d[0]));
  CHECK(std::isnan(d[1]));
  CHECK(d[2] == INFINITY);
  CHECK(values<complex64>(run1("Identity", {make<complex64>({{1, -2}}, {1})})) == std::vector<complex64>{{1, -2}});
  CHECK(values<int32_t>(run1("Identity", {scalar<int32_t>(7)})) == std::vector<int32_t>{7});
  CHECK_THROWS_CODE(run1("Identity", {}), Code::InvalidArgument, "Identity: expected 1 input, got 0");
}

TEST_CASE("ZerosLike and OnesLike on every dtype") {
  for (DType t : kAllDTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {3, 5, 7, 9, 11, 13}, {3, 2});
    Tensor z = run1("ZerosLike", {x});
    Tensor o = run1("OnesLike", {x});
    CHECK(z.dtype() == t);
    CHECK(o.dtype() == t);
    CHECK(z.shape() == Shape{3, 2});
    CHECK(o.shape() == Shape{3, 2});
    check_close(as_doubles(z), std::vector<double>(6, 0.0), 0);
    check_close(as_doubles(o), std::vector<double>(6, 1.0), 0);
    CHECK(run1("ZerosLike", {make_as(t, {}, {0})}).shape() == Shape{0});
    CHECK(run1("OnesLike", {make_as(t, {}, {2, 0})}).shape() == Shape{2, 0});
    CHECK(run1("OnesLike", {make_as(t, {4}, {})}).shape() == Shape{});
  }
  CHECK(bools(run1("OnesLike", {make<bool>({false, true}, {2})})) == std::vector<int>{1, 1});
  CHECK(bools(run1("ZerosLike", {make<bool>({false, true}, {2})})) == std::vector<int>{0, 0});
  CHECK(values<complex64>(run1("OnesLike", {make<complex64>({{2, 3}}, {1})})) == std::vector<complex64>{{1, 0}});
  // Large: every element is written.
  auto big = values<float>(run1("OnesLike", {make<float>(std::vector<float>(50000, 2.0f), {50000})}));
  for (float v : big) REQUIRE(v == 1.0f);
}

// -------------------------------------------------------------------------------------- ClipByValue

TEST_CASE("ClipByValue on every real dtype") {
  for (DType t : kReal) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {-5, 0, 3, 10, 1, 4}, {2, 3});
    Tensor y = run1("ClipByValue", {x, make_as(t, {1}, {}), make_as(t, {4}, {})});
    CHECK(y.dtype() == t);
    CHECK(y.shape() == Shape{2, 3});
    check_close(as_doubles(y), {1, 1, 3, 4, 1, 4}, 0);
    // Bounds broadcast: min per column [3], max per row [2,1].
    Tensor r = make_as(t, {0, 1, 2, 3, 4, 5}, {2, 3});
    check_close(as_doubles(run1("ClipByValue", {r, make_as(t, {1, 0, 2}, {3}), make_as(t, {3, 4}, {2, 1})})),
                {1, 1, 2, 3, 4, 4}, 0);
    // Bounds of t's full shape.
    check_close(as_doubles(run1("ClipByValue", {r, make_as(t, {1, 0, 0, 0, 0, 0}, {2, 3}),
                                               make_as(t, {5, 4, 3, 2, 1, 0}, {2, 3})})),
                {1, 1, 2, 2, 1, 0}, 0);
  }
}

TEST_CASE("ClipByValue edge cases") {
  // min > max: TF applies the upper bound first, then the lower one, so the result is min.
  check_close(as_doubles(run1("ClipByValue", {make<float>({5, -5, 2}, {3}), scalar(3.0f), scalar(1.0f)})), {3, 3, 3}, 0);
  // NaN in t stays NaN; infinities clip.
  check_close(as_doubles(run1("ClipByValue", {make<double>({NAN, INFINITY, -INFINITY, -0.5}, {4}), scalar(-1.0),
                                             scalar(1.0)})),
              {NAN, 1, -1, -0.5}, 0);
  // Scalar t, empty t, [1] bounds against a rank-2 t.
  CHECK(values<int32_t>(run1("ClipByValue", {scalar<int32_t>(9), scalar<int32_t>(0), scalar<int32_t>(5)})) ==
        std::vector<int32_t>{5});
  CHECK(run1("ClipByValue", {make<float>({}, {0, 2}), scalar(0.0f), scalar(1.0f)}).shape() == Shape{0, 2});
  CHECK(run1("ClipByValue", {make<float>({}, {0, 2}), make<float>({0, 0}, {2}), make<float>({1}, {1, 1})}).shape() ==
        Shape{0, 2});
  check_close(as_doubles(run1("ClipByValue", {make<int64_t>({-9, 9, 0, 2}, {2, 2}), make<int64_t>({-1}, {1}),
                                             make<int64_t>({1}, {1, 1})})),
              {-1, 1, 0, 1}, 0);
  // The alias.
  check_close(as_doubles(run1("Clip", {make<float>({-2, 2}, {2}), scalar(-1.0f), scalar(1.0f)})), {-1, 1}, 0);
  // Large, threaded.
  std::vector<float> xs(40000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i % 201) - 100);
  auto got = values<float>(run1("ClipByValue", {make<float>(xs, {200, 200}), make<float>(std::vector<float>(200, -10), {200}),
                                               scalar(25.0f)}));
  for (size_t i = 0; i < xs.size(); ++i) REQUIRE(got[i] == std::min(std::max(xs[i], -10.0f), 25.0f));
}

TEST_CASE("ClipByValue errors") {
  Tensor t = make<float>({1, 2}, {2});
  CHECK_THROWS_CODE(run1("ClipByValue", {t, make<float>({0, 0, 0}, {3}), scalar(1.0f)}), Code::InvalidArgument,
                    "ClipByValue: clip_value_min with shape [3] does not broadcast to t's shape [2]");
  CHECK_THROWS_CODE(run1("ClipByValue", {t, scalar(0.0f), make<float>({1, 1, 1, 1}, {2, 2})}), Code::InvalidArgument,
                    "ClipByValue: clip_value_max with shape [2,2] does not broadcast to t's shape [2]");
  // Bounds may not enlarge t, even with unit dimensions.
  CHECK_THROWS_CODE(run1("ClipByValue", {t, make<float>({0, 0}, {1, 2}), scalar(1.0f)}), Code::InvalidArgument,
                    "clip_value_min with shape [1,2] does not broadcast to t's shape [2]");
  CHECK_THROWS_CODE(run1("ClipByValue", {scalar(1.0f), make<float>({0}, {1}), scalar(1.0f)}), Code::InvalidArgument,
                    "clip_value_min with shape [1] does not broadcast to t's shape []");
  CHECK_THROWS_CODE(run1("Clip", {t, make<float>({0, 0, 0}, {3}), scalar(1.0f)}), Code::InvalidArgument,
                    "ClipByValue: clip_value_min with shape [3]");
  CHECK_THROWS_CODE(run1("ClipByValue", {t, scalar(0.0), scalar(1.0f)}), Code::InvalidArgument,
                    "ClipByValue: input 'clip_value_min' has dtype float64 but 't' has float32");
  Tensor c = make<complex64>({{1, 0}}, {1});
  CHECK_THROWS_CODE(run1("ClipByValue", {c, c, c}), Code::InvalidArgument, "has dtype complex64, which ClipByValue does not accept");
  Tensor b = make<bool>({true}, {1});
  CHECK_THROWS_CODE(run1("ClipByValue", {b, b, b}), Code::InvalidArgument, "has dtype bool, which");
  CHECK_THROWS_CODE(run1("ClipByValue", {t, t}), Code::InvalidArgument, "ClipByValue: expected 3 inputs, got 2");
}

// ----------------------------------------------------------------------------------------- SelectV2

TEST_CASE("SelectV2 on every dtype") {
  Tensor cond = make<bool>({true, false, true, false}, {4});
  for (DType t : kAllDTypes) {
    CAPTURE(dtype_name(t));
    Tensor a = make_as(t, {1, 2, 3, 4}, {4});
    Tensor b = make_as(t, {0, 6, 0, 0}, {4});
    Tensor y = run1("SelectV2", {cond, a, b});
    CHECK(y.dtype() == t);
    CHECK(y.shape() == Shape{4});
    std::vector<double> want = t == DType::Bool ? std::vector<double>{1, 1, 1, 0} : std::vector<double>{1, 6, 3, 0};
    check_close(as_doubles(y), want, 0);
  }
  auto c = values<complex64>(
      run1("SelectV2", {make<bool>({false, true}, {2}), make<complex64>({{1, 1}, {2, 2}}, {2}),
                        make<complex64>({{3, -3}, {4, -4}}, {2})}));
  CHECK(c == std::vector<complex64>{{3, -3}, {2, 2}});
}

// Conditions that pick whole blocks of at least 64 elements take a copying path: compared with
// the same selection computed element by element.
TEST_CASE("SelectV2 with a per-block condition copies blocks") {
  const int64_t rows = 5, a = 4, b = 32;  // blocks of 128 elements
  std::vector<bool> mask;
  for (int64_t r = 0; r < rows; ++r) mask.push_back(r % 2 == 1);
  std::vector<float> full, other, block;
  for (int64_t i = 0; i < rows * a * b; ++i) {
    full.push_back(static_cast<float>(i));
    other.push_back(-static_cast<float>(i));
  }
  for (int64_t i = 0; i < a * b; ++i) block.push_back(1000.0f + static_cast<float>(i));
  Tensor cond = make<bool>(mask, {rows, 1, 1});
  Tensor x = make<float>(full, {rows, a, b}), y = make<float>(other, {rows, a, b});
  Tensor row = make<float>(block, {1, a, b}), flat_row = make<float>(block, {a, b});
  auto expect = [&](bool then_block, bool else_block) {
    std::vector<float> out;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < a * b; ++k) {
        const size_t i = static_cast<size_t>(r * a * b + k);
        out.push_back(mask[static_cast<size_t>(r)] ? (then_block ? block[static_cast<size_t>(k)] : full[i])
                                                   : (else_block ? block[static_cast<size_t>(k)] : other[i]));
      }
    return out;
  };
  CHECK(values<float>(run1("SelectV2", {cond, x, y})) == expect(false, false));
  CHECK(values<float>(run1("SelectV2", {cond, row, y})) == expect(true, false));
  CHECK(values<float>(run1("SelectV2", {cond, x, flat_row})) == expect(false, true));
  CHECK(values<float>(run1("SelectV2", {cond, row, flat_row})) == expect(true, true));
  // A condition over the first two dims: blocks of b elements (too small here, the generic loop).
  Tensor cond2 = make<bool>(std::vector<bool>(static_cast<size_t>(rows * a), true), {rows, a, 1});
  CHECK(values<float>(run1("SelectV2", {cond2, x, y})) == full);
}

TEST_CASE("SelectV2 broadcasts all three inputs") {
  // condition [2,1], t [1,3], e scalar -> [2,3]
  Tensor y = run1("SelectV2", {make<bool>({true, false}, {2, 1}), make<int32_t>({1, 2, 3}, {1, 3}), scalar<int32_t>(9)});
  CHECK(y.shape() == Shape{2, 3});
  CHECK(values<int32_t>(y) == std::vector<int32_t>{1, 2, 3, 9, 9, 9});
  // condition [3], t [2,3], e [2,1]
  Tensor z = run1("SelectV2", {make<bool>({true, false, true}, {3}), make<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                               make<float>({-1, -2}, {2, 1})});
  CHECK(values<float>(z) == std::vector<float>{1, -1, 3, 4, -2, 6});
  // scalar condition picks a whole tensor, and broadcasts t against e
  CHECK(values<float>(run1("SelectV2", {scalar(false), scalar(1.0f), make<float>({7, 8}, {2})})) ==
        std::vector<float>{7, 8});
  CHECK(values<float>(run1("SelectV2", {scalar(true), scalar(1.0f), make<float>({7, 8}, {2})})) ==
        std::vector<float>{1, 1});
  // all scalars
  Tensor s = run1("SelectV2", {scalar(true), scalar(1.5), scalar(2.5)});
  CHECK(s.shape() == Shape{});
  CHECK(values<double>(s) == std::vector<double>{1.5});
  // rank 3 with a condition of rank 1
  Tensor r = run1("SelectV2", {make<bool>({false, true}, {2}), make<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}),
                               scalar<int64_t>(0)});
  CHECK(values<int64_t>(r) == std::vector<int64_t>{0, 2, 0, 4, 0, 6, 0, 8});
  // empty
  CHECK(run1("SelectV2", {make<bool>({}, {0}), scalar(1.0f), scalar(2.0f)}).shape() == Shape{0});
  CHECK(run1("SelectV2", {make<bool>({true}, {1}), make<float>({}, {3, 0}), scalar(2.0f)}).shape() == Shape{3, 0});
  // the alias
  CHECK(values<int32_t>(run1("Select", {make<bool>({true, false}, {2}), make<int32_t>({1, 2}, {2}),
                                        make<int32_t>({3, 4}, {2})})) == std::vector<int32_t>{1, 4});
  // large, threaded, broadcast on the inner axis
  std::vector<bool> cb(257);
  for (size_t i = 0; i < cb.size(); ++i) cb[i] = (i % 3) == 0;
  Tensor cond = Tensor::allocate(ctx().cpu(), DType::Bool, {257});
  for (size_t i = 0; i < cb.size(); ++i) cond.mutable_data<bool>()[i] = cb[i];
  std::vector<float> tv(300 * 257);
  for (size_t i = 0; i < tv.size(); ++i) tv[i] = static_cast<float>(i);
  auto got = values<float>(run1("SelectV2", {cond, make<float>(tv, {300, 257}), scalar(-1.0f)}));
  for (size_t i = 0; i < tv.size(); ++i) REQUIRE(got[i] == (cb[i % 257] ? tv[i] : -1.0f));
}

TEST_CASE("SelectV2 errors") {
  Tensor c = make<bool>({true, false}, {2});
  Tensor f = make<float>({1, 2}, {2});
  CHECK_THROWS_CODE(run1("SelectV2", {f, f, f}), Code::InvalidArgument, "SelectV2: input 'condition' must be bool, got float32");
  CHECK_THROWS_CODE(run1("SelectV2", {c, f, make<int32_t>({1, 2}, {2})}), Code::InvalidArgument,
                    "SelectV2: input 'e' has dtype int32 but 't' has float32");
  CHECK_THROWS_CODE(run1("SelectV2", {c, make<float>({1, 2, 3}, {3}), f}), Code::InvalidArgument,
                    "SelectV2: incompatible shapes [2] and [3]");
  CHECK_THROWS_CODE(run1("SelectV2", {c, f, make<float>({1, 2, 3}, {3})}), Code::InvalidArgument,
                    "SelectV2: incompatible shapes [2] and [3]");
  CHECK_THROWS_CODE(run1("Select", {c, f}), Code::InvalidArgument, "SelectV2: expected 3 inputs, got 2");
}

// --------------------------------------------------------------------------------------------- AddN

TEST_CASE("AddN on every numeric dtype") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::Int16,
                  DType::Int32, DType::Int64, DType::UInt8, DType::Complex64}) {
    CAPTURE(dtype_name(t));
    Tensor a = make_as(t, {1, 2, 3}, {3});
    Tensor b = make_as(t, {4, 5, 6}, {3});
    Tensor c = make_as(t, {10, 20, 30}, {3});
    Tensor y = run1("AddN", {a, b, c});
    CHECK(y.dtype() == t);
    CHECK(y.shape() == Shape{3});
    check_close(as_doubles(y), {15, 27, 39}, 0);
    check_close(as_doubles(run1("AddN", {a})), {1, 2, 3}, 0);
    CHECK(run1("AddN", {make_as(t, {}, {0, 2}), make_as(t, {}, {0, 2})}).shape() == Shape{0, 2});
  }
  CHECK(values<complex64>(run1("AddN", {make<complex64>({{1, 2}}, {1}), make<complex64>({{3, -5}}, {1})})) ==
        std::vector<complex64>{{4, -3}});
  CHECK(values<double>(run1("AddN", {scalar(1.5), scalar(2.0), scalar(-0.25), scalar(4.0)})) ==
        std::vector<double>{7.25});
  // integers wrap
  CHECK(values<int32_t>(run1("AddN", {make<int32_t>({INT32_MAX}, {1}), make<int32_t>({1}, {1})})) ==
        std::vector<int32_t>{INT32_MIN});
  CHECK(values<uint8_t>(run1("AddN", {make<uint8_t>({200}, {1}), make<uint8_t>({100}, {1})})) ==
        std::vector<uint8_t>{44});
  // float16 accumulates in float: 2048 + 1 + 1 is 2050, not 2048 twice rounded.
  check_close(as_doubles(run1("AddN", {make_as(DType::Float16, {2048}, {1}), make_as(DType::Float16, {1}, {1}),
                                       make_as(DType::Float16, {1}, {1})})),
              {2050}, 0);
  // Many inputs, many elements.
  std::vector<Tensor> ins;
  std::vector<double> want(30000, 0.0);
  for (int k = 0; k < 5; ++k) {
    std::vector<double> v(30000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * (k + 1)) % 17);
    for (size_t i = 0; i < v.size(); ++i) want[i] += v[i];
    ins.push_back(make_as(DType::Float32, v, {100, 300}));
  }
  check_close(as_doubles(run_op(ctx(), "AddN", ins).at(0)), want, 0);
}

TEST_CASE("AddN errors") {
  Tensor a = make<float>({1, 2}, {2});
  CHECK_THROWS_CODE(run1("AddN", {a, make<float>({1, 2, 3}, {3})}), Code::InvalidArgument,
                    "AddN: all inputs must have the same shape, but input 1 has shape [3] and input 0 has [2]");
  CHECK_THROWS_CODE(run1("AddN", {a, a, make<float>({1}, {1})}), Code::InvalidArgument,
                    "but input 2 has shape [1] and input 0 has [2]");
  CHECK_THROWS_CODE(run1("AddN", {a, make<int32_t>({1, 2}, {2})}), Code::InvalidArgument, "has dtype int32 but");
  CHECK_THROWS_CODE(run1("AddN", {make<bool>({true}, {1})}), Code::InvalidArgument, "has dtype bool, which AddN");
  CHECK_THROWS_CODE(run1("AddN", {}), Code::InvalidArgument, "AddN: expected at least 1 inputs, got 0");
}

}  // namespace cairn
