// LayerNormalization and BatchNormalization over one feature axis.
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/layer_util.h"

namespace cairn::nn {
namespace {

// Shared by both: options, the feature axis and size fixed at build, gamma/beta and the
// broadcasting of per-feature vectors against the input.
class NormBase : public Layer {
 protected:
  NormBase(Context& ctx, const char* type, const NormOptions& options) : Layer(ctx, type, options.name), options_(options) {
    if (!(options.epsilon > 0)) raise(Code::InvalidArgument, "{}: epsilon must be positive, got {}", describe(), options.epsilon);
  }

  void check_input(const Shape& s, DType dtype) const override {
    require_floating(*this, dtype);
    if (s.rank() < 1) raise(Code::InvalidArgument, "{}: input must have rank >= 1, got a scalar", describe());
    if (options_.axis < -s.rank() || options_.axis >= s.rank())
      raise(Code::InvalidArgument, "{}: axis {} is out of range for input shape {}", describe(), options_.axis, s.str());
    if (rank_ == 0) return;  // not built yet
    const int axis = normalize_axis(options_.axis, s.rank(), type_name());
    if (s.rank() != rank_ || s[axis] != features_ || dtype != dtype_)
      raise(Code::InvalidArgument, "{}: built for {} inputs of rank {} with {} features on axis {}, got {} shape {}",
            describe(), dtype_name(dtype_), rank_, features_, axis_, dtype_name(dtype), s.str());
  }

  // Records the axis and adds gamma and beta (when scaling and centering).
  void build_affine(const Shape& s, DType dtype) {
    rank_ = s.rank();
    axis_ = normalize_axis(options_.axis, rank_, type_name());
    features_ = s[axis_];
    dtype_ = dtype;
    if (options_.scale) gamma_ = &add_weight("gamma", Shape{features_}, {Initializer::Kind::Ones}, dtype);
    if (options_.center) beta_ = &add_weight("beta", Shape{features_}, {Initializer::Kind::Zeros}, dtype);
  }

  // A [features] vector shaped to broadcast along the feature axis of the input.
  Tensor along_axis(const Tensor& v) const {
    if (axis_ == rank_ - 1) return v;
    Shape s;
    for (int i = 0; i < rank_; ++i) s.push_back(i == axis_ ? features_ : 1);
    return op::reshape(context(), v, s);
  }

  // (x - mean) / sqrt(variance + epsilon) * gamma + beta
  Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& variance) const {
    Context& ctx = context();
    Tensor inv = op::rsqrt(ctx, op::add(ctx, variance, op::scalar_like(ctx, variance, options_.epsilon)));
    Tensor y = op::mul(ctx, op::sub(ctx, x, mean), inv);
    if (gamma_) y = op::mul(ctx, y, along_axis(gamma_->read()));
    if (beta_) y = op::add(ctx, y, along_axis(beta_->read()));
    return y;
  }

  // The biased mean and variance of x over `axes`, kept as size-1 dimensions.
  std::pair<Tensor, Tensor> moments(const Tensor& x, const op::Axes& axes) const {
    Context& ctx = context();
    Tensor mean = op::mean(ctx, x, axes, true);
    Tensor variance = op::mean(ctx, op::square(ctx, op::sub(ctx, x, mean)), axes, true);
    return {mean, variance};
  }

  void get_config(nlohmann::json& c) const override {
    c["axis"] = options_.axis;
    c["epsilon"] = options_.epsilon;
    if (std::string_view(type_name()) == "BatchNormalization") c["momentum"] = options_.momentum;
    c["center"] = options_.center;
    c["scale"] = options_.scale;
  }

  NormOptions options_;
  int rank_ = 0, axis_ = 0;
  int64_t features_ = 0;
  DType dtype_ = DType::Float32;
  Variable* gamma_ = nullptr;
  Variable* beta_ = nullptr;
};

// Normalizes each example over the feature axis (Keras' LayerNormalization with one axis).
class LayerNorm final : public NormBase {
 public:
  LayerNorm(Context& ctx, const NormOptions& options) : NormBase(ctx, "LayerNormalization", options) {}

 protected:
  void build(const Shape& s, DType dtype) override { build_affine(s, dtype); }

  Tensor forward(const Tensor& x, bool) override {
    auto [mean, variance] = moments(x, {axis_});
    return normalize(x, mean, variance);
  }
};

// Normalizes each feature over every other axis: with the batch's statistics when training (and
// then moves the moving statistics toward them), with the moving statistics otherwise.
class BatchNorm final : public NormBase {
 public:
  BatchNorm(Context& ctx, const NormOptions& options) : NormBase(ctx, "BatchNormalization", options) {
    if (!(options.momentum >= 0 && options.momentum <= 1))
      raise(Code::InvalidArgument, "{}: momentum must be in [0, 1], got {}", describe(), options.momentum);
  }

 protected:
  void build(const Shape& s, DType dtype) override {
    build_affine(s, dtype);
    moving_mean_ = &add_weight("moving_mean", Shape{features_}, {Initializer::Kind::Zeros}, dtype, false);
    moving_variance_ = &add_weight("moving_variance", Shape{features_}, {Initializer::Kind::Ones}, dtype, false);
  }

  Tensor forward(const Tensor& x, bool training) override {
    if (!training) return normalize(x, along_axis(moving_mean_->read()), along_axis(moving_variance_->read()));
    op::Axes axes;
    for (int i = 0; i < rank_; ++i)
      if (i != axis_) axes.push_back(i);
    auto [mean, variance] = moments(x, axes);
    update_moving(*moving_mean_, mean);
    update_moving(*moving_variance_, variance);
    return normalize(x, mean, variance);
  }

 private:
  // moving = moving * momentum + batch * (1 - momentum), outside any gradient.
  void update_moving(Variable& moving, const Tensor& batch) {
    Context& ctx = context();
    Tensor b = op::reshape(ctx, op::stop_gradient(ctx, batch), Shape{features_});
    Tensor m = moving.read();
    Tensor next = op::add(ctx, op::mul(ctx, m, op::scalar_like(ctx, m, options_.momentum)),
                          op::mul(ctx, b, op::scalar_like(ctx, b, 1 - options_.momentum)));
    moving.assign(next, "BatchNormalization");
  }

  Variable* moving_mean_ = nullptr;
  Variable* moving_variance_ = nullptr;
};

}  // namespace

Ref<Layer> layer_norm(Context& ctx, const NormOptions& options) { return make_ref<LayerNorm>(ctx, options); }
Ref<Layer> batch_norm(Context& ctx, const NormOptions& options) { return make_ref<BatchNorm>(ctx, options); }

}  // namespace cairn::nn
