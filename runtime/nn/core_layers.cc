// Dense, Embedding, Flatten, Activation and Dropout.
#include <atomic>

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/layer_util.h"

namespace cairn::nn {
namespace {

// y = activation(x . kernel + bias), contracting x's last axis (any rank >= 2).
class Dense final : public Layer {
 public:
  Dense(Context& ctx, const DenseOptions& options) : Layer(ctx, "Dense", options.name), options_(options) {
    if (options.units <= 0) raise(Code::InvalidArgument, "{}: units must be positive, got {}", describe(), options.units);
  }

 protected:
  void check_input(const Shape& s, DType dtype) const override {
    require_floating(*this, dtype);
    if (s.rank() < 2) raise(Code::InvalidArgument, "{}: input must have rank >= 2, got shape {}", describe(), s.str());
    const int64_t in = s[s.rank() - 1];
    if (in <= 0) raise(Code::InvalidArgument, "{}: input's last dimension must be positive, got shape {}", describe(), s.str());
    if (kernel_) require_built_for(*this, *kernel_, dtype, in, s, "last dimension");
  }

  void build(const Shape& s, DType dtype) override {
    const int64_t in = s[s.rank() - 1];
    kernel_ = &add_weight("kernel", Shape{in, options_.units}, options_.kernel_initializer, dtype);
    if (options_.use_bias) bias_ = &add_weight("bias", Shape{options_.units}, options_.bias_initializer, dtype);
  }

  Tensor forward(const Tensor& x, bool) override {
    Context& ctx = context();
    const Tensor kernel = kernel_->read();
    Tensor y;
    if (x.rank() == 2) {
      y = op::matmul(ctx, x, kernel);
    } else {
      // [..., in] -> [n, in] . [in, units] -> [..., units]
      const int64_t in = x.shape()[x.rank() - 1];
      y = op::matmul(ctx, op::reshape(ctx, x, Shape{x.num_elements() / in, in}), kernel);
      Shape out = x.shape();
      out.set_dim(out.rank() - 1, options_.units);
      y = op::reshape(ctx, y, out);
    }
    if (bias_) y = op::add(ctx, y, bias_->read());
    return activate(ctx, options_.activation, y);
  }

  void get_config(nlohmann::json& c) const override {
    c["units"] = options_.units;
    c["activation"] = activation_name(options_.activation);
    c["use_bias"] = options_.use_bias;
    c["kernel_initializer"] = initializer_config(options_.kernel_initializer);
    c["bias_initializer"] = initializer_config(options_.bias_initializer);
  }

 private:
  DenseOptions options_;
  Variable* kernel_ = nullptr;  // owned through the weight list and the edge
  Variable* bias_ = nullptr;
};

// Rows of an [input_dim, output_dim] table picked by integer indices of any shape.
class Embedding final : public Layer {
 public:
  Embedding(Context& ctx, const EmbeddingOptions& options) : Layer(ctx, "Embedding", options.name), options_(options) {
    if (options.input_dim <= 0 || options.output_dim <= 0)
      raise(Code::InvalidArgument, "{}: input_dim and output_dim must be positive, got {} and {}", describe(),
            options.input_dim, options.output_dim);
  }

 protected:
  void check_input(const Shape&, DType dtype) const override {
    if (dtype != DType::Int32 && dtype != DType::Int64)
      raise(Code::InvalidArgument, "{}: indices must be int32 or int64, got {}", describe(), dtype_name(dtype));
  }

  void build(const Shape&, DType) override {
    embeddings_ = &add_weight("embeddings", Shape{options_.input_dim, options_.output_dim},
                              options_.embeddings_initializer, DType::Float32);
  }

  Tensor forward(const Tensor& x, bool) override { return op::gather(context(), embeddings_->read(), x, 0); }

  void get_config(nlohmann::json& c) const override {
    c["input_dim"] = options_.input_dim;
    c["output_dim"] = options_.output_dim;
    c["embeddings_initializer"] = initializer_config(options_.embeddings_initializer);
  }

 private:
  EmbeddingOptions options_;
  Variable* embeddings_ = nullptr;
};

// [batch, d1, d2, ...] -> [batch, d1 * d2 * ...]; [batch] -> [batch, 1].
class Flatten final : public Layer {
 public:
  Flatten(Context& ctx, std::string_view name) : Layer(ctx, "Flatten", name) {}

