/* Deferred restores outlive the checkpoint and its status, as in TensorFlow's one expression
 * Checkpoint(model=fresh, optimizer=opt).restore(path).expect_partial(): create, restore,
 * expect_partial, free the status, free the checkpoint, and only then build the model
 * (cairn_layer_call) and create the optimizer's slots (cairn_optimizer_apply_gradients). The values
 * are the saved ones, bit for bit. The "never restored" warning comes when the last object that
 * waits for a value goes, and expect_partial silences only that warning. */
#include <stdlib.h>

#include "check.h"

static cairn_context *ctx;
static int g_never_restored; /* "never restored" warnings seen so far */

static void on_log(void *user_data, cairn_log_level level, const char *message) {
  (void)user_data;
  if (level == CAIRN_LOG_WARNING && strstr(message, "never restored") != NULL &&
      strstr(message, "model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE") != NULL)
    ++g_never_restored;
}

enum { kIn = 4, kHidden = 3, kOut = 2, kWeights = 4 };
/* Elements of the weights in creation order: kernel 0, bias 0, kernel 1, bias 1. */
static const int64_t kSizes[kWeights] = {kIn * kHidden, kHidden, kHidden * kOut, kOut};
#define TOTAL (kIn * kHidden + kHidden + kHidden * kOut + kOut)

static cairn_tensor *f32(const float *v, const int64_t *shape, size_t rank) {
  cairn_tensor *t = NULL;
  size_t i, n = 1;
  for (i = 0; i < rank; ++i) n *= (size_t)shape[i];
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, rank, v, n * sizeof(float), &t));
  return t;
}

static cairn_object *dense(int64_t units, const char *init) {
  cairn_dense_options o = CAIRN_DENSE_OPTIONS_INIT;
  cairn_object *layer = NULL;
  o.units = units;
  o.activation = "tanh";
  o.kernel_initializer = init;
  o.bias_initializer = init;
  CHECK_OK(cairn_dense_create(ctx, &o, &layer));
  return layer;
}

/* A two-layer Sequential, not built yet. */
static cairn_object *model(const char *init) {
  cairn_object *m = NULL, *l0 = dense(kHidden, init), *l1 = dense(kOut, init);
  CHECK_OK(cairn_sequential_create(ctx, NULL, &m));
  CHECK_OK(cairn_sequential_add(m, l0));
  CHECK_OK(cairn_sequential_add(m, l1));
  cairn_object_free(l0);
  cairn_object_free(l1);
  return m;
}

static cairn_object *adam(void) {
  cairn_optimizer_options o = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_object *opt = NULL;
  o.kind = CAIRN_OPTIMIZER_ADAM;
  o.learning_rate = 0.05;
  CHECK_OK(cairn_optimizer_create(ctx, &o, &opt));
  return opt;
}

/* Calls the model on a fixed batch (the first call builds it). */
static void call(cairn_object *m) {
  static const float xv[2 * kIn] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f, 0.0f, 1.0f};
  const int64_t shape[2] = {2, kIn};
  cairn_tensor *x = f32(xv, shape, 2), *y = NULL;
  CHECK_OK(cairn_layer_call(m, x, CAIRN_FALSE, &y));
  cairn_tensor_free(y);
  cairn_tensor_free(x);
}

/* One Adam step with fixed gradients that depend on `step` (creates the slots on the first). */
static void step(cairn_object *m, cairn_object *opt, int step) {
  cairn_object_array *w = NULL;
  cairn_tensor *grads[kWeights];
  cairn_object *vars[kWeights];
  size_t i;
  CHECK_OK(cairn_layer_weights(m, CAIRN_TRUE, &w));
  CHECK(cairn_object_array_size(w) == kWeights);
  if (cairn_object_array_size(w) != kWeights) {
    cairn_object_array_free(w);
    return;
  }
  for (i = 0; i < kWeights; ++i) {
    float g[kIn * kHidden];
    int64_t j, shape[2];
    size_t rank = (i % 2 == 0) ? 2 : 1;
    for (j = 0; j < kSizes[i]; ++j) g[j] = 0.1f * (float)(step + 1) * (float)((j % 5) - 2) + 0.01f * (float)i;
    shape[0] = (i == 0) ? kIn : (i == 1) ? kHidden : (i == 2) ? kHidden : kOut;
    shape[1] = (i == 0) ? kHidden : kOut;
    grads[i] = f32(g, shape, rank);
    vars[i] = cairn_object_array_get(w, i);
  }
  CHECK_OK(cairn_optimizer_apply_gradients(opt, (const cairn_tensor *const *)grads, vars, kWeights));
  for (i = 0; i < kWeights; ++i) cairn_tensor_free(grads[i]);
  cairn_object_array_free(w);
}

static void read_var(cairn_object *v, float *out, int64_t n) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_variable_read(v, &t));
  CHECK_OK(cairn_tensor_read(t, out, (size_t)n * sizeof(float)));
  cairn_tensor_free(t);
}

