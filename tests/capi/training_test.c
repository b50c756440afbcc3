/* The training section of the C API: tape, optimizers (with slots in checkpoints), layers,
 * losses and metrics, through the public header only. */
#include <math.h>
#include <stdlib.h>

#include "check.h"

static cairn_context *ctx;

static cairn_tensor *f32(const float *v, const int64_t *shape, size_t rank) {
  cairn_tensor *t = NULL;
  size_t i, n = 1;
  for (i = 0; i < rank; ++i) n *= (size_t)shape[i];
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, rank, v, n * sizeof(float), &t));
  return t;
}

static float read1(const cairn_tensor *t) {
  float v = NAN;
  CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
  return v;
}

/* y = sum(x * x * w): dy/dx = 2 x w; the tape gives it, and a second call fails. */
static void test_tape(void) {
  const float xv[2] = {1.0f, -2.0f}, wv[2] = {3.0f, 0.5f};
  const int64_t shape[1] = {2};
  cairn_tensor *x = f32(xv, shape, 1), *w = f32(wv, shape, 1), *sq = NULL, *prod = NULL, *y = NULL;
  cairn_tensor *ins[2], *grads[2] = {NULL, NULL};
  const cairn_tensor *sources[2];
  cairn_tape *tape = NULL;
  int64_t axis0 = 0;
  cairn_attr axis;
  float g[2];

  memset(&axis, 0, sizeof axis);
  axis.name = "axis";
  axis.kind = CAIRN_ATTR_INTS;
  axis.ints = &axis0;
  axis.n_ints = 1;
  CHECK_OK(cairn_tape_create(ctx, NULL, &tape));
  CHECK_OK(cairn_tape_watch(tape, x));
  ins[0] = x;
  ins[1] = x;
  CHECK_OK(cairn_op_run(ctx, "Mul", ins, 2, NULL, 0, &sq, 1));
  ins[0] = sq;
  ins[1] = w;
  CHECK_OK(cairn_op_run(ctx, "Mul", ins, 2, NULL, 0, &prod, 1));
  CHECK_OK(cairn_op_run(ctx, "Sum", &prod, 1, &axis, 1, &y, 1));
  sources[0] = x;
  sources[1] = w;
  CHECK_OK(cairn_tape_gradient(tape, y, sources, 2, NULL, CAIRN_UNCONNECTED_NONE, grads));
  CHECK(grads[0] != NULL);
  CHECK(grads[1] == NULL); /* w was never watched */
  if (grads[0]) {
    CHECK_OK(cairn_tensor_read(grads[0], g, sizeof g));
    CHECK(g[0] == 6.0f && g[1] == -2.0f);
  }
  CHECK_ERR(cairn_tape_gradient(tape, y, sources, 1, NULL, CAIRN_UNCONNECTED_NONE, grads), CAIRN_FAILED_PRECONDITION,
            "non-persistent");
  CHECK_ERR(cairn_tape_watch(NULL, x), CAIRN_INVALID_ARGUMENT, "tape is NULL");
  cairn_tensor_free(grads[0]);
  cairn_tape_free(tape);
  cairn_tensor_free(x);
  cairn_tensor_free(w);
  cairn_tensor_free(sq);
  cairn_tensor_free(prod);
  cairn_tensor_free(y);
}

/* SGD on v with loss v^2 (gradient 2v): v <- v - 0.1 * 2v = 0.8 v. */
static void test_optimizer(void) {
  const float v0 = 5.0f, g0 = 10.0f;
  cairn_object *v = NULL, *opt = NULL, *slot = NULL, *bad = NULL;
  cairn_optimizer_options o = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_tensor *t = f32(&v0, NULL, 0), *grad = f32(&g0, NULL, 0), *now = NULL;
  const cairn_tensor *grads[1];
  int64_t iters = -1;
  double lr = 0;

  CHECK_OK(cairn_variable_create(ctx, t, NULL, &v));
  o.learning_rate = 0.1;
  o.momentum = 0.9;
  CHECK_OK(cairn_optimizer_create(ctx, &o, &opt));
  CHECK(cairn_object_kind_of(opt) == CAIRN_OBJECT_OPTIMIZER);
  CHECK_ERR(cairn_optimizer_get_slot(opt, v, "momentum", &slot), CAIRN_NOT_FOUND, "no slot 'momentum'");
  grads[0] = grad;
  CHECK_OK(cairn_optimizer_apply_gradients(opt, grads, &v, 1));
  CHECK_OK(cairn_variable_read(v, &now));
  CHECK(fabsf(read1(now) - 4.0f) < 1e-6f); /* m = -lr g = -1; v += m */
  CHECK_OK(cairn_optimizer_iterations(opt, &iters));
  CHECK(iters == 1);
  CHECK_OK(cairn_optimizer_learning_rate(opt, &lr));
  CHECK(fabs(lr - 0.1) < 1e-7);
  CHECK_OK(cairn_optimizer_get_slot(opt, v, "momentum", &slot));
  CHECK(cairn_object_kind_of(slot) == CAIRN_OBJECT_VARIABLE);
  o.learning_rate = -1;
  CHECK_ERR(cairn_optimizer_create(ctx, &o, &bad), CAIRN_INVALID_ARGUMENT, "learning_rate");
  CHECK_ERR(cairn_optimizer_apply_gradients(v, grads, &v, 1), CAIRN_INVALID_ARGUMENT, "expected an optimizer");
  cairn_tensor_free(now);
  cairn_tensor_free(t);
  cairn_tensor_free(grad);
  cairn_object_free(slot);
  cairn_object_free(opt);
  cairn_object_free(v);
}

