/* The models section of the C API: compile, fit, evaluate, predict, callbacks, through the public
 * header only. */
#define CAIRN_EXPERIMENTAL /* cairn_function_load reads the serving function of a saved model */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static cairn_context *ctx;
static char tmp[512];

static const char *path_in_tmp(const char *name, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s", tmp, name);
  return buf;
}

/* 48 samples of 4 features in 3 classes: class k has feature k raised. */
static void blobs(cairn_tensor **x, cairn_tensor **y) {
  float xv[48 * 4];
  int32_t yv[48];
  const int64_t xs[2] = {48, 4}, ys[1] = {48};
  uint64_t s = 99;
  int i, j;
  for (i = 0; i < 48; ++i) {
    yv[i] = i % 3;
    for (j = 0; j < 4; ++j) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      xv[i * 4 + j] = (float)((s >> 33) % 1000) / 1000.0f - 0.5f + (j == i % 3 ? 1.5f : 0.0f);
    }
  }
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, xs, 2, xv, sizeof xv, x));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, ys, 1, yv, sizeof yv, y));
}

/* Dense(8, relu) -> Dense(3), compiled with Adam (lr 0.05), sparse crossentropy and accuracy. */
static cairn_object *classifier(void) {
  cairn_object *layers[2] = {NULL, NULL}, *model = NULL, *opt = NULL;
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  cairn_model_options mo = CAIRN_MODEL_OPTIONS_INIT;
  cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_compile_options co = CAIRN_COMPILE_OPTIONS_INIT;
  const char *metrics[1] = {"accuracy"};
  d.units = 8;
  d.activation = "relu";
  CHECK_OK(cairn_dense_create(ctx, &d, &layers[0]));
  d.units = 3;
  d.activation = NULL;
  CHECK_OK(cairn_dense_create(ctx, &d, &layers[1]));
  mo.layers = (const cairn_object *const *)layers;
  mo.n_layers = 2;
  CHECK_OK(cairn_model_create(ctx, &mo, &model));
  oo.kind = CAIRN_OPTIMIZER_ADAM;
  oo.learning_rate = 0.05;
  CHECK_OK(cairn_optimizer_create(ctx, &oo, &opt));
  co.optimizer = opt;
  co.loss = "sparse_categorical_crossentropy";
  co.metrics = metrics;
  co.n_metrics = 1;
  CHECK_OK(cairn_model_compile(model, &co));
  cairn_object_free(opt);
  cairn_object_free(layers[0]);
  cairn_object_free(layers[1]);
  return model;
}

/* The bytes of every weight, concatenated (malloc'd; *n receives the size). */
static unsigned char *weight_bytes(cairn_object *model, size_t *n) {
  cairn_object_array *w = NULL;
  unsigned char *out = NULL;
  size_t i, total = 0;
  CHECK_OK(cairn_layer_weights(model, 0, &w));
  for (i = 0; i < cairn_object_array_size(w); ++i) {
    cairn_tensor *t = NULL;
    size_t nb;
    CHECK_OK(cairn_variable_read(cairn_object_array_get(w, i), &t));
    nb = cairn_tensor_nbytes(t);
    out = realloc(out, total + nb);
    CHECK_OK(cairn_tensor_read(t, out + total, nb));
    total += nb;
    cairn_tensor_free(t);
  }
  cairn_object_array_free(w);
  *n = total;
  return out;
}

static int same_weights(cairn_object *a, cairn_object *b) {
  size_t na, nb;
  unsigned char *wa = weight_bytes(a, &na), *wb = weight_bytes(b, &nb);
  int same = na == nb && na > 0 && memcmp(wa, wb, na) == 0;
  free(wa);
  free(wb);
  return same;
}

static cairn_fit_options quiet(int64_t epochs) {
  cairn_fit_options o = CAIRN_FIT_OPTIONS_INIT;
  o.epochs = epochs;
  o.batch_size = 16;
  o.verbose = CAIRN_VERBOSE_SILENT;
  return o;
}

