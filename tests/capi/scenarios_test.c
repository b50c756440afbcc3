/* Conformance scenarios S1-S8 (../shared/design/SCENARIOS.md) against the C API, with the exact
 * listings. Each "round" builds fresh objects, as a new run of a program would. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static cairn_context *g_ctx;

/* ---- helpers ---- */

static char *make_dir(const char *name) {
  const char *base = getenv("TEST_TMPDIR");
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s-XXXXXX", base ? base : "/tmp", name);
  if (!mkdtemp(buf)) {
    perror("mkdtemp");
    exit(2);
  }
  return buf;
}

static cairn_tensor *scalar_i32(int32_t v) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_INT32, NULL, 0, &v, sizeof v, &t));
  return t;
}

static cairn_tensor *scalar_f32(float v) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_FLOAT32, NULL, 0, &v, sizeof v, &t));
  return t;
}

/* A variable from a scalar, consuming the tensor. */
static cairn_object *variable(cairn_tensor *initial, const char *name, cairn_object *scope) {
  cairn_object *v = NULL;
  cairn_variable_options opts = CAIRN_VARIABLE_OPTIONS_INIT;
  opts.name = name;
  opts.scope = scope;
  CHECK_OK(cairn_variable_create(g_ctx, initial, &opts, &v));
  cairn_tensor_free(initial);
  return v;
}

static cairn_object *trackable(void) {
  cairn_object *o = NULL;
  CHECK_OK(cairn_trackable_create(g_ctx, &o));
  return o;
}

/* Sets parent.name = child (tracked) and drops the caller's reference to child. */
static void set_child(cairn_object *parent, const char *name, cairn_object *child) {
  CHECK_OK(cairn_object_set(parent, name, child));
  cairn_object_free(child);
}

static cairn_object *get(cairn_object *parent, const char *path) {
  /* Follows "a/b/c" one edge at a time. */
  char buf[256];
  char *part, *save = NULL;
  cairn_object *cur = NULL, *next = NULL;
  strncpy(buf, path, sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  cur = NULL;
  for (part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
    CHECK_OK(cairn_object_get(cur ? cur : parent, part, &next));
    if (cur) cairn_object_free(cur);
    cur = next;
    if (!cur) return NULL;
  }
  return cur;
}

static double read_scalar(cairn_object *var) {
  cairn_tensor *t = NULL;
  double out = 0;
  CHECK_OK(cairn_variable_read(var, &t));
  if (!t) return -999;
  if (cairn_tensor_dtype(t) == CAIRN_INT32) {
    int32_t v = 0;
    CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
    out = v;
  } else if (cairn_tensor_dtype(t) == CAIRN_FLOAT32) {
    float v = 0;
    CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
    out = v;
  }
  cairn_tensor_free(t);
  return out;
}

static double read_path(cairn_object *root, const char *path) {
  cairn_object *v = get(root, path);
  double out = v ? read_scalar(v) : -999;
  cairn_object_free(v);
  return out;
}

static void add_i32(cairn_object *var, int32_t delta) {
  cairn_tensor *d = scalar_i32(delta);
  CHECK_OK(cairn_variable_assign_add(var, d));
  cairn_tensor_free(d);
}

static void add_path_i32(cairn_object *root, const char *path, int32_t delta) {
  cairn_object *v = get(root, path);
  if (v) add_i32(v, delta);
  cairn_object_free(v);
}

/* Restores the manager's latest checkpoint (NULL: nothing) and frees the status. */
static void restore_latest(cairn_checkpoint *ckpt, cairn_checkpoint_manager *m) {
  cairn_restore_status *rs = NULL;
  CHECK_OK(cairn_checkpoint_restore(ckpt, cairn_checkpoint_manager_latest(m), &rs));
  cairn_restore_status_free(rs);
}

static const char *basename_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path;
}

/* Expects the manager to list exactly `names` (basenames, oldest first). */
static void check_manager_lists(cairn_checkpoint_manager *m, const char *const *names, size_t n) {
  size_t i;
  CHECK(cairn_checkpoint_manager_count(m) == n);
  for (i = 0; i < n && i < cairn_checkpoint_manager_count(m); ++i)
    CHECK(strcmp(basename_of(cairn_checkpoint_manager_path(m, i)), names[i]) == 0);
}

