/* The file and generator sources of the dataset C API (d-core): text lines, CSV, list_files,
 * TFRecord files (indexed, scanned, compressed, read several at once), generators; save/restore
 * at every position of each; bad input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_util.h"

static cairn_context *g_ctx;

/* Every element's bytes of component `c`, joined with '|', into buf; the status of the first
 * error (or NULL) is returned. */
static cairn_status *join_all(const cairn_dataset *ds, size_t c, char *buf, size_t cap) {
  size_t n = cairn_dataset_num_components(ds);
  cairn_object *it = NULL;
  cairn_status *st = cairn_dataset_iterate(ds, &it);
  buf[0] = 0;
  while (!st) {
    cairn_tensor *out[8] = {0};
    st = cairn_iterator_next(it, out, n);
    if (st) break;
    size_t nb = cairn_tensor_nbytes(out[c]), len = strlen(buf);
    if (len + nb + 2 < cap) {
      if (len) buf[len++] = '|';
      cairn_status *rs = cairn_tensor_read(out[c], buf + len, nb);
      cairn_status_free(rs);
      buf[len + nb] = 0;
    }
    for (size_t i = 0; i < n; ++i) cairn_tensor_free(out[i]);
  }
  cairn_object_free(it);
  if (st && cairn_status_code(st) == CAIRN_OUT_OF_RANGE) {
    cairn_status_free(st);
    st = NULL;
  }
  return st;
}

static void test_text_lines(void) {
  char a[512], b[512], missing[512];
  data_temp_path(a, sizeof a, "a.txt");
  data_temp_path(b, sizeof b, "b.txt");
  data_temp_path(missing, sizeof missing, "no_such_file.txt");
  data_write_file(a, "one\ntwo\r\n\nthree");
  data_write_file(b, "x\n");
  const char *paths[] = {a, b};
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_text_lines(g_ctx, paths, 2, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 5);
  char buf[256];
  CHECK_OK(join_all(ds, 0, buf, sizeof buf));
  CHECK(strcmp(buf, "one|two||three|x") == 0);
  CHECK(data_check_every_position(ds, 0, 1) == 5);
  cairn_dataset_free(ds);

  const char *bad[] = {a, missing};
  CHECK_OK(cairn_dataset_text_lines(g_ctx, bad, 2, &ds));
  CHECK(cairn_dataset_cardinality(ds) == CAIRN_UNKNOWN_CARDINALITY);
  CHECK_ERR(join_all(ds, 0, buf, sizeof buf), CAIRN_NOT_FOUND, missing);
  cairn_dataset_free(ds);
  CHECK_ERR(cairn_dataset_text_lines(g_ctx, paths, 0, &ds), CAIRN_INVALID_ARGUMENT, "no paths");
  CHECK_ERR(cairn_dataset_text_lines(g_ctx, NULL, 1, &ds), CAIRN_INVALID_ARGUMENT, "paths is NULL");
}

