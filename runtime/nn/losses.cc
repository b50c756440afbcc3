// Keras losses as means over every element, from registered ops.
#include "runtime/nn/losses.h"

#include "runtime/core/error.h"
#include "runtime/eager/ops.h"

namespace cairn::nn {
namespace {

// Keras' backend epsilon: probabilities are clipped to [kEpsilon, 1 - kEpsilon].
constexpr double kEpsilon = 1e-7;

void require_valid(const char* fn, const char* what, const Tensor& t) {
  if (!t.valid()) raise(Code::InvalidArgument, "{}: {} is empty (invalid)", fn, what);
}

void require_floating(const char* fn, const char* what, const Tensor& t) {
  require_valid(fn, what, t);
  if (!dtype_is_floating(t.dtype()))
    raise(Code::InvalidArgument, "{}: {} must have a floating dtype, got {}", fn, what, dtype_name(t.dtype()));
}

// y_true cast to y_pred's floating dtype, after checking both have one shape.
Tensor matching_targets(Context& ctx, const char* fn, const Tensor& y_true, const Tensor& y_pred) {
  require_valid(fn, "y_true", y_true);
  require_floating(fn, "y_pred", y_pred);
  if (y_true.shape() != y_pred.shape())
    raise(Code::InvalidArgument, "{}: y_true shape {} does not match y_pred shape {}", fn, y_true.shape().str(),
          y_pred.shape().str());
  return op::cast(ctx, y_true, y_pred.dtype());
}

Tensor clip_probabilities(Context& ctx, const Tensor& p) {
  return run_op(ctx, "ClipByValue", {p, op::scalar_like(ctx, p, kEpsilon), op::scalar_like(ctx, p, 1 - kEpsilon)})[0];
}

// Every label in [0, classes): OneHot would silently give a zero row for any other. Reads the
// labels on the host (a loss is not a gradient function, so this is allowed).
void check_labels(Context& ctx, const char* fn, const Tensor& labels, int64_t classes) {
  // Inside a traced function the labels have no values yet; the graph cannot check them (an
  // out-of-range label then gives an all-zero one-hot row, as TF's GPU kernels do).
  if (labels.device()->kind() == DeviceKind::Symbolic) return;
  Tensor host = host_values(op::cast(ctx, labels, DType::Int64), ctx.cpu(), fn);
  const int64_t* p = host.data<int64_t>();
  for (int64_t i = 0; i < host.num_elements(); ++i)
    if (p[i] < 0 || p[i] >= classes)
      raise(Code::InvalidArgument, "{}: label {} (element {}) is out of range [0, {})", fn, p[i], i, classes);
}

}  // namespace

Tensor mean_squared_error(Context& ctx, const Tensor& y_true, const Tensor& y_pred) {
  Tensor t = matching_targets(ctx, "mean_squared_error", y_true, y_pred);
  return op::all_mean(ctx, op::square(ctx, op::sub(ctx, y_pred, t)));
}

Tensor mean_absolute_error(Context& ctx, const Tensor& y_true, const Tensor& y_pred) {
  Tensor t = matching_targets(ctx, "mean_absolute_error", y_true, y_pred);
  return op::all_mean(ctx, run_op(ctx, "Abs", {op::sub(ctx, y_pred, t)})[0]);
}

Tensor binary_crossentropy(Context& ctx, const Tensor& y_true, const Tensor& y_pred, bool from_logits) {
  Tensor z = matching_targets(ctx, "binary_crossentropy", y_true, y_pred);
  if (from_logits) {
    // max(x, 0) - x * z + log(1 + exp(-|x|)): never exponentiates a large positive number.
    const Tensor& x = y_pred;
    Tensor softplus_neg_abs = run_op(ctx, "Log1p", {op::exp(ctx, op::neg(ctx, run_op(ctx, "Abs", {x})[0]))})[0];
    Tensor loss = op::add(ctx, op::sub(ctx, op::relu(ctx, x), op::mul(ctx, x, z)), softplus_neg_abs);
    return op::all_mean(ctx, loss);
  }
  // -(z * log(p + eps) + (1 - z) * log(1 - p + eps)) with p clipped, as Keras computes it.
  Tensor p = clip_probabilities(ctx, y_pred);
  Tensor eps = op::scalar_like(ctx, p, kEpsilon);
  Tensor one = op::scalar_like(ctx, p, 1);
  Tensor pos = op::mul(ctx, z, op::log(ctx, op::add(ctx, p, eps)));
  Tensor neg = op::mul(ctx, op::sub(ctx, one, z), op::log(ctx, op::add(ctx, op::sub(ctx, one, p), eps)));
  return op::neg(ctx, op::all_mean(ctx, op::add(ctx, pos, neg)));
}

Tensor sparse_categorical_crossentropy(Context& ctx, const Tensor& labels, const Tensor& logits, bool from_logits) {
  const char* fn = "sparse_categorical_crossentropy";
  require_valid(fn, "labels", labels);
  require_floating(fn, "logits", logits);
  if (labels.dtype() != DType::Int32 && labels.dtype() != DType::Int64)
    raise(Code::InvalidArgument, "{}: labels must be int32 or int64, got {}", fn, dtype_name(labels.dtype()));
  const int r = logits.rank();
  bool shapes_fit = r >= 1 && labels.rank() == r - 1;
  for (int i = 0; shapes_fit && i < r - 1; ++i) shapes_fit = labels.shape()[i] == logits.shape()[i];
  if (!shapes_fit)
    raise(Code::InvalidArgument, "{}: labels of shape {} do not fit {} of shape {} (expected [batch...] and [batch..., classes])",
          fn, labels.shape().str(), from_logits ? "logits" : "probabilities", logits.shape().str());
  const int64_t classes = logits.shape()[r - 1];
  check_labels(ctx, fn, labels, classes);
  // Probabilities go through log and then log-softmax, which renormalizes them (Keras does the
  // same), so rows that do not sum to one are treated as unnormalized.
  Tensor scores = from_logits ? logits : op::log(ctx, clip_probabilities(ctx, logits));
  Tensor log_probs = op::log_softmax(ctx, scores, -1);
  Tensor picked = op::sum(ctx, op::mul(ctx, op::one_hot(ctx, labels, classes, logits.dtype()), log_probs), {-1});
  return op::neg(ctx, op::all_mean(ctx, picked));
}

// ---- Metrics ----

namespace {
Ref<Variable> metric_variable(Context& ctx, const char* name) {
  VariableOptions options;
  options.name = name;
  options.trainable = false;
  options.device = &ctx.cpu();
  options.mirrored = false;  // shared by a strategy's replicas: their updates add up (atomic assign_add)
  return Variable::create(ctx, op::filled(ctx, ctx.cpu(), DType::Float64, Shape{}, 0), options, "Metric");
}

Tensor f64_scalar(Context& ctx, double v) { return op::scalar(ctx, ctx.cpu(), DType::Float64, v); }

// The sum of every element as a double, read on the host.
double host_sum(Context& ctx, const Tensor& t) {
  Tensor s = host_values(op::all_sum(ctx, op::cast(ctx, t, DType::Float64)), ctx.cpu(), "Metric::update");
  return *s.data<double>();
}
}  // namespace

Metric::Metric(Context& ctx, std::string name)
    : Trackable(ctx), name_(std::move(name)), total_(metric_variable(ctx, "total")),
      count_(metric_variable(ctx, "count")) {
  set("total", total_, "Metric");
  set("count", count_, "Metric");
}

double Metric::result() {
  std::lock_guard<std::mutex> lock(mu_);
  const double count = *host_values(count_->read(), context().cpu(), "Metric::result").data<double>();
  const double total = *host_values(total_->read(), context().cpu(), "Metric::result").data<double>();
  return count == 0 ? 0 : total / count;  // Keras' divide_no_nan
}

void Metric::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  total_->assign(f64_scalar(context(), 0), "Metric::reset");
  count_->assign(f64_scalar(context(), 0), "Metric::reset");
}

