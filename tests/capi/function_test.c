/* Compiled functions through the C API: the quiz (what runs at trace time, what at replay),
 * variables captured by reference, retracing on a new dtype, input signatures, dumps, errors. */
#include <stdlib.h>

/* Uses the experimental part of the header (export, load, control flow). */
#define CAIRN_EXPERIMENTAL
#include "check.h"

typedef struct {
  int traces;            /* incremented by the callback: a host side effect */
  cairn_object *var;     /* read inside the function */
  int released;
} State;

/* y = x * x + var */
static cairn_status *square_plus_var(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                                     cairn_tensor **outputs, size_t n_outputs) {
  State *s = (State *)user_data;
  cairn_tensor *sq = NULL, *v = NULL, *ins[2];
  cairn_status *st;
  (void)n_inputs;
  (void)n_outputs;
  ++s->traces;
  ins[0] = inputs[0];
  ins[1] = inputs[0];
  if ((st = cairn_op_run(ctx, "Mul", ins, 2, NULL, 0, &sq, 1)) != NULL) return st;
  if ((st = cairn_variable_read(s->var, &v)) != NULL) return st;
  ins[0] = sq;
  ins[1] = v;
  st = cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &outputs[0], 1);
  cairn_tensor_free(sq);
  cairn_tensor_free(v);
  return st;
}

static cairn_status *failing(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                             cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *bad = NULL;
  (void)user_data;
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  /* MatMul of two vectors is an op error inside the trace. */
  return cairn_op_run(ctx, "MatMul", (cairn_tensor *const *)inputs, 2, NULL, 0, &bad, 1);
}

static void release_state(void *user_data) { ((State *)user_data)->released = 1; }

static cairn_tensor *f32(cairn_context *ctx, const float *v, int64_t n) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, (size_t)n * sizeof(float), &t));
  return t;
}

static void read2(const cairn_tensor *t, float *out) { CHECK_OK(cairn_tensor_read(t, out, 2 * sizeof(float))); }

