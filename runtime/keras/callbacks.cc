#include "runtime/keras/callbacks.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "runtime/checkpoint/collective_group.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/checkpoint/sharded_save.h"
#include "runtime/core/error.h"
#include "runtime/graph/graphdef_proto.h"
#include "runtime/summary/profiler.h"
#include "runtime/summary/values.h"

namespace cairn::keras {

namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// A checkpoint of `children` with a manager over `directory`.
struct ManagedCheckpoint {
  std::unique_ptr<ckpt::Checkpoint> ckpt;
  std::unique_ptr<ckpt::CheckpointManager> manager;
  // Set when every rank of a multi-worker job saves together (a sharded checkpoint).
  std::unique_ptr<ckpt::CollectiveShardGroup> shards;

  ManagedCheckpoint(Context& ctx, const std::vector<std::pair<std::string, Ref<Object>>>& children,
                    const std::string& directory, int64_t max_to_keep) {
    ckpt = std::make_unique<ckpt::Checkpoint>(ctx, children);
    ckpt::ManagerOptions o;
    o.max_to_keep = max_to_keep;
    manager = std::make_unique<ckpt::CheckpointManager>(directory, o, ckpt::is_intact_checkpoint);
  }
  // Saves shards over the workers of `strategy` when it spans processes: each rank writes its share
  // of the (identical) values and rank 0 commits the index, so no two processes write one file.
  void shard_over(const Ref<distribute::MirroredStrategy>& strategy) {
    if (strategy && strategy->is_multi_worker())
      shards = std::make_unique<ckpt::CollectiveShardGroup>(Ref<distribute::Collective>::share(&strategy->collective()),
                                                            strategy->first_replica());
  }
  std::string save(int64_t number, std::string_view fn) {
    if (shards) return ckpt::save_sharded(*ckpt, *manager, *shards, number);
    ckpt->increment_save_counter(fn);
    return manager->save(number, [&](const std::string& p) { ckpt->write_snapshot(ckpt->snapshot(), p); });
  }
};

void require_directory(const std::string& dir, const char* who) {
  if (dir.empty()) raise(Code::InvalidArgument, "{}: the directory is empty", who);
}

Ref<Object> model_ref(Model& model) { return Ref<Object>::share(&model); }

// Every weight's current value, in model.weights() order (EarlyStopping's best weights).
std::vector<Tensor> weight_values(Model& model) {
  std::vector<Tensor> values;
  for (const Ref<Variable>& v : model.weights()) values.push_back(v->read());
  return values;
}

void set_weight_values(Model& model, const std::vector<Tensor>& values, std::string_view fn) {
  std::vector<Ref<Variable>> weights = model.weights();
  for (size_t i = 0; i < weights.size() && i < values.size(); ++i) weights[i]->assign(values[i], fn);
}

}  // namespace

// ---- Monitor ----

Monitor::Monitor(std::string name, Mode mode, double min_delta)
    : name_(std::move(name)), min_delta_(std::fabs(min_delta)) {
  maximize_ = mode == Mode::Max || (mode == Mode::Auto && name_.find("acc") != std::string::npos);
}

std::optional<double> Monitor::value(Model& model, const Logs& logs) {
  std::optional<double> v = logs.get(name_);
  if (!v && !warned_) {
    std::string available;
    for (const auto& [k, x] : logs.items()) available += (available.empty() ? "" : ", ") + k;
    model.context().log().log(LogLevel::Warning,
                              fmt::format("callback: the monitored value '{}' is not in the logs (available: {})",
                                          name_, available));
    warned_ = true;
  }
  return v;
}

bool Monitor::improves(double value) const {
  if (!has_best_) return true;
  return maximize_ ? value - min_delta_ > best_ : value + min_delta_ < best_;
}

// ---- ModelCheckpoint ----

