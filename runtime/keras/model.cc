#include "runtime/keras/model.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/autodiff/tape.h"
#include "runtime/core/error.h"
#include "runtime/data/sources.h"
#include "runtime/data/transforms.h"
#include "runtime/eager/ops.h"
#include "runtime/keras/callbacks.h"

namespace cairn::keras {

// ---- Logs and History ----

void Logs::set(const std::string& name, double value) {
  for (auto& [k, v] : items_)
    if (k == name) {
      v = value;
      return;
    }
  items_.emplace_back(name, value);
}

std::optional<double> Logs::get(std::string_view name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return v;
  return std::nullopt;
}

std::string Logs::text() const {
  std::string s;
  for (const auto& [k, v] : items_) {
    if (!s.empty()) s += " - ";
    s += fmt::format("{}: {:.4f}", k, v);
  }
  return s;
}

const std::vector<double>* History::get(std::string_view name) const {
  for (const auto& [k, v] : values)
    if (k == name) return &v;
  return nullptr;
}

void History::append(int64_t epoch, const Logs& logs) {
  epochs.push_back(epoch);
  for (const auto& [name, value] : logs.items()) {
    std::vector<double>* list = nullptr;
    for (auto& [k, v] : values)
      if (k == name) list = &v;
    if (!list) list = &values.emplace_back(name, std::vector<double>{}).second;
    list->push_back(value);
  }
}

// ---- Data ----

data::DatasetPtr batches(Context& ctx, const Data& data, int64_t batch_size, bool shuffle, int64_t seed,
                         const char* fn) {
  if (data.dataset) return data.dataset;
  if (!data.x.valid()) raise(Code::InvalidArgument, "{}: no data: give a dataset or an x tensor", fn);
  if (batch_size < 1) raise(Code::InvalidArgument, "{}: batch_size must be at least 1, got {}", fn, batch_size);
  if (data.x.rank() == 0) raise(Code::InvalidArgument, "{}: x must have a batch dimension, got a scalar", fn);
  data::Element values{data.x};
  std::vector<std::string> names{"x"};
  if (data.y.valid()) {
    if (data.y.rank() == 0 || data.y.shape()[0] != data.x.shape()[0])
      raise(Code::InvalidArgument, "{}: x has {} samples but y is {}", fn, data.x.shape()[0], data.y.debug_string());
    values.push_back(data.y);
    names.push_back("y");
  }
  data::DatasetPtr ds = data::from_tensor_slices(ctx, names, values);
  if (shuffle) ds = data::shuffle(ds, std::max<int64_t>(data.x.shape()[0], 1), seed, true);
  return data::batch(ds, batch_size, false);
}

namespace {

enum class LossKind { SparseCategorical, Binary, MeanSquared, MeanAbsolute };
enum class MetricKind { SparseAccuracy, BinaryAccuracy, MeanSquared, MeanAbsolute };

LossKind parse_loss(const std::string& name, const std::string& model) {
  if (name == "sparse_categorical_crossentropy") return LossKind::SparseCategorical;
  if (name == "binary_crossentropy") return LossKind::Binary;
  if (name == "mean_squared_error" || name == "mse") return LossKind::MeanSquared;
  if (name == "mean_absolute_error" || name == "mae") return LossKind::MeanAbsolute;
  raise(Code::InvalidArgument,
        "compile: {}: unknown loss '{}' (expected sparse_categorical_crossentropy, binary_crossentropy, "
        "mean_squared_error or mean_absolute_error)",
        model, name);
}

MetricKind parse_metric(const std::string& name, LossKind loss, const std::string& model) {
  if (name == "accuracy" || name == "acc")
    return loss == LossKind::Binary ? MetricKind::BinaryAccuracy : MetricKind::SparseAccuracy;
  if (name == "sparse_categorical_accuracy") return MetricKind::SparseAccuracy;
  if (name == "binary_accuracy") return MetricKind::BinaryAccuracy;
  if (name == "mse" || name == "mean_squared_error") return MetricKind::MeanSquared;
  if (name == "mae" || name == "mean_absolute_error") return MetricKind::MeanAbsolute;
  raise(Code::InvalidArgument,
        "compile: {}: unknown metric '{}' (expected accuracy, sparse_categorical_accuracy, binary_accuracy, mse "
        "or mae)",
        model, name);
}

bool is_terminal(std::FILE* f) { return f && ::isatty(::fileno(f)) == 1; }

// The first dimension of a batch's x: the number of samples it carries.
int64_t batch_samples(const Tensor& x) { return x.rank() > 0 ? x.shape()[0] : 1; }

// Runs `hook` on every callback in order.
template <class F>
void each(const std::vector<Ref<Callback>>& callbacks, F&& hook) {
  for (const Ref<Callback>& cb : callbacks) hook(*cb);
}

double host_scalar(Context& ctx, const Tensor& t) {
  Tensor h = host_values(op::cast(ctx, t, DType::Float64), ctx.cpu(), "Model");
  return *h.data<double>();
}

}  // namespace

// One compiled metric: its log name, what it computes and its accumulator.
struct CompiledMetric {
  std::string name;
  MetricKind kind;
  Ref<nn::Metric> state;
};

// The metrics of one run: the batch-size-weighted mean of the loss, then the compiled metrics.
struct Model::Metrics {
  Ref<nn::Mean> loss;
  std::vector<CompiledMetric> metrics;

