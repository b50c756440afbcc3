/* The dataset transformations' C API (d-xform): batch, padded_batch, unbatch, shuffle, repeat,
 * take, skip, shard, zip, concatenate, enumerate, select and parse_example against TensorFlow's
 * documented examples, bad input naming the transformation, the element and the shapes, and
 * iterator save/restore at every position of small pipelines. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_util.h"

static cairn_context *g_ctx;

/* printf into buf at *len, never past cap. */
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (k > 0) *len = *len + (size_t)k < cap ? *len + (size_t)k : cap - 1;
}

/* The next element as text, "[3]0,1,2; [2,2]1,0,2,2" (int64, int32 and uint8 values), into buf:
 * 1 for an element, 0 at the end, -1 for an error (its message into buf). */
static int next_text(cairn_object *it, size_t n, char *buf, size_t cap) {
  cairn_tensor *out[8] = {0};
  cairn_status *st = cairn_iterator_next(it, out, n);
  buf[0] = 0;
  if (st != NULL) {
    /* the end of data is OUT_OF_RANGE; anything else is a failed element */
    const int result = cairn_status_code(st) == CAIRN_OUT_OF_RANGE ? 0 : -1;
    if (result < 0) snprintf(buf, cap, "%s", cairn_status_message(st));
    cairn_status_free(st);
    return result;
  }
  size_t len = 0;
  for (size_t c = 0; c < n; ++c) {
    if (c) append(buf, cap, &len, "; ");
    append(buf, cap, &len, "[");
    for (size_t d = 0; d < cairn_tensor_rank(out[c]); ++d)
      append(buf, cap, &len, "%s%lld", d ? "," : "", (long long)cairn_tensor_dim(out[c], d));
    append(buf, cap, &len, "]");
    size_t nb = cairn_tensor_nbytes(out[c]);
    unsigned char *raw = malloc(nb + 1);
    CHECK_OK(cairn_tensor_read(out[c], raw, nb));
    int64_t count = cairn_tensor_num_elements(out[c]);
    for (int64_t i = 0; i < count; ++i) {
      long long v = 0;
      switch (cairn_tensor_dtype(out[c])) {
        case CAIRN_INT64: { int64_t x; memcpy(&x, raw + 8 * i, 8); v = x; break; }
        case CAIRN_INT32: { int32_t x; memcpy(&x, raw + 4 * i, 4); v = x; break; }
        case CAIRN_UINT8: v = raw[i]; break;
        default: v = -999999; break;
      }
      append(buf, cap, &len, "%s%lld", i ? "," : "", v);
    }
    free(raw);
    cairn_tensor_free(out[c]);
  }
  return 1;
}

/* Runs `ds` from the start and checks its elements (as next_text; errors as their message
 * fragment prefixed by "!") against want[0..n_want), then the end. Frees ds. */
static void expect(cairn_dataset *ds, const char *const *want, size_t n_want) {
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  size_t n = cairn_dataset_num_components(ds);
  char got[1024];
  for (size_t i = 0; i < n_want; ++i) {
    int r = next_text(it, n, got, sizeof got);
    int ok = want[i][0] == '!' ? r == -1 && strstr(got, want[i] + 1) != NULL : r == 1 && strcmp(got, want[i]) == 0;
    CHECK(ok);
    if (!ok) fprintf(stderr, "  element %zu: got \"%s\", want \"%s\"\n", i, got, want[i]);
  }
  CHECK(next_text(it, n, got, sizeof got) == 0);
  cairn_object_free(it);
  cairn_dataset_free(ds);
}
#define EXPECT(ds, ...)                                              \
  do {                                                               \
    const char *const want_[] = {__VA_ARGS__};                       \
    expect((ds), want_, sizeof want_ / sizeof want_[0]);             \
  } while (0)

static cairn_dataset *range(int64_t start, int64_t stop) {
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_range(g_ctx, start, stop, 1, &ds));
  return ds;
}

