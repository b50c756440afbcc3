// Keras-style layers (tf.keras.layers). A layer is a module (ObjectKind::Layer) whose variables are
// created on its first call, from the input's shape, through add_weight; a checkpoint restored
// before that call is applied when the variables appear (the deferred restore of the object
// graph). Layers compute with registered ops, so the tape differentiates them and they run on the
// input's device.
//
// Weight edges follow Keras' names: Dense "kernel"/"bias", Conv2D "kernel"/"bias", Embedding
// "embeddings", LayerNorm and BatchNorm "gamma"/"beta", BatchNorm "moving_mean"/"moving_variance"
// (non-trainable). Sequential's layers are its edges "layer-0", "layer-1", ...
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"

namespace cairn::nn {

enum class Activation { Linear, Relu, Relu6, Sigmoid, Tanh, Softmax, Softplus, Elu, Selu, Gelu };
// "linear" (also ""), "relu", ... as in Keras; InvalidArgument naming the unknown value.
Activation parse_activation(std::string_view name);
const char* activation_name(Activation a);
Tensor activate(Context& ctx, Activation a, const Tensor& x);

// Weight initializers (tf.keras.initializers). Random ones draw from the context's seeded stream
// (deterministic for a given context seed and creation order) unless `seed` is set.
struct Initializer {
  enum class Kind { Zeros, Ones, Constant, GlorotUniform, GlorotNormal, HeNormal, HeUniform, RandomNormal, RandomUniform };
  Kind kind = Kind::GlorotUniform;
  double value = 0;                 // Constant
  double mean = 0, stddev = 0.05;   // RandomNormal
  double minval = -0.05, maxval = 0.05;  // RandomUniform
  std::optional<int64_t> seed;
};
Initializer parse_initializer(std::string_view name);  // "glorot_uniform", "he_normal", "zeros", ...
const char* initializer_name(Initializer::Kind kind);  // the inverse of parse_initializer
// A tensor of `shape` and `dtype` on the CPU, per the initializer. Fans follow Keras: for a kernel
// of shape [..., in, out], fan_in = in * receptive field, fan_out = out * receptive field.
Tensor initialize(Context& ctx, const Initializer& init, const Shape& shape, DType dtype);

class Layer : public Module {
 public:
  // Builds on the first call (from x's shape; later calls must be compatible), then runs forward.
  // `training` switches Dropout and BatchNorm's batch statistics.
  Tensor operator()(const Tensor& x, bool training = false);
  bool built() const;
  // The output shape of the first call (the batch dimension is whatever it was); empty before.
  std::optional<Shape> output_shape() const;
  const char* type_name() const { return type_; }  // "Dense", "Conv2D", ...

  // Own weights and those of nested layers, in creation order, without duplicates.
  std::vector<Ref<Variable>> weights() const;
  std::vector<Ref<Variable>> trainable_weights() const;
  std::vector<Ref<Variable>> non_trainable_weights() const;
  int64_t count_params() const;

  std::string describe() const override;

  // Keras' get_config: {"class_name": "Dense", "config": {"name": ..., the constructor's options}},
  // enough for layer_from_config to make the same layer again, without its weights. Once built, also
  // "build_config": {"input_shape": [null, ...], "dtype": "float32"} (the first call's input).
  nlohmann::json config() const;
  // The first call's input shape and dtype; nullopt before.
  std::optional<std::pair<Shape, DType>> build_input() const;

 protected:
  // The constructor's options, into `config` (config() adds the name).
  virtual void get_config(nlohmann::json& config) const = 0;
  // `name` empty gives a unique default from the type ("dense", "dense_1", ...).
  Layer(Context& ctx, const char* type, std::string_view name);
  // Throws InvalidArgument (naming the layer) unless x fits: the right rank and dtype, and once
  // built, dimensions compatible with the weights. Called on every call, before build.
  virtual void check_input(const Shape& /*input_shape*/, DType /*dtype*/) const {}
  virtual void build(const Shape& /*input_shape*/, DType /*dtype*/) {}
  virtual Tensor forward(const Tensor& x, bool training) = 0;
  // Creates the variable "<scope>/<name>:0" from the initializer and sets it as edge `name`.
  Variable& add_weight(const std::string& name, const Shape& shape, const Initializer& init, DType dtype,
                       bool trainable = true);
  // Layers nested in this one, for weights() (Sequential's layers).
  virtual std::vector<Ref<Layer>> sublayers() const { return {}; }

