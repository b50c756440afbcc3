/* Issue 18: C API entry points given hostile structured input. Fields the header says are ignored
 * are never read (this test runs under UBSan in CI, where reading an out-of-range cairn_dtype traps);
 * a function signature whose dtype is none, and a variable made from a symbolic tensor, are
 * refused with INVALID_ARGUMENT when they are created, not on every later call. */
#include <string.h>

#include "check.h"

/* An attribute whose every field is garbage (0xFF bytes: cairn_dtype -1, which is no enumerator),
 * then name, kind and the field of that kind set. */
static cairn_attr garbage_attr(const char *name, cairn_attr_kind kind) {
  cairn_attr a;
  memset(&a, 0xFF, sizeof a);
  a.name = name;
  a.kind = kind;
  return a;
}

static void attrs_read_only_their_kind(cairn_context *ctx) {
  const float xv[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {2, 2};
  cairn_tensor *x = NULL, *y = NULL;
  float got[4];
  cairn_attr attrs[2];
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, xv, sizeof xv, &x));

  /* BOOL attributes (MatMul's transpose_a/transpose_b): only `i` is read. */
  attrs[0] = garbage_attr("transpose_a", CAIRN_ATTR_BOOL);
  attrs[0].i = 1;
  attrs[1] = garbage_attr("transpose_b", CAIRN_ATTR_BOOL);
  attrs[1].i = 0;
  {
    cairn_tensor *ins[2];
    ins[0] = x;
    ins[1] = x;
    CHECK_OK(cairn_op_run(ctx, "MatMul", ins, 2, attrs, 2, &y, 1));
  }
  if (y) {
    CHECK_OK(cairn_tensor_read(y, got, sizeof got));
    /* x^T x = [[1,3],[2,4]] [[1,2],[3,4]] */
    CHECK(got[0] == 10 && got[1] == 14 && got[2] == 14 && got[3] == 20);
  }
  cairn_tensor_free(y);
  y = NULL;

  /* A DTYPE attribute: Cast reads `dtype` because its kind is DTYPE. */
  attrs[0] = garbage_attr("DstT", CAIRN_ATTR_DTYPE);
  attrs[0].dtype = CAIRN_INT32;
  CHECK_OK(cairn_op_run(ctx, "Cast", &x, 1, attrs, 1, &y, 1));
  CHECK(y != NULL && cairn_tensor_dtype(y) == CAIRN_INT32);
  cairn_tensor_free(y);
  y = NULL;

  /* An INTS attribute: Fill's dims. */
  {
    const float one = 1;
    const int64_t dims[2] = {2, 3};
    float filled[6];
    cairn_tensor *v = NULL;
    CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, NULL, 0, &one, sizeof one, &v));
    attrs[0] = garbage_attr("dims", CAIRN_ATTR_INTS);
    attrs[0].ints = dims;
    attrs[0].n_ints = 2;
    CHECK_OK(cairn_op_run(ctx, "Fill", &v, 1, attrs, 1, &y, 1));
    if (y) {
      CHECK_OK(cairn_tensor_read(y, filled, sizeof filled));
      CHECK(filled[0] == 1 && filled[5] == 1);
    }
    cairn_tensor_free(y);
    y = NULL;
    cairn_tensor_free(v);
  }

  /* A DTYPE attribute with a value that is no dtype (11) is still refused, naming the op. */
  attrs[0] = garbage_attr("DstT", CAIRN_ATTR_DTYPE);
  attrs[0].dtype = (cairn_dtype)11;
  CHECK_ERR(cairn_op_run(ctx, "Cast", &x, 1, attrs, 1, &y, 1), CAIRN_INVALID_ARGUMENT, "Cast");
  CHECK(y == NULL);
  /* So is a kind that is no kind. */
  attrs[0] = garbage_attr("DstT", (cairn_attr_kind)-1);
  CHECK_ERR(cairn_op_run(ctx, "Cast", &x, 1, attrs, 1, &y, 1), CAIRN_INVALID_ARGUMENT,
            "Cast: attribute 'DstT' has unknown kind -1");
  CHECK(y == NULL);
  cairn_tensor_free(x);
}

