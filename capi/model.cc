// The C API's models section: cairn_model_* (compile, fit, evaluate, predict), logs and history,
// and callbacks (built in, and made from a caller's hooks).
#include <cmath>
#include <limits>
#include <memory>

#include "capi/internal/data_handles.h"
#include "capi/internal/handles.h"
#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"
#include "runtime/keras/callbacks.h"
#include "runtime/keras/saving.h"

using namespace cairn;
using cairn::capi::raise_user_status;
using cairn::capi::read_options;
using cairn::capi::require;
using cairn::capi::require_as;

struct cairn_logs {
  keras::Logs logs;
};

struct cairn_history {
  keras::History history;
};

struct cairn_callback {
  Ref<keras::Callback> cb;
};

namespace {

keras::Model& require_model(const cairn_object* h, const char* fn) {
  return require_as<keras::Model>(h, fn, "model", "a model (from cairn_model_create)");
}

Context& require_ctx(cairn_context* ctx, const char* fn) { return *require(ctx, fn, "ctx")->ctx; }

std::string string_or(const char* s, const char* fallback) { return s ? std::string(s) : std::string(fallback); }

keras::Data model_data(const cairn_model_data* user, const char* fn, const char* what) {
  require(user, fn, what);
  const cairn_model_data d = read_options(user, fn);
  keras::Data out;
  if (d.dataset) {
    if (d.x || d.y) raise(Code::InvalidArgument, "{}: {} has a dataset and tensors; give one or the other", fn, what);
    out.dataset = capi::require_dataset(d.dataset, fn, what);
  }
  if (d.x) out.x = d.x->t;
  if (d.y) out.y = d.y->t;
  return out;
}

std::vector<Ref<keras::Callback>> callback_list(cairn_callback* const* cbs, size_t n, const char* fn) {
  if (n > 0) require(cbs, fn, "callbacks");
  std::vector<Ref<keras::Callback>> out;
  for (size_t i = 0; i < n; ++i) {
    if (!cbs[i]) raise(Code::InvalidArgument, "{}: callbacks[{}] is NULL", fn, i);
    out.push_back(cbs[i]->cb);
  }
  return out;
}

keras::Verbose verbose_of(int32_t v, const char* fn) {
  switch (v) {
    case CAIRN_VERBOSE_SILENT: return keras::Verbose::Silent;
    case CAIRN_VERBOSE_BAR: return keras::Verbose::Bar;
    case CAIRN_VERBOSE_EPOCH_LINES: return keras::Verbose::EpochLines;
    case CAIRN_VERBOSE_AUTO: return keras::Verbose::Auto;
    default: raise(Code::InvalidArgument, "{}: verbose is {}, expected a cairn_verbose", fn, v);
  }
}

keras::Mode mode_of(int32_t m, const char* fn) {
  if (m < 0 || m > 2) raise(Code::InvalidArgument, "{}: mode is {}, expected a cairn_monitor_mode", fn, m);
  return m == CAIRN_MONITOR_MIN ? keras::Mode::Min : m == CAIRN_MONITOR_MAX ? keras::Mode::Max : keras::Mode::Auto;
}

void set_logs(cairn_logs** out, keras::Logs logs) {
  if (out) *out = new cairn_logs{std::move(logs)};
}

void set_callback(cairn_callback** out, Ref<keras::Callback> cb) { *out = new cairn_callback{std::move(cb)}; }

// A callback whose hooks are the caller's C functions. The model is lent to each hook as a
// handle on the stack; a hook's error status becomes the fit's error.
class HookCallback final : public keras::Callback {
 public:
  explicit HookCallback(const cairn_callback_hooks& h) : h_(h) {}
  ~HookCallback() override {
    if (h_.release) h_.release(h_.user_data);
  }
  void on_train_begin(keras::Model& m) override { call("on_train_begin", h_.on_train_begin, m); }
  void on_train_end(keras::Model& m, const keras::Logs& l) override { call_logs("on_train_end", h_.on_train_end, m, l); }
  void on_epoch_begin(keras::Model& m, int64_t e) override { call("on_epoch_begin", h_.on_epoch_begin, m, e); }
  void on_epoch_end(keras::Model& m, int64_t e, const keras::Logs& l) override {
    call_logs("on_epoch_end", h_.on_epoch_end, m, l, e);
  }
  void on_train_batch_begin(keras::Model& m, int64_t b) override {
    call("on_train_batch_begin", h_.on_train_batch_begin, m, b);
  }
  void on_train_batch_end(keras::Model& m, int64_t b, const keras::Logs& l) override {
    call_logs("on_train_batch_end", h_.on_train_batch_end, m, l, b);
  }
  void on_test_end(keras::Model& m, const keras::Logs& l) override { call_logs("on_test_end", h_.on_test_end, m, l); }

