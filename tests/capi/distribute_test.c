/* The Distribution section of the C API: a mirrored strategy over two logical CPU devices, its
 * replicated runs and all-reduces, batches split over the replicas, fit of a model compiled in the
 * strategy's scope (equal to one device within the float bound), a mirrored model saved and loaded
 * on one device, and the errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char tmp[512];

/* A context whose CPU is split into `n` logical devices. */
static cairn_context *split_context(size_t n) {
  cairn_context *ctx = NULL;
  cairn_logical_device_config cfg[4] = {CAIRN_LOGICAL_DEVICE_CONFIG_INIT, CAIRN_LOGICAL_DEVICE_CONFIG_INIT,
                                        CAIRN_LOGICAL_DEVICE_CONFIG_INIT, CAIRN_LOGICAL_DEVICE_CONFIG_INIT};
  CHECK_OK(cairn_context_create(NULL, &ctx));
  if (n > 1) CHECK_OK(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, n));
  return ctx;
}

static cairn_tensor *scalar_f32(cairn_context *ctx, float v) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, NULL, 0, &v, sizeof v, &t));
  return t;
}

static float read_f32(const cairn_tensor *t) {
  float v = NAN;
  CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
  return v;
}

/* Each replica contributes replica_id + 1 and returns the all-reduced sum and its own value. */
static cairn_status *sum_step(void *user_data, cairn_context *ctx, cairn_replica_context *replica,
                              cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *mine = scalar_f32(ctx, (float)(cairn_replica_id(replica) + 1));
  cairn_status *st;
  (void)user_data;
  if (n_outputs != 2) return cairn_status_create(CAIRN_INTERNAL, "expected 2 outputs");
  st = cairn_replica_all_reduce(replica, CAIRN_REDUCE_SUM, &mine, 1, &outputs[0]);
  outputs[1] = mine;
  return st;
}

/* Replica 1 fails; replica 0 waits in an all-reduce that can never complete. */
static cairn_status *failing_step(void *user_data, cairn_context *ctx, cairn_replica_context *replica,
                                  cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *mine, *sum = NULL;
  cairn_status *st;
  (void)user_data;
  (void)n_outputs;
  if (cairn_replica_id(replica) == 1) return cairn_status_create(CAIRN_DATA_LOSS, "the replica's data is bad");
  mine = scalar_f32(ctx, 1);
  st = cairn_replica_all_reduce(replica, CAIRN_REDUCE_SUM, &mine, 1, &sum);
  cairn_tensor_free(mine);
  cairn_tensor_free(sum);
  outputs[0] = NULL;
  return st;
}

static void test_run_and_reduce(void) {
  cairn_context *ctx = split_context(2);
  cairn_strategy *s = NULL;
  cairn_tensor *out[4] = {NULL, NULL, NULL, NULL}, *mean = NULL;
  cairn_tensor *own[2];
  size_t r;
  CHECK_OK(cairn_mirrored_strategy_create(ctx, NULL, 0, NULL, &s)); /* every CPU device */
  CHECK(cairn_strategy_num_replicas(s) == 2);
  CHECK(strcmp(cairn_strategy_device(s, 0), "cpu:0") == 0 && strcmp(cairn_strategy_device(s, 1), "cpu:1") == 0);
  CHECK(cairn_strategy_device(s, 2) == NULL);
  CHECK_OK(cairn_strategy_run(s, sum_step, NULL, out, 4));
  for (r = 0; r < 2; ++r) {
    CHECK(read_f32(out[r * 2]) == 3.0f);
    CHECK(strcmp(cairn_tensor_device(out[r * 2]), cairn_strategy_device(s, r)) == 0);
  }
  own[0] = out[1];
  own[1] = out[3];
  CHECK_OK(cairn_strategy_reduce(s, CAIRN_REDUCE_MEAN, own, 2, &mean));
  CHECK(read_f32(mean) == 1.5f);
  cairn_tensor_free(mean);
  CHECK_ERR(cairn_strategy_reduce(s, CAIRN_REDUCE_SUM, own, 1, &mean), CAIRN_INVALID_ARGUMENT, "1 values for 2 replicas");
  CHECK(mean == NULL);
  CHECK_ERR(cairn_strategy_reduce(s, (cairn_reduction)9, own, 2, &mean), CAIRN_INVALID_ARGUMENT, "unknown reduction 9");
  for (r = 0; r < 4; ++r) cairn_tensor_free(out[r]);

  /* A failing replica ends the run with its error; the other's all-reduce does not hang. */
  CHECK_ERR(cairn_strategy_run(s, failing_step, NULL, out, 2), CAIRN_DATA_LOSS, "the replica's data is bad");
  {
    cairn_status *st = cairn_strategy_run(s, failing_step, NULL, out, 2);
    CHECK(st && strstr(cairn_status_message(st), "replica 1") != NULL);
    cairn_status_free(st);
  }
  CHECK_OK(cairn_strategy_run(s, sum_step, NULL, out, 4)); /* the strategy still works */
  for (r = 0; r < 4; ++r) cairn_tensor_free(out[r]);
  cairn_strategy_free(s);
  cairn_context_free(ctx);
}