static void signature_dtypes_are_checked(cairn_context *ctx) {
  const int64_t any = -1;
  cairn_tensor_spec spec[2] = {CAIRN_TENSOR_SPEC_INIT, CAIRN_TENSOR_SPEC_INIT};
  cairn_function_options opts = CAIRN_FUNCTION_OPTIONS_INIT;
  cairn_function *fn = NULL;
  spec[0].dtype = CAIRN_FLOAT32;
  spec[0].shape = &any;
  spec[0].rank = 1;
  spec[1].dtype = (cairn_dtype)99;
  opts.input_signature = spec;
  opts.n_input_signature = 2;
  CHECK_ERR(cairn_function_create(ctx, "sig_fn", check_identity_fn, NULL, &opts, &fn), CAIRN_INVALID_ARGUMENT,
            "cairn_function_create: function 'sig_fn': input_signature[1] has dtype 99, which is not a dtype");
  CHECK(fn == NULL);
  spec[1].dtype = CAIRN_INVALID_DTYPE; /* the default: required */
  CHECK_ERR(cairn_function_create(ctx, "sig_fn", check_identity_fn, NULL, &opts, &fn), CAIRN_INVALID_ARGUMENT,
            "input_signature[1] has dtype 0");
  CHECK(fn == NULL);
  spec[0].dtype = (cairn_dtype)-1;
  CHECK_ERR(cairn_function_create(ctx, "other", check_identity_fn, NULL, &opts, &fn), CAIRN_INVALID_ARGUMENT,
            "function 'other': input_signature[0] has dtype -1");
  CHECK(fn == NULL);

  /* Real dtypes make a signature that calls match. */
  spec[0].dtype = CAIRN_FLOAT32;
  spec[1].dtype = CAIRN_INT32;
  CHECK_OK(cairn_function_create(ctx, "sig_fn", check_identity_fn, NULL, &opts, &fn));
  CHECK(fn != NULL);
  if (fn) {
    const float v[3] = {1, 2, 3};
    const int32_t k = 7;
    const int64_t n = 3;
    cairn_tensor *x = NULL, *i = NULL, *y = NULL, *ins[2];
    CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, sizeof v, &x));
    CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, NULL, 0, &k, sizeof k, &i));
    ins[0] = x;
    ins[1] = i;
    CHECK_OK(cairn_function_call(fn, ins, 2, &y, 1));
    CHECK(y != NULL && cairn_tensor_num_elements(y) == 3);
    cairn_tensor_free(y);
    cairn_tensor_free(i);
    cairn_tensor_free(x);
  }
  cairn_function_free(fn);
  fn = NULL;
  /* CAIRN_STRING is a dtype (string tensors come from ops and checkpoints). */
  spec[1].dtype = CAIRN_STRING;
  CHECK_OK(cairn_function_create(ctx, "sig_fn", check_identity_fn, NULL, &opts, &fn));
  CHECK(fn != NULL);
  cairn_function_free(fn);
}

typedef struct {
  cairn_status *st;    /* what cairn_variable_create returned inside the trace */
  cairn_object *made;  /* what it wrote to out (must stay NULL) */
} VarAttempt;

static cairn_status *make_variable_fn(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                      size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  VarAttempt *a = (VarAttempt *)user_data;
  (void)n_inputs;
  (void)n_outputs;
  a->st = cairn_variable_create(ctx, inputs[0], NULL, &a->made);
  return cairn_tensor_share(inputs[0], &outputs[0]);
}

static void variables_refuse_symbolic_tensors(cairn_context *ctx) {
  VarAttempt a = {NULL, NULL};
  cairn_function *fn = NULL;
  const float v[2] = {1, 2};
  const int64_t n = 2;
  cairn_tensor *x = NULL, *y = NULL;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, sizeof v, &x));
  CHECK_OK(cairn_function_create(ctx, "makes_var", make_variable_fn, &a, NULL, &fn));
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  CHECK_ERR(a.st, CAIRN_INVALID_ARGUMENT, "cairn_variable_create: initial is a symbolic float32[2] tensor");
  CHECK(a.made == NULL);
  cairn_object_free(a.made);
  /* An eager tensor still makes a variable. */
  {
    cairn_object *var = NULL;
    CHECK_OK(cairn_variable_create(ctx, x, NULL, &var));
    CHECK(var != NULL);
    cairn_object_free(var);
  }
  cairn_tensor_free(y);
  cairn_tensor_free(x);
  cairn_function_free(fn);
}

static cairn_status *no_elements(void *user_data, cairn_context *ctx, int64_t index, cairn_tensor **outputs,
                                 size_t n_outputs, cairn_bool *got) {
  (void)user_data;
  (void)ctx;
  (void)index;
  (void)outputs;
  (void)n_outputs;
  *got = CAIRN_FALSE;
  return NULL;
}

/* Enum fields of other structs (specs and options) that hold no enumerator are refused the same way. */
static void enum_fields_are_checked(cairn_context *ctx) {
  cairn_feature_spec fs = CAIRN_FEATURE_SPEC_INIT;
  cairn_tensor_spec ts = CAIRN_TENSOR_SPEC_INIT;
  cairn_csv_options csv = CAIRN_CSV_OPTIONS_INIT;
  const cairn_dtype bad_dtype = (cairn_dtype)-1;
  const char *paths[1] = {"unused.csv"};
  cairn_dataset *ds = NULL;
  size_t n = 0;
  fs.key = "x";
  fs.kind = (cairn_feature_spec_kind)-1;
  CHECK_ERR(cairn_parse_num_outputs(&fs, 1, &n), CAIRN_INVALID_ARGUMENT, "specs[0]: unknown kind -1");
  ts.dtype = bad_dtype;
  CHECK_ERR(cairn_dataset_from_generator(ctx, NULL, &ts, 1, no_elements, NULL, NULL, &ds), CAIRN_INVALID_ARGUMENT,
            "has dtype -1");
  CHECK(ds == NULL);
  csv.column_dtypes = &bad_dtype;
  csv.n_columns = 1;
  CHECK_ERR(cairn_dataset_csv(ctx, paths, 1, &csv, &ds), CAIRN_INVALID_ARGUMENT, "column 0 has dtype invalid");
  CHECK(ds == NULL);
}

int main(void) {
  cairn_context *ctx = NULL;
  CHECK_OK(cairn_context_create(NULL, &ctx));
  if (!ctx) return 1;
  attrs_read_only_their_kind(ctx);
  signature_dtypes_are_checked(ctx);
  variables_refuse_symbolic_tensors(ctx);
  enum_fields_are_checked(ctx);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