 private:
  template <class F, class... Args>
  void call(const char* hook, F f, keras::Model& m, Args... args) {
    if (!f) return;
    cairn_object model{Ref<Object>::share(&m)};
    if (cairn_status* st = f(h_.user_data, &model, args...)) raise_user_status(st, std::string("callback ") + hook + ": ");
  }
  template <class F, class... Args>
  void call_logs(const char* hook, F f, keras::Model& m, const keras::Logs& l, Args... args) {
    if (!f) return;
    cairn_object model{Ref<Object>::share(&m)};
    const cairn_logs logs{l};
    if (cairn_status* st = f(h_.user_data, &model, args..., &logs))
      raise_user_status(st, std::string("callback ") + hook + ": ");
  }

  cairn_callback_hooks h_;
};

}  // namespace

extern "C" {

// ---- Models ----

cairn_status* cairn_model_create(cairn_context* ctx, const cairn_model_options* user_opts, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_create";
  require(out, fn, "out");
  *out = nullptr;
  Context& c = require_ctx(ctx, fn);
  const cairn_model_options opts = read_options(user_opts, fn);
  if (opts.n_layers > 0) require(opts.layers, fn, "layers");
  Ref<keras::Model> model = keras::Model::create(c, opts.name ? opts.name : "");
  for (size_t i = 0; i < opts.n_layers; ++i) {
    if (!opts.layers[i]) raise(Code::InvalidArgument, "{}: layers[{}] is NULL", fn, i);
    model->add(Ref<nn::Layer>::share(&require_as<nn::Layer>(opts.layers[i], fn, "a layer", "a layer")));
  }
  *out = capi::new_object(model);
  CAIRN_API_END
}

cairn_status* cairn_model_compile(cairn_object* model, const cairn_compile_options* user_opts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_compile";
  keras::Model& m = require_model(model, fn);
  const cairn_compile_options opts = read_options(user_opts, fn);
  keras::CompileOptions o;
  require(opts.optimizer, fn, "optimizer");
  o.optimizer = Ref<optim::Optimizer>::share(&require_as<optim::Optimizer>(opts.optimizer, fn, "optimizer", "an optimizer"));
  o.loss = require(opts.loss, fn, "loss");
  o.from_logits = opts.from_logits != CAIRN_FALSE;
  if (opts.n_metrics > 0) require(opts.metrics, fn, "metrics");
  for (size_t i = 0; i < opts.n_metrics; ++i) {
    if (!opts.metrics[i]) raise(Code::InvalidArgument, "{}: metrics[{}] is NULL", fn, i);
    o.metrics.emplace_back(opts.metrics[i]);
  }
  o.run_eagerly = opts.run_eagerly != CAIRN_FALSE;
  m.compile(o);
  CAIRN_API_END
}

cairn_status* cairn_model_fit(cairn_object* model, const cairn_model_data* data, const cairn_fit_options* user_opts,
                              cairn_history** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_fit";
  if (out) *out = nullptr;
  keras::Model& m = require_model(model, fn);
  keras::Data d = model_data(data, fn, "data");
  const cairn_fit_options opts = read_options(user_opts, fn);
  keras::FitOptions o;
  o.epochs = opts.epochs;
  o.batch_size = opts.batch_size;
  o.initial_epoch = opts.initial_epoch;
  o.steps_per_epoch = opts.steps_per_epoch;
  o.shuffle = opts.shuffle != CAIRN_FALSE;
  o.seed = opts.seed;
  if (opts.validation) o.validation = model_data(opts.validation, fn, "validation");
  o.validation_batch_size = opts.validation_batch_size;
  o.validation_freq = opts.validation_freq;
  o.verbose = verbose_of(capi::enum_bits(opts.verbose), fn);
  o.callbacks = callback_list(opts.callbacks, opts.n_callbacks, fn);
  keras::History h = m.fit(d, o);
  if (out) *out = new cairn_history{std::move(h)};
  CAIRN_API_END
}

cairn_status* cairn_model_evaluate(cairn_object* model, const cairn_model_data* data,
                                   const cairn_evaluate_options* user_opts, cairn_logs** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_evaluate";
  require(out, fn, "out");
  *out = nullptr;
  keras::Model& m = require_model(model, fn);
  keras::Data d = model_data(data, fn, "data");
  const cairn_evaluate_options opts = read_options(user_opts, fn);
  keras::EvaluateOptions o;
  o.batch_size = opts.batch_size;
  o.steps = opts.steps;
  o.callbacks = callback_list(opts.callbacks, opts.n_callbacks, fn);
  set_logs(out, m.evaluate(d, o));
  CAIRN_API_END
}

cairn_status* cairn_model_predict(cairn_object* model, const cairn_model_data* data,
                                  const cairn_predict_options* user_opts, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_predict";
  require(out, fn, "out");
  *out = nullptr;
  keras::Model& m = require_model(model, fn);
  keras::Data d = model_data(data, fn, "data");
  const cairn_predict_options opts = read_options(user_opts, fn);
  keras::PredictOptions o;
  o.batch_size = opts.batch_size;
  o.steps = opts.steps;
  *out = capi::new_tensor(m.predict(d, o));
  CAIRN_API_END
}

cairn_status* cairn_model_train_on_batch(cairn_object* model, const cairn_tensor* x, const cairn_tensor* y,
                                         cairn_logs** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_train_on_batch";
  if (out) *out = nullptr;
  keras::Model& m = require_model(model, fn);
  require(x, fn, "x");
  require(y, fn, "y");
  set_logs(out, m.train_on_batch(x->t, y->t));
  CAIRN_API_END
}

cairn_status* cairn_model_test_on_batch(cairn_object* model, const cairn_tensor* x, const cairn_tensor* y,
                                        cairn_logs** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_test_on_batch";
  require(out, fn, "out");
  *out = nullptr;
  keras::Model& m = require_model(model, fn);
  require(x, fn, "x");
  require(y, fn, "y");
  set_logs(out, m.test_on_batch(x->t, y->t));
  CAIRN_API_END
}

cairn_status* cairn_model_save(cairn_object* model, const char* directory) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_save";
  keras::Model& m = require_model(model, fn);
  keras::save_model(m, require(directory, fn, "directory"));
  CAIRN_API_END
}