static void test_csv(void) {
  char path[512];
  data_temp_path(path, sizeof path, "data.csv");
  data_write_file(path,
                  "id,score,text\n"
                  "1,2.5,\"x,y\"\n"
                  "\n"
                  "3,,\"he said \"\"hi\"\"\"\r\n"
                  "5,0.25,\"multi\nline\"\n"
                  "7,-1,plain\n");
  const char *paths[] = {path};
  const cairn_dtype dtypes[] = {CAIRN_INT64, CAIRN_FLOAT32, CAIRN_STRING};
  const char *defaults[] = {NULL, "9", ""};
  cairn_csv_options o;
  CHECK_OK(cairn_csv_options_init(&o, sizeof o));
  CHECK(o.delimiter == ',' && o.header == 0 && o.na_value == NULL);
  o.column_dtypes = dtypes;
  o.n_columns = 3;
  o.column_defaults = defaults;
  o.header = CAIRN_TRUE;
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_csv(g_ctx, paths, 1, &o, &ds));
  const char *name = NULL;
  cairn_dtype dtype = CAIRN_INVALID_DTYPE;
  size_t rank = 0;
  CHECK_OK(cairn_dataset_component(ds, 2, &name, &dtype, NULL, &rank));
  CHECK(strcmp(name, "text") == 0 && dtype == CAIRN_UINT8 && rank == 1);
  CHECK_OK(cairn_dataset_component(ds, 1, &name, &dtype, NULL, &rank));
  CHECK(strcmp(name, "score") == 0 && dtype == CAIRN_FLOAT32 && rank == 0);
  CHECK(cairn_dataset_cardinality(ds) == 4);
  char buf[256];
  CHECK_OK(join_all(ds, 2, buf, sizeof buf));
  CHECK(strcmp(buf, "x,y|he said \"hi\"|multi\nline|plain") == 0);
  if (strcmp(buf, "x,y|he said \"hi\"|multi\nline|plain") != 0) fprintf(stderr, "csv text: %s\n", buf);
  /* The default of an empty score. */
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  float scores[4] = {0};
  for (int i = 0; i < 4; ++i) {
    cairn_tensor *out[3] = {NULL, NULL, NULL};
    CHECK_OK(cairn_iterator_next(it, out, 3));
    CHECK_OK(cairn_tensor_read(out[1], &scores[i], sizeof scores[i]));
    for (int k = 0; k < 3; ++k) cairn_tensor_free(out[k]);
  }
  CHECK(scores[0] == 2.5f && scores[1] == 9.0f && scores[2] == 0.25f && scores[3] == -1.0f);
  cairn_object_free(it);
  CHECK(data_check_every_position(ds, 0, 0) == 4);
  cairn_dataset_free(ds);

  /* select_columns, names, another delimiter, na_value. */
  char semi[512];
  data_temp_path(semi, sizeof semi, "semi.csv");
  data_write_file(semi, "1;a;10\n2;NA;20\n");
  const char *semi_paths[] = {semi};
  const cairn_dtype two[] = {CAIRN_INT64, CAIRN_INT32};
  const int64_t select[] = {0, 2};
  const char *names[] = {"k", "v"};
  cairn_csv_options s = CAIRN_CSV_OPTIONS_INIT;
  s.column_dtypes = two;
  s.n_columns = 2;
  s.select_columns = select;
  s.column_names = names;
  s.delimiter = ';';
  CHECK_OK(cairn_dataset_csv(g_ctx, semi_paths, 1, &s, &ds));
  CHECK_OK(cairn_dataset_component(ds, 1, &name, &dtype, NULL, NULL));
  CHECK(strcmp(name, "v") == 0 && dtype == CAIRN_INT32);
  CHECK(data_check_every_position(ds, 0, 0) == 2);
  cairn_dataset_free(ds);
  const cairn_dtype three[] = {CAIRN_INT64, CAIRN_STRING, CAIRN_INT64};
  const char *na_defaults[] = {NULL, "missing", NULL};
  cairn_csv_options na = CAIRN_CSV_OPTIONS_INIT;
  na.column_dtypes = three;
  na.n_columns = 3;
  na.column_defaults = na_defaults;
  na.delimiter = ';';
  na.na_value = "NA";
  CHECK_OK(cairn_dataset_csv(g_ctx, semi_paths, 1, &na, &ds));
  CHECK_OK(join_all(ds, 1, buf, sizeof buf));
  CHECK(strcmp(buf, "a|missing") == 0);
  cairn_dataset_free(ds);

  /* Errors when read name the path and the line. */
  char bad[512], where[600];
  data_temp_path(bad, sizeof bad, "bad.csv");
  data_write_file(bad, "1,2\n\"a\nb\",3\nx,4\n5\n6,\n");
  const char *bad_paths[] = {bad};
  const cairn_dtype ints[] = {CAIRN_INT64, CAIRN_INT64};
  cairn_csv_options b = CAIRN_CSV_OPTIONS_INIT;
  b.column_dtypes = ints;
  b.n_columns = 2;
  CHECK_OK(cairn_dataset_csv(g_ctx, bad_paths, 1, &b, &ds));
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  cairn_tensor *out2[2] = {NULL, NULL};
  CHECK_OK(cairn_iterator_next(it, out2, 2));
  cairn_tensor_free(out2[0]);
  cairn_tensor_free(out2[1]);
  snprintf(where, sizeof where, "%s:2: field 0 ('0'): \"a\nb\" is not a valid int64", bad);
  CHECK_ERR(cairn_iterator_next(it, out2, 2), CAIRN_INVALID_ARGUMENT, where);
  snprintf(where, sizeof where, "%s:4: field 0 ('0'): \"x\" is not a valid int64", bad);
  CHECK_ERR(cairn_iterator_next(it, out2, 2), CAIRN_INVALID_ARGUMENT, where);
  snprintf(where, sizeof where, "%s:5: 1 fields, expected 2", bad);
  CHECK_ERR(cairn_iterator_next(it, out2, 2), CAIRN_INVALID_ARGUMENT, where);
  snprintf(where, sizeof where, "%s:6: field 1 ('1') is empty and the column has no default", bad);
  CHECK_ERR(cairn_iterator_next(it, out2, 2), CAIRN_INVALID_ARGUMENT, where);
  CHECK_ERR(cairn_iterator_next(it, out2, 2), CAIRN_OUT_OF_RANGE, "end of data");
  cairn_object_free(it);
  cairn_dataset_free(ds);
  data_write_file(bad, "1,\"open\n");
  CHECK_OK(cairn_dataset_csv(g_ctx, bad_paths, 1, &b, &ds));
  snprintf(where, sizeof where, "%s:1: field 1 has an unterminated quote", bad);
  CHECK_ERR(join_all(ds, 0, buf, sizeof buf), CAIRN_INVALID_ARGUMENT, where);
  cairn_dataset_free(ds);

  /* Errors when built. */
  cairn_csv_options e = CAIRN_CSV_OPTIONS_INIT;
  CHECK_ERR(cairn_dataset_csv(g_ctx, bad_paths, 1, &e, &ds), CAIRN_INVALID_ARGUMENT, "no columns");
  const cairn_dtype boolean[] = {CAIRN_BOOL};
  e.column_dtypes = boolean;
  e.n_columns = 1;
  CHECK_ERR(cairn_dataset_csv(g_ctx, bad_paths, 1, &e, &ds), CAIRN_INVALID_ARGUMENT, "dtype bool");
  const char *bad_default[] = {"abc", NULL};
  b.column_defaults = bad_default;
  CHECK_ERR(cairn_dataset_csv(g_ctx, bad_paths, 1, &b, &ds), CAIRN_INVALID_ARGUMENT, "\"abc\", is not a valid int64");
  CHECK_ERR(cairn_dataset_csv(g_ctx, bad_paths, 1, NULL, &ds), CAIRN_INVALID_ARGUMENT, "opts is NULL");
  char missing[512];
  data_temp_path(missing, sizeof missing, "missing.csv");
  const char *missing_paths[] = {missing};
  b.column_defaults = NULL;
  CHECK_OK(cairn_dataset_csv(g_ctx, missing_paths, 1, &b, &ds));
  CHECK_ERR(join_all(ds, 0, buf, sizeof buf), CAIRN_NOT_FOUND, missing);
  cairn_dataset_free(ds);
  b.header = CAIRN_TRUE; /* names from the header: read when built */
  CHECK_ERR(cairn_dataset_csv(g_ctx, missing_paths, 1, &b, &ds), CAIRN_NOT_FOUND, missing);
}

