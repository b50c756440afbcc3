// The C API's training section: gradient tape, optimizers, schedules, layers, losses, metrics.
#include <cstring>
#include <memory>

#include "capi/internal/handles.h"
#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"
#include "runtime/autodiff/tape.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/losses.h"
#include "runtime/optim/optimizer.h"

using namespace cairn;
using cairn::capi::malloc_string;
using cairn::capi::new_object;
using cairn::capi::new_tensor;
using cairn::capi::require;
using cairn::capi::require_as;
using cairn::capi::read_options;

struct cairn_tape {
  std::unique_ptr<GradientTape> tape;
};

namespace {

Variable& require_variable(const cairn_object* h, const char* fn, const char* what) {
  return require_as<Variable>(h, fn, what, "a variable");
}

std::string opt_string(const char* s) { return s ? std::string(s) : std::string(); }

// Gradients handed to the caller: new handles, or NULL for an invalid (unconnected) gradient.
void hand_out(const std::vector<Tensor>& grads, cairn_tensor** out) {
  std::vector<std::unique_ptr<cairn_tensor>> made(grads.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].valid()) made[i].reset(new_tensor(grads[i]));
  for (size_t i = 0; i < grads.size(); ++i) out[i] = made[i].release();
}

Unconnected unconnected_of(cairn_unconnected u, const char* fn) {
  if (u == CAIRN_UNCONNECTED_NONE) return Unconnected::None;
  if (u == CAIRN_UNCONNECTED_ZERO) return Unconnected::Zero;
  raise(Code::InvalidArgument, "{}: unknown unconnected value {}", fn, static_cast<int>(u));
}

}  // namespace

// ---- Tape ----

cairn_status* cairn_tape_create(cairn_context* ctx, const cairn_tape_options* user_opts, cairn_tape** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_tape_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  const cairn_tape_options opts = read_options(user_opts, fn);
  TapeOptions o;
  o.persistent = opts.persistent != CAIRN_FALSE;
  o.watch_accessed_variables = opts.watch_accessed_variables != CAIRN_FALSE;
  *out = new cairn_tape{std::make_unique<GradientTape>(*ctx->ctx, o)};
  CAIRN_API_END
}

cairn_status* cairn_tape_watch(cairn_tape* tape, const cairn_tensor* t) {
  CAIRN_API_BEGIN
  require(tape, "cairn_tape_watch", "tape");
  require(t, "cairn_tape_watch", "t");
  tape->tape->watch(t->t);
  CAIRN_API_END
}

cairn_status* cairn_tape_watch_variable(cairn_tape* tape, const cairn_object* var) {
  CAIRN_API_BEGIN
  require(tape, "cairn_tape_watch_variable", "tape");
  tape->tape->watch(require_variable(var, "cairn_tape_watch_variable", "var"));
  CAIRN_API_END
}

void cairn_tape_stop_recording(cairn_tape* tape) {
  if (tape) tape->tape->stop_recording();
}

void cairn_tape_resume_recording(cairn_tape* tape) {
  if (tape) tape->tape->resume_recording();
}

cairn_status* cairn_tape_gradient(cairn_tape* tape, const cairn_tensor* target, const cairn_tensor* const* sources,
                                  size_t n, const cairn_tensor* output_gradient, cairn_unconnected unconnected,
                                  cairn_tensor** grads) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_tape_gradient";
  require(tape, fn, "tape");
  require(target, fn, "target");
  if (n > 0) {
    require(sources, fn, "sources");
    require(grads, fn, "grads");
  }
  std::vector<Tensor> srcs;
  for (size_t i = 0; i < n; ++i) srcs.push_back(require(sources[i], fn, "a source")->t);
  std::vector<Tensor> g = tape->tape->gradient(target->t, srcs, output_gradient ? &output_gradient->t : nullptr,
                                               unconnected_of(unconnected, fn));
  hand_out(g, grads);
  CAIRN_API_END
}