cairn_status* cairn_model_load(cairn_context* ctx, const char* directory, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_model_load";
  require(out, fn, "out");
  *out = nullptr;
  Context& c = require_ctx(ctx, fn);
  *out = capi::new_object(keras::load_model(c, require(directory, fn, "directory")));
  CAIRN_API_END
}

void cairn_model_stop_training(cairn_object* model) {
  if (!model || !model->obj) return;
  if (auto* m = dynamic_cast<keras::Model*>(model->obj.get())) m->stop_training();
}

// ---- Logs and history ----

size_t cairn_logs_size(const cairn_logs* logs) { return logs ? logs->logs.items().size() : 0; }

const char* cairn_logs_name(const cairn_logs* logs, size_t i) {
  if (!logs || i >= logs->logs.items().size()) return nullptr;
  return logs->logs.items()[i].first.c_str();
}

double cairn_logs_value(const cairn_logs* logs, size_t i) {
  if (!logs || i >= logs->logs.items().size()) return std::numeric_limits<double>::quiet_NaN();
  return logs->logs.items()[i].second;
}

cairn_status* cairn_logs_get(const cairn_logs* logs, const char* name, double* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_logs_get";
  require(logs, fn, "logs");
  require(name, fn, "name");
  require(out, fn, "out");
  std::optional<double> v = logs->logs.get(name);
  if (!v) {
    std::string names;
    for (const auto& [k, x] : logs->logs.items()) names += (names.empty() ? "" : ", ") + k;
    raise(Code::NotFound, "{}: no value '{}' in the logs (they have: {})", fn, name, names);
  }
  *out = *v;
  CAIRN_API_END
}