  void reset() {
    loss->reset();
    for (CompiledMetric& m : metrics) m.state->reset();
  }
  Logs logs(const std::string& prefix = {}) {
    Logs l;
    l.set(prefix + "loss", loss->result());
    for (CompiledMetric& m : metrics) l.set(prefix + m.name, m.state->result());
    return l;
  }
};

struct Model::Compiled {
  CompileOptions options;
  LossKind loss;
  std::vector<std::pair<std::string, MetricKind>> metric_kinds;
  Ref<graph::Function> train_fn, test_fn;  // null when run_eagerly
  bool weights_broadcast = false;  // multi-worker: rank 0's initial weights sent to every worker
  std::unique_ptr<Metrics> train_metrics;

  std::unique_ptr<Metrics> make_metrics(Context& ctx) const {
    auto m = std::make_unique<Metrics>();
    m->loss = nn::Mean::create(ctx, "loss");
    for (const auto& [name, kind] : metric_kinds) {
      Ref<nn::Metric> state;
      if (kind == MetricKind::SparseAccuracy || kind == MetricKind::BinaryAccuracy)
        state = nn::Accuracy::create(ctx, name);
      else
        state = nn::Mean::create(ctx, name);
      m->metrics.push_back({name, kind, state});
    }
    return m;
  }
};

// ---- FitState ----

FitState::FitState(Context& ctx) : Trackable(ctx) {
  auto counter = [&](const char* name) {
    VariableOptions o;
    o.name = name;
    o.trainable = false;
    o.device = &ctx.cpu();
    return Variable::create(ctx, op::filled(ctx, ctx.cpu(), DType::Int64, Shape{}, 0), o, "FitState");
  };
  epoch_ = counter("epoch");
  step_ = counter("step");
  set("epoch", epoch_, "FitState");
  set("step", step_, "FitState");
}

int64_t FitState::epoch() const {
  return *host_values(epoch_->read(), context().cpu(), "FitState").data<int64_t>();
}

int64_t FitState::step() const { return *host_values(step_->read(), context().cpu(), "FitState").data<int64_t>(); }

void FitState::set_position(int64_t epoch, int64_t step) {
  epoch_->assign(op::scalar(context(), context().cpu(), DType::Int64, static_cast<double>(epoch)), "FitState");
  step_->assign(op::scalar(context(), context().cpu(), DType::Int64, static_cast<double>(step)), "FitState");
}

void FitState::set_iterator(Ref<data::IteratorObject> it) {
  iterator_ = it;
  set("iterator", it, "FitState");
}

// ---- Model ----

Model::Model(Context& ctx, std::string_view name) : nn::Sequential(ctx, name) {}

Ref<Model> Model::create(Context& ctx, std::string_view name) { return make_ref<Model>(ctx, name); }

void Model::compile(const CompileOptions& options) {
  if (!options.optimizer) raise(Code::InvalidArgument, "compile: {}: the optimizer is null", describe());
  auto c = std::make_shared<Compiled>();
  c->options = options;
  if (!c->options.strategy) c->options.strategy = Ref<distribute::MirroredStrategy>::share(distribute::MirroredStrategy::current());
  if (c->options.strategy && &c->options.strategy->context() != &context())
    raise(Code::InvalidArgument, "compile: {}: the strategy belongs to another context", describe());
  c->loss = parse_loss(options.loss, describe());
  for (const std::string& name : options.metrics) {
    for (const auto& [seen, kind] : c->metric_kinds)
      if (seen == name) raise(Code::InvalidArgument, "compile: {}: metric '{}' given twice", describe(), name);
    c->metric_kinds.emplace_back(name, parse_metric(name, c->loss, describe()));
  }
  c->train_metrics = c->make_metrics(context());
  if (!options.run_eagerly) {
    Compiled* raw = c.get();
    c->train_fn = make_ref<graph::Function>(
        context(), "train_step", [this, raw](Context&, const std::vector<Tensor>& in) {
          auto [loss, y_pred] = train_step_body(*raw, in[0], in[1], in.size() > 2 ? in[2] : Tensor());
          return std::vector<Tensor>{loss, y_pred};
        });
    c->test_fn = make_ref<graph::Function>(
        context(), "test_step", [this, raw](Context&, const std::vector<Tensor>& in) {
          auto [loss, y_pred] = test_step_body(*raw, in[0], in[1]);
          return std::vector<Tensor>{loss, y_pred};
        });
  }
  set("optimizer", options.optimizer, "compile");
  std::lock_guard<std::mutex> lock(mu_);
  compiled_ = std::move(c);
}

bool Model::compiled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_ != nullptr;
}