namespace {

class ModelCheckpoint final : public Callback {
 public:
  bool chief_only() const override { return true; }
  ModelCheckpoint(Context& ctx, ModelCheckpointOptions o)
      : ctx_(Ref<Context>::share(&ctx)), options_(std::move(o)), monitor_(options_.monitor, options_.mode) {}

  void on_train_begin(Model& model) override {
    if (!saver_) saver_ = std::make_unique<ManagedCheckpoint>(*ctx_, std::vector<std::pair<std::string, Ref<Object>>>{{"model", model_ref(model)}},
                                                              options_.directory, options_.max_to_keep);
  }
  void on_train_batch_end(Model& model, int64_t, const Logs& logs) override {
    if (options_.save_freq > 0 && model.iterations() % options_.save_freq == 0) maybe_save(model, model.iterations(), logs);
  }
  void on_epoch_end(Model& model, int64_t epoch, const Logs& logs) override {
    if (options_.save_freq == 0) maybe_save(model, epoch + 1, logs);
  }

 private:
  void maybe_save(Model& model, int64_t number, const Logs& logs) {
    if (options_.save_best_only) {
      std::optional<double> v = monitor_.value(model, logs);
      if (!v || !monitor_.improves(*v)) return;
      monitor_.record(*v);
    }
    saver_->save(number, "ModelCheckpoint");
  }

  Ref<Context> ctx_;
  ModelCheckpointOptions options_;
  Monitor monitor_;
  std::unique_ptr<ManagedCheckpoint> saver_;
};

}  // namespace

Ref<Callback> model_checkpoint(Context& ctx, const ModelCheckpointOptions& options) {
  require_directory(options.directory, "ModelCheckpoint");
  if (options.max_to_keep == 0)
    raise(Code::InvalidArgument, "ModelCheckpoint: max_to_keep must not be 0 (< 0 keeps every checkpoint)");
  if (options.save_freq < 0)
    raise(Code::InvalidArgument, "ModelCheckpoint: save_freq must be >= 0, got {}", options.save_freq);
  return make_ref<ModelCheckpoint>(ctx, options);
}

// ---- TensorBoard ----

namespace {

class TensorBoard final : public Callback {
 public:
  bool chief_only() const override { return true; }
  explicit TensorBoard(TensorBoardOptions o) : options_(std::move(o)) {}

  void on_train_begin(Model&) override {
    train_ = summary::SummaryWriter::create(options_.logdir + "/train");
    graph_written_ = !options_.write_graph;
    first_epoch_ = -1;
  }
  void on_epoch_begin(Model&, int64_t epoch) override {
    epoch_ = epoch;
    if (first_epoch_ < 0) first_epoch_ = epoch;
  }
  void on_train_batch_begin(Model&, int64_t batch) override {
    if (profiling_window() && batch == options_.profile_batch_begin && !summary::Profiler::active()) {
      summary::Profiler::start();
      profiling_ = true;
    }
  }
  void on_train_batch_end(Model& model, int64_t batch, const Logs& logs) override {
    if (!graph_written_) write_graph(model);
    if (options_.update_freq > 0 && model.iterations() % options_.update_freq == 0)
      for (const auto& [k, v] : logs.items()) train_->scalar("batch_" + k, static_cast<float>(v), model.iterations());
    if (profiling_ && batch == options_.profile_batch_end) stop_profile();
  }
  void on_epoch_end(Model& model, int64_t epoch, const Logs& logs) override {
    for (const auto& [k, v] : logs.items()) {
      if (k.rfind("val_", 0) == 0)
        validation().scalar("epoch_" + k.substr(4), static_cast<float>(v), epoch);
      else
        train_->scalar("epoch_" + k, static_cast<float>(v), epoch);
    }
    if (Ref<optim::Optimizer> opt = model.optimizer())
      train_->scalar("epoch_learning_rate", static_cast<float>(opt->learning_rate_value()), epoch);
    if (options_.histogram_freq > 0 && (epoch + 1) % options_.histogram_freq == 0)
      for (const Ref<Variable>& w : model.weights()) {
        std::string tag = w->name();
        for (char& ch : tag)
          if (ch == ':') ch = '_';
        train_->write(summary::histogram_value(tag, w->read()), epoch);
      }
  }
  void on_train_end(Model&, const Logs&) override { close(); }
  void on_train_error(Model&) override { close(); }

