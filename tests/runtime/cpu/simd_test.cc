// The xsimd elementwise kernels (runtime/cpu/simd.h, elementwise_ops.h), on every instruction set
// this CPU has (simd_dispatch.h): accuracy of each vectorized transcendental in ULPs against libm
// (the bounds docs/simd.md states), fused and unfused results bitwise equal, and results that
// depend neither on the thread count nor on an element's position in the tensor.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu/elementwise_ops.h"
#include "runtime/cpu/simd_dispatch.h"
#include "runtime/eager/dispatch.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

// Runs `body` once on each instruction set the CPU has, then restores the one in use.
template <class Body>
void on_each_arch(Body body) {
  const SimdArch before = simd_loops().arch;
  for (SimdArch arch : available_simd_archs()) {
    use_simd_arch(arch);
    const std::string isa = simd_arch_name(arch);
    CAPTURE(isa);
    body(arch);
  }
  use_simd_arch(before);
}

// Distance in representable values between two finite floats of one type (0 for equal values,
// +0 and -0 included).
template <class T>
int64_t ulp_distance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T v) {
    Bits i;
    std::memcpy(&i, &v, sizeof(T));
    return static_cast<int64_t>(i < 0 ? std::numeric_limits<Bits>::min() - i : i);
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Inputs for the sweep: special values, then bit patterns spread over the whole range of T (every
// sign, exponent and subnormals), then a dense run around zero where the functions bend.
template <class T>
std::vector<T> sweep_inputs() {
  using L = std::numeric_limits<T>;
  std::vector<T> xs = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), -L::max(),
                       L::infinity(), -L::infinity(), L::quiet_NaN(), T(1), T(-1), T(88.7), T(-87.4), T(-103.9),
                       T(709.7), T(-745.1), T(20), T(-20), T(1e-30), T(3.9), T(-3.9)};
  std::mt19937_64 rng(20);
  for (int i = 0; i < 400000; ++i) {
    T v;
    if constexpr (sizeof(T) == 4) {
      uint32_t bits = static_cast<uint32_t>(rng());
      std::memcpy(&v, &bits, 4);
    } else {
      uint64_t bits = rng();
      std::memcpy(&v, &bits, 8);
    }
    xs.push_back(v);
  }
  for (int i = -200000; i <= 200000; ++i) xs.push_back(static_cast<T>(i) * T(1e-4));
  return xs;
}

template <class T>
T libm_sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

struct Accuracy {
  int64_t max_ulps = 0;            // over results libm gives as normal numbers, zeros and infinities
  double max_subnormal_error = 0;  // absolute, over results libm gives as subnormals
};

// Runs `op` over the sweep and compares every element with `ref`; special values must agree exactly
// (NaN with NaN, infinities with the same infinity).
template <class T>
Accuracy measure(const char* op, const std::function<T(T)>& ref) {
  std::vector<T> xs = sweep_inputs<T>();
  std::vector<T> got = values<T>(run1(op, {make<T>(xs, {static_cast<int64_t>(xs.size())})}));
  Accuracy acc;
  for (size_t i = 0; i < xs.size(); ++i) {
    const T want = ref(xs[i]);
    CAPTURE(xs[i]);
    CAPTURE(got[i]);
    CAPTURE(want);
    if (std::isnan(want) || std::isinf(want)) {
      CHECK(std::isnan(got[i]) == std::isnan(want));
      if (std::isinf(want)) CHECK(got[i] == want);
      continue;
    }
    REQUIRE(std::isfinite(got[i]));
    if (std::fpclassify(want) == FP_SUBNORMAL || std::fpclassify(got[i]) == FP_SUBNORMAL) {
      acc.max_subnormal_error = std::max(acc.max_subnormal_error, std::fabs(static_cast<double>(got[i] - want)));
    } else {
      acc.max_ulps = std::max(acc.max_ulps, ulp_distance(got[i], want));
    }
  }
  return acc;
}

// The bounds docs/simd.md states, with the maxima measured on the sweep.
template <class T>
void check_accuracy(const char* op, const std::function<T(T)>& ref, int64_t bound) {
  const std::string name = op;
  CAPTURE(name);
  CAPTURE(sizeof(T));
  Accuracy acc = measure<T>(op, ref);
  // doctest prints a leading const char* as a pointer: the arch name goes in as a std::string.
  const std::string isa = simd_arch_name(simd_loops().arch);
  MESSAGE(isa, " ", name, (sizeof(T) == 4 ? " float32" : " float64"), ": max ",
          acc.max_ulps, " ulp, subnormal results off by ", acc.max_subnormal_error);
  CHECK(acc.max_ulps <= bound);
  CHECK(acc.max_subnormal_error <= static_cast<double>(std::numeric_limits<T>::min()));
}

}  // namespace

