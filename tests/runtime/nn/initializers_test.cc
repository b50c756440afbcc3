// Initializer bounds and statistics with Keras' fan rules, seeds and errors.
#include <cmath>

#include "runtime/core/error.h"
#include "runtime/nn/layer.h"
#include "tests/runtime/nn/nn_test_util.h"

namespace cairn::nn {
namespace {

using test::as_doubles;

struct Stats {
  double mean = 0, stddev = 0, min = 0, max = 0;
};
Stats stats(const std::vector<double>& v) {
  Stats s{0, 0, v[0], v[0]};
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(s.stddev / static_cast<double>(v.size()));
  return s;
}

Stats draw(const Initializer& init, const Shape& shape, DType dtype = DType::Float32) {
  Tensor t = initialize(test::ctx(), init, shape, dtype);
  CHECK(t.shape() == shape);
  CHECK(t.dtype() == dtype);
  CHECK(t.device() == &test::ctx().cpu());
  return stats(as_doubles(t));
}

Initializer kind(Initializer::Kind k) {
  Initializer i;
  i.kind = k;
  return i;
}

TEST_CASE("uniform initializers: bounds sqrt(6 / fan) and the matching standard deviation") {
  // Dense kernel [in=100, out=200].
  const double glorot_limit = std::sqrt(6.0 / 300);
  Stats g = draw(kind(Initializer::Kind::GlorotUniform), Shape{100, 200});
  CHECK(g.min >= -glorot_limit);
  CHECK(g.max < glorot_limit);
  CHECK(g.min < -0.95 * glorot_limit);
  CHECK(g.max > 0.95 * glorot_limit);
  CHECK(std::abs(g.mean) < 0.01 * glorot_limit * 3);
  CHECK(g.stddev == doctest::Approx(glorot_limit / std::sqrt(3.0)).epsilon(0.02));

  const double he_limit = std::sqrt(6.0 / 100);
  Stats h = draw(kind(Initializer::Kind::HeUniform), Shape{100, 200}, DType::Float64);
  CHECK(h.min >= -he_limit);
  CHECK(h.max < he_limit);
  CHECK(h.stddev == doctest::Approx(he_limit / std::sqrt(3.0)).epsilon(0.02));

  // Conv kernel [3, 3, 4, 8]: receptive field 9, fan_in 36, fan_out 72.
  const double conv_limit = std::sqrt(6.0 / 108);
  Stats c = draw(kind(Initializer::Kind::GlorotUniform), Shape{3, 3, 4, 8});
  CHECK(c.min >= -conv_limit);
  CHECK(c.max < conv_limit);
  CHECK(c.max > 0.9 * conv_limit);

  Initializer u = kind(Initializer::Kind::RandomUniform);
  u.minval = -1;
  u.maxval = 3;
  Stats r = draw(u, Shape{20000});
  CHECK(r.min >= -1);
  CHECK(r.max < 3);
  CHECK(r.mean == doctest::Approx(1).epsilon(0.03));
  CHECK(r.stddev == doctest::Approx(4 / std::sqrt(12.0)).epsilon(0.02));
}

TEST_CASE("normal initializers: truncated at two standard deviations, Keras' stddev") {
  // he_normal on [200, 100]: stddev sqrt(2 / 200) = 0.1 after truncation.
  Stats h = draw(kind(Initializer::Kind::HeNormal), Shape{200, 100});
  const double raw = 0.1 / 0.87962566103423978;  // the untruncated normal's stddev
  CHECK(h.min >= -2 * raw);
  CHECK(h.max <= 2 * raw);
  CHECK(h.max > 1.9 * raw);
  CHECK(h.stddev == doctest::Approx(0.1).epsilon(0.02));
  CHECK(std::abs(h.mean) < 0.003);

  // glorot_normal on [100, 200]: stddev sqrt(2 / 300).
  Stats g = draw(kind(Initializer::Kind::GlorotNormal), Shape{100, 200}, DType::Float64);
  CHECK(g.stddev == doctest::Approx(std::sqrt(2.0 / 300)).epsilon(0.02));
  CHECK(g.max <= 2 * std::sqrt(2.0 / 300) / 0.87962566103423978);

  // random_normal is not truncated.
  Initializer n = kind(Initializer::Kind::RandomNormal);
  n.mean = 1;
  n.stddev = 2;
  Stats r = draw(n, Shape{20000});
  CHECK(r.mean == doctest::Approx(1).epsilon(0.03));
  CHECK(r.stddev == doctest::Approx(2).epsilon(0.02));
  CHECK(r.max > 1 + 2 * 2.5);
}

TEST_CASE("constant initializers and parse_initializer") {
  CHECK(as_doubles(initialize(test::ctx(), kind(Initializer::Kind::Zeros), Shape{2, 2}, DType::Float32)) ==
        std::vector<double>{0, 0, 0, 0});
  CHECK(as_doubles(initialize(test::ctx(), kind(Initializer::Kind::Ones), Shape{3}, DType::Float64)) ==
        std::vector<double>{1, 1, 1});
  Initializer k = kind(Initializer::Kind::Constant);
  k.value = -2.5;
  CHECK(as_doubles(initialize(test::ctx(), k, Shape{2}, DType::Float16)) == std::vector<double>{-2.5, -2.5});

  CHECK(parse_initializer("he_normal").kind == Initializer::Kind::HeNormal);
  CHECK(parse_initializer("glorot_uniform").kind == Initializer::Kind::GlorotUniform);
  CHECK(parse_initializer("random_uniform").kind == Initializer::Kind::RandomUniform);
  CHECK_THROWS_CODE(parse_initializer("lecun_normal"), Code::InvalidArgument, "unknown initializer \"lecun_normal\"");
  CHECK_THROWS_CODE(initialize(test::ctx(), k, Shape{2}, DType::Int32), Code::InvalidArgument,
                    "floating dtype, got int32");
  Initializer bad = kind(Initializer::Kind::RandomUniform);
  bad.minval = 1;
  bad.maxval = 0;
  CHECK_THROWS_CODE(initialize(test::ctx(), bad, Shape{2}, DType::Float32), Code::InvalidArgument,
                    "minval 1 is greater than maxval 0");
}

TEST_CASE("seeds: an explicit seed (even 0) repeats, no seed follows the context stream") {
  for (int64_t seed : {0, 5}) {
    Initializer s = kind(Initializer::Kind::GlorotUniform);
    s.seed = seed;
    Tensor a = initialize(test::ctx(), s, Shape{4, 4}, DType::Float32);
    Tensor b = initialize(test::ctx(), s, Shape{4, 4}, DType::Float32);
    CHECK(as_doubles(a) == as_doubles(b));
  }
  Initializer s0 = kind(Initializer::Kind::HeNormal), s1 = s0;
  s0.seed = 1;
  s1.seed = 2;
  CHECK(as_doubles(initialize(test::ctx(), s0, Shape{8}, DType::Float32)) !=
        as_doubles(initialize(test::ctx(), s1, Shape{8}, DType::Float32)));
  Initializer unseeded = kind(Initializer::Kind::GlorotUniform);
  CHECK(as_doubles(initialize(test::ctx(), unseeded, Shape{8}, DType::Float32)) !=
        as_doubles(initialize(test::ctx(), unseeded, Shape{8}, DType::Float32)));

  // Two contexts with the same seed create the same layer weights in the same order.
  Ref<Context> a = test::fresh_context(3), b = test::fresh_context(3);
  DenseOptions o;
  o.units = 4;
  Ref<Layer> da = dense(*a, o), db = dense(*b, o);
  (*da)(Tensor::allocate(a->cpu(), DType::Float32, Shape{1, 5}));
  (*db)(Tensor::allocate(b->cpu(), DType::Float32, Shape{1, 5}));
  CHECK(as_doubles(test::weight(*da, "kernel").read()) == as_doubles(test::weight(*db, "kernel").read()));
}

}  // namespace
}  // namespace cairn::nn