cairn_status* cairn_tape_gradient_variables(cairn_tape* tape, const cairn_tensor* target, cairn_object* const* vars,
                                            size_t n, const cairn_tensor* output_gradient,
                                            cairn_unconnected unconnected, cairn_tensor** grads) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_tape_gradient_variables";
  require(tape, fn, "tape");
  require(target, fn, "target");
  if (n > 0) {
    require(vars, fn, "vars");
    require(grads, fn, "grads");
  }
  std::vector<const Variable*> vs;
  for (size_t i = 0; i < n; ++i) vs.push_back(&require_variable(vars[i], fn, "a variable"));
  std::vector<Tensor> g = tape->tape->gradient(target->t, vs, output_gradient ? &output_gradient->t : nullptr,
                                               unconnected_of(unconnected, fn));
  hand_out(g, grads);
  CAIRN_API_END
}

void cairn_tape_free(cairn_tape* tape) { delete tape; }

// ---- Optimizers ----

cairn_status* cairn_optimizer_create(cairn_context* ctx, const cairn_optimizer_options* user_opts, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_optimizer_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  const cairn_optimizer_options opts = read_options(user_opts, fn);
  optim::OptimizerOptions o;
  switch (opts.kind) {
    case CAIRN_OPTIMIZER_SGD: o.kind = optim::Kind::SGD; break;
    case CAIRN_OPTIMIZER_ADAM: o.kind = optim::Kind::Adam; break;
    case CAIRN_OPTIMIZER_ADAMW: o.kind = optim::Kind::AdamW; break;
    case CAIRN_OPTIMIZER_RMSPROP: o.kind = optim::Kind::RMSprop; break;
    default: raise(Code::InvalidArgument, "{}: unknown optimizer kind {}", fn, static_cast<int>(opts.kind));
  }
  o.learning_rate = opts.learning_rate;
  if (opts.schedule)
    o.schedule = Ref<optim::LearningRateSchedule>::share(
        &require_as<optim::LearningRateSchedule>(opts.schedule, fn, "schedule", "a learning-rate schedule"));
  o.momentum = opts.momentum;
  o.nesterov = opts.nesterov != CAIRN_FALSE;
  o.beta_1 = opts.beta_1;
  o.beta_2 = opts.beta_2;
  o.epsilon = opts.epsilon;
  o.weight_decay = opts.weight_decay;
  o.rho = opts.rho;
  o.centered = opts.centered != CAIRN_FALSE;
  *out = new_object(optim::Optimizer::create(*ctx->ctx, o));
  CAIRN_API_END
}

cairn_status* cairn_schedule_exponential_decay(cairn_context* ctx, const cairn_exponential_decay_options* user_opts,
                                               cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_schedule_exponential_decay";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  const cairn_exponential_decay_options o = read_options(require(user_opts, fn, "opts"), fn);
  *out = new_object(optim::exponential_decay(*ctx->ctx, o.initial_learning_rate, o.decay_steps, o.decay_rate,
                                             o.staircase != CAIRN_FALSE));
  CAIRN_API_END
}

cairn_status* cairn_schedule_cosine_decay(cairn_context* ctx, const cairn_cosine_decay_options* user_opts,
                                          cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_schedule_cosine_decay";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  const cairn_cosine_decay_options o = read_options(require(user_opts, fn, "opts"), fn);
  *out = new_object(optim::cosine_decay(*ctx->ctx, o.initial_learning_rate, o.decay_steps, o.alpha));
  CAIRN_API_END
}

namespace {
optim::Optimizer& require_optimizer(const cairn_object* h, const char* fn) {
  return require_as<optim::Optimizer>(h, fn, "optimizer", "an optimizer");
}
}  // namespace

cairn_status* cairn_optimizer_apply_gradients(cairn_object* optimizer, const cairn_tensor* const* grads,
                                              cairn_object* const* vars, size_t n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_optimizer_apply_gradients";
  optim::Optimizer& opt = require_optimizer(optimizer, fn);
  if (n > 0) {
    require(grads, fn, "grads");
    require(vars, fn, "vars");
  }
  std::vector<std::pair<Tensor, Variable*>> pairs;
  for (size_t i = 0; i < n; ++i)
    pairs.emplace_back(grads[i] ? grads[i]->t : Tensor(), &require_variable(vars[i], fn, "a variable"));
  opt.apply_gradients(pairs);
  CAIRN_API_END
}

cairn_status* cairn_optimizer_iterations(cairn_object* optimizer, int64_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_optimizer_iterations";
  require(out, fn, "out");
  *out = require_optimizer(optimizer, fn).iterations_value();
  CAIRN_API_END
}

