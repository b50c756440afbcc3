/* The tf.train.Example section of the C API: build, serialize, parse back, read values and byte
 * strings, parse batches into tensors, and the errors (NULLs, missing keys, malformed bytes). */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static void test_build_serialize_parse(void) {
  cairn_example *ex = NULL;
  const int64_t ids[] = {7, -1};
  const float xy[] = {0.5f, 1.5f};
  const char *words[] = {"hi", "\0x"};
  const size_t lens[] = {2, 2};
  char *bytes = NULL;
  size_t n = 0;
  cairn_example *back = NULL;
  cairn_feature_values v = CAIRN_FEATURE_VALUES_INIT;
  const void *data = NULL;
  size_t len = 0;

  CHECK_OK(cairn_example_create(CAIRN_EXAMPLE, &ex));
  CHECK(cairn_example_get_kind(ex) == CAIRN_EXAMPLE);
  CHECK_OK(cairn_example_set_int64s(ex, "ids", ids, 2));
  CHECK_OK(cairn_example_set_floats(ex, "xy", xy, 2));
  CHECK_OK(cairn_example_set_bytes(ex, "words", (const void *const *)words, lens, 2));
  CHECK_OK(cairn_example_set_floats(ex, "empty", NULL, 0));
  CHECK_ERR(cairn_example_append_step_int64s(ex, "ids", ids, 1), CAIRN_INVALID_ARGUMENT, "this is an Example");
  CHECK_ERR(cairn_example_set_int64s(ex, NULL, ids, 1), CAIRN_INVALID_ARGUMENT, "key is NULL");
  CHECK_ERR(cairn_example_set_int64s(ex, "k", NULL, 1), CAIRN_INVALID_ARGUMENT, "values is NULL");
  CHECK_OK(cairn_example_serialize(ex, &bytes, &n));
  CHECK(n > 0);

  CHECK_OK(cairn_example_parse(CAIRN_EXAMPLE, bytes, n, &back));
  CHECK(cairn_example_feature_count(back) == 4);
  CHECK(strcmp(cairn_example_feature_key(back, 0), "empty") == 0);
  CHECK(strcmp(cairn_example_feature_key(back, 3), "xy") == 0);
  CHECK(cairn_example_feature_key(back, 4) == NULL);
  CHECK_OK(cairn_example_values(back, "ids", CAIRN_EXAMPLE_NO_STEP, &v));
  CHECK(v.kind == CAIRN_FEATURE_INT64 && v.count == 2 && v.int64s[0] == 7 && v.int64s[1] == -1 && v.floats == NULL);
  CHECK_OK(cairn_example_values(back, "xy", CAIRN_EXAMPLE_NO_STEP, &v));
  CHECK(v.kind == CAIRN_FEATURE_FLOAT && v.count == 2 && v.floats[1] == 1.5f);
  CHECK_OK(cairn_example_values(back, "words", CAIRN_EXAMPLE_NO_STEP, &v));
  CHECK(v.kind == CAIRN_FEATURE_BYTES && v.count == 2);
  CHECK_OK(cairn_example_bytes(back, "words", CAIRN_EXAMPLE_NO_STEP, 1, &data, &len));
  CHECK(len == 2 && memcmp(data, "\0x", 2) == 0);
  CHECK_ERR(cairn_example_bytes(back, "words", CAIRN_EXAMPLE_NO_STEP, 2, &data, &len), CAIRN_OUT_OF_RANGE,
            "has 2 byte strings");
  CHECK_ERR(cairn_example_bytes(back, "ids", CAIRN_EXAMPLE_NO_STEP, 0, &data, &len), CAIRN_INVALID_ARGUMENT,
            "is a int64 list, not bytes");
  CHECK_ERR(cairn_example_values(back, "nope", CAIRN_EXAMPLE_NO_STEP, &v), CAIRN_NOT_FOUND, "no feature 'nope'");
  CHECK_ERR(cairn_example_values(back, "ids", 0, &v), CAIRN_INVALID_ARGUMENT, "an Example has no feature lists");

  /* Malformed and truncated bytes: DATA_LOSS, never a crash. */
  CHECK_ERR(cairn_example_parse(CAIRN_EXAMPLE, bytes, n - 1, &back), CAIRN_DATA_LOSS, "malformed protobuf");
  CHECK_ERR(cairn_example_parse((cairn_example_kind)3, bytes, n, &back), CAIRN_INVALID_ARGUMENT, "kind 3");
  cairn_example_free(back);
  cairn_free(bytes);
  cairn_example_free(ex);
  cairn_example_free(NULL);
}

