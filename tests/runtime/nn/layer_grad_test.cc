// Gradients through Dense, LayerNormalization and BatchNormalization (GradientTape) against
// central finite differences in float64, with respect to the input and every trainable weight.
// LayerNormalization and BatchNormalization need Rsqrt's gradient (from the math gradients).
#include <cmath>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "tests/runtime/nn/nn_test_util.h"

namespace cairn::nn {
namespace {

using test::as_doubles;
using test::make;

Context& c() { return test::ctx(); }

// Deterministic, irregular values (so no symmetry hides a wrong gradient).
Tensor wavy(const Shape& shape, double phase) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.7 * static_cast<double>(i) + phase) + 0.1 * phase;
  return make<double>(v, shape);
}

// sum(layer(x) * probe): a scalar whose gradient exercises every output element differently.
double loss_at(Layer& layer, const Tensor& x, const Tensor& probe, bool training) {
  return as_doubles(op::all_sum(c(), op::mul(c(), layer(x, training), probe)))[0];
}

// Central differences of `loss(perturbed values)` for each element of `values`.
template <class Loss>
std::vector<double> numeric(const Tensor& values, Loss loss) {
  const double h = 1e-5;
  std::vector<double> base = as_doubles(values), grad(base.size());
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> v = base;
    v[i] = base[i] + h;
    const double up = loss(make<double>(v, values.shape()));
    v[i] = base[i] - h;
    grad[i] = (up - loss(make<double>(v, values.shape()))) / (2 * h);
  }
  return grad;
}

void check_gradients(Layer& layer, const Tensor& x, bool training) {
  Tensor probe = wavy(layer(x, training).shape(), 0.3);  // also builds the layer
  std::vector<Ref<Variable>> weights = layer.trainable_weights();
  REQUIRE(!weights.empty());

  GradientTape tape(c(), TapeOptions{true, true});
  tape.watch(x);
  Tensor loss = op::all_sum(c(), op::mul(c(), layer(x, training), probe));
  Tensor gx = tape.gradient(loss, std::vector<Tensor>{x})[0];
  std::vector<const Variable*> sources;
  for (const Ref<Variable>& w : weights) sources.push_back(w.get());
  std::vector<Tensor> gw = tape.gradient(loss, sources);

  INFO(layer.describe(), " training=", training);
  REQUIRE(gx.valid());
  test::check_close(as_doubles(gx), numeric(x, [&](const Tensor& xp) { return loss_at(layer, xp, probe, training); }),
                    1e-6);
  for (size_t k = 0; k < weights.size(); ++k) {
    Variable& w = *weights[k];
    INFO("weight ", w.name());
    const Tensor original = w.read();
    std::vector<double> want = numeric(original, [&](const Tensor& wp) {
      w.assign(wp);
      return loss_at(layer, x, probe, training);
    });
    w.assign(original);
    REQUIRE(gw[k].valid());
    test::check_close(as_doubles(gw[k]), want, 1e-6);
  }
}

TEST_CASE("Dense gradients: rank 2 and rank 3 inputs, with an activation") {
  DenseOptions o;
  o.units = 3;
  o.activation = Activation::Tanh;
  Ref<Layer> d = dense(c(), o);
  check_gradients(*d, wavy(Shape{4, 5}, 1.0), false);
  o.activation = Activation::Linear;
  Ref<Layer> d3 = dense(c(), o);
  check_gradients(*d3, wavy(Shape{2, 3, 4}, 2.0), false);
}

TEST_CASE("LayerNormalization gradients") {
  Ref<Layer> ln = layer_norm(c(), {});
  Tensor x = wavy(Shape{3, 5}, 0.5);
  (*ln)(x);
  test::set_weight(*ln, "gamma", {1.5, -0.5, 2, 0.7, 1.1});
  test::set_weight(*ln, "beta", {0.1, 0.2, -0.3, 0.4, 0});
  check_gradients(*ln, x, false);
  NormOptions o;
  o.axis = 1;
  Ref<Layer> ln1 = layer_norm(c(), o);
  check_gradients(*ln1, wavy(Shape{2, 4, 3}, 1.5), false);
}

TEST_CASE("BatchNormalization gradients: batch statistics (training) and moving statistics") {
  Ref<Layer> bn = batch_norm(c(), {});
  Tensor x = wavy(Shape{6, 3}, 0.8);
  (*bn)(x, true);
  test::set_weight(*bn, "gamma", {1.3, 0.6, -1.1});
  test::set_weight(*bn, "beta", {0.2, -0.1, 0.5});
  check_gradients(*bn, x, true);
  check_gradients(*bn, x, false);
  // The moving statistics are not trainable, so the tape does not differentiate them.
  CHECK(bn->trainable_weights().size() == 2);
  Ref<Layer> bn4 = batch_norm(c(), {});
  check_gradients(*bn4, wavy(Shape{2, 3, 2, 2}, 2.5), true);
}

}  // namespace
}  // namespace cairn::nn
