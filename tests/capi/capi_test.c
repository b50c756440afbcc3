/* The C API's core surface, error paths included. Runs plain and under ASan+UBSan. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static cairn_context *new_context(void) {
  cairn_context *ctx = NULL;
  CHECK_OK(cairn_context_create(NULL, &ctx));
  return ctx;
}

static cairn_tensor *f32(cairn_context *ctx, const float *v, const int64_t *shape, size_t rank) {
  int64_t n = 1;
  size_t i;
  cairn_tensor *t = NULL;
  for (i = 0; i < rank; ++i) n *= shape[i];
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, rank, v, (size_t)n * sizeof(float), &t));
  return t;
}

static void test_versions_and_status(void) {
  CHECK(cairn_abi_version() == CAIRN_ABI_VERSION);
  CHECK(strcmp(cairn_version(), "1.3.0") == 0);
  CHECK(cairn_status_code(NULL) == CAIRN_OK);
  CHECK(strcmp(cairn_status_message(NULL), "") == 0);
  cairn_status_free(NULL);
  cairn_free(NULL);
  cairn_context_free(NULL);
  cairn_tensor_free(NULL);
  CHECK(cairn_dtype_size(CAIRN_FLOAT64) == 8);
  CHECK(cairn_dtype_size(CAIRN_BFLOAT16) == 2);
  CHECK(strcmp(cairn_dtype_name(CAIRN_COMPLEX64), "complex64") == 0);
  CHECK(strcmp(cairn_dtype_name((cairn_dtype)99), "invalid") == 0);
  {
    cairn_status *made = cairn_status_create(CAIRN_NOT_FOUND, "host: no such thing");
    CHECK(cairn_status_code(made) == CAIRN_NOT_FOUND);
    CHECK(strcmp(cairn_status_message(made), "host: no such thing") == 0);
    cairn_status_free(made);
    CHECK(cairn_status_create(CAIRN_OK, "ignored") == NULL);
    made = cairn_status_create((cairn_code)77, NULL);
    CHECK(cairn_status_code(made) == CAIRN_UNKNOWN && strcmp(cairn_status_message(made), "") == 0);
    cairn_status_free(made);
  }
}

static void test_context_options(void) {
  cairn_context *ctx = NULL;
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  CHECK_ERR(cairn_context_create(NULL, NULL), CAIRN_INVALID_ARGUMENT, "cairn_context_create: out is NULL");
  opts.struct_size = 4;
  CHECK_ERR(cairn_context_create(&opts, &ctx), CAIRN_INVALID_ARGUMENT, "cairn_context_options.struct_size is 4");
  CHECK(ctx == NULL);
  opts.struct_size = sizeof(opts);
  opts.device = "tpu";
  CHECK_ERR(cairn_context_create(&opts, &ctx), CAIRN_NOT_FOUND, "device \"tpu\"");
  opts.device = "vulkan";
  {
    cairn_status *st = cairn_context_create(&opts, &ctx);
    /* Until the Vulkan backend is built in, a Vulkan context is unavailable, never a crash. */
    if (st) {
      CHECK(cairn_status_code(st) == CAIRN_UNAVAILABLE);
      cairn_status_free(st);
    } else {
      cairn_context_free(ctx);
    }
  }
  opts.device = "cpu";
  opts.num_threads = -1;
  CHECK_ERR(cairn_context_create(&opts, &ctx), CAIRN_INVALID_ARGUMENT, "num_threads must be >= 0");
  opts.num_threads = 1;
  CHECK_OK(cairn_context_create(&opts, &ctx));
  CHECK(strcmp(cairn_context_device(ctx), "cpu") == 0);
  cairn_context_free(ctx);
}

static int g_log_calls = 0;
static int g_log_released = 0;
static void on_log_release(void *user) {
  CHECK(user == &g_log_calls);
  ++g_log_released;
}
static char g_last_log[256];
static void on_log(void *user, cairn_log_level level, const char *message) {
  CHECK(user == &g_log_calls);
  CHECK(level >= CAIRN_LOG_INFO);
  ++g_log_calls;
  strncpy(g_last_log, message, sizeof g_last_log - 1);
}