/* A Dense layer builds on its first call; its weights, summary and a loss go through the API. */
static void test_layers_losses_metrics(void) {
  const float xv[6] = {1, 2, 3, 4, 5, 6};
  const int32_t labels[2] = {0, 2};
  const int64_t shape[2] = {2, 3}, lshape[1] = {2};
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  cairn_object *dense = NULL, *model = NULL, *acc = NULL, *mean = NULL, *bad = NULL;
  cairn_object_array *weights = NULL;
  cairn_tensor *x = f32(xv, shape, 2), *y = NULL, *lab = NULL, *loss = NULL, *bad_t = NULL;
  int64_t params = -1;
  char *summary = NULL;
  double result = -1;

  d.units = 3;
  d.activation = "relu";
  CHECK_OK(cairn_dense_create(ctx, &d, &dense));
  CHECK(cairn_object_kind_of(dense) == CAIRN_OBJECT_LAYER);
  CHECK_OK(cairn_sequential_create(ctx, &(cairn_sequential_options){.struct_size = sizeof(cairn_sequential_options), .name = "model"}, &model));
  CHECK_OK(cairn_sequential_add(model, dense));
  CHECK_OK(cairn_layer_count_params(model, &params));
  CHECK(params == 0);
  CHECK_OK(cairn_layer_call(model, x, 0, &y));
  CHECK(y && cairn_tensor_dim(y, 0) == 2 && cairn_tensor_dim(y, 1) == 3);
  CHECK_OK(cairn_layer_count_params(model, &params));
  CHECK(params == 12);
  CHECK_OK(cairn_layer_weights(model, 1, &weights));
  CHECK(cairn_object_array_size(weights) == 2);
  CHECK_OK(cairn_layer_summary(model, &summary));
  CHECK(summary && strstr(summary, "Dense") && strstr(summary, "12"));
  cairn_free(summary);

  CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, lshape, 1, labels, sizeof labels, &lab));
  CHECK_OK(cairn_loss(ctx, CAIRN_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, lab, y, 1, &loss));
  CHECK(loss && cairn_tensor_rank(loss) == 0 && read1(loss) > 0);
  CHECK_ERR(cairn_loss(ctx, (cairn_loss_kind)99, lab, y, 1, &bad_t), CAIRN_INVALID_ARGUMENT, "unknown loss");

  CHECK_OK(cairn_metric_create(ctx, CAIRN_METRIC_MEAN, NULL, &mean));
  CHECK_OK(cairn_metric_update(mean, x, NULL));
  CHECK_OK(cairn_metric_result(mean, &result));
  CHECK(fabs(result - 3.5) < 1e-12);
  CHECK_ERR(cairn_metric_update(mean, x, x), CAIRN_INVALID_ARGUMENT, "b must be NULL");
  CHECK_OK(cairn_metric_create(ctx, CAIRN_METRIC_ACCURACY, NULL, &acc));
  CHECK_OK(cairn_metric_update(acc, lab, y));
  CHECK_OK(cairn_metric_result(acc, &result));
  CHECK(result >= 0 && result <= 1);
  CHECK_OK(cairn_metric_reset(acc));
  CHECK_OK(cairn_metric_result(acc, &result));
  CHECK(result == 0);

  d.units = 0;
  CHECK_ERR(cairn_dense_create(ctx, &d, &bad), CAIRN_INVALID_ARGUMENT, "units");
  CHECK_ERR(cairn_layer_call(mean, x, 0, &bad_t), CAIRN_INVALID_ARGUMENT, "expected a layer");

  cairn_object_array_free(weights);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_tensor_free(lab);
  cairn_tensor_free(loss);
  cairn_object_free(dense);
  cairn_object_free(model);
  cairn_object_free(acc);
  cairn_object_free(mean);
}