// Exp, Log, Tanh, Sigmoid and Erf of T against libm, on every instruction set.
template <class T>
void check_transcendentals(int64_t erf_bound) {
  on_each_arch([&](SimdArch) {
    check_accuracy<T>("Exp", [](T x) { return std::exp(x); }, 1);
    check_accuracy<T>("Log", [](T x) { return std::log(x); }, 1);
    check_accuracy<T>("Tanh", [](T x) { return std::tanh(x); }, 2);
    check_accuracy<T>("Sigmoid", libm_sigmoid<T>, 2);
    check_accuracy<T>("Erf", [](T x) { return std::erf(x); }, erf_bound);
  });
}

TEST_CASE("vectorized exp, log, tanh, sigmoid and erf stay within the stated ULPs of libm, float32") {
  check_transcendentals<float>(2);
}

TEST_CASE("vectorized exp, log, tanh, sigmoid and erf stay within the stated ULPs of libm, float64") {
  // xsimd's double erf is the least accurate (68 ulp measured, about 1.5e-14 relative).
  check_transcendentals<double>(68);
}

// Sigmoid's float32 exp of -|x| on its own (the baseline's batches): within 1 ulp of libm for every
// t <= 0 of the sweep, subnormal results included (at most one subnormal step off), NaN kept.
TEST_CASE("exp_nonpositive is within 1 ulp of libm for t <= 0") {
  using B = Batch<float>;
  std::vector<float> ts;
  for (float x : sweep_inputs<float>())
    if (!(x > 0.0f)) ts.push_back(x);
  ts.resize(ts.size() / B::size * B::size);
  int64_t max_ulps = 0;
  float max_subnormal_error = 0;
  for (size_t i = 0; i < ts.size(); i += B::size) {
    alignas(64) float got[B::size];
    exp_nonpositive(B::load_unaligned(ts.data() + i)).store_aligned(got);
    for (size_t k = 0; k < B::size; ++k) {
      const float want = std::exp(ts[i + k]);
      CAPTURE(ts[i + k]);
      if (std::isnan(want)) {
        CHECK(std::isnan(got[k]));
      } else if (want < std::numeric_limits<float>::min()) {
        max_subnormal_error = std::max(max_subnormal_error, std::fabs(got[k] - want));
      } else {
        max_ulps = std::max(max_ulps, ulp_distance(got[k], want));
      }
    }
  }
  MESSAGE("exp_nonpositive float32: max ", max_ulps, " ulp, subnormal results off by ", max_subnormal_error);
  CHECK(max_ulps <= 1);
  CHECK(max_subnormal_error <= std::numeric_limits<float>::denorm_min());
}

TEST_CASE("CAIRN_SIMD's names and the baseline are always there") {
  std::vector<SimdArch> archs = available_simd_archs();
  REQUIRE(!archs.empty());
  CHECK(archs.front() == kBaselineSimdArch);
  CHECK(std::string(simd_arch_name(SimdArch::kAvx2)) == "avx2");
  CHECK(std::string(simd_arch_name(SimdArch::kAvx512)) == "avx512");
}

// A chain with every kind of step: batch functors, lane-by-lane ones (Sign, Pow), scalar operands
// on either side, a ragged length. Fused (one FusedElementwise) and unfused must agree bit for bit.
std::vector<Tensor> mixed_chain(Context& cx, const Tensor& x0) {
  const DType dt = x0.dtype();
  auto k = [&](double v) { return op::scalar(cx, cx.cpu(), dt, v); };
  Tensor x = x0;
  Tensor s = op::sigmoid(cx, op::mul(cx, x, k(0.7)));
  Tensor t = op::tanh(cx, op::sub(cx, k(0.25), x));
  Tensor e = op::exp(cx, op::run1(cx, "Minimum", {x, k(3)}));
  Tensor l = op::log(cx, op::add(cx, op::run1(cx, "Abs", {x}), k(0.5)));
  Tensor m = op::maximum(cx, op::mul(cx, s, t), op::neg(cx, e));
  Tensor q = op::pow(cx, op::add(cx, s, k(1)), k(1.5));
  Tensor r = op::mul(cx, op::sign(cx, x), op::run1(cx, "Erf", {op::add(cx, l, m)}));
  return {op::sigmoid(cx, op::sub(cx, op::add(cx, r, q), op::sqrt(cx, op::add(cx, s, k(2)))))};
}