static void test_log_callback(void) {
  cairn_context *ctx = NULL;
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  opts.log_fn = on_log;
  opts.log_user_data = &g_log_calls;
  opts.log_level = CAIRN_LOG_INFO;
  CHECK_OK(cairn_context_create(&opts, &ctx));
  CHECK(g_log_calls == 1);
  CHECK(strstr(g_last_log, "context created") != NULL);
  CHECK(g_log_released == 0);
  cairn_context_free(ctx);
  CHECK(g_log_released == 0); /* no log_release given */
  opts.log_release = on_log_release;
  CHECK_OK(cairn_context_create(&opts, &ctx));
  cairn_context_free(ctx);
  CHECK(g_log_released == 1);
  opts.log_level = (cairn_log_level)9;
  CHECK_ERR(cairn_context_create(&opts, &ctx), CAIRN_INVALID_ARGUMENT, "unknown log_level 9");
}

typedef struct {
  int live;
  long total;
  int released;
} alloc_stats;

static void count_release(void *user) { ((alloc_stats *)user)->released++; }

static void *count_alloc(void *user, size_t size, size_t alignment) {
  alloc_stats *s = (alloc_stats *)user;
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
  {
    s->live++;
    s->total++;
  }
  return p;
}
static void count_free(void *user, void *ptr, size_t size) {
  alloc_stats *s = (alloc_stats *)user;
  (void)size;
  s->live--;
  free(ptr);
}

static void test_allocator_hooks_and_free_order(void) {
  alloc_stats stats = {0, 0, 0};
  cairn_allocator alloc = {count_alloc, count_free, NULL, count_release};
  cairn_allocator half = {count_alloc, NULL, NULL, NULL};
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_context *ctx = NULL;
  cairn_tensor *a = NULL, *b = NULL, *out = NULL;
  float v[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  alloc.user_data = &stats;
  opts.allocator = &half;
  CHECK_ERR(cairn_context_create(&opts, &ctx), CAIRN_INVALID_ARGUMENT, "allocate and deallocate");
  opts.allocator = &alloc;
  opts.device = "tpu";
  CHECK_ERR(cairn_context_create(&opts, &ctx), CAIRN_NOT_FOUND, "tpu");
  CHECK(stats.released == 0); /* a failed creation calls no release hook */
  opts.device = NULL;
  CHECK_OK(cairn_context_create(&opts, &ctx));
  a = f32(ctx, v, shape, 1);
  b = f32(ctx, v, shape, 1);
  {
    cairn_tensor *ins[2];
    ins[0] = a;
    ins[1] = b;
    CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1));
  }
  CHECK(stats.live == 3);
  /* Free the context first: tensors stay readable, and their memory goes back through the hooks. */
  cairn_context_free(ctx);
  {
    float r[4];
    CHECK_OK(cairn_tensor_read(out, r, sizeof r));
    CHECK(r[3] == 8.0f);
  }
  {
    cairn_tensor *shared = NULL;
    CHECK_OK(cairn_tensor_share(out, &shared));
    cairn_tensor_free(out);
    out = shared; /* the value lives on through the second handle */
  }
  cairn_tensor_free(a);
  cairn_tensor_free(b);
  CHECK(stats.released == 0);
  {
    float r[4];
    CHECK_OK(cairn_tensor_read(out, r, sizeof r));
    CHECK(r[0] == 2.0f);
  }
  cairn_tensor_free(out);
  CHECK(stats.live == 0);
  CHECK(stats.total == 3);
  CHECK(stats.released == 1); /* after the last block */
  CHECK_ERR(cairn_tensor_share(NULL, &out), CAIRN_INVALID_ARGUMENT, "cairn_tensor_share: tensor is NULL");
}