typedef struct {
  const char *key;
  cairn_dtype dtype;
  size_t rank;
} listing_row;

/* Expects the checkpoint at `path` to hold exactly `rows` (sorted keys, dtypes, ranks). */
static void check_listing(const char *path, const listing_row *rows, size_t n) {
  cairn_checkpoint_reader *r = NULL;
  size_t i;
  CHECK_OK(cairn_checkpoint_reader_open(path, &r));
  if (!r) return;
  CHECK(cairn_checkpoint_reader_count(r) == n);
  for (i = 0; i < n && i < cairn_checkpoint_reader_count(r); ++i) {
    const char *key = cairn_checkpoint_reader_key(r, i);
    if (strcmp(key, rows[i].key) != 0) fprintf(stderr, "  listing row %zu: got %s, want %s\n", i, key, rows[i].key);
    CHECK(strcmp(key, rows[i].key) == 0);
    if (rows[i].dtype != CAIRN_INVALID_DTYPE) CHECK(cairn_checkpoint_reader_dtype(r, i) == rows[i].dtype);
    CHECK(cairn_checkpoint_reader_rank(r, i) == rows[i].rank);
  }
  cairn_checkpoint_reader_free(r);
}

static cairn_checkpoint *checkpoint1(const char *name, cairn_object *obj) {
  cairn_checkpoint *c = NULL;
  CHECK_OK(cairn_checkpoint_create(g_ctx, &name, &obj, 1, &c));
  return c;
}

static cairn_checkpoint_manager *manager(cairn_checkpoint *c, const char *dir, int64_t max_to_keep) {
  cairn_checkpoint_manager *m = NULL;
  cairn_checkpoint_manager_options o = CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT;
  o.max_to_keep = max_to_keep;
  CHECK_OK(cairn_checkpoint_manager_create(c, dir, &o, &m));
  return m;
}