static void test_fit_evaluate_predict(void) {
  cairn_tensor *x = NULL, *y = NULL, *p = NULL;
  cairn_object *model = classifier();
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fo = quiet(10);
  cairn_history *h = NULL;
  cairn_logs *logs = NULL;
  const double *loss, *val;
  size_t n = 0, nv = 0;
  double acc = 0;

  blobs(&x, &y);
  data.x = x;
  data.y = y;
  fo.validation = &data;
  CHECK_OK(cairn_model_fit(model, &data, &fo, &h));
  CHECK(cairn_history_num_epochs(h) == 10);
  CHECK(cairn_history_epoch(h, 9) == 9);
  CHECK(cairn_history_num_names(h) == 4);
  CHECK(strcmp(cairn_history_name(h, 2), "val_loss") == 0);
  loss = cairn_history_values(h, "loss", &n);
  val = cairn_history_values(h, "val_accuracy", &nv);
  CHECK(n == 10 && nv == 10);
  if (loss && n == 10) CHECK(loss[9] < loss[0] * 0.5);
  if (val && nv == 10) CHECK(val[9] > 0.9);
  CHECK(cairn_history_values(h, "auc", &n) == NULL && n == 0);
  cairn_history_free(h);

  CHECK_OK(cairn_model_evaluate(model, &data, NULL, &logs));
  CHECK(cairn_logs_size(logs) == 2);
  CHECK(strcmp(cairn_logs_name(logs, 0), "loss") == 0);
  CHECK_OK(cairn_logs_get(logs, "accuracy", &acc));
  CHECK(acc > 0.9 && acc == cairn_logs_value(logs, 1));
  CHECK(isnan(cairn_logs_value(logs, 7)));
  CHECK_ERR(cairn_logs_get(logs, "auc", &acc), CAIRN_NOT_FOUND, "cairn_logs_get: no value 'auc' in the logs (they have: loss, accuracy)");
  cairn_logs_free(logs);

  data.y = NULL;
  CHECK_OK(cairn_model_predict(model, &data, NULL, &p));
  CHECK(cairn_tensor_dim(p, 0) == 48 && cairn_tensor_dim(p, 1) == 3);
  cairn_tensor_free(p);

  data.y = y;
  CHECK_OK(cairn_model_train_on_batch(model, x, y, &logs));
  CHECK(cairn_logs_size(logs) == 2);
  cairn_logs_free(logs);
  CHECK_OK(cairn_model_test_on_batch(model, x, y, &logs));
  cairn_logs_free(logs);
  cairn_object_free(model);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
}

/* Hooks that count, stop after a global step, or fail at an epoch's end. */
typedef struct {
  int train_begin, train_end, epoch_end, batch_end, released;
  int64_t stop_after, fail_epoch;
  double last_loss;
} Counts;

static cairn_status *on_train_begin(void *u, cairn_object *model) {
  (void)model;
  ((Counts *)u)->train_begin++;
  return NULL;
}
static cairn_status *on_train_end(void *u, cairn_object *model, const cairn_logs *logs) {
  (void)model;
  (void)logs;
  ((Counts *)u)->train_end++;
  return NULL;
}
static cairn_status *on_epoch_end(void *u, cairn_object *model, int64_t epoch, const cairn_logs *logs) {
  Counts *c = (Counts *)u;
  (void)model;
  c->epoch_end++;
  if (cairn_logs_get(logs, "loss", &c->last_loss) != NULL) return cairn_status_create(CAIRN_INTERNAL, "no loss");
  if (epoch == c->fail_epoch) return cairn_status_create(CAIRN_ABORTED, "the hook gave up");
  return NULL;
}
static cairn_status *on_batch_end(void *u, cairn_object *model, int64_t batch, const cairn_logs *logs) {
  Counts *c = (Counts *)u;
  (void)batch;
  (void)logs;
  if (++c->batch_end == c->stop_after) cairn_model_stop_training(model);
  return NULL;
}
static void release_counts(void *u) { ((Counts *)u)->released++; }

static void test_hooks(void) {
  cairn_tensor *x = NULL, *y = NULL;
  cairn_object *model = classifier();
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fo = quiet(4);
  cairn_callback_hooks hooks = CAIRN_CALLBACK_HOOKS_INIT;
  cairn_callback *cb = NULL;
  cairn_history *h = NULL;
  Counts counts;

  memset(&counts, 0, sizeof counts);
  counts.fail_epoch = -1;
  blobs(&x, &y);
  data.x = x;
  data.y = y;
  hooks.user_data = &counts;
  hooks.on_train_begin = on_train_begin;
  hooks.on_train_end = on_train_end;
  hooks.on_epoch_end = on_epoch_end;
  hooks.on_train_batch_end = on_batch_end;
  hooks.release = release_counts;
  CHECK_OK(cairn_callback_create(&hooks, &cb));
  fo.callbacks = &cb;
  fo.n_callbacks = 1;
  CHECK_OK(cairn_model_fit(model, &data, &fo, NULL));
  CHECK(counts.train_begin == 1 && counts.train_end == 1 && counts.epoch_end == 4 && counts.batch_end == 12);
  CHECK(counts.last_loss > 0);

  counts.stop_after = counts.batch_end + 5; /* stops in the second epoch */
  CHECK_OK(cairn_model_fit(model, &data, &fo, &h));
  CHECK(cairn_history_num_epochs(h) == 2);
  cairn_history_free(h);

  counts.fail_epoch = 1;
  CHECK_ERR(cairn_model_fit(model, &data, &fo, NULL), CAIRN_ABORTED,
            "cairn_model_fit: callback on_epoch_end: the hook gave up");
  CHECK(counts.released == 0);
  cairn_callback_free(cb);
  CHECK(counts.released == 1);
  cairn_object_free(model);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
}

