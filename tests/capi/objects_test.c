/* The tracked-object part of the C API, from C99: every function, the scenarios' object shapes
 * (S2, S4-S7) and the error paths. */
#include <cairn/cairn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

/* Expects success; prints and counts the status otherwise. */
#define OK(call) expect_ok((call), #call, __LINE__)
/* Expects `code` with `fragment` in the message. */
#define FAILS(call, code, fragment) expect_error((call), (code), (fragment), #call, __LINE__)

static void expect_ok(cairn_status *s, const char *what, int line) {
  if (s) {
    fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, line, what, cairn_status_message(s));
    ++failures;
  }
  cairn_status_free(s);
}

static void expect_error(cairn_status *s, cairn_code code, const char *fragment, const char *what, int line) {
  if (!s) {
    fprintf(stderr, "%s:%d: %s succeeded, expected an error containing \"%s\"\n", __FILE__, line, what, fragment);
    ++failures;
    return;
  }
  if (cairn_status_code(s) != code || !strstr(cairn_status_message(s), fragment)) {
    fprintf(stderr, "%s:%d: %s: got code %d \"%s\", expected code %d containing \"%s\"\n", __FILE__, line, what,
            (int)cairn_status_code(s), cairn_status_message(s), (int)code, fragment);
    ++failures;
  }
  cairn_status_free(s);
}

static cairn_context *ctx;

static cairn_tensor *i32(int32_t v) {
  cairn_tensor *t = NULL;
  OK(cairn_tensor_create(ctx, CAIRN_INT32, NULL, 0, &v, sizeof v, &t));
  return t;
}

static cairn_tensor *f32s(const float *v, int64_t n) {
  cairn_tensor *t = NULL;
  OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, (size_t)n * sizeof(float), &t));
  return t;
}

/* A scalar int32 variable named `name` (NULL: the default) in `scope` (NULL: none). */
static cairn_object *int_var(int32_t v, const char *name, const cairn_object *scope) {
  cairn_variable_options o = CAIRN_VARIABLE_OPTIONS_INIT;
  cairn_tensor *t = i32(v);
  cairn_object *var = NULL;
  o.name = name;
  o.scope = scope;
  OK(cairn_variable_create(ctx, t, &o, &var));
  cairn_tensor_free(t);
  return var;
}

static int32_t read_i32(cairn_object *var) {
  cairn_tensor *t = NULL;
  int32_t v = -999;
  OK(cairn_variable_read(var, &t));
  if (t) OK(cairn_tensor_read(t, &v, sizeof v));
  cairn_tensor_free(t);
  return v;
}

static int32_t read_child_i32(cairn_object *parent, const char *path0, const char *path1) {
  cairn_object *a = NULL, *b = NULL;
  int32_t v;
  OK(cairn_object_get(parent, path0, &a));
  if (path1) {
    OK(cairn_object_get(a, path1, &b));
    v = read_i32(b);
  } else {
    v = read_i32(a);
  }
  cairn_object_free(b);
  cairn_object_free(a);
  return v;
}

static void add_i32(cairn_object *var, int32_t d) {
  cairn_tensor *t = i32(d);
  OK(cairn_variable_assign_add(var, t));
  cairn_tensor_free(t);
}

/* The array's paths joined by ',' into buf. */
static const char *paths_of(const cairn_object_array *a, char *buf, size_t size) {
  size_t i;
  buf[0] = '\0';
  for (i = 0; i < cairn_object_array_size(a); ++i) {
    if (i) strncat(buf, ",", size - strlen(buf) - 1);
    strncat(buf, cairn_object_array_path(a, i), size - strlen(buf) - 1);
  }
  return buf;
}