 private:
  bool profiling_window() const { return options_.profile_batch_begin >= 0 && epoch_ == first_epoch_; }
  summary::SummaryWriter& validation() {
    if (!validation_) validation_ = summary::SummaryWriter::create(options_.logdir + "/validation");
    return *validation_;
  }
  void write_graph(Model& model) {
    graph_written_ = true;
    Ref<graph::Function> fn = model.train_function();
    if (!fn || fn->num_traces() == 0) return;
    train_->write_graph(0, graph::graphdef_proto(fn->concretes().front()->graph()));
  }
  void stop_profile() {
    profiling_ = false;
    if (std::unique_ptr<summary::Profile> p = summary::Profiler::stop())
      summary::export_to_logdir(*p, options_.logdir, "train");
  }
  void close() {
    if (profiling_) stop_profile();
    if (train_) train_->close();
    if (validation_) validation_->close();
    train_.reset();
    validation_.reset();
  }

  TensorBoardOptions options_;
  std::shared_ptr<summary::SummaryWriter> train_, validation_;
  bool graph_written_ = false, profiling_ = false;
  int64_t epoch_ = 0, first_epoch_ = -1;
};

}  // namespace

Ref<Callback> tensorboard(const TensorBoardOptions& options) {
  if (options.logdir.empty()) raise(Code::InvalidArgument, "TensorBoard: the logdir is empty");
  if (options.update_freq < 0 || options.histogram_freq < 0)
    raise(Code::InvalidArgument, "TensorBoard: update_freq and histogram_freq must be >= 0, got {} and {}",
          options.update_freq, options.histogram_freq);
  if (options.profile_batch_begin >= 0 && options.profile_batch_end < options.profile_batch_begin)
    raise(Code::InvalidArgument, "TensorBoard: the profiled batches [{}, {}] are not a range",
          options.profile_batch_begin, options.profile_batch_end);
  return make_ref<TensorBoard>(options);
}

// ---- EarlyStopping ----

namespace {

class EarlyStopping final : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions o)
      : options_(std::move(o)), monitor_(options_.monitor, options_.mode, options_.min_delta),
        baseline_(options_.monitor, options_.mode, options_.min_delta) {}

  void on_train_begin(Model&) override {
    wait_ = 0;
    monitor_.reset();
    baseline_.reset();
    if (options_.baseline) baseline_.record(*options_.baseline);
    best_weights_.clear();
  }
  void on_epoch_end(Model& model, int64_t epoch, const Logs& logs) override {
    std::optional<double> current = monitor_.value(model, logs);
    if (!current || epoch < options_.start_from_epoch) return;
    if (options_.restore_best_weights && best_weights_.empty()) best_weights_ = weight_values(model);
    ++wait_;
    if (monitor_.improves(*current)) {
      monitor_.record(*current);
      if (options_.restore_best_weights) best_weights_ = weight_values(model);
      // With a baseline, waiting restarts only once the value beats it (Keras' rule).
      if (!options_.baseline || baseline_.improves(*current)) wait_ = 0;
      return;
    }
    if (wait_ >= options_.patience && epoch > 0) {
      model.stop_training();
      if (options_.restore_best_weights && !best_weights_.empty())
        set_weight_values(model, best_weights_, "EarlyStopping");
    }
  }

 private:
  EarlyStoppingOptions options_;
  Monitor monitor_, baseline_;
  int64_t wait_ = 0;
  std::vector<Tensor> best_weights_;
};

}  // namespace