static cairn_status *halve(void *u, int64_t epoch, double lr, double *out) {
  (void)epoch;
  ((Counts *)u)->epoch_end++;
  *out = lr / 2;
  return NULL;
}

static void test_builtin_callbacks(void) {
  cairn_tensor *x = NULL, *y = NULL;
  cairn_object *model = classifier(), *fresh = classifier(), *opt = NULL;
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fo = quiet(3);
  cairn_model_checkpoint_options mco = CAIRN_MODEL_CHECKPOINT_OPTIONS_INIT;
  cairn_csv_logger_options clo = CAIRN_CSV_LOGGER_OPTIONS_INIT;
  cairn_tensorboard_options tbo = CAIRN_TENSORBOARD_OPTIONS_INIT;
  cairn_callback *cbs[4] = {NULL, NULL, NULL, NULL};
  cairn_checkpoint *ck = NULL;
  cairn_restore_status *rs = NULL;
  cairn_tensor *p = NULL;
  const char *names[1] = {"model"};
  char dir[600], csv[600], logdir[600], ckpt3[700], line[700];
  Counts counts;
  FILE *f;
  double lr = 0;
  int lines = 0;

  memset(&counts, 0, sizeof counts);
  blobs(&x, &y);
  data.x = x;
  data.y = y;
  mco.directory = path_in_tmp("ckpts", dir, sizeof dir);
  mco.max_to_keep = 2;
  CHECK_OK(cairn_callback_model_checkpoint(ctx, &mco, &cbs[0]));
  clo.path = path_in_tmp("log.csv", csv, sizeof csv);
  CHECK_OK(cairn_callback_csv_logger(&clo, &cbs[1]));
  tbo.logdir = path_in_tmp("tb", logdir, sizeof logdir);
  CHECK_OK(cairn_callback_tensorboard(&tbo, &cbs[2]));
  CHECK_OK(cairn_callback_learning_rate_scheduler(halve, &counts, release_counts, &cbs[3]));
  fo.callbacks = cbs;
  fo.n_callbacks = 4;
  CHECK_OK(cairn_model_fit(model, &data, &fo, NULL));
  CHECK(counts.epoch_end == 3);

  /* The one-expression restore: the checkpoint and its status are gone before the fresh model is
   * built; the values still arrive. */
  snprintf(ckpt3, sizeof ckpt3, "%s/ckpt-3", dir);
  CHECK(access(ckpt3, F_OK) == 0);
  CHECK_OK(cairn_checkpoint_create(ctx, names, &fresh, 1, &ck));
  CHECK_OK(cairn_checkpoint_restore(ck, ckpt3, &rs));
  cairn_restore_status_expect_partial(rs);
  cairn_restore_status_free(rs);
  cairn_checkpoint_free(ck);
  data.y = NULL;
  CHECK_OK(cairn_model_predict(fresh, &data, NULL, &p));
  cairn_tensor_free(p);
  CHECK(same_weights(model, fresh));

  f = fopen(csv, "r");
  CHECK(f != NULL);
  if (f) {
    while (fgets(line, sizeof line, f)) ++lines;
    fclose(f);
  }
  CHECK(lines == 4);
  snprintf(line, sizeof line, "%s/train", logdir);
  CHECK(access(line, F_OK) == 0);

  /* The scheduler halved the rate three times: 0.05 / 8. Compiling made the optimizer the model's
   * edge "optimizer". */
  CHECK_OK(cairn_object_get(model, "optimizer", &opt));
  CHECK_OK(cairn_optimizer_learning_rate(opt, &lr));
  CHECK(fabs(lr - 0.05 / 8) < 1e-9);
  cairn_object_free(opt);
  for (lines = 0; lines < 4; ++lines) cairn_callback_free(cbs[lines]);
  CHECK(counts.released == 1);
  cairn_object_free(model);
  cairn_object_free(fresh);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
}

