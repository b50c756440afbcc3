// Losses against hand-computed values, and the Mean and Accuracy metrics.
#include <cmath>

#include "runtime/core/error.h"
#include "runtime/nn/losses.h"
#include "tests/runtime/nn/nn_test_util.h"

namespace cairn::nn {
namespace {

using test::as_doubles;
using test::make;

Context& c() { return test::ctx(); }

double scalar_of(const Tensor& t) {
  REQUIRE(t.shape() == Shape{});
  return as_doubles(t)[0];
}

TEST_CASE("mean squared and absolute error") {
  Tensor y = make<float>({1, 2, 3, 4}, Shape{2, 2});
  Tensor p = make<float>({1.5, 2, 2, 5}, Shape{2, 2});
  Tensor mse = mean_squared_error(c(), y, p);
  CHECK(mse.dtype() == DType::Float32);
  CHECK(scalar_of(mse) == doctest::Approx((0.25 + 0 + 1 + 1) / 4));
  CHECK(scalar_of(mean_absolute_error(c(), y, p)) == doctest::Approx((0.5 + 0 + 1 + 1) / 4));
  // Integer targets are cast to the predictions' dtype.
  Tensor yi = make<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  CHECK(scalar_of(mean_squared_error(c(), yi, p)) == doctest::Approx(0.5625));
  CHECK_THROWS_CODE(mean_squared_error(c(), make<float>({1, 2}, Shape{2}), p), Code::InvalidArgument,
                    "mean_squared_error: y_true shape [2] does not match y_pred shape [2,2]");
  CHECK_THROWS_CODE(mean_absolute_error(c(), yi, yi), Code::InvalidArgument, "y_pred must have a floating dtype");
}

TEST_CASE("binary cross-entropy from probabilities (clipped) and from logits (stable)") {
  Tensor z = make<double>({1, 0}, Shape{2});
  const double eps = 1e-7;
  double want = -(std::log(0.8 + eps) + std::log(1 - 0.3 + eps)) / 2;
  CHECK(scalar_of(binary_crossentropy(c(), z, make<double>({0.8, 0.3}, Shape{2}))) == doctest::Approx(want).epsilon(1e-12));
  // Certain and wrong: clipped to eps, so -log(2 eps) instead of infinity.
  CHECK(scalar_of(binary_crossentropy(c(), z, make<double>({0, 1}, Shape{2}))) ==
        doctest::Approx(-std::log(2 * eps)).epsilon(1e-9));
  // Certain and right: -log(1 - eps + eps) = 0.
  CHECK(scalar_of(binary_crossentropy(c(), z, make<double>({1, 0}, Shape{2}))) == doctest::Approx(0).epsilon(1e-12));

  Tensor zl = make<float>({1, 0, 1}, Shape{3});
  Tensor x = make<float>({2, -1, 0}, Shape{3});
  want = (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(-1.0)) + std::log(2.0)) / 3;
  CHECK(scalar_of(binary_crossentropy(c(), zl, x, true)) == doctest::Approx(want).epsilon(1e-6));
  // Large logits stay finite: the loss of a confident mistake is the logit itself.
  Tensor big = make<float>({100, -100}, Shape{2});
  CHECK(scalar_of(binary_crossentropy(c(), make<float>({0, 1}, Shape{2}), big, true)) == doctest::Approx(100));
  CHECK(scalar_of(binary_crossentropy(c(), make<float>({1, 0}, Shape{2}), big, true)) == doctest::Approx(0));
}

TEST_CASE("sparse categorical cross-entropy from logits and from probabilities") {
  Tensor logits = make<double>({1, 2, 3, 1, 1, 1}, Shape{2, 3});
  Tensor labels = make<int32_t>({2, 0}, Shape{2});
  const double e = std::exp(1.0);
  const double want = ((std::log(e + e * e + e * e * e) - 3) + std::log(3.0)) / 2;
  Tensor loss = sparse_categorical_crossentropy(c(), labels, logits);
  CHECK(loss.dtype() == DType::Float64);
  CHECK(scalar_of(loss) == doctest::Approx(want).epsilon(1e-12));
  CHECK(scalar_of(sparse_categorical_crossentropy(c(), make<int64_t>({2, 0}, Shape{2}), logits)) ==
        doctest::Approx(want).epsilon(1e-12));

  // [batch, time, classes] logits with [batch, time] labels.
  Tensor seq = make<float>({0, 0, 5, 0, 0, 0, 0, 0}, Shape{2, 2, 2});
  Tensor seq_labels = make<int32_t>({0, 1, 1, 0}, Shape{2, 2});
  // Only (0, 1) is not uniform: label 1 under logits [5, 0] costs log(1 + e^5).
  const double w = (3 * std::log(2.0) + std::log1p(std::exp(5.0))) / 4;
  CHECK(scalar_of(sparse_categorical_crossentropy(c(), seq_labels, seq)) == doctest::Approx(w).epsilon(1e-6));

  Tensor probs = make<double>({0.2, 0.3, 0.5, 0.1, 0.8, 0.1}, Shape{2, 3});
  Tensor pl = make<int32_t>({2, 1}, Shape{2});
  CHECK(scalar_of(sparse_categorical_crossentropy(c(), pl, probs, false)) ==
        doctest::Approx(-(std::log(0.5) + std::log(0.8)) / 2).epsilon(1e-9));

  CHECK_THROWS_CODE(sparse_categorical_crossentropy(c(), make<int32_t>({3, 0}, Shape{2}), logits), Code::InvalidArgument,
                    "label 3 (element 0) is out of range [0, 3)");
  CHECK_THROWS_CODE(sparse_categorical_crossentropy(c(), make<int32_t>({-1, 0}, Shape{2}), logits),
                    Code::InvalidArgument, "label -1");
  CHECK_THROWS_CODE(sparse_categorical_crossentropy(c(), make<int32_t>({0, 0, 0}, Shape{3}), logits),
                    Code::InvalidArgument, "labels of shape [3] do not fit logits of shape [2,3]");
  CHECK_THROWS_CODE(sparse_categorical_crossentropy(c(), make<float>({0, 0}, Shape{2}), logits), Code::InvalidArgument,
                    "labels must be int32 or int64");
}

TEST_CASE("Mean metric: running mean, reset, float64 edges") {
  Ref<Mean> m = Mean::create(c());
  CHECK(m->result() == 0);
  m->update(make<float>({1, 2, 3}, Shape{3}));
  m->update(make<int32_t>({4}, Shape{1}));
  CHECK(m->result() == doctest::Approx(2.5));
  REQUIRE(m->num_children() == 2);
  CHECK(m->children()[0].name == "total");
  CHECK(m->children()[1].name == "count");
  auto& total = static_cast<Variable&>(*m->get("total"));
  CHECK(total.dtype() == DType::Float64);
  CHECK(as_doubles(total.read()) == std::vector<double>{10});
  m->reset();
  CHECK(m->result() == 0);
  CHECK(m->describe() == "metric 'mean'");
  CHECK_THROWS_CODE(m->update(Tensor()), Code::InvalidArgument, "values is empty");
}

TEST_CASE("Accuracy: sparse labels against argmax, or equality of one shape") {
  Ref<Accuracy> a = Accuracy::create(c());
  a->update(make<int32_t>({0, 2, 1}, Shape{3}), make<float>({0.9, 0.1, 0, 0.1, 0.2, 0.7, 0.8, 0.1, 0.1}, Shape{3, 3}));
  CHECK(a->result() == doctest::Approx(2.0 / 3));
  a->update(make<float>({1, 2, 3, 4}, Shape{4}), make<float>({1, 2, 0, 4}, Shape{4}));
  CHECK(a->result() == doctest::Approx(5.0 / 7));
  CHECK_THROWS_CODE(a->update(make<int32_t>({0, 1}, Shape{2}), make<float>({1, 0, 0, 1, 0, 0}, Shape{3, 2})),
                    Code::InvalidArgument, "labels of shape [2] do not fit scores of shape [3,2]");
  CHECK_THROWS_CODE(a->update(make<float>({0, 1}, Shape{2}), make<float>({1, 0, 0}, Shape{3})), Code::InvalidArgument,
                    "fits neither");
  a->reset();
  CHECK(a->result() == 0);
}

}  // namespace
}  // namespace cairn::nn