Ref<Callback> early_stopping(const EarlyStoppingOptions& options) {
  if (options.patience < 0) raise(Code::InvalidArgument, "EarlyStopping: patience must be >= 0, got {}", options.patience);
  return make_ref<EarlyStopping>(options);
}

// ---- LearningRateScheduler ----

namespace {

class LearningRateScheduler final : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int64_t, double)> f) : schedule_(std::move(f)) {}
  void on_epoch_begin(Model& model, int64_t epoch) override {
    Ref<optim::Optimizer> opt = model.optimizer();
    double lr = schedule_(epoch, opt->learning_rate_value());
    if (!std::isfinite(lr) || lr < 0)
      raise(Code::InvalidArgument, "LearningRateScheduler: the schedule gave {} for epoch {}", lr, epoch);
    opt->set_learning_rate(lr);
  }

 private:
  std::function<double(int64_t, double)> schedule_;
};

}  // namespace

Ref<Callback> learning_rate_scheduler(std::function<double(int64_t, double)> schedule) {
  if (!schedule) raise(Code::InvalidArgument, "LearningRateScheduler: the schedule is null");
  return make_ref<LearningRateScheduler>(std::move(schedule));
}

// ---- ReduceLROnPlateau ----

namespace {

class ReduceLROnPlateau final : public Callback {
 public:
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions o)
      : options_(std::move(o)), monitor_(options_.monitor, options_.mode, options_.min_delta) {}
  void on_train_begin(Model&) override {
    monitor_.reset();
    wait_ = 0;
    cooldown_left_ = 0;
  }
  void on_epoch_end(Model& model, int64_t, const Logs& logs) override {
    std::optional<double> current = monitor_.value(model, logs);
    if (!current) return;
    if (cooldown_left_ > 0) {
      --cooldown_left_;
      wait_ = 0;
    }
    if (monitor_.improves(*current)) {
      monitor_.record(*current);
      wait_ = 0;
    } else if (cooldown_left_ == 0 && ++wait_ >= options_.patience) {
      Ref<optim::Optimizer> opt = model.optimizer();
      const double lr = opt->learning_rate_value();
      if (lr > options_.min_lr) {
        opt->set_learning_rate(std::max(lr * options_.factor, options_.min_lr));
        cooldown_left_ = options_.cooldown;
        wait_ = 0;
      }
    }
  }

 private:
  ReduceLROnPlateauOptions options_;
  Monitor monitor_;
  int64_t wait_ = 0, cooldown_left_ = 0;
};

}  // namespace

Ref<Callback> reduce_lr_on_plateau(const ReduceLROnPlateauOptions& options) {
  if (!(options.factor >= 0 && options.factor < 1))
    raise(Code::InvalidArgument, "ReduceLROnPlateau: factor must be in [0, 1), got {}", options.factor);
  if (options.patience < 0 || options.cooldown < 0 || options.min_lr < 0)
    raise(Code::InvalidArgument, "ReduceLROnPlateau: patience, cooldown and min_lr must be >= 0");
  return make_ref<ReduceLROnPlateau>(options);
}

// ---- CSVLogger ----

namespace {

class CsvLogger final : public Callback {
 public:
  bool chief_only() const override { return true; }
  CsvLogger(std::string path, char sep, bool append) : path_(std::move(path)), sep_(sep), append_(append) {}
  ~CsvLogger() override { close(); }