static void test_list_files(void) {
  char path[512], pattern[512];
  const char *names[] = {"lf_c.txt", "lf_a.txt", "lf_b.txt", "lf_e.txt", "lf_d.txt", "lf_f.txt"};
  for (int i = 0; i < 6; ++i) {
    data_temp_path(path, sizeof path, names[i]);
    data_write_file(path, "x");
  }
  data_temp_path(pattern, sizeof pattern, "lf_*.txt");
  const char *patterns[] = {pattern, pattern};
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_list_files(g_ctx, patterns, 2, CAIRN_FALSE, 0, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 6);
  char buf[4096], want[4096] = "";
  const char *sorted[] = {"lf_a.txt", "lf_b.txt", "lf_c.txt", "lf_d.txt", "lf_e.txt", "lf_f.txt"};
  for (int i = 0; i < 6; ++i) {
    data_temp_path(path, sizeof path, sorted[i]);
    if (i) strcat(want, "|");
    strcat(want, path);
  }
  CHECK_OK(join_all(ds, 0, buf, sizeof buf));
  CHECK(strcmp(buf, want) == 0);
  CHECK(data_check_every_position(ds, 0, 1) == 6);
  cairn_dataset_free(ds);

  /* Shuffled: a permutation, the same for the same seed and iteration. */
  cairn_dataset *s1 = NULL, *s2 = NULL;
  CHECK_OK(cairn_dataset_list_files(g_ctx, patterns, 1, CAIRN_TRUE, 42, &s1));
  CHECK_OK(cairn_dataset_list_files(g_ctx, patterns, 1, CAIRN_TRUE, 42, &s2));
  char b1[4096], b2[4096];
  CHECK_OK(join_all(s1, 0, b1, sizeof b1));
  CHECK_OK(join_all(s2, 0, b2, sizeof b2));
  CHECK(strcmp(b1, b2) == 0 && strlen(b1) == strlen(want));
  for (int i = 0; i < 6; ++i) {
    data_temp_path(path, sizeof path, sorted[i]);
    CHECK(strstr(b1, path) != NULL);
  }
  CHECK(data_check_every_position(s1, 0, 1) == 6);
  cairn_dataset_free(s1);
  cairn_dataset_free(s2);

  data_temp_path(pattern, sizeof pattern, "nothing_*.zzz");
  CHECK_ERR(cairn_dataset_list_files(g_ctx, patterns, 1, CAIRN_FALSE, 0, &ds), CAIRN_NOT_FOUND, "nothing_*.zzz");
}