/* Transformations that take over their input (they free it), for building chains. */
static cairn_dataset *renamed(cairn_dataset *in, const char *name) {
  const char *from[] = {"value"};
  const char *to[] = {name};
  cairn_dataset *out = NULL;
  CHECK_OK(cairn_dataset_select(in, from, to, 1, &out));
  cairn_dataset_free(in);
  return out;
}
static cairn_dataset *batched(cairn_dataset *in, int64_t n, cairn_bool drop) {
  cairn_dataset *out = NULL;
  CHECK_OK(cairn_dataset_batch(in, n, drop, &out));
  cairn_dataset_free(in);
  return out;
}
static cairn_dataset *shuffled(cairn_dataset *in, int64_t buffer, int64_t seed, cairn_bool reshuffle) {
  cairn_dataset *out = NULL;
  CHECK_OK(cairn_dataset_shuffle(in, buffer, seed, reshuffle, &out));
  cairn_dataset_free(in);
  return out;
}
static cairn_dataset *repeated(cairn_dataset *in, int64_t count) {
  cairn_dataset *out = NULL;
  CHECK_OK(cairn_dataset_repeat(in, count, &out));
  cairn_dataset_free(in);
  return out;
}

/* Element i of the ragged generator: i + 1 copies of i + 1 (TensorFlow's padded_batch example A),
 * or, with user_data set, the lengths it points to (-1 ends). */
static cairn_status *ragged(void *user_data, cairn_context *ctx, int64_t index, cairn_tensor **outputs, size_t n,
                            cairn_bool *got) {
  const int64_t *lens = user_data;
  int64_t len = lens ? lens[index] : (index < 4 ? index + 1 : -1);
  (void)n;
  if (len < 0) {
    *got = CAIRN_FALSE;
    return NULL;
  }
  int64_t values[16];
  for (int64_t i = 0; i < len; ++i) values[i] = lens ? i + 1 : index + 1;
  *got = CAIRN_TRUE;
  return cairn_tensor_create(ctx, CAIRN_INT64, &len, 1, values, (size_t)len * 8, &outputs[0]);
}

static cairn_dataset *ragged_dataset(const int64_t *lens) {
  const char *names[] = {"v"};
  int64_t dims[] = {-1};
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  spec.dtype = CAIRN_INT64;
  spec.shape = dims;
  spec.rank = 1;
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_from_generator(g_ctx, names, &spec, 1, ragged, (void *)lens, NULL, &ds));
  return ds;
}

static void test_batch(void) {
  EXPECT(batched(range(0, 8), 3, 0), "[3]0,1,2", "[3]3,4,5", "[2]6,7");
  cairn_dataset *ds = batched(range(0, 8), 3, 1);
  CHECK(cairn_dataset_cardinality(ds) == 2);
  const int64_t *shape = NULL;
  size_t rank = 0;
  CHECK_OK(cairn_dataset_component(ds, 0, NULL, NULL, &shape, &rank));
  CHECK(rank == 1 && shape[0] == 3);
  char *text = NULL;
  CHECK_OK(cairn_dataset_describe(ds, &text));
  CHECK(text && strcmp(text, "range(0, 8, 1).batch(3, drop_remainder=true)") == 0);
  cairn_free(text);
  EXPECT(ds, "[3]0,1,2", "[3]3,4,5");

  cairn_dataset *r = range(0, 8);
  ds = NULL;
  CHECK_ERR(cairn_dataset_batch(r, 0, 0, &ds), CAIRN_INVALID_ARGUMENT, "batch: batch_size is 0, expected >= 1");
  CHECK(ds == NULL);
  CHECK_ERR(cairn_dataset_batch(NULL, 2, 0, &ds), CAIRN_INVALID_ARGUMENT, "cairn_dataset_batch: in is NULL");
  CHECK_ERR(cairn_dataset_batch(r, 2, 0, NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
  cairn_dataset_free(r);
  /* elements of different shapes in one batch */
  EXPECT(batched(ragged_dataset(NULL), 2, 0),
         "!batch: component 'v' of element 1 has shape [2], but element 0 (the first of its batch) has shape [1]",
         "!batch: component 'v' of element 3 has shape [4], but element 2 (the first of its batch) has shape [3]");
}

static void test_padded_batch(void) {
  cairn_dataset *a = ragged_dataset(NULL), *ds = NULL;
  CHECK_OK(cairn_dataset_padded_batch(a, 2, 0, NULL, NULL, &ds));
  EXPECT(ds, "[2,2]1,0,2,2", "[2,4]3,3,3,0,4,4,4,4");
  int64_t five[] = {5};
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  spec.shape = five;
  spec.rank = 1;
  CHECK_OK(cairn_dataset_padded_batch(a, 2, 0, &spec, NULL, &ds));
  EXPECT(ds, "[2,5]1,0,0,0,0,2,2,0,0,0", "[2,5]3,3,3,0,0,4,4,4,4,0");
  int64_t minus_one = -1;
  cairn_tensor *pad = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_INT64, NULL, 0, &minus_one, 8, &pad));
  CHECK_OK(cairn_dataset_padded_batch(a, 2, 0, &spec, &pad, &ds));
  EXPECT(ds, "[2,5]1,-1,-1,-1,-1,2,2,-1,-1,-1", "[2,5]3,3,3,-1,-1,4,4,4,4,-1");
  /* an element larger than its padded shape: that batch fails naming it */
  int64_t three[] = {3};
  spec.shape = three;
  CHECK_OK(cairn_dataset_padded_batch(a, 2, 0, &spec, NULL, &ds));
  EXPECT(ds, "[2,3]1,0,0,2,2,0",
         "!padded_batch: component 'v' of element 3 has shape [4], larger than its padded shape [3]");
  /* build-time errors */
  CHECK_ERR(cairn_dataset_padded_batch(a, 0, 0, NULL, NULL, &ds), CAIRN_INVALID_ARGUMENT,
            "padded_batch: batch_size is 0");
  int64_t two_dims[] = {5, 5};
  spec.shape = two_dims;
  spec.rank = 2;
  CHECK_ERR(cairn_dataset_padded_batch(a, 2, 0, &spec, NULL, &ds), CAIRN_INVALID_ARGUMENT,
            "padded_batch: component 'v' is int64[-1], but its padded shape [5,5] has rank 2");
  int32_t zero = 0;
  cairn_tensor *pad32 = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_INT32, NULL, 0, &zero, 4, &pad32));
  CHECK_ERR(cairn_dataset_padded_batch(a, 2, 0, NULL, &pad32, &ds), CAIRN_INVALID_ARGUMENT,
            "is int32[], expected a int64 scalar");
  cairn_tensor_free(pad32);
  cairn_tensor_free(pad);
  cairn_dataset_free(a);
}

