/* Cairn's main demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits with
 * cairn_model_fit, keras-style.
 *
 * The digits come through an input pipeline (CSV, map, shard, shuffle, batch). fit trains with a
 * ModelCheckpoint (3 kept), a BackupAndRestore (every 20 batches) and, with --logdir, a TensorBoard
 * callback. Kill the process at any point and run it again: it continues from the last backup, at
 * the exact batch, and ends with the same weights, bit for bit, as a run never interrupted (the
 * last line is their checksum). --kill-after N sends SIGKILL to itself after global step N.
 * Then it evaluates on the test set, restores the last checkpoint into a fresh model, and checks
 * that the fresh model predicts the same.
 *
 * usage: fit_digits [--data digits.csv] [--dir DIR] [--epochs N] [--logdir DIR] [--kill-after N] */
#define _POSIX_C_SOURCE 200809L /* kill */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn/cairn.h"
#include "digits_data.h"

static const double kLearningRate = 0.003;
static const int64_t kBatch = 32, kShuffleSeed = 7;

static void check(cairn_status *s, const char *what) { digits_check(s, "fit_digits", what); }

/* --kill-after: a hook that sends SIGKILL to the process after global step N (nothing is flushed
 * or freed: a crash). */
static cairn_status *kill_after(void *user_data, cairn_object *model, int64_t batch, const cairn_logs *logs) {
  static int64_t steps = 0;
  (void)model;
  (void)batch;
  (void)logs;
  if (++steps == *(const int64_t *)user_data) kill(getpid(), SIGKILL);
  return NULL;
}

/* The fraction of rows of `scores` whose argmax is the label. */
static double accuracy_of(const cairn_tensor *scores, const cairn_tensor *labels) {
  const int64_t n = cairn_tensor_dim(labels, 0);
  float *s = malloc(cairn_tensor_nbytes(scores));
  int32_t *y = malloc(cairn_tensor_nbytes(labels));
  int64_t i, k, hits = 0;
  check(cairn_tensor_read(scores, s, cairn_tensor_nbytes(scores)), "read");
  check(cairn_tensor_read(labels, y, cairn_tensor_nbytes(labels)), "read");
  for (i = 0; i < n; ++i) {
    int64_t best = 0;
    for (k = 1; k < kDigitsClasses; ++k)
      if (s[i * kDigitsClasses + k] > s[i * kDigitsClasses + best]) best = k;
    hits += best == y[i];
  }
  free(s);
  free(y);
  return (double)hits / (double)n;
}

typedef struct {
  const char *data, *dir, *logdir;
  int64_t epochs, kill_after;
} Args;

static int parse_args(int argc, char **argv, Args *args) {
  int a;
  for (a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--data") == 0) args->data = argv[a + 1];
    else if (strcmp(argv[a], "--dir") == 0) args->dir = argv[a + 1];
    else if (strcmp(argv[a], "--epochs") == 0) args->epochs = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--logdir") == 0) args->logdir = argv[a + 1];
    else if (strcmp(argv[a], "--kill-after") == 0) args->kill_after = atoll(argv[a + 1]);
    else break;
  }
  return a == argc && args->epochs >= 1 && args->kill_after >= 0;
}

