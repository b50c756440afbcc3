/* Device placement in the C API: device scopes (nesting, per thread, errors), ops, tensors and
 * variables inside scopes, soft placement on and off with its copy counter and debug log line.
 * The Vulkan cases run where a driver exists (lavapipe in CI) and are skipped otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static cairn_context *new_context(cairn_log_fn log_fn, void *log_user_data) {
  cairn_context *ctx = NULL;
  cairn_context_options o = CAIRN_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  if (log_fn) {
    o.log_fn = log_fn;
    o.log_user_data = log_user_data;
    o.log_level = CAIRN_LOG_DEBUG;
  }
  CHECK_OK(cairn_context_create(&o, &ctx));
  return ctx;
}

static cairn_tensor *vec2(cairn_context *ctx, float a, float b) {
  float v[2];
  int64_t shape[1] = {2};
  cairn_tensor *t = NULL;
  v[0] = a;
  v[1] = b;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &t));
  return t;
}

/* The first output of `op` on inputs a (and b when not NULL); NULL on an error (status in *st). */
static cairn_tensor *binary(cairn_context *ctx, const char *op, cairn_tensor *a, cairn_tensor *b, cairn_status **st) {
  cairn_tensor *ins[2];
  cairn_tensor *out = NULL;
  ins[0] = a;
  ins[1] = b;
  *st = cairn_op_run(ctx, op, ins, b ? 2 : 1, NULL, 0, &out, 1);
  return out;
}

/* Range(0, 3): an op without inputs. */
static cairn_tensor *range3(cairn_context *ctx) {
  cairn_attr attrs[2];
  cairn_tensor *out = NULL;
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = "start";
  attrs[0].kind = CAIRN_ATTR_FLOAT;
  attrs[0].f = 0;
  attrs[1].name = "limit";
  attrs[1].kind = CAIRN_ATTR_FLOAT;
  attrs[1].f = 3;
  CHECK_OK(cairn_op_run(ctx, "Range", NULL, 0, attrs, 2, &out, 1));
  return out;
}

static int device_is(const cairn_tensor *t, const char *name) {
  return t != NULL && strcmp(cairn_tensor_device(t), name) == 0;
}

static int scope_is(const cairn_context *ctx, const char *name) {
  const char *current = "unset";
  CHECK_OK(cairn_device_scope_current(ctx, &current));
  if (name == NULL) return current == NULL;
  return current != NULL && strcmp(current, name) == 0;
}

/* Runs Add(a, b) and checks where it ran, its values and the context's copy count. */
static void check_add(cairn_context *ctx, cairn_tensor *a, cairn_tensor *b, const char *device, float want0,
                      float want1, uint64_t want_copies) {
  cairn_status *st = NULL;
  uint64_t copies = 99;
  float got[2] = {0, 0};
  cairn_tensor *sum = binary(ctx, "Add", a, b, &st);
  CHECK_OK(st);
  CHECK(device_is(sum, device));
  CHECK_OK(cairn_context_auto_copies(ctx, &copies));
  CHECK(copies == want_copies);
  if (sum) CHECK_OK(cairn_tensor_read(sum, got, sizeof got));
  CHECK(got[0] == want0 && got[1] == want1);
  cairn_tensor_free(sum);
}

/* ---- scopes ---- */

