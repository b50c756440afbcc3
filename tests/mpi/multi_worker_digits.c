/* The digits MLP (examples/c/fit_digits.c's model: 64 -> 64 relu -> 10, Adam, global batches of 32)
 * trained with cairn_model_fit, once in one process without a strategy (--single), and under
 * mpirun with a multi-worker strategy (cairn_multi_worker_strategy_create) where each rank starts
 * from a different random init (context seed 1 + rank) and the replica check is on. tests/mpi/run.sh
 * compares the accuracies and checks that only rank 0 printed progress and wrote TensorBoard events.
 * Multi-worker, every rank prints "rank R of N: accuracy A weights C" and checks that every rank's
 * weights checksum is the same (all-gathered); exits nonzero on the first failure.
 *
 * A lost rank and a restart (issue 17): with --backup DIR, fit runs with BackupAndRestore (every
 * --save-freq batches; a sharded backup, since the strategy spans processes), and --die R:K makes
 * rank R kill itself with SIGKILL before its K-th batch (counted from 1 in this process). Started
 * again with the same DIR, fit resumes from the last committed backup; every rank prints how many
 * batches it ran, so the caller can tell a resume from a fresh start.
 *
 * usage: multi_worker_digits --data digits.csv --epochs N [--single] [--logdir DIR]
 *                            [--backup DIR [--save-freq N] [--die R:K]] */
#include <cairn/cairn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/c/digits_data.h"

static const int64_t kBatch = 32, kShuffleSeed = 7;
static const double kLearningRate = 0.003; /* as examples/c/fit_digits.c */

static void check(cairn_status *s, const char *what) { digits_check(s, "multi_worker_digits", what); }

/* Counts this process's batches; rank `die_rank` kills itself before its batch `die_at`. */
typedef struct Batches {
  int32_t rank, die_rank;
  int64_t die_at, run;
} Batches;