template <class T>
void check_fused_matches_unfused(Context& c) {
  const int64_t n = 4 * 16384 + 13;
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(std::sin(0.37 * static_cast<double>(i)) * 12.0);
  Tensor x = make<T>(v, {n});
  graph::FunctionOptions no_fusion;
  no_fusion.passes.fuse_elementwise = false;
  auto body = [](Context& cx, const std::vector<Tensor>& in) { return mixed_chain(cx, in[0]); };
  auto fused = make_ref<graph::Function>(c, "mixed", body);
  auto unfused = make_ref<graph::Function>(c, "mixed", body, no_fusion);
  Tensor a = fused->call({x}).at(0), b = unfused->call({x}).at(0), e = mixed_chain(c, x).at(0);
  CHECK(std::memcmp(a.data<T>(), b.data<T>(), static_cast<size_t>(n) * sizeof(T)) == 0);
  CHECK(std::memcmp(a.data<T>(), e.data<T>(), static_cast<size_t>(n) * sizeof(T)) == 0);
}

TEST_CASE("fused and unfused chains are bitwise equal on each instruction set") {
  Context& c = ctx();
  on_each_arch([&](SimdArch) {
    check_fused_matches_unfused<float>(c);
    check_fused_matches_unfused<double>(c);
  });
}

// Registers the fused loop must keep apart while it reuses its scratch slots: a step reading one
// register twice, a register read again many steps later, an input read by a late step.
std::vector<Tensor> reuse_chain(Context& cx, const Tensor& x) {
  auto k = [&](double v) { return op::scalar(cx, cx.cpu(), x.dtype(), v); };
  Tensor a = op::sigmoid(cx, op::mul(cx, x, k(0.5)));
  Tensor sq = op::mul(cx, a, a);
  Tensor b = op::sub(cx, k(1), sq);
  for (int i = 0; i < 6; ++i) b = op::sigmoid(cx, op::add(cx, op::mul(cx, b, k(0.99)), k(0.01)));
  Tensor l = op::log(cx, op::run1(cx, "Abs", {x}));  // -inf at 0, NaN at NaN
  return {op::add(cx, op::add(cx, op::maximum(cx, op::add(cx, b, a), op::sub(cx, x, sq)), l), op::neg(cx, l))};
}

TEST_CASE("fused chains reuse scratch safely and do not depend on the thread count") {
  const int64_t n = 5 * 16384 + 1024 * 3 + 5;  // several chunks, whole blocks and a ragged end
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::cos(0.11f * static_cast<float>(i)) * 9.0f;
  v[1] = 0.0f;  // NaNs meet in the additions: the NaN kept must be the unfused one too
  v[2] = -0.0f;
  v[3] = std::nanf("");
  Tensor x = make<float>(v, {n});
  graph::FunctionOptions no_fusion;
  no_fusion.passes.fuse_elementwise = false;
  auto body = [](Context& cx, const std::vector<Tensor>& in) { return reuse_chain(cx, in[0]); };
  on_each_arch([&](SimdArch) {
    Tensor want = reuse_chain(ctx(), x).at(0);
    for (int threads : {1, 2, 4}) {
      CAPTURE(threads);
      ContextOptions o;
      o.num_threads = threads;
      Ref<Context> c = make_ref<Context>(o);
      auto fused = make_ref<graph::Function>(*c, "reuse", body);
      auto unfused = make_ref<graph::Function>(*c, "reuse", body, no_fusion);
      Tensor a = fused->call({x}).at(0), b = unfused->call({x}).at(0);
      CHECK(std::memcmp(a.data<float>(), want.data<float>(), static_cast<size_t>(n) * 4) == 0);
      CHECK(std::memcmp(b.data<float>(), want.data<float>(), static_cast<size_t>(n) * 4) == 0);
    }
  });
}

// Runs of cheap steps with scalar operands, which the fused loop runs in one pass keeping each
// batch in registers (simd_dispatch.h, ScalarRunFn): every cheap op with the scalar on either side,
// a run straight from the input, a run broken where a value is read twice, NaN, infinities and
// signed zeros meeting the scalars, and NaN scalars meeting NaNs of the other sign.
std::vector<Tensor> scalar_runs(Context& cx, const Tensor& x) {
  auto k = [&](double v) { return op::scalar(cx, cx.cpu(), x.dtype(), v); };
  Tensor a = op::sub(cx, k(0.5), op::mul(cx, op::add(cx, x, k(-0.0)), k(1.5)));
  a = op::maximum(cx, k(-2), op::run1(cx, "Minimum", {a, k(std::numeric_limits<double>::infinity())}));
  a = op::run1(cx, "Minimum", {k(3), op::maximum(cx, a, k(-5))});
  Tensor b = op::add(cx, op::mul(cx, a, k(0.75)), k(0.125));  // read twice below: the run ends here
  Tensor c = op::sub(cx, op::mul(cx, b, b), k(3));
  c = op::add(cx, k(-0.5), op::sub(cx, c, k(-0.0)));
  // NaN meets NaN: which one a step keeps (its sign here) must be the unfused step's choice too.
  const double nan = std::nan("");
  Tensor d = op::add(cx, op::mul(cx, op::sub(cx, op::mul(cx, x, k(0.5)), k(nan)), k(-nan)), k(1));
  return {op::add(cx, op::mul(cx, c, k(-1)), b), d};
}