/* One run as a fresh process would make it: its own context (seeded, so the initial weights are
 * the same each time), model and optimizer, with a backup after every batch. `fail_epoch` >= 0
 * makes a hook fail at that epoch's end, a crash after the epoch's last backup. */
static void run_with_backup(const char *dir, int64_t fail_epoch, cairn_object **model_out, cairn_status **st) {
  cairn_context *outer = ctx;
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_tensor *x = NULL, *y = NULL;
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fo = quiet(3);
  cairn_backup_options bo = CAIRN_BACKUP_OPTIONS_INIT;
  cairn_callback_hooks hooks = CAIRN_CALLBACK_HOOKS_INIT;
  cairn_callback *cbs[2] = {NULL, NULL};
  Counts counts;
  memset(&counts, 0, sizeof counts);
  counts.fail_epoch = fail_epoch;
  copts.seed = 11;
  CHECK_OK(cairn_context_create(&copts, &ctx));
  blobs(&x, &y);
  data.x = x;
  data.y = y;
  bo.directory = dir;
  bo.save_freq = 1;
  CHECK_OK(cairn_callback_backup_and_restore(ctx, &bo, &cbs[0]));
  hooks.user_data = &counts;
  hooks.on_epoch_end = on_epoch_end;
  CHECK_OK(cairn_callback_create(&hooks, &cbs[1]));
  fo.callbacks = cbs;
  fo.n_callbacks = 2;
  *model_out = classifier();
  *st = cairn_model_fit(*model_out, &data, &fo, NULL);
  cairn_callback_free(cbs[0]);
  cairn_callback_free(cbs[1]);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_context_free(ctx); /* the model keeps what it needs */
  ctx = outer;
}

static void test_backup_and_restore(void) {
  char dir[600], other[600];
  cairn_object *whole = NULL, *crashed = NULL, *resumed = NULL;
  cairn_status *st = NULL;
  run_with_backup(path_in_tmp("backup_whole", other, sizeof other), -1, &whole, &st);
  CHECK_OK(st);
  path_in_tmp("backup", dir, sizeof dir);
  run_with_backup(dir, 1, &crashed, &st);
  CHECK_ERR(st, CAIRN_ABORTED, "the hook gave up");
  CHECK(!same_weights(whole, crashed));
  run_with_backup(dir, -1, &resumed, &st);
  CHECK_OK(st);
  CHECK(same_weights(whole, resumed));
  CHECK(access(dir, F_OK) != 0); /* removed after the normal end */
  cairn_object_free(whole);
  cairn_object_free(crashed);
  cairn_object_free(resumed);
}

/* Save, then load without the code that built it: the same predictions, and training continues
 * the same on both. */
