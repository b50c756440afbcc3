// The layer base (deferred build, weights, parameter counts) and Sequential.
#include "runtime/nn/layer.h"

#include <cctype>
#include <unordered_set>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/eager/device_scope.h"

namespace cairn::nn {
namespace {

// Keras' default layer names: the class name in snake case ("Conv2D" -> "conv2d",
// "BatchNormalization" -> "batch_normalization").
std::string snake_case(std::string_view type) {
  std::string out;
  for (size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    const bool upper = std::isupper(static_cast<unsigned char>(c));
    const bool after_lower = i > 0 && std::islower(static_cast<unsigned char>(type[i - 1]));
    if (upper && after_lower) out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string layer_name(Context& ctx, const char* type, std::string_view name) {
  return name.empty() ? ctx.unique_name(snake_case(type)) : std::string(name);
}

}  // namespace

Layer::Layer(Context& ctx, const char* type, std::string_view name)
    : Module(ObjectKind::Layer, ctx, layer_name(ctx, type, name), nullptr, type), type_(type) {}

void Layer::ensure_built(const Tensor& x) {
  std::lock_guard<std::mutex> lock(build_mu_);
  check_input(x.shape(), x.dtype());
  if (built_) return;
  // Inside a function trace the input is symbolic: the weights go to the context's default device.
  build_device_ = x.device()->kind() == DeviceKind::Symbolic ? &scoped_device(context()) : x.device();
  build(x.shape(), x.dtype());
  build_input_.emplace(x.shape(), x.dtype());
  built_ = true;
}

Tensor Layer::operator()(const Tensor& x, bool training) {
  if (!x.valid()) raise(Code::InvalidArgument, "{}: the input tensor is empty (invalid)", describe());
  ensure_built(x);
  Tensor y = forward(x, training);
  std::lock_guard<std::mutex> lock(build_mu_);
  if (!output_shape_) output_shape_ = y.shape();
  return y;
}

std::optional<std::pair<Shape, DType>> Layer::build_input() const {
  std::lock_guard<std::mutex> lock(build_mu_);
  return build_input_;
}

bool Layer::built() const {
  std::lock_guard<std::mutex> lock(build_mu_);
  return built_;
}

std::optional<Shape> Layer::output_shape() const {
  std::lock_guard<std::mutex> lock(build_mu_);
  return output_shape_;
}

Variable& Layer::add_weight(const std::string& name, const Shape& shape, const Initializer& init, DType dtype,
                            bool trainable) {
  EagerScope eager;  // initial values are real even when the first call is being traced (tf.init_scope)
  Tensor initial = initialize(context(), init, shape, dtype);
  // A device scope wins over the first input's device (tf.device around a layer's first call).
  Device* target = DeviceScope::current(context());
  if (!target) target = build_device_;
  if (target && target != initial.device()) initial = tensor_on_device(initial, *target);
  VariableOptions options;
  options.name = name;
  options.trainable = trainable;
  options.scope = this;
  Ref<Variable> v = Variable::create(context(), initial, options, type_);
  own_weights_.push_back(v);
  // Setting the edge lets a pending checkpoint restore assign the saved value right away.
  set(name, v, type_);
  return *v;
}

std::vector<Ref<Variable>> Layer::weights() const {
  std::vector<Ref<Variable>> out;
  {
    std::lock_guard<std::mutex> lock(build_mu_);
    out = own_weights_;
  }
  std::unordered_set<const Variable*> seen;
  for (const Ref<Variable>& v : out) seen.insert(v.get());
  for (const Ref<Layer>& sub : sublayers())
    for (Ref<Variable>& v : sub->weights())
      if (seen.insert(v.get()).second) out.push_back(std::move(v));
  return out;
}

std::vector<Ref<Variable>> Layer::trainable_weights() const {
  std::vector<Ref<Variable>> out;
  for (Ref<Variable>& v : weights())
    if (v->trainable()) out.push_back(std::move(v));
  return out;
}

std::vector<Ref<Variable>> Layer::non_trainable_weights() const {
  std::vector<Ref<Variable>> out;
  for (Ref<Variable>& v : weights())
    if (!v->trainable()) out.push_back(std::move(v));
  return out;
}

int64_t Layer::count_params() const {
  int64_t n = 0;
  for (const Ref<Variable>& v : weights()) n += v->shape().num_elements();
  return n;
}

std::string Layer::describe() const { return fmt::format("layer '{}' ({})", name(), type_); }

// ---- Sequential ----

Sequential::Sequential(Context& ctx, std::string_view name) : Layer(ctx, "Sequential", name) {}

Ref<Sequential> Sequential::create(Context& ctx, std::string_view name) { return make_ref<Sequential>(ctx, name); }

void Sequential::add(Ref<Layer> layer) {
  if (!layer) raise(Code::InvalidArgument, "{}: add: the layer is null", describe());
  if (layer.get() == this) raise(Code::InvalidArgument, "{}: add: a sequential cannot contain itself", describe());
  // A successful call recorded the output shape, which a new last layer would make stale.
  if (output_shape())
    raise(Code::InvalidArgument, "{}: add: already built; add {} before the first call", describe(),
          layer->describe());
  std::string edge;
  {
    std::lock_guard<std::mutex> lock(layers_mu_);
    for (const Ref<Layer>& l : layers_)
      if (l == layer) raise(Code::InvalidArgument, "{}: add: {} is already in it", describe(), layer->describe());
    edge = fmt::format("layer-{}", layers_.size());
    layers_.push_back(layer);
  }
  set(edge, layer, "Sequential::add");
}

std::vector<Ref<Layer>> Sequential::layers() const {
  std::lock_guard<std::mutex> lock(layers_mu_);
  return layers_;
}

void Sequential::check_input(const Shape&, DType) const {
  std::lock_guard<std::mutex> lock(layers_mu_);
  if (layers_.empty()) raise(Code::InvalidArgument, "{}: has no layers to call", describe());
}

Tensor Sequential::forward(const Tensor& x, bool training) {
  std::vector<Ref<Layer>> layers = this->layers();
  Tensor y = x;
  for (const Ref<Layer>& l : layers) y = (*l)(y, training);
  return y;
}

}  // namespace cairn::nn