static void test_sequence_example(void) {
  cairn_example *ex = NULL, *back = NULL;
  const int64_t t0[] = {1, 2}, t1[] = {3};
  const int64_t one = 1;
  char *bytes = NULL;
  size_t n = 0, steps = 0;
  cairn_feature_values v = CAIRN_FEATURE_VALUES_INIT;

  CHECK_OK(cairn_example_create(CAIRN_SEQUENCE_EXAMPLE, &ex));
  CHECK_OK(cairn_example_set_int64s(ex, "len", &one, 1));
  CHECK_OK(cairn_example_append_step_int64s(ex, "tok", t0, 2));
  CHECK_OK(cairn_example_append_step_int64s(ex, "tok", t1, 1));
  CHECK_OK(cairn_example_serialize(ex, &bytes, &n));
  CHECK_OK(cairn_example_parse(CAIRN_SEQUENCE_EXAMPLE, bytes, n, &back));
  CHECK(cairn_example_feature_count(back) == 1);
  CHECK(cairn_example_feature_list_count(back) == 1);
  CHECK(strcmp(cairn_example_feature_list_key(back, 0), "tok") == 0);
  CHECK_OK(cairn_example_feature_list_steps(back, "tok", &steps));
  CHECK(steps == 2);
  CHECK_OK(cairn_example_values(back, "tok", 1, &v));
  CHECK(v.kind == CAIRN_FEATURE_INT64 && v.count == 1 && v.int64s[0] == 3);
  CHECK_ERR(cairn_example_values(back, "tok", 2, &v), CAIRN_OUT_OF_RANGE, "has 2 steps");
  CHECK_ERR(cairn_example_feature_list_steps(back, "x", &steps), CAIRN_NOT_FOUND, "no feature list 'x'");
  cairn_example_free(back);
  cairn_free(bytes);
  cairn_example_free(ex);
}

/* Serializes an Example with "a" = int64s and, when given, "b" = bytes. */
static char *make_record(const int64_t *a, size_t na, const char *b, size_t *n) {
  cairn_example *ex = NULL;
  char *bytes = NULL;
  CHECK_OK(cairn_example_create(CAIRN_EXAMPLE, &ex));
  CHECK_OK(cairn_example_set_int64s(ex, "a", a, na));
  if (b) {
    size_t len = strlen(b);
    const void *p = b;
    CHECK_OK(cairn_example_set_bytes(ex, "b", &p, &len, 1));
  }
  CHECK_OK(cairn_example_serialize(ex, &bytes, n));
  cairn_example_free(ex);
  return bytes;
}

static void test_parse_examples(cairn_context *ctx) {
  const int64_t a0[] = {1, 2}, a1[] = {3, 4};
  size_t lens[2];
  char *r0 = make_record(a0, 2, "xyz", &lens[0]);
  char *r1 = make_record(a1, 2, NULL, &lens[1]);
  const void *records[2];
  cairn_feature_spec specs[3] = {CAIRN_FEATURE_SPEC_INIT, CAIRN_FEATURE_SPEC_INIT, CAIRN_FEATURE_SPEC_INIT};
  const int64_t shape[] = {2};
  cairn_tensor *out[5] = {NULL, NULL, NULL, NULL, NULL};
  size_t n_out = 0;
  int64_t got[4];
  uint8_t b[3];
  int64_t lengths[2];
  int64_t dflt = -9;
  cairn_tensor *dflt_t = NULL;
  size_t i;
  records[0] = r0;
  records[1] = r1;

  specs[0].key = "a";
  specs[0].dtype = CAIRN_INT64;
  specs[0].shape = shape;
  specs[0].rank = 1;
  specs[1].key = "b";
  specs[1].kind = CAIRN_VAR_LEN;
  specs[1].dtype = CAIRN_UINT8;
  specs[2].key = "c";
  specs[2].kind = CAIRN_VAR_LEN;
  specs[2].dtype = CAIRN_FLOAT32;
  CHECK_OK(cairn_parse_num_outputs(specs, 3, &n_out));
  CHECK(n_out == 5);
  CHECK_OK(cairn_parse_examples(ctx, records, lens, 2, specs, 3, out, 5));
  CHECK(cairn_tensor_dtype(out[0]) == CAIRN_INT64 && cairn_tensor_rank(out[0]) == 2 && cairn_tensor_dim(out[0], 0) == 2);
  CHECK_OK(cairn_tensor_read(out[0], got, sizeof got));
  CHECK(got[0] == 1 && got[1] == 2 && got[2] == 3 && got[3] == 4);
  CHECK(cairn_tensor_dtype(out[1]) == CAIRN_UINT8 && cairn_tensor_num_elements(out[1]) == 3);
  CHECK_OK(cairn_tensor_read(out[1], b, sizeof b));
  CHECK(memcmp(b, "xyz", 3) == 0);
  CHECK_OK(cairn_tensor_read(out[2], lengths, sizeof lengths));
  CHECK(lengths[0] == 3 && lengths[1] == 0);
  CHECK(cairn_tensor_num_elements(out[3]) == 0);
  for (i = 0; i < 5; ++i) cairn_tensor_free(out[i]);

  /* Errors name the record and the key; outputs stay untouched. */
  memset(out, 0, sizeof out);
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs, 3, out, 4), CAIRN_INVALID_ARGUMENT,
            "the specs give 5 outputs, but n_outputs is 4");
  specs[0].shape = NULL;
  specs[0].rank = 0;
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs, 1, out, 1), CAIRN_INVALID_ARGUMENT,
            "example 0: feature 'a': expected 1 values for shape [], got 2");
  specs[0].key = "b";
  specs[0].dtype = CAIRN_FLOAT32;
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs, 1, out, 1), CAIRN_INVALID_ARGUMENT,
            "example 0: feature 'b' is a bytes list, but its spec asks for float32");
  specs[0].dtype = CAIRN_UINT8;
  specs[0].shape = shape;
  specs[0].rank = 1;
  lens[1] -= 1;
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs + 1, 1, out, 2), CAIRN_DATA_LOSS,
            "parse_examples: example 1: malformed protobuf");
  lens[1] += 1;
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs, 1, out, 1), CAIRN_INVALID_ARGUMENT,
            "example 0: feature 'b': expected 2 values for shape [2], got 3");
  specs[0].key = "z";
  specs[0].dtype = CAIRN_INT64;
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs, 1, out, 1), CAIRN_INVALID_ARGUMENT,
            "example 0: feature 'z' is missing");
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_INT64, NULL, 0, &dflt, sizeof dflt, &dflt_t));
  specs[0].default_value = dflt_t;
  CHECK_OK(cairn_parse_examples(ctx, records, lens, 2, specs, 1, out, 1));
  CHECK_OK(cairn_tensor_read(out[0], got, sizeof got));
  CHECK(got[0] == -9 && got[3] == -9);
  cairn_tensor_free(out[0]);
  CHECK(out[1] == NULL);
  specs[0].kind = (cairn_feature_spec_kind)7;
  CHECK_ERR(cairn_parse_num_outputs(specs, 1, &n_out), CAIRN_INVALID_ARGUMENT, "unknown kind 7");
  specs[0].kind = CAIRN_VAR_LEN;
  specs[1].struct_size = 4;
  CHECK_ERR(cairn_parse_num_outputs(specs, 2, &n_out), CAIRN_INVALID_ARGUMENT, "struct_size");
  CHECK_ERR(cairn_parse_examples(NULL, records, lens, 2, specs, 1, out, 1), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  cairn_tensor_free(dflt_t);
  cairn_free(r0);
  cairn_free(r1);
}