static const listing_row kS2Listing[] = {
    {"_CHECKPOINTABLE_OBJECT_GRAPH", CAIRN_STRING, 0},
    {"save_counter/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT64, 0},
    {"tr2/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
};

/* ---- S1 ---- */
static void s1_manager_max_to_keep(void) {
  const char *dir = make_dir("s1");
  static const char *const after1[] = {"ckpt-1"}, *const after2[] = {"ckpt-1", "ckpt-2"},
                           *const after3[] = {"ckpt-2", "ckpt-3"};
  int round;
  char path1[4200];
  snprintf(path1, sizeof path1, "%s/ckpt-1", dir);
  for (round = 1; round <= 3; ++round) {
    cairn_object *tr1 = trackable();
    cairn_checkpoint *c;
    cairn_checkpoint_manager *m;
    set_child(tr1, "tr1_v", variable(scalar_i32(1), "tr1_v", NULL));
    c = checkpoint1("tr1", tr1);
    m = manager(c, dir, 2);
    if (round == 2) check_manager_lists(m, after1, 1);
    if (round == 3) check_manager_lists(m, after2, 2);
    restore_latest(c, m);
    CHECK(read_path(tr1, "tr1_v") == round); /* prints 1, 2, 3 */
    add_path_i32(tr1, "tr1_v", 1);
    CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
    if (round == 3) {
      struct stat st;
      check_manager_lists(m, after3, 2);
      CHECK(stat(path1, &st) != 0); /* ckpt-1 is gone from disk */
    }
    cairn_checkpoint_manager_free(m);
    cairn_checkpoint_free(c);
    cairn_object_free(tr1);
  }
}

/* ---- S2 and S3 ---- */
static cairn_object *make_tr2(void) {
  cairn_object *tr2 = trackable();
  cairn_object *untracked = variable(scalar_i32(0), "untracked", NULL);
  set_child(tr2, "v", variable(scalar_i32(1000), "v", NULL));
  CHECK_OK(cairn_object_set_untracked(tr2, "untracked", untracked));
  cairn_object_free(untracked);
  return tr2;
}

static void s2_s3_untracked_and_delete(void) {
  const char *dir = make_dir("s2");
  int round;
  for (round = 1; round <= 2; ++round) {
    cairn_object *tr2 = make_tr2();
    cairn_checkpoint *c = checkpoint1("tr2", tr2);
    cairn_checkpoint_manager *m = manager(c, dir, 5);
    restore_latest(c, m);
    CHECK(read_path(tr2, "v") == 1000 * round);
    CHECK(read_path(tr2, "untracked") == 0);
    add_path_i32(tr2, "v", 1000);
    CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
    check_listing(cairn_checkpoint_manager_latest(m), kS2Listing, 3);
    if (round == 2) {
      cairn_checkpoint_reader *r = NULL;
      cairn_tensor *t = NULL;
      int32_t v = 0;
      static const listing_row with_deleted[] = {
          {"_CHECKPOINTABLE_OBJECT_GRAPH", CAIRN_STRING, 0},
          {"save_counter/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT64, 0},
          {"tr2/deleted/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
          {"tr2/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
      };
      CHECK_OK(cairn_checkpoint_reader_open(cairn_checkpoint_manager_latest(m), &r));
      CHECK_OK(cairn_checkpoint_reader_load(r, g_ctx, "tr2/v/.ATTRIBUTES/VARIABLE_VALUE", &t));
      CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
      CHECK(v == 3000);
      cairn_tensor_free(t);
      CHECK_ERR(cairn_checkpoint_reader_load(r, g_ctx, "tr2/untracked/.ATTRIBUTES/VARIABLE_VALUE", &t),
                CAIRN_NOT_FOUND, "no key named 'tr2/untracked/.ATTRIBUTES/VARIABLE_VALUE'");
      CHECK(t == NULL);
      cairn_checkpoint_reader_free(r);
      /* S3: an edge added, saved, deleted, saved again. */
      set_child(tr2, "deleted", variable(scalar_i32(-1), "deleted", NULL));
      CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
      check_listing(cairn_checkpoint_manager_latest(m), with_deleted, 4);
      CHECK_OK(cairn_object_delete(tr2, "deleted"));
      CHECK_ERR(cairn_object_delete(tr2, "deleted"), CAIRN_NOT_FOUND, "deleted");
      CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
      check_listing(cairn_checkpoint_manager_latest(m), kS2Listing, 3);
    }
    cairn_checkpoint_manager_free(m);
    cairn_checkpoint_free(c);
    cairn_object_free(tr2);
  }
}

/* ---- S4 and S5 ---- */
static const listing_row kS4Listing[] = {
    {"_CHECKPOINTABLE_OBJECT_GRAPH", CAIRN_STRING, 0},
    {"save_counter/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT64, 0},
    {"tr3/br_dict/br3/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
    {"tr3/br_list/0/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
    {"tr3/br_list/1/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
};

static cairn_object *branch(void) {
  cairn_object *br = trackable();
  set_child(br, "v", variable(scalar_i32(5), "v", NULL));
  return br;
}

static void s4_s5_containers_and_sharing(void) {
  const char *dir = make_dir("s4");
  cairn_object *tr3 = trackable(), *br1 = branch(), *br2 = branch(), *br3 = branch();
  cairn_object *list = NULL, *dict = NULL;
  cairn_checkpoint *c, *c2;
  cairn_checkpoint_manager *m;
  cairn_restore_status *rs = NULL;
  const char *paths[6] = {"br_list/0/v", "br_list/1/v", "br_dict/br3/v", "br_dict/br1/v", "br_dict/br2/v", NULL};
  int i;

  CHECK_OK(cairn_list_create(g_ctx, &list));
  CHECK_OK(cairn_list_append(list, br1));
  CHECK_OK(cairn_list_append(list, br2));
  set_child(tr3, "br_list", list);
  CHECK_OK(cairn_dict_create(g_ctx, &dict));
  CHECK_OK(cairn_object_set(dict, "br3", br3));
  set_child(tr3, "br_dict", dict);
  c = checkpoint1("tr3", tr3);
  m = manager(c, dir, 5);
  CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
  check_listing(cairn_checkpoint_manager_latest(m), kS4Listing, 5);

  /* S5: a dict that shares br1 and br2 with the list. */
  CHECK_OK(cairn_dict_create(g_ctx, &dict));
  CHECK_OK(cairn_object_set(dict, "br1", br1));
  CHECK_OK(cairn_object_set(dict, "br2", br2));
  CHECK_OK(cairn_object_set(dict, "br3", br3));
  set_child(tr3, "br_dict", dict);
  CHECK_OK(cairn_checkpoint_restore(c, cairn_checkpoint_manager_latest(m), &rs));
  CHECK_OK(cairn_restore_status_assert_consumed(rs));
  cairn_restore_status_free(rs);
  add_path_i32(br1, "v", 5);
  add_path_i32(br2, "v", 5);
  add_path_i32(br3, "v", 5);
  CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
  check_listing(cairn_checkpoint_manager_latest(m), kS4Listing, 5);
  add_path_i32(br1, "v", -10);
  add_path_i32(br2, "v", -10);
  add_path_i32(br3, "v", -10);
  for (i = 0; paths[i]; ++i) CHECK(read_path(tr3, paths[i]) == 0);
  c2 = checkpoint1("tr3", tr3);
  CHECK_OK(cairn_checkpoint_restore(c2, cairn_checkpoint_manager_latest(m), &rs));
  cairn_restore_status_free(rs);
  for (i = 0; paths[i]; ++i) CHECK(read_path(tr3, paths[i]) == 10);
  cairn_checkpoint_free(c2);
  cairn_checkpoint_manager_free(m);
  cairn_checkpoint_free(c);
  cairn_object_free(br1);
  cairn_object_free(br2);
  cairn_object_free(br3);
  cairn_object_free(tr3);
}

/* ---- S6 ---- */
static cairn_object *module_with_var(const char *name) {
  cairn_object *mod = NULL;
  CHECK_OK(cairn_module_create(g_ctx, name, &mod));
  set_child(mod, "v", variable(scalar_i32(7), "m_v", mod));
  return mod;
}

static void s6_modules(void) {
  const char *dir = make_dir("s6");
  cairn_object *m1 = module_with_var("m1"), *m2 = module_with_var("m2"), *m3 = module_with_var("m3");
  cairn_object_array *vars = NULL, *subs = NULL;
  cairn_checkpoint *c;
  cairn_restore_status *rs = NULL;
  char path[4200];
  static const char *const var_names[] = {"m1/m_v:0", "m2/m_v:0", "m3/m_v:0"};
  static const listing_row listing[] = {
      {"_CHECKPOINTABLE_OBJECT_GRAPH", CAIRN_STRING, 0},
      {"module/sub/sub/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
      {"module/sub/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
      {"module/v/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT32, 0},
      {"save_counter/.ATTRIBUTES/VARIABLE_VALUE", CAIRN_INT64, 0},
  };
  size_t i;

  CHECK_OK(cairn_object_set(m1, "sub", m2));
  CHECK_OK(cairn_object_set(m2, "sub", m3));
  CHECK_OK(cairn_object_variables(m1, 0, &vars));
  CHECK(cairn_object_array_size(vars) == 3);
  for (i = 0; i < 3 && i < cairn_object_array_size(vars); ++i)
    CHECK(strcmp(cairn_variable_name(cairn_object_array_get(vars, i)), var_names[i]) == 0);
  cairn_object_array_free(vars);
  CHECK_OK(cairn_object_submodules(m1, &subs));
  CHECK(cairn_object_array_size(subs) == 2);
  if (cairn_object_array_size(subs) == 2) {
    cairn_object *s0 = cairn_object_array_get(subs, 0), *s1 = cairn_object_array_get(subs, 1);
    CHECK(strcmp(cairn_module_name(s0), "m2") == 0);
    CHECK(strcmp(cairn_module_name(s1), "m3") == 0);
  }
  cairn_object_array_free(subs);

  c = checkpoint1("module", m1);
  snprintf(path, sizeof path, "%s/modules", dir);
  CHECK_OK(cairn_checkpoint_write(c, path));
  check_listing(path, listing, 5);
  add_path_i32(m1, "v", 1);
  add_path_i32(m1, "sub/v", 2);
  add_path_i32(m1, "sub/sub/v", 3);
  CHECK_OK(cairn_checkpoint_restore(c, path, &rs));
  CHECK_OK(cairn_restore_status_assert_consumed(rs));
  cairn_restore_status_free(rs);
  CHECK(read_path(m1, "v") == 7 && read_path(m1, "sub/v") == 7 && read_path(m1, "sub/sub/v") == 7);
  cairn_checkpoint_free(c);
  cairn_object_free(m1);
  cairn_object_free(m2);
  cairn_object_free(m3);
}

/* ---- S7 ---- */
static void s7_deferred_restore(void) {
  const char *dir = make_dir("s7");
  char path[4200];
  cairn_checkpoint *c = NULL, *c2 = NULL;
  cairn_object *root, *listed = NULL, *mapped = NULL, *l0, *l1, *layer;
  cairn_object *v2, *v1, *kernel, *fake_layer, *new_list = NULL, *new_mapped = NULL;
  cairn_restore_status *rs = NULL;

  snprintf(path, sizeof path, "%s/deferred", dir);
  CHECK_OK(cairn_checkpoint_create(g_ctx, NULL, NULL, 0, &c));
  root = cairn_checkpoint_root(c);
  l0 = variable(scalar_f32(1.0f), "l0", NULL);
  l1 = variable(scalar_f32(2.0f), "l1", NULL);
  CHECK_OK(cairn_list_create(g_ctx, &listed));
  CHECK_OK(cairn_list_append(listed, l0));
  CHECK_OK(cairn_list_append(listed, l1));
  CHECK_OK(cairn_dict_create(g_ctx, &mapped));
  CHECK_OK(cairn_object_set(mapped, "one", l0));
  CHECK_OK(cairn_object_set(mapped, "two", l1));
  set_child(root, "listed", listed);
  set_child(root, "mapped", mapped);
  layer = trackable();
  set_child(layer, "kernel", variable(scalar_f32(3.0f), "kernel", NULL));
  set_child(root, "layer", layer);
  CHECK_OK(cairn_checkpoint_write(c, path));
  cairn_object_free(l0);
  cairn_object_free(l1);
  cairn_checkpoint_free(c);

  /* A new program state with only mapped = {"two": v2} and an empty layer. */
  CHECK_OK(cairn_checkpoint_create(g_ctx, NULL, NULL, 0, &c2));
  root = cairn_checkpoint_root(c2);
  v2 = variable(scalar_f32(0.0f), "v2", NULL);
  CHECK_OK(cairn_dict_create(g_ctx, &new_mapped));
  CHECK_OK(cairn_object_set(new_mapped, "two", v2));
  set_child(root, "mapped", new_mapped);
  fake_layer = trackable();
  CHECK_OK(cairn_object_set(root, "layer", fake_layer));
  CHECK_OK(cairn_checkpoint_restore(c2, path, &rs));
  CHECK(read_scalar(v2) == 2.0);
  /* assert_consumed fails while values are still waiting for their objects. */
  CHECK_ERR(cairn_restore_status_assert_consumed(rs), CAIRN_FAILED_PRECONDITION, "listed/0/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK_OK(cairn_restore_status_assert_existing_objects_matched(rs));
  cairn_restore_status_free(rs); /* deferred restores live on with the checkpoint */

  CHECK_OK(cairn_list_create(g_ctx, &new_list));
  set_child(root, "listed", new_list);
  new_list = get(root, "listed");
  v1 = variable(scalar_f32(0.0f), "v1", NULL);
  CHECK_OK(cairn_list_append(new_list, v1));
  CHECK(read_scalar(v1) == 1.0); /* restored the moment it was appended */
  kernel = variable(scalar_f32(0.0f), "kernel", NULL);
  CHECK_OK(cairn_object_set(fake_layer, "kernel", kernel));
  CHECK(read_scalar(kernel) == 3.0);
  /* A dict insert is restored on creation too: "one" was never matched above. */
  {
    cairn_object *one = variable(scalar_f32(0.0f), "one", NULL);
    cairn_object *mapped_now = get(root, "mapped");
    CHECK_OK(cairn_object_set(mapped_now, "one", one));
    CHECK(read_scalar(one) == 1.0);
    cairn_object_free(mapped_now);
    cairn_object_free(one);
  }

  cairn_object_free(kernel);
  cairn_object_free(v1);
  cairn_object_free(new_list);
  cairn_object_free(fake_layer);
  cairn_object_free(v2);
  cairn_checkpoint_free(c2);
}

/* ---- S8 ---- */
static cairn_object *matrix_var(const char *name, int64_t rows, int64_t cols, float fill) {
  float v[5];
  int64_t shape[2];
  cairn_tensor *t = NULL;
  int i;
  shape[0] = rows;
  shape[1] = cols;
  for (i = 0; i < 5; ++i) v[i] = fill + (float)i;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_FLOAT32, rows ? shape : shape + 1, rows ? 2 : 1, v, 5 * sizeof(float), &t));
  return variable(t, name, NULL);
}

static void s8_partial_restore(void) {
  const char *dir = make_dir("s8");
  char path[4200];
  cairn_object *net = trackable(), *l1 = trackable(), *fake_net = trackable(), *fake_layer = trackable();
  cairn_object *to_restore;
  cairn_checkpoint *c, *c2;
  cairn_restore_status *rs = NULL;
  cairn_tensor *t = NULL;
  float bias[5];

  set_child(l1, "kernel", matrix_var("kernel", 1, 5, 10.0f));
  set_child(l1, "bias", matrix_var("bias", 0, 5, 20.0f));
  set_child(net, "l1", l1);
  c = checkpoint1("net", net);
  snprintf(path, sizeof path, "%s/net", dir);
  CHECK_OK(cairn_checkpoint_write(c, path));

  to_restore = matrix_var("bias", 0, 5, 0.0f);
  CHECK_OK(cairn_object_set(fake_layer, "bias", to_restore));
  set_child(fake_net, "l1", fake_layer);
  c2 = checkpoint1("net", fake_net);
  CHECK_OK(cairn_checkpoint_restore(c2, path, &rs));
  CHECK_OK(cairn_variable_read(to_restore, &t));
  CHECK_OK(cairn_tensor_read(t, bias, sizeof bias));
  CHECK(bias[0] == 20.0f && bias[4] == 24.0f);
  CHECK_OK(cairn_restore_status_assert_existing_objects_matched(rs));
  CHECK_ERR(cairn_restore_status_assert_consumed(rs), CAIRN_FAILED_PRECONDITION,
            "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  cairn_restore_status_expect_partial(rs);
  cairn_restore_status_free(rs);
  cairn_tensor_free(t);
  cairn_object_free(to_restore);
  cairn_checkpoint_free(c2);
  cairn_checkpoint_free(c);
  cairn_object_free(fake_net);
  cairn_object_free(net);
}

/* ---- errors ---- */
static void checkpoint_errors(void) {
  const char *dir = make_dir("errors");
  char path[4200];
  cairn_object *tr = trackable(), *other = trackable();
  cairn_checkpoint *c, *c2;
  cairn_restore_status *rs = NULL;
  cairn_checkpoint_reader *r = NULL;
  cairn_checkpoint_manager *m = NULL;
  cairn_checkpoint_manager_options mo = CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT;
  const char *names[2] = {"a", "a"};
  cairn_object *objs[2];
  FILE *f;

  objs[0] = tr;
  objs[1] = other;
  CHECK_ERR(cairn_checkpoint_create(g_ctx, names, objs, 2, &c), CAIRN_INVALID_ARGUMENT, "child \"a\" is given twice");
  names[1] = "save_counter";
  CHECK_ERR(cairn_checkpoint_create(g_ctx, names, objs, 2, &c), CAIRN_INVALID_ARGUMENT, "reserved");
  set_child(tr, "v", variable(scalar_i32(1), "v", NULL));
  set_child(other, "v", variable(scalar_f32(1.0f), "v", NULL));
  c = checkpoint1("tr", tr);
  snprintf(path, sizeof path, "%s/int", dir);
  CHECK_OK(cairn_checkpoint_write(c, path));
  /* A dtype mismatch names the key. */
  c2 = checkpoint1("tr", other);
  CHECK_ERR(cairn_checkpoint_restore(c2, path, &rs), CAIRN_INVALID_ARGUMENT,
            "'tr/v/.ATTRIBUTES/VARIABLE_VALUE' is int32[] in the checkpoint");
  CHECK(rs == NULL);
  /* restore(NULL) gives an empty status whose asserts fail. */
  CHECK_OK(cairn_checkpoint_restore(c2, NULL, &rs));
  CHECK_ERR(cairn_restore_status_assert_consumed(rs), CAIRN_FAILED_PRECONDITION, "no checkpoint was restored");
  cairn_restore_status_free(rs);
  snprintf(path, sizeof path, "%s/missing", dir);
  CHECK_ERR(cairn_checkpoint_restore(c2, path, &rs), CAIRN_NOT_FOUND, "missing");
  CHECK_ERR(cairn_checkpoint_reader_open(path, &r), CAIRN_NOT_FOUND, "missing");
  snprintf(path, sizeof path, "%s/garbage", dir);
  f = fopen(path, "wb");
  fputs("this is not a checkpoint, but it is long enough to have a header and a footer......", f);
  fclose(f);
  CHECK_ERR(cairn_checkpoint_restore(c2, path, &rs), CAIRN_DATA_LOSS, "garbage");
  CHECK_ERR(cairn_checkpoint_reader_open(path, &r), CAIRN_DATA_LOSS, "garbage");
  mo.max_to_keep = 0;
  CHECK_ERR(cairn_checkpoint_manager_create(c, dir, &mo, &m), CAIRN_INVALID_ARGUMENT, "max_to_keep");
  CHECK_ERR(cairn_checkpoint_save(c, NULL, NULL), CAIRN_INVALID_ARGUMENT, "prefix is NULL");
  CHECK_ERR(cairn_checkpoint_manager_save(NULL, -1, NULL), CAIRN_INVALID_ARGUMENT, "manager is NULL");
  CHECK(cairn_checkpoint_manager_latest(NULL) == NULL);
  CHECK(cairn_checkpoint_root(NULL) == NULL);
  cairn_checkpoint_free(NULL);
  cairn_checkpoint_manager_free(NULL);
  cairn_checkpoint_reader_free(NULL);
  cairn_restore_status_free(NULL);
  cairn_checkpoint_free(c2);
  cairn_checkpoint_free(c);
  cairn_object_free(tr);
  cairn_object_free(other);
}

/* ---- save / save_counter / async / compression ---- */
static int64_t save_counter(cairn_checkpoint *c) {
  int64_t value = -1;
  CHECK_OK(cairn_checkpoint_save_counter(c, &value));
  return value;
}

static void checkpoint_save_and_async(void) {
  const char *dir = make_dir("async");
  char prefix[4200], *path = NULL;
  cairn_object *tr = trackable();
  cairn_checkpoint *c;
  cairn_checkpoint_options o = CAIRN_CHECKPOINT_OPTIONS_INIT;
  cairn_restore_status *rs = NULL;
  set_child(tr, "v", variable(scalar_i32(41), "v", NULL));
  c = checkpoint1("tr", tr);
  snprintf(prefix, sizeof prefix, "%s/model", dir);
  CHECK(save_counter(c) == 0);
  CHECK_OK(cairn_checkpoint_save(c, prefix, &path));
  CHECK(path && strcmp(basename_of(path), "model-1") == 0);
  cairn_free(path);
  CHECK(save_counter(c) == 1);
  o.async = 1;
  o.compress = 1;
  CHECK_OK(cairn_checkpoint_set_options(c, &o));
  add_path_i32(tr, "v", 1);
  CHECK_OK(cairn_checkpoint_save(c, prefix, &path)); /* model-2, written in the background */
  add_path_i32(tr, "v", 100);                         /* does not leak into the snapshot */
  CHECK_OK(cairn_checkpoint_sync(c));
  CHECK_OK(cairn_checkpoint_restore(c, path, &rs));
  CHECK(read_path(tr, "v") == 42);
  CHECK(save_counter(c) == 2);
  cairn_free(path);
  cairn_restore_status_free(rs);
  /* A background failure shows up on the next call. */
  snprintf(prefix, sizeof prefix, "%s/no/such/dir/x", dir);
  CHECK_OK(cairn_checkpoint_write(c, prefix));
  CHECK_ERR(cairn_checkpoint_sync(c), CAIRN_NOT_FOUND, "no/such/dir");
  CHECK_OK(cairn_checkpoint_sync(c)); /* reported once */
  cairn_checkpoint_free(c);
  cairn_object_free(tr);
}

int main(void) {
  CHECK_OK(cairn_context_create(NULL, &g_ctx));
  s1_manager_max_to_keep();
  s2_s3_untracked_and_delete();
  s4_s5_containers_and_sharing();
  s6_modules();
  s7_deferred_restore();
  s8_partial_restore();
  checkpoint_errors();
  checkpoint_save_and_async();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
