/* Weights in other formats through the C API: the reader over TensorFlow checkpoints and
 * safetensors, TensorFlow restore by object graph, cairn_checkpoint_export, and a module's weights
 * by name (cairn_object_load_weights / cairn_object_save_weights). Goldens: tests/golden/. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define TF_GOLDEN "tests/golden/tf_checkpoint/"
#define ST_GOLDEN "tests/golden/safetensors/"
#define VV "/.ATTRIBUTES/VARIABLE_VALUE"

static cairn_context *g_ctx;
static char g_dir[256];

static const char *tmp_path(const char *name) {
  static char buf[8][512];
  static int next = 0;
  char *p = buf[next++ % 8];
  snprintf(p, 512, "%s/%s", g_dir, name);
  return p;
}

/* Sequential [Dense(units, relu), Dense(3)] built on a [1, 8] input; kernels from glorot_uniform. */
static cairn_object *mlp(int64_t units) {
  cairn_object *model = NULL, *d1 = NULL, *d2 = NULL;
  cairn_dense_options o = CAIRN_DENSE_OPTIONS_INIT;
  CHECK_OK(cairn_sequential_create(g_ctx, NULL, &model));
  o.units = units;
  o.activation = "relu";
  o.bias_initializer = "ones";
  CHECK_OK(cairn_dense_create(g_ctx, &o, &d1));
  o.units = 3;
  o.activation = NULL;
  CHECK_OK(cairn_dense_create(g_ctx, &o, &d2));
  CHECK_OK(cairn_sequential_add(model, d1));
  CHECK_OK(cairn_sequential_add(model, d2));
  cairn_object_free(d1);
  cairn_object_free(d2);
  {
    float x[8] = {0};
    int64_t shape[2] = {1, 8};
    cairn_tensor *in = NULL, *out = NULL;
    CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_FLOAT32, shape, 2, x, sizeof x, &in));
    CHECK_OK(cairn_layer_call(model, in, 0, &out));
    cairn_tensor_free(in);
    cairn_tensor_free(out);
  }
  return model;
}

/* The float values of the variable at `path` under `root` (at most 256). */
static size_t values_at(cairn_object *root, const char *path, float *dst) {
  cairn_object_array *all = NULL;
  size_t n = 0;
  CHECK_OK(cairn_object_walk(root, &all));
  for (size_t i = 0; i < cairn_object_array_size(all); ++i) {
    if (strcmp(cairn_object_array_path(all, i), path) != 0) continue;
    cairn_tensor *t = NULL;
    CHECK_OK(cairn_variable_read(cairn_object_array_get(all, i), &t));
    n = (size_t)cairn_tensor_num_elements(t);
    CHECK(n <= 256);
    if (n <= 256) CHECK_OK(cairn_tensor_read(t, dst, n * sizeof(float)));
    cairn_tensor_free(t);
  }
  cairn_object_array_free(all);
  return n;
}

static const char *kPaths[4] = {"layer-0/kernel", "layer-0/bias", "layer-1/kernel", "layer-1/bias"};

/* 1 when every weight of `a` equals the same weight of `b`. */
static int same_weights(cairn_object *a, cairn_object *b) {
  for (int i = 0; i < 4; ++i) {
    float x[256], y[256];
    size_t n = values_at(a, kPaths[i], x);
    if (n == 0 || n != values_at(b, kPaths[i], y) || memcmp(x, y, n * sizeof(float)) != 0) return 0;
  }
  return 1;
}

static size_t key_index(const cairn_checkpoint_reader *r, const char *key) {
  for (size_t i = 0; i < cairn_checkpoint_reader_count(r); ++i)
    if (strcmp(cairn_checkpoint_reader_key(r, i), key) == 0) return i;
  return (size_t)-1;
}

static const char *metadata(const cairn_checkpoint_reader *r, const char *key) {
  for (size_t i = 0; i < cairn_checkpoint_reader_metadata_count(r); ++i)
    if (strcmp(cairn_checkpoint_reader_metadata_key(r, i), key) == 0) return cairn_checkpoint_reader_metadata_value(r, i);
  return NULL;
}