std::shared_ptr<Model::Compiled> Model::compiled_config(const char* fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!compiled_)
    raise(Code::FailedPrecondition, "{}: {} is not compiled: call compile with an optimizer and a loss first", fn,
          describe());
  return compiled_;
}

Ref<optim::Optimizer> Model::optimizer() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_ ? compiled_->options.optimizer : Ref<optim::Optimizer>();
}

CompileOptions Model::compile_options(const char* fn) const { return compiled_config(fn)->options; }

std::vector<std::string> Model::metric_names() const {
  std::vector<std::string> names{"loss"};
  std::lock_guard<std::mutex> lock(mu_);
  if (compiled_)
    for (const auto& [name, kind] : compiled_->metric_kinds) names.push_back(name);
  return names;
}

Ref<FitState> Model::fit_state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fit_state_;
}

Ref<graph::Function> Model::train_function() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_ ? compiled_->train_fn : Ref<graph::Function>();
}

int64_t Model::iterations() const {
  Ref<optim::Optimizer> opt = optimizer();
  return opt ? opt->iterations_value() : 0;
}

Tensor Model::loss_of(const Compiled& c, const Tensor& y, const Tensor& y_pred) {
  Context& ctx = context();
  switch (c.loss) {
    case LossKind::SparseCategorical:
      return nn::sparse_categorical_crossentropy(ctx, y, y_pred, c.options.from_logits);
    case LossKind::Binary:
      return nn::binary_crossentropy(ctx, op::cast(ctx, y, y_pred.dtype()), y_pred, c.options.from_logits);
    case LossKind::MeanSquared:
      return nn::mean_squared_error(ctx, op::cast(ctx, y, y_pred.dtype()), y_pred);
    case LossKind::MeanAbsolute:
      return nn::mean_absolute_error(ctx, op::cast(ctx, y, y_pred.dtype()), y_pred);
  }
  raise(Code::Internal, "Model: unknown loss kind");
}

std::pair<Tensor, Tensor> Model::train_step(Compiled& c, const Tensor& x, const Tensor& y) {
  if (c.options.strategy) return replicated_step(c, x, y, true);
  if (!built()) (*this)(x, false);
  return local_train_step(c, x, y, Tensor());
}

std::pair<Tensor, Tensor> Model::test_step(Compiled& c, const Tensor& x, const Tensor& y) {
  if (c.options.strategy) return replicated_step(c, x, y, false);
  return local_test_step(c, x, y);
}