 protected:
  void check_input(const Shape& s, DType) const override {
    if (s.rank() < 1) raise(Code::InvalidArgument, "{}: input must have rank >= 1, got a scalar", describe());
  }

  Tensor forward(const Tensor& x, bool) override {
    int64_t rest = 1;
    for (int i = 1; i < x.rank(); ++i) rest *= x.shape()[i];
    return op::reshape(context(), x, Shape{x.shape()[0], rest});
  }

  void get_config(nlohmann::json&) const override {}
};

class ActivationLayer final : public Layer {
 public:
  ActivationLayer(Context& ctx, Activation a, std::string_view name) : Layer(ctx, "Activation", name), a_(a) {}

 protected:
  Tensor forward(const Tensor& x, bool) override { return activate(context(), a_, x); }
  void get_config(nlohmann::json& c) const override { c["activation"] = activation_name(a_); }

 private:
  Activation a_;
};

// Inverted dropout: keeps each element with probability 1 - rate and scales it by 1 / (1 - rate).
class Dropout final : public Layer {
 public:
  Dropout(Context& ctx, double rate, std::optional<int64_t> seed, std::string_view name)
      : Layer(ctx, "Dropout", name), rate_(rate), seed_(seed) {
    if (!(rate >= 0 && rate < 1)) raise(Code::InvalidArgument, "{}: rate must be in [0, 1), got {}", describe(), rate);
  }

 protected:
  void check_input(const Shape&, DType dtype) const override { require_floating(*this, dtype); }

  Tensor forward(const Tensor& x, bool training) override {
    if (!training || rate_ == 0) return x;
    Context& ctx = context();
    const std::vector<int64_t> dims = x.shape().to_vector();
    // A seeded dropout is reproducible yet draws a new mask on every call: seed2 counts the calls.
    const int64_t seed = seed_.value_or(0);
    const int64_t seed2 = seed_ ? calls_.fetch_add(1) + 1 : 0;
    Tensor u = run_op(ctx, "RandomUniform", std::vector<Tensor>{},
                      {attr_ints("shape", dims), attr_dtype("dtype", x.dtype()), attr_int("seed", seed),
                       attr_int("seed2", seed2)})[0];
    u = tensor_on_device(u, *x.device());
    Tensor keep = run_op(ctx, "GreaterEqual", {u, op::scalar_like(ctx, u, rate_)})[0];
    Tensor scale = op::mul(ctx, op::cast(ctx, keep, x.dtype()), op::scalar_like(ctx, x, 1.0 / (1.0 - rate_)));
    return op::mul(ctx, x, scale);
  }

  void get_config(nlohmann::json& c) const override {
    c["rate"] = rate_;
    c["seed"] = seed_ ? nlohmann::json(*seed_) : nlohmann::json(nullptr);
  }

 private:
  double rate_;
  std::optional<int64_t> seed_;
  std::atomic<int64_t> calls_{0};
};

}  // namespace

void require_floating(const Layer& layer, DType dtype) {
  if (!dtype_is_floating(dtype))
    raise(Code::InvalidArgument, "{}: input must have a floating dtype, got {}", layer.describe(), dtype_name(dtype));
}

void require_built_for(const Layer& layer, const Variable& weight, DType dtype, int64_t dim, const Shape& input,
                       const char* what) {
  if (dtype != weight.dtype())
    raise(Code::InvalidArgument, "{}: built for {} inputs, got {} (shape {})", layer.describe(),
          dtype_name(weight.dtype()), dtype_name(dtype), input.str());
  const int64_t want = weight.shape()[weight.shape().rank() == 1 ? 0 : weight.shape().rank() - 2];
  if (dim != want)
    raise(Code::InvalidArgument, "{}: built for inputs with {} {}, got shape {}", layer.describe(), what, want,
          input.str());
}

Ref<Layer> dense(Context& ctx, const DenseOptions& options) { return make_ref<Dense>(ctx, options); }
Ref<Layer> embedding(Context& ctx, const EmbeddingOptions& options) { return make_ref<Embedding>(ctx, options); }
Ref<Layer> flatten(Context& ctx, std::string_view name) { return make_ref<Flatten>(ctx, name); }
Ref<Layer> activation(Context& ctx, Activation a, std::string_view name) {
  return make_ref<ActivationLayer>(ctx, a, name);
}
Ref<Layer> dropout(Context& ctx, double rate, std::optional<int64_t> seed, std::string_view name) {
  return make_ref<Dropout>(ctx, rate, seed, name);
}

}  // namespace cairn::nn