void cairn_logs_free(cairn_logs* logs) { delete logs; }

size_t cairn_history_num_epochs(const cairn_history* h) { return h ? h->history.epochs.size() : 0; }

int64_t cairn_history_epoch(const cairn_history* h, size_t i) {
  return h && i < h->history.epochs.size() ? h->history.epochs[i] : -1;
}

size_t cairn_history_num_names(const cairn_history* h) { return h ? h->history.values.size() : 0; }

const char* cairn_history_name(const cairn_history* h, size_t i) {
  return h && i < h->history.values.size() ? h->history.values[i].first.c_str() : nullptr;
}

const double* cairn_history_values(const cairn_history* h, const char* name, size_t* n) {
  if (n) *n = 0;
  if (!h || !name || !n) return nullptr;
  const std::vector<double>* v = h->history.get(name);
  if (!v) return nullptr;
  *n = v->size();
  return v->data();
}

void cairn_history_free(cairn_history* h) { delete h; }

// ---- Callbacks ----

cairn_status* cairn_callback_create(const cairn_callback_hooks* hooks, cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_create";
  require(out, fn, "out");
  *out = nullptr;
  require(hooks, fn, "hooks");
  set_callback(out, make_ref<HookCallback>(read_options(hooks, fn)));
  CAIRN_API_END
}

void cairn_callback_free(cairn_callback* cb) { delete cb; }

cairn_status* cairn_callback_model_checkpoint(cairn_context* ctx, const cairn_model_checkpoint_options* user_opts,
                                              cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_model_checkpoint";
  require(out, fn, "out");
  *out = nullptr;
  Context& c = require_ctx(ctx, fn);
  require(user_opts, fn, "opts");
  const cairn_model_checkpoint_options opts = read_options(user_opts, fn);
  keras::ModelCheckpointOptions o;
  o.directory = require(opts.directory, fn, "directory");
  o.max_to_keep = opts.max_to_keep;
  o.monitor = string_or(opts.monitor, "val_loss");
  o.mode = mode_of(capi::enum_bits(opts.mode), fn);
  o.save_best_only = opts.save_best_only != CAIRN_FALSE;
  o.save_freq = opts.save_freq;
  set_callback(out, keras::model_checkpoint(c, o));
  CAIRN_API_END
}

cairn_status* cairn_callback_tensorboard(const cairn_tensorboard_options* user_opts, cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_tensorboard";
  require(out, fn, "out");
  *out = nullptr;
  require(user_opts, fn, "opts");
  const cairn_tensorboard_options opts = read_options(user_opts, fn);
  keras::TensorBoardOptions o;
  o.logdir = require(opts.logdir, fn, "logdir");
  o.update_freq = opts.update_freq;
  o.histogram_freq = opts.histogram_freq;
  o.write_graph = opts.write_graph != CAIRN_FALSE;
  o.profile_batch_begin = opts.profile_batch_begin;
  o.profile_batch_end = opts.profile_batch_end;
  set_callback(out, keras::tensorboard(o));
  CAIRN_API_END
}