cairn_status* cairn_optimizer_learning_rate(cairn_object* optimizer, double* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_optimizer_learning_rate";
  require(out, fn, "out");
  *out = require_optimizer(optimizer, fn).learning_rate_value();
  CAIRN_API_END
}

cairn_status* cairn_optimizer_set_learning_rate(cairn_object* optimizer, double value) {
  CAIRN_API_BEGIN
  require_optimizer(optimizer, "cairn_optimizer_set_learning_rate").set_learning_rate(value);
  CAIRN_API_END
}

cairn_status* cairn_optimizer_get_slot(cairn_object* optimizer, const cairn_object* var, const char* name,
                                       cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_optimizer_get_slot";
  require(out, fn, "out");
  *out = nullptr;
  optim::Optimizer& opt = require_optimizer(optimizer, fn);
  Variable& v = require_variable(var, fn, "var");
  require(name, fn, "name");
  Ref<Variable> slot = opt.get_slot(v, name);
  if (!slot) raise(Code::NotFound, "{}: optimizer has no slot '{}' for variable '{}'", fn, name, v.name());
  *out = new_object(slot);
  CAIRN_API_END
}

// ---- Layers ----

namespace {
nn::Initializer initializer_or(const char* name, nn::Initializer fallback) {
  return name ? nn::parse_initializer(name) : fallback;
}
nn::Activation activation_of(const char* name) { return nn::parse_activation(name ? name : ""); }
std::string padding_of(const char* p) { return p ? std::string(p) : std::string("VALID"); }
nn::Layer& require_layer(const cairn_object* h, const char* fn, const char* what = "layer") {
  return require_as<nn::Layer>(h, fn, what, "a layer");
}

// Shared shape of every layer constructor: validate `out` and `ctx`, build, hand out.
template <class Make>
cairn_status* make_layer(cairn_context* ctx, cairn_object** out, const char* fn, Make make) {
  CAIRN_API_BEGIN
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  *out = new_object(make(*ctx->ctx));
  CAIRN_API_END_AS(fn)
}
}  // namespace

cairn_status* cairn_dense_create(cairn_context* ctx, const cairn_dense_options* user_opts, cairn_object** out) {
  const char* fn = "cairn_dense_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    const cairn_dense_options opts = read_options(require(user_opts, fn, "opts"), fn);
    nn::DenseOptions o;
    o.units = opts.units;
    o.activation = activation_of(opts.activation);
    o.use_bias = opts.use_bias != CAIRN_FALSE;
    o.kernel_initializer = initializer_or(opts.kernel_initializer, o.kernel_initializer);
    o.bias_initializer = initializer_or(opts.bias_initializer, o.bias_initializer);
    o.name = opt_string(opts.name);
    return nn::dense(c, o);
  });
}

cairn_status* cairn_conv2d_create(cairn_context* ctx, const cairn_conv2d_options* user_opts, cairn_object** out) {
  const char* fn = "cairn_conv2d_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    const cairn_conv2d_options opts = read_options(require(user_opts, fn, "opts"), fn);
    nn::Conv2DOptions o;
    o.filters = opts.filters;
    o.kernel_h = opts.kernel_h;
    o.kernel_w = opts.kernel_w;
    o.stride_h = opts.stride_h;
    o.stride_w = opts.stride_w;
    o.padding = padding_of(opts.padding);
    o.activation = activation_of(opts.activation);
    o.use_bias = opts.use_bias != CAIRN_FALSE;
    o.kernel_initializer = initializer_or(opts.kernel_initializer, o.kernel_initializer);
    o.bias_initializer = initializer_or(opts.bias_initializer, o.bias_initializer);
    o.name = opt_string(opts.name);
    return nn::conv2d(c, o);
  });
}

namespace {
nn::Pool2DOptions pool_options(const cairn_pool2d_options* user_opts, const char* fn) {
  const cairn_pool2d_options opts = read_options(user_opts, fn);
  nn::Pool2DOptions o;
  o.pool_h = opts.pool_h;
  o.pool_w = opts.pool_w;
  o.stride_h = opts.stride_h;
  o.stride_w = opts.stride_w;
  o.padding = padding_of(opts.padding);
  o.name = opt_string(opts.name);
  return o;
}
}  // namespace

