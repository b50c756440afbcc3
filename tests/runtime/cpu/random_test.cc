#include <cmath>
#include <cstring>

#include "runtime/core/philox.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

Tensor rnd(const char* op, const std::vector<int64_t>& shape, DType dtype = DType::Float32, int64_t seed = 0,
           int64_t seed2 = 0) {
  return run1(op, {}, {attr_ints("shape", shape), attr_dtype("dtype", dtype), attr_int("seed", seed), attr_int("seed2", seed2)});
}

struct Stats {
  double mean, stddev, lo, hi;
};
Stats stats(const std::vector<double>& v) {
  double s = 0, lo = INFINITY, hi = -INFINITY;
  for (double x : v) {
    s += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double mean = s / static_cast<double>(v.size());
  double q = 0;
  for (double x : v) q += (x - mean) * (x - mean);
  return {mean, std::sqrt(q / static_cast<double>(v.size())), lo, hi};
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Single-threaded references written from the documented mapping: element i uses Philox block
// i / P, slot i % P, counter {block_lo, block_hi, attempt, 0}.
philox::Counter block(uint64_t b, philox::Key key, uint32_t attempt = 0) {
  return philox::philox4x32_10(philox::Counter{static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), attempt, 0}, key);
}
std::vector<float> ref_uniform_f32(int64_t n, philox::Key key) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(block(i / 4, key)[i % 4] >> 8) / 16777216.0f;
  return v;
}
std::vector<double> ref_uniform_f64(int64_t n, philox::Key key) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    philox::Counter w = block(i / 2, key);
    int s = static_cast<int>(i % 2);
    v[i] = philox::unit_double(w[2 * s], w[2 * s + 1]);
  }
  return v;
}
double ref_normal_slot(const philox::Counter& w, int s) {
  double z0, z1;
  philox::box_muller(w[2 * (s / 2)], w[2 * (s / 2) + 1], &z0, &z1);
  return s % 2 ? z1 : z0;
}
std::vector<float> ref_normal_f32(int64_t n, philox::Key key, bool truncated) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t attempt = 0;
    double z = ref_normal_slot(block(i / 4, key), static_cast<int>(i % 4));
    while (truncated && std::fabs(z) > 2) z = ref_normal_slot(block(i / 4, key, ++attempt), static_cast<int>(i % 4));
    v[i] = static_cast<float>(z);
  }
  return v;
}
std::vector<double> ref_normal_f64(int64_t n, philox::Key key, bool truncated) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t attempt = 0;
    double z0, z1;
    for (;;) {
      philox::box_muller_53(block(i / 2, key, attempt++), &z0, &z1);
      double z = i % 2 ? z1 : z0;
      if (!truncated || std::fabs(z) <= 2) {
        v[i] = z;
        break;
      }
    }
  }
  return v;
}

}  // namespace

TEST_CASE("random ops produce the requested shape and dtype") {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    CAPTURE(op);
    for (DType t : kFloatTypes) {
      Tensor x = rnd(op, {3, 5}, t);
      CHECK(x.dtype() == t);
      CHECK(x.shape() == Shape{3, 5});
    }
    CHECK(run1(op, {}, {attr_ints("shape", {2})}).dtype() == DType::Float32);  // default dtype
    CHECK(rnd(op, {}).shape() == Shape{});
    CHECK(rnd(op, {0, 4}).shape() == Shape{0, 4});
    CHECK(rnd(op, {7}, DType::Float64, 3).num_elements() == 7);
  }
}

TEST_CASE("RandomUniform stays in [0, 1) with the right moments for every dtype") {
  for (DType t : kFloatTypes) {
    CAPTURE(dtype_name(t));
    auto v = as_doubles(rnd("RandomUniform", {100000}, t, 17, 3));
    Stats s = stats(v);
    CHECK(s.lo >= 0.0);
    CHECK(s.hi < 1.0);
    CHECK(s.lo < 0.001);
    CHECK(s.hi > 0.99);
    CHECK(std::fabs(s.mean - 0.5) < 0.005);
    CHECK(std::fabs(s.stddev - std::sqrt(1.0 / 12)) < 0.004);
  }
}

