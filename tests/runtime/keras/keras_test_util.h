// Shared by the keras tests: a small classification problem and a model to fit on it.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/keras/model.h"
#include "tests/util/test_util.h"

namespace cairn::test {

// n samples of 4 features in 3 classes, deterministic: class k has feature k raised.
struct Blobs {
  Tensor x, y;
};
inline Blobs blobs(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n * 4));
  std::vector<int32_t> y(static_cast<size_t>(n));
  uint64_t s = 12345;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 33) % 1000) / 1000.0f - 0.5f;
  };
  for (int64_t i = 0; i < n; ++i) {
    const int32_t k = static_cast<int32_t>(i % 3);
    y[static_cast<size_t>(i)] = k;
    for (int j = 0; j < 4; ++j) x[static_cast<size_t>(i * 4 + j)] = next() + (j == k ? 1.5f : 0.0f);
  }
  return {make<float>(x, Shape{n, 4}), make<int32_t>(y, Shape{n})};
}

// Dense(8, relu) -> Dense(3) logits, compiled with Adam and sparse crossentropy + accuracy.
inline Ref<keras::Model> classifier(bool run_eagerly = false, double lr = 0.05) {
  Ref<keras::Model> m = keras::Model::create(ctx(), "classifier");
  nn::DenseOptions d;
  d.units = 8;
  d.activation = nn::Activation::Relu;
  d.kernel_initializer.seed = 1;
  m->add(nn::dense(ctx(), d));
  d.units = 3;
  d.activation = nn::Activation::Linear;
  d.kernel_initializer.seed = 2;
  m->add(nn::dense(ctx(), d));
  optim::OptimizerOptions o;
  o.kind = optim::Kind::Adam;
  o.learning_rate = lr;
  keras::CompileOptions c;
  c.optimizer = optim::Optimizer::create(ctx(), o);
  c.loss = "sparse_categorical_crossentropy";
  c.metrics = {"accuracy"};
  c.run_eagerly = run_eagerly;
  m->compile(c);
  return m;
}

// fit's options for a test: `epochs`, batches of 16, no output; `shuffle` false keeps the batches
// in the data's order.
inline keras::FitOptions quiet(int64_t epochs, std::vector<Ref<keras::Callback>> callbacks = {}, bool shuffle = true) {
  keras::FitOptions o;
  o.epochs = epochs;
  o.batch_size = 16;
  o.shuffle = shuffle;
  o.verbose = keras::Verbose::Silent;
  o.callbacks = std::move(callbacks);
  return o;
}

inline std::vector<std::vector<double>> weights_of(keras::Model& m) {
  std::vector<std::vector<double>> out;
  for (const Ref<Variable>& v : m.weights()) out.push_back(as_doubles(v->read()));
  return out;
}

}  // namespace cairn::test
