// The built-in callbacks of fit and evaluate (tf.keras.callbacks); the base class is callback.h.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/manager.h"
#include "runtime/keras/model.h"
#include "runtime/summary/writer.h"

namespace cairn::keras {

// Which way a monitored value improves. Auto: "max" for names containing "acc", else "min" (Keras).
enum class Mode { Auto, Min, Max };

// Tracks the best value of a monitored log entry.
class Monitor {
 public:
  Monitor(std::string name, Mode mode, double min_delta = 0);
  const std::string& name() const { return name_; }
  // The monitored value in `logs`; nullopt (and one warning to the log) when absent.
  std::optional<double> value(Model& model, const Logs& logs);
  bool improves(double value) const;  // on the best so far by more than min_delta
  void record(double value) { best_ = value; has_best_ = true; }
  void reset() { has_best_ = false; }
  std::optional<double> best() const { return has_best_ ? std::optional<double>(best_) : std::nullopt; }

 private:
  std::string name_;
  bool maximize_;
  double min_delta_;
  double best_ = 0;
  bool has_best_ = false;
  bool warned_ = false;
};

// Saves through a checkpoint manager into `directory` (ckpt-<N>, N the epoch number from 1, or the
// global step with save_freq > 0). The checkpoint's root has one child, "model", the model (with
// its optimizer): restore it with Checkpoint({"model", fresh}).
struct ModelCheckpointOptions {
  std::string directory;
  int64_t max_to_keep = 5;
  std::string monitor = "val_loss";
  Mode mode = Mode::Auto;
  bool save_best_only = false;
  int64_t save_freq = 0;  // 0: at each epoch's end; N > 0: every N batches
};
Ref<Callback> model_checkpoint(Context& ctx, const ModelCheckpointOptions& options);

// TensorBoard: scalars in <logdir>/train and <logdir>/validation ("epoch_loss", ... at the epoch;
// "batch_loss", ... every update_freq batches, at the global step), the learning rate, the graph of
// the training step, a histogram of every weight every histogram_freq epochs, and a profile of the
// batches [profile_batch_begin, profile_batch_end] of the first epoch (plugins/profile).
struct TensorBoardOptions {
  std::string logdir;
  int64_t update_freq = 0;      // 0: per epoch only
  int64_t histogram_freq = 0;   // 0: none
  bool write_graph = true;
  int64_t profile_batch_begin = -1, profile_batch_end = -1;  // -1: no profile
};
Ref<Callback> tensorboard(const TensorBoardOptions& options);

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  double min_delta = 0;
  int64_t patience = 0;
  Mode mode = Mode::Auto;
  std::optional<double> baseline;
  bool restore_best_weights = false;
  int64_t start_from_epoch = 0;
};
Ref<Callback> early_stopping(const EarlyStoppingOptions& options);

// Sets the learning rate at each epoch's start to schedule(epoch, current rate).
Ref<Callback> learning_rate_scheduler(std::function<double(int64_t epoch, double lr)> schedule);

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  double factor = 0.1;
  int64_t patience = 10;
  Mode mode = Mode::Auto;
  double min_delta = 1e-4;
  int64_t cooldown = 0;
  double min_lr = 0;
};
Ref<Callback> reduce_lr_on_plateau(const ReduceLROnPlateauOptions& options);

// One row per epoch: "epoch" then every log entry, in the first epoch's order.
Ref<Callback> csv_logger(const std::string& path, char separator = ',', bool append = false);

// Fault tolerance: saves the model, the optimizer, the iterator position and the metrics into
// `directory` (at each epoch's end, or every save_freq batches), and at the start of fit restores
// the latest backup so training continues from there, with the iterator at the exact batch. The
// backup is deleted when fit ends normally (unless delete_checkpoint is false).
struct BackupAndRestoreOptions {
  std::string directory;
  int64_t save_freq = 0;  // 0: at each epoch's end; N > 0: every N batches
  bool delete_checkpoint = true;
};
Ref<Callback> backup_and_restore(Context& ctx, const BackupAndRestoreOptions& options);

// Keras' progress output on `out`: with Bar a bar with ETA redrawn in place, with EpochLines one
// line per epoch.
Ref<Callback> progress_bar(Verbose verbose, std::FILE* out = stdout);

}  // namespace cairn::keras
