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

int main(void) {
  cairn_context_options o = CAIRN_CONTEXT_OPTIONS_INIT;
  o.seed = 3;
  CHECK_OK(cairn_context_create(&o, &ctx));
  test_tape();
  test_optimizer();
  test_layers_losses_metrics();
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