static void test_split_batch(void) {
  cairn_context *ctx = split_context(2);
  cairn_strategy *s = NULL;
  const char *devices[2] = {"cpu:1", "cpu:0"};
  float v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got[6];
  const int64_t shape[2] = {5, 2};
  cairn_tensor *g = NULL, *parts[2] = {NULL, NULL}, *one = NULL;
  CHECK_OK(cairn_mirrored_strategy_create(ctx, devices, 2, NULL, &s));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, v, sizeof v, &g));
  CHECK_OK(cairn_strategy_split_batch(s, g, parts, 2));
  CHECK_ERR(cairn_strategy_split_batch(s, g, parts, 1), CAIRN_INVALID_ARGUMENT, "n_parts is 1, but the strategy has 2");
  CHECK(cairn_tensor_dim(parts[0], 0) == 3 && cairn_tensor_dim(parts[1], 0) == 2);
  CHECK(strcmp(cairn_tensor_device(parts[0]), "cpu:1") == 0);
  CHECK_OK(cairn_tensor_read(parts[0], got, 6 * sizeof(float)));
  CHECK(got[0] == 0 && got[5] == 5);
  CHECK_OK(cairn_tensor_read(parts[1], got, 4 * sizeof(float)));
  CHECK(got[0] == 6 && got[3] == 9);
  one = scalar_f32(ctx, 1);
  CHECK_ERR(cairn_strategy_split_batch(s, one, parts, 2), CAIRN_INVALID_ARGUMENT, "cairn_strategy_split_batch");
  cairn_tensor_free(one);
  cairn_tensor_free(parts[0]);
  cairn_tensor_free(parts[1]);
  cairn_tensor_free(g);
  cairn_strategy_free(s);
  cairn_context_free(ctx);
}

/* 64 samples of 4 features in 3 classes. */
static void blobs(cairn_context *ctx, cairn_tensor **x, cairn_tensor **y) {
  float xv[64 * 4];
  int32_t yv[64];
  const int64_t xs[2] = {64, 4}, ys[1] = {64};
  uint64_t s = 7;
  int i, j;
  for (i = 0; i < 64; ++i) {
    yv[i] = i % 3;
    for (j = 0; j < 4; ++j) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      xv[i * 4 + j] = (float)((s >> 33) % 1000) / 1000.0f - 0.5f + (j == i % 3 ? 1.0f : 0.0f);
    }
  }
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, xs, 2, xv, sizeof xv, x));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, ys, 1, yv, sizeof yv, y));
}

/* Dense(16, relu) -> Dense(3) with SGD, made and compiled in `s`'s scope when s is not NULL; trained 3
 * epochs of 16-row global batches. Returns its weights, concatenated (malloc'd, *n floats). */