/* The weights, then Adam's m and v of every weight (when `slots`), into out[3 * TOTAL]. */
static void read_state(cairn_object *m, cairn_object *opt, int slots, float *out) {
  cairn_object_array *w = NULL;
  const char *names[2] = {"m", "v"};
  size_t i, s;
  int64_t at = 0;
  CHECK_OK(cairn_layer_weights(m, CAIRN_TRUE, &w));
  CHECK(cairn_object_array_size(w) == kWeights);
  for (i = 0; i < kWeights && i < cairn_object_array_size(w); ++i) {
    read_var(cairn_object_array_get(w, i), out + at, kSizes[i]);
    at += kSizes[i];
  }
  for (s = 0; slots && s < 2; ++s)
    for (i = 0; i < kWeights && i < cairn_object_array_size(w); ++i) {
      cairn_object *slot = NULL;
      CHECK_OK(cairn_optimizer_get_slot(opt, cairn_object_array_get(w, i), names[s], &slot));
      if (slot) read_var(slot, out + at, kSizes[i]);
      cairn_object_free(slot);
      at += kSizes[i];
    }
  cairn_object_array_free(w);
}

static cairn_checkpoint *checkpoint(cairn_object *m, cairn_object *opt) {
  const char *names[2] = {"model", "optimizer"};
  cairn_object *objects[2];
  cairn_checkpoint *c = NULL;
  objects[0] = m;
  objects[1] = opt;
  CHECK_OK(cairn_checkpoint_create(ctx, names, objects, 2, &c));
  return c;
}

static char g_path[4200];
static float g_saved[3 * TOTAL];      /* weights, m, v when the checkpoint was written */
static float g_next_step[3 * TOTAL];  /* the same after one more step */

/* Trains a model for two steps, writes the checkpoint, then takes one more step. */
static void write_trained(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  cairn_object *m = model("glorot_uniform"), *opt = adam();
  cairn_checkpoint *c;
  snprintf(g_path, sizeof g_path, "%s/pending_restore_ckpt", tmp ? tmp : "/tmp");
  call(m);
  step(m, opt, 0);
  step(m, opt, 1);
  c = checkpoint(m, opt);
  CHECK_OK(cairn_checkpoint_write(c, g_path));
  cairn_checkpoint_free(c);
  read_state(m, opt, 1, g_saved);
  step(m, opt, 2);
  read_state(m, opt, 1, g_next_step);
  cairn_object_free(opt);
  cairn_object_free(m);
}

static void test_one_expression_form(void) {
  cairn_object *m = model("ones"), *opt = adam();
  cairn_checkpoint *c = checkpoint(m, opt);
  cairn_restore_status *rs = NULL;
  float got[3 * TOTAL];
  int64_t iterations = -1;

  /* Checkpoint(model=m, optimizer=opt).restore(path).expect_partial(), and nothing kept. */
  CHECK_OK(cairn_checkpoint_restore(c, g_path, &rs));
  cairn_restore_status_expect_partial(rs);
  cairn_restore_status_free(rs);
  cairn_checkpoint_free(c);

  CHECK_OK(cairn_optimizer_iterations(opt, &iterations));
  CHECK(iterations == 2);
  call(m); /* builds the layers: their weights take the saved values as they are created */
  read_state(m, opt, 0, got);
  CHECK(memcmp(got, g_saved, TOTAL * sizeof(float)) == 0);
  step(m, opt, 2); /* creates the slots: restored on creation, then the step updates them */
  read_state(m, opt, 1, got);
  CHECK(memcmp(got, g_next_step, sizeof got) == 0);
  CHECK(g_never_restored == 0);
  cairn_object_free(opt);
  cairn_object_free(m);
  CHECK(g_never_restored == 0); /* everything was restored: nothing to report when it all goes */
}

/* Without expect_partial: nothing is reported while the model may still be built; once it goes
 * unbuilt, the values can never be restored, and the warning says so. With expect_partial, never. */
static void test_warning_when_the_last_waiting_object_goes(void) {
  int partial;
  for (partial = 0; partial < 2; ++partial) {
    cairn_object *m = model("ones"), *opt = adam();
    cairn_checkpoint *c = checkpoint(m, opt);
    cairn_restore_status *rs = NULL;
    g_never_restored = 0;
    CHECK_OK(cairn_checkpoint_restore(c, g_path, &rs));
    if (partial) cairn_restore_status_expect_partial(rs);
    cairn_restore_status_free(rs);
    cairn_checkpoint_free(c);
    cairn_object_free(opt);
    CHECK(g_never_restored == 0); /* the model still waits for its weights */
    cairn_object_free(m);
    CHECK(g_never_restored == (partial ? 0 : 1));
  }
}

int main(void) {
  cairn_context_options o = CAIRN_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  o.seed = 7;
  o.log_fn = on_log;
  CHECK_OK(cairn_context_create(&o, &ctx));
  write_trained();
  test_one_expression_form();
  test_warning_when_the_last_waiting_object_goes();
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
