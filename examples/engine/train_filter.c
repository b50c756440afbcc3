/* Trains the engine's denoiser (filter_model.h) on procedural scenes (scene_data.c) with
 * cairn_model_fit on the CPU, reports the mean squared error of the noisy input and of the
 * model's output on held-out scenes, and saves the weights as safetensors for the engine.
 *
 * usage: train_filter [--out filter.safetensors] [--epochs N] [--images N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairn/cairn.h>

#include "filter_model.h"
#include "scene_data.h"

enum { kSize = 32, kHeldOut = 32 };

static void check(cairn_status *s, const char *what) {
  if (!s) return;
  fprintf(stderr, "train_filter: %s: %s\n", what, cairn_status_message(s));
  cairn_status_free(s);
  exit(1);
}

/* `count` scenes as tensors x [count, kSize, kSize, 4] (noisy) and y [count, kSize, kSize, 3]. */
static void make_scenes(cairn_context *ctx, uint64_t seed, int64_t count, cairn_tensor **x, cairn_tensor **y) {
  const size_t pixels = (size_t)kSize * kSize;
  float *noisy = malloc(sizeof(float) * pixels * FILTER_IN_CHANNELS * (size_t)count);
  float *clean = malloc(sizeof(float) * pixels * FILTER_OUT_CHANNELS * (size_t)count);
  const int64_t xs[4] = {count, kSize, kSize, FILTER_IN_CHANNELS}, ys[4] = {count, kSize, kSize, FILTER_OUT_CHANNELS};
  int64_t i;
  if (!noisy || !clean) check(cairn_status_create(CAIRN_RESOURCE_EXHAUSTED, "out of memory"), "scenes");
  for (i = 0; i < count; ++i)
    scene_draw(&seed, kSize, noisy + (size_t)i * pixels * FILTER_IN_CHANNELS,
               clean + (size_t)i * pixels * FILTER_OUT_CHANNELS);
  check(cairn_tensor_create(ctx, CAIRN_FLOAT32, xs, 4, noisy, sizeof(float) * pixels * FILTER_IN_CHANNELS * count, x),
        "x");
  check(cairn_tensor_create(ctx, CAIRN_FLOAT32, ys, 4, clean, sizeof(float) * pixels * FILTER_OUT_CHANNELS * count, y),
        "y");
  free(noisy);
  free(clean);
}

/* The mean squared error between a [n, h, w, 3] prediction (or the first 3 channels of the noisy
 * [n, h, w, 4] input) and the clean images. */
static double mse(const cairn_tensor *pred, int channels, const cairn_tensor *clean) {
  const size_t n = cairn_tensor_nbytes(clean) / sizeof(float);
  float *p = malloc(cairn_tensor_nbytes(pred)), *c = malloc(cairn_tensor_nbytes(clean));
  double sum = 0;
  size_t i;
  check(cairn_tensor_read(pred, p, cairn_tensor_nbytes(pred)), "read");
  check(cairn_tensor_read(clean, c, cairn_tensor_nbytes(clean)), "read");
  for (i = 0; i < n; ++i) {
    const double d = p[i / 3 * (size_t)channels + i % 3] - c[i];
    sum += d * d;
  }
  free(p);
  free(c);
  return sum / (double)n;
}

/* Saves the trained layers' weights without the optimizer's state (the compiled model's save
 * would include it): copied into a fresh, uncompiled model of the same layers, which is saved. */
static void save_filter_weights(cairn_context *ctx, cairn_object *trained, const char *path) {
  cairn_object *fresh = NULL;
  cairn_object_array *from = NULL, *to = NULL;
  size_t i;
  check(filter_model_create(ctx, &fresh), "filter_model_create");
  check(cairn_layer_weights(trained, CAIRN_FALSE, &from), "cairn_layer_weights");
  check(cairn_layer_weights(fresh, CAIRN_FALSE, &to), "cairn_layer_weights");
  for (i = 0; i < cairn_object_array_size(from); ++i) {
    cairn_tensor *value = NULL;
    check(cairn_variable_read(cairn_object_array_get(from, i), &value), "cairn_variable_read");
    check(cairn_variable_assign(cairn_object_array_get(to, i), value), "cairn_variable_assign");
    cairn_tensor_free(value);
  }
  check(cairn_object_save_weights(fresh, path, CAIRN_WEIGHTS_SAFETENSORS, NULL), "cairn_object_save_weights");
  cairn_object_array_free(from);
  cairn_object_array_free(to);
  cairn_object_free(fresh);
}

int main(int argc, char **argv) {
  const char *out = "filter.safetensors";
  int64_t epochs = 20, images = 512;
  int a;
  cairn_context *ctx = NULL;
  cairn_object *model = NULL, *optimizer = NULL;
  cairn_tensor *x = NULL, *y = NULL, *test_x = NULL, *test_y = NULL, *denoised = NULL;
  cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_compile_options co = CAIRN_COMPILE_OPTIONS_INIT;
  cairn_fit_options fo = CAIRN_FIT_OPTIONS_INIT;
  cairn_model_data train = CAIRN_MODEL_DATA_INIT, test = CAIRN_MODEL_DATA_INIT;
  for (a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--out") == 0) out = argv[a + 1];
    else if (strcmp(argv[a], "--epochs") == 0) epochs = atoll(argv[a + 1]);
    else if (strcmp(argv[a], "--images") == 0) images = atoll(argv[a + 1]);
    else break;
  }
  if (a != argc || epochs < 1 || images < 1) {
    fprintf(stderr, "usage: train_filter [--out filter.safetensors] [--epochs N] [--images N]\n");
    return 2;
  }

  check(cairn_context_create(NULL, &ctx), "cairn_context_create");
  check(filter_model_create(ctx, &model), "filter_model_create");
  oo.kind = CAIRN_OPTIMIZER_ADAM;
  oo.learning_rate = 0.01;
  check(cairn_optimizer_create(ctx, &oo, &optimizer), "cairn_optimizer_create");
  co.optimizer = optimizer;
  co.loss = "mean_squared_error";
  check(cairn_model_compile(model, &co), "cairn_model_compile");

  make_scenes(ctx, 0x5eed, images, &x, &y);
  make_scenes(ctx, 0x7e57, kHeldOut, &test_x, &test_y);
  train.x = x;
  train.y = y;
  fo.epochs = epochs;
  fo.batch_size = 16;
  fo.seed = 1;
  fo.verbose = CAIRN_VERBOSE_SILENT;
  check(cairn_model_fit(model, &train, &fo, NULL), "cairn_model_fit");

  test.x = test_x;
  check(cairn_model_predict(model, &test, NULL, &denoised), "cairn_model_predict");
  printf("train_filter: %lld scenes %dx%d, %lld epochs; held-out MSE noisy %.5f -> denoised %.5f\n",
         (long long)images, kSize, kSize, (long long)epochs, mse(test_x, 4, test_y), mse(denoised, 3, test_y));
  save_filter_weights(ctx, model, out);
  printf("train_filter: saved %s\n", out);

  cairn_tensor_free(denoised);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_tensor_free(test_x);
  cairn_tensor_free(test_y);
  cairn_object_free(optimizer);
  cairn_object_free(model);
  cairn_context_free(ctx);
  return 0;
}