 private:
  // Checks x and builds the layer on the first call, under build_mu_.
  void ensure_built(const Tensor& x);

  const char* type_;
  mutable std::mutex build_mu_;
  bool built_ = false;
  Device* build_device_ = nullptr;  // the first input's device: where add_weight puts the weights
  std::optional<std::pair<Shape, DType>> build_input_;
  std::optional<Shape> output_shape_;
  std::vector<Ref<Variable>> own_weights_;
};

struct DenseOptions {
  int64_t units = 0;
  Activation activation = Activation::Linear;
  bool use_bias = true;
  Initializer kernel_initializer{Initializer::Kind::GlorotUniform};
  Initializer bias_initializer{Initializer::Kind::Zeros};
  std::string name;
};
Ref<Layer> dense(Context& ctx, const DenseOptions& options);

struct Conv2DOptions {
  int64_t filters = 0;
  int64_t kernel_h = 3, kernel_w = 3;
  int64_t stride_h = 1, stride_w = 1;
  std::string padding = "VALID";  // or "SAME"
  Activation activation = Activation::Linear;
  bool use_bias = true;
  Initializer kernel_initializer{Initializer::Kind::GlorotUniform};
  Initializer bias_initializer{Initializer::Kind::Zeros};
  std::string name;
};
Ref<Layer> conv2d(Context& ctx, const Conv2DOptions& options);  // NHWC input

struct Pool2DOptions {
  int64_t pool_h = 2, pool_w = 2;
  int64_t stride_h = 0, stride_w = 0;  // 0: the pool size
  std::string padding = "VALID";
  std::string name;
};
Ref<Layer> max_pool2d(Context& ctx, const Pool2DOptions& options);
Ref<Layer> avg_pool2d(Context& ctx, const Pool2DOptions& options);

Ref<Layer> flatten(Context& ctx, std::string_view name = {});

struct EmbeddingOptions {
  int64_t input_dim = 0;   // vocabulary size
  int64_t output_dim = 0;
  Initializer embeddings_initializer{Initializer::Kind::RandomUniform};
  std::string name;
};
Ref<Layer> embedding(Context& ctx, const EmbeddingOptions& options);  // int32/int64 indices

struct NormOptions {
  int64_t axis = -1;
  double epsilon = 1e-3;
  double momentum = 0.99;  // BatchNorm's moving statistics
  bool center = true, scale = true;
  std::string name;
};
Ref<Layer> layer_norm(Context& ctx, const NormOptions& options);
Ref<Layer> batch_norm(Context& ctx, const NormOptions& options);

// Drops with probability `rate` and scales the rest by 1/(1-rate) when training; identity otherwise.
Ref<Layer> dropout(Context& ctx, double rate, std::optional<int64_t> seed = std::nullopt, std::string_view name = {});
Ref<Layer> activation(Context& ctx, Activation a, std::string_view name = {});

class Sequential : public Layer {
 public:
  static Ref<Sequential> create(Context& ctx, std::string_view name = {});
  Sequential(Context& ctx, std::string_view name);
  // Appends a layer as edge "layer-N". InvalidArgument for a null layer, the sequential itself, a
  // layer already in it, or a sequential already built (its recorded output shape would be stale).
  void add(Ref<Layer> layer);
  std::vector<Ref<Layer>> layers() const;

 protected:
  void check_input(const Shape& input_shape, DType dtype) const override;  // at least one layer
  Tensor forward(const Tensor& x, bool training) override;
  std::vector<Ref<Layer>> sublayers() const override { return layers(); }
  void get_config(nlohmann::json& config) const override;

 private:
  mutable std::mutex layers_mu_;
  std::vector<Ref<Layer>> layers_;
};

// Keras' model.summary(): one row per layer (the layers of a Sequential, or the layer itself) with
// its output shape (batch dimension shown as None) and parameter count, then the totals.
struct SummaryRow {
  std::string name;
  std::string type;
  std::string output_shape;  // "(None, 64)"; "?" when not built
  int64_t params = 0;
};
struct Summary {
  std::string name;
  std::vector<SummaryRow> rows;
  int64_t total = 0, trainable = 0, non_trainable = 0;
  std::string table() const;  // the printable table
};
Summary summarize(const Layer& layer);

// A new layer from a config of Layer::config() (a Sequential with its layers, recursively). Errors:
// InvalidArgument naming the class for an unknown class or a missing or bad field.
Ref<Layer> layer_from_config(Context& ctx, const nlohmann::json& config);

}  // namespace cairn::nn