static void test_tensor_create_and_read(void) {
  cairn_context *ctx = new_context();
  cairn_tensor *t = NULL;
  int64_t shape[2] = {2, 3};
  int64_t bad_rank[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  int64_t neg[2] = {2, -3};
  double d[6] = {1, 2, 3, 4, 5, 6};
  double back[6];
  uint8_t flags[3] = {1, 0, 1};
  int64_t three = 3;

  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_FLOAT64, shape, 2, d, 40, &t), CAIRN_INVALID_ARGUMENT,
            "nbytes is 40 but a float64[2,3] tensor needs 48");
  CHECK(t == NULL);
  CHECK_ERR(cairn_tensor_create(ctx, (cairn_dtype)11, shape, 2, d, 48, &t), CAIRN_INVALID_ARGUMENT, "unknown dtype 11");
  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_STRING, shape, 2, d, 48, &t), CAIRN_INVALID_ARGUMENT, "string");
  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_FLOAT64, bad_rank, 9, d, 8, &t), CAIRN_INVALID_ARGUMENT, "rank 9 exceeds");
  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_FLOAT64, neg, 2, d, 48, &t), CAIRN_INVALID_ARGUMENT, "dimension 1 is negative");
  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_FLOAT64, shape, 2, NULL, 48, &t), CAIRN_INVALID_ARGUMENT, "data is NULL");
  CHECK_ERR(cairn_tensor_create(NULL, CAIRN_FLOAT64, shape, 2, d, 48, &t), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_FLOAT64, NULL, 2, d, 48, &t), CAIRN_INVALID_ARGUMENT, "shape is NULL");

  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT64, shape, 2, d, sizeof d, &t));
  CHECK(cairn_tensor_dtype(t) == CAIRN_FLOAT64);
  CHECK(cairn_tensor_rank(t) == 2);
  CHECK(cairn_tensor_dim(t, 0) == 2 && cairn_tensor_dim(t, 1) == 3);
  CHECK(cairn_tensor_dim(t, 2) == -1);
  CHECK(cairn_tensor_num_elements(t) == 6);
  CHECK(cairn_tensor_nbytes(t) == 48);
  CHECK(strcmp(cairn_tensor_device(t), "cpu") == 0);
  CHECK_ERR(cairn_tensor_read(t, back, 8), CAIRN_INVALID_ARGUMENT, "nbytes is 8 but the float64[2,3] on cpu tensor holds 48");
  CHECK_ERR(cairn_tensor_read(NULL, back, 8), CAIRN_INVALID_ARGUMENT, "cairn_tensor_read: tensor is NULL");
  CHECK_ERR(cairn_tensor_read(t, NULL, 48), CAIRN_INVALID_ARGUMENT, "dst is NULL");
  CHECK_OK(cairn_tensor_read(t, back, sizeof back));
  CHECK(memcmp(back, d, sizeof d) == 0);
  cairn_tensor_free(t);

  /* scalars, empty tensors and bools */
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT64, NULL, 0, d, 8, &t));
  CHECK(cairn_tensor_rank(t) == 0 && cairn_tensor_num_elements(t) == 1);
  cairn_tensor_free(t);
  shape[0] = 0;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, NULL, 0, &t));
  CHECK(cairn_tensor_num_elements(t) == 0);
  CHECK_OK(cairn_tensor_read(t, NULL, 0));
  cairn_tensor_free(t);
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_BOOL, &three, 1, flags, 3, &t));
  CHECK(cairn_tensor_nbytes(t) == 3);
  cairn_tensor_free(t);
  cairn_context_free(ctx);
}

static void test_copy_to_device(void) {
  cairn_context *ctx = new_context();
  float v[2] = {1, 2};
  int64_t shape[1] = {2};
  cairn_tensor *t = f32(ctx, v, shape, 1), *c = NULL;
  float r[2];
  CHECK_OK(cairn_tensor_copy_to_device(ctx, t, "cpu", &c));
  CHECK_OK(cairn_tensor_read(c, r, sizeof r));
  CHECK(r[1] == 2.0f);
  cairn_tensor_free(c);
  c = NULL;
  CHECK_ERR(cairn_tensor_copy_to_device(ctx, t, "gpu:7", &c), CAIRN_NOT_FOUND, "device \"gpu:7\"");
  CHECK(c == NULL);
  CHECK_ERR(cairn_tensor_copy_to_device(ctx, t, NULL, &c), CAIRN_INVALID_ARGUMENT, "device is NULL");
  cairn_tensor_free(t);
  cairn_context_free(ctx);
}