int main(int argc, char **argv) {
  Args args = {"examples/data/digits.csv", NULL, NULL, 30, 0};
  char ckpt_dir[4200], backup_dir[4200]; /* the directory (at most 4095 bytes) and a subdirectory */
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_model_checkpoint_options ck = CAIRN_MODEL_CHECKPOINT_OPTIONS_INIT;
  cairn_backup_options bk = CAIRN_BACKUP_OPTIONS_INIT;
  cairn_tensorboard_options tb = CAIRN_TENSORBOARD_OPTIONS_INIT;
  cairn_callback_hooks killer = CAIRN_CALLBACK_HOOKS_INIT;
  cairn_fit_options fit = CAIRN_FIT_OPTIONS_INIT;
  cairn_model_data train = CAIRN_MODEL_DATA_INIT, test = CAIRN_MODEL_DATA_INIT;
  cairn_callback *callbacks[4];
  size_t n_callbacks = 0, i;
  cairn_context *ctx = NULL;
  cairn_object *model = NULL, *fresh = NULL;
  cairn_checkpoint *ckpt = NULL;
  cairn_checkpoint_manager *manager = NULL;
  cairn_restore_status *rs = NULL;
  cairn_logs *logs = NULL;
  cairn_tensor *predicted = NULL;
  const char *names[1] = {"model"};
  double test_accuracy = 0;
  DigitsData data;

  if (!parse_args(argc, argv, &args)) {
    fprintf(stderr, "usage: %s [--data digits.csv] [--dir DIR] [--epochs N>=1] [--logdir DIR] [--kill-after N]\n",
            argv[0]);
    return 2;
  }
  if (!args.dir) {
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    static char dir[4096];
    if (cache && *cache) snprintf(dir, sizeof dir, "%s/cairn/fit-digits", cache);
    else snprintf(dir, sizeof dir, "%s/.cache/cairn/fit-digits", home ? home : ".");
    args.dir = dir;
  }
  snprintf(ckpt_dir, sizeof ckpt_dir, "%s/checkpoints", args.dir);
  snprintf(backup_dir, sizeof backup_dir, "%s/backup", args.dir);

  copts.seed = 1;
  check(cairn_context_create(&copts, &ctx), "context");
  digits_load(ctx, args.data, kBatch, kShuffleSeed, "fit_digits", &data);
  printf("digits: %lld training and %lld test samples of 8x8 pixels\n", (long long)data.n_train,
         (long long)data.n_test);
  model = digits_model(ctx, kLearningRate);

  /* The callbacks: checkpoints (3 kept), a backup every 20 batches, TensorBoard, the crash. */
  ck.directory = ckpt_dir;
  ck.max_to_keep = 3;
  check(cairn_callback_model_checkpoint(ctx, &ck, &callbacks[n_callbacks++]), "ModelCheckpoint");
  bk.directory = backup_dir;
  bk.save_freq = 20;
  check(cairn_callback_backup_and_restore(ctx, &bk, &callbacks[n_callbacks++]), "BackupAndRestore");
  if (args.logdir) {
    tb.logdir = args.logdir;
    tb.histogram_freq = 5;
    check(cairn_callback_tensorboard(&tb, &callbacks[n_callbacks++]), "TensorBoard");
  }
  if (args.kill_after > 0) {
    killer.user_data = &args.kill_after;
    killer.on_train_batch_end = kill_after;
    check(cairn_callback_create(&killer, &callbacks[n_callbacks++]), "kill hook");
  }

  train.dataset = data.train;
  test.x = data.x_test;
  test.y = data.y_test;
  fit.epochs = args.epochs;
  fit.validation = &test;
  fit.validation_freq = 5;
  fit.callbacks = callbacks;
  fit.n_callbacks = n_callbacks;
  check(cairn_model_fit(model, &train, &fit, NULL), "fit");
  check(cairn_model_evaluate(model, &test, NULL, &logs), "evaluate");
  check(cairn_logs_get(logs, "accuracy", &test_accuracy), "evaluate");
  printf("test accuracy: %.4f\n", test_accuracy);

  /* A fresh model restored from the last checkpoint, in TensorFlow's one-expression style: the
   * values wait on the fresh model until predict builds it. */
  fresh = digits_model(ctx, kLearningRate);
  check(cairn_checkpoint_create(ctx, names, &fresh, 1, &ckpt), "checkpoint");
  check(cairn_checkpoint_manager_create(ckpt, ckpt_dir, NULL, &manager), "manager");
  check(cairn_checkpoint_restore(ckpt, cairn_checkpoint_manager_latest(manager), &rs), "restore");
  cairn_restore_status_expect_partial(rs);
  cairn_restore_status_free(rs);
  cairn_checkpoint_manager_free(manager);
  cairn_checkpoint_free(ckpt);
  test.y = NULL;
  check(cairn_model_predict(fresh, &test, NULL, &predicted), "predict");
  printf("restored model accuracy: %.4f\n", accuracy_of(predicted, data.y_test));
  printf("weights: %016llx\n", digits_weights_checksum(model));

  cairn_tensor_free(predicted);
  cairn_logs_free(logs);
  for (i = 0; i < n_callbacks; ++i) cairn_callback_free(callbacks[i]);
  cairn_object_free(fresh);
  cairn_object_free(model);
  digits_free(&data);
  cairn_context_free(ctx);
  return 0;
}