static void test_save_load(void) {
  cairn_tensor *x = NULL, *y = NULL, *pa = NULL, *pb = NULL;
  cairn_object *model = classifier(), *loaded = NULL, *unbuilt = classifier();
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fo = quiet(2);
  cairn_function *serving = NULL;
  char dir[600], file[700];
  unsigned char *a, *b;
  size_t na, nb;

  blobs(&x, &y);
  data.x = x;
  data.y = y;
  fo.shuffle = CAIRN_FALSE;
  CHECK_OK(cairn_model_fit(model, &data, &fo, NULL));
  path_in_tmp("saved", dir, sizeof dir);
  CHECK_ERR(cairn_model_save(unbuilt, dir), CAIRN_FAILED_PRECONDITION, "cairn_model_save: save_model: ");
  CHECK_OK(cairn_model_save(model, dir));
  CHECK_OK(cairn_model_load(ctx, dir, &loaded));
  data.y = NULL;
  CHECK_OK(cairn_model_predict(model, &data, NULL, &pa));
  CHECK_OK(cairn_model_predict(loaded, &data, NULL, &pb));
  na = cairn_tensor_nbytes(pa);
  nb = cairn_tensor_nbytes(pb);
  a = malloc(na);
  b = malloc(nb);
  CHECK_OK(cairn_tensor_read(pa, a, na));
  CHECK_OK(cairn_tensor_read(pb, b, nb));
  CHECK(na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
  cairn_tensor_free(pa);
  cairn_tensor_free(pb);
  data.y = y;
  CHECK_OK(cairn_model_fit(model, &data, &fo, NULL));
  CHECK_OK(cairn_model_fit(loaded, &data, &fo, NULL));
  CHECK(same_weights(model, loaded));
  snprintf(file, sizeof file, "%s/serving.cairnfn", dir);
  CHECK_OK(cairn_function_load(ctx, file, &serving));
  cairn_function_free(serving);
  cairn_object_free(loaded);
  CHECK_ERR(cairn_model_load(ctx, tmp, &loaded), CAIRN_NOT_FOUND, "cairn_model_load: load_model: no saved model");
  CHECK(loaded == NULL);
  cairn_object_free(unbuilt);
  cairn_object_free(model);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
}

static void test_bad_input(void) {
  cairn_tensor *x = NULL, *y = NULL;
  cairn_object *model = classifier(), *seq = NULL, *plain = NULL;
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fo = quiet(1);
  cairn_compile_options co = CAIRN_COMPILE_OPTIONS_INIT;
  cairn_model_checkpoint_options mco = CAIRN_MODEL_CHECKPOINT_OPTIONS_INIT;
  cairn_reduce_lr_options ro = CAIRN_REDUCE_LR_OPTIONS_INIT;
  cairn_callback *cb = NULL;
  cairn_model_options mo = CAIRN_MODEL_OPTIONS_INIT;
  const cairn_object *layers[1];

  blobs(&x, &y);
  data.x = x;
  data.y = y;
  CHECK_ERR(cairn_model_fit(NULL, &data, &fo, NULL), CAIRN_INVALID_ARGUMENT, "cairn_model_fit: model is NULL");
  CHECK_ERR(cairn_model_fit(model, NULL, &fo, NULL), CAIRN_INVALID_ARGUMENT, "cairn_model_fit: data is NULL");
  fo.epochs = 0;
  CHECK_ERR(cairn_model_fit(model, &data, &fo, NULL), CAIRN_INVALID_ARGUMENT, "cairn_model_fit: fit: need 0 <= initial_epoch < epochs");
  fo = quiet(1);
  fo.verbose = (cairn_verbose)9;
  CHECK_ERR(cairn_model_fit(model, &data, &fo, NULL), CAIRN_INVALID_ARGUMENT, "verbose is 9");
  fo = quiet(1);
  fo.n_callbacks = 1;
  CHECK_ERR(cairn_model_fit(model, &data, &fo, NULL), CAIRN_INVALID_ARGUMENT, "callbacks is NULL");
  fo = quiet(1);
  fo.struct_size = 7;
  CHECK_ERR(cairn_model_fit(model, &data, &fo, NULL), CAIRN_INVALID_ARGUMENT, "cairn_fit_options.struct_size is 7");

  CHECK_OK(cairn_sequential_create(ctx, NULL, &seq));
  CHECK_ERR(cairn_model_fit(seq, &data, NULL, NULL), CAIRN_INVALID_ARGUMENT, "expected a model (from cairn_model_create)");
  CHECK_ERR(cairn_model_compile(model, &co), CAIRN_INVALID_ARGUMENT, "cairn_model_compile: optimizer is NULL");
  co.optimizer = seq;
  co.loss = "mse";
  CHECK_ERR(cairn_model_compile(model, &co), CAIRN_INVALID_ARGUMENT, "expected an optimizer");
  layers[0] = seq;
  mo.layers = layers;
  mo.n_layers = 1;
  CHECK_OK(cairn_model_create(ctx, &mo, &plain)); /* a Sequential is a layer */
  CHECK_ERR(cairn_model_fit(plain, &data, NULL, NULL), CAIRN_FAILED_PRECONDITION, "is not compiled");
  CHECK_ERR(cairn_callback_model_checkpoint(ctx, &mco, &cb), CAIRN_INVALID_ARGUMENT, "directory is NULL");
  ro.factor = 2;
  CHECK_ERR(cairn_callback_reduce_lr_on_plateau(&ro, &cb), CAIRN_INVALID_ARGUMENT, "factor must be in [0, 1)");
  CHECK_ERR(cairn_callback_create(NULL, &cb), CAIRN_INVALID_ARGUMENT, "hooks is NULL");
  CHECK(cb == NULL);
  cairn_object_free(seq);
  cairn_object_free(plain);
  cairn_object_free(model);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
}

int main(void) {
  const char *t = getenv("TEST_TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/model_test_%d", t ? t : "/tmp", (int)getpid());
  mkdir(tmp, 0755);
  CHECK_OK(cairn_context_create(NULL, &ctx));
  test_fit_evaluate_predict();
  test_hooks();
  test_builtin_callbacks();
  test_backup_and_restore();
  test_save_load();
  test_bad_input();
  cairn_context_free(ctx);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures != 0;
}
