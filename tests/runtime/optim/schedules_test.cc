// Learning rate schedules: values at several steps (against the formulas evaluated here in
// double), staircase, clamping past decay_steps, parameters as variable edges, bad arguments.
#include <cmath>

#include "runtime/optim/optimizer.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

std::vector<std::string> edge_names(const Object& o) {
  std::vector<std::string> names;
  for (const Edge& e : o.children()) names.push_back(e.name);
  return names;
}

TEST_CASE("exponential decay: lr0 * rate^(step / decay_steps), floored exponent when staircase") {
  auto smooth = optim::exponential_decay(ctx(), 0.1, 10, 0.5);
  auto stairs = optim::exponential_decay(ctx(), 0.1, 10, 0.5, true);
  for (int64_t step : {0, 1, 5, 10, 15, 25, 100}) {
    CAPTURE(step);
    CHECK(smooth->value_at(step) == doctest::Approx(0.1 * std::pow(0.5, step / 10.0)).epsilon(1e-6));
    CHECK(stairs->value_at(step) == doctest::Approx(0.1 * std::pow(0.5, std::floor(step / 10.0))).epsilon(1e-6));
  }
  CHECK(smooth->value_at(10) == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(stairs->value_at(19) == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(stairs->value_at(20) == doctest::Approx(0.025).epsilon(1e-6));
  CHECK(edge_names(*smooth) == std::vector<std::string>{"initial_learning_rate", "decay_steps", "decay_rate"});
  Tensor lr = smooth->at(scalar<int64_t>(3));
  CHECK(lr.dtype() == DType::Float32);
  CHECK(lr.shape() == Shape{});
}

TEST_CASE("cosine decay: clamps at decay_steps and ends at lr0 * alpha") {
  auto s = optim::cosine_decay(ctx(), 2.0, 100, 0.1);
  const double pi = 3.14159265358979323846;
  for (int64_t step : {0, 1, 25, 50, 99, 100, 150, 1000}) {
    CAPTURE(step);
    double frac = std::min<double>(step, 100) / 100.0;
    double want = 2.0 * ((1 - 0.1) * 0.5 * (1 + std::cos(pi * frac)) + 0.1);
    CHECK(s->value_at(step) == doctest::Approx(want).epsilon(1e-6));
  }
  CHECK(s->value_at(0) == doctest::Approx(2.0).epsilon(1e-6));
  CHECK(s->value_at(50) == doctest::Approx(1.1).epsilon(1e-6));
  CHECK(s->value_at(500) == doctest::Approx(0.2).epsilon(1e-6));
  CHECK(edge_names(*s) == std::vector<std::string>{"initial_learning_rate", "decay_steps", "alpha"});
}

TEST_CASE("schedule parameters are variables: assigning one changes the schedule") {
  auto s = optim::exponential_decay(ctx(), 1.0, 4, 0.5);
  auto& rate = static_cast<Variable&>(*s->get_child("decay_rate"));
  CHECK(rate.dtype() == DType::Float32);
  CHECK_FALSE(rate.trainable());
  rate.assign(scalar<float>(0.25f));
  CHECK(s->value_at(4) == doctest::Approx(0.25).epsilon(1e-6));
}

TEST_CASE("bad schedule arguments") {
  CHECK_THROWS_CODE(optim::exponential_decay(ctx(), 0.1, 0, 0.5), Code::InvalidArgument, "decay_steps");
  CHECK_THROWS_CODE(optim::exponential_decay(ctx(), -0.1, 10, 0.5), Code::InvalidArgument, "initial_learning_rate");
  CHECK_THROWS_CODE(optim::exponential_decay(ctx(), 0.1, 10, 0), Code::InvalidArgument, "decay_rate");
  CHECK_THROWS_CODE(optim::cosine_decay(ctx(), 0.1, -5), Code::InvalidArgument, "decay_steps");
  CHECK_THROWS_CODE(optim::cosine_decay(ctx(), 0.1, 5, 1.5), Code::InvalidArgument, "alpha");
  auto s = optim::cosine_decay(ctx(), 0.1, 5);
  CHECK_THROWS_CODE(s->at(scalar<float>(1.0f)), Code::InvalidArgument, "int64 scalar");
}

}  // namespace
}  // namespace cairn::test