static void test_op_run_and_errors(void) {
  cairn_context *ctx = new_context();
  float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30}, cv[4] = {1, 2, 3, 4};
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4}, s32[2] = {3, 2};
  cairn_tensor *a = f32(ctx, av, s23, 2), *b = f32(ctx, bv, s3, 1), *c = f32(ctx, cv, s4, 1);
  cairn_tensor *m = f32(ctx, av, s32, 2);
  cairn_tensor *out = NULL, *outs[2] = {NULL, NULL};
  cairn_tensor *ins[2];
  cairn_tensor *i32 = NULL;
  int32_t iv[3] = {1, 2, 3};
  float r[6];
  cairn_attr attr;

  ins[0] = a;
  ins[1] = b;
  CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1));
  CHECK_OK(cairn_tensor_read(out, r, sizeof r));
  CHECK(r[0] == 11 && r[5] == 36);
  cairn_tensor_free(out);
  out = NULL;

  ins[1] = c;
  CHECK_ERR(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT,
            "Add: incompatible shapes [2,3] and [4]");
  CHECK(out == NULL);
  CHECK_ERR(cairn_op_run(ctx, "Add", ins, 1, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT, "Add: expected 2 inputs, got 1");
  ins[1] = b;
  CHECK_ERR(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, outs, 2), CAIRN_INVALID_ARGUMENT, "Add: expected 1 output");
  CHECK(outs[0] == NULL && outs[1] == NULL);
  CHECK_ERR(cairn_op_run(ctx, "Frobnicate", ins, 2, NULL, 0, &out, 1), CAIRN_NOT_FOUND, "unknown op 'Frobnicate'");
  CHECK_ERR(cairn_op_run(ctx, NULL, ins, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT, "cairn_op_run: op is NULL");
  CHECK_ERR(cairn_op_run(NULL, "Add", ins, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT, "cairn_op_run: ctx is NULL");
  CHECK_ERR(cairn_op_run(ctx, "Add", NULL, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT, "Add: inputs is NULL");
  CHECK_ERR(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, NULL, 1), CAIRN_INVALID_ARGUMENT, "Add: outputs is NULL");
  ins[1] = NULL;
  CHECK_ERR(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT, "Add: input 1 is NULL");

  CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT32, s3, 1, iv, sizeof iv, &i32));
  ins[1] = i32;
  CHECK_ERR(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT,
            "Add: input 'y' has dtype int32 but 'x' has float32");

  /* attributes: unknown, mistyped, bad bool, NULL name, and a working transpose */
  memset(&attr, 0, sizeof attr);
  attr.name = "transpose_q";
  attr.kind = CAIRN_ATTR_BOOL;
  attr.i = 1;
  ins[0] = a;
  ins[1] = a;
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT,
            "MatMul: unknown attribute 'transpose_q'");
  attr.name = "transpose_b";
  attr.kind = CAIRN_ATTR_FLOAT;
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT,
            "MatMul: attribute 'transpose_b' must be BOOL, got FLOAT");
  attr.kind = CAIRN_ATTR_BOOL;
  attr.i = 2;
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT, "expected 0 or 1");
  attr.kind = (cairn_attr_kind)42;
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT, "unknown kind 42");
  attr.name = NULL;
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT, "attribute 0 has a NULL name");
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, NULL, 1, &out, 1), CAIRN_INVALID_ARGUMENT, "MatMul: attrs is NULL");
  CHECK_ERR(cairn_op_run(ctx, "MatMul", ins, 2, NULL, 0, &out, 1), CAIRN_INVALID_ARGUMENT,
            "MatMul: inner dimensions do not match: [2,3] and [2,3]");
  attr.name = "transpose_b";
  attr.kind = CAIRN_ATTR_BOOL;
  attr.i = 1;
  CHECK_OK(cairn_op_run(ctx, "MatMul", ins, 2, &attr, 1, &out, 1));
  CHECK(cairn_tensor_dim(out, 0) == 2 && cairn_tensor_dim(out, 1) == 2);
  {
    float p[4];
    CHECK_OK(cairn_tensor_read(out, p, sizeof p));
    CHECK(p[0] == 14 && p[1] == 32 && p[2] == 32 && p[3] == 77);
  }
  cairn_tensor_free(out);
  ins[1] = m;
  CHECK_OK(cairn_op_run(ctx, "MatMul", ins, 2, NULL, 0, &out, 1));
  CHECK(cairn_tensor_dim(out, 0) == 2 && cairn_tensor_dim(out, 1) == 2);
  cairn_tensor_free(out);

  /* an out-of-range axis names the op, the axis and the rank */
  {
    int64_t axis = 5;
    memset(&attr, 0, sizeof attr);
    attr.name = "axis";
    attr.kind = CAIRN_ATTR_INTS;
    attr.ints = &axis;
    attr.n_ints = 1;
    CHECK_ERR(cairn_op_run(ctx, "Sum", ins, 1, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT,
              "Sum: axis 5 is out of range for rank 2");
    attr.ints = NULL;
    CHECK_ERR(cairn_op_run(ctx, "Sum", ins, 1, &attr, 1, &out, 1), CAIRN_INVALID_ARGUMENT, "NULL array");
  }

  cairn_tensor_free(a);
  cairn_tensor_free(b);
  cairn_tensor_free(c);
  cairn_tensor_free(m);
  cairn_tensor_free(i32);
  cairn_context_free(ctx);
}

