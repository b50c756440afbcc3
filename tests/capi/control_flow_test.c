/* Control flow through the C API: cond, while_loop and TensorArray, eagerly and inside a compiled
 * function (traced once, a data-dependent number of iterations at replay), and errors. */
#include <stdlib.h>

/* Uses the experimental part of the header (export, load, control flow). */
#define CAIRN_EXPERIMENTAL
#include "check.h"

typedef struct {
  int cond_calls, body_calls, branch_calls;
  int fail_body; /* the body returns an error status */
} Counts;

static cairn_tensor *i32(cairn_context *ctx, int32_t v) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, NULL, 0, &v, sizeof v, &t));
  return t;
}

static cairn_tensor *f32(cairn_context *ctx, float v) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, NULL, 0, &v, sizeof v, &t));
  return t;
}

static int32_t read_i32(const cairn_tensor *t) {
  int32_t v = -12345;
  CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
  return v;
}

static float read_f32(const cairn_tensor *t) {
  float v = -12345;
  CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
  return v;
}

static cairn_status *binary(cairn_context *ctx, const char *op, cairn_tensor *a, cairn_tensor *b, cairn_tensor **out) {
  cairn_tensor *ins[2];
  ins[0] = a;
  ins[1] = b;
  return cairn_op_run(ctx, op, ins, 2, NULL, 0, out, 1);
}

/* Loop variables (i, acc, n, x): while i < n: acc *= x; i += 1. */
static cairn_status *less_than_n(void *user_data, cairn_context *ctx, cairn_tensor *const *v, size_t n_in,
                                 cairn_tensor **out, size_t n_out) {
  (void)n_in;
  (void)n_out;
  ++((Counts *)user_data)->cond_calls;
  return binary(ctx, "Less", v[0], v[2], &out[0]);
}

static cairn_status *times_x(void *user_data, cairn_context *ctx, cairn_tensor *const *v, size_t n_in,
                             cairn_tensor **out, size_t n_out) {
  Counts *c = (Counts *)user_data;
  cairn_tensor *one = NULL;
  cairn_status *st;
  (void)n_in;
  (void)n_out;
  ++c->body_calls;
  if (c->fail_body) return cairn_status_create(CAIRN_FAILED_PRECONDITION, "the body refuses");
  one = i32(ctx, 1);
  if ((st = binary(ctx, "Add", v[0], one, &out[0])) == NULL && (st = binary(ctx, "Mul", v[1], v[3], &out[1])) == NULL &&
      (st = cairn_tensor_share(v[2], &out[2])) == NULL)
    st = cairn_tensor_share(v[3], &out[3]);
  cairn_tensor_free(one);
  return st;
}

/* d(x^n)/dx with a tape inside the compiled function. The loop's max_iterations comes from a
 * global, so one callback serves the differentiable case and the refused one. */
static int64_t g_max_iterations = 8;

static cairn_status *dpower(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                            cairn_tensor **outputs, size_t n_outputs) {
  cairn_tape *tape = NULL;
  cairn_tensor *vars[4], *res[4] = {NULL, NULL, NULL, NULL};
  const cairn_tensor *x = inputs[0];
  cairn_status *st;
  size_t k;
  (void)n_inputs;
  (void)n_outputs;
  if ((st = cairn_tape_create(ctx, NULL, &tape)) != NULL) return st;
  if ((st = cairn_tape_watch(tape, x)) == NULL) {
    vars[0] = i32(ctx, 0);
    vars[1] = f32(ctx, 1);
    vars[2] = inputs[1];
    vars[3] = inputs[0];
    st = cairn_while_loop(ctx, less_than_n, times_x, user_data, vars, 4, g_max_iterations, res);
    cairn_tensor_free(vars[0]);
    cairn_tensor_free(vars[1]);
    if (st == NULL) st = cairn_tape_gradient(tape, res[1], &x, 1, NULL, CAIRN_UNCONNECTED_ZERO, &outputs[0]);
    for (k = 0; k < 4; ++k) cairn_tensor_free(res[k]);
  }
  cairn_tape_free(tape);
  return st;
}

/* power(x, n) = x^n with a loop whose trip count is the input n. */
static cairn_status *power(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                           cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *vars[4], *res[4] = {NULL, NULL, NULL, NULL};
  cairn_status *st;
  size_t k;
  (void)n_inputs;
  (void)n_outputs;
  vars[0] = i32(ctx, 0);
  vars[1] = f32(ctx, 1);
  vars[2] = inputs[1];
  vars[3] = inputs[0];
  st = cairn_while_loop(ctx, less_than_n, times_x, user_data, vars, 4, -1, res);
  cairn_tensor_free(vars[0]);
  cairn_tensor_free(vars[1]);
  if (st) return st;
  outputs[0] = res[1];
  for (k = 0; k < 4; ++k)
    if (k != 1) cairn_tensor_free(res[k]);
  return NULL;
}

