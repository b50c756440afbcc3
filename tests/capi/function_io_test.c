/* Export and load of compiled functions through the C API: a function with a variable read and
 * update is exported mid-run, loaded into a new context with no callback, and both sides then step
 * identically; wrong signatures, damaged and missing files, untraced functions; GraphDef text. */
#include <stdio.h>
#include <stdlib.h>

/* Uses the experimental part of the header (export, load, control flow). */
#define CAIRN_EXPERIMENTAL
#include "check.h"

/* y = x * x + v, then v += x. */
static cairn_status *square_plus_var(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                                     cairn_tensor **outputs, size_t n_outputs) {
  cairn_object *var = (cairn_object *)user_data;
  cairn_tensor *sq = NULL, *v = NULL, *ins[2];
  cairn_status *st;
  (void)n_inputs;
  (void)n_outputs;
  ins[0] = inputs[0];
  ins[1] = inputs[0];
  if ((st = cairn_op_run(ctx, "Mul", ins, 2, NULL, 0, &sq, 1)) != NULL) return st;
  if ((st = cairn_variable_read(var, &v)) == NULL) {
    ins[0] = sq;
    ins[1] = v;
    st = cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &outputs[0], 1);
  }
  if (st == NULL) st = cairn_variable_assign_add(var, inputs[0]);
  cairn_tensor_free(sq);
  cairn_tensor_free(v);
  return st;
}

static cairn_tensor *f32(cairn_context *ctx, const float *v, int64_t n) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, (size_t)n * sizeof(float), &t));
  return t;
}

static void temp_path(char *out, size_t size, const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(out, size, "%s/%s", dir ? dir : "/tmp", name);
}

/* Copies the first `keep` bytes of `src` to `dst`; returns the size of `src`. */
static long copy_prefix(const char *src, const char *dst, long keep) {
  FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
  long size = 0;
  int c;
  while (in && out && (c = fgetc(in)) != EOF) {
    if (keep < 0 || size < keep) fputc(c, out);
    ++size;
  }
  if (in) fclose(in);
  if (out) fclose(out);
  return size;
}

int main(void) {
  cairn_context *ctx = NULL, *ctx2 = NULL;
  cairn_function *fn = NULL, *loaded = NULL, *idle = NULL, *none = NULL;
  cairn_object *var = NULL;
  const float xv[2] = {1, 2}, vv[2] = {10, 20}, x3v[3] = {1, 2, 3};
  cairn_tensor *x, *vinit, *x3, *y = NULL, *y2 = NULL;
  char path[512], broken[512], missing[512];
  char *text = NULL;
  float a[2], b[2];
  int i;
  long size;

  temp_path(path, sizeof path, "square.cairnfn");
  temp_path(broken, sizeof broken, "broken.cairnfn");
  temp_path(missing, sizeof missing, "missing.cairnfn");
  CHECK_OK(cairn_context_create(NULL, &ctx));
  CHECK_OK(cairn_context_create(NULL, &ctx2));
  x = f32(ctx, xv, 2);
  x3 = f32(ctx2, x3v, 3);
  vinit = f32(ctx, vv, 2);
  CHECK_OK(cairn_variable_create(ctx, vinit, NULL, &var));
  CHECK_OK(cairn_function_create(ctx, "square_plus_var", square_plus_var, var, NULL, &fn));
  CHECK_ERR(cairn_function_export(fn, path), CAIRN_FAILED_PRECONDITION, "no traces yet");
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1)); /* v becomes [11, 22] */
  cairn_tensor_free(y);
  CHECK_OK(cairn_function_export(fn, path));

  /* Loaded in another context: no callback, its own copy of v, same results step after step. */
  CHECK_OK(cairn_function_load(ctx2, path, &loaded));
  CHECK(cairn_function_num_traces(loaded) == 0);
  for (i = 0; i < 3; ++i) {
    cairn_tensor *x2 = f32(ctx2, xv, 2);
    CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
    CHECK_OK(cairn_function_call(loaded, &x2, 1, &y2, 1));
    CHECK_OK(cairn_tensor_read(y, a, sizeof a));
    CHECK_OK(cairn_tensor_read(y2, b, sizeof b));
    CHECK(a[0] == b[0] && a[1] == b[1]);
    CHECK(a[0] == 1 + 11 + (float)i && a[1] == 4 + 22 + 2 * (float)i);
    cairn_tensor_free(y);
    cairn_tensor_free(y2);
    cairn_tensor_free(x2);
  }
  CHECK(cairn_function_num_traces(loaded) == 1);
  CHECK_ERR(cairn_function_call(loaded, &x3, 1, &y2, 1), CAIRN_NOT_FOUND, "it has: (float32[2])");

  /* The loaded function exports again, and its GraphDef names its variable. */
  CHECK_OK(cairn_function_graphdef(loaded, 0, &text));
  CHECK(text != NULL && strstr(text, "op: \"Placeholder\"") != NULL);
  CHECK(text != NULL && strstr(text, "op: \"AssignVariableOp\"") != NULL);
  CHECK(text != NULL && strstr(text, "name: \"Variable\"\n  op: \"VarHandleOp\"") != NULL);
  cairn_free(text);
  CHECK_ERR(cairn_function_graphdef(loaded, 1, &text), CAIRN_OUT_OF_RANGE, "has 1 trace(s)");

  /* Damaged and missing files. */
  size = copy_prefix(path, broken, -1);
  CHECK(size > 200);
  copy_prefix(path, broken, size - 10);
  CHECK_ERR(cairn_function_load(ctx2, broken, &none), CAIRN_DATA_LOSS, "broken.cairnfn");
  CHECK(none == NULL);
  CHECK_ERR(cairn_function_load(ctx2, missing, &none), CAIRN_NOT_FOUND, "missing.cairnfn");
  CHECK_ERR(cairn_function_load(ctx2, NULL, &none), CAIRN_INVALID_ARGUMENT, "path");
  CHECK_ERR(cairn_function_export(NULL, path), CAIRN_INVALID_ARGUMENT, "fn");

  CHECK_OK(cairn_function_create(ctx, "idle", square_plus_var, var, NULL, &idle));
  CHECK_ERR(cairn_function_graphdef(idle, 0, &text), CAIRN_OUT_OF_RANGE, "idle");

  cairn_function_free(idle);
  cairn_function_free(loaded);
  cairn_function_free(fn);
  cairn_object_free(var);
  cairn_tensor_free(x);
  cairn_tensor_free(x3);
  cairn_tensor_free(vinit);
  cairn_context_free(ctx2);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
