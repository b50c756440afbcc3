/* Cairn's training demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits.
 *
 * Each epoch shuffles the training set (a permutation drawn from the epoch number, so the data
 * order is part of the checkpointed state), trains with Adam on mini-batches under a gradient
 * tape, and saves model, optimizer and epoch with a checkpoint manager (3 kept). Run it again and
 * it resumes from the latest checkpoint. It ends with the accuracy on the held-out test split.
 * The Go, Rust and Java demos follow the same spec (examples/TRAINING_DEMO.md) and print the same
 * lines.
 *
 * With --logdir it also writes TensorBoard summaries there: the epoch's loss and accuracy, and the
 * graph of the compiled training step (open them with `tensorboard --logdir DIR`).
 *
 * usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N] [--logdir DIR] */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cairn/cairn.h"

enum { kFeatures = 64, kClasses = 10, kHidden = 64, kBatch = 32, kMaxSamples = 2000 };
static const double kLearningRate = 0.005;
static const int64_t kShuffleSeed = 7;
static const uint64_t kContextSeed = 1;

static void check(cairn_status *s, const char *what) {
  if (s == NULL) return;
  fprintf(stderr, "train_digits: %s: %s\n", what, cairn_status_message(s));
  cairn_status_free(s);
  exit(1);
}

/* ---- Data: 64 pixels (0..16) and a label per line; sample i is a test sample when i % 5 == 4. ---- */

typedef struct {
  float *x;       /* n x 64, pixels / 16 */
  int32_t *y;     /* n labels */
  int64_t n;
} Split;

static void load_digits(const char *path, Split *train, Split *test) {
  FILE *f = fopen(path, "r");
  int64_t i = 0;
  if (!f) {
    fprintf(stderr, "train_digits: cannot open %s: %s\n", path, strerror(errno));
    exit(1);
  }
  train->x = malloc(sizeof(float) * kFeatures * kMaxSamples);
  test->x = malloc(sizeof(float) * kFeatures * kMaxSamples);
  train->y = malloc(sizeof(int32_t) * kMaxSamples);
  test->y = malloc(sizeof(int32_t) * kMaxSamples);
  train->n = test->n = 0;
  for (;; ++i) {
    Split *s = (i % 5 == 4) ? test : train;
    int v, k, label;
    for (k = 0; k < kFeatures; ++k) {
      if (fscanf(f, "%d,", &v) != 1) break;
      s->x[s->n * kFeatures + k] = (float)v / 16.0f;
    }
    if (k == 0) break; /* end of file */
    if (k != kFeatures || fscanf(f, "%d", &label) != 1 || label < 0 || label >= kClasses || i >= kMaxSamples) {
      fprintf(stderr, "train_digits: %s: line %lld is not 64 pixels and a label\n", path, (long long)i + 1);
      exit(1);
    }
    s->y[s->n++] = label;
  }
  fclose(f);
}

/* ---- Small helpers over the C API ---- */

static cairn_tensor *tensor(cairn_context *ctx, cairn_dtype dtype, const int64_t *shape, size_t rank, const void *data,
                            size_t nbytes) {
  cairn_tensor *t = NULL;
  check(cairn_tensor_create(ctx, dtype, shape, rank, data, nbytes, &t), "tensor");
  return t;
}

static cairn_attr attr_int(const char *name, int64_t v) {
  cairn_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = CAIRN_ATTR_INT;
  a.i = v;
  return a;
}

static cairn_attr attr_ints(const char *name, const int64_t *v, size_t n) {
  cairn_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = CAIRN_ATTR_INTS;
  a.ints = v;
  a.n_ints = n;
  return a;
}

/* The epoch's order of the training samples: the indices that sort uniform draws (seeded by the
 * epoch) in descending order. */
static cairn_tensor *epoch_permutation(cairn_context *ctx, int64_t n, int64_t epoch) {
  cairn_attr u[4];
  cairn_attr k = attr_int("k", n);
  cairn_tensor *draws = NULL, *outs[2] = {NULL, NULL};
  u[0] = attr_ints("shape", &n, 1);
  u[1] = attr_int("seed", kShuffleSeed);
  u[2] = attr_int("seed2", epoch + 1);
  memset(&u[3], 0, sizeof u[3]);
  u[3].name = "dtype";
  u[3].kind = CAIRN_ATTR_DTYPE;
  u[3].dtype = CAIRN_FLOAT32;
  check(cairn_op_run(ctx, "RandomUniform", NULL, 0, u, 4, &draws, 1), "RandomUniform");
  check(cairn_op_run(ctx, "TopKV2", &draws, 1, &k, 1, outs, 2), "TopKV2");
  cairn_tensor_free(draws);
  cairn_tensor_free(outs[0]);
  return outs[1];
}

