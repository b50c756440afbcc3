/* The C side of the cross-language checkpoint test (tests/xlang/SPEC.md). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cairn/cairn.h"

static int g_failed = 0;

static void ok(cairn_status *s, const char *what) {
  if (!s) return;
  fprintf(stderr, "xlang_c: %s: %s\n", what, cairn_status_message(s));
  cairn_status_free(s);
  g_failed = 1;
}

static cairn_object *var(cairn_context *ctx, cairn_dtype dt, const int64_t *shape, size_t rank, const void *data,
                         size_t nbytes, const char *name, cairn_object *scope) {
  cairn_tensor *t = NULL;
  cairn_object *v = NULL;
  cairn_variable_options o = CAIRN_VARIABLE_OPTIONS_INIT;
  o.name = name;
  o.scope = scope;
  ok(cairn_tensor_create(ctx, dt, shape, rank, data, nbytes, &t), name);
  ok(cairn_variable_create(ctx, t, &o, &v), name);
  cairn_tensor_free(t);
  return v;
}

static void set(cairn_object *parent, const char *name, cairn_object *child) {
  ok(cairn_object_set(parent, name, child), name);
}

/* Builds the state; `zero` gives every variable zeros of the same dtype and shape. */
static cairn_checkpoint *build(cairn_context *ctx, int zero, cairn_object **vars) {
  const float w[6] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  const int64_t b[3] = {-1, 0, 9000000000LL};
  const double k[2] = {0.25, -0.125};
  const uint8_t flag[4] = {1, 0, 0, 1};
  const uint16_t half = 0x3C00;
  const char zeros[64] = {0};
  const int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2}, s4[1] = {4};
  cairn_object *m = NULL, *layers = NULL, *l0 = NULL, *l1 = NULL, *table = NULL;
  cairn_checkpoint *ckpt = NULL;
  const char *names[3] = {"model", "layers", "table"};
  cairn_object *objs[3];

  ok(cairn_module_create(ctx, "net", &m), "module");
  vars[0] = var(ctx, CAIRN_FLOAT32, s23, 2, zero ? zeros : (const void *)w, sizeof w, "w", m);
  set(m, "w", vars[0]);
  vars[1] = var(ctx, CAIRN_INT64, s3, 1, zero ? zeros : (const void *)b, sizeof b, "b", m);
  set(m, "b", vars[1]);
  ok(cairn_list_create(ctx, &layers), "list");
  ok(cairn_trackable_create(ctx, &l0), "l0");
  vars[2] = var(ctx, CAIRN_FLOAT64, s2, 1, zero ? zeros : (const void *)k, sizeof k, "k", NULL);
  set(l0, "k", vars[2]);
  ok(cairn_list_append(layers, l0), "append l0");
  ok(cairn_trackable_create(ctx, &l1), "l1");
  vars[3] = var(ctx, CAIRN_BOOL, s4, 1, zero ? zeros : (const void *)flag, sizeof flag, "flag", NULL);
  set(l1, "flag", vars[3]);
  ok(cairn_list_append(layers, l1), "append l1");
  ok(cairn_dict_create(ctx, &table), "dict");
  vars[4] = var(ctx, CAIRN_FLOAT16, NULL, 0, zero ? zeros : (const void *)&half, sizeof half, "half", NULL);
  set(table, "half", vars[4]);
  set(table, "shared", l0);
  objs[0] = m;
  objs[1] = layers;
  objs[2] = table;
  ok(cairn_checkpoint_create(ctx, names, objs, 3, &ckpt), "checkpoint");
  cairn_object_free(m);
  cairn_object_free(layers);
  cairn_object_free(l0);
  cairn_object_free(l1);
  cairn_object_free(table);
  return ckpt;
}

static void expect_bytes(cairn_object *v, const void *want, size_t n, const char *name) {
  cairn_tensor *t = NULL;
  unsigned char got[64];
  ok(cairn_variable_read(v, &t), name);
  if (!t || cairn_tensor_nbytes(t) != n) {
    fprintf(stderr, "xlang_c: %s has the wrong size\n", name);
    g_failed = 1;
  } else {
    ok(cairn_tensor_read(t, got, n), name);
    if (memcmp(got, want, n) != 0) {
      fprintf(stderr, "xlang_c: %s has the wrong value\n", name);
      g_failed = 1;
    }
  }
  cairn_tensor_free(t);
}

int main(int argc, char **argv) {
  cairn_context *ctx = NULL;
  cairn_checkpoint *ckpt;
  cairn_object *vars[5];
  int i, restore;
  if (argc != 3 || (strcmp(argv[1], "save") != 0 && strcmp(argv[1], "restore") != 0)) {
    fprintf(stderr, "usage: xlang_c save|restore PATH\n");
    return 2;
  }
  restore = strcmp(argv[1], "restore") == 0;
  ok(cairn_context_create(NULL, &ctx), "context");
  ckpt = build(ctx, restore, vars);
  if (!restore) {
    ok(cairn_checkpoint_write(ckpt, argv[2]), "write");
  } else {
    const float w[6] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
    const int64_t b[3] = {-1, 0, 9000000000LL};
    const double k[2] = {0.25, -0.125};
    const uint8_t flag[4] = {1, 0, 0, 1};
    const uint16_t half = 0x3C00;
    cairn_restore_status *rs = NULL;
    ok(cairn_checkpoint_restore(ckpt, argv[2], &rs), "restore");
    ok(cairn_restore_status_assert_consumed(rs), "assert_consumed");
    cairn_restore_status_free(rs);
    expect_bytes(vars[0], w, sizeof w, "model/w");
    expect_bytes(vars[1], b, sizeof b, "model/b");
    expect_bytes(vars[2], k, sizeof k, "layers/0/k");
    expect_bytes(vars[3], flag, sizeof flag, "layers/1/flag");
    expect_bytes(vars[4], &half, sizeof half, "table/half");
    if (!g_failed) printf("xlang restore ok\n");
  }
  for (i = 0; i < 5; ++i) cairn_object_free(vars[i]);
  cairn_checkpoint_free(ckpt);
  cairn_context_free(ctx);
  return g_failed;
}