static float *train(cairn_context *ctx, cairn_strategy *s, size_t *n, cairn_object **model_out) {
  cairn_object *layers[2] = {NULL, NULL}, *model = NULL, *opt = NULL;
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  cairn_model_options mo = CAIRN_MODEL_OPTIONS_INIT;
  cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_compile_options co = CAIRN_COMPILE_OPTIONS_INIT;
  cairn_fit_options fo = CAIRN_FIT_OPTIONS_INIT;
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  cairn_history *h = NULL;
  cairn_object_array *w = NULL;
  cairn_tensor *x = NULL, *y = NULL;
  float *out = NULL;
  size_t i, total = 0;
  if (s) CHECK_OK(cairn_strategy_scope_enter(s));
  d.units = 16;
  d.activation = "relu";
  CHECK_OK(cairn_dense_create(ctx, &d, &layers[0]));
  d.units = 3;
  d.activation = NULL;
  CHECK_OK(cairn_dense_create(ctx, &d, &layers[1]));
  mo.layers = (const cairn_object *const *)layers;
  mo.n_layers = 2;
  CHECK_OK(cairn_model_create(ctx, &mo, &model));
  oo.kind = CAIRN_OPTIMIZER_SGD;
  oo.learning_rate = 0.1;
  CHECK_OK(cairn_optimizer_create(ctx, &oo, &opt));
  co.optimizer = opt;
  co.loss = "sparse_categorical_crossentropy";
  CHECK_OK(cairn_model_compile(model, &co));
  if (s) CHECK_OK(cairn_strategy_scope_exit(s));
  blobs(ctx, &x, &y);
  data.x = x;
  data.y = y;
  fo.epochs = 3;
  fo.batch_size = 16;
  fo.verbose = CAIRN_VERBOSE_SILENT;
  CHECK_OK(cairn_model_fit(model, &data, &fo, &h));
  CHECK_OK(cairn_layer_weights(model, 0, &w));
  for (i = 0; i < cairn_object_array_size(w); ++i) {
    cairn_tensor *t = NULL;
    size_t nb;
    CHECK_OK(cairn_variable_read(cairn_object_array_get(w, i), &t));
    nb = cairn_tensor_nbytes(t);
    out = realloc(out, total * sizeof(float) + nb);
    CHECK_OK(cairn_tensor_read(t, out + total, nb));
    total += nb / sizeof(float);
    cairn_tensor_free(t);
  }
  cairn_object_array_free(w);
  cairn_history_free(h);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_object_free(opt);
  cairn_object_free(layers[0]);
  cairn_object_free(layers[1]);
  *n = total;
  *model_out = model;
  return out;
}

static void test_fit_matches_one_device(void) {
  cairn_context *one = split_context(1), *two = split_context(2), *fresh = NULL;
  cairn_strategy *s = NULL;
  cairn_object *m1 = NULL, *m2 = NULL, *loaded = NULL;
  size_t n1 = 0, n2 = 0, i;
  float *w1, *w2, max_w = 0, max_diff = 0;
  char path[600];
  cairn_tensor *x = NULL, *y = NULL, *p1 = NULL, *p2 = NULL;
  cairn_predict_options po = CAIRN_PREDICT_OPTIONS_INIT;
  cairn_model_data data = CAIRN_MODEL_DATA_INIT;
  CHECK_OK(cairn_mirrored_strategy_create(two, NULL, 0, NULL, &s));
  w1 = train(one, NULL, &n1, &m1);
  w2 = train(two, s, &n2, &m2);
  {
    /* the model's weights and the optimizer are mirrored: replica 1's components live on cpu:1 */
    cairn_memory_info mi = CAIRN_MEMORY_INFO_INIT;
    CHECK_OK(cairn_context_memory_info(two, "cpu:1", &mi));
    CHECK(mi.current >= (4 * 16 + 16 + 16 * 3 + 3) * sizeof(float));
    CHECK_OK(cairn_context_memory_info(one, "cpu", &mi));
  }
  CHECK(n1 == n2 && n1 == 4 * 16 + 16 + 16 * 3 + 3);
  for (i = 0; i < n1 && i < n2; ++i) {
    float d = fabsf(w1[i] - w2[i]);
    if (fabsf(w1[i]) > max_w) max_w = fabsf(w1[i]);
    if (d > max_diff) max_diff = d;
  }
  /* The replicas' gradients are summed in another order than one device's: the bound of the float
   * reduction order over 12 SGD steps. */
  CHECK(max_diff <= 1e-5f * max_w);
  CHECK(max_w > 0.1f);

  /* A mirrored model saved once, loaded on one device: the same predictions. */
  snprintf(path, sizeof path, "%s/mirrored_model", tmp);
  CHECK_OK(cairn_model_save(m2, path));
  CHECK_OK(cairn_context_create(NULL, &fresh));
  CHECK_OK(cairn_model_load(fresh, path, &loaded));
  blobs(fresh, &x, &y);
  data.x = x;
  CHECK_OK(cairn_model_predict(loaded, &data, &po, &p1));
  CHECK_OK(cairn_model_predict(m2, &data, &po, &p2));
  {
    float a[64 * 3], b[64 * 3];
    CHECK_OK(cairn_tensor_read(p1, a, sizeof a));
    CHECK_OK(cairn_tensor_read(p2, b, sizeof b));
    CHECK(memcmp(a, b, sizeof a) == 0);
  }
  cairn_tensor_free(p1);
  cairn_tensor_free(p2);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_object_free(loaded);
  free(w1);
  free(w2);
  cairn_object_free(m1);
  cairn_object_free(m2);
  cairn_strategy_free(s);
  cairn_context_free(one);
  cairn_context_free(two);
  cairn_context_free(fresh);
}