static cairn_status *count_batch(void *user_data, cairn_object *model, int64_t batch) {
  Batches *b = (Batches *)user_data;
  (void)model;
  (void)batch;
  if (++b->run == b->die_at && b->rank == b->die_rank) {
    printf("rank %d: killing itself before batch %lld\n", b->rank, (long long)b->run);
    fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  return NULL;
}

/* Trains `model` on the digits and returns its test accuracy. `callbacks`: NULL-terminated. */
static double train(cairn_object *model, DigitsData *data, int64_t epochs, cairn_callback **callbacks) {
  cairn_fit_options fit = CAIRN_FIT_OPTIONS_INIT;
  cairn_model_data train_data = CAIRN_MODEL_DATA_INIT, test = CAIRN_MODEL_DATA_INIT;
  cairn_logs *logs = NULL;
  double accuracy = 0;
  size_t n = 0;
  while (callbacks && callbacks[n]) ++n;
  train_data.dataset = data->train;
  test.x = data->x_test;
  test.y = data->y_test;
  fit.epochs = epochs;
  fit.verbose = CAIRN_VERBOSE_EPOCH_LINES;
  fit.callbacks = n ? callbacks : NULL;
  fit.n_callbacks = n;
  check(cairn_model_fit(model, &train_data, &fit, NULL), "fit");
  check(cairn_model_evaluate(model, &test, NULL, &logs), "evaluate");
  check(cairn_logs_get(logs, "accuracy", &accuracy), "evaluate");
  cairn_logs_free(logs);
  return accuracy;
}

int main(int argc, char **argv) {
  const char *path = "examples/data/digits.csv", *logdir = NULL, *backup = NULL;
  int64_t epochs = 5, save_freq = 10;
  Batches batches = {0, -1, 0, 0};
  int single = 0, a;
  for (a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--single") == 0) single = 1;
    else if (strcmp(argv[a], "--data") == 0 && a + 1 < argc) path = argv[++a];
    else if (strcmp(argv[a], "--epochs") == 0 && a + 1 < argc) epochs = atoll(argv[++a]);
    else if (strcmp(argv[a], "--logdir") == 0 && a + 1 < argc) logdir = argv[++a];
    else if (strcmp(argv[a], "--backup") == 0 && a + 1 < argc) backup = argv[++a];
    else if (strcmp(argv[a], "--save-freq") == 0 && a + 1 < argc) save_freq = atoll(argv[++a]);
    else if (strcmp(argv[a], "--die") == 0 && a + 1 < argc &&
             sscanf(argv[++a], "%d:%lld", &batches.die_rank, (long long *)&batches.die_at) == 2) {
    } else {
      fprintf(stderr,
              "usage: %s --data digits.csv --epochs N [--single] [--logdir DIR] [--backup DIR [--save-freq N] "
              "[--die R:K]]\n",
              argv[0]);
      return 2;
    }
  }
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_context *ctx = NULL;
  DigitsData data;
  if (single) {
    copts.seed = 1;
    check(cairn_context_create(&copts, &ctx), "context");
    digits_load(ctx, path, kBatch, kShuffleSeed, "multi_worker_digits", &data);
    cairn_object *model = digits_model(ctx, kLearningRate);
    printf("single: accuracy %.4f\n", train(model, &data, epochs, NULL));
    cairn_object_free(model);
    digits_free(&data);
    cairn_context_free(ctx);
    return 0;
  }

  /* Each rank's own seed (its rank from mpirun's environment, as MPI starts with the context): the
   * broadcast from rank 0 is what makes the weights start equal. */
  const char *world_rank = getenv("OMPI_COMM_WORLD_RANK");
  copts.seed = 1 + (uint64_t)(world_rank ? atoi(world_rank) : 0);
  check(cairn_context_create(&copts, &ctx), "context");
  cairn_mpi *mpi = NULL;
  check(cairn_mpi_init(ctx, 60000, &mpi), "cairn_mpi_init");
  const int32_t rank = cairn_mpi_rank(mpi), size = cairn_mpi_size(mpi);
  if (size > 64) return 2;

  cairn_strategy *s = NULL;
  cairn_multi_worker_options mo = CAIRN_MULTI_WORKER_OPTIONS_INIT;
  mo.check_replicas = 1;
  cairn_status *bad = cairn_multi_worker_strategy_create(ctx, NULL, &mo, &s);
  if (!bad || cairn_status_code(bad) != CAIRN_INVALID_ARGUMENT ||
      !strstr(cairn_status_message(bad), "cairn_multi_worker_strategy_create")) {
    fprintf(stderr, "rank %d: a NULL cairn_mpi was not INVALID_ARGUMENT naming the function\n", rank);
    return 1;
  }
  cairn_status_free(bad);
  check(cairn_multi_worker_strategy_create(ctx, mpi, &mo, &s), "cairn_multi_worker_strategy_create");
  if (cairn_strategy_num_replicas(s) != 1) {
    fprintf(stderr, "rank %d: %zu local replicas, expected 1\n", rank, cairn_strategy_num_replicas(s));
    return 1;
  }

  digits_load(ctx, path, kBatch, kShuffleSeed, "multi_worker_digits", &data);
  cairn_callback *callbacks[4] = {NULL, NULL, NULL, NULL}, **next = callbacks;
  batches.rank = rank;
  cairn_callback_hooks counter = CAIRN_CALLBACK_HOOKS_INIT;
  counter.user_data = &batches;
  counter.on_train_batch_begin = count_batch;
  check(cairn_callback_create(&counter, next++), "the batch counter");
  if (backup) {
    cairn_backup_options bo = CAIRN_BACKUP_OPTIONS_INIT;
    bo.directory = backup;
    bo.save_freq = save_freq;
    check(cairn_callback_backup_and_restore(ctx, &bo, next++), "BackupAndRestore");
  }
  if (logdir) {
    char dir[4200];
    cairn_tensorboard_options tb = CAIRN_TENSORBOARD_OPTIONS_INIT;
    snprintf(dir, sizeof dir, "%s/rank%d", logdir, rank);
    tb.logdir = dir;
    check(cairn_callback_tensorboard(&tb, next++), "TensorBoard");
  }
  check(cairn_strategy_scope_enter(s), "scope_enter");
  cairn_object *model = digits_model(ctx, kLearningRate);
  check(cairn_strategy_scope_exit(s), "scope_exit");
  const double accuracy = train(model, &data, epochs, callbacks);

  /* Every rank's checksum gathered: all equal. */
  const unsigned long long mine = digits_weights_checksum(model);
  int64_t one = 1;
  cairn_tensor *t = NULL, *all = NULL;
  check(cairn_tensor_create(ctx, CAIRN_INT64, &one, 1, &mine, sizeof mine, &t), "tensor");
  check(cairn_mpi_all_gather(mpi, t, &all), "all_gather");
  unsigned long long sums[64] = {0};
  check(cairn_tensor_read(all, sums, sizeof(sums[0]) * (size_t)size), "read");
  printf("rank %d of %d: accuracy %.4f weights %016llx batches %lld\n", rank, size, accuracy, mine,
         (long long)batches.run);
  for (int32_t r = 1; r < size; ++r)
    if (sums[r] != sums[0]) {
      fprintf(stderr, "rank %d: weights differ: rank %d has %016llx, rank 0 %016llx\n", rank, r, sums[r], sums[0]);
      return 1;
    }
  if (rank == 0) printf("weights identical on %d ranks: %016llx\n", size, sums[0]);

  cairn_tensor_free(t);
  cairn_tensor_free(all);
  cairn_object_free(model);
  for (cairn_callback **cb = callbacks; *cb; ++cb) cairn_callback_free(*cb);
  cairn_strategy_free(s);
  digits_free(&data);
  cairn_mpi_free(mpi);
  cairn_context_free(ctx);
  return 0;
}