  void on_train_begin(Model&) override {
    close();
    std::error_code ec;
    write_header_ = !(append_ && std::filesystem::file_size(path_, ec) > 0 && !ec);
    file_ = std::fopen(path_.c_str(), append_ ? "a" : "w");
    if (!file_) raise(Code::InvalidArgument, "CSVLogger: cannot open '{}': {}", path_, std::strerror(errno));
    keys_.clear();
  }
  void on_epoch_end(Model&, int64_t epoch, const Logs& logs) override {
    if (keys_.empty())
      for (const auto& [k, v] : logs.items()) keys_.push_back(k);
    std::string line;
    if (write_header_) {
      line = "epoch";
      for (const std::string& k : keys_) line += sep_ + k;
      line += '\n';
      write_header_ = false;
    }
    line += fmt::format("{}", epoch);
    for (const std::string& k : keys_) {
      std::optional<double> v = logs.get(k);
      line += sep_;
      if (v) line += fmt::format("{}", *v);  // shortest text that reads back to the same double
    }
    line += '\n';
    if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
      raise(Code::Unavailable, "CSVLogger: cannot write '{}': {}", path_, std::strerror(errno));
  }
  void on_train_end(Model&, const Logs&) override { close(); }
  void on_train_error(Model&) override { close(); }

 private:
  void close() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }
  std::string path_;
  char sep_;
  bool append_, write_header_ = true;
  std::FILE* file_ = nullptr;
  std::vector<std::string> keys_;
};

}  // namespace

Ref<Callback> csv_logger(const std::string& path, char separator, bool append) {
  if (path.empty()) raise(Code::InvalidArgument, "CSVLogger: the path is empty");
  if (separator == '\n' || separator == '\0') raise(Code::InvalidArgument, "CSVLogger: bad separator");
  return make_ref<CsvLogger>(path, separator, append);
}

// ---- BackupAndRestore ----

namespace {

class BackupAndRestore final : public Callback {
 public:
  BackupAndRestore(Context& ctx, BackupAndRestoreOptions o) : ctx_(Ref<Context>::share(&ctx)), options_(std::move(o)) {}

  void on_train_begin(Model& model) override {
    Ref<FitState> state = model.fit_state();
    backup_ = std::make_unique<ManagedCheckpoint>(
        *ctx_, std::vector<std::pair<std::string, Ref<Object>>>{{"fit", state}, {"model", model_ref(model)}},
        options_.directory, 1);
    backup_->shard_over(model.compile_options("BackupAndRestore").strategy);
    if (const std::optional<std::string>& latest = backup_->manager->latest()) {
      // Values for objects made later (the iterator, unbuilt layers, optimizer slots) wait on them.
      restore_ = backup_->ckpt->restore(*latest);
      restore_->expect_partial();
    }
  }
  void on_train_batch_end(Model& model, int64_t, const Logs&) override {
    if (options_.save_freq > 0 && model.iterations() % options_.save_freq == 0) save(model);
  }
  void on_epoch_end(Model& model, int64_t, const Logs&) override {
    if (options_.save_freq == 0) save(model);
  }
  void on_train_end(Model&, const Logs&) override {
    // Of a sharded backup, rank 0 deletes the files (after the last save, which every rank joined).
    const bool owns_files = backup_ && (!backup_->shards || backup_->shards->rank() == 0);
    if (options_.delete_checkpoint && owns_files) remove_backup();
    backup_.reset();
    restore_.reset();
  }
  void on_train_error(Model&) override {
    backup_.reset();
    restore_.reset();
  }

 private:
  void save(Model& model) { backup_->save(model.iterations(), "BackupAndRestore"); }
  // Removes the backup's files (only those: the directory may hold others; a shard index's shards
  // with it), then the directory if that leaves it empty.
  void remove_backup() {
    std::error_code ec;
    for (const std::string& path : backup_->manager->checkpoints()) ckpt::remove_checkpoint_files(path);
    std::filesystem::remove(std::filesystem::path(options_.directory) / ckpt::CheckpointManager::kStateFile, ec);
    if (std::filesystem::is_empty(options_.directory, ec) && !ec) std::filesystem::remove(options_.directory, ec);
  }

  Ref<Context> ctx_;
  BackupAndRestoreOptions options_;
  std::unique_ptr<ManagedCheckpoint> backup_;
  std::shared_ptr<ckpt::RestoreState> restore_;
};

}  // namespace

