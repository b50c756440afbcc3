/* Cairn's training demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits.
 *
 * The digits come through an input pipeline (CSV -> map -> shuffle -> batch -> repeat -> prefetch)
 * whose iterator is checkpointed with the model, the optimizer and the metrics every 20 steps by a
 * checkpoint manager (3 kept). Kill it at any point and run it again: it resumes from the latest
 * checkpoint, mid-epoch too, and ends with the same weights, bit for bit, as a run never
 * interrupted (the last line is their checksum). --kill-after N simulates the crash after step N.
 * The Go, Rust and Java demos follow the same spec (examples/TRAINING_DEMO.md) and print the same
 * lines.
 *
 * With --logdir it also writes TensorBoard summaries there: the epoch's loss and accuracy, and the
 * graph of the compiled training step (open them with `tensorboard --logdir DIR`).
 *
 * usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N] [--logdir DIR]
 *                     [--save-every N] [--kill-after N] */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cairn/cairn.h"
#include "digits_data.h"

enum { kFeatures = kDigitsFeatures, kClasses = kDigitsClasses, kHidden = 64, kBatch = 32 };
static const double kLearningRate = 0.005;
static const int64_t kShuffleSeed = 7;
static const uint64_t kContextSeed = 1;

static void check(cairn_status *s, const char *what) { digits_check(s, "train_digits", what); }

/* ---- Small helpers over the C API ---- */