TEST_CASE("scalar runs in the fused loop are bitwise equal to their steps") {
  on_each_arch([](SimdArch) {
    for (int64_t n : {int64_t{5}, int64_t{67}, int64_t{3 * 1024 + 77}, int64_t{5 * 16384 + 9}}) {
      CAPTURE(n);
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.29 * static_cast<double>(i)) * 7.0;
      v[0] = std::nan("");
      v[1] = -0.0;
      v[2] = std::numeric_limits<double>::infinity();
      v[3] = -std::numeric_limits<double>::infinity();
      v[4] = -std::nan("");
      std::vector<float> vf(v.begin(), v.end());
      graph::FunctionOptions no_fusion;
      no_fusion.passes.fuse_elementwise = false;
      auto body = [](Context& cx, const std::vector<Tensor>& in) { return scalar_runs(cx, in[0]); };
      for (const Tensor& x : {make<float>(vf, {n}), make<double>(v, {n})}) {
        auto fused = make_ref<graph::Function>(ctx(), "runs", body);
        auto unfused = make_ref<graph::Function>(ctx(), "runs", body, no_fusion);
        std::vector<Tensor> a = fused->call({x}), b = unfused->call({x});
        for (size_t i = 0; i < a.size(); ++i)
          CHECK(std::memcmp(a[i].raw_data(), b[i].raw_data(), static_cast<size_t>(n) * dtype_size(x.dtype())) == 0);
      }
    }
  });
}

TEST_CASE("elementwise results are bitwise equal on 1, 2 and 4 threads") {
  on_each_arch([](SimdArch) {
  std::vector<Ref<Context>> contexts;
  for (int threads : {1, 2, 4}) {
    ContextOptions o;
    o.num_threads = threads;
    contexts.push_back(make_ref<Context>(o));
  }
  const int64_t n = 3 * 16384 * 4 + 7;  // several chunks per thread and a ragged end
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i)) * 30.0f;
  Tensor x = make<float>(v, {n});
  Tensor y = make<float>(std::vector<float>(v.rbegin(), v.rend()), {n});
  Tensor k = scalar<float>(0.25f);
  const std::vector<std::pair<const char*, std::vector<Tensor>>> cases = {
      {"Sigmoid", {x}}, {"Exp", {x}}, {"Tanh", {x}},    {"Neg", {x}},        {"Mul", {x, k}},
      {"Add", {k, x}},  {"Maximum", {x, y}}, {"Sub", {k, x}}, {"Pow", {x, k}}, {"Log", {x}}};
  for (const auto& [op, inputs] : cases) {
    CAPTURE(op);
    std::vector<Tensor> results;
    for (auto& c : contexts) {
      std::vector<Tensor> out;
      if (inputs.size() == 1) out = run_op(*c, op, {inputs[0]});
      else out = run_op(*c, op, {inputs[0], inputs[1]});
      results.push_back(out.at(0));
    }
    for (size_t t = 1; t < results.size(); ++t)
      CHECK(std::memcmp(results[0].data<float>(), results[t].data<float>(), static_cast<size_t>(n) * 4) == 0);
  }
  });
}

TEST_CASE("an element's result does not depend on its position (whole batches and the padded end agree)") {
  std::vector<double> v;
  for (int i = 0; i < 37; ++i) v.push_back(-9.0 + 0.5 * i);
  Tensor all = make<double>(v, {static_cast<int64_t>(v.size())});
  on_each_arch([&](SimdArch) {
    for (const char* op : {"Sigmoid", "Exp", "Erf", "Tanh"}) {
      CAPTURE(op);
      std::vector<double> together = values<double>(run1(op, {all}));
      for (size_t i = 0; i < v.size(); ++i) {
        double alone = values<double>(run1(op, {make<double>({v[i]}, {1})}))[0];
        CHECK(std::memcmp(&alone, &together[i], sizeof(double)) == 0);
      }
    }
  });
}