/* Rows `begin .. begin+size` of `perm` gathered from `data`. */
static cairn_tensor *batch_of(cairn_context *ctx, cairn_tensor *data, cairn_tensor *perm, int64_t begin, int64_t size) {
  cairn_attr a[2];
  cairn_tensor *idx = NULL, *ins[2], *out = NULL;
  a[0] = attr_ints("begin", &begin, 1);
  a[1] = attr_ints("size", &size, 1);
  check(cairn_op_run(ctx, "Slice", &perm, 1, a, 2, &idx, 1), "Slice");
  ins[0] = data;
  ins[1] = idx;
  check(cairn_op_run(ctx, "GatherV2", ins, 2, NULL, 0, &out, 1), "GatherV2");
  cairn_tensor_free(idx);
  return out;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cairn_object *build_model(cairn_context *ctx) {
  cairn_object *model = NULL, *hidden = NULL, *out = NULL;
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  check(cairn_sequential_create(ctx, &(cairn_sequential_options){.struct_size = sizeof(cairn_sequential_options), .name = "mlp"}, &model), "Sequential");
  d.units = kHidden;
  d.activation = "relu";
  check(cairn_dense_create(ctx, &d, &hidden), "Dense");
  d.units = kClasses;
  d.activation = NULL;
  check(cairn_dense_create(ctx, &d, &out), "Dense");
  check(cairn_sequential_add(model, hidden), "add");
  check(cairn_sequential_add(model, out), "add");
  cairn_object_free(hidden);
  cairn_object_free(out);
  return model;
}

/* The training step as a compiled function (tf.function): traced once, then replayed for every
 * batch. inputs: x [batch, 64] float32, y [batch] int32; outputs: the loss and the logits. */
typedef struct {
  cairn_object *model, *optimizer;
} StepState;

static cairn_status *train_step(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                                cairn_tensor **out, size_t n_out) {
  StepState *st = (StepState *)user_data;
  cairn_tensor *grads[8] = {NULL};
  cairn_object *vars[8];
  cairn_object_array *weights = NULL;
  cairn_tape *tape = NULL;
  cairn_status *s;
  size_t i, nw = 0;
  (void)n_in;
  (void)n_out;
  s = cairn_tape_create(ctx, NULL, &tape);
  if (!s) s = cairn_layer_call(st->model, in[0], 1, &out[1]);
  if (!s) s = cairn_loss(ctx, CAIRN_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, in[1], out[1], 1, &out[0]);
  if (!s) s = cairn_layer_weights(st->model, 1, &weights);
  if (!s) {
    nw = cairn_object_array_size(weights);
    for (i = 0; i < nw; ++i) vars[i] = cairn_object_array_get(weights, i);
    s = cairn_tape_gradient_variables(tape, out[0], vars, nw, NULL, CAIRN_UNCONNECTED_NONE, grads);
  }
  if (!s) s = cairn_optimizer_apply_gradients(st->optimizer, (const cairn_tensor *const *)grads, vars, nw);
  for (i = 0; i < nw; ++i) cairn_tensor_free(grads[i]);
  cairn_object_array_free(weights);
  cairn_tape_free(tape);
  return s;
}

/* One pass over the training set; returns (through the metrics) the mean loss and accuracy. */
static void train_epoch(cairn_context *ctx, cairn_function *step, cairn_tensor *x, cairn_tensor *y, int64_t n,
                        int64_t epoch, cairn_object *loss_mean, cairn_object *accuracy) {
  cairn_tensor *perm = epoch_permutation(ctx, n, epoch);
  int64_t b;
  for (b = 0; b < n; b += kBatch) {
    int64_t size = n - b < kBatch ? n - b : kBatch;
    cairn_tensor *batch[2] = {batch_of(ctx, x, perm, b, size), batch_of(ctx, y, perm, b, size)};
    cairn_tensor *outs[2] = {NULL, NULL}; /* loss, logits */
    check(cairn_function_call(step, batch, 2, outs, 2), "train_step");
    check(cairn_metric_update(loss_mean, outs[0], NULL), "loss metric");
    check(cairn_metric_update(accuracy, batch[1], outs[1]), "accuracy metric");
    cairn_tensor_free(outs[0]);
    cairn_tensor_free(outs[1]);
    cairn_tensor_free(batch[0]);
    cairn_tensor_free(batch[1]);
  }
  cairn_tensor_free(perm);
}

static double test_accuracy(cairn_context *ctx, cairn_object *model, cairn_tensor *x, cairn_tensor *y) {
  cairn_object *acc = NULL;
  cairn_tensor *logits = NULL;
  double result;
  check(cairn_metric_create(ctx, CAIRN_METRIC_ACCURACY, "test_accuracy", &acc), "metric");
  check(cairn_layer_call(model, x, 0, &logits), "model");
  check(cairn_metric_update(acc, y, logits), "accuracy");
  check(cairn_metric_result(acc, &result), "accuracy");
  cairn_tensor_free(logits);
  cairn_object_free(acc);
  return result;
}

static const char *default_dir(char *buf, size_t size) {
  const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (cache && *cache) snprintf(buf, size, "%s/cairn/digits-c", cache);
  else snprintf(buf, size, "%s/.cache/cairn/digits-c", home ? home : ".");
  return buf;
}

int main(int argc, char **argv) {
  const char *data = "examples/data/digits.csv", *dir = NULL, *logdir = NULL;
  cairn_summary_writer *writer = NULL;
  char dir_buf[4096];
  int64_t epochs = 20, epoch = 0, shape[2];
  Split train, test;
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_optimizer_options oopts = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_checkpoint_manager_options mopts = CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT;
  cairn_context *ctx = NULL;
  cairn_object *model = NULL, *optimizer = NULL, *epoch_var = NULL, *loss_mean = NULL, *accuracy = NULL;
  cairn_object *children[3];
  const char *names[3] = {"epoch", "model", "optimizer"};
  cairn_checkpoint *ckpt = NULL;
  cairn_checkpoint_manager *manager = NULL;
  cairn_tensor *x_train, *y_train, *x_test, *y_test, *t;
  char *summary = NULL;
  StepState step_state;
  int wrote_graph = 0;
  cairn_function *step = NULL;
  int a;

  for (a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--data") == 0) data = argv[a + 1];
    else if (strcmp(argv[a], "--dir") == 0) dir = argv[a + 1];
    else if (strcmp(argv[a], "--epochs") == 0) epochs = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--logdir") == 0) logdir = argv[a + 1];
    else break;
  }
  if (a < argc || epochs < 1) {
    fprintf(stderr, "usage: %s [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR]\n", argv[0]);
    return 2;
  }
  if (!dir) dir = default_dir(dir_buf, sizeof dir_buf);

  load_digits(data, &train, &test);
  copts.seed = kContextSeed;
  check(cairn_context_create(&copts, &ctx), "context");
  shape[1] = kFeatures;
  shape[0] = train.n;
  x_train = tensor(ctx, CAIRN_FLOAT32, shape, 2, train.x, sizeof(float) * kFeatures * train.n);
  y_train = tensor(ctx, CAIRN_INT32, shape, 1, train.y, sizeof(int32_t) * train.n);
  shape[0] = test.n;
  x_test = tensor(ctx, CAIRN_FLOAT32, shape, 2, test.x, sizeof(float) * kFeatures * test.n);
  y_test = tensor(ctx, CAIRN_INT32, shape, 1, test.y, sizeof(int32_t) * test.n);
  printf("digits: %lld training and %lld test samples of 8x8 pixels\n", (long long)train.n, (long long)test.n);

  model = build_model(ctx);
  oopts.kind = CAIRN_OPTIMIZER_ADAM;
  oopts.learning_rate = kLearningRate;
  check(cairn_optimizer_create(ctx, &oopts, &optimizer), "optimizer");
  t = tensor(ctx, CAIRN_INT64, NULL, 0, &epoch, sizeof epoch);
  {
    cairn_variable_options vopts = CAIRN_VARIABLE_OPTIONS_INIT;
    vopts.name = "epoch";
    vopts.trainable = 0;
    check(cairn_variable_create(ctx, t, &vopts, &epoch_var), "epoch variable");
  }
  cairn_tensor_free(t);
  children[0] = epoch_var;
  children[1] = model;
  children[2] = optimizer;
  check(cairn_checkpoint_create(ctx, names, children, 3, &ckpt), "checkpoint");
  mopts.max_to_keep = 3;
  check(cairn_checkpoint_manager_create(ckpt, dir, &mopts, &manager), "checkpoint manager");

  if (cairn_checkpoint_manager_latest(manager)) {
    cairn_restore_status *rs = NULL;
    check(cairn_checkpoint_restore(ckpt, cairn_checkpoint_manager_latest(manager), &rs), "restore");
    /* The optimizer's slots are restored when its next step creates them; with no epoch left to
     * train they never are, which is expected here. */
    cairn_restore_status_expect_partial(rs);
    cairn_restore_status_free(rs);
    check(cairn_variable_read(epoch_var, &t), "epoch");
    check(cairn_tensor_read(t, &epoch, sizeof epoch), "epoch");
    cairn_tensor_free(t);
    printf("resumed from %s after epoch %lld\n", cairn_checkpoint_manager_latest(manager), (long long)epoch);
  }

  /* Build the model on one sample (a restore above is applied as its variables appear). */
  {
    cairn_tensor *first = NULL, *out = NULL;
    cairn_attr s[2];
    int64_t begin[2] = {0, 0}, size[2] = {1, kFeatures};
    s[0] = attr_ints("begin", begin, 2);
    s[1] = attr_ints("size", size, 2);
    check(cairn_op_run(ctx, "Slice", &x_test, 1, s, 2, &first, 1), "Slice");
    check(cairn_layer_call(model, first, 0, &out), "model");
    cairn_tensor_free(first);
    cairn_tensor_free(out);
  }
  check(cairn_layer_summary(model, &summary), "summary");
  printf("%s", summary);
  cairn_free(summary);

  /* Traced once per batch shape: full batches and the smaller last batch of an epoch. */
  step_state.model = model;
  step_state.optimizer = optimizer;
  check(cairn_function_create(ctx, "train_step", train_step, &step_state, NULL, &step), "train_step");
  if (logdir) check(cairn_summary_writer_create(logdir, NULL, &writer), "summary writer");
  check(cairn_metric_create(ctx, CAIRN_METRIC_MEAN, "loss", &loss_mean), "metric");
  check(cairn_metric_create(ctx, CAIRN_METRIC_ACCURACY, "accuracy", &accuracy), "metric");
  for (; epoch < epochs; ++epoch) {
    double start = now_seconds(), loss, acc, seconds;
    check(cairn_metric_reset(loss_mean), "metric");
    check(cairn_metric_reset(accuracy), "metric");
    train_epoch(ctx, step, x_train, y_train, train.n, epoch, loss_mean, accuracy);
    seconds = now_seconds() - start;
    check(cairn_metric_result(loss_mean, &loss), "metric");
    check(cairn_metric_result(accuracy, &acc), "metric");
    t = tensor(ctx, CAIRN_INT64, NULL, 0, (int64_t[]){epoch + 1}, sizeof(int64_t));
    check(cairn_variable_assign(epoch_var, t), "epoch");
    cairn_tensor_free(t);
    check(cairn_checkpoint_manager_save(manager, epoch + 1, NULL), "save");
    if (writer) {
      /* TensorBoard: the epoch's metrics, and once per run the graph of the traced step. */
      check(cairn_summary_scalar(writer, "epoch_loss", loss, epoch + 1), "summary");
      check(cairn_summary_scalar(writer, "epoch_accuracy", acc, epoch + 1), "summary");
      if (!wrote_graph) check(cairn_summary_graph(writer, step, 0, 0), "summary graph");
      wrote_graph = 1;
    }
    printf("epoch %2lld/%lld  loss %.4f  accuracy %.4f  %.0f examples/s\n", (long long)epoch + 1, (long long)epochs,
           loss, acc, (double)train.n / seconds);
  }
  printf("test accuracy: %.4f\n", test_accuracy(ctx, model, x_test, y_test));

  if (writer) check(cairn_summary_writer_close(writer), "summary close");
  cairn_summary_writer_free(writer);
  cairn_function_free(step);
  cairn_checkpoint_manager_free(manager);
  cairn_checkpoint_free(ckpt);
  cairn_object_free(loss_mean);
  cairn_object_free(accuracy);
  cairn_object_free(epoch_var);
  cairn_object_free(optimizer);
  cairn_object_free(model);
  cairn_tensor_free(x_train);
  cairn_tensor_free(y_train);
  cairn_tensor_free(x_test);
  cairn_tensor_free(y_test);
  cairn_context_free(ctx);
  free(train.x);
  free(train.y);
  free(test.x);
  free(test.y);
  return 0;
}