std::pair<Tensor, Tensor> Model::local_train_step(Compiled& c, const Tensor& x, const Tensor& y,
                                                  const Tensor& weight) {
  if (!c.train_fn) return train_step_body(c, x, y, weight);
  std::vector<Tensor> out = weight.valid() ? c.train_fn->call({x, y, weight}) : c.train_fn->call({x, y});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> Model::local_test_step(Compiled& c, const Tensor& x, const Tensor& y) {
  if (!c.test_fn) return test_step_body(c, x, y);
  std::vector<Tensor> out = c.test_fn->call({x, y});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> Model::train_step_body(Compiled& c, const Tensor& x, const Tensor& y,
                                                  const Tensor& weight) {
  Context& ctx = context();
  GradientTape tape(ctx);
  Tensor y_pred = (*this)(x, true);
  Tensor loss = loss_of(c, y, y_pred);
  // A replica's objective is its share of the global batch's mean loss, so that the replicas'
  // gradients summed are the gradient of the global batch (tf.nn.compute_average_loss).
  Tensor objective = weight.valid() ? op::mul(ctx, loss, op::cast(ctx, weight, loss.dtype())) : loss;
  std::vector<Ref<Variable>> vars = trainable_weights();
  std::vector<Tensor> grads = tape.gradient(objective, vars);
  if (distribute::ReplicaContext* rc = distribute::ReplicaContext::current())
    grads = rc->all_reduce(distribute::Reduction::Sum, grads);
  c.options.optimizer->apply_gradients(grads, vars);
  return {loss, y_pred};
}

void Model::check_mirrored(Compiled& c, const Tensor& x, const char* fn) {
  distribute::MirroredStrategy& s = *c.options.strategy;
  if (!built()) {
    auto scope = s.scope();
    std::vector<Tensor> first = s.split_batch(x, fn);
    (*this)(first[0], false);
  }
  const int n = s.num_local_replicas();
  for (const Ref<Variable>& v : weights())
    if (v->num_components() != n)
      raise(Code::FailedPrecondition,
            "{}: {}: weight '{}' has {} component(s) for a strategy of {} replicas; create and build the model "
            "inside strategy.scope()",
            fn, describe(), v->name(), v->num_components(), n);
  if (c.options.optimizer->iterations().num_components() != n)
    raise(Code::FailedPrecondition,
          "{}: {}: the optimizer was made outside the strategy's scope; create it inside strategy.scope()", fn,
          describe());
  if (!c.weights_broadcast) {
    // Workers may have initialized the weights from different seeds: rank 0's win, before the
    // first step of this configuration (every worker reaches this point at the same call).
    s.broadcast_variables(weights(), fn);
    c.weights_broadcast = true;
  }
}

std::pair<Tensor, Tensor> Model::replicated_step(Compiled& c, const Tensor& x, const Tensor& y, bool training) {
  const char* fn = training ? "train_step" : "test_step";
  Context& ctx = context();
  distribute::MirroredStrategy& s = *c.options.strategy;
  check_mirrored(c, x, fn);
  const double rows = static_cast<double>(batch_samples(x));
  if (!training && rows < s.num_replicas()) {
    // A last batch with fewer rows than replicas (evaluate): replica 0's weights on its device,
    // outside the replicas (no collective in a test step).
    Device& dev0 = *s.devices()[0];
    std::pair<Tensor, Tensor> step = local_test_step(c, tensor_on_device(x, dev0), tensor_on_device(y, dev0));
    return {tensor_on_device(step.first, ctx.cpu()), tensor_on_device(step.second, ctx.cpu())};
  }
  std::vector<Tensor> xs = s.split_batch(x, fn), ys = s.split_batch(y, fn);
  auto out = s.run_multi([&](distribute::ReplicaContext& rc) {
    const size_t r = static_cast<size_t>(rc.local_replica());
    const double share = static_cast<double>(batch_samples(xs[r])) / rows;
    std::pair<Tensor, Tensor> step =
        training ? local_train_step(c, xs[r], ys[r], op::scalar(ctx, rc.device(), DType::Float32, share))
                 : local_test_step(c, xs[r], ys[r]);
    return std::vector<Tensor>{step.first, step.second};
  });
  // The global loss: the replicas' mean losses weighted by their rows, in replica order (summed
  // over the workers too, as are the predictions: every worker's metrics see the global batch).
  double loss = 0;
  std::vector<Tensor> preds;
  for (size_t r = 0; r < out.size(); ++r) {
    loss += host_scalar(ctx, out[r][0]) * static_cast<double>(batch_samples(xs[r])) / rows;
    preds.push_back(out[r][1]);
  }
  loss = s.sum_over_workers(loss, fn);
  Tensor y_pred = s.gather_batch(preds, batch_samples(x), fn);
  if (training && s.checks_replicas()) s.check_replicas_identical(weights(), fn);
  return {op::scalar(ctx, ctx.cpu(), DType::Float64, loss), y_pred};
}

std::pair<Tensor, Tensor> Model::test_step_body(Compiled& c, const Tensor& x, const Tensor& y) {
  Tensor y_pred = (*this)(x, false);
  return {loss_of(c, y, y_pred), y_pred};
}

void Model::update_metrics(Compiled& c, Metrics& m, const Tensor& loss, const Tensor& y, const Tensor& y_pred) {
  Context& ctx = context();
  const double n = static_cast<double>(batch_samples(y_pred));
  m.loss->add(host_scalar(ctx, loss) * n, n);
  for (CompiledMetric& metric : m.metrics) {
    switch (metric.kind) {
      case MetricKind::SparseAccuracy:
        static_cast<nn::Accuracy&>(*metric.state).update(y, y_pred);
        break;
      case MetricKind::BinaryAccuracy: {
        // Keras' binary_accuracy: a prediction above the threshold (0.5, or 0 for logits) is 1.
        Tensor threshold = op::scalar_like(ctx, y_pred, c.options.from_logits ? 0.0 : 0.5);
        Tensor predicted = op::cast(ctx, op::greater(ctx, y_pred, threshold), DType::Float32);
        static_cast<nn::Accuracy&>(*metric.state).update(op::cast(ctx, y, DType::Float32), predicted);
        break;
      }
      case MetricKind::MeanSquared:
      case MetricKind::MeanAbsolute: {
        Tensor diff = op::sub(ctx, op::cast(ctx, y, y_pred.dtype()), y_pred);
        Tensor err = metric.kind == MetricKind::MeanSquared ? op::square(ctx, diff) : op::run1(ctx, "Abs", {diff});
        static_cast<nn::Mean&>(*metric.state).update(err);
        break;
      }
    }
  }
}

namespace {

// Holds a model's busy lock for one call of fit, evaluate or predict.
std::unique_lock<std::mutex> claim(std::mutex& busy, const char* fn, const std::string& model) {
  std::unique_lock<std::mutex> lock(busy, std::try_to_lock);
  if (!lock.owns_lock())
    raise(Code::FailedPrecondition, "{}: {} is already training, evaluating or predicting on another call", fn,
          model);
  return lock;
}

// The (x, y) of a batch: its first two components.
std::pair<Tensor, Tensor> xy(const data::Element& e, const char* fn) {
  if (e.size() < 2)
    raise(Code::InvalidArgument, "{}: a batch needs x and y components, got {} component(s)", fn, e.size());
  return {e[0], e[1]};
}

Verbose resolve(Verbose v) {
  if (v != Verbose::Auto) return v;
  return is_terminal(stdout) ? Verbose::Bar : Verbose::EpochLines;
}

}  // namespace

Logs Model::train_on_batch(const Tensor& x, const Tensor& y) {
  const char* fn = "train_on_batch";
  std::shared_ptr<Compiled> c = compiled_config(fn);
  auto busy = claim(busy_, fn, describe());
  auto [loss, y_pred] = train_step(*c, x, y);
  std::unique_ptr<Metrics> m = c->make_metrics(context());
  update_metrics(*c, *m, loss, y, y_pred);
  return m->logs();
}

Logs Model::test_on_batch(const Tensor& x, const Tensor& y) {
  const char* fn = "test_on_batch";
  std::shared_ptr<Compiled> c = compiled_config(fn);
  auto busy = claim(busy_, fn, describe());
  auto [loss, y_pred] = test_step(*c, x, y);
  std::unique_ptr<Metrics> m = c->make_metrics(context());
  update_metrics(*c, *m, loss, y, y_pred);
  return m->logs();
}

Logs Model::run_test(Compiled& c, const Data& data, const EvaluateOptions& options, const char* fn,
                     const std::vector<Ref<Callback>>& callbacks) {
  if (options.steps < 0) raise(Code::InvalidArgument, "{}: steps must be >= 0, got {}", fn, options.steps);
  data::DatasetPtr ds = batches(context(), data, options.batch_size, false, 0, fn);
  auto it = make_ref<data::IteratorObject>(ds, 0);
  std::unique_ptr<Metrics> m = c.make_metrics(context());
  each(callbacks, [&](Callback& cb) { cb.on_test_begin(*this); });
  data::Element e;
  for (int64_t batch = 0; (options.steps == 0 || batch < options.steps) && it->next(e); ++batch) {
    auto [x, y] = xy(e, fn);
    auto [loss, y_pred] = test_step(c, x, y);
    update_metrics(c, *m, loss, y, y_pred);
    if (!callbacks.empty()) {
      Logs l = m->logs();
      each(callbacks, [&](Callback& cb) { cb.on_test_batch_end(*this, batch, l); });
    }
  }
  Logs logs = m->logs();
  each(callbacks, [&](Callback& cb) { cb.on_test_end(*this, logs); });
  return logs;
}

Logs Model::evaluate(const Data& data, const EvaluateOptions& options) {
  const char* fn = "evaluate";
  std::shared_ptr<Compiled> c = compiled_config(fn);
  auto busy = claim(busy_, fn, describe());
  std::vector<Ref<Callback>> callbacks = options.callbacks;
  return run_test(*c, data, options, fn, callbacks);
}

Tensor Model::predict(const Data& data, const PredictOptions& options) {
  const char* fn = "predict";
  if (options.steps < 0) raise(Code::InvalidArgument, "{}: steps must be >= 0, got {}", fn, options.steps);
  auto busy = claim(busy_, fn, describe());
  Data inputs = data;
  inputs.y = Tensor();  // only x is needed
  data::DatasetPtr ds = batches(context(), inputs, options.batch_size, false, 0, fn);
  auto it = make_ref<data::IteratorObject>(ds, 0);
  std::vector<Tensor> outputs;
  data::Element e;
  std::shared_ptr<Compiled> c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    c = compiled_;
  }
  for (int64_t batch = 0; (options.steps == 0 || batch < options.steps) && it->next(e); ++batch) {
    if (e.empty()) raise(Code::InvalidArgument, "{}: a batch has no components", fn);
    if (c && c->options.strategy) {
      // Each replica predicts its part of the batch; the parts are joined in replica order.
      distribute::MirroredStrategy& s = *c->options.strategy;
      check_mirrored(*c, e[0], fn);
      if (batch_samples(e[0]) < s.num_replicas()) {  // a last batch smaller than the replica count
        outputs.push_back(tensor_on_device((*this)(tensor_on_device(e[0], *s.devices()[0]), false), context().cpu()));
        continue;
      }
      std::vector<Tensor> xs = s.split_batch(e[0], fn);
      distribute::PerReplica parts = s.run(
          [&](distribute::ReplicaContext& rc) { return (*this)(xs[static_cast<size_t>(rc.local_replica())], false); });
      outputs.push_back(s.gather_batch(parts.values, batch_samples(e[0]), fn));
      continue;
    }
    outputs.push_back((*this)(e[0], false));
  }
  if (outputs.empty()) raise(Code::InvalidArgument, "{}: the data has no batches", fn);
  if (outputs.size() == 1) return outputs[0];
  AttrValue axis;
  axis.kind = AttrKind::Int;
  axis.i = 0;
  return op::run1(context(), "ConcatV2", outputs, {NamedAttr{"axis", axis}});
}

History Model::fit(const Data& data, const FitOptions& o) {
  const char* fn = "fit";
  std::shared_ptr<Compiled> c = compiled_config(fn);
  if (o.epochs < 1 || o.initial_epoch < 0 || o.initial_epoch >= o.epochs)
    raise(Code::InvalidArgument, "{}: need 0 <= initial_epoch < epochs, got initial_epoch {} and epochs {}", fn,
          o.initial_epoch, o.epochs);
  if (o.steps_per_epoch < 0 || o.validation_freq < 1)
    raise(Code::InvalidArgument, "{}: steps_per_epoch must be >= 0 and validation_freq >= 1, got {} and {}", fn,
          o.steps_per_epoch, o.validation_freq);
  auto busy = claim(busy_, fn, describe());
  data::DatasetPtr ds = batches(context(), data, o.batch_size, o.shuffle, o.seed, fn);
  EvaluateOptions val_options;
  val_options.batch_size = o.validation_batch_size > 0 ? o.validation_batch_size : o.batch_size;

  std::vector<Ref<Callback>> callbacks = o.callbacks;
  const Verbose verbose = resolve(o.verbose);
  if (c->options.strategy && !c->options.strategy->is_chief()) {
    // A multi-worker job's other ranks neither print nor write events or checkpoints: rank 0 does.
    callbacks.erase(std::remove_if(callbacks.begin(), callbacks.end(),
                                   [](const Ref<Callback>& cb) { return cb->chief_only(); }),
                    callbacks.end());
  } else if (verbose != Verbose::Silent) {
    callbacks.push_back(progress_bar(verbose));
  }
  const int64_t cardinality = ds->cardinality();
  const int64_t steps = o.steps_per_epoch > 0 ? o.steps_per_epoch : (cardinality >= 0 ? cardinality : -1);
  if (o.steps_per_epoch == 0 && cardinality == data::kInfinite)
    raise(Code::InvalidArgument, "{}: the dataset is infinite (repeated): give steps_per_epoch", fn);

  Metrics& metrics = *c->train_metrics;
  auto state = make_ref<FitState>(context());
  {
    auto tracked = Trackable::create(context());
    tracked->set("loss", metrics.loss, fn);
    for (CompiledMetric& m : metrics.metrics) tracked->set(m.name, m.state, fn);
    state->set("metrics", tracked, fn);
  }
  state->set_position(o.initial_epoch, 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fit_state_ = state;
  }
  stop_training_.store(false);
  metrics.reset();

  History history;
  Logs last;
  auto run = [&] {
    each(callbacks, [&](Callback& cb) { cb.set_params(o.epochs, steps); });
    each(callbacks, [&](Callback& cb) { cb.on_train_begin(*this); });
    // A callback may have restored a position (BackupAndRestore); the iterator is made after that,
    // so a restore pending on the edge "iterator" gives it its saved position.
    const int64_t first_epoch = std::max(o.initial_epoch, state->epoch());
    int64_t step = first_epoch == state->epoch() ? state->step() : 0;
    state->set_iterator(make_ref<data::IteratorObject>(ds, o.steps_per_epoch > 0 ? 0 : first_epoch));
    for (int64_t epoch = first_epoch; epoch < o.epochs && !stopping(); ++epoch) {
      if (step == 0) metrics.reset();
      each(callbacks, [&](Callback& cb) { cb.on_epoch_begin(*this, epoch); });
      data::Element e;
      for (; steps < 0 || step < steps; ++step) {
        if (!state->iterator()->next(e)) {
          if (o.steps_per_epoch > 0) {
            context().log().log(LogLevel::Warning,
                                fmt::format("fit: the data ran out at epoch {}, step {}: training stops (give a "
                                            "repeated dataset, or fewer steps_per_epoch)",
                                            epoch, step));
            stop_training();
          }
          break;
        }
        auto [x, y] = xy(e, fn);
        each(callbacks, [&](Callback& cb) { cb.on_train_batch_begin(*this, step); });
        auto [loss, y_pred] = train_step(*c, x, y);
        update_metrics(*c, metrics, loss, y, y_pred);
        state->set_position(epoch, step + 1);
        Logs logs = metrics.logs();
        each(callbacks, [&](Callback& cb) { cb.on_train_batch_end(*this, step, logs); });
        if (stopping()) {
          ++step;
          break;
        }
      }
      Logs logs = metrics.logs();
      if (!o.validation.empty() && (epoch + 1) % o.validation_freq == 0) {
        const Logs val = run_test(*c, o.validation, val_options, fn, callbacks);
        for (const auto& [k, v] : val.items()) logs.set("val_" + k, v);
      }
      // The position after this epoch: the next epoch's first batch, from a fresh pass (what a
      // backup saved in on_epoch_end must restore).
      step = 0;
      state->set_position(epoch + 1, 0);
      if (o.steps_per_epoch == 0 && epoch + 1 < o.epochs)
        state->set_iterator(make_ref<data::IteratorObject>(ds, epoch + 1));
      each(callbacks, [&](Callback& cb) { cb.on_epoch_end(*this, epoch, logs); });
      history.append(epoch, logs);
      last = logs;
    }
  };
  try {
    run();
  } catch (...) {
    // Callbacks close their files and writers even when training fails.
    for (const Ref<Callback>& cb : callbacks) {
      try {
        cb->on_train_error(*this);
      } catch (...) {  // the first error is the one to report
      }
    }
    throw;
  }
  each(callbacks, [&](Callback& cb) { cb.on_train_end(*this, last); });
  return history;
}

}  // namespace cairn::keras