TEST_CASE("RandomStandardNormal has mean 0 and stddev 1; about 4.55% beyond 2") {
  for (DType t : kFloatTypes) {
    CAPTURE(dtype_name(t));
    auto v = as_doubles(rnd("RandomStandardNormal", {100000}, t, 5, 9));
    Stats s = stats(v);
    CHECK(std::fabs(s.mean) < 0.016);
    CHECK(std::fabs(s.stddev - 1.0) < 0.012);
    size_t beyond = 0;
    for (double x : v) beyond += std::fabs(x) > 2.0;
    CHECK(beyond > 4000);
    CHECK(beyond < 5100);
    CHECK(s.lo < -3.5);
    CHECK(s.hi > 3.5);
  }
}

TEST_CASE("TruncatedNormal stays within two standard deviations") {
  // The standard normal truncated to [-2, 2] has stddev sqrt(1 - 4 phi(2) / (2 Phi(2) - 1)) = 0.8796.
  for (DType t : kFloatTypes) {
    CAPTURE(dtype_name(t));
    auto v = as_doubles(rnd("TruncatedNormal", {100000}, t, 5, 9));
    Stats s = stats(v);
    CHECK(s.lo >= -2.0);
    CHECK(s.hi <= 2.0);
    CHECK(s.lo < -1.99);
    CHECK(s.hi > 1.99);
    CHECK(std::fabs(s.mean) < 0.014);
    CHECK(std::fabs(s.stddev - 0.8796) < 0.01);
  }
}

TEST_CASE("explicit seeds reproduce exactly; zero seeds draw fresh keys per call") {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    CAPTURE(op);
    CHECK(same_bits(rnd(op, {1000}, DType::Float32, 1, 2), rnd(op, {1000}, DType::Float32, 1, 2)));
    CHECK_FALSE(same_bits(rnd(op, {1000}, DType::Float32, 1, 2), rnd(op, {1000}, DType::Float32, 2, 1)));
    CHECK_FALSE(same_bits(rnd(op, {1000}, DType::Float32, 1, 0), rnd(op, {1000}, DType::Float32, 0, 1)));
    CHECK_FALSE(same_bits(rnd(op, {1000}), rnd(op, {1000})));
    // A prefix of a longer tensor: element values depend only on their index.
    auto a = as_doubles(rnd(op, {10}, DType::Float64, 4, 4));
    auto b = as_doubles(rnd(op, {1001}, DType::Float64, 4, 4));
    CHECK(std::equal(a.begin(), a.end(), b.begin()));
  }
  // A context replays the same sequence of unseeded calls for the same global seed.
  ContextOptions o;
  o.seed = 1234;
  Ref<Context> c1 = make_ref<Context>(o), c2 = make_ref<Context>(o);
  o.seed = 1235;
  Ref<Context> c3 = make_ref<Context>(o);
  auto call = [](Context& c) {
    return run_op(c, "RandomStandardNormal", {}, {attr_ints("shape", {64})}).at(0);
  };
  Tensor a1 = call(*c1), a2 = call(*c1), b1 = call(*c2), b2 = call(*c2), d1 = call(*c3);
  CHECK(same_bits(a1, b1));
  CHECK(same_bits(a2, b2));
  CHECK_FALSE(same_bits(a1, a2));
  CHECK_FALSE(same_bits(a1, d1));
  // Explicit seeds ignore the context's seed.
  CHECK(same_bits(run_op(*c1, "RandomUniform", {}, {attr_ints("shape", {64}), attr_int("seed", 9)}).at(0),
                  run_op(*c3, "RandomUniform", {}, {attr_ints("shape", {64}), attr_int("seed", 9)}).at(0)));
}