/* A compiled training step whose input signature leaves the batch dimension open ([-1, 3] and
 * [-1]) runs on every batch size (the last batch of an epoch is usually smaller), although its
 * trace depends on the batch size: the second size is traced too, its graph differs from the
 * first's, and the function then traces per shape. */
typedef struct {
  cairn_object *model, *opt;
} Step;

static cairn_status *step_fn(void *user_data, cairn_context *c, cairn_tensor *const *in, size_t n_in,
                             cairn_tensor **out, size_t n_out) {
  Step *st = (Step *)user_data;
  cairn_tape *tape = NULL;
  cairn_object_array *weights = NULL;
  cairn_object *vars[2];
  cairn_tensor *logits = NULL, *grads[2] = {NULL, NULL};
  cairn_status *s;
  size_t i;
  (void)n_in;
  (void)n_out;
  s = cairn_tape_create(c, NULL, &tape);
  if (!s) s = cairn_layer_call(st->model, in[0], 1, &logits);
  if (!s) s = cairn_loss(c, CAIRN_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, in[1], logits, 1, &out[0]);
  if (!s) s = cairn_layer_weights(st->model, 1, &weights);
  if (!s) {
    for (i = 0; i < 2; ++i) vars[i] = cairn_object_array_get(weights, i);
    s = cairn_tape_gradient_variables(tape, out[0], vars, 2, NULL, CAIRN_UNCONNECTED_NONE, grads);
  }
  if (!s) s = cairn_optimizer_apply_gradients(st->opt, (const cairn_tensor *const *)grads, vars, 2);
  for (i = 0; i < 2; ++i) cairn_tensor_free(grads[i]);
  cairn_tensor_free(logits);
  cairn_object_array_free(weights);
  cairn_tape_free(tape);
  return s;
}

static void test_compiled_step_any_batch(void) {
  const float xv[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6};
  const int32_t labels[8] = {0, 1, 2, 0, 1, 2, 0, 1};
  const int64_t xdims[2] = {-1, 3}, ydims[1] = {-1};
  cairn_tensor_spec specs[2] = {CAIRN_TENSOR_SPEC_INIT, CAIRN_TENSOR_SPEC_INIT};
  cairn_function_options fo = CAIRN_FUNCTION_OPTIONS_INIT;
  cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  cairn_object *dense = NULL;
  cairn_function *fn = NULL;
  Step st = {NULL, NULL};
  int64_t sizes[3] = {8, 5, 1};
  size_t k;

  d.units = 3;
  CHECK_OK(cairn_dense_create(ctx, &d, &dense));
  CHECK_OK(cairn_sequential_create(ctx, NULL, &st.model));
  CHECK_OK(cairn_sequential_add(st.model, dense));
  oo.kind = CAIRN_OPTIMIZER_ADAM;
  CHECK_OK(cairn_optimizer_create(ctx, &oo, &st.opt));
  specs[0].dtype = CAIRN_FLOAT32;
  specs[0].shape = xdims;
  specs[0].rank = 2;
  specs[1].dtype = CAIRN_INT32;
  specs[1].shape = ydims;
  specs[1].rank = 1;
  fo.input_signature = specs;
  fo.n_input_signature = 2;
  CHECK_OK(cairn_function_create(ctx, "step", step_fn, &st, &fo, &fn));
  for (k = 0; k < 3; ++k) {
    const int64_t xs[2] = {sizes[k], 3}, ys[1] = {sizes[k]};
    cairn_tensor *in[2] = {f32(xv, xs, 2), NULL}, *loss = NULL;
    CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, ys, 1, labels, (size_t)sizes[k] * sizeof(int32_t), &in[1]));
    CHECK_OK(cairn_function_call(fn, in, 2, &loss, 1));
    CHECK(loss && cairn_tensor_rank(loss) == 0 && read1(loss) > 0);
    cairn_tensor_free(loss);
    cairn_tensor_free(in[0]);
    cairn_tensor_free(in[1]);
  }
  /* The gradient of the loss's mean bakes the batch size in: one trace per batch size. */
  CHECK(cairn_function_num_traces(fn) == 3);
  cairn_function_free(fn);
  cairn_object_free(dense);
  cairn_object_free(st.model);
  cairn_object_free(st.opt);
}

int main(void) {
  cairn_context_options o = CAIRN_CONTEXT_OPTIONS_INIT;
  o.seed = 3;
  CHECK_OK(cairn_context_create(&o, &ctx));
  test_tape();
  test_optimizer();
  test_layers_losses_metrics();
  test_compiled_step_any_batch();
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