static void test_bad_input(void) {
  cairn_context *ctx = split_context(2);
  cairn_strategy *s = NULL, *t = NULL;
  cairn_mirrored_options mo = CAIRN_MIRRORED_OPTIONS_INIT;
  const char *unknown[2] = {"cpu:0", "cpu:7"}, *dup[2] = {"cpu:1", "cpu:1"};
  cairn_tensor *out[2];
  CHECK_ERR(cairn_mirrored_strategy_create(ctx, unknown, 2, NULL, &s), CAIRN_NOT_FOUND, "cpu:7");
  CHECK(s == NULL);
  CHECK_ERR(cairn_mirrored_strategy_create(ctx, dup, 2, NULL, &s), CAIRN_INVALID_ARGUMENT, "cpu:1");
  mo.collective_timeout_ms = 0;
  CHECK_ERR(cairn_mirrored_strategy_create(ctx, NULL, 0, &mo, &s), CAIRN_INVALID_ARGUMENT, "collective_timeout_ms");
  CHECK_ERR(cairn_mirrored_strategy_create(ctx, NULL, 2, NULL, &s), CAIRN_INVALID_ARGUMENT, "devices is NULL");
  CHECK_OK(cairn_mirrored_strategy_create(ctx, NULL, 0, NULL, &s));
  CHECK_OK(cairn_mirrored_strategy_create(ctx, NULL, 0, NULL, &t));
  CHECK_ERR(cairn_strategy_scope_exit(s), CAIRN_FAILED_PRECONDITION, "no strategy scope open");
  CHECK_OK(cairn_strategy_scope_enter(s));
  CHECK_OK(cairn_strategy_scope_enter(t));
  CHECK_ERR(cairn_strategy_scope_exit(s), CAIRN_FAILED_PRECONDITION, "reverse order");
  CHECK_OK(cairn_strategy_scope_exit(t));
  CHECK_OK(cairn_strategy_scope_exit(s));
  CHECK_ERR(cairn_strategy_run(s, NULL, NULL, out, 2), CAIRN_INVALID_ARGUMENT, "fn is NULL");
  CHECK_ERR(cairn_strategy_run(s, sum_step, NULL, out, 3), CAIRN_INVALID_ARGUMENT, "not a multiple of the 2 replicas");
  CHECK_ERR(cairn_strategy_run(NULL, sum_step, NULL, out, 2), CAIRN_INVALID_ARGUMENT, "strategy is NULL");
  CHECK(cairn_strategy_num_replicas(NULL) == 0);
  CHECK(cairn_replica_id(NULL) == -1);
  cairn_strategy_free(s);
  cairn_strategy_free(t);
  cairn_strategy_free(NULL);
  cairn_context_free(ctx);
}

int main(void) {
  const char *t = getenv("TEST_TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/distribute_test_%d", t ? t : "/tmp", (int)getpid());
  mkdir(tmp, 0755);
  test_run_and_reduce();
  test_split_batch();
  test_fit_matches_one_device();
  test_bad_input();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures != 0;
}