static void test_nesting_and_errors(void) {
  cairn_context *ctx = new_context(NULL, NULL);
  const char *name = NULL;
  cairn_tensor *r;
  CHECK(scope_is(ctx, NULL));
  CHECK_OK(cairn_device_scope_enter(ctx, "cpu"));
  CHECK(scope_is(ctx, "cpu"));
  CHECK_OK(cairn_device_scope_enter(ctx, "cpu:0"));
  CHECK(scope_is(ctx, "cpu"));
  r = range3(ctx);
  CHECK(device_is(r, "cpu"));
  cairn_tensor_free(r);
  CHECK_OK(cairn_device_scope_exit(ctx));
  CHECK(scope_is(ctx, "cpu"));
  CHECK_OK(cairn_device_scope_exit(ctx));
  CHECK(scope_is(ctx, NULL));
  CHECK_ERR(cairn_device_scope_exit(ctx), CAIRN_FAILED_PRECONDITION, "cairn_device_scope_exit: no device scope");

  CHECK_ERR(cairn_device_scope_enter(ctx, "tpu:9"), CAIRN_NOT_FOUND, "\"tpu:9\"");
  CHECK_ERR(cairn_device_scope_enter(ctx, "tpu:9"), CAIRN_NOT_FOUND, "cairn_device_scope_enter: device scope");
  CHECK(scope_is(ctx, NULL));

  CHECK_ERR(cairn_device_scope_enter(NULL, "cpu"), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_ERR(cairn_device_scope_enter(ctx, NULL), CAIRN_INVALID_ARGUMENT, "device is NULL");
  CHECK_ERR(cairn_device_scope_exit(NULL), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_ERR(cairn_device_scope_current(NULL, &name), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_ERR(cairn_device_scope_current(ctx, NULL), CAIRN_INVALID_ARGUMENT, "name is NULL");
  cairn_context_free(ctx);
}

struct thread_probe {
  cairn_context *ctx;
  int saw_no_scope;
  int exit_refused;
};

static void *probe_thread(void *arg) {
  struct thread_probe *p = (struct thread_probe *)arg;
  const char *name = "unset";
  cairn_status *st = cairn_device_scope_current(p->ctx, &name);
  p->saw_no_scope = st == NULL && name == NULL;
  cairn_status_free(st);
  st = cairn_device_scope_exit(p->ctx);
  p->exit_refused = cairn_status_code(st) == CAIRN_FAILED_PRECONDITION;
  cairn_status_free(st);
  /* Left open: the scope goes when the thread ends. */
  st = cairn_device_scope_enter(p->ctx, "cpu");
  cairn_status_free(st);
  return NULL;
}

static void test_scopes_are_per_thread_and_per_context(void) {
  cairn_context *ctx = new_context(NULL, NULL);
  cairn_context *other = new_context(NULL, NULL);
  struct thread_probe probe;
  pthread_t t;
  probe.ctx = ctx;
  probe.saw_no_scope = 0;
  probe.exit_refused = 0;
  CHECK_OK(cairn_device_scope_enter(ctx, "cpu"));
  CHECK(scope_is(other, NULL));
  CHECK(pthread_create(&t, NULL, probe_thread, &probe) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(probe.saw_no_scope);
  CHECK(probe.exit_refused);
  CHECK(scope_is(ctx, "cpu"));
  CHECK_ERR(cairn_device_scope_exit(other), CAIRN_FAILED_PRECONDITION, "no device scope");
  CHECK_OK(cairn_device_scope_exit(ctx));
  cairn_context_free(other);
  cairn_context_free(ctx);
}

/* ---- soft placement ---- */

struct log_lines {
  int copies_logged;
  char last[256];
};

static void collect_log(void *user_data, cairn_log_level level, const char *message) {
  struct log_lines *l = (struct log_lines *)user_data;
  if (level == CAIRN_LOG_DEBUG && strstr(message, "(soft placement)") != NULL) {
    ++l->copies_logged;
    strncpy(l->last, message, sizeof l->last - 1);
  }
}

static void test_soft_placement_on_cpu(void) {
  struct log_lines log;
  cairn_context *ctx;
  cairn_context *other = new_context(NULL, NULL);
  cairn_tensor *a, *b, *b_elsewhere = NULL, *sum;
  cairn_status *st = NULL;
  cairn_bool on = CAIRN_TRUE;
  uint64_t copies = 99;
  memset(&log, 0, sizeof log);
  ctx = new_context(collect_log, &log);
  a = vec2(ctx, 1, 2);
  b = vec2(other, 10, 20);
  /* Another context's CPU is another device: the stand-in for a second device without a GPU. */
  CHECK_OK(cairn_tensor_copy_to_device(other, b, "cpu", &b_elsewhere));

  CHECK_OK(cairn_context_soft_placement(ctx, &on));
  CHECK(on == CAIRN_FALSE);
  sum = binary(ctx, "Add", a, b_elsewhere, &st);
  CHECK(sum == NULL);
  CHECK_ERR(st, CAIRN_INVALID_ARGUMENT, "Add: inputs are on different devices");

  CHECK_OK(cairn_context_set_soft_placement(ctx, CAIRN_TRUE));
  CHECK_OK(cairn_context_soft_placement(ctx, &on));
  CHECK(on == CAIRN_TRUE);
  check_add(ctx, a, b_elsewhere, "cpu", 11, 22, 1);
  CHECK(log.copies_logged == 1);
  CHECK(strcmp(log.last, "Add: copied input 1 from cpu to cpu (soft placement)") == 0);
  /* Inputs already together: no copy. */
  check_add(ctx, a, a, "cpu", 2, 4, 1);

  CHECK_ERR(cairn_context_set_soft_placement(ctx, 2), CAIRN_INVALID_ARGUMENT, "on must be 0 or 1");
  CHECK_ERR(cairn_context_set_soft_placement(NULL, CAIRN_TRUE), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_ERR(cairn_context_soft_placement(ctx, NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
  CHECK_ERR(cairn_context_auto_copies(NULL, &copies), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_OK(cairn_context_set_soft_placement(ctx, CAIRN_FALSE));

  cairn_tensor_free(a);
  cairn_tensor_free(b);
  cairn_tensor_free(b_elsewhere);
  cairn_context_free(other);
  cairn_context_free(ctx);
}

/* ---- Vulkan ---- */

static void test_vulkan_scope(void) {
  cairn_context *ctx = new_context(NULL, NULL);
  cairn_tensor *host, *in_scope, *r, *x;
  cairn_object *var = NULL;
  cairn_tensor *value = NULL;
  cairn_status *st = NULL;
  host = vec2(ctx, 1, 2);
  CHECK_OK(cairn_device_scope_enter(ctx, "vulkan:0"));
  CHECK(scope_is(ctx, "vulkan:0"));
  r = range3(ctx);
  CHECK(device_is(r, "vulkan:0"));
  in_scope = vec2(ctx, 3, 4);
  CHECK(device_is(in_scope, "vulkan:0"));
  /* Variables live on the scope's device, their initial value copied there. */
  CHECK_OK(cairn_variable_create(ctx, host, NULL, &var));
  CHECK_OK(cairn_variable_read(var, &value));
  CHECK(device_is(value, "vulkan:0"));
  /* Soft placement off: an op runs where its inputs are; mixing devices is an error. */
  x = binary(ctx, "Neg", host, NULL, &st);
  CHECK_OK(st);
  CHECK(device_is(x, "cpu"));
  cairn_tensor_free(x);
  x = binary(ctx, "Add", host, in_scope, &st);
  CHECK(x == NULL);
  CHECK_ERR(st, CAIRN_INVALID_ARGUMENT, "(cpu and vulkan:0)");
  /* Soft placement on: the op runs on the scope's device, each CPU input copied (counted). */
  CHECK_OK(cairn_context_set_soft_placement(ctx, CAIRN_TRUE));
  check_add(ctx, host, host, "vulkan:0", 2, 4, 2);
  CHECK_OK(cairn_device_scope_exit(ctx));
  CHECK(scope_is(ctx, NULL));
  /* No scope: the first input's device wins. */
  check_add(ctx, host, in_scope, "cpu", 4, 6, 3);

  cairn_tensor_free(value);
  cairn_object_free(var);
  cairn_tensor_free(r);
  cairn_tensor_free(in_scope);
  cairn_tensor_free(host);
  cairn_context_free(ctx);
}

/* cairn_checkpoint_reader_load puts the tensor on the thread's scope device, else the default. */
static void test_reader_load_in_scope(const char *dir) {
  cairn_context *ctx = new_context(NULL, NULL);
  cairn_logical_device_config cfg[2] = {CAIRN_LOGICAL_DEVICE_CONFIG_INIT, CAIRN_LOGICAL_DEVICE_CONFIG_INIT};
  CHECK_OK(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, 2));
  cairn_tensor *init = vec2(ctx, 3, 4), *loaded = NULL;
  cairn_object *var = NULL;
  cairn_checkpoint *ck = NULL;
  cairn_checkpoint_reader *r = NULL;
  char prefix[512], *path = NULL;
  const char *names[1] = {"v"};
  snprintf(prefix, sizeof prefix, "%s/ckpt", dir);
  CHECK_OK(cairn_variable_create(ctx, init, NULL, &var));
  CHECK_OK(cairn_checkpoint_create(ctx, names, &var, 1, &ck));
  CHECK_OK(cairn_checkpoint_save(ck, prefix, &path));
  CHECK_OK(cairn_checkpoint_reader_open(path, &r));
  CHECK_OK(cairn_device_scope_enter(ctx, "cpu:1"));
  CHECK_OK(cairn_checkpoint_reader_load(r, ctx, "v/.ATTRIBUTES/VARIABLE_VALUE", &loaded));
  CHECK(device_is(loaded, "cpu:1"));
  cairn_tensor_free(loaded);
  loaded = NULL;
  CHECK_OK(cairn_device_scope_exit(ctx));
  CHECK_OK(cairn_checkpoint_reader_load(r, ctx, "v/.ATTRIBUTES/VARIABLE_VALUE", &loaded));
  CHECK(device_is(loaded, "cpu:0"));
  cairn_tensor_free(loaded);
  cairn_checkpoint_reader_free(r);
  cairn_free(path);
  cairn_checkpoint_free(ck);
  cairn_object_free(var);
  cairn_tensor_free(init);
  cairn_context_free(ctx);
}

int main(void) {
  test_nesting_and_errors();
  test_scopes_are_per_thread_and_per_context();
  test_soft_placement_on_cpu();
  {
    char dir[] = "/tmp/cairn_placement_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_reader_load_in_scope(dir);
  }
  if (cairn_vulkan_available()) {
    test_vulkan_scope();
  } else {
    fprintf(stderr, "no Vulkan driver: the Vulkan cases are skipped\n");
  }
  fprintf(stderr, "%d checks, %d failures\n", g_checks, g_failures);
  return g_failures != 0;
}