cairn_status* cairn_max_pool2d_create(cairn_context* ctx, const cairn_pool2d_options* opts, cairn_object** out) {
  const char* fn = "cairn_max_pool2d_create";
  return make_layer(ctx, out, fn, [&](Context& c) { return nn::max_pool2d(c, pool_options(opts, fn)); });
}

cairn_status* cairn_avg_pool2d_create(cairn_context* ctx, const cairn_pool2d_options* opts, cairn_object** out) {
  const char* fn = "cairn_avg_pool2d_create";
  return make_layer(ctx, out, fn, [&](Context& c) { return nn::avg_pool2d(c, pool_options(opts, fn)); });
}

cairn_status* cairn_flatten_create(cairn_context* ctx, const cairn_flatten_options* user_opts, cairn_object** out) {
  const char* fn = "cairn_flatten_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    return nn::flatten(c, opt_string(read_options(user_opts, fn).name));
  });
}

cairn_status* cairn_embedding_create(cairn_context* ctx, const cairn_embedding_options* user_opts,
                                     cairn_object** out) {
  const char* fn = "cairn_embedding_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    const cairn_embedding_options opts = read_options(require(user_opts, fn, "opts"), fn);
    nn::EmbeddingOptions o;
    o.input_dim = opts.input_dim;
    o.output_dim = opts.output_dim;
    o.name = opt_string(opts.name);
    return nn::embedding(c, o);
  });
}

namespace {
nn::NormOptions norm_options(const cairn_norm_options* user_opts, const char* fn) {
  const cairn_norm_options opts = read_options(user_opts, fn);
  nn::NormOptions o;
  o.axis = opts.axis;
  o.epsilon = opts.epsilon;
  o.momentum = opts.momentum;
  o.center = opts.center != CAIRN_FALSE;
  o.scale = opts.scale != CAIRN_FALSE;
  o.name = opt_string(opts.name);
  return o;
}
}  // namespace

cairn_status* cairn_layer_norm_create(cairn_context* ctx, const cairn_norm_options* opts, cairn_object** out) {
  const char* fn = "cairn_layer_norm_create";
  return make_layer(ctx, out, fn, [&](Context& c) { return nn::layer_norm(c, norm_options(opts, fn)); });
}

cairn_status* cairn_batch_norm_create(cairn_context* ctx, const cairn_norm_options* opts, cairn_object** out) {
  const char* fn = "cairn_batch_norm_create";
  return make_layer(ctx, out, fn, [&](Context& c) { return nn::batch_norm(c, norm_options(opts, fn)); });
}

cairn_status* cairn_dropout_create(cairn_context* ctx, const cairn_dropout_options* user_opts, cairn_object** out) {
  const char* fn = "cairn_dropout_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    const cairn_dropout_options opts = read_options(user_opts, fn);
    std::optional<int64_t> seed;
    if (opts.seed >= 0) seed = opts.seed;
    return nn::dropout(c, opts.rate, seed, opt_string(opts.name));
  });
}

cairn_status* cairn_activation_create(cairn_context* ctx, const cairn_activation_options* user_opts,
                                      cairn_object** out) {
  const char* fn = "cairn_activation_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    const cairn_activation_options opts = read_options(user_opts, fn);
    return nn::activation(c, activation_of(opts.activation), opt_string(opts.name));
  });
}

cairn_status* cairn_sequential_create(cairn_context* ctx, const cairn_sequential_options* user_opts,
                                      cairn_object** out) {
  const char* fn = "cairn_sequential_create";
  return make_layer(ctx, out, fn, [&](Context& c) {
    return nn::Sequential::create(c, opt_string(read_options(user_opts, fn).name));
  });
}

cairn_status* cairn_sequential_add(cairn_object* model, cairn_object* layer) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_sequential_add";
  nn::Sequential& seq = require_as<nn::Sequential>(model, fn, "model", "a Sequential model");
  seq.add(Ref<nn::Layer>::share(&require_layer(layer, fn)));
  CAIRN_API_END
}