static cairn_attr attr_ints(const char *name, const int64_t *v, size_t n) {
  cairn_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = CAIRN_ATTR_INTS;
  a.ints = v;
  a.n_ints = n;
  return a;
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

typedef struct {
  const char *data, *dir, *logdir;
  int64_t epochs, save_every, kill_after;
} Args;

static int parse_args(int argc, char **argv, Args *args) {
  int a;
  for (a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--data") == 0) args->data = argv[a + 1];
    else if (strcmp(argv[a], "--dir") == 0) args->dir = argv[a + 1];
    else if (strcmp(argv[a], "--epochs") == 0) args->epochs = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--logdir") == 0) args->logdir = argv[a + 1];
    else if (strcmp(argv[a], "--save-every") == 0) args->save_every = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--kill-after") == 0) args->kill_after = atoll(argv[a + 1]);
    else break;
  }
  return a == argc && args->epochs >= 1 && args->save_every >= 1 && args->kill_after >= 0;
}

int main(int argc, char **argv) {
  Args args = {"examples/data/digits.csv", NULL, NULL, 20, 20, 0};
  cairn_summary_writer *writer = NULL;
  char dir_buf[4096];
  int64_t step, epoch;
  DigitsData data;
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_optimizer_options oopts = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_checkpoint_manager_options mopts = CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT;
  cairn_context *ctx = NULL;
  cairn_object *model = NULL, *optimizer = NULL, *iterator = NULL, *loss_mean = NULL, *accuracy = NULL;
  cairn_object *children[5];
  const char *names[5] = {"accuracy", "data", "loss", "model", "optimizer"};
  cairn_checkpoint *ckpt = NULL;
  cairn_checkpoint_manager *manager = NULL;
  char *summary = NULL;
  DigitsStep step_state;
  int wrote_graph = 0;
  cairn_function *step_fn = NULL;

  if (!parse_args(argc, argv, &args)) {
    fprintf(stderr,
            "usage: %s [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR] [--save-every N>=1] "
            "[--kill-after N]\n",
            argv[0]);
    return 2;
  }
  if (!args.dir) args.dir = default_dir(dir_buf, sizeof dir_buf);

  copts.seed = kContextSeed;
  check(cairn_context_create(&copts, &ctx), "context");
  digits_load(ctx, args.data, kBatch, kShuffleSeed, "train_digits", &data);
  {
    /* Repeated, so one iterator runs across epochs and a checkpoint resumes it mid-epoch. */
    cairn_dataset *repeated = NULL, *prefetched = NULL;
    check(cairn_dataset_repeat(data.train, -1, &repeated), "repeat");
    check(cairn_dataset_prefetch(repeated, 2, &prefetched), "prefetch");
    cairn_dataset_free(repeated);
    cairn_dataset_free(data.train);
    data.train = prefetched;
  }
  printf("digits: %lld training and %lld test samples of 8x8 pixels\n", (long long)data.n_train,
         (long long)data.n_test);

  model = build_model(ctx);
  oopts.kind = CAIRN_OPTIMIZER_ADAM;
  oopts.learning_rate = kLearningRate;
  check(cairn_optimizer_create(ctx, &oopts, &optimizer), "optimizer");
  check(cairn_metric_create(ctx, CAIRN_METRIC_MEAN, "loss", &loss_mean), "metric");
  check(cairn_metric_create(ctx, CAIRN_METRIC_ACCURACY, "accuracy", &accuracy), "metric");
  check(cairn_dataset_iterate(data.train, &iterator), "iterate");
  children[0] = accuracy;
  children[1] = iterator;
  children[2] = loss_mean;
  children[3] = model;
  children[4] = optimizer;
  check(cairn_checkpoint_create(ctx, names, children, 5, &ckpt), "checkpoint");
  mopts.max_to_keep = 3;
  check(cairn_checkpoint_manager_create(ckpt, args.dir, &mopts, &manager), "checkpoint manager");

  if (cairn_checkpoint_manager_latest(manager)) {
    cairn_restore_status *rs = NULL;
    check(cairn_checkpoint_restore(ckpt, cairn_checkpoint_manager_latest(manager), &rs), "restore");
    /* The optimizer's slots are restored when its next step creates them; with nothing left to
     * train they never are, which is expected here. */
    cairn_restore_status_expect_partial(rs);
    cairn_restore_status_free(rs);
    printf("resumed from %s after step %lld\n", cairn_checkpoint_manager_latest(manager),
           (long long)cairn_iterator_position(iterator));
  }

  /* Build the model on one sample (a restore above is applied as its variables appear). */
  {
    cairn_tensor *first = NULL, *out = NULL;
    cairn_attr s[2];
    int64_t begin[2] = {0, 0}, size[2] = {1, kFeatures};
    s[0] = attr_ints("begin", begin, 2);
    s[1] = attr_ints("size", size, 2);
    check(cairn_op_run(ctx, "Slice", &data.x_test, 1, s, 2, &first, 1), "Slice");
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
  check(cairn_function_create(ctx, "train_step", digits_train_step, &step_state, NULL, &step_fn), "train_step");
  if (args.logdir) check(cairn_summary_writer_create(args.logdir, NULL, &writer), "summary writer");
  step = cairn_iterator_position(iterator);
  for (epoch = step / data.steps_per_epoch; epoch < args.epochs; ++epoch) {
    double start = now_seconds(), loss, acc, seconds;
    int64_t trained = 0, end = (epoch + 1) * data.steps_per_epoch;
    if (step % data.steps_per_epoch == 0) {
      check(cairn_metric_reset(loss_mean), "metric");
      check(cairn_metric_reset(accuracy), "metric");
    }
    for (; step < end; ++step) {
      cairn_tensor *batch[2] = {NULL, NULL}; /* x, label */
      cairn_tensor *outs[2] = {NULL, NULL};  /* loss, logits */
      check(cairn_iterator_next(iterator, batch, 2), "next batch");
      check(cairn_function_call(step_fn, batch, 2, outs, 2), "train_step");
      check(cairn_metric_update(loss_mean, outs[0], NULL), "loss metric");
      check(cairn_metric_update(accuracy, batch[1], outs[1]), "accuracy metric");
      trained += cairn_tensor_dim(batch[1], 0);
      cairn_tensor_free(outs[0]);
      cairn_tensor_free(outs[1]);
      cairn_tensor_free(batch[0]);
      cairn_tensor_free(batch[1]);
      if (step + 1 == end || (step + 1) % args.save_every == 0)
        check(cairn_checkpoint_manager_save(manager, step + 1, NULL), "save");
      if (step + 1 == args.kill_after) _exit(3); /* a crash: nothing is flushed or freed */
    }
    seconds = now_seconds() - start;
    check(cairn_metric_result(loss_mean, &loss), "metric");
    check(cairn_metric_result(accuracy, &acc), "metric");
    if (writer) {
      /* TensorBoard: the epoch's metrics, and once per run the graph of the traced step. */
      check(cairn_summary_scalar(writer, "epoch_loss", loss, epoch + 1), "summary");
      check(cairn_summary_scalar(writer, "epoch_accuracy", acc, epoch + 1), "summary");
      if (!wrote_graph) check(cairn_summary_graph(writer, step_fn, 0, 0), "summary graph");
      wrote_graph = 1;
    }
    printf("epoch %2lld/%lld  loss %.4f  accuracy %.4f  %.0f examples/s\n", (long long)epoch + 1,
           (long long)args.epochs, loss, acc, (double)trained / seconds);
  }
  printf("test accuracy: %.4f\n", test_accuracy(ctx, model, data.x_test, data.y_test));
  printf("weights: %016llx\n", digits_weights_checksum(model));

  if (writer) check(cairn_summary_writer_close(writer), "summary close");
  cairn_summary_writer_free(writer);
  cairn_function_free(step_fn);
  check(cairn_iterator_close(iterator), "close");
  cairn_checkpoint_manager_free(manager);
  cairn_checkpoint_free(ckpt);
  cairn_object_free(iterator);
  cairn_object_free(loss_mean);
  cairn_object_free(accuracy);
  cairn_object_free(optimizer);
  cairn_object_free(model);
  digits_free(&data);
  cairn_context_free(ctx);
  return 0;
}