void Metric::accumulate(double total, double count) {
  std::lock_guard<std::mutex> lock(mu_);
  total_->assign_add(f64_scalar(context(), total), "Metric::update");
  count_->assign_add(f64_scalar(context(), count), "Metric::update");
}

std::string Metric::describe() const { return "metric '" + name_ + "'"; }

Ref<Mean> Mean::create(Context& ctx, std::string name) { return make_ref<Mean>(ctx, std::move(name)); }

void Mean::update(const Tensor& values) {
  require_valid("Mean::update", "values", values);
  if (!dtype_is_floating(values.dtype()) && !dtype_is_integer(values.dtype()))
    raise(Code::InvalidArgument, "Mean::update: values must be numeric, got {}", dtype_name(values.dtype()));
  accumulate(host_sum(context(), values), static_cast<double>(values.num_elements()));
}

Ref<Accuracy> Accuracy::create(Context& ctx, std::string name) { return make_ref<Accuracy>(ctx, std::move(name)); }

void Accuracy::update(const Tensor& y_true, const Tensor& y_pred) {
  const char* fn = "Accuracy::update";
  require_valid(fn, "y_true", y_true);
  require_valid(fn, "y_pred", y_pred);
  Context& ctx = context();
  Tensor predicted = y_pred;
  const bool sparse = dtype_is_integer(y_true.dtype()) && y_pred.rank() == y_true.rank() + 1;
  if (sparse) {
    for (int i = 0; i < y_true.rank(); ++i)
      if (y_true.shape()[i] != y_pred.shape()[i])
        raise(Code::InvalidArgument, "{}: labels of shape {} do not fit scores of shape {}", fn, y_true.shape().str(),
              y_pred.shape().str());
    predicted = op::argmax(ctx, y_pred, -1, DType::Int64);
  } else if (y_true.shape() != y_pred.shape()) {
    raise(Code::InvalidArgument,
          "{}: y_true shape {} fits neither y_pred shape {} nor [..., classes] scores with integer labels", fn,
          y_true.shape().str(), y_pred.shape().str());
  }
  Tensor hits = op::equal(ctx, op::cast(ctx, y_true, DType::Float64), op::cast(ctx, predicted, DType::Float64));
  accumulate(host_sum(ctx, hits), static_cast<double>(y_true.num_elements()));
}

}  // namespace cairn::nn