static void write_records(const char *path, cairn_compression c, int index, const char *const *recs, int n) {
  cairn_record_writer_options wo = CAIRN_RECORD_WRITER_OPTIONS_INIT;
  wo.compression = c;
  wo.write_index = index ? CAIRN_TRUE : CAIRN_FALSE;
  cairn_record_writer *w = NULL;
  CHECK_OK(cairn_record_writer_open(path, &wo, &w));
  for (int i = 0; i < n; ++i) CHECK_OK(cairn_record_writer_write(w, recs[i], strlen(recs[i])));
  CHECK_OK(cairn_record_writer_close(w));
  cairn_record_writer_free(w);
}

static void test_tfrecord(void) {
  const char *ra[] = {"a0", "a1"};
  const char *rb[] = {"b0", "b1", "b2"};
  const char *rc[] = {"c0"};
  for (int gz = 0; gz < 2; ++gz) {
    cairn_compression comp = gz ? CAIRN_COMPRESSION_GZIP : CAIRN_COMPRESSION_NONE;
    char a[512], b[512], c[512];
    data_temp_path(a, sizeof a, gz ? "a.tfrecord.gz" : "a.tfrecord");
    data_temp_path(b, sizeof b, gz ? "b.tfrecord.gz" : "b.tfrecord");
    data_temp_path(c, sizeof c, gz ? "c.tfrecord.gz" : "c.tfrecord");
    write_records(a, comp, 1, ra, 2); /* a has an index sidecar, b and c are scanned */
    write_records(b, comp, 0, rb, 3);
    write_records(c, comp, 0, rc, 1);
    const char *paths[] = {a, b, c};
    cairn_tfrecord_options o;
    CHECK_OK(cairn_tfrecord_options_init(&o, sizeof o));
    CHECK(o.compression == CAIRN_COMPRESSION_NONE && o.num_parallel_reads == 0 && o.buffer_size == 0);
    o.compression = comp;
    cairn_dataset *ds = NULL;
    CHECK_OK(cairn_dataset_tfrecord(g_ctx, paths, 3, &o, &ds));
    CHECK(cairn_dataset_cardinality(ds) == (gz ? CAIRN_UNKNOWN_CARDINALITY : 6));
    char buf[256];
    CHECK_OK(join_all(ds, 0, buf, sizeof buf));
    CHECK(strcmp(buf, "a0|a1|b0|b1|b2|c0") == 0);
    CHECK(data_check_every_position(ds, 0, 1) == 6);
    cairn_dataset_free(ds);

    /* Two files at once, one record each in turn; a slot whose file ends takes the next file. */
    o.num_parallel_reads = 2;
    CHECK_OK(cairn_dataset_tfrecord(g_ctx, paths, 3, &o, &ds));
    CHECK_OK(join_all(ds, 0, buf, sizeof buf));
    CHECK(strcmp(buf, "a0|b0|a1|b1|b2|c0") == 0);
    if (strcmp(buf, "a0|b0|a1|b1|b2|c0") != 0) fprintf(stderr, "parallel reads (gz %d): %s\n", gz, buf);
    CHECK(data_check_every_position(ds, 0, 1) == 6);
    cairn_dataset_free(ds);
    const char *cab[] = {c, a, b};
    o.num_parallel_reads = 3;
    CHECK_OK(cairn_dataset_tfrecord(g_ctx, cab, 3, &o, &ds));
    CHECK_OK(join_all(ds, 0, buf, sizeof buf));
    CHECK(strcmp(buf, "c0|a0|b0|a1|b1|b2") == 0);
    cairn_dataset_free(ds);

    /* A missing file; a corrupt one. */
    char missing[512], corrupt[512];
    data_temp_path(missing, sizeof missing, "missing.tfrecord");
    data_temp_path(corrupt, sizeof corrupt, "corrupt.tfrecord");
    data_write_file(corrupt, "this is not a record file at all");
    const char *bad[] = {a, missing};
    o.num_parallel_reads = 0;
    CHECK_OK(cairn_dataset_tfrecord(g_ctx, bad, 2, &o, &ds));
    CHECK_ERR(join_all(ds, 0, buf, sizeof buf), CAIRN_NOT_FOUND, missing);
    cairn_dataset_free(ds);
    const char *bad2[] = {corrupt};
    CHECK_OK(cairn_dataset_tfrecord(g_ctx, bad2, 1, &o, &ds));
    CHECK_ERR(join_all(ds, 0, buf, sizeof buf), gz ? CAIRN_DATA_LOSS : CAIRN_DATA_LOSS, corrupt);
    cairn_dataset_free(ds);
  }
  cairn_tfrecord_options o = CAIRN_TFRECORD_OPTIONS_INIT;
  o.num_parallel_reads = -5;
  const char *one[] = {"x"};
  cairn_dataset *ds = NULL;
  CHECK_ERR(cairn_dataset_tfrecord(g_ctx, one, 1, &o, &ds), CAIRN_INVALID_ARGUMENT, "num_parallel_reads is -5");
}

