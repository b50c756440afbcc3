// Losses (tf.keras.losses) and metrics (tf.keras.metrics). Losses return the mean over every
// element of the per-example loss (Keras' default SUM_OVER_BATCH_SIZE reduction), as a scalar of
// the predictions' dtype, built from registered ops so the tape differentiates them.
#pragma once

#include <mutex>
#include <string>

#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"

namespace cairn::nn {

Tensor mean_squared_error(Context& ctx, const Tensor& y_true, const Tensor& y_pred);
Tensor mean_absolute_error(Context& ctx, const Tensor& y_true, const Tensor& y_pred);
// y_true in {0, 1} (any float), y_pred probabilities (clipped to [eps, 1-eps]) or logits.
Tensor binary_crossentropy(Context& ctx, const Tensor& y_true, const Tensor& y_pred, bool from_logits = false);
// labels: int32/int64 class indices of shape [batch...]; logits (or probabilities): [batch..., classes].
// Out-of-range labels are InvalidArgument naming the label.
Tensor sparse_categorical_crossentropy(Context& ctx, const Tensor& labels, const Tensor& logits, bool from_logits = true);

// A streaming metric: float64 "total" and "count" variables (edges, so checkpoints keep them).
class Metric : public Trackable {
 public:
  double result();
  void reset();
  std::string describe() const override;

 protected:
  Metric(Context& ctx, std::string name);
  void accumulate(double total, double count);

 private:
  std::string name_;
  std::mutex mu_;  // keeps total and count consistent with each other across threads
  Ref<Variable> total_, count_;
};

// tf.keras.metrics.Mean: the mean of every value passed to update.
class Mean final : public Metric {
 public:
  static Ref<Mean> create(Context& ctx, std::string name = "mean");
  Mean(Context& ctx, std::string name) : Metric(ctx, std::move(name)) {}
  void update(const Tensor& values);  // any numeric dtype, any shape
  // Adds a total over `count` values already summed on the host (a batch's loss times its size).
  void add(double total, double count) { accumulate(total, count); }
};

// Accuracy: with integer labels [batch] and scores [batch, classes], the fraction whose argmax is
// the label (sparse_categorical_accuracy); with two tensors of one shape, the fraction equal.
class Accuracy final : public Metric {
 public:
  static Ref<Accuracy> create(Context& ctx, std::string name = "accuracy");
  Accuracy(Context& ctx, std::string name) : Metric(ctx, std::move(name)) {}
  void update(const Tensor& y_true, const Tensor& y_pred);
};

}  // namespace cairn::nn