cairn_status* cairn_layer_call(cairn_object* layer, const cairn_tensor* x, cairn_bool training, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_layer_call";
  require(out, fn, "out");
  *out = nullptr;
  nn::Layer& l = require_layer(layer, fn);
  require(x, fn, "x");
  *out = new_tensor(l(x->t, training != 0));
  CAIRN_API_END
}

cairn_status* cairn_layer_weights(cairn_object* layer, cairn_bool trainable_only, cairn_object_array** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_layer_weights";
  require(out, fn, "out");
  *out = nullptr;
  nn::Layer& l = require_layer(layer, fn);
  auto array = std::make_unique<cairn_object_array>();
  for (const Ref<Variable>& v : trainable_only ? l.trainable_weights() : l.weights()) {
    array->items.push_back(cairn_object{v});
    array->paths.push_back(v->name());
  }
  *out = array.release();
  CAIRN_API_END
}

cairn_status* cairn_layer_summary(cairn_object* layer, char** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_layer_summary";
  require(out, fn, "out");
  *out = nullptr;
  *out = malloc_string(nn::summarize(require_layer(layer, fn)).table(), fn);
  CAIRN_API_END
}

cairn_status* cairn_layer_count_params(cairn_object* layer, int64_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_layer_count_params";
  require(out, fn, "out");
  *out = require_layer(layer, fn).count_params();
  CAIRN_API_END
}

// ---- Losses and metrics ----

cairn_status* cairn_loss(cairn_context* ctx, cairn_loss_kind kind, const cairn_tensor* y_true,
                         const cairn_tensor* y_pred, cairn_bool from_logits, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_loss";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  require(y_true, fn, "y_true");
  require(y_pred, fn, "y_pred");
  Context& c = *ctx->ctx;
  Tensor loss;
  switch (kind) {
    case CAIRN_LOSS_MEAN_SQUARED_ERROR: loss = nn::mean_squared_error(c, y_true->t, y_pred->t); break;
    case CAIRN_LOSS_MEAN_ABSOLUTE_ERROR: loss = nn::mean_absolute_error(c, y_true->t, y_pred->t); break;
    case CAIRN_LOSS_BINARY_CROSSENTROPY: loss = nn::binary_crossentropy(c, y_true->t, y_pred->t, from_logits != 0); break;
    case CAIRN_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
      loss = nn::sparse_categorical_crossentropy(c, y_true->t, y_pred->t, from_logits != 0);
      break;
    default: raise(Code::InvalidArgument, "{}: unknown loss kind {}", fn, static_cast<int>(kind));
  }
  *out = new_tensor(loss);
  CAIRN_API_END
}

cairn_status* cairn_metric_create(cairn_context* ctx, cairn_metric_kind kind, const char* name, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_metric_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  switch (kind) {
    case CAIRN_METRIC_MEAN: *out = new_object(nn::Mean::create(*ctx->ctx, name ? name : "mean")); break;
    case CAIRN_METRIC_ACCURACY: *out = new_object(nn::Accuracy::create(*ctx->ctx, name ? name : "accuracy")); break;
    default: raise(Code::InvalidArgument, "{}: unknown metric kind {}", fn, static_cast<int>(kind));
  }
  CAIRN_API_END
}

cairn_status* cairn_metric_update(cairn_object* metric, const cairn_tensor* a, const cairn_tensor* b) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_metric_update";
  nn::Metric& m = require_as<nn::Metric>(metric, fn, "metric", "a metric");
  require(a, fn, "a");
  if (auto* mean = dynamic_cast<nn::Mean*>(&m)) {
    if (b) raise(Code::InvalidArgument, "{}: a mean metric takes one tensor; b must be NULL", fn);
    mean->update(a->t);
  } else {
    require(b, fn, "b");
    dynamic_cast<nn::Accuracy&>(m).update(a->t, b->t);
  }
  CAIRN_API_END
}

cairn_status* cairn_metric_result(cairn_object* metric, double* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_metric_result";
  require(out, fn, "out");
  *out = require_as<nn::Metric>(metric, fn, "metric", "a metric").result();
  CAIRN_API_END
}

cairn_status* cairn_metric_reset(cairn_object* metric) {
  CAIRN_API_BEGIN
  require_as<nn::Metric>(metric, "cairn_metric_reset", "metric", "a metric").reset();
  CAIRN_API_END
}