int main(void) {
  cairn_context *ctx = NULL;
  cairn_function *fn = NULL, *bad = NULL, *sig = NULL;
  cairn_function_options opts = CAIRN_FUNCTION_OPTIONS_INIT;
  State s = {0, NULL, 0};
  const float xv[2] = {1, 2}, x2v[2] = {3, 4}, vv[2] = {10, 20}, zero[2] = {0, 0};
  cairn_tensor *x, *x2, *vinit, *vzero, *y = NULL, *xd = NULL;
  const double dv[2] = {1, 2};
  const int64_t two = 2, any[1] = {-1};
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  char *text = NULL;
  float out[2];

  CHECK_OK(cairn_context_create(NULL, &ctx));
  x = f32(ctx, xv, 2);
  x2 = f32(ctx, x2v, 2);
  vinit = f32(ctx, vv, 2);
  vzero = f32(ctx, zero, 2);
  CHECK_OK(cairn_variable_create(ctx, vinit, NULL, &s.var));

  opts.release = release_state;
  CHECK_OK(cairn_function_create(ctx, "square_plus_var", square_plus_var, &s, &opts, &fn));
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  read2(y, out);
  CHECK(out[0] == 11 && out[1] == 24);
  cairn_tensor_free(y);
  CHECK_OK(cairn_function_call(fn, &x2, 1, &y, 1));
  read2(y, out);
  CHECK(out[0] == 19 && out[1] == 36);
  cairn_tensor_free(y);
  CHECK(s.traces == 1); /* the second call replayed the graph */
  CHECK(cairn_function_num_traces(fn) == 1);

  /* The variable is captured by reference. */
  CHECK_OK(cairn_variable_assign(s.var, vzero));
  CHECK_OK(cairn_function_call(fn, &x2, 1, &y, 1));
  read2(y, out);
  CHECK(out[0] == 9 && out[1] == 16);
  cairn_tensor_free(y);

  /* A new dtype retraces (and here fails: float64 + the float32 variable); nothing is cached. */
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT64, &two, 1, dv, sizeof dv, &xd));
  CHECK_ERR(cairn_function_call(fn, &xd, 1, &y, 1), CAIRN_INVALID_ARGUMENT, "Add");
  CHECK(s.traces == 2);
  CHECK(cairn_function_num_traces(fn) == 1);
  CHECK_ERR(cairn_function_call(fn, &x, 1, NULL, 0), CAIRN_INVALID_ARGUMENT, "returns 1 output(s), not 0");

  CHECK_OK(cairn_function_dump(fn, 0, &text));
  CHECK(text && strstr(text, "Mul") && strstr(text, "ReadVariable") && strstr(text, "float32[2]"));
  cairn_free(text);
  CHECK_OK(cairn_function_signature(fn, 0, &text));
  CHECK(text && strcmp(text, "float32[2]") == 0);
  cairn_free(text);
  CHECK_ERR(cairn_function_dump(fn, 5, &text), CAIRN_OUT_OF_RANGE, "trace 5");

  /* A callback's error comes back from the call. */
  CHECK_OK(cairn_function_create(ctx, "failing", failing, NULL, NULL, &bad));
  {
    cairn_tensor *pair[2];
    pair[0] = x;
    pair[1] = x;
    CHECK_ERR(cairn_function_call(bad, pair, 2, &y, 1), CAIRN_INVALID_ARGUMENT, "function 'failing': MatMul");
  }
  CHECK(cairn_function_num_traces(bad) == 0);

  /* An input signature with an unknown dimension: one trace for several lengths. */
  spec.dtype = CAIRN_FLOAT32;
  spec.shape = any;
  spec.rank = 1;
  opts = (cairn_function_options)CAIRN_FUNCTION_OPTIONS_INIT;
  opts.input_signature = &spec;
  opts.n_input_signature = 1;
  s.traces = 0;
  CHECK_OK(cairn_variable_assign(s.var, vzero));
  {
    State one = {0, NULL, 0};
    const float three[3] = {1, 2, 3};
    cairn_tensor *x3 = f32(ctx, three, 3), *w = NULL, *winit;
    const float wv[1] = {5};
    winit = f32(ctx, wv, 1);
    CHECK_OK(cairn_variable_create(ctx, winit, NULL, &one.var));
    CHECK_OK(cairn_function_create(ctx, "any_length", square_plus_var, &one, &opts, &sig));
    CHECK_OK(cairn_function_call(sig, &x, 1, &w, 1));
    cairn_tensor_free(w);
    CHECK_OK(cairn_function_call(sig, &x3, 1, &w, 1));
    {
      float r[3];
      CHECK_OK(cairn_tensor_read(w, r, sizeof r));
      CHECK(r[0] == 6 && r[1] == 9 && r[2] == 14);
    }
    /* The second length is traced once more to check that the graph does not depend on it. */
    CHECK(one.traces == 2);
    CHECK(cairn_function_num_traces(sig) == 1);
    cairn_tensor_free(w);
    cairn_function_free(sig);
    cairn_object_free(one.var);
    cairn_tensor_free(x3);
    cairn_tensor_free(winit);
  }
  CHECK_ERR(cairn_function_create(ctx, NULL, square_plus_var, NULL, NULL, &sig), CAIRN_INVALID_ARGUMENT, "name is NULL");

  /* A static input: its value keys the cache (a new value retraces, an old one replays). */
  {
    State st = {0, NULL, 0};
    const float a[2] = {1, 2}, b[2] = {5, 7};
    const int64_t static_index[1] = {0};
    cairn_function_options so = CAIRN_FUNCTION_OPTIONS_INIT;
    cairn_tensor *ta = f32(ctx, a, 2), *tb = f32(ctx, b, 2), *r = NULL;
    CHECK_OK(cairn_variable_create(ctx, vzero, NULL, &st.var));
    so.static_inputs = static_index;
    so.n_static_inputs = 1;
    CHECK_OK(cairn_function_create(ctx, "static_x", square_plus_var, &st, &so, &sig));
    CHECK_OK(cairn_function_call(sig, &ta, 1, &r, 1));
    read2(r, out);
    CHECK(out[0] == 1 && out[1] == 4);
    cairn_tensor_free(r);
    CHECK_OK(cairn_function_call(sig, &tb, 1, &r, 1));
    read2(r, out);
    CHECK(out[0] == 25 && out[1] == 49);
    cairn_tensor_free(r);
    CHECK_OK(cairn_function_call(sig, &ta, 1, &r, 1));
    cairn_tensor_free(r);
    CHECK(st.traces == 2);
    CHECK(cairn_function_num_traces(sig) == 2);
    CHECK_ERR(cairn_function_export(sig, "/tmp/cairn_static_never_written.cairnfn"), CAIRN_UNIMPLEMENTED, "static inputs");
    cairn_function_free(sig);
    so.n_static_inputs = 1;
    so.static_inputs = NULL;
    CHECK_ERR(cairn_function_create(ctx, "bad", square_plus_var, &st, &so, &sig), CAIRN_INVALID_ARGUMENT, "static_inputs");
    cairn_object_free(st.var);
    cairn_tensor_free(ta);
    cairn_tensor_free(tb);
  }

  cairn_function_free(fn);
  CHECK(s.released == 1);
  cairn_function_free(bad);
  cairn_object_free(s.var);
  cairn_tensor_free(x);
  cairn_tensor_free(x2);
  cairn_tensor_free(xd);
  cairn_tensor_free(vinit);
  cairn_tensor_free(vzero);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