/* ---- Generators ---- */

typedef struct {
  int released;
  int calls;
  int mode; /* 0: index * 10 for index < 5; 1: a float instead; 2: an error at index 2; 3: no output */
} gen_state;

static cairn_status *gen(void *user_data, cairn_context *ctx, int64_t index, cairn_tensor **outputs, size_t n,
                         cairn_bool *got) {
  gen_state *g = (gen_state *)user_data;
  ++g->calls;
  if (n != 1) return cairn_status_create(CAIRN_INTERNAL, "wrong n");
  if (index >= 5) {
    *got = CAIRN_FALSE;
    return NULL;
  }
  if (g->mode == 2 && index == 2) return cairn_status_create(CAIRN_UNAVAILABLE, "the sensor is offline");
  *got = CAIRN_TRUE;
  if (g->mode == 3) return NULL;
  if (g->mode == 1) {
    float f = 1.5f;
    return cairn_tensor_create(ctx, CAIRN_FLOAT32, NULL, 0, &f, sizeof f, &outputs[0]);
  }
  int64_t v = index * 10;
  return cairn_tensor_create(ctx, CAIRN_INT64, NULL, 0, &v, sizeof v, &outputs[0]);
}

static void release(void *user_data) { ++((gen_state *)user_data)->released; }

static void test_generator(void) {
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  spec.dtype = CAIRN_INT64;
  const char *names[] = {"v"};
  gen_state g = {0, 0, 0};
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_from_generator(g_ctx, names, &spec, 1, gen, &g, release, &ds));
  CHECK(cairn_dataset_cardinality(ds) == CAIRN_UNKNOWN_CARDINALITY);
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  for (int i = 0; i < 5; ++i) {
    int64_t v = -1;
    CHECK(data_next_i64(it, 1, 0, &v) == 1 && v == i * 10);
  }
  int64_t v = 0;
  CHECK(data_next_i64(it, 1, 0, &v) == 0);
  int calls = g.calls;
  CHECK(data_next_i64(it, 1, 0, &v) == 0);
  CHECK(g.calls == calls); /* not called again after the end */
  CHECK(data_check_every_position(ds, 0, 0) == 5);
  cairn_dataset_free(ds);
  CHECK(g.released == 0); /* the iterator still uses it */
  cairn_object_free(it);
  CHECK(g.released == 1);

  /* Wrong outputs and errors: the element is skipped, the iterator goes on. */
  gen_state f = {0, 0, 1};
  CHECK_OK(cairn_dataset_from_generator(g_ctx, names, &spec, 1, gen, &f, release, &ds));
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  cairn_tensor *out[1] = {NULL};
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_INVALID_ARGUMENT, "component 'v' (element 0) is float32[]");
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_INVALID_ARGUMENT, "(element 1)");
  cairn_object_free(it);
  cairn_dataset_free(ds);
  CHECK(f.released == 1);
  gen_state e = {0, 0, 2};
  CHECK_OK(cairn_dataset_from_generator(g_ctx, NULL, &spec, 1, gen, &e, NULL, &ds));
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  CHECK(data_next_i64(it, 1, 0, &v) == 1 && v == 0);
  CHECK(data_next_i64(it, 1, 0, &v) == 1 && v == 10);
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_UNAVAILABLE, "from_generator (element 2): the sensor is offline");
  CHECK(data_next_i64(it, 1, 0, &v) == 1 && v == 30);
  cairn_object_free(it);
  cairn_dataset_free(ds);
  gen_state u = {0, 0, 3};
  CHECK_OK(cairn_dataset_from_generator(g_ctx, names, &spec, 1, gen, &u, NULL, &ds));
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_INVALID_ARGUMENT, "output 0 ('v') was not set");
  cairn_object_free(it);
  cairn_dataset_free(ds);

  /* Errors when built: release is not called, the caller keeps user_data. */
  gen_state r = {0, 0, 0};
  cairn_tensor_spec bad = CAIRN_TENSOR_SPEC_INIT;
  CHECK_ERR(cairn_dataset_from_generator(g_ctx, names, &bad, 1, gen, &r, release, &ds), CAIRN_INVALID_ARGUMENT, "'v'");
  CHECK_ERR(cairn_dataset_from_generator(g_ctx, names, &spec, 1, NULL, &r, release, &ds), CAIRN_INVALID_ARGUMENT,
            "fn is NULL");
  CHECK_ERR(cairn_dataset_from_generator(g_ctx, names, &spec, 0, gen, &r, release, &ds), CAIRN_INVALID_ARGUMENT,
            "no components");
  CHECK(r.released == 0);
}

int main(void) {
  CHECK_OK(cairn_context_create(NULL, &g_ctx));
  test_text_lines();
  test_csv();
  test_list_files();
  test_tfrecord();
  test_generator();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