TEST_CASE("values match a single-threaded reference loop and do not depend on the thread count") {
  const int64_t n = 200003;  // not a multiple of the block size
  const int64_t seed = 77, seed2 = -5;
  const philox::Key key = philox::op_key(seed, seed2, 0);
  ContextOptions o1, o4;
  o1.num_threads = 1;
  o4.num_threads = 4;
  Ref<Context> c1 = make_ref<Context>(o1), c4 = make_ref<Context>(o4);
  auto with = [&](Context& c, const char* op, DType t) {
    return run_op(c, op, {}, {attr_ints("shape", {n}), attr_dtype("dtype", t), attr_int("seed", seed), attr_int("seed2", seed2)})
        .at(0);
  };
  struct Case {
    const char* op;
    DType dtype;
  };
  for (Case c : {Case{"RandomUniform", DType::Float32}, Case{"RandomUniform", DType::Float64},
                 Case{"RandomStandardNormal", DType::Float32}, Case{"RandomStandardNormal", DType::Float64},
                 Case{"TruncatedNormal", DType::Float32}, Case{"TruncatedNormal", DType::Float64},
                 Case{"RandomUniform", DType::Float16}, Case{"TruncatedNormal", DType::BFloat16}}) {
    CAPTURE(c.op);
    CAPTURE(dtype_name(c.dtype));
    Tensor pooled = rnd(c.op, {n}, c.dtype, seed, seed2);
    CHECK(same_bits(pooled, with(*c1, c.op, c.dtype)));
    CHECK(same_bits(pooled, with(*c4, c.op, c.dtype)));
    const std::string op = c.op;
    if (c.dtype == DType::Float32) {
      std::vector<float> want = op == "RandomUniform" ? ref_uniform_f32(n, key) : ref_normal_f32(n, key, op == "TruncatedNormal");
      CHECK(std::memcmp(pooled.raw_data(), want.data(), want.size() * sizeof(float)) == 0);
    } else if (c.dtype == DType::Float64) {
      std::vector<double> want = op == "RandomUniform" ? ref_uniform_f64(n, key) : ref_normal_f64(n, key, op == "TruncatedNormal");
      CHECK(std::memcmp(pooled.raw_data(), want.data(), want.size() * sizeof(double)) == 0);
    } else if (c.dtype == DType::Float16) {
      const float16* p = pooled.data<float16>();
      bool ok = true;
      for (int64_t i = 0; i < n && ok; ++i)
        ok = static_cast<float>(p[i]) == static_cast<float>(block(i / 4, key)[i % 4] >> 21) / 2048.0f;
      CHECK(ok);
    } else {
      std::vector<float> want = ref_normal_f32(n, key, true);
      const bfloat16* p = pooled.data<bfloat16>();
      bool ok = true;
      for (int64_t i = 0; i < n && ok; ++i) ok = p[i].bits == bfloat16(want[i]).bits;
      CHECK(ok);
    }
  }
}

TEST_CASE("random op errors") {
  CHECK_THROWS_CODE(rnd("RandomUniform", {2, -2}), Code::InvalidArgument, "RandomUniform: dimension 1 is negative (-2)");
  CHECK_THROWS_CODE(run1("RandomStandardNormal", {}, {}), Code::InvalidArgument,
                    "RandomStandardNormal: missing required attribute 'shape'");
  CHECK_THROWS_CODE(rnd("TruncatedNormal", {2}, DType::Int32), Code::InvalidArgument,
                    "TruncatedNormal: attribute 'dtype' does not accept dtype int32");
  CHECK_THROWS_CODE(run1("RandomUniform", {scalar(1.0f)}, {attr_ints("shape", {2})}), Code::InvalidArgument,
                    "RandomUniform: expected 0 inputs, got 1");
  CHECK_THROWS_CODE(rnd("RandomUniform", {1, 1, 1, 1, 1, 1, 1, 1, 1}), Code::InvalidArgument,
                    "RandomUniform: rank 9 exceeds the maximum of 8");
}

}  // namespace cairn