static void test_parse_sequence_examples(cairn_context *ctx) {
  cairn_example *ex = NULL;
  const float s0[] = {1, 2}, s1[] = {3, 4};
  char *rec = NULL;
  size_t len = 0;
  const void *records[2];
  size_t lens[2];
  cairn_feature_spec specs[2] = {CAIRN_FEATURE_SPEC_INIT, CAIRN_FEATURE_SPEC_INIT};
  const int64_t shape[] = {2};
  cairn_tensor *out[5];
  float values[8];
  int64_t lengths[2], step_lengths[2], steps[2];
  size_t i;

  CHECK_OK(cairn_example_create(CAIRN_SEQUENCE_EXAMPLE, &ex));
  CHECK_OK(cairn_example_append_step_floats(ex, "f", s0, 2));
  CHECK_OK(cairn_example_append_step_floats(ex, "f", s1, 2));
  CHECK_OK(cairn_example_serialize(ex, &rec, &len));
  records[0] = rec;
  lens[0] = len;
  records[1] = "";
  lens[1] = 0; /* an empty SequenceExample: no steps */
  specs[0].key = "f";
  specs[0].kind = CAIRN_FIXED_LEN_SEQUENCE;
  specs[0].shape = shape;
  specs[0].rank = 1;
  specs[1].key = "f";
  specs[1].kind = CAIRN_VAR_LEN_SEQUENCE;
  CHECK_ERR(cairn_parse_sequence_examples(ctx, records, lens, 2, specs, 2, out, 5), CAIRN_INVALID_ARGUMENT,
            "another spec has the same key");
  specs[1].key = "g";
  CHECK_OK(cairn_parse_sequence_examples(ctx, records, lens, 2, specs, 2, out, 5));
  CHECK(cairn_tensor_rank(out[0]) == 3 && cairn_tensor_dim(out[0], 1) == 2 && cairn_tensor_dim(out[0], 2) == 2);
  CHECK_OK(cairn_tensor_read(out[0], values, sizeof values));
  CHECK(values[0] == 1 && values[3] == 4 && values[4] == 0 && values[7] == 0);
  CHECK_OK(cairn_tensor_read(out[1], lengths, sizeof lengths));
  CHECK(lengths[0] == 2 && lengths[1] == 0);
  CHECK(cairn_tensor_num_elements(out[2]) == 0 && cairn_tensor_num_elements(out[3]) == 0);
  CHECK_OK(cairn_tensor_read(out[4], steps, sizeof steps));
  CHECK(steps[0] == 0 && steps[1] == 0);
  (void)step_lengths;
  for (i = 0; i < 5; ++i) cairn_tensor_free(out[i]);
  CHECK_ERR(cairn_parse_examples(ctx, records, lens, 2, specs, 1, out, 2), CAIRN_INVALID_ARGUMENT,
            "FixedLenSequence specs are for sequence examples");
  cairn_free(rec);
  cairn_example_free(ex);
}

int main(void) {
  cairn_context *ctx = NULL;
  CHECK_OK(cairn_context_create(NULL, &ctx));
  test_build_serialize_parse();
  test_sequence_example();
  test_parse_examples(ctx);
  test_parse_sequence_examples(ctx);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
