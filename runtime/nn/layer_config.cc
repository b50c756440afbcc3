// Layer configs (Keras' get_config / from_config): what a saved model's architecture is made of.
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/layer_util.h"

namespace cairn::nn {

using json = nlohmann::json;

const char* initializer_name(Initializer::Kind kind) {
  using K = Initializer::Kind;
  switch (kind) {
    case K::Zeros: return "zeros";
    case K::Ones: return "ones";
    case K::Constant: return "constant";
    case K::GlorotUniform: return "glorot_uniform";
    case K::GlorotNormal: return "glorot_normal";
    case K::HeNormal: return "he_normal";
    case K::HeUniform: return "he_uniform";
    case K::RandomNormal: return "random_normal";
    case K::RandomUniform: return "random_uniform";
  }
  return "?";
}

json initializer_config(const Initializer& init) {
  using K = Initializer::Kind;
  json c = json::object();
  if (init.kind == K::Constant) c["value"] = init.value;
  if (init.kind == K::RandomNormal) {
    c["mean"] = init.mean;
    c["stddev"] = init.stddev;
  }
  if (init.kind == K::RandomUniform) {
    c["minval"] = init.minval;
    c["maxval"] = init.maxval;
  }
  if (init.seed) c["seed"] = *init.seed;
  return json{{"class_name", initializer_name(init.kind)}, {"config", c}};
}

namespace {

// The field `key` of `c` as a T; InvalidArgument naming `where` and the key when it is missing or
// of another type.
template <class T>
T field(const json& c, const char* key, std::string_view where) {
  auto it = c.find(key);
  if (it == c.end()) raise(Code::InvalidArgument, "layer_from_config: {}: no field \"{}\"", where, key);
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    raise(Code::InvalidArgument, "layer_from_config: {}: field \"{}\" is {}, not the expected type", where, key,
          it->dump());
  }
}

template <class T>
T field_or(const json& c, const char* key, T fallback, std::string_view where) {
  return c.contains(key) && !c[key].is_null() ? field<T>(c, key, where) : fallback;
}

std::pair<int64_t, int64_t> pair_field(const json& c, const char* key, std::string_view where) {
  auto v = field<std::vector<int64_t>>(c, key, where);
  if (v.size() != 2) raise(Code::InvalidArgument, "layer_from_config: {}: \"{}\" needs 2 values", where, key);
  return {v[0], v[1]};
}

NormOptions norm_options(const json& c, const std::string& name, std::string_view where) {
  NormOptions o;
  o.name = name;
  o.axis = field_or<int64_t>(c, "axis", o.axis, where);
  o.epsilon = field_or<double>(c, "epsilon", o.epsilon, where);
  o.momentum = field_or<double>(c, "momentum", o.momentum, where);
  o.center = field_or<bool>(c, "center", o.center, where);
  o.scale = field_or<bool>(c, "scale", o.scale, where);
  return o;
}

}  // namespace

Initializer initializer_from_config(const json& config, std::string_view where) {
  Initializer init = parse_initializer(field<std::string>(config, "class_name", where));
  const json c = config.value("config", json::object());
  init.value = field_or<double>(c, "value", init.value, where);
  init.mean = field_or<double>(c, "mean", init.mean, where);
  init.stddev = field_or<double>(c, "stddev", init.stddev, where);
  init.minval = field_or<double>(c, "minval", init.minval, where);
  init.maxval = field_or<double>(c, "maxval", init.maxval, where);
  if (c.contains("seed") && !c["seed"].is_null()) init.seed = field<int64_t>(c, "seed", where);
  return init;
}

json Layer::config() const {
  json c = json::object();
  c["name"] = name();
  get_config(c);
  json out{{"class_name", type_name()}, {"config", c}};
  if (std::optional<std::pair<Shape, DType>> in = build_input()) {
    json shape = json::array({nullptr});  // the batch dimension is whatever it is
    for (int i = 1; i < in->first.rank(); ++i) shape.push_back(in->first[i]);
    out["build_config"] = {{"input_shape", shape}, {"dtype", dtype_name(in->second)}};
  }
  return out;
}

