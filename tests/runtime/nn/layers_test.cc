// Layer shapes, names, parameter counts, input errors and exact forward values.
#include <cmath>

#include "runtime/core/error.h"
#include "runtime/nn/layer.h"
#include "tests/runtime/nn/nn_test_util.h"

namespace cairn::nn {
namespace {

using test::as_doubles;
using test::check_close;
using test::make;
using test::make_as;
using test::set_weight;
using test::weight;

Context& c() { return test::ctx(); }

Ref<Layer> dense_layer(int64_t units, Activation a = Activation::Linear, bool use_bias = true) {
  DenseOptions o;
  o.units = units;
  o.activation = a;
  o.use_bias = use_bias;
  return dense(c(), o);
}

Tensor ramp(DType dtype, const Shape& shape, double start = 1) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
  return make_as(dtype, v, shape);
}

TEST_CASE("Dense: builds on the first call, contracts the last axis, exact values") {
  Ref<Layer> d = dense_layer(2, Activation::Relu);
  CHECK(!d->built());
  CHECK(!d->output_shape());
  CHECK(d->weights().empty());
  Tensor x = make<float>({1, 0, -1, 2, 1, 0}, Shape{2, 3});
  (*d)(x);
  CHECK(d->built());
  CHECK(*d->output_shape() == Shape{2, 2});
  set_weight(*d, "kernel", {1, 2, 3, 4, 5, 6});
  set_weight(*d, "bias", {0.5, -1});
  // x . k = [[-4, -4], [5, 8]]; + b = [[-3.5, -5], [5.5, 7]]; relu.
  check_close(as_doubles((*d)(x)), {0, 0, 5.5, 7});

  // Rank 3: every row of the leading axes goes through the same kernel.
  Tensor x3 = make<float>({1, 0, -1, 2, 1, 0, 2, 1, 0, 1, 0, -1}, Shape{2, 2, 3});
  Tensor y3 = (*d)(x3);
  CHECK(y3.shape() == Shape{2, 2, 2});
  check_close(as_doubles(y3), {0, 0, 5.5, 7, 5.5, 7, 0, 0});
  CHECK(*d->output_shape() == Shape{2, 2});  // the first call's
  CHECK(d->count_params() == 8);
  CHECK(weight(*d, "kernel").name() == d->name() + "/kernel:0");
  CHECK(weight(*d, "kernel").shape() == Shape{3, 2});
  CHECK(weight(*d, "bias").name() == d->name() + "/bias:0");
  CHECK(d->kind() == ObjectKind::Layer);
  CHECK(std::string(d->type_name()) == "Dense");

  Ref<Layer> nobias = dense_layer(3, Activation::Linear, false);
  (*nobias)(x);
  CHECK(nobias->count_params() == 9);
  CHECK(nobias->weights().size() == 1);
}

TEST_CASE("Dense: input errors name the layer") {
  Ref<Layer> d = dense_layer(2);
  CHECK_THROWS_CODE((*d)(make<float>({1, 2}, Shape{2})), Code::InvalidArgument, "input must have rank >= 2, got shape [2]");
  CHECK_THROWS_CODE((*d)(make<int32_t>({1, 2}, Shape{1, 2})), Code::InvalidArgument, "floating dtype, got int32");
  CHECK(!d->built());
  (*d)(make<float>({1, 2, 3}, Shape{1, 3}));
  CHECK_THROWS_CODE((*d)(make<float>({1, 2, 3, 4}, Shape{1, 4})), Code::InvalidArgument,
                    "built for inputs with last dimension 3, got shape [1,4]");
  CHECK_THROWS_CODE((*d)(make<double>({1, 2, 3}, Shape{1, 3})), Code::InvalidArgument,
                    "built for float32 inputs, got float64");
  CHECK_THROWS_CODE(dense_layer(0), Code::InvalidArgument, "units must be positive");
  CHECK_THROWS_CODE((*d)(Tensor()), Code::InvalidArgument, "input tensor is empty");
}

TEST_CASE("default names are unique per context, in Keras' snake case") {
  Ref<Context> fresh = test::fresh_context();
  DenseOptions o;
  o.units = 1;
  CHECK(dense(*fresh, o)->name() == "dense");
  CHECK(dense(*fresh, o)->name() == "dense_1");
  o.name = "head";
  CHECK(dense(*fresh, o)->name() == "head");
  CHECK(conv2d(*fresh, Conv2DOptions{1})->name() == "conv2d");
  CHECK(max_pool2d(*fresh, {})->name() == "max_pooling2d");
  CHECK(avg_pool2d(*fresh, {})->name() == "average_pooling2d");
  CHECK(batch_norm(*fresh, {})->name() == "batch_normalization");
  CHECK(layer_norm(*fresh, {})->name() == "layer_normalization");
  CHECK(flatten(*fresh)->name() == "flatten");
  CHECK(dropout(*fresh, 0.5)->name() == "dropout");
  CHECK(activation(*fresh, Activation::Relu)->name() == "activation");
  CHECK(embedding(*fresh, EmbeddingOptions{2, 2})->name() == "embedding");
  CHECK(Sequential::create(*fresh)->name() == "sequential");
  CHECK(dense(*fresh, DenseOptions{1})->describe() == "layer 'dense_2' (Dense)");
}

TEST_CASE("Conv2D: NHWC shapes, parameter count and exact values") {
  Conv2DOptions o;
  o.filters = 1;
  o.kernel_h = o.kernel_w = 2;
  o.kernel_initializer = Initializer{Initializer::Kind::Ones};
  o.bias_initializer = Initializer{Initializer::Kind::Constant, 1};
  Ref<Layer> valid = conv2d(c(), o);
  Tensor x = ramp(DType::Float32, Shape{1, 3, 3, 1});  // 1..9
  Tensor y = (*valid)(x);
  CHECK(y.shape() == Shape{1, 2, 2, 1});
  check_close(as_doubles(y), {13, 17, 25, 29});  // window sums + 1
  CHECK(valid->count_params() == 5);

  o.padding = "SAME";
  o.stride_h = o.stride_w = 2;
  Ref<Layer> same = conv2d(c(), o);
  // Out 2x2; the padding goes after: windows {1,2,4,5}, {3,6}, {7,8}, {9}.
  check_close(as_doubles((*same)(x)), {13, 10, 16, 10});

  Conv2DOptions big;
  big.filters = 4;
  Ref<Layer> conv = conv2d(c(), big);
  CHECK((*conv)(ramp(DType::Float32, Shape{2, 5, 6, 2})).shape() == Shape{2, 3, 4, 4});
  CHECK(conv->count_params() == 3 * 3 * 2 * 4 + 4);
  CHECK(weight(*conv, "kernel").shape() == Shape{3, 3, 2, 4});
  CHECK_THROWS_CODE((*conv)(ramp(DType::Float32, Shape{2, 5, 6, 3})), Code::InvalidArgument,
                    "built for inputs with channels 2, got shape [2,5,6,3]");
  CHECK_THROWS_CODE((*conv)(ramp(DType::Float32, Shape{5, 6, 2})), Code::InvalidArgument, "input must be 4-D");
  Conv2DOptions bad;
  bad.filters = 1;
  bad.padding = "FULL";
  CHECK_THROWS_CODE(conv2d(c(), bad), Code::InvalidArgument, "padding must be \"SAME\" or \"VALID\", got \"FULL\"");
}

TEST_CASE("MaxPool2D and AvgPool2D: default strides are the pool size") {
  Tensor x = ramp(DType::Float32, Shape{1, 4, 4, 1});  // 1..16
  Ref<Layer> mp = max_pool2d(c(), {});
  Ref<Layer> ap = avg_pool2d(c(), {});
  Tensor m = (*mp)(x);
  CHECK(m.shape() == Shape{1, 2, 2, 1});
  check_close(as_doubles(m), {6, 8, 14, 16});
  check_close(as_doubles((*ap)(x)), {3.5, 5.5, 11.5, 13.5});
  CHECK(mp->count_params() == 0);
  CHECK(std::string(mp->type_name()) == "MaxPooling2D");
  Pool2DOptions o;
  o.pool_h = o.pool_w = 3;
  o.stride_h = o.stride_w = 1;
  Ref<Layer> mp3 = max_pool2d(c(), o);
  check_close(as_doubles((*mp3)(x)), {11, 12, 15, 16});
  CHECK_THROWS_CODE((*mp)(ramp(DType::Float32, Shape{4, 4})), Code::InvalidArgument, "input must be 4-D");
}

TEST_CASE("Flatten, Activation") {
  Ref<Layer> f = flatten(c());
  Tensor x = ramp(DType::Float32, Shape{2, 3, 4});
  Tensor y = (*f)(x);
  CHECK(y.shape() == Shape{2, 12});
  CHECK(as_doubles(y) == as_doubles(x));
  CHECK((*f)(ramp(DType::Float32, Shape{5})).shape() == Shape{5, 1});
  CHECK_THROWS_CODE((*f)(make<float>({1}, Shape{})), Code::InvalidArgument, "rank >= 1");

  Ref<Layer> relu = activation(c(), parse_activation("relu"));
  check_close(as_doubles((*relu)(make<float>({-1, 0, 2}, Shape{3}))), {0, 0, 2});
  Ref<Layer> sm = activation(c(), Activation::Softmax);
  const double e = std::exp(1.0);
  check_close(as_doubles((*sm)(make<double>({0, 1}, Shape{1, 2}))), {1 / (1 + e), e / (1 + e)});
  CHECK(parse_activation("") == Activation::Linear);
  CHECK(std::string(activation_name(Activation::Gelu)) == "gelu");
  CHECK_THROWS_CODE(parse_activation("swishy"), Code::InvalidArgument, "unknown activation \"swishy\"");
}

TEST_CASE("Embedding: gathers rows for integer indices of any shape") {
  EmbeddingOptions o;
  o.input_dim = 4;
  o.output_dim = 2;
  Ref<Layer> emb = embedding(c(), o);
  Tensor idx = make<int32_t>({1, 3, 0, 0}, Shape{2, 2});
  CHECK((*emb)(idx).shape() == Shape{2, 2, 2});
  set_weight(*emb, "embeddings", {0, 1, 2, 3, 4, 5, 6, 7});
  check_close(as_doubles((*emb)(idx)), {2, 3, 6, 7, 0, 1, 0, 1});
  check_close(as_doubles((*emb)(make<int64_t>({2}, Shape{1}))), {4, 5});
  CHECK(emb->count_params() == 8);
  CHECK(weight(*emb, "embeddings").dtype() == DType::Float32);
  CHECK_THROWS_CODE((*emb)(make<float>({1}, Shape{1})), Code::InvalidArgument, "indices must be int32 or int64");
  CHECK_THROWS(( *emb)(make<int32_t>({4}, Shape{1})));
}

TEST_CASE("LayerNormalization: normalizes each example over the feature axis") {
  Ref<Layer> ln = layer_norm(c(), {});
  Tensor x = make<double>({1, 2, 3, 2, 4, 6}, Shape{2, 3});
  Tensor y = (*ln)(x);
  // Row 1: mean 2, variance 2/3; row 2: mean 4, variance 8/3.
  const double s1 = std::sqrt(2.0 / 3 + 1e-3), s2 = std::sqrt(8.0 / 3 + 1e-3);
  check_close(as_doubles(y), {-1 / s1, 0, 1 / s1, -2 / s2, 0, 2 / s2}, 1e-12);
  set_weight(*ln, "gamma", {1, 2, 3});
  set_weight(*ln, "beta", {0, 1, 0});
  check_close(as_doubles((*ln)(x)), {-1 / s1, 1, 3 / s1, -2 / s2, 1, 6 / s2}, 1e-12);
  CHECK(ln->count_params() == 6);
  CHECK_THROWS_CODE((*ln)(make<double>({1, 2}, Shape{1, 2})), Code::InvalidArgument,
                    "built for float64 inputs of rank 2 with 3 features on axis 1, got float64 shape [1,2]");

  // Axis 0 of a [3, 2] input: each column is normalized, gamma has 3 entries along axis 0.
  NormOptions o;
  o.axis = 0;
  o.center = false;
  Ref<Layer> ln0 = layer_norm(c(), o);
  Tensor y0 = (*ln0)(make<double>({1, 2, 2, 4, 3, 6}, Shape{3, 2}));
  check_close(as_doubles(y0), {-1 / s1, -2 / s2, 0, 0, 1 / s1, 2 / s2}, 1e-12);
  CHECK(ln0->weights().size() == 1);
  CHECK(test::weight(*ln0, "gamma").shape() == Shape{3});
  CHECK_THROWS_CODE((*layer_norm(c(), {}))(make<float>({1}, Shape{})), Code::InvalidArgument, "rank >= 1");
}

TEST_CASE("BatchNormalization: batch statistics and moving averages when training, moving statistics otherwise") {
  Ref<Layer> bn = batch_norm(c(), {});
  Tensor x = make<double>({1, 2, 3, 6}, Shape{2, 2});
  // Inference before any training: moving mean 0, variance 1.
  const double e = 1e-3;
  check_close(as_doubles((*bn)(x)), {1 / std::sqrt(1 + e), 2 / std::sqrt(1 + e), 3 / std::sqrt(1 + e),
                                     6 / std::sqrt(1 + e)}, 1e-12);
  CHECK(bn->count_params() == 8);
  CHECK(bn->trainable_weights().size() == 2);
  CHECK(bn->non_trainable_weights().size() == 2);
  CHECK(!test::weight(*bn, "moving_mean").trainable());

  // Batch mean [2, 4], biased variance [1, 4].
  Tensor y = (*bn)(x, true);
  check_close(as_doubles(y), {-1 / std::sqrt(1 + e), -2 / std::sqrt(4 + e), 1 / std::sqrt(1 + e),
                              2 / std::sqrt(4 + e)}, 1e-12);
  check_close(as_doubles(test::weight(*bn, "moving_mean").read()), {0.02, 0.04}, 1e-12);
  check_close(as_doubles(test::weight(*bn, "moving_variance").read()), {1.0, 1.03}, 1e-12);
  (*bn)(x, true);
  check_close(as_doubles(test::weight(*bn, "moving_mean").read()), {0.02 * 0.99 + 0.02, 0.04 * 0.99 + 0.04}, 1e-12);

  // Inference uses the moving statistics.
  set_weight(*bn, "moving_mean", {1, 2});
  set_weight(*bn, "moving_variance", {4, 9});
  set_weight(*bn, "gamma", {2, 1});
  set_weight(*bn, "beta", {0, 1});
  check_close(as_doubles((*bn)(x)), {0, 1, 4 / std::sqrt(4 + e), 1 + 4 / std::sqrt(9 + e)}, 1e-12);

  // NHWC features on the last axis: statistics over batch, height and width.
  Ref<Layer> bn4 = batch_norm(c(), {});
  Tensor x4 = ramp(DType::Float32, Shape{2, 2, 2, 3});
  CHECK((*bn4)(x4, true).shape() == Shape{2, 2, 2, 3});
  // Channel 0 holds 1, 4, ..., 22: mean 11.5.
  check_close(as_doubles(test::weight(*bn4, "moving_mean").read()), {0.115, 0.125, 0.135}, 1e-6);
  CHECK_THROWS_CODE((*bn4)(ramp(DType::Float32, Shape{2, 2, 2, 4})), Code::InvalidArgument, "with 3 features");
  NormOptions bad;
  bad.momentum = 1.5;
  CHECK_THROWS_CODE(batch_norm(c(), bad), Code::InvalidArgument, "momentum must be in [0, 1]");
}

TEST_CASE("Dropout: identity in inference, drops and rescales when training") {
  Ref<Layer> d = dropout(c(), 0.25, 11);
  std::vector<double> ones(4000, 1.0);
  Tensor x = make_as(DType::Float32, ones, Shape{40, 100});
  CHECK(as_doubles((*d)(x)) == ones);
  std::vector<double> y = as_doubles((*d)(x, true));
  int dropped = 0;
  for (double v : y) {
    if (v == 0) {
      ++dropped;
    } else {
      CHECK(v == doctest::Approx(1 / 0.75));
    }
  }
  CHECK(dropped > 4000 * 0.2);
  CHECK(dropped < 4000 * 0.3);
  // Seeded: a second layer with the same seed replays the masks; a second call draws a new one.
  Ref<Layer> d2 = dropout(c(), 0.25, 11);
  CHECK(as_doubles((*d2)(x, true)) == y);
  CHECK(as_doubles((*d2)(x, true)) != y);
  // Unseeded layers draw from the context stream.
  Ref<Layer> u = dropout(c(), 0.5);
  CHECK(as_doubles((*u)(x, true)) != as_doubles((*u)(x, true)));
  CHECK(as_doubles((*dropout(c(), 0))(x, true)) == ones);
  CHECK_THROWS_CODE(dropout(c(), 1.0), Code::InvalidArgument, "rate must be in [0, 1), got 1");
}

TEST_CASE("Sequential: layer-N edges, chained shapes, weights across layers") {
  Ref<Sequential> m = Sequential::create(c());
  CHECK_THROWS_CODE((*m)(make<float>({1}, Shape{1, 1})), Code::InvalidArgument, "has no layers");
  Conv2DOptions co;
  co.filters = 2;
  m->add(conv2d(c(), co));
  m->add(max_pool2d(c(), {}));
  m->add(flatten(c()));
  m->add(dense_layer(3));
  CHECK(m->num_children() == 4);
  CHECK(m->children()[3].name == "layer-3");
  CHECK(m->weights().empty());
  Tensor y = (*m)(ramp(DType::Float32, Shape{2, 6, 6, 1}));
  CHECK(y.shape() == Shape{2, 3});
  // conv 3*3*1*2 + 2 = 20; pooled 2x2x2 = 8 features; dense 8*3 + 3 = 27.
  CHECK(m->count_params() == 47);
  std::vector<Ref<Variable>> w = m->weights();
  REQUIRE(w.size() == 4);
  CHECK(w[0]->shape() == Shape{3, 3, 1, 2});
  CHECK(w[3]->shape() == Shape{3});
  CHECK(m->layers()[2]->output_shape() == Shape{2, 8});
  CHECK_THROWS_CODE(m->add(dense_layer(1)), Code::InvalidArgument, "already built");

  Ref<Sequential> m2 = Sequential::create(c());
  Ref<Layer> shared = dense_layer(2);
  m2->add(shared);
  CHECK_THROWS_CODE(m2->add(shared), Code::InvalidArgument, "is already in it");
  CHECK_THROWS_CODE(m2->add(m2), Code::InvalidArgument, "cannot contain itself");
  CHECK_THROWS_CODE(m2->add(nullptr), Code::InvalidArgument, "null");
}

TEST_CASE("summarize: Keras-like table with None batch, parameter counts and totals") {
  Ref<Context> fresh = test::fresh_context();
  Context& cx = *fresh;
  Ref<Sequential> m = Sequential::create(cx);
  DenseOptions o;
  o.units = 64;
  m->add(dense(cx, o));
  NormOptions bn;
  bn.name = "bn";
  m->add(batch_norm(cx, bn));
  o.units = 10;
  m->add(dense(cx, o));

  const std::string unbuilt =
      "Model: \"sequential\"\n"
      "_________________________________________________________________\n"
      " Layer (type)                Output Shape              Param #\n"
      "=================================================================\n"
      " dense (Dense)               ?                         0\n"
      " bn (BatchNormalization)     ?                         0\n"
      " dense_1 (Dense)             ?                         0\n"
      "=================================================================\n"
      "Total params: 0\n"
      "Trainable params: 0\n"
      "Non-trainable params: 0\n"
      "_________________________________________________________________\n";
  CHECK(summarize(*m).table() == unbuilt);

  (*m)(Tensor::allocate(cx.cpu(), DType::Float32, Shape{5, 64}));
  Summary s = summarize(*m);
  CHECK(s.total == 5066);
  CHECK(s.trainable == 4938);
  CHECK(s.non_trainable == 128);
  const std::string built =
      "Model: \"sequential\"\n"
      "_________________________________________________________________\n"
      " Layer (type)                Output Shape              Param #\n"
      "=================================================================\n"
      " dense (Dense)               (None, 64)                4160\n"
      " bn (BatchNormalization)     (None, 64)                256\n"
      " dense_1 (Dense)             (None, 10)                650\n"
      "=================================================================\n"
      "Total params: 5,066\n"
      "Trainable params: 4,938\n"
      "Non-trainable params: 128\n"
      "_________________________________________________________________\n";
  CHECK(s.table() == built);

  // A single layer is its own one-row model; a name wider than its column keeps one space.
  DenseOptions wide;
  wide.units = 2;
  wide.name = "a_rather_long_dense_layer_name";
  Ref<Layer> d = dense(cx, wide);
  (*d)(Tensor::allocate(cx.cpu(), DType::Float32, Shape{1, 2, 3}));
  const std::string single =
      "Model: \"a_rather_long_dense_layer_name\"\n"
      "_________________________________________________________________\n"
      " Layer (type)                Output Shape              Param #\n"
      "=================================================================\n"
      " a_rather_long_dense_layer_name (Dense) (None, 2, 2)   8\n"
      "=================================================================\n"
      "Total params: 8\n"
      "Trainable params: 8\n"
      "Non-trainable params: 0\n"
      "_________________________________________________________________\n";
  CHECK(summarize(*d).table() == single);
}

}  // namespace
}  // namespace cairn::nn