static cairn_status *negate(void *user_data, cairn_context *ctx, cairn_tensor *const *v, size_t n_in,
                            cairn_tensor **out, size_t n_out) {
  (void)n_in;
  (void)n_out;
  ++((Counts *)user_data)->branch_calls;
  return cairn_op_run(ctx, "Neg", v, 1, NULL, 0, &out[0], 1);
}

static cairn_status *twice(void *user_data, cairn_context *ctx, cairn_tensor *const *v, size_t n_in,
                           cairn_tensor **out, size_t n_out) {
  (void)n_in;
  (void)n_out;
  ++((Counts *)user_data)->branch_calls;
  return binary(ctx, "Add", v[0], v[0], &out[0]);
}

/* x > 0 ? 2x : -x */
static cairn_status *abs_or_double(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                                   cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *zero = f32(ctx, 0), *pred = NULL;
  cairn_status *st;
  (void)n_inputs;
  (void)n_outputs;
  if ((st = binary(ctx, "Greater", inputs[0], zero, &pred)) == NULL)
    st = cairn_cond(ctx, pred, inputs, 1, twice, negate, user_data, outputs, 1);
  cairn_tensor_free(zero);
  cairn_tensor_free(pred);
  return st;
}

/* Loop variables (i, array, n): array[i] = i * i while i < n. */
static cairn_status *i_less_n(void *user_data, cairn_context *ctx, cairn_tensor *const *v, size_t n_in,
                              cairn_tensor **out, size_t n_out) {
  (void)user_data;
  (void)n_in;
  (void)n_out;
  return binary(ctx, "Less", v[0], v[2], &out[0]);
}

static cairn_status *write_square(void *user_data, cairn_context *ctx, cairn_tensor *const *v, size_t n_in,
                                  cairn_tensor **out, size_t n_out) {
  cairn_tensor *sq = NULL, *one = i32(ctx, 1);
  cairn_status *st;
  (void)user_data;
  (void)n_in;
  (void)n_out;
  if ((st = binary(ctx, "Mul", v[0], v[0], &sq)) == NULL && (st = cairn_tensor_array_write(ctx, v[1], v[0], sq, &out[1])) == NULL &&
      (st = binary(ctx, "Add", v[0], one, &out[0])) == NULL)
    st = cairn_tensor_share(v[2], &out[2]);
  cairn_tensor_free(sq);
  cairn_tensor_free(one);
  return st;
}

static cairn_status *squares(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                             cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *vars[3], *res[3] = {NULL, NULL, NULL};
  cairn_status *st;
  (void)user_data;
  (void)n_inputs;
  (void)n_outputs;
  vars[0] = i32(ctx, 0);
  if ((st = cairn_tensor_array_create(ctx, CAIRN_INT32, 5, NULL, 0, &vars[1])) != NULL) {
    cairn_tensor_free(vars[0]);
    return st;
  }
  vars[2] = inputs[0];
  st = cairn_while_loop(ctx, i_less_n, write_square, NULL, vars, 3, -1, res);
  cairn_tensor_free(vars[0]);
  cairn_tensor_free(vars[1]);
  if (st) return st;
  outputs[0] = res[1];
  cairn_tensor_free(res[0]);
  cairn_tensor_free(res[2]);
  return NULL;
}

