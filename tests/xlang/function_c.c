/* The C side of the cross-language function test (tests/xlang/SPEC.md, "Compiled functions";
 * functions.sh drives it). `export PATH` trains y = x @ w + b for three SGD steps through a
 * captured training step, traces `predict` on the query and exports it; it prints the three
 * losses and predict's outputs. `load PATH` loads a function file from any language and prints
 * its outputs on the query. Values are printed as the hex of their float32 bits: exact. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Uses the experimental part of the header (export and load). */
#define CAIRN_EXPERIMENTAL
#include "cairn/cairn.h"

static int g_failed = 0;

static int ok(cairn_status *s, const char *what) {
  if (!s) return 1;
  fprintf(stderr, "function_c: %s: %s\n", what, cairn_status_message(s));
  cairn_status_free(s);
  g_failed = 1;
  return 0;
}

static cairn_tensor *f32(cairn_context *ctx, const float *v, int64_t rows, int64_t cols, size_t rank) {
  const int64_t shape[2] = {rows, cols};
  cairn_tensor *t = NULL;
  ok(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, rank, v, (size_t)(rows * (rank == 2 ? cols : 1)) * sizeof(float),
                         &t),
     "tensor");
  return t;
}

/* Prints `label` and the float32 bits of t's values (at most 8). */
static void print_bits(const char *label, cairn_tensor *t) {
  float v[8];
  size_t n = cairn_tensor_num_elements(t), i;
  if (n > 8 || !ok(cairn_tensor_read(t, v, n * sizeof(float)), label)) return;
  printf("%s", label);
  for (i = 0; i < n; ++i) {
    uint32_t bits;
    memcpy(&bits, &v[i], sizeof bits);
    printf(" %08x", (unsigned)bits);
  }
  printf("\n");
}

typedef struct model {
  cairn_object *w, *b, *opt;
} model;

/* x @ w + b, reading both variables. */
static cairn_status *affine(model *m, cairn_context *ctx, cairn_tensor *x, cairn_tensor **y) {
  cairn_tensor *w = NULL, *b = NULL, *xw = NULL, *ins[2];
  cairn_status *st = cairn_variable_read(m->w, &w);
  if (!st) st = cairn_variable_read(m->b, &b);
  ins[0] = x;
  ins[1] = w;
  if (!st) st = cairn_op_run(ctx, "MatMul", ins, 2, NULL, 0, &xw, 1);
  ins[0] = xw;
  ins[1] = b;
  if (!st) st = cairn_op_run(ctx, "Add", ins, 2, NULL, 0, y, 1);
  cairn_tensor_free(w);
  cairn_tensor_free(b);
  cairn_tensor_free(xw);
  return st;
}

static cairn_status *predict(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                             cairn_tensor **outputs, size_t n_outputs) {
  (void)n_inputs;
  (void)n_outputs;
  return affine((model *)user_data, ctx, inputs[0], &outputs[0]);
}

/* One SGD step on mean squared error; returns the loss. */
static cairn_status *train_step(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                                cairn_tensor **outputs, size_t n_outputs) {
  model *m = (model *)user_data;
  cairn_tape *tape = NULL;
  cairn_tensor *y = NULL, *loss = NULL, *grads[2] = {NULL, NULL};
  cairn_object *vars[2];
  cairn_status *st = cairn_tape_create(ctx, NULL, &tape);
  (void)n_inputs;
  (void)n_outputs;
  vars[0] = m->w;
  vars[1] = m->b;
  if (!st) st = affine(m, ctx, inputs[0], &y);
  if (!st) st = cairn_loss(ctx, CAIRN_LOSS_MEAN_SQUARED_ERROR, inputs[1], y, 0, &loss);
  if (!st) st = cairn_tape_gradient_variables(tape, loss, vars, 2, NULL, CAIRN_UNCONNECTED_ZERO, grads);
  if (!st) st = cairn_optimizer_apply_gradients(m->opt, (const cairn_tensor *const *)grads, vars, 2);
  if (!st) {
    outputs[0] = loss;
    loss = NULL;
  }
  cairn_tensor_free(loss);
  cairn_tensor_free(y);
  cairn_tensor_free(grads[0]);
  cairn_tensor_free(grads[1]);
  cairn_tape_free(tape);
  return st;
}