void Sequential::get_config(json& c) const {
  json layers = json::array();
  for (const Ref<Layer>& l : this->layers()) layers.push_back(l->config());
  c["layers"] = layers;
}

Ref<Layer> layer_from_config(Context& ctx, const json& config) {
  if (!config.is_object()) raise(Code::InvalidArgument, "layer_from_config: a layer config must be an object");
  const std::string cls = field<std::string>(config, "class_name", "layer");
  const json c = config.value("config", json::object());
  const std::string name = field_or<std::string>(c, "name", "", cls);
  const std::string where = name.empty() ? cls : cls + " '" + name + "'";
  auto activation_of = [&] { return parse_activation(field_or<std::string>(c, "activation", "linear", where)); };
  if (cls == "Dense") {
    DenseOptions o;
    o.name = name;
    o.units = field<int64_t>(c, "units", where);
    o.activation = activation_of();
    o.use_bias = field_or<bool>(c, "use_bias", true, where);
    if (c.contains("kernel_initializer")) o.kernel_initializer = initializer_from_config(c["kernel_initializer"], where);
    if (c.contains("bias_initializer")) o.bias_initializer = initializer_from_config(c["bias_initializer"], where);
    return dense(ctx, o);
  }
  if (cls == "Conv2D") {
    Conv2DOptions o;
    o.name = name;
    o.filters = field<int64_t>(c, "filters", where);
    std::tie(o.kernel_h, o.kernel_w) = pair_field(c, "kernel_size", where);
    if (c.contains("strides")) std::tie(o.stride_h, o.stride_w) = pair_field(c, "strides", where);
    o.padding = field_or<std::string>(c, "padding", o.padding, where);
    o.activation = activation_of();
    o.use_bias = field_or<bool>(c, "use_bias", true, where);
    if (c.contains("kernel_initializer")) o.kernel_initializer = initializer_from_config(c["kernel_initializer"], where);
    if (c.contains("bias_initializer")) o.bias_initializer = initializer_from_config(c["bias_initializer"], where);
    return conv2d(ctx, o);
  }
  if (cls == "MaxPooling2D" || cls == "AveragePooling2D") {
    Pool2DOptions o;
    o.name = name;
    std::tie(o.pool_h, o.pool_w) = pair_field(c, "pool_size", where);
    if (c.contains("strides")) std::tie(o.stride_h, o.stride_w) = pair_field(c, "strides", where);
    o.padding = field_or<std::string>(c, "padding", o.padding, where);
    return cls == "MaxPooling2D" ? max_pool2d(ctx, o) : avg_pool2d(ctx, o);
  }
  if (cls == "Flatten") return flatten(ctx, name);
  if (cls == "Embedding") {
    EmbeddingOptions o;
    o.name = name;
    o.input_dim = field<int64_t>(c, "input_dim", where);
    o.output_dim = field<int64_t>(c, "output_dim", where);
    if (c.contains("embeddings_initializer"))
      o.embeddings_initializer = initializer_from_config(c["embeddings_initializer"], where);
    return embedding(ctx, o);
  }
  if (cls == "LayerNormalization") return layer_norm(ctx, norm_options(c, name, where));
  if (cls == "BatchNormalization") return batch_norm(ctx, norm_options(c, name, where));
  if (cls == "Dropout") {
    std::optional<int64_t> seed;
    if (c.contains("seed") && !c["seed"].is_null()) seed = field<int64_t>(c, "seed", where);
    return dropout(ctx, field<double>(c, "rate", where), seed, name);
  }
  if (cls == "Activation") return activation(ctx, activation_of(), name);
  if (cls == "Sequential") {
    Ref<Sequential> s = Sequential::create(ctx, name);
    for (const json& layer : field<json>(c, "layers", where)) s->add(layer_from_config(ctx, layer));
    return s;
  }
  raise(Code::InvalidArgument,
        "layer_from_config: unknown layer class \"{}\" (known: Dense, Conv2D, MaxPooling2D, AveragePooling2D, "
        "Flatten, Embedding, LayerNormalization, BatchNormalization, Dropout, Activation, Sequential)",
        cls);
}

}  // namespace cairn::nn