static void test_unbatch(void) {
  static const int64_t lens[] = {3, 2, 4, -1};
  cairn_dataset *ds = NULL, *g = ragged_dataset(lens);
  CHECK_OK(cairn_dataset_unbatch(g, &ds));
  cairn_dataset_free(g);
  EXPECT(ds, "[]1", "[]2", "[]3", "[]1", "[]2", "[]1", "[]2", "[]3", "[]4");
  cairn_dataset *b = batched(range(0, 6), 3, 1);
  CHECK_OK(cairn_dataset_unbatch(b, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 6);
  EXPECT(ds, "[]0", "[]1", "[]2", "[]3", "[]4", "[]5");
  cairn_dataset_free(b);
  cairn_dataset *r = range(0, 3);
  CHECK_ERR(cairn_dataset_unbatch(r, &ds), CAIRN_INVALID_ARGUMENT,
            "unbatch: component 'value' is a scalar (int64[]); every component needs a batch dimension");
  cairn_dataset_free(r);
}

static void test_shuffle(void) {
  cairn_dataset *ds = shuffled(range(0, 10), 4, 1, 1);
  CHECK(cairn_dataset_cardinality(ds) == 10);
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  int seen[10] = {0}, in_order = 1;
  for (int i = 0; i < 10; ++i) {
    int64_t v = -1;
    CHECK(data_next_i64(it, 1, 0, &v) == 1);
    if (v >= 0 && v < 10) seen[v]++;
    if (v != i) in_order = 0;
  }
  int64_t v;
  CHECK(data_next_i64(it, 1, 0, &v) == 0);
  for (int i = 0; i < 10; ++i) CHECK(seen[i] == 1);
  CHECK(!in_order);
  cairn_object_free(it);
  cairn_dataset_free(ds);
  cairn_dataset *r = range(0, 10);
  ds = NULL;
  CHECK_ERR(cairn_dataset_shuffle(r, 0, 1, 1, &ds), CAIRN_INVALID_ARGUMENT, "shuffle: buffer_size is 0, expected >= 1");
  CHECK_ERR(cairn_dataset_shuffle(r, -1, 1, 1, &ds), CAIRN_INVALID_ARGUMENT, "shuffle: buffer_size is -1");
  CHECK(ds == NULL);
  cairn_dataset_free(r);
}

static void test_repeat_take_skip_shard(void) {
  cairn_dataset *ds = NULL, *r = range(1, 4);
  CHECK_OK(cairn_dataset_repeat(r, 3, &ds));
  EXPECT(ds, "[]1", "[]2", "[]3", "[]1", "[]2", "[]3", "[]1", "[]2", "[]3");
  CHECK_ERR(cairn_dataset_repeat(r, -2, &ds), CAIRN_INVALID_ARGUMENT, "repeat: count is -2, expected >= -1");
  cairn_dataset_free(r);
  r = range(0, 10);
  CHECK_OK(cairn_dataset_take(r, 3, &ds));
  EXPECT(ds, "[]0", "[]1", "[]2");
  CHECK_OK(cairn_dataset_skip(r, 7, &ds));
  EXPECT(ds, "[]7", "[]8", "[]9");
  CHECK_OK(cairn_dataset_shard(r, 3, 0, &ds));
  EXPECT(ds, "[]0", "[]3", "[]6", "[]9");
  CHECK_OK(cairn_dataset_shard(r, 3, 1, &ds));
  EXPECT(ds, "[]1", "[]4", "[]7");
  CHECK_ERR(cairn_dataset_take(r, -3, &ds), CAIRN_INVALID_ARGUMENT, "take: count is -3");
  CHECK_ERR(cairn_dataset_skip(r, -3, &ds), CAIRN_INVALID_ARGUMENT, "skip: count is -3");
  CHECK_ERR(cairn_dataset_shard(r, 0, 0, &ds), CAIRN_INVALID_ARGUMENT, "shard: num_shards is 0, expected >= 1");
  CHECK_ERR(cairn_dataset_shard(r, 3, 3, &ds), CAIRN_INVALID_ARGUMENT, "shard: index is 3, expected in [0, 3)");
  cairn_dataset_free(r);
}

static void test_zip_concatenate_enumerate_select(void) {
  cairn_dataset *a = renamed(range(1, 4), "a"), *b = renamed(range(4, 7), "b"),
                *c = renamed(batched(range(7, 13), 2, 0), "c"), *d = renamed(range(13, 15), "d"), *ds = NULL;
  const cairn_dataset *ab[] = {a, b};
  CHECK_OK(cairn_dataset_zip(ab, 2, &ds));
  EXPECT(ds, "[]1; []4", "[]2; []5", "[]3; []6");
  const cairn_dataset *abc[] = {a, b, c};
  CHECK_OK(cairn_dataset_zip(abc, 3, &ds));
  EXPECT(ds, "[]1; []4; [2]7,8", "[]2; []5; [2]9,10", "[]3; []6; [2]11,12");
  const cairn_dataset *ad[] = {a, d};
  CHECK_OK(cairn_dataset_zip(ad, 2, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 2);
  EXPECT(ds, "[]1; []13", "[]2; []14");
  const cairn_dataset *aa[] = {a, a};
  CHECK_ERR(cairn_dataset_zip(aa, 2, &ds), CAIRN_INVALID_ARGUMENT, "zip: component 'a' is in two inputs");
  CHECK_ERR(cairn_dataset_zip(aa, 0, &ds), CAIRN_INVALID_ARGUMENT, "n is 0");
  const cairn_dataset *an[] = {a, NULL};
  CHECK_ERR(cairn_dataset_zip(an, 2, &ds), CAIRN_INVALID_ARGUMENT, "ins[1] is NULL");

  cairn_dataset *x = range(1, 4), *y = range(4, 8);
  CHECK_OK(cairn_dataset_concatenate(x, y, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 7);
  EXPECT(ds, "[]1", "[]2", "[]3", "[]4", "[]5", "[]6", "[]7");
  CHECK_ERR(cairn_dataset_concatenate(x, a, &ds), CAIRN_INVALID_ARGUMENT,
            "concatenate: component 0 is 'value' int64[] in the first input but 'a' int64[] in the second");

  CHECK_OK(cairn_dataset_enumerate(x, 5, &ds));
  const char *name = NULL;
  CHECK_OK(cairn_dataset_component(ds, 0, &name, NULL, NULL, NULL));
  CHECK(name && strcmp(name, "index") == 0);
  cairn_dataset *twice = NULL;
  CHECK_ERR(cairn_dataset_enumerate(ds, 0, &twice), CAIRN_INVALID_ARGUMENT,
            "enumerate: the input already has a component 'index'");
  EXPECT(ds, "[]5; []1", "[]6; []2", "[]7; []3");

  const char *missing[] = {"nope"};
  CHECK_ERR(cairn_dataset_select(x, missing, NULL, 1, &ds), CAIRN_NOT_FOUND, "select: no component 'nope'");
  const char *dup[] = {"value", "value"};
  CHECK_ERR(cairn_dataset_select(x, dup, NULL, 2, &ds), CAIRN_INVALID_ARGUMENT, "selected twice");
  cairn_dataset_free(x);
  cairn_dataset_free(y);
  cairn_dataset_free(a);
  cairn_dataset_free(b);
  cairn_dataset_free(c);
  cairn_dataset_free(d);
}

static void test_parse_example(void) {
  /* Example{features{feature{key: "a" value{int64_list{value: [7, 8]}}}}}, written by hand */
  static const unsigned char rec[] = {0x0a, 0x0d, 0x0a, 0x0b, 0x0a, 0x01, 'a', 0x12, 0x06,
                                      0x1a, 0x04, 0x0a, 0x02, 0x07, 0x08};
  int64_t len = sizeof rec;
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_UINT8, &len, 1, rec, sizeof rec, &t));
  const char *names[] = {"record"};
  cairn_dataset *src = NULL, *ds = NULL;
  CHECK_OK(cairn_dataset_from_tensors(g_ctx, names, &t, 1, &src));
  cairn_feature_spec spec = CAIRN_FEATURE_SPEC_INIT;
  spec.key = "a";
  spec.kind = CAIRN_VAR_LEN;
  spec.dtype = CAIRN_INT64;
  CHECK_OK(cairn_dataset_parse_example(src, "record", &spec, 1, &ds));
  CHECK(cairn_dataset_num_components(ds) == 2);
  const char *name = NULL;
  CHECK_OK(cairn_dataset_component(ds, 0, &name, NULL, NULL, NULL));
  CHECK(name && strcmp(name, "a/indices") == 0);
  CHECK_OK(cairn_dataset_component(ds, 1, &name, NULL, NULL, NULL));
  CHECK(name && strcmp(name, "a/values") == 0);
  EXPECT(ds, "[2,1]0,1; [2]7,8");
  int64_t two = 2;
  spec.kind = CAIRN_FIXED_LEN;
  spec.shape = &two;
  spec.rank = 1;
  CHECK_OK(cairn_dataset_parse_example(src, "record", &spec, 1, &ds));
  EXPECT(ds, "[2]7,8");
  spec.key = "b";
  CHECK_OK(cairn_dataset_parse_example(src, "record", &spec, 1, &ds));
  EXPECT(ds, "!parse_example (element 0): parse_examples: example 0: feature 'b' is missing");
  CHECK_ERR(cairn_dataset_parse_example(src, "nope", &spec, 1, &ds), CAIRN_NOT_FOUND,
            "parse_example: no component 'nope'");
  CHECK_ERR(cairn_dataset_parse_example(src, NULL, &spec, 1, &ds), CAIRN_INVALID_ARGUMENT, "component is NULL");
  spec.dtype = CAIRN_INT32;
  CHECK_ERR(cairn_dataset_parse_example(src, "record", &spec, 1, &ds), CAIRN_INVALID_ARGUMENT,
            "dtype int32 is not float32, int64 or uint8");
  cairn_dataset *r = range(0, 2);
  CHECK_ERR(cairn_dataset_parse_example(r, "value", &spec, 1, &ds), CAIRN_INVALID_ARGUMENT,
            "parse_example: component 'value' is int64[], expected a uint8 vector");
  cairn_dataset_free(r);
  cairn_dataset_free(src);
  cairn_tensor_free(t);
}

/* Saves after every element of a run of `ds`, restores each state into a fresh iterator and checks
 * that it continues with exactly the rest of the run (as next_text). Returns the largest state. */
enum { kMaxRun = 48 };
typedef struct {
  char text[kMaxRun][256]; /* element k as next_text */
  void *state[kMaxRun + 1]; /* the state before element k */
  size_t size[kMaxRun + 1];
  int count;                /* elements seen */
  int ended;                /* the run ended before kMaxRun */
} run_record;

/* A fresh iterator restored from record->state[p] must give elements p.. and then end. */
static void expect_resume(const cairn_dataset *ds, const run_record *record, int p) {
  const size_t n = cairn_dataset_num_components(ds);
  cairn_object *fresh = NULL;
  char got[256];
  CHECK_OK(cairn_dataset_iterate(ds, &fresh));
  CHECK_OK(cairn_iterator_restore(fresh, record->state[p], record->size[p]));
  for (int k = p; k < record->count; ++k) {
    const int same = next_text(fresh, n, got, sizeof got) == 1 && strcmp(got, record->text[k]) == 0;
    CHECK(same);
    if (!same) fprintf(stderr, "  restored at %d, element %d: got \"%s\", expected \"%s\"\n", p, k, got, record->text[k]);
  }
  if (record->ended) CHECK(next_text(fresh, n, got, sizeof got) == 0);
  cairn_object_free(fresh);
}

/* Saves before every element of a run of `ds`, then checks the resume from each saved state.
 * Returns the largest state. */
static size_t check_every_position(const cairn_dataset *ds) {
  static run_record record;
  const size_t n = cairn_dataset_num_components(ds);
  size_t largest = 0;
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  record.count = 0;
  record.ended = 0;
  while (record.count < kMaxRun) {
    const int k = record.count;
    CHECK_OK(cairn_iterator_save(it, &record.state[k], &record.size[k]));
    largest = record.size[k] > largest ? record.size[k] : largest;
    const int r = next_text(it, n, record.text[k], sizeof record.text[k]);
    CHECK(r >= 0);
    if (r <= 0) {
      record.ended = 1;
      break;
    }
    record.count++;
  }
  if (!record.ended) CHECK_OK(cairn_iterator_save(it, &record.state[kMaxRun], &record.size[kMaxRun]));
  for (int p = 0; p <= record.count; ++p) {
    expect_resume(ds, &record, p);
    cairn_free(record.state[p]);
  }
  cairn_object_free(it);
  return largest;
}

/* The state of an indexable pipeline: the iterator object's header (magic, fingerprint, the
 * pipeline's description, epoch, position, end flag, checksum) around one index. */
static size_t indexable_state_bound(const cairn_dataset *ds) {
  char *text = NULL;
  CHECK_OK(cairn_dataset_describe(ds, &text));
  size_t bound = 96 + (text ? strlen(text) : 0);
  cairn_free(text);
  return bound;
}

static void test_save_restore(void) {
  /* range -> shuffle -> batch -> repeat: indexable, the state is a few integers */
  cairn_dataset *ds = repeated(batched(shuffled(range(0, 10), 4, 1, 1), 3, 0), 2);
  size_t largest = check_every_position(ds);
  CHECK(largest <= indexable_state_bound(ds));
  cairn_dataset_free(ds);
  /* tensor_slices -> shuffle(reshuffle) -> repeat(3) -> batch with remainder */
  int64_t values[7] = {10, 11, 12, 13, 14, 15, 16}, seven = 7;
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_INT64, &seven, 1, values, sizeof values, &t));
  cairn_dataset *slices = NULL;
  CHECK_OK(cairn_dataset_from_tensor_slices(g_ctx, NULL, &t, 1, &slices));
  cairn_tensor_free(t);
  ds = batched(repeated(shuffled(slices, 3, 5, 1), 3), 4, 0);
  CHECK(cairn_dataset_cardinality(ds) == 6);
  largest = check_every_position(ds);
  CHECK(largest <= indexable_state_bound(ds));
  cairn_dataset_free(ds);
  /* a generator (a stream): unbatch, then a buffered shuffle that saves its buffer */
  static const int64_t lens[] = {3, 0, 2, 4, 1, -1};
  cairn_dataset *u = NULL, *g = ragged_dataset(lens);
  CHECK_OK(cairn_dataset_unbatch(g, &u));
  cairn_dataset_free(g);
  ds = repeated(shuffled(u, 4, 2, 1), 2);
  CHECK(check_every_position(ds) > indexable_state_bound(ds) + 4 * 32);
  cairn_dataset_free(ds);
}

int main(void) {
  CHECK_OK(cairn_context_create(NULL, &g_ctx));
  test_batch();
  test_padded_batch();
  test_unbatch();
  test_shuffle();
  test_repeat_take_skip_shard();
  test_zip_concatenate_enumerate_select();
  test_parse_example();
  test_save_restore();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