static const float kQuery[6] = {1, 2, 3, -1, 0.5f, 0.25f};

static void export_function(cairn_context *ctx, const char *path) {
  const float w0[2] = {0.5f, -0.25f}, b0[1] = {0.1f};
  const float xs[8] = {1, 0, 0, 1, 1, 1, 2, -1}, ts[4] = {1, 2, 3, 0.5f};
  cairn_variable_options wo = CAIRN_VARIABLE_OPTIONS_INIT, bo = CAIRN_VARIABLE_OPTIONS_INIT;
  cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_tensor *w = f32(ctx, w0, 2, 1, 2), *b = f32(ctx, b0, 1, 1, 1);
  cairn_tensor *data[2], *q = f32(ctx, kQuery, 3, 2, 2), *out = NULL;
  cairn_function *step = NULL, *pred = NULL;
  model m = {NULL, NULL, NULL};
  int i;
  data[0] = f32(ctx, xs, 4, 2, 2);
  data[1] = f32(ctx, ts, 4, 1, 2);
  wo.name = "w";
  bo.name = "b";
  oo.learning_rate = 0.1;
  ok(cairn_variable_create(ctx, w, &wo, &m.w), "w");
  ok(cairn_variable_create(ctx, b, &bo, &m.b), "b");
  ok(cairn_optimizer_create(ctx, &oo, &m.opt), "optimizer");
  ok(cairn_function_create(ctx, "train_step", train_step, &m, NULL, &step), "train_step");
  ok(cairn_function_create(ctx, "predict", predict, &m, NULL, &pred), "predict");
  for (i = 0; i < 3 && !g_failed; ++i) {
    if (!ok(cairn_function_call(step, data, 2, &out, 1), "train_step call")) break;
    print_bits("loss", out);
    cairn_tensor_free(out);
  }
  if (!g_failed && ok(cairn_function_call(pred, &q, 1, &out, 1), "predict call")) {
    print_bits("predict", out);
    cairn_tensor_free(out);
    ok(cairn_function_export(pred, path), "export");
  }
  cairn_function_free(pred);
  cairn_function_free(step);
  cairn_object_free(m.opt);
  cairn_object_free(m.b);
  cairn_object_free(m.w);
  cairn_tensor_free(data[0]);
  cairn_tensor_free(data[1]);
  cairn_tensor_free(q);
  cairn_tensor_free(w);
  cairn_tensor_free(b);
}

static void load_function(cairn_context *ctx, const char *path) {
  cairn_function *fn = NULL;
  cairn_tensor *q = f32(ctx, kQuery, 3, 2, 2), *out = NULL;
  if (ok(cairn_function_load(ctx, path, &fn), path) && ok(cairn_function_call(fn, &q, 1, &out, 1), "call")) {
    print_bits("predict", out);
    cairn_tensor_free(out);
  }
  cairn_function_free(fn);
  cairn_tensor_free(q);
}

int main(int argc, char **argv) {
  cairn_context *ctx = NULL;
  if (argc != 3 || (strcmp(argv[1], "export") != 0 && strcmp(argv[1], "load") != 0)) {
    fprintf(stderr, "usage: function_c export|load PATH\n");
    return 2;
  }
  if (!ok(cairn_context_create(NULL, &ctx), "context")) return 1;
  if (strcmp(argv[1], "export") == 0)
    export_function(ctx, argv[2]);
  else
    load_function(ctx, argv[2]);
  cairn_context_free(ctx);
  return g_failed;
}