static void test_round_trip_each_format(void) {
  const cairn_weights_format formats[3] = {CAIRN_WEIGHTS_SAFETENSORS, CAIRN_WEIGHTS_TF, CAIRN_WEIGHTS_CAIRN};
  const char *names[3] = {"w.safetensors", "w_tf", "w.cairn"};
  cairn_object *src = mlp(16);
  for (int f = 0; f < 3; ++f) {
    cairn_object *dst = mlp(16);
    size_t loaded = 0;
    CHECK(!same_weights(src, dst));
    CHECK_OK(cairn_object_save_weights(src, tmp_path(names[f]), formats[f], NULL));
    CHECK_OK(cairn_object_load_weights(dst, tmp_path(names[f]), NULL, &loaded));
    CHECK(loaded == 4);
    CHECK(same_weights(src, dst));
    {
      cairn_checkpoint_reader *r = NULL;
      CHECK_OK(cairn_checkpoint_reader_open(tmp_path(names[f]), &r));
      CHECK(cairn_checkpoint_reader_format(r) == formats[f]);
      size_t k = key_index(r, "layer-0/kernel");
      /* A Cairn file always has an object graph entry (here a root without children). */
      CHECK(cairn_checkpoint_reader_count(r) == (formats[f] == CAIRN_WEIGHTS_CAIRN ? 5u : 4u));
      CHECK(key_index(r, "layer-0/bias") != (size_t)-1 && key_index(r, "layer-1/bias") != (size_t)-1);
      CHECK(cairn_checkpoint_reader_dtype(r, k) == CAIRN_FLOAT32);
      CHECK(cairn_checkpoint_reader_rank(r, k) == 2 && cairn_checkpoint_reader_dim(r, k, 0) == 8 &&
            cairn_checkpoint_reader_dim(r, k, 1) == 16);
      CHECK(strcmp(cairn_checkpoint_reader_type_name(r, k), formats[f] == CAIRN_WEIGHTS_SAFETENSORS ? "F32" : "float32") == 0);
      cairn_checkpoint_reader_free(r);
    }
    cairn_object_free(dst);
  }
  cairn_object_free(src);
}