static void test_kinds_and_constructors(void) {
  cairn_object *tr = NULL, *m = NULL, *l = NULL, *d = NULL, *v, *copy = NULL;
  OK(cairn_trackable_create(ctx, &tr));
  OK(cairn_module_create(ctx, "m1", &m));
  OK(cairn_list_create(ctx, &l));
  OK(cairn_dict_create(ctx, &d));
  v = int_var(1, NULL, NULL);
  CHECK(cairn_object_kind_of(tr) == CAIRN_OBJECT_TRACKABLE);
  CHECK(cairn_object_kind_of(m) == CAIRN_OBJECT_MODULE);
  CHECK(cairn_object_kind_of(l) == CAIRN_OBJECT_LIST);
  CHECK(cairn_object_kind_of(d) == CAIRN_OBJECT_DICT);
  CHECK(cairn_object_kind_of(v) == CAIRN_OBJECT_VARIABLE);
  CHECK(cairn_object_kind_of(NULL) == CAIRN_OBJECT_INVALID);
  CHECK(CAIRN_OBJECT_TRACKABLE == 1 && CAIRN_OBJECT_VARIABLE == 2 && CAIRN_OBJECT_LIST == 3 &&
        CAIRN_OBJECT_DICT == 4 && CAIRN_OBJECT_MODULE == 5);

  CHECK(strcmp(cairn_module_name(m), "m1") == 0);
  CHECK(strcmp(cairn_module_scope(m), "m1") == 0);
  CHECK(cairn_module_name(tr) == NULL);
  CHECK(cairn_module_scope(NULL) == NULL);
  CHECK(strcmp(cairn_variable_name(v), "Variable:0") == 0);
  CHECK(cairn_variable_name(m) == NULL);
  CHECK(cairn_variable_name(NULL) == NULL);
  CHECK(cairn_variable_trainable(v) == 1);
  CHECK(cairn_variable_trainable(m) == CAIRN_FALSE); /* not a variable */
  CHECK(cairn_variable_dtype(v) == CAIRN_INT32);
  CHECK(cairn_variable_dtype(l) == CAIRN_INVALID_DTYPE);

  OK(cairn_object_share(v, &copy));
  CHECK(cairn_object_same(copy, v) == 1);
  CHECK(cairn_object_same(copy, m) == 0);
  CHECK(cairn_object_same(NULL, m) == 0);
  cairn_object_free(v); /* the shared handle keeps the variable */
  CHECK(read_i32(copy) == 1);
  cairn_object_free(copy);

  {
    cairn_object *def = NULL;
    OK(cairn_module_create(ctx, NULL, &def));
    CHECK(strcmp(cairn_module_name(def), "module") == 0);
    cairn_object_free(def);
  }

  {
    cairn_object *none = tr; /* out is cleared on error */
    FAILS(cairn_trackable_create(NULL, &none), CAIRN_INVALID_ARGUMENT, "cairn_trackable_create: ctx is NULL");
    CHECK(none == NULL);
    FAILS(cairn_trackable_create(ctx, NULL), CAIRN_INVALID_ARGUMENT, "cairn_trackable_create: out is NULL");
    FAILS(cairn_list_create(NULL, &none), CAIRN_INVALID_ARGUMENT, "cairn_list_create: ctx is NULL");
    FAILS(cairn_dict_create(ctx, NULL), CAIRN_INVALID_ARGUMENT, "cairn_dict_create: out is NULL");
    FAILS(cairn_module_create(ctx, "", &none), CAIRN_INVALID_ARGUMENT, "cairn_module_create: module name is empty");
    FAILS(cairn_module_create(ctx, "a/b", &none), CAIRN_INVALID_ARGUMENT, "contains '/' or ':'");
    FAILS(cairn_module_create(NULL, "m", &none), CAIRN_INVALID_ARGUMENT, "cairn_module_create: ctx is NULL");
    FAILS(cairn_object_share(NULL, &none), CAIRN_INVALID_ARGUMENT, "cairn_object_share: obj is NULL");
    FAILS(cairn_object_share(tr, NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_share: out is NULL");
    CHECK(none == NULL);
  }

  cairn_object_free(tr);
  cairn_object_free(m);
  cairn_object_free(l);
  cairn_object_free(d);
  cairn_object_free(NULL);
}

static void test_variables(void) {
  const float init[2] = {1, 2}, three[3] = {1, 2, 3}, delta[2] = {10, 20};
  cairn_tensor *t2 = f32s(init, 2), *t3 = f32s(three, 3), *td = f32s(delta, 2), *ti = i32(4), *out = NULL;
  cairn_variable_options o = CAIRN_VARIABLE_OPTIONS_INIT;
  cairn_object *v = NULL, *m1 = NULL, *m2 = NULL, *scoped = NULL, *list = NULL;
  float got[2];

  CHECK(o.struct_size == sizeof(cairn_variable_options) && o.name == NULL && o.trainable == 1 && o.scope == NULL);
  o.name = "v";
  o.trainable = 0;
  OK(cairn_variable_create(ctx, t2, &o, &v));
  CHECK(strcmp(cairn_variable_name(v), "v:0") == 0);
  CHECK(cairn_variable_trainable(v) == 0);
  CHECK(cairn_variable_dtype(v) == CAIRN_FLOAT32);

  OK(cairn_variable_read(v, &out));
  CHECK(cairn_tensor_rank(out) == 1 && cairn_tensor_dim(out, 0) == 2);
  OK(cairn_variable_assign_add(v, td));
  /* the earlier snapshot did not change */
  OK(cairn_tensor_read(out, got, sizeof got));
  CHECK(got[0] == 1 && got[1] == 2);
  cairn_tensor_free(out);
  OK(cairn_variable_read(v, &out));
  OK(cairn_tensor_read(out, got, sizeof got));
  CHECK(got[0] == 11 && got[1] == 22);
  cairn_tensor_free(out);
  OK(cairn_variable_assign_sub(v, t2));
  OK(cairn_variable_read(v, &out));
  OK(cairn_tensor_read(out, got, sizeof got));
  CHECK(got[0] == 10 && got[1] == 20);
  cairn_tensor_free(out);
  OK(cairn_variable_assign(v, t2));
  OK(cairn_variable_read(v, &out));
  OK(cairn_tensor_read(out, got, sizeof got));
  CHECK(got[0] == 1 && got[1] == 2);
  cairn_tensor_free(out);

  FAILS(cairn_variable_assign(v, t3), CAIRN_INVALID_ARGUMENT,
        "cairn_variable_assign: shape [3] does not match variable 'v:0' of shape [2]");
  FAILS(cairn_variable_assign(v, ti), CAIRN_INVALID_ARGUMENT,
        "cairn_variable_assign: dtype int32 does not match variable 'v:0' of dtype float32");
  FAILS(cairn_variable_assign_add(v, t3), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign_add: shape [3] does not match");
  FAILS(cairn_variable_assign_sub(v, ti), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign_sub: dtype int32");
  FAILS(cairn_variable_assign(v, NULL), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign: value is NULL");
  FAILS(cairn_variable_assign(NULL, t2), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign: var is NULL");
  FAILS(cairn_variable_assign_add(v, NULL), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign_add: delta is NULL");
  FAILS(cairn_variable_assign_sub(NULL, t2), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign_sub: var is NULL");
  FAILS(cairn_variable_read(v, NULL), CAIRN_INVALID_ARGUMENT, "cairn_variable_read: out is NULL");
  FAILS(cairn_variable_read(NULL, &out), CAIRN_INVALID_ARGUMENT, "cairn_variable_read: var is NULL");

  /* scopes: "m1/m_v:0", nested "m1/m2/m_v:0" */
  OK(cairn_module_create(ctx, "m1", &m1));
  OK(cairn_module_create_in_scope(ctx, "m2", m1, &m2));
  CHECK(strcmp(cairn_module_scope(m2), "m1/m2") == 0);
  CHECK(strcmp(cairn_module_name(m2), "m2") == 0);
  CHECK(cairn_object_child_count(m1) == 0); /* a scope is not an edge */
  scoped = int_var(0, "m_v", m1);
  CHECK(strcmp(cairn_variable_name(scoped), "m1/m_v:0") == 0);
  cairn_object_free(scoped);
  scoped = int_var(0, "m_v", m2);
  CHECK(strcmp(cairn_variable_name(scoped), "m1/m2/m_v:0") == 0);
  cairn_object_free(scoped);
  scoped = NULL;
  OK(cairn_module_create_in_scope(ctx, "top", NULL, &scoped));
  CHECK(strcmp(cairn_module_scope(scoped), "top") == 0);
  cairn_object_free(scoped);

  /* option and argument errors */
  OK(cairn_list_create(ctx, &list));
  FAILS(cairn_module_create_in_scope(ctx, "x", list, &scoped), CAIRN_INVALID_ARGUMENT,
        "cairn_module_create_in_scope: parent_scope is a list, expected a module");
  o = (cairn_variable_options)CAIRN_VARIABLE_OPTIONS_INIT;
  o.scope = list;
  FAILS(cairn_variable_create(ctx, t2, &o, &scoped), CAIRN_INVALID_ARGUMENT,
        "cairn_variable_create: scope is a list, expected a module");
  o.scope = NULL;
  o.trainable = 2;
  FAILS(cairn_variable_create(ctx, t2, &o, &scoped), CAIRN_INVALID_ARGUMENT, "trainable must be 0 or 1, got 2");
  o.trainable = 1;
  o.name = "";
  FAILS(cairn_variable_create(ctx, t2, &o, &scoped), CAIRN_INVALID_ARGUMENT,
        "cairn_variable_create: variable name is empty");
  o.name = "a:0";
  FAILS(cairn_variable_create(ctx, t2, &o, &scoped), CAIRN_INVALID_ARGUMENT, "contains ':'");
  o.name = NULL;
  o.struct_size = 4;
  FAILS(cairn_variable_create(ctx, t2, &o, &scoped), CAIRN_INVALID_ARGUMENT, "cairn_variable_options.struct_size is 4, not a size of that struct");
  FAILS(cairn_variable_create(NULL, t2, NULL, &scoped), CAIRN_INVALID_ARGUMENT, "cairn_variable_create: ctx is NULL");
  FAILS(cairn_variable_create(ctx, NULL, NULL, &scoped), CAIRN_INVALID_ARGUMENT,
        "cairn_variable_create: initial is NULL");
  FAILS(cairn_variable_create(ctx, t2, NULL, NULL), CAIRN_INVALID_ARGUMENT, "cairn_variable_create: out is NULL");
  FAILS(cairn_variable_read(list, &out), CAIRN_INVALID_ARGUMENT, "cairn_variable_read: var is a list, expected a variable");
  FAILS(cairn_variable_assign(m1, t2), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign: var is a module, expected a variable");
  {
    /* String tensors cannot be made through the C API, so no string variable can be either. */
    cairn_tensor *s = NULL;
    FAILS(cairn_tensor_create(ctx, CAIRN_STRING, NULL, 0, NULL, 0, &s), CAIRN_INVALID_ARGUMENT, "string");
  }
  /* NULL options: the defaults */
  OK(cairn_variable_create(ctx, t2, NULL, &scoped));
  CHECK(strcmp(cairn_variable_name(scoped), "Variable:0") == 0);
  CHECK(cairn_variable_trainable(scoped) == 1);
  cairn_object_free(scoped);
  {
    /* bool variables exist; Add has no bool kernel, and that error names the caller */
    uint8_t b = 1;
    cairn_tensor *tb = NULL;
    cairn_object *vb = NULL;
    OK(cairn_tensor_create(ctx, CAIRN_BOOL, NULL, 0, &b, 1, &tb));
    OK(cairn_variable_create(ctx, tb, NULL, &vb));
    FAILS(cairn_variable_assign_add(vb, tb), CAIRN_INVALID_ARGUMENT, "cairn_variable_assign_add: Add:");
    cairn_object_free(vb);
    cairn_tensor_free(tb);
  }

  cairn_object_free(list);
  cairn_object_free(m2);
  cairn_object_free(m1);
  cairn_object_free(v);
  cairn_tensor_free(t2);
  cairn_tensor_free(t3);
  cairn_tensor_free(td);
  cairn_tensor_free(ti);
}

/* S2/S3: tracked and untracked attributes, deletion. */
static void test_edges(void) {
  cairn_object *tr2 = NULL, *v = int_var(1000, NULL, NULL), *u = int_var(0, NULL, NULL), *del = int_var(-1, NULL, NULL);
  cairn_object *got = NULL, *a = NULL;
  cairn_object_array *arr = NULL;
  char buf[256];

  OK(cairn_trackable_create(ctx, &tr2));
  OK(cairn_object_set(tr2, "v", v));
  OK(cairn_object_set_untracked(tr2, "untracked", u));
  OK(cairn_object_set(tr2, "deleted", del));
  CHECK(cairn_object_child_count(tr2) == 2);
  OK(cairn_object_children(tr2, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "v,deleted") == 0);
  CHECK(cairn_object_same(cairn_object_array_get(arr, 1), del));
  cairn_object_array_free(arr);

  /* the untracked one is reachable by name but not walked */
  OK(cairn_object_get(tr2, "untracked", &got));
  CHECK(cairn_object_same(got, u));
  cairn_object_free(got);
  OK(cairn_object_walk(tr2, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), ",v,deleted") == 0);
  cairn_object_array_free(arr);

  /* S3: delete the edge */
  OK(cairn_object_delete(tr2, "deleted"));
  OK(cairn_object_walk(tr2, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), ",v") == 0);
  cairn_object_array_free(arr);
  FAILS(cairn_object_delete(tr2, "deleted"), CAIRN_NOT_FOUND, "cairn_object_delete: no child named \"deleted\"");
  FAILS(cairn_object_get(tr2, "w", &got), CAIRN_NOT_FOUND, "cairn_object_get: no child named \"w\"");
  CHECK(got == NULL);

  /* replacement keeps the position */
  OK(cairn_object_set(tr2, "second", u)); /* u is also held untracked, under another name */
  OK(cairn_object_set(tr2, "v", del));
  OK(cairn_object_children(tr2, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "v,second") == 0);
  CHECK(cairn_object_same(cairn_object_array_get(arr, 0), del));
  cairn_object_array_free(arr);
  OK(cairn_object_get(tr2, "untracked", &got)); /* the untracked reference was kept under its own name */
  cairn_object_free(got);
  OK(cairn_object_set_untracked(tr2, "second", v)); /* replaces the tracked edge */
  CHECK(cairn_object_child_count(tr2) == 1);
  OK(cairn_object_delete(tr2, "untracked"));
  FAILS(cairn_object_get(tr2, "untracked", &got), CAIRN_NOT_FOUND, "no child named \"untracked\"");

  /* a cycle is allowed; deleting an edge breaks it */
  OK(cairn_object_set(tr2, "self", tr2));
  OK(cairn_object_get(tr2, "self", &a));
  CHECK(cairn_object_same(a, tr2));
  cairn_object_free(a);
  OK(cairn_object_children(tr2, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "v,self") == 0);
  cairn_object_array_free(arr);
  OK(cairn_object_walk(tr2, &arr)); /* the root is not visited twice */
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), ",v") == 0);
  cairn_object_array_free(arr);
  OK(cairn_object_delete(tr2, "self"));

  /* names and arguments */
  FAILS(cairn_object_set(tr2, "", v), CAIRN_INVALID_ARGUMENT, "cairn_object_set: edge name is empty");
  FAILS(cairn_object_set(tr2, "a/b", v), CAIRN_INVALID_ARGUMENT, "cairn_object_set: edge name \"a/b\" contains '/'");
  FAILS(cairn_object_set(tr2, ".ATTRIBUTES", v), CAIRN_INVALID_ARGUMENT, "reserved");
  FAILS(cairn_object_set(NULL, "x", v), CAIRN_INVALID_ARGUMENT, "cairn_object_set: parent is NULL");
  FAILS(cairn_object_set(tr2, NULL, v), CAIRN_INVALID_ARGUMENT, "cairn_object_set: name is NULL");
  FAILS(cairn_object_set(tr2, "x", NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_set: child is NULL");
  FAILS(cairn_object_set(v, "x", u), CAIRN_INVALID_ARGUMENT, "cairn_object_set: a variable has no edges");
  FAILS(cairn_object_set_untracked(tr2, "", u), CAIRN_INVALID_ARGUMENT, "cairn_object_set_untracked: name is empty");
  FAILS(cairn_object_set_untracked(NULL, "x", u), CAIRN_INVALID_ARGUMENT, "cairn_object_set_untracked: parent is NULL");
  FAILS(cairn_object_set_untracked(tr2, NULL, u), CAIRN_INVALID_ARGUMENT, "cairn_object_set_untracked: name is NULL");
  FAILS(cairn_object_set_untracked(tr2, "x", NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_set_untracked: child is NULL");
  FAILS(cairn_object_set_untracked(v, "x", u), CAIRN_INVALID_ARGUMENT, "a variable has no untracked references");
  FAILS(cairn_object_get(NULL, "x", &got), CAIRN_INVALID_ARGUMENT, "cairn_object_get: parent is NULL");
  FAILS(cairn_object_get(tr2, NULL, &got), CAIRN_INVALID_ARGUMENT, "cairn_object_get: name is NULL");
  FAILS(cairn_object_get(tr2, "v", NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_get: out is NULL");
  FAILS(cairn_object_get(v, "x", &got), CAIRN_NOT_FOUND, "no child named \"x\" in variable 'Variable:0'");
  FAILS(cairn_object_delete(NULL, "x"), CAIRN_INVALID_ARGUMENT, "cairn_object_delete: parent is NULL");
  FAILS(cairn_object_delete(tr2, NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_delete: name is NULL");
  CHECK(cairn_object_child_count(v) == 0);
  CHECK(cairn_object_child_count(NULL) == 0);

  /* freeing in any order: the parent first, then a child still reads */
  cairn_object_free(tr2);
  CHECK(read_i32(del) == -1);
  cairn_object_free(v);
  cairn_object_free(u);
  cairn_object_free(del);
}

/* S4/S5: lists and dicts, sharing, first breadth-first path. */
static void test_containers(void) {
  cairn_object *tr3 = NULL, *list = NULL, *dict = NULL, *dict2 = NULL, *br[3], *got = NULL, *e = NULL;
  cairn_object_array *arr = NULL;
  char buf[512];
  int i;
  static const char *const names[3] = {"br1", "br2", "br3"};

  OK(cairn_trackable_create(ctx, &tr3));
  for (i = 0; i < 3; ++i) {
    cairn_object *v = int_var(5, NULL, NULL);
    br[i] = NULL;
    OK(cairn_trackable_create(ctx, &br[i]));
    OK(cairn_object_set(br[i], "v", v));
    cairn_object_free(v);
  }
  OK(cairn_list_create(ctx, &list));
  OK(cairn_list_append(list, br[0]));
  OK(cairn_list_append(list, br[1]));
  CHECK(cairn_list_size(list) == 2);
  CHECK(cairn_object_child_count(list) == 2);
  OK(cairn_dict_create(ctx, &dict));
  OK(cairn_object_set(dict, "br3", br[2]));
  OK(cairn_object_set(tr3, "br_list", list));
  OK(cairn_object_set(tr3, "br_dict", dict));

  OK(cairn_object_walk(tr3, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf),
               ",br_list,br_dict,br_list/0,br_list/1,br_dict/br3,br_list/0/v,br_list/1/v,br_dict/br3/v") == 0);
  CHECK(cairn_object_same(cairn_object_array_get(arr, 0), tr3));
  cairn_object_array_free(arr);

  /* S5: replace br_dict with all three; shared objects keep their first path */
  OK(cairn_dict_create(ctx, &dict2));
  for (i = 0; i < 3; ++i) OK(cairn_object_set(dict2, names[i], br[i]));
  OK(cairn_object_set(tr3, "br_dict", dict2));
  OK(cairn_object_walk(tr3, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf),
               ",br_list,br_dict,br_list/0,br_list/1,br_dict/br3,br_list/0/v,br_list/1/v,br_dict/br3/v") == 0);
  cairn_object_array_free(arr);
  /* one object through either path */
  OK(cairn_object_get(dict2, "br1", &got));
  OK(cairn_object_get(list, "0", &e));
  CHECK(cairn_object_same(got, e));
  cairn_object_free(e);
  e = NULL;
  {
    cairn_object *v1 = NULL;
    OK(cairn_object_get(got, "v", &v1));
    add_i32(v1, -10);
    cairn_object_free(v1);
  }
  CHECK(read_child_i32(br[0], "v", NULL) == -5);
  cairn_object_free(got);
  got = NULL;

  /* list access */
  OK(cairn_list_get(list, 1, &got));
  CHECK(cairn_object_same(got, br[1]));
  cairn_object_free(got);
  got = NULL;
  OK(cairn_list_set(list, 1, br[2]));
  OK(cairn_object_get(list, "1", &got));
  CHECK(cairn_object_same(got, br[2]));
  cairn_object_free(got);
  got = NULL;
  OK(cairn_object_set(list, "1", br[1]));
  FAILS(cairn_list_get(list, 2, &got), CAIRN_OUT_OF_RANGE, "cairn_list_get: index 2 is out of range for a list of size 2");
  FAILS(cairn_list_set(list, 7, br[0]), CAIRN_OUT_OF_RANGE, "cairn_list_set: index 7 is out of range");
  FAILS(cairn_object_get(list, "2", &got), CAIRN_OUT_OF_RANGE, "cairn_object_get: index 2 is out of range");
  FAILS(cairn_object_get(list, "x", &got), CAIRN_NOT_FOUND, "cairn_object_get: no child named \"x\" in list");
  FAILS(cairn_object_set(list, "2", br[0]), CAIRN_OUT_OF_RANGE, "cairn_object_set: index 2 is out of range");
  FAILS(cairn_list_append(dict, br[0]), CAIRN_INVALID_ARGUMENT, "cairn_list_append: list is a dict, expected a list");
  FAILS(cairn_list_append(NULL, br[0]), CAIRN_INVALID_ARGUMENT, "cairn_list_append: list is NULL");
  FAILS(cairn_list_append(list, NULL), CAIRN_INVALID_ARGUMENT, "cairn_list_append: item is NULL");
  FAILS(cairn_list_get(tr3, 0, &got), CAIRN_INVALID_ARGUMENT, "cairn_list_get: list is a trackable, expected a list");
  FAILS(cairn_list_get(list, 0, NULL), CAIRN_INVALID_ARGUMENT, "cairn_list_get: out is NULL");
  FAILS(cairn_list_set(list, 0, NULL), CAIRN_INVALID_ARGUMENT, "cairn_list_set: item is NULL");
  FAILS(cairn_object_set_untracked(list, "0", br[0]), CAIRN_INVALID_ARGUMENT, "a list has no untracked references");
  FAILS(cairn_object_set_untracked(dict, "k", br[0]), CAIRN_INVALID_ARGUMENT, "a dict has no untracked references");
  FAILS(cairn_object_set(dict, "a/b", br[0]), CAIRN_INVALID_ARGUMENT, "contains '/'");
  CHECK(cairn_list_size(dict) == 0);
  CHECK(cairn_list_size(NULL) == 0);

  /* list and dict deletion */
  OK(cairn_object_delete(list, "0"));
  CHECK(cairn_list_size(list) == 1);
  OK(cairn_list_get(list, 0, &got));
  CHECK(cairn_object_same(got, br[1]));
  cairn_object_free(got);
  got = NULL;
  FAILS(cairn_object_delete(list, "1"), CAIRN_OUT_OF_RANGE, "cairn_object_delete: index 1 is out of range");
  OK(cairn_object_delete(dict2, "br2"));
  OK(cairn_object_children(dict2, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "br1,br3") == 0);
  cairn_object_array_free(arr);
  FAILS(cairn_object_delete(dict2, "br2"), CAIRN_NOT_FOUND, "cairn_object_delete: no child named \"br2\" in dict");

  cairn_object_free(tr3);
  cairn_object_free(list);
  cairn_object_free(dict);
  cairn_object_free(dict2);
  for (i = 0; i < 3; ++i) cairn_object_free(br[i]);
}

/* S6 and the module queries. */
static void test_modules(void) {
  cairn_object *m[3], *v;
  cairn_object_array *arr = NULL;
  char buf[512];
  int i;
  static const char *const names[3] = {"m1", "m2", "m3"};

  for (i = 0; i < 3; ++i) {
    m[i] = NULL;
    OK(cairn_module_create(ctx, names[i], &m[i]));
    v = int_var(i + 1, "m_v", m[i]);
    OK(cairn_object_set(m[i], "v", v));
    cairn_object_free(v);
  }
  OK(cairn_object_set(m[0], "sub", m[1]));
  OK(cairn_object_set(m[1], "sub", m[2]));

  OK(cairn_object_variables(m[0], 0, &arr));
  CHECK(cairn_object_array_size(arr) == 3);
  CHECK(strcmp(cairn_variable_name(cairn_object_array_get(arr, 0)), "m1/m_v:0") == 0);
  CHECK(strcmp(cairn_variable_name(cairn_object_array_get(arr, 1)), "m2/m_v:0") == 0);
  CHECK(strcmp(cairn_variable_name(cairn_object_array_get(arr, 2)), "m3/m_v:0") == 0);
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "v,sub/v,sub/sub/v") == 0);
  CHECK(cairn_object_array_get(arr, 3) == NULL);
  CHECK(cairn_object_array_path(arr, 3) == NULL);
  CHECK(read_i32(cairn_object_array_get(arr, 2)) == 3);
  {
    /* keep an element past the array */
    cairn_object *kept = NULL;
    OK(cairn_object_share(cairn_object_array_get(arr, 1), &kept));
    cairn_object_array_free(arr);
    CHECK(strcmp(cairn_variable_name(kept), "m2/m_v:0") == 0);
    cairn_object_free(kept);
  }

  OK(cairn_object_submodules(m[0], &arr));
  CHECK(cairn_object_array_size(arr) == 2);
  CHECK(cairn_object_same(cairn_object_array_get(arr, 0), m[1]));
  CHECK(cairn_object_same(cairn_object_array_get(arr, 1), m[2]));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "sub,sub/sub") == 0);
  cairn_object_array_free(arr);

  /* a non-trainable variable, and a variable shared by two paths */
  {
    cairn_variable_options o = CAIRN_VARIABLE_OPTIONS_INIT;
    cairn_tensor *t = i32(0);
    cairn_object *frozen = NULL;
    o.name = "frozen";
    o.trainable = 0;
    OK(cairn_variable_create(ctx, t, &o, &frozen));
    OK(cairn_object_set(m[0], "a_frozen", frozen));
    OK(cairn_object_set(m[2], "again", frozen));
    cairn_object_free(frozen);
    cairn_tensor_free(t);
  }
  OK(cairn_object_variables(m[0], 0, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "a_frozen,v,sub/v,sub/sub/v") == 0);
  cairn_object_array_free(arr);
  OK(cairn_object_variables(m[0], 1, &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "v,sub/v,sub/sub/v") == 0);
  cairn_object_array_free(arr);

  /* flatten: every path */
  OK(cairn_object_flatten(m[0], &arr));
  CHECK(strcmp(paths_of(arr, buf, sizeof buf), "a_frozen,sub,v,sub/sub,sub/v,sub/sub/again,sub/sub/v") == 0);
  cairn_object_array_free(arr);

  /* a cycle ends */
  OK(cairn_object_set(m[2], "up", m[0]));
  OK(cairn_object_submodules(m[0], &arr));
  CHECK(cairn_object_array_size(arr) == 2);
  cairn_object_array_free(arr);
  OK(cairn_object_flatten(m[0], &arr));
  CHECK(cairn_object_array_size(arr) > 7);
  cairn_object_array_free(arr);
  OK(cairn_object_delete(m[2], "up"));

  FAILS(cairn_object_variables(NULL, 0, &arr), CAIRN_INVALID_ARGUMENT, "cairn_object_variables: root is NULL");
  FAILS(cairn_object_variables(m[0], 0, NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_variables: out is NULL");
  FAILS(cairn_object_submodules(NULL, &arr), CAIRN_INVALID_ARGUMENT, "cairn_object_submodules: root is NULL");
  FAILS(cairn_object_flatten(NULL, &arr), CAIRN_INVALID_ARGUMENT, "cairn_object_flatten: root is NULL");
  FAILS(cairn_object_walk(m[0], NULL), CAIRN_INVALID_ARGUMENT, "cairn_object_walk: out is NULL");
  FAILS(cairn_object_children(NULL, &arr), CAIRN_INVALID_ARGUMENT, "cairn_object_children: obj is NULL");
  CHECK(cairn_object_array_size(NULL) == 0);
  CHECK(cairn_object_array_get(NULL, 0) == NULL);
  CHECK(cairn_object_array_path(NULL, 0) == NULL);
  cairn_object_array_free(NULL);

  /* variables have no children */
  OK(cairn_object_get(m[0], "v", &v));
  OK(cairn_object_children(v, &arr));
  CHECK(cairn_object_array_size(arr) == 0);
  cairn_object_array_free(arr);
  cairn_object_free(v);

  for (i = 0; i < 3; ++i) cairn_object_free(m[i]);
}

/* S7's shape: an empty list edge, then an append; values survive every handle being freed. */
static void test_handles_outlive_context(void) {
  cairn_context *c = NULL;
  cairn_object *root = NULL, *listed = NULL, *v = NULL;
  cairn_tensor *t = NULL;
  float one = 1.0f;
  OK(cairn_context_create(NULL, &c));
  OK(cairn_trackable_create(c, &root));
  OK(cairn_list_create(c, &listed));
  OK(cairn_object_set(root, "listed", listed));
  OK(cairn_tensor_create(c, CAIRN_FLOAT32, NULL, 0, &one, sizeof one, &t));
  OK(cairn_variable_create(c, t, NULL, &v));
  cairn_context_free(c); /* objects keep the context alive */
  OK(cairn_list_append(listed, v));
  cairn_object_free(listed);
  cairn_object_free(root);
  {
    cairn_tensor *d = NULL;
    float got = 0;
    OK(cairn_variable_assign_add(v, t)); /* runs on the freed context's devices, still alive */
    OK(cairn_variable_read(v, &d));
    OK(cairn_tensor_read(d, &got, sizeof got));
    CHECK(got == 2.0f);
    cairn_tensor_free(d);
  }
  cairn_tensor_free(t);
  cairn_object_free(v);
}

int main(void) {
  OK(cairn_context_create(NULL, &ctx));
  test_kinds_and_constructors();
  test_variables();
  test_edges();
  test_containers();
  test_modules();
  test_handles_outlive_context();
  cairn_context_free(ctx);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("objects_test: all checks passed\n");
  return 0;
}
