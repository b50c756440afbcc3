// The Cairn twin of the goldens' Keras model: Sequential(Dense(16, relu), Dense(3)) on 8 inputs with
// Adam, under Checkpoint(model=..., optimizer=...) as tf.train.Checkpoint(model=m, optimizer=opt).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/util/test_util.h"

namespace cairn::test {

struct CairnMlp {
  Ref<nn::Sequential> model = nn::Sequential::create(ctx(), "sequential");
  Ref<optim::Optimizer> adam;
  std::unique_ptr<ckpt::Checkpoint> ckpt;

  // `seed` fixes the kernels' initial values (else the context's stream); `units` the first layer.
  explicit CairnMlp(double learning_rate = 0.5, std::optional<int64_t> seed = std::nullopt, int64_t units = 16) {
    nn::DenseOptions d1;
    d1.units = units;
    d1.activation = nn::Activation::Relu;
    nn::DenseOptions d2;
    d2.units = 3;
    if (seed) {
      d1.kernel_initializer.seed = *seed;
      d2.kernel_initializer.seed = *seed + 1;
    }
    model->add(nn::dense(ctx(), d1));
    model->add(nn::dense(ctx(), d2));
    optim::OptimizerOptions o;
    o.kind = optim::Kind::Adam;
    o.learning_rate = learning_rate;
    adam = optim::Optimizer::create(ctx(), o);
    ckpt = std::make_unique<ckpt::Checkpoint>(
        ctx(), std::vector<std::pair<std::string, Ref<Object>>>{{"model", model}, {"optimizer", adam}});
  }
  // The first call builds the layers (creates their weights).
  void build() { (*model)(make<float>(std::vector<float>(8, 0.0f), Shape{1, 8})); }
  // One Adam step with gradient element i of every weight g * (i % 7 - 0.5). The first step
  // creates Adam's slots (restoring them when a restore is pending).
  void step(float g) {
    std::vector<Ref<Variable>> vars = model->trainable_weights();
    std::vector<Tensor> grads;
    for (auto& v : vars) {
      std::vector<float> x(static_cast<size_t>(v->shape().num_elements()));
      for (size_t i = 0; i < x.size(); ++i) x[i] = g * (static_cast<float>(i % 7) - 0.5f);
      grads.push_back(make<float>(x, v->shape()));
    }
    adam->apply_gradients(grads, vars);
  }
  // A zero-gradient step scales m by beta_1 and v by beta_2: what a test checks restored slots by.
  void zero_step() { step(0.0f); }
};

// Built at once, with kernels from `seed` and learning rate 0.01 (the writing tests' model).
struct BuiltMlp : CairnMlp {
  explicit BuiltMlp(int64_t seed) : CairnMlp(0.01, seed) { build(); }
};

}  // namespace cairn::test
