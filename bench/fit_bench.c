/* fit against the hand-written training loop on the digits MLP (64 -> 64 relu -> 10, Adam, batch
 * 32, the examples/c pipeline): examples per second over whole epochs, alternating the two in one
 * process, each after a warm-up epoch. The hand loop is train_digits' loop: a compiled step (tape,
 * loss, gradients, apply), eager loss and accuracy metrics, the iterator's next.
 *
 * usage: fit_bench DIGITS_CSV [epochs per run (5)] [runs (5)]
 * Prints "@ fit_examples_per_s X", "@ loop_examples_per_s Y" (medians) and the ratio. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cairn/cairn.h"
#include "examples/c/digits_data.h"

static void check(cairn_status *s, const char *what) { digits_check(s, "fit_bench", what); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cairn_object *mlp(cairn_context *ctx, cairn_object **optimizer) {
  cairn_object *layers[2] = {NULL, NULL}, *model = NULL;
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  cairn_model_options m = CAIRN_MODEL_OPTIONS_INIT;
  cairn_optimizer_options o = CAIRN_OPTIMIZER_OPTIONS_INIT;
  d.units = 64;
  d.activation = "relu";
  check(cairn_dense_create(ctx, &d, &layers[0]), "Dense");
  d.units = kDigitsClasses;
  d.activation = NULL;
  check(cairn_dense_create(ctx, &d, &layers[1]), "Dense");
  m.layers = (const cairn_object *const *)layers;
  m.n_layers = 2;
  check(cairn_model_create(ctx, &m, &model), "model");
  o.kind = CAIRN_OPTIMIZER_ADAM;
  o.learning_rate = 0.003;
  check(cairn_optimizer_create(ctx, &o, optimizer), "optimizer");
  cairn_object_free(layers[0]);
  cairn_object_free(layers[1]);
  return model;
}

/* ---- fit ---- */

static double run_fit(cairn_object *model, cairn_dataset *train, int64_t epochs, int64_t n_train) {
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_fit_options fit = CAIRN_FIT_OPTIONS_INIT;
  double t0;
  data.dataset = train;
  fit.epochs = epochs;
  fit.verbose = CAIRN_VERBOSE_SILENT;
  t0 = now();
  check(cairn_model_fit(model, &data, &fit, NULL), "fit");
  return (double)(epochs * n_train) / (now() - t0);
}

/* ---- The hand-written loop (examples/c/train_digits.c) ---- */

typedef struct {
  cairn_function *fn;
  cairn_object *loss, *accuracy;
} Loop;

static double run_loop(Loop *loop, cairn_dataset *train, int64_t epochs, int64_t n_train) {
  double t0 = now();
  int64_t e;
  for (e = 0; e < epochs; ++e) {
    cairn_object *it = NULL;
    double v;
    check(cairn_metric_reset(loop->loss), "metric");
    check(cairn_metric_reset(loop->accuracy), "metric");
    check(cairn_dataset_iterate(train, &it), "iterate");
    for (;;) {
      cairn_tensor *batch[2] = {NULL, NULL}, *outs[2] = {NULL, NULL};
      cairn_status *s = cairn_iterator_next(it, batch, 2);
      if (s && cairn_status_code(s) == CAIRN_OUT_OF_RANGE) {
        cairn_status_free(s);
        break;
      }
      check(s, "next");
      check(cairn_function_call(loop->fn, batch, 2, outs, 2), "step");
      check(cairn_metric_update(loop->loss, outs[0], NULL), "metric");
      check(cairn_metric_update(loop->accuracy, batch[1], outs[1]), "metric");
      cairn_tensor_free(outs[0]);
      cairn_tensor_free(outs[1]);
      cairn_tensor_free(batch[0]);
      cairn_tensor_free(batch[1]);
    }
    check(cairn_metric_result(loop->loss, &v), "metric");
    check(cairn_metric_result(loop->accuracy, &v), "metric");
    cairn_object_free(it);
  }
  return (double)(epochs * n_train) / (now() - t0);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const int64_t epochs = argc > 2 ? atoll(argv[2]) : 5;
  const int runs = argc > 3 ? atoi(argv[3]) : 5;
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_compile_options c = CAIRN_COMPILE_OPTIONS_INIT;
  const char *metrics[1] = {"accuracy"};
  cairn_context *ctx = NULL;
  cairn_object *fit_model, *fit_opt = NULL, *loop_model, *loop_opt = NULL;
  double fit_rates[64], loop_rates[64], fit_med, loop_med;
  DigitsData data;
  DigitsStep step;
  Loop loop;
  int r;

  if (argc < 2 || epochs < 1 || runs < 1 || runs > 64) {
    fprintf(stderr, "usage: %s DIGITS_CSV [epochs per run] [runs <= 64]\n", argv[0]);
    return 2;
  }
  copts.seed = 1;
  check(cairn_context_create(&copts, &ctx), "context");
  digits_load(ctx, argv[1], 32, 7, "fit_bench", &data);

  fit_model = mlp(ctx, &fit_opt);
  c.optimizer = fit_opt;
  c.loss = "sparse_categorical_crossentropy";
  c.metrics = metrics;
  c.n_metrics = 1;
  check(cairn_model_compile(fit_model, &c), "compile");

  loop_model = mlp(ctx, &loop_opt);
  step.model = loop_model;
  step.optimizer = loop_opt;
  check(cairn_function_create(ctx, "train_step", digits_train_step, &step, NULL, &loop.fn), "function");
  check(cairn_metric_create(ctx, CAIRN_METRIC_MEAN, "loss", &loop.loss), "metric");
  check(cairn_metric_create(ctx, CAIRN_METRIC_ACCURACY, "accuracy", &loop.accuracy), "metric");
  {
    /* Build the hand loop's model before tracing, as fit does. */
    cairn_tensor *out = NULL;
    check(cairn_layer_call(loop_model, data.x_test, 0, &out), "build");
    cairn_tensor_free(out);
  }

  run_fit(fit_model, data.train, 1, data.n_train); /* warm-up: traces, allocator pools */
  run_loop(&loop, data.train, 1, data.n_train);
  for (r = 0; r < runs; ++r) {
    fit_rates[r] = run_fit(fit_model, data.train, epochs, data.n_train);
    loop_rates[r] = run_loop(&loop, data.train, epochs, data.n_train);
    printf("run %d: fit %.0f examples/s, hand loop %.0f examples/s\n", r, fit_rates[r], loop_rates[r]);
  }
  qsort(fit_rates, (size_t)runs, sizeof(double), cmp);
  qsort(loop_rates, (size_t)runs, sizeof(double), cmp);
  fit_med = fit_rates[runs / 2];
  loop_med = loop_rates[runs / 2];
  printf("@ fit_examples_per_s %.0f\n@ loop_examples_per_s %.0f\n", fit_med, loop_med);
  printf("fit / hand loop: %.3fx (target >= 0.95x)\n", fit_med / loop_med);

  cairn_function_free(loop.fn);
  cairn_object_free(loop.loss);
  cairn_object_free(loop.accuracy);
  cairn_object_free(fit_model);
  cairn_object_free(fit_opt);
  cairn_object_free(loop_model);
  cairn_object_free(loop_opt);
  digits_free(&data);
  cairn_context_free(ctx);
  return 0;
}
