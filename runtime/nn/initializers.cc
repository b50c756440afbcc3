// Weight initializers with Keras' fan rules, and the activation functions layers apply.
#include <cmath>
#include <string>

#include "runtime/core/error.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"

namespace cairn::nn {
namespace {

// Keras' compute_fans: [in, out] for a dense kernel; [..., in, out] times the receptive field for
// a convolution kernel; a vector or scalar has fan_in = fan_out = its length (or 1).
struct Fans {
  double in = 1, out = 1;
};
Fans compute_fans(const Shape& shape) {
  const int r = shape.rank();
  if (r == 0) return {};
  if (r == 1) return {static_cast<double>(shape[0]), static_cast<double>(shape[0])};
  double receptive = 1;
  for (int i = 0; i < r - 2; ++i) receptive *= static_cast<double>(shape[i]);
  return {static_cast<double>(shape[r - 2]) * receptive, static_cast<double>(shape[r - 1]) * receptive};
}

// TruncatedNormal draws a standard normal cut at two standard deviations, whose own standard
// deviation is this; Keras divides by it so the truncated draw has the requested spread.
constexpr double kTruncatedStddev = 0.87962566103423978;

std::vector<NamedAttr> random_attrs(const std::vector<int64_t>& dims, DType dtype, const Initializer& init) {
  // An explicit seed (even 0) must give a fixed key: seed2 = 1 keeps the pair off (0, 0), which
  // the random ops read as "draw a fresh key from the context".
  const int64_t seed = init.seed.value_or(0);
  const int64_t seed2 = init.seed ? 1 : 0;
  return {attr_ints("shape", dims), attr_dtype("dtype", dtype), attr_int("seed", seed), attr_int("seed2", seed2)};
}

// low + (high - low) * U[0, 1)
Tensor uniform(Context& ctx, const Initializer& init, const Shape& shape, DType dtype, double low, double high) {
  const std::vector<int64_t> dims = shape.to_vector();
  Tensor u = run_op(ctx, "RandomUniform", std::vector<Tensor>{}, random_attrs(dims, dtype, init))[0];
  u = tensor_on_device(u, ctx.cpu());
  return op::add(ctx, op::mul(ctx, u, op::scalar_like(ctx, u, high - low)), op::scalar_like(ctx, u, low));
}

// mean + stddev * N(0, 1), from RandomStandardNormal or (truncated) TruncatedNormal.
Tensor normal(Context& ctx, const Initializer& init, const Shape& shape, DType dtype, double mean, double stddev,
              bool truncated) {
  const std::vector<int64_t> dims = shape.to_vector();
  const char* name = truncated ? "TruncatedNormal" : "RandomStandardNormal";
  Tensor n = run_op(ctx, name, std::vector<Tensor>{}, random_attrs(dims, dtype, init))[0];
  n = tensor_on_device(n, ctx.cpu());
  return op::add(ctx, op::mul(ctx, n, op::scalar_like(ctx, n, stddev)), op::scalar_like(ctx, n, mean));
}

}  // namespace

Initializer parse_initializer(std::string_view name) {
  using K = Initializer::Kind;
  static const std::pair<const char*, K> kNames[] = {
      {"zeros", K::Zeros},          {"ones", K::Ones},
      {"constant", K::Constant},    {"glorot_uniform", K::GlorotUniform},
      {"glorot_normal", K::GlorotNormal}, {"he_normal", K::HeNormal},
      {"he_uniform", K::HeUniform}, {"random_normal", K::RandomNormal},
      {"random_uniform", K::RandomUniform},
  };
  std::string known;
  for (const auto& [n, kind] : kNames) {
    if (name == n) {
      Initializer init;
      init.kind = kind;
      return init;
    }
    known += known.empty() ? n : std::string(", ") + n;
  }
  raise(Code::InvalidArgument, "parse_initializer: unknown initializer \"{}\" (known: {})", name, known);
}

Tensor initialize(Context& ctx, const Initializer& init, const Shape& shape, DType dtype) {
  if (!dtype_is_floating(dtype))
    raise(Code::InvalidArgument, "initialize: weights must have a floating dtype, got {}", dtype_name(dtype));
  const Fans fans = compute_fans(shape);
  using K = Initializer::Kind;
  switch (init.kind) {
    case K::Zeros: return op::filled(ctx, ctx.cpu(), dtype, shape, 0);
    case K::Ones: return op::filled(ctx, ctx.cpu(), dtype, shape, 1);
    case K::Constant: return op::filled(ctx, ctx.cpu(), dtype, shape, init.value);
    case K::GlorotUniform: {
      const double limit = std::sqrt(6.0 / (fans.in + fans.out));
      return uniform(ctx, init, shape, dtype, -limit, limit);
    }
    case K::HeUniform: {
      const double limit = std::sqrt(6.0 / fans.in);
      return uniform(ctx, init, shape, dtype, -limit, limit);
    }
    case K::GlorotNormal:
      return normal(ctx, init, shape, dtype, 0, std::sqrt(2.0 / (fans.in + fans.out)) / kTruncatedStddev, true);
    case K::HeNormal: return normal(ctx, init, shape, dtype, 0, std::sqrt(2.0 / fans.in) / kTruncatedStddev, true);
    case K::RandomNormal:
      if (init.stddev < 0) raise(Code::InvalidArgument, "initialize: random_normal stddev {} is negative", init.stddev);
      return normal(ctx, init, shape, dtype, init.mean, init.stddev, false);
    case K::RandomUniform:
      if (!(init.minval <= init.maxval))
        raise(Code::InvalidArgument, "initialize: random_uniform minval {} is greater than maxval {}", init.minval,
              init.maxval);
      return uniform(ctx, init, shape, dtype, init.minval, init.maxval);
  }
  raise(Code::InvalidArgument, "initialize: unknown initializer kind {}", static_cast<int>(init.kind));
}

// ---- Activations ----

namespace {
struct ActivationName {
  Activation a;
  const char* name;
};
constexpr ActivationName kActivations[] = {
    {Activation::Linear, "linear"},   {Activation::Relu, "relu"},         {Activation::Relu6, "relu6"},
    {Activation::Sigmoid, "sigmoid"}, {Activation::Tanh, "tanh"},         {Activation::Softmax, "softmax"},
    {Activation::Softplus, "softplus"}, {Activation::Elu, "elu"},        {Activation::Selu, "selu"},
    {Activation::Gelu, "gelu"},
};
}  // namespace

Activation parse_activation(std::string_view name) {
  if (name.empty()) return Activation::Linear;
  std::string known;
  for (const auto& e : kActivations) {
    if (name == e.name) return e.a;
    known += known.empty() ? e.name : std::string(", ") + e.name;
  }
  raise(Code::InvalidArgument, "parse_activation: unknown activation \"{}\" (known: {})", name, known);
}

const char* activation_name(Activation a) {
  for (const auto& e : kActivations)
    if (e.a == a) return e.name;
  return "unknown";
}

Tensor activate(Context& ctx, Activation a, const Tensor& x) {
  switch (a) {
    case Activation::Linear: return x;
    case Activation::Relu: return op::relu(ctx, x);
    case Activation::Sigmoid: return op::sigmoid(ctx, x);
    case Activation::Tanh: return op::tanh(ctx, x);
    case Activation::Softmax: return op::softmax(ctx, x, -1);
    case Activation::Relu6: return run_op(ctx, "Relu6", {x})[0];
    case Activation::Softplus: return run_op(ctx, "Softplus", {x})[0];
    case Activation::Elu: return run_op(ctx, "Elu", {x})[0];
    case Activation::Selu: return run_op(ctx, "Selu", {x})[0];
    case Activation::Gelu: return run_op(ctx, "Gelu", {x}, {attr_bool("approximate", false)})[0];
  }
  raise(Code::InvalidArgument, "activate: unknown activation {}", static_cast<int>(a));
}

}  // namespace cairn::nn