static void test_num_outputs_and_bools(void) {
  size_t n = 99;
  cairn_attr split;
  cairn_context *ctx = new_context();
  cairn_tensor *t = NULL;
  uint8_t in[4] = {0, 1, 2, 255}, back[4];
  int64_t four = 4;
  memset(&split, 0, sizeof split);
  split.name = "num_split";
  split.kind = CAIRN_ATTR_INT;
  split.i = 3;
  CHECK_OK(cairn_op_num_outputs("Add", NULL, 0, &n));
  CHECK(n == 1);
  CHECK_OK(cairn_op_num_outputs("Split", &split, 1, &n));
  CHECK(n == 3);
  CHECK_ERR(cairn_op_num_outputs("Split", NULL, 0, &n), CAIRN_INVALID_ARGUMENT, "Split: missing required attribute 'num_split'");
  split.kind = CAIRN_ATTR_FLOAT;
  CHECK_ERR(cairn_op_num_outputs("Split", &split, 1, &n), CAIRN_INVALID_ARGUMENT, "'num_split' must be INT");
  CHECK_ERR(cairn_op_num_outputs("Nope", NULL, 0, &n), CAIRN_NOT_FOUND, "unknown op 'Nope'");
  CHECK_ERR(cairn_op_num_outputs("Add", NULL, 0, NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
  /* bool bytes are normalized to 0/1 */
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_BOOL, &four, 1, in, sizeof in, &t));
  CHECK_OK(cairn_tensor_read(t, back, sizeof back));
  CHECK(back[0] == 0 && back[1] == 1 && back[2] == 1 && back[3] == 1);
  cairn_tensor_free(t);
  cairn_context_free(ctx);
}

static void test_registry_listing(void) {
  size_t n = cairn_op_count(), i;
  char *json = NULL;
  CHECK(n >= 10);
  for (i = 1; i < n; ++i) CHECK(strcmp(cairn_op_name(i - 1), cairn_op_name(i)) < 0);
  CHECK(cairn_op_name(n) == NULL);
  CHECK_ERR(cairn_op_registry_json(NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
  CHECK_OK(cairn_op_registry_json(&json));
  CHECK(json != NULL && json[0] == '[');
  CHECK(strstr(json, "{\"name\":\"MatMul\"") != NULL);
  CHECK(strstr(json, "{\"name\":\"transpose_a\",\"kind\":\"BOOL\",\"default\":false}") != NULL);
  cairn_free(json);
}

int main(void) {
  test_versions_and_status();
  test_context_options();
  test_log_callback();
  test_allocator_hooks_and_free_order();
  test_tensor_create_and_read();
  test_copy_to_device();
  test_op_run_and_errors();
  test_num_outputs_and_bools();
  test_registry_listing();
  TEST_MAIN_END();
}