static void test_prefix_separator_and_safetensors_metadata(void) {
  cairn_object *src = mlp(16), *dst = mlp(16);
  cairn_weights_options o = CAIRN_WEIGHTS_OPTIONS_INIT;
  cairn_checkpoint_reader *r = NULL;
  cairn_bool checked = CAIRN_FALSE;
  o.prefix = "model.";
  o.separator = ".";
  o.metadata_json = "{\"format\": \"pt\", \"note\": \"from C\"}";
  CHECK_OK(cairn_object_save_weights(src, tmp_path("pt.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, &o));
  CHECK_OK(cairn_checkpoint_reader_open(tmp_path("pt.safetensors"), &r));
  CHECK(key_index(r, "model.layer-1.kernel") != (size_t)-1);
  CHECK(metadata(r, "format") && strcmp(metadata(r, "format"), "pt") == 0);
  CHECK(metadata(r, "note") && strcmp(metadata(r, "note"), "from C") == 0);
  CHECK(metadata(r, "cairn.checksum.model.layer-1.kernel") != NULL);  /* checksums are on by default */
  CHECK_OK(cairn_checkpoint_reader_verify(r, "model.layer-1.kernel", &checked));
  CHECK(checked == CAIRN_TRUE);
  cairn_checkpoint_reader_free(r);
  CHECK_OK(cairn_object_load_weights(dst, tmp_path("pt.safetensors"), &o, NULL));
  CHECK(same_weights(src, dst));

  /* Without the prefix nothing matches: NOT_FOUND names the variables. */
  CHECK_ERR(cairn_object_load_weights(dst, tmp_path("pt.safetensors"), NULL, NULL), CAIRN_NOT_FOUND,
            "has no value for 4 of the module's 4 variables: 'layer-0/kernel', 'layer-0/bias'");

  o.checksums = CAIRN_FALSE;
  o.metadata_json = NULL;
  CHECK_OK(cairn_object_save_weights(src, tmp_path("plain.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, &o));
  CHECK_OK(cairn_checkpoint_reader_open(tmp_path("plain.safetensors"), &r));
  CHECK(cairn_checkpoint_reader_metadata_count(r) == 0);
  checked = CAIRN_TRUE;
  CHECK_OK(cairn_checkpoint_reader_verify(r, "model.layer-0.bias", &checked));
  CHECK(checked == CAIRN_FALSE);
  CHECK_ERR(cairn_checkpoint_reader_verify(r, "nope", NULL), CAIRN_NOT_FOUND, "no key named 'nope'");
  cairn_checkpoint_reader_free(r);

  o.metadata_json = "[1, 2]";
  CHECK_ERR(cairn_object_save_weights(src, tmp_path("bad.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, &o),
            CAIRN_INVALID_ARGUMENT, "metadata_json is not a JSON object");
  o.metadata_json = "{\"n\": 3}";
  CHECK_ERR(cairn_object_save_weights(src, tmp_path("bad.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, &o),
            CAIRN_INVALID_ARGUMENT, "the value of 'n' is not a string");
  CHECK(access(tmp_path("bad.safetensors"), F_OK) != 0);
  o.metadata_json = NULL;
  o.separator = "";
  CHECK_ERR(cairn_object_save_weights(src, tmp_path("bad.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, &o),
            CAIRN_INVALID_ARGUMENT, "separator is empty");
  cairn_object_free(src);
  cairn_object_free(dst);
}

static void test_sharded(void) {
  cairn_object *src = mlp(32), *dst = mlp(32);
  cairn_weights_options o = CAIRN_WEIGHTS_OPTIONS_INIT;
  cairn_checkpoint_reader *r = NULL;
  char index[600];
  o.max_shard_bytes = 1024; /* kernel 0 is 8*32*4 = 1024 bytes: three shards at least */
  CHECK_OK(cairn_object_save_weights(src, tmp_path("shards"), CAIRN_WEIGHTS_SAFETENSORS, &o));
  snprintf(index, sizeof index, "%s/model.safetensors.index.json", tmp_path("shards"));
  CHECK(access(index, F_OK) == 0);
  CHECK_OK(cairn_checkpoint_reader_open(tmp_path("shards"), &r));
  CHECK(cairn_checkpoint_reader_format(r) == CAIRN_WEIGHTS_SAFETENSORS && cairn_checkpoint_reader_count(r) == 4);
  cairn_checkpoint_reader_free(r);
  CHECK_OK(cairn_object_load_weights(dst, index, NULL, NULL));
  CHECK(same_weights(src, dst));
  cairn_object_free(src);
  cairn_object_free(dst);
}

static void test_load_errors_leave_variables_unchanged(void) {
  cairn_object *src = mlp(16), *wide = mlp(17), *before = mlp(17), *empty = NULL;
  cairn_weights_options o = CAIRN_WEIGHTS_OPTIONS_INIT;
  size_t loaded = 99;
  CHECK_OK(cairn_object_save_weights(src, tmp_path("src.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, NULL));
  CHECK_OK(cairn_object_save_weights(wide, tmp_path("wide.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, NULL));
  CHECK_OK(cairn_object_load_weights(before, tmp_path("wide.safetensors"), NULL, NULL));

  /* layer-0's shapes differ ([8,17] vs [8,16]): nothing is assigned, not even layer-1's weights. */
  CHECK_ERR(cairn_object_load_weights(wide, tmp_path("src.safetensors"), NULL, &loaded), CAIRN_INVALID_ARGUMENT,
            "cairn_object_load_weights: variable 'layer-0/kernel' has shape [8,17] but 'layer-0/kernel' in");
  CHECK(loaded == 0);
  CHECK(same_weights(wide, before));

  CHECK_ERR(cairn_object_load_weights(wide, tmp_path("missing.safetensors"), NULL, NULL), CAIRN_NOT_FOUND,
            "missing.safetensors");
  CHECK_ERR(cairn_object_load_weights(NULL, tmp_path("src.safetensors"), NULL, NULL), CAIRN_INVALID_ARGUMENT,
            "cairn_object_load_weights");

  /* A truncated file is DATA_LOSS, and leaves the module as it was. */
  {
    FILE *in = fopen(tmp_path("src.safetensors"), "rb");
    FILE *out = fopen(tmp_path("cut.safetensors"), "wb");
    char buf[4096];
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    CHECK(in && out && n > 200);
    if (out) fwrite(buf, 1, n - 100, out);
    if (in) fclose(in);
    if (out) fclose(out);
    CHECK_ERR(cairn_object_load_weights(wide, tmp_path("cut.safetensors"), NULL, NULL), CAIRN_DATA_LOSS,
              "cut.safetensors");
    CHECK(same_weights(wide, before));
  }

  /* A one-layer model: the file's layer-1 values are unused; allow_unused skips them. */
  {
    cairn_object *one = NULL, *d = NULL;
    cairn_dense_options dense = CAIRN_DENSE_OPTIONS_INIT;
    float x[8] = {0}, got[256], want[256];
    int64_t shape[2] = {1, 8};
    cairn_tensor *in = NULL, *out = NULL;
    dense.units = 16;
    CHECK_OK(cairn_sequential_create(g_ctx, NULL, &one));
    CHECK_OK(cairn_dense_create(g_ctx, &dense, &d));
    CHECK_OK(cairn_sequential_add(one, d));
    cairn_object_free(d);
    CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_FLOAT32, shape, 2, x, sizeof x, &in));
    CHECK_OK(cairn_layer_call(one, in, 0, &out));
    cairn_tensor_free(in);
    cairn_tensor_free(out);
    CHECK_ERR(cairn_object_load_weights(one, tmp_path("src.safetensors"), NULL, NULL), CAIRN_INVALID_ARGUMENT,
              "2 values of");
    o.allow_unused = CAIRN_TRUE;
    CHECK_OK(cairn_object_load_weights(one, tmp_path("src.safetensors"), &o, &loaded));
    CHECK(loaded == 2);
    CHECK(values_at(one, "layer-0/kernel", got) == 128 && values_at(src, "layer-0/kernel", want) == 128);
    CHECK(memcmp(got, want, 128 * sizeof(float)) == 0);
    /* The other way round: the big model misses layer-1 in a file of the small one. */
    CHECK_OK(cairn_object_save_weights(one, tmp_path("one.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, NULL));
    CHECK_ERR(cairn_object_load_weights(src, tmp_path("one.safetensors"), NULL, NULL), CAIRN_NOT_FOUND,
              "has no value for 2 of the module's 4 variables: 'layer-1/kernel', 'layer-1/bias'");
    o.allow_unused = CAIRN_FALSE;
    o.allow_missing = CAIRN_TRUE;
    CHECK_OK(cairn_object_load_weights(src, tmp_path("one.safetensors"), &o, &loaded));
    CHECK(loaded == 2);
    cairn_object_free(one);
  }

  CHECK_ERR(cairn_object_save_weights(src, tmp_path("x"), CAIRN_WEIGHTS_AUTO, NULL), CAIRN_INVALID_ARGUMENT,
            "CAIRN_WEIGHTS_AUTO is for reading");
  CHECK_ERR(cairn_object_save_weights(src, tmp_path("x"), (cairn_weights_format)7, NULL), CAIRN_INVALID_ARGUMENT,
            "unknown format 7");
  CHECK_OK(cairn_module_create(g_ctx, "empty", &empty));
  CHECK_ERR(cairn_object_save_weights(empty, tmp_path("x"), CAIRN_WEIGHTS_SAFETENSORS, NULL), CAIRN_INVALID_ARGUMENT,
            "has no variables");
  {
    cairn_weights_options bad = CAIRN_WEIGHTS_OPTIONS_INIT;
    bad.struct_size = 3;
    CHECK_ERR(cairn_object_load_weights(src, tmp_path("src.safetensors"), &bad, NULL), CAIRN_INVALID_ARGUMENT,
              "struct_size");
  }
  cairn_object_free(empty);
  cairn_object_free(src);
  cairn_object_free(wide);
  cairn_object_free(before);
}

static cairn_object *adam(void) {
  cairn_object *opt = NULL;
  cairn_optimizer_options o = CAIRN_OPTIMIZER_OPTIONS_INIT;
  o.kind = CAIRN_OPTIMIZER_ADAM;
  o.learning_rate = 0.25;
  CHECK_OK(cairn_optimizer_create(g_ctx, &o, &opt));
  return opt;
}

static cairn_checkpoint *checkpoint_of(cairn_object *model, cairn_object *opt) {
  const char *names[2] = {"model", "optimizer"};
  cairn_object *objects[2];
  cairn_checkpoint *c = NULL;
  objects[0] = model;
  objects[1] = opt;
  CHECK_OK(cairn_checkpoint_create(g_ctx, names, objects, 2, &c));
  return c;
}

static void test_export_tf_and_restore(void) {
  cairn_object *m1 = mlp(16), *o1 = adam(), *m2 = mlp(16), *o2 = adam();
  cairn_checkpoint *c1 = checkpoint_of(m1, o1), *c2 = checkpoint_of(m2, o2);
  cairn_restore_status *rs = NULL;
  cairn_checkpoint_reader *r = NULL;
  CHECK_OK(cairn_checkpoint_export(c1, tmp_path("tf/ckpt"), CAIRN_WEIGHTS_TF, NULL));
  CHECK(access(tmp_path("tf/ckpt.index"), F_OK) == 0);
  CHECK(access(tmp_path("tf/ckpt.data-00000-of-00001"), F_OK) == 0);

  /* Keras 3's layout: the model's kernels sit under _functional/_operations. */
  CHECK_OK(cairn_checkpoint_reader_open(tmp_path("tf/ckpt"), &r));
  CHECK(cairn_checkpoint_reader_format(r) == CAIRN_WEIGHTS_TF);
  CHECK(key_index(r, "model/_functional/_operations/1/_kernel" VV) != (size_t)-1);
  CHECK(key_index(r, "save_counter" VV) != (size_t)-1);
  cairn_checkpoint_reader_free(r);

  CHECK(!same_weights(m1, m2));
  CHECK_OK(cairn_checkpoint_restore(c2, tmp_path("tf/ckpt"), &rs));
  CHECK_OK(cairn_restore_status_assert_existing_objects_matched(rs));
  CHECK(same_weights(m1, m2));
  cairn_restore_status_free(rs);

  /* Cairn's edge names and no save_counter, then the `.index` path restores the same. */
  {
    cairn_export_options e = CAIRN_EXPORT_OPTIONS_INIT;
    cairn_object *m3 = mlp(16), *o3 = adam();
    cairn_checkpoint *c3 = checkpoint_of(m3, o3);
    e.keras_names = CAIRN_FALSE;
    e.save_counter = CAIRN_FALSE;
    CHECK_OK(cairn_checkpoint_export(c1, tmp_path("tf_cairn_names"), CAIRN_WEIGHTS_TF, &e));
    CHECK_OK(cairn_checkpoint_reader_open(tmp_path("tf_cairn_names.index"), &r));
    CHECK(key_index(r, "model/layer-0/kernel" VV) != (size_t)-1);
    CHECK(key_index(r, "save_counter" VV) == (size_t)-1);
    cairn_checkpoint_reader_free(r);
    CHECK_OK(cairn_checkpoint_restore(c3, tmp_path("tf_cairn_names.index"), &rs));
    CHECK(same_weights(m1, m3));
    cairn_restore_status_free(rs);
    cairn_checkpoint_free(c3);
    cairn_object_free(m3);
    cairn_object_free(o3);
  }

  /* The same checkpoint as safetensors: every value by its checkpoint key; loadable by name. */
  {
    cairn_object *m4 = mlp(16);
    cairn_weights_options o = CAIRN_WEIGHTS_OPTIONS_INIT;
    CHECK_OK(cairn_checkpoint_export(c1, tmp_path("ckpt.safetensors"), CAIRN_WEIGHTS_SAFETENSORS, NULL));
    CHECK_OK(cairn_checkpoint_reader_open(tmp_path("ckpt.safetensors"), &r));
    CHECK(key_index(r, "model/layer-1/bias" VV) != (size_t)-1);
    CHECK(key_index(r, "_CHECKPOINTABLE_OBJECT_GRAPH") == (size_t)-1);
    cairn_checkpoint_reader_free(r);
    CHECK_ERR(cairn_checkpoint_restore(c2, tmp_path("ckpt.safetensors"), &rs), CAIRN_INVALID_ARGUMENT,
              "has no object graph to restore by; load it by name");
    o.prefix = "model/";
    CHECK_ERR(cairn_object_load_weights(m4, tmp_path("ckpt.safetensors"), &o, NULL), CAIRN_NOT_FOUND,
              "has no value for 4");  /* safetensors keys keep the /.ATTRIBUTES suffix */
    CHECK_OK(cairn_checkpoint_export(c1, tmp_path("ckpt.cairn"), CAIRN_WEIGHTS_CAIRN, NULL));
    CHECK_OK(cairn_object_load_weights(m4, tmp_path("ckpt.cairn"), &o, NULL));
    CHECK(same_weights(m1, m4));
    cairn_object_free(m4);
  }
  CHECK_ERR(cairn_checkpoint_export(c1, tmp_path("x"), CAIRN_WEIGHTS_AUTO, NULL), CAIRN_INVALID_ARGUMENT,
            "cairn_checkpoint_export: format CAIRN_WEIGHTS_AUTO");
  CHECK_ERR(cairn_checkpoint_export(c1, "/proc/no/such/dir/ckpt", CAIRN_WEIGHTS_TF, NULL), CAIRN_NOT_FOUND, "");
  cairn_checkpoint_free(c1);
  cairn_checkpoint_free(c2);
  cairn_object_free(m1);
  cairn_object_free(o1);
  cairn_object_free(m2);
  cairn_object_free(o2);
}

static void test_keras_golden_restores(void) {
  cairn_object *m = mlp(16), *o = adam();
  cairn_checkpoint *c = checkpoint_of(m, o);
  cairn_restore_status *rs = NULL;
  cairn_checkpoint_reader *r = NULL;
  cairn_tensor *t = NULL;
  float want[256], got[256];
  CHECK_OK(cairn_checkpoint_restore(c, TF_GOLDEN "keras3_mlp/ckpt", &rs));
  CHECK_OK(cairn_restore_status_assert_existing_objects_matched(rs));
  /* Adam's m and v wait for the slots the first step creates. */
  CHECK_ERR(cairn_restore_status_assert_consumed(rs), CAIRN_FAILED_PRECONDITION, "optimizer/_variables/");
  cairn_restore_status_expect_partial(rs);
  cairn_restore_status_free(rs);
  CHECK_OK(cairn_checkpoint_reader_open(TF_GOLDEN "keras3_mlp/ckpt", &r));
  CHECK_OK(cairn_checkpoint_reader_load(r, g_ctx, "optimizer/_trainable_variables/2" VV, &t));
  CHECK(cairn_tensor_num_elements(t) == 48);
  CHECK_OK(cairn_tensor_read(t, want, 48 * sizeof(float)));
  CHECK(values_at(m, "layer-1/kernel", got) == 48 && memcmp(got, want, sizeof(float) * 48) == 0);
  cairn_tensor_free(t);
  cairn_checkpoint_reader_free(r);

  /* The same golden by directory (a `checkpoint` file) and a TF1 one without an object graph. */
  CHECK_OK(cairn_checkpoint_restore(c, TF_GOLDEN "nested_module", &rs));
  CHECK_ERR(cairn_restore_status_assert_consumed(rs), CAIRN_FAILED_PRECONDITION, "blocks/0/b");
  cairn_restore_status_expect_partial(rs);
  cairn_restore_status_free(rs);
  CHECK_ERR(cairn_checkpoint_restore(c, TF_GOLDEN "tf1_saver/model.ckpt", &rs), CAIRN_NOT_FOUND,
            "a name-based (TF1) checkpoint has no object graph");
  CHECK_ERR(cairn_checkpoint_restore(c, TF_GOLDEN "nowhere/ckpt", &rs), CAIRN_NOT_FOUND, "");
  cairn_checkpoint_free(c);
  cairn_object_free(m);
  cairn_object_free(o);
}

static void test_reader_over_tf_golden(void) {
  cairn_checkpoint_reader *r = NULL;
  char *s = NULL;
  size_t size = 0, i;
  cairn_tensor *t = NULL;
  cairn_bool checked = CAIRN_FALSE;
  CHECK_OK(cairn_checkpoint_reader_open(TF_GOLDEN "dtypes_strings/ckpt", &r));
  CHECK(cairn_checkpoint_reader_format(r) == CAIRN_WEIGHTS_TF);
  CHECK(strcmp(cairn_checkpoint_reader_key(r, 0), "_CHECKPOINTABLE_OBJECT_GRAPH") == 0);
  i = key_index(r, "m/s_matrix" VV);
  CHECK(cairn_checkpoint_reader_dtype(r, i) == CAIRN_STRING && cairn_checkpoint_reader_rank(r, i) == 2);
  CHECK_OK(cairn_checkpoint_reader_load_string_element(r, "m/s_matrix" VV, 3, &s, &size));
  CHECK(size == 4 && memcmp(s, "r1c0", 4) == 0);
  cairn_free(s);
  CHECK_OK(cairn_checkpoint_reader_load_string_element(r, "m/s_matrix" VV, 4, &s, &size));
  CHECK(size == 0);
  cairn_free(s);
  CHECK_ERR(cairn_checkpoint_reader_load_string_element(r, "m/s_matrix" VV, 6, &s, &size), CAIRN_INVALID_ARGUMENT,
            "index 6 is past the 6 elements");
  CHECK_OK(cairn_checkpoint_reader_load_string(r, "m/s_scalar" VV, &s, &size));
  CHECK(size == 17 && memcmp(s, "hello, checkpoint", 17) == 0);
  cairn_free(s);
  CHECK_ERR(cairn_checkpoint_reader_load(r, g_ctx, "m/s_scalar" VV, &t), CAIRN_INVALID_ARGUMENT, "is a string value");
  CHECK_ERR(cairn_checkpoint_reader_load_string(r, "m/i8" VV, &s, &size), CAIRN_INVALID_ARGUMENT,
            "is int8, not a string value");
  i = key_index(r, "m/u16" VV);
  CHECK(cairn_checkpoint_reader_dtype(r, i) == CAIRN_INVALID_DTYPE);
  CHECK(strcmp(cairn_checkpoint_reader_type_name(r, i), "uint16") == 0);
  CHECK_ERR(cairn_checkpoint_reader_load(r, g_ctx, "m/u16" VV, &t), CAIRN_UNIMPLEMENTED, "m/u16");
  CHECK_OK(cairn_checkpoint_reader_verify(r, "m/s_matrix" VV, &checked));
  CHECK(checked == CAIRN_TRUE);
  CHECK(cairn_checkpoint_reader_metadata_count(r) == 0 && cairn_checkpoint_reader_metadata_key(r, 0) == NULL);
  cairn_checkpoint_reader_free(r);

  /* TF1 name-based keys load by name. */
  CHECK_OK(cairn_checkpoint_reader_open(TF_GOLDEN "tf1_saver/model.ckpt", &r));
  CHECK(cairn_checkpoint_reader_format(r) == CAIRN_WEIGHTS_TF);
  CHECK(key_index(r, "_CHECKPOINTABLE_OBJECT_GRAPH") == (size_t)-1);
  CHECK(cairn_checkpoint_reader_count(r) > 0);
  cairn_checkpoint_reader_free(r);
}

static void test_reader_over_safetensors_golden(void) {
  cairn_checkpoint_reader *r = NULL;
  cairn_tensor *t = NULL;
  float a[5];
  size_t i;
  CHECK_OK(cairn_checkpoint_reader_open(ST_GOLDEN "cairn_dtypes.safetensors", &r));
  CHECK(cairn_checkpoint_reader_format(r) == CAIRN_WEIGHTS_SAFETENSORS);
  CHECK(cairn_checkpoint_reader_metadata_count(r) == 1);
  CHECK(strcmp(cairn_checkpoint_reader_metadata_key(r, 0), "format") == 0 &&
        strcmp(cairn_checkpoint_reader_metadata_value(r, 0), "pt") == 0);
  CHECK(cairn_checkpoint_reader_metadata_value(r, 1) == NULL);
  i = key_index(r, "bf16");
  CHECK(cairn_checkpoint_reader_dtype(r, i) == CAIRN_BFLOAT16 && strcmp(cairn_checkpoint_reader_type_name(r, i), "BF16") == 0);
  CHECK_OK(cairn_checkpoint_reader_load(r, g_ctx, "a.weight", &t));
  CHECK_OK(cairn_tensor_read(t, a, sizeof a));
  CHECK(a[0] == 2.0f && a[1] == 0.5f && a[4] == -4.0f);
  cairn_tensor_free(t);
  cairn_checkpoint_reader_free(r);

  CHECK_OK(cairn_checkpoint_reader_open(ST_GOLDEN "f8.safetensors", &r));
  CHECK(cairn_checkpoint_reader_dtype(r, 0) == CAIRN_FLOAT32);
  CHECK(strncmp(cairn_checkpoint_reader_type_name(r, 0), "F8_", 3) == 0);
  cairn_checkpoint_reader_free(r);

  CHECK_OK(cairn_checkpoint_reader_open(ST_GOLDEN "unsigned.safetensors", &r));
  i = key_index(r, "u32");
  CHECK(i != (size_t)-1 && cairn_checkpoint_reader_dtype(r, i) == CAIRN_INVALID_DTYPE);
  CHECK_ERR(cairn_checkpoint_reader_load(r, g_ctx, "u32", &t), CAIRN_UNIMPLEMENTED, "u32");
  cairn_checkpoint_reader_free(r);

  CHECK_OK(cairn_checkpoint_reader_open(ST_GOLDEN "sharded", &r));
  CHECK(cairn_checkpoint_reader_format(r) == CAIRN_WEIGHTS_SAFETENSORS && cairn_checkpoint_reader_count(r) > 1);
  cairn_checkpoint_reader_free(r);
  CHECK_ERR(cairn_checkpoint_reader_open(ST_GOLDEN "absent.safetensors", &r), CAIRN_NOT_FOUND, "absent.safetensors");
}

int main(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/weights_test_XXXXXX", tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) return 2;
  {
    char tf_dir[300];
    snprintf(tf_dir, sizeof tf_dir, "%s/tf", g_dir);
    mkdir(tf_dir, 0700);
  }
  CHECK_OK(cairn_context_create(NULL, &g_ctx));
  test_round_trip_each_format();
  test_prefix_separator_and_safetensors_metadata();
  test_sharded();
  test_load_errors_leave_variables_unchanged();
  test_export_tf_and_restore();
  test_keras_golden_restores();
  test_reader_over_tf_golden();
  test_reader_over_safetensors_golden();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
