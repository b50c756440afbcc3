// tf.keras.Model for Sequential models: compile, fit, evaluate, predict, train_on_batch and
// test_on_batch, with callbacks (callbacks.h).
//
// A Model is a Sequential (so it is called, summarized and checkpointed like one) that also holds a
// training configuration. compile() sets the optimizer as the model's edge "optimizer", as tf_keras
// does, so a checkpoint of the model alone saves the optimizer and its slots too.
//
// The training step (forward pass under a gradient tape, the loss, the gradients of the trainable
// weights, the optimizer's update) runs as a compiled function (graph/function.h) unless
// run_eagerly: traced once per batch shape, then replayed. The metrics (a weighted mean of the loss,
// and the compiled metrics) are updated eagerly from the step's outputs.
//
// Not safe to train, evaluate or predict one model from two threads at once: FailedPrecondition.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/data/iterator_object.h"
#include "runtime/distribute/strategy.h"
#include "runtime/graph/function.h"
#include "runtime/keras/callback.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/losses.h"
#include "runtime/optim/optimizer.h"

namespace cairn::keras {

// Named values in a fixed order: "loss", then each metric, then "val_loss", "val_...". What the
// callbacks see and what evaluate returns.
class Logs {
 public:
  void set(const std::string& name, double value);
  std::optional<double> get(std::string_view name) const;
  const std::vector<std::pair<std::string, double>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  // "loss: 0.1234 - accuracy: 0.9500", Keras' progress format.
  std::string text() const;

 private:
  std::vector<std::pair<std::string, double>> items_;
};

// What fit returns: the epoch numbers run and, per log name, one value per epoch (Keras'
// History.history). An epoch without validation has no "val_" entry: its lists are shorter.
struct History {
  std::vector<int64_t> epochs;
  std::vector<std::pair<std::string, std::vector<double>>> values;
  const std::vector<double>* get(std::string_view name) const;
  void append(int64_t epoch, const Logs& logs);
};

// The data of fit, evaluate and predict: a dataset whose elements are (x, y) (more components are
// ignored; predict uses only x), or in-memory tensors x and y batched by the call's batch_size
// along their first dimension.
struct Data {
  data::DatasetPtr dataset;
  Tensor x, y;
  bool empty() const { return !dataset && !x.valid(); }
};

struct CompileOptions {
  Ref<optim::Optimizer> optimizer;  // required
  // "sparse_categorical_crossentropy", "binary_crossentropy", "mean_squared_error" ("mse"),
  // "mean_absolute_error" ("mae").
  std::string loss;
  bool from_logits = true;           // for the crossentropy losses
  // "accuracy" (sparse or binary after the loss, Keras' rule), "mae", "mse".
  std::vector<std::string> metrics;
  bool run_eagerly = false;
  // Data-parallel replicas (runtime/distribute): null picks up the strategy whose scope is active
  // on the compiling thread (tf.distribute: compile inside strategy.scope()). With a strategy, fit,
  // evaluate, predict and the *_on_batch calls split each global batch over its replicas, run the
  // (compiled) step on every replica in parallel with the gradients all-reduced inside it, and
  // combine losses and predictions. The model's weights and the optimizer must be made in the
  // strategy's scope (FailedPrecondition otherwise); a model not yet built is built in it.
  Ref<distribute::MirroredStrategy> strategy;
};

enum class Verbose { Silent = 0, Bar = 1, EpochLines = 2, Auto = -1 };  // Auto: a bar on a terminal

struct FitOptions {
  int64_t epochs = 1;
  int64_t batch_size = 32;        // in-memory tensors only
  int64_t initial_epoch = 0;
  // Batches per epoch. 0: until the data ends, with a fresh pass over a dataset each epoch. > 0: one
  // iterator runs on across epochs (a repeated dataset), and training stops if it ends early.
  int64_t steps_per_epoch = 0;
  bool shuffle = true;            // in-memory tensors only: reshuffled each epoch, seeded by `seed`
  int64_t seed = 0;
  Data validation;                // optional
  int64_t validation_batch_size = 0;  // 0: batch_size
  int64_t validation_freq = 1;    // validate after every N-th epoch
  Verbose verbose = Verbose::Auto;
  std::vector<Ref<Callback>> callbacks;
};

struct EvaluateOptions {
  int64_t batch_size = 32;        // in-memory tensors only
  int64_t steps = 0;              // 0: until the data ends
  Verbose verbose = Verbose::Silent;
  std::vector<Ref<Callback>> callbacks;
};

struct PredictOptions {
  int64_t batch_size = 32;
  int64_t steps = 0;
};

// Where fit stands, as tracked state (what BackupAndRestore checkpoints with the model): the epoch
// being run, the batches of it already trained, the iterator that yields the next batch, and the
// metrics. Edges "epoch", "step" (int64 variables), "iterator", "metrics/<name>".
class FitState final : public Trackable {
 public:
  explicit FitState(Context& ctx);
  int64_t epoch() const;
  int64_t step() const;
  void set_position(int64_t epoch, int64_t step);
  Ref<data::IteratorObject> iterator() const { return iterator_; }
  void set_iterator(Ref<data::IteratorObject> it);