// Special values for the per-op checks: signed zeros, subnormals, the extremes, infinities, NaN.
template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  return {T(0),         -T(0),        L::denorm_min(), -L::denorm_min(), L::min(), -L::min(),
          L::max(),     -L::max(),    L::infinity(),   -L::infinity(),   L::quiet_NaN(), T(1),
          T(-1),        T(0.5),       T(-2.5),         T(3)};
}

// `got` is what the kernel gave where the functor's scalar code gives `want`: NaN where it gives
// NaN; zeros and infinities bit for bit (the sign included); everything else bit for bit for the
// exact IEEE ops.
template <class T>
void check_like_scalar(T got, T want, bool exact) {
  CAPTURE(got);
  CAPTURE(want);
  if (std::isnan(want)) {
    CHECK(std::isnan(got));
  } else if (exact || want == T(0) || std::isinf(want)) {
    CHECK(std::memcmp(&got, &want, sizeof(T)) == 0);
  }
}

// The ops docs/simd.md calls exact: bit for bit the scalar code on every instruction set.
bool is_exact_op(const std::string& op) {
  for (const char* e : {"Neg", "Abs", "Square", "Reciprocal", "Sqrt", "Rsqrt", "Relu", "Add", "Sub", "Mul",
                        "RealDiv", "Maximum", "Minimum", "SquaredDifference"})
    if (op == e) return true;
  return false;
}

template <class T>
void check_table_ops_like_scalar() {
  const std::vector<T> xs = special_values<T>();
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<T> as, bs;  // every pair of special values
  for (T a : xs)
    for (T b : xs) as.push_back(a), bs.push_back(b);
  const int64_t pairs = static_cast<int64_t>(as.size());
#define CAIRN_CHECK_UNARY(name, step, F, ...)                                   \
  {                                                                            \
    const std::string op = name;                                              \
    CAPTURE(op);                                                               \
    std::vector<T> got = values<T>(run1(name, {make<T>(xs, {n})}));            \
    for (size_t i = 0; i < xs.size(); ++i) {                                   \
      CAPTURE(xs[i]);                                                          \
      check_like_scalar<T>(got[i], F{}(xs[i]), is_exact_op(op));               \
    }                                                                          \
  }
  CAIRN_FUSIBLE_UNARY_OPS(CAIRN_CHECK_UNARY)
#undef CAIRN_CHECK_UNARY
#define CAIRN_CHECK_BINARY(name, step, F, ...)                                                   \
  {                                                                                             \
    const std::string op = name;                                                               \
    CAPTURE(op);                                                                                \
    std::vector<T> got = values<T>(run1(name, {make<T>(as, {pairs}), make<T>(bs, {pairs})}));   \
    for (size_t i = 0; i < as.size(); ++i) {                                                    \
      CAPTURE(as[i]);                                                                           \
      CAPTURE(bs[i]);                                                                           \
      check_like_scalar<T>(got[i], F{}(as[i], bs[i]), is_exact_op(op));                         \
    }                                                                                           \
  }
  CAIRN_FUSIBLE_BINARY_OPS(CAIRN_CHECK_BINARY)
#undef CAIRN_CHECK_BINARY
}

TEST_CASE("every table op keeps the scalar code's signed zeros, infinities and NaN on each instruction set") {
  on_each_arch([](SimdArch) {
    check_table_ops_like_scalar<float>();
    check_table_ops_like_scalar<double>();
  });
}

TEST_CASE("Maximum, Minimum and Relu keep their NaN and signed-zero rules on the SIMD path") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = make<float>({nan, 1.0f, -0.0f, 0.0f, 2.0f, -3.0f, nan, 5.0f, 0.0f}, {9});
  Tensor b = make<float>({1.0f, nan, 0.0f, -0.0f, 2.0f, -4.0f, nan, 4.0f, -0.0f}, {9});
  auto mx = values<float>(run1("Maximum", {a, b}));
  auto mn = values<float>(run1("Minimum", {a, b}));
  CHECK(std::isnan(mx[0]));
  CHECK(std::isnan(mx[1]));
  CHECK(std::isnan(mx[6]));
  CHECK(std::isnan(mn[0]));
  CHECK(!std::signbit(mx[2]));  // max(-0, +0) is the second operand, as the scalar kernel gives
  CHECK(std::signbit(mx[3]));
  CHECK(mx[5] == -3.0f);
  CHECK(mn[5] == -4.0f);
  CHECK(mx[7] == 5.0f);
  auto relu = values<float>(run1("Relu", {a}));
  CHECK(std::isnan(relu[0]));
  CHECK(!std::signbit(relu[2]));
  CHECK(relu[5] == 0.0f);
}

}  // namespace cairn