Ref<Callback> backup_and_restore(Context& ctx, const BackupAndRestoreOptions& options) {
  require_directory(options.directory, "BackupAndRestore");
  if (options.save_freq < 0)
    raise(Code::InvalidArgument, "BackupAndRestore: save_freq must be >= 0, got {}", options.save_freq);
  return make_ref<BackupAndRestore>(ctx, options);
}

// ---- Progress ----

namespace {

class ProgressBar final : public Callback {
 public:
  bool chief_only() const override { return true; }
  ProgressBar(Verbose verbose, std::FILE* out) : bar_(verbose == Verbose::Bar), out_(out) {}

  void set_params(int64_t epochs, int64_t steps) override {
    epochs_ = epochs;
    steps_ = steps;
  }
  void on_epoch_begin(Model&, int64_t epoch) override {
    start_ = now_seconds();
    last_draw_ = 0;
    batches_ = 0;
    if (bar_) std::fprintf(out_, "Epoch %lld/%lld\n", static_cast<long long>(epoch + 1), static_cast<long long>(epochs_));
  }
  void on_train_batch_end(Model&, int64_t batch, const Logs& logs) override {
    batches_ = batch + 1;
    if (!bar_) return;
    const double now = now_seconds();
    if (now - last_draw_ < 0.05 && batches_ != steps_) return;  // Keras redraws at most every 50 ms
    last_draw_ = now;
    std::string line = counter() + " " + bar();
    if (steps_ > 0 && batches_ < steps_)
      line += fmt::format(" - ETA: {:.0f}s", (now - start_) / static_cast<double>(batches_) * static_cast<double>(steps_ - batches_));
    std::fprintf(out_, "\r%s - %s", line.c_str(), logs.text().c_str());
    std::fflush(out_);
  }
  void on_epoch_end(Model&, int64_t epoch, const Logs& logs) override {
    const double seconds = now_seconds() - start_;
    const std::string per_step = step_time(batches_ > 0 ? seconds / static_cast<double>(batches_) : 0);
    if (bar_) {
      std::fprintf(out_, "\r%s %s - %.0fs %s - %s\n", counter().c_str(), bar().c_str(), seconds, per_step.c_str(),
                   logs.text().c_str());
    } else {
      std::fprintf(out_, "Epoch %lld/%lld\n%s - %.0fs - %s - %s\n", static_cast<long long>(epoch + 1),
                   static_cast<long long>(epochs_), counter().c_str(), seconds, per_step.c_str(), logs.text().c_str());
    }
    std::fflush(out_);
  }

 private:
  // "5ms/step", or "571us/step" below a millisecond (Keras' units).
  static std::string step_time(double seconds) {
    return seconds >= 1e-3 ? fmt::format("{:.0f}ms/step", seconds * 1e3) : fmt::format("{:.0f}us/step", seconds * 1e6);
  }
  std::string counter() const {
    return steps_ > 0 ? fmt::format("{}/{}", batches_, steps_) : fmt::format("{}/Unknown", batches_);
  }
  std::string bar() const {
    constexpr int kWidth = 30;
    if (steps_ <= 0) return "";
    const int done = static_cast<int>(kWidth * std::min<int64_t>(batches_, steps_) / steps_);
    std::string s = "[" + std::string(done, '=');
    if (done < kWidth) s += '>' + std::string(kWidth - done - 1, '.');
    return s + "]";
  }

  bool bar_;
  std::FILE* out_;
  int64_t epochs_ = 0, steps_ = -1, batches_ = 0;
  double start_ = 0, last_draw_ = 0;
};

}  // namespace

Ref<Callback> progress_bar(Verbose verbose, std::FILE* out) {
  if (verbose != Verbose::Bar && verbose != Verbose::EpochLines)
    raise(Code::InvalidArgument, "progress_bar: verbose must be Bar or EpochLines");
  return make_ref<ProgressBar>(verbose, out ? out : stdout);
}

}  // namespace cairn::keras