 private:
  Ref<Variable> epoch_, step_;
  Ref<data::IteratorObject> iterator_;
};

class Model final : public nn::Sequential {
 public:
  static Ref<Model> create(Context& ctx, std::string_view name = {});
  Model(Context& ctx, std::string_view name);

  // Validates and stores the configuration: InvalidArgument naming the model for a null optimizer,
  // an unknown loss or metric. Compiling again replaces the configuration (the step is retraced).
  void compile(const CompileOptions& options);
  bool compiled() const;
  Ref<optim::Optimizer> optimizer() const;
  // The configuration compile() was given; FailedPrecondition naming `fn` before compile.
  CompileOptions compile_options(const char* fn = "compile_options") const;
  // The metric names the logs carry, in order: "loss", then the compiled metrics.
  std::vector<std::string> metric_names() const;

  History fit(const Data& data, const FitOptions& options);
  Logs evaluate(const Data& data, const EvaluateOptions& options);
  // The model's outputs for every batch of x, concatenated along the first dimension.
  Tensor predict(const Data& data, const PredictOptions& options);
  // One step on one batch; the logs are that batch's loss and metrics.
  Logs train_on_batch(const Tensor& x, const Tensor& y);
  Logs test_on_batch(const Tensor& x, const Tensor& y);

  // Set by a callback to end fit after the current batch (Keras' model.stop_training).
  void stop_training() { stop_training_.store(true); }
  bool stopping() const { return stop_training_.load(); }

  // fit's state while fit runs (and after it, until the next fit); null before the first fit.
  Ref<FitState> fit_state() const;
  // The compiled training step (null when run_eagerly or before the first compiled step).
  Ref<graph::Function> train_function() const;
  // The global step: the optimizer's iterations.
  int64_t iterations() const;

 private:
  struct Compiled;
  struct Metrics;

  std::shared_ptr<Compiled> compiled_config(const char* fn) const;
  // The loss and the predictions of one batch: the compiled step's replay, or with run_eagerly the
  // step's body itself. A training step builds the model first (variables are made eagerly).
  std::pair<Tensor, Tensor> train_step(Compiled& c, const Tensor& x, const Tensor& y);
  std::pair<Tensor, Tensor> test_step(Compiled& c, const Tensor& x, const Tensor& y);
  // One device's step (a replica's, or the whole batch's): the replay, or the body with run_eagerly.
  std::pair<Tensor, Tensor> local_train_step(Compiled& c, const Tensor& x, const Tensor& y, const Tensor& weight);
  std::pair<Tensor, Tensor> local_test_step(Compiled& c, const Tensor& x, const Tensor& y);
  // The bodies the compiled functions trace.
  // `weight` (a float32 scalar, or empty): a replica's share of the global batch, which scales
  // its loss before the gradients; inside a replica the gradients are then summed across replicas.
  std::pair<Tensor, Tensor> train_step_body(Compiled& c, const Tensor& x, const Tensor& y,
                                            const Tensor& weight = Tensor());
  std::pair<Tensor, Tensor> test_step_body(Compiled& c, const Tensor& x, const Tensor& y);
  // The step on every replica of the compiled strategy: the batch split, the per-replica step run,
  // the loss combined (weighted by rows) and the predictions concatenated on the CPU.
  std::pair<Tensor, Tensor> replicated_step(Compiled& c, const Tensor& x, const Tensor& y, bool training);
  // Builds the model in the strategy's scope if needed and checks that the weights and the
  // optimizer are mirrored on its replicas.
  void check_mirrored(Compiled& c, const Tensor& x, const char* fn);
  Tensor loss_of(const Compiled& c, const Tensor& y, const Tensor& y_pred);
  void update_metrics(Compiled& c, Metrics& m, const Tensor& loss, const Tensor& y, const Tensor& y_pred);
  Logs run_test(Compiled& c, const Data& data, const EvaluateOptions& options, const char* fn,
                const std::vector<Ref<Callback>>& callbacks);

  mutable std::mutex mu_;
  std::shared_ptr<Compiled> compiled_;
  Ref<FitState> fit_state_;
  std::mutex busy_;  // held by fit, evaluate and predict
  std::atomic<bool> stop_training_{false};
};

// The batches of `data`: the dataset as it is, or the tensors sliced and batched (shuffled with
// `seed` per iteration when `shuffle`). InvalidArgument naming `fn` for empty data, a batch_size
// below 1, or tensors whose first dimensions differ.
data::DatasetPtr batches(Context& ctx, const Data& data, int64_t batch_size, bool shuffle, int64_t seed,
                         const char* fn);

}  // namespace cairn::keras