cairn_status* cairn_callback_early_stopping(const cairn_early_stopping_options* user_opts, cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_early_stopping";
  require(out, fn, "out");
  *out = nullptr;
  const cairn_early_stopping_options opts = read_options(user_opts, fn);
  keras::EarlyStoppingOptions o;
  o.monitor = string_or(opts.monitor, "val_loss");
  o.min_delta = opts.min_delta;
  o.patience = opts.patience;
  o.mode = mode_of(capi::enum_bits(opts.mode), fn);
  if (opts.has_baseline != CAIRN_FALSE) o.baseline = opts.baseline;
  o.restore_best_weights = opts.restore_best_weights != CAIRN_FALSE;
  o.start_from_epoch = opts.start_from_epoch;
  set_callback(out, keras::early_stopping(o));
  CAIRN_API_END
}

cairn_status* cairn_callback_learning_rate_scheduler(cairn_lr_schedule_fn schedule, void* user_data,
                                                     void (*release)(void* user_data), cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_learning_rate_scheduler";
  require(out, fn, "out");
  *out = nullptr;
  require(schedule, fn, "schedule");
  // The caller's user_data, released with the last copy of the schedule.
  struct Owner {
    void* user_data;
    void (*release)(void*);
    ~Owner() {
      if (release) release(user_data);
    }
  };
  auto owner = std::make_shared<Owner>(Owner{user_data, nullptr});
  Ref<keras::Callback> cb = keras::learning_rate_scheduler([schedule, owner](int64_t epoch, double lr) {
    double next = std::numeric_limits<double>::quiet_NaN();
    if (cairn_status* st = schedule(owner->user_data, epoch, lr, &next)) raise_user_status(st, "the schedule failed: ");
    return next;
  });
  owner->release = release;  // only once the callback exists: on an error the caller keeps user_data
  set_callback(out, std::move(cb));
  CAIRN_API_END
}

cairn_status* cairn_callback_reduce_lr_on_plateau(const cairn_reduce_lr_options* user_opts, cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_reduce_lr_on_plateau";
  require(out, fn, "out");
  *out = nullptr;
  const cairn_reduce_lr_options opts = read_options(user_opts, fn);
  keras::ReduceLROnPlateauOptions o;
  o.monitor = string_or(opts.monitor, "val_loss");
  o.factor = opts.factor;
  o.patience = opts.patience;
  o.mode = mode_of(capi::enum_bits(opts.mode), fn);
  o.min_delta = opts.min_delta;
  o.cooldown = opts.cooldown;
  o.min_lr = opts.min_lr;
  set_callback(out, keras::reduce_lr_on_plateau(o));
  CAIRN_API_END
}

cairn_status* cairn_callback_csv_logger(const cairn_csv_logger_options* user_opts, cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_csv_logger";
  require(out, fn, "out");
  *out = nullptr;
  require(user_opts, fn, "opts");
  const cairn_csv_logger_options opts = read_options(user_opts, fn);
  set_callback(out, keras::csv_logger(require(opts.path, fn, "path"), opts.separator, opts.append != CAIRN_FALSE));
  CAIRN_API_END
}

cairn_status* cairn_callback_backup_and_restore(cairn_context* ctx, const cairn_backup_options* user_opts,
                                                cairn_callback** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_callback_backup_and_restore";
  require(out, fn, "out");
  *out = nullptr;
  Context& c = require_ctx(ctx, fn);
  require(user_opts, fn, "opts");
  const cairn_backup_options opts = read_options(user_opts, fn);
  keras::BackupAndRestoreOptions o;
  o.directory = require(opts.directory, fn, "directory");
  o.save_freq = opts.save_freq;
  o.delete_checkpoint = opts.delete_checkpoint != CAIRN_FALSE;
  set_callback(out, keras::backup_and_restore(c, o));
  CAIRN_API_END
}

}  // extern "C"