int main(void) {
  cairn_context *ctx = NULL;
  cairn_function *fn = NULL;
  Counts c = {0, 0, 0, 0};
  cairn_tensor *x, *n, *y = NULL, *arr = NULL, *elem = NULL, *idx;
  int32_t got[5];
  size_t n_out = 0;
  int k;

  CHECK_OK(cairn_context_create(NULL, &ctx));

  /* Eager: the callbacks run on every call. */
  x = f32(ctx, 3);
  CHECK_OK(abs_or_double(&c, ctx, &x, 1, &y, 1));
  CHECK(read_f32(y) == 6);
  CHECK(c.branch_calls == 1);
  cairn_tensor_free(y);

  /* Compiled: both branches traced once; the data picks the branch at replay. */
  CHECK_OK(cairn_function_create(ctx, "abs_or_double", abs_or_double, &c, NULL, &fn));
  c.branch_calls = 0;
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  CHECK(read_f32(y) == 6);
  cairn_tensor_free(y);
  cairn_tensor_free(x);
  x = f32(ctx, -4);
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  CHECK(read_f32(y) == 4);
  cairn_tensor_free(y);
  CHECK(c.branch_calls == 2);
  CHECK(cairn_function_num_traces(fn) == 1);
  CHECK_OK(cairn_function_num_outputs(fn, 0, &n_out));
  CHECK(n_out == 1);
  CHECK_ERR(cairn_function_num_outputs(fn, 1, &n_out), CAIRN_OUT_OF_RANGE, "trace 1");
  cairn_function_free(fn);

  /* A loop with a data-dependent trip count, traced once. */
  CHECK_OK(cairn_function_create(ctx, "power", power, &c, NULL, &fn));
  c.cond_calls = c.body_calls = 0;
  cairn_tensor_free(x);
  x = f32(ctx, 2);
  for (k = 0; k <= 10; k += 5) {
    cairn_tensor *ins[2];
    ins[0] = x;
    ins[1] = n = i32(ctx, k);
    CHECK_OK(cairn_function_call(fn, ins, 2, &y, 1));
    CHECK(read_f32(y) == (float)(1 << k));
    cairn_tensor_free(y);
    cairn_tensor_free(n);
  }
  CHECK(c.cond_calls == 1 && c.body_calls == 1);
  CHECK(cairn_function_num_traces(fn) == 1);
  cairn_function_free(fn);

  /* A tape inside the function differentiates the loop (it has max_iterations). */
  CHECK_OK(cairn_function_create(ctx, "dpower", dpower, &c, NULL, &fn));
  for (k = 0; k <= 3; ++k) {
    cairn_tensor *ins[2];
    ins[0] = x; /* 2 */
    ins[1] = n = i32(ctx, k);
    CHECK_OK(cairn_function_call(fn, ins, 2, &y, 1));
    CHECK(read_f32(y) == (k == 0 ? 0.0f : (float)k * (float)(1 << (k - 1))));
    cairn_tensor_free(y);
    cairn_tensor_free(n);
  }
  CHECK(cairn_function_num_traces(fn) == 1);
  cairn_function_free(fn);
  g_max_iterations = -1; /* without it the gradient has no stack size: refused, not lost */
  CHECK_OK(cairn_function_create(ctx, "dpower_unbounded", dpower, &c, NULL, &fn));
  {
    cairn_tensor *ins[2];
    ins[0] = x;
    ins[1] = n = i32(ctx, 2);
    CHECK_ERR(cairn_function_call(fn, ins, 2, &y, 1), CAIRN_UNIMPLEMENTED, "needs max_iterations");
    cairn_tensor_free(n);
  }
  cairn_function_free(fn);

  /* A TensorArray filled by a loop. */
  CHECK_OK(cairn_function_create(ctx, "squares", squares, NULL, NULL, &fn));
  n = i32(ctx, 4);
  CHECK_OK(cairn_function_call(fn, &n, 1, &arr, 1));
  CHECK_OK(cairn_tensor_read(arr, got, sizeof got));
  CHECK(got[0] == 0 && got[1] == 1 && got[2] == 4 && got[3] == 9 && got[4] == 0);
  idx = i32(ctx, 3);
  CHECK_OK(cairn_tensor_array_read(ctx, arr, idx, &elem));
  CHECK(read_i32(elem) == 9);
  cairn_tensor_free(elem);
  cairn_tensor_free(idx);
  idx = i32(ctx, 5);
  CHECK_ERR(cairn_tensor_array_read(ctx, arr, idx, &elem), CAIRN_OUT_OF_RANGE, "index 5");
  CHECK_ERR(cairn_tensor_array_write(ctx, arr, idx, n, &elem), CAIRN_OUT_OF_RANGE, "index 5");
  cairn_tensor_free(idx);
  cairn_tensor_free(arr);
  cairn_tensor_free(n);
  cairn_function_free(fn);

  /* Errors. */
  n = i32(ctx, 1);
  CHECK_ERR(cairn_cond(ctx, n, &x, 1, twice, negate, &c, &y, 1), CAIRN_INVALID_ARGUMENT, "bool");
  CHECK_ERR(cairn_cond(ctx, NULL, &x, 1, twice, negate, &c, &y, 1), CAIRN_INVALID_ARGUMENT, "pred");
  CHECK_ERR(cairn_while_loop(ctx, less_than_n, times_x, &c, NULL, 0, -1, NULL), CAIRN_INVALID_ARGUMENT,
            "at least one loop variable");
  CHECK_ERR(cairn_tensor_array_create(ctx, CAIRN_FLOAT32, -1, NULL, 0, &arr), CAIRN_INVALID_ARGUMENT, "size");
  {
    cairn_tensor *ins[2];
    ins[0] = x;
    ins[1] = n;
    c.fail_body = 1;
    CHECK_OK(cairn_function_create(ctx, "power", power, &c, NULL, &fn));
    CHECK_ERR(cairn_function_call(fn, ins, 2, &y, 1), CAIRN_FAILED_PRECONDITION, "the body refuses");
    CHECK(cairn_function_num_traces(fn) == 0);
    cairn_function_free(fn);
  }
  cairn_tensor_free(n);
  cairn_tensor_free(x);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
