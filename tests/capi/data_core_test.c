/* The dataset C API's core (d-core): the dataset handle, from_tensors, from_tensor_slices, range,
 * iterators (next, end of data, position, save/restore at every position, close), errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_util.h"

static cairn_context *g_ctx;

static cairn_tensor *tensor(cairn_dtype dtype, const int64_t *shape, size_t rank, const void *data, size_t nbytes) {
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, dtype, shape, rank, data, nbytes, &t));
  return t;
}

static void test_range(void) {
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_range(g_ctx, 0, 10, 3, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 4);
  CHECK(cairn_dataset_num_components(ds) == 1);
  const char *name = NULL;
  cairn_dtype dtype = CAIRN_INVALID_DTYPE;
  size_t rank = 9;
  CHECK_OK(cairn_dataset_component(ds, 0, &name, &dtype, NULL, &rank));
  CHECK(name && strcmp(name, "value") == 0 && dtype == CAIRN_INT64 && rank == 0);
  CHECK_ERR(cairn_dataset_component(ds, 1, &name, NULL, NULL, NULL), CAIRN_OUT_OF_RANGE, "index 1");
  char *text = NULL;
  CHECK_OK(cairn_dataset_describe(ds, &text));
  CHECK(text && strcmp(text, "range(0, 10, 3)") == 0);
  cairn_free(text);

  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  CHECK(cairn_object_kind_of(it) == CAIRN_OBJECT_ITERATOR);
  const int64_t want[] = {0, 3, 6, 9};
  for (int i = 0; i < 4; ++i) {
    int64_t v = -1;
    CHECK(cairn_iterator_position(it) == i);
    CHECK(data_next_i64(it, 1, 0, &v) == 1 && v == want[i]);
  }
  cairn_tensor *out[1] = {NULL};
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_OUT_OF_RANGE, "range(0, 10, 3): end of data");
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_OUT_OF_RANGE, "end of data");
  CHECK(out[0] == NULL);
  CHECK(cairn_iterator_position(it) == 4);
  CHECK_ERR(cairn_iterator_next(it, out, 2), CAIRN_INVALID_ARGUMENT, "n_outputs is 2");

  cairn_dataset *back = NULL;
  CHECK_OK(cairn_iterator_dataset(it, &back));
  CHECK(cairn_dataset_cardinality(back) == 4);
  cairn_dataset_free(back);

  CHECK_OK(cairn_iterator_close(it));
  CHECK_OK(cairn_iterator_close(it));
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_FAILED_PRECONDITION, "closed");
  cairn_object_free(it);

  CHECK(data_check_every_position(ds, 0, 0) == 4);
  cairn_dataset_free(ds);

  /* Negative steps, empty ranges, step 0. */
  CHECK_OK(cairn_dataset_range(g_ctx, 5, 0, -2, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 3);
  CHECK(data_check_every_position(ds, 0, 0) == 3);
  cairn_dataset_free(ds);
  CHECK_OK(cairn_dataset_range(g_ctx, 3, 3, 1, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 0);
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  CHECK_ERR(cairn_iterator_next(it, out, 1), CAIRN_OUT_OF_RANGE, "end of data");
  cairn_object_free(it);
  cairn_dataset_free(ds);
  ds = NULL;
  CHECK_ERR(cairn_dataset_range(g_ctx, 0, 3, 0, &ds), CAIRN_INVALID_ARGUMENT, "range: step is 0");
  CHECK(ds == NULL);
  CHECK_ERR(cairn_dataset_range(NULL, 0, 3, 1, &ds), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
}

static void test_from_tensors(void) {
  const int64_t shape[] = {2, 3};
  const float x[] = {1, 2, 3, 4, 5, 6};
  const int32_t y = 7;
  cairn_tensor *ts[2] = {tensor(CAIRN_FLOAT32, shape, 2, x, sizeof x), tensor(CAIRN_INT32, NULL, 0, &y, sizeof y)};
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_from_tensors(g_ctx, NULL, ts, 2, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 1);
  const char *name = NULL;
  const int64_t *dims = NULL;
  size_t rank = 0;
  CHECK_OK(cairn_dataset_component(ds, 0, &name, NULL, &dims, &rank));
  CHECK(strcmp(name, "0") == 0 && rank == 2 && dims[0] == 2 && dims[1] == 3);
  CHECK_OK(cairn_dataset_component(ds, 1, &name, NULL, NULL, NULL));
  CHECK(strcmp(name, "1") == 0);
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  cairn_tensor *out[2] = {NULL, NULL};
  CHECK_OK(cairn_iterator_next(it, out, 2));
  float got[6] = {0};
  CHECK_OK(cairn_tensor_read(out[0], got, sizeof got));
  CHECK(memcmp(got, x, sizeof x) == 0);
  int32_t gy = 0;
  CHECK_OK(cairn_tensor_read(out[1], &gy, sizeof gy));
  CHECK(gy == 7);
  cairn_tensor_free(out[0]);
  cairn_tensor_free(out[1]);
  CHECK_ERR(cairn_iterator_next(it, out, 2), CAIRN_OUT_OF_RANGE, "end of data");
  cairn_object_free(it);
  cairn_dataset_free(ds);

  const char *dup[] = {"a", "a"};
  const char *empty[] = {"a", ""};
  CHECK_ERR(cairn_dataset_from_tensors(g_ctx, dup, ts, 2, &ds), CAIRN_INVALID_ARGUMENT, "'a' is given twice");
  CHECK_ERR(cairn_dataset_from_tensors(g_ctx, empty, ts, 2, &ds), CAIRN_INVALID_ARGUMENT, "empty");
  CHECK_ERR(cairn_dataset_from_tensors(g_ctx, NULL, ts, 0, &ds), CAIRN_INVALID_ARGUMENT, "n is 0");
  cairn_tensor *with_null[2] = {ts[0], NULL};
  CHECK_ERR(cairn_dataset_from_tensors(g_ctx, NULL, with_null, 2, &ds), CAIRN_INVALID_ARGUMENT, "tensors[1] is NULL");
  cairn_tensor_free(ts[0]);
  cairn_tensor_free(ts[1]);
}

static void test_from_tensor_slices(void) {
  const int64_t xs[] = {3, 2};
  const int64_t ys[] = {3};
  const float x[] = {1, 2, 3, 4, 5, 6};
  const int64_t y[] = {10, 20, 30};
  cairn_tensor *ts[2] = {tensor(CAIRN_FLOAT32, xs, 2, x, sizeof x), tensor(CAIRN_INT64, ys, 1, y, sizeof y)};
  const char *names[] = {"x", "label"};
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_from_tensor_slices(g_ctx, names, ts, 2, &ds));
  CHECK(cairn_dataset_cardinality(ds) == 3);
  const int64_t *dims = NULL;
  size_t rank = 0;
  cairn_dtype dtype = CAIRN_INVALID_DTYPE;
  CHECK_OK(cairn_dataset_component(ds, 0, NULL, &dtype, &dims, &rank));
  CHECK(dtype == CAIRN_FLOAT32 && rank == 1 && dims[0] == 2);
  CHECK_OK(cairn_dataset_component(ds, 1, NULL, NULL, NULL, &rank));
  CHECK(rank == 0);
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  for (int i = 0; i < 3; ++i) {
    cairn_tensor *out[2] = {NULL, NULL};
    CHECK_OK(cairn_iterator_next(it, out, 2));
    float row[2] = {0, 0};
    int64_t label = 0;
    CHECK_OK(cairn_tensor_read(out[0], row, sizeof row));
    CHECK_OK(cairn_tensor_read(out[1], &label, sizeof label));
    CHECK(row[0] == x[2 * i] && row[1] == x[2 * i + 1] && label == y[i]);
    cairn_tensor_free(out[0]);
    cairn_tensor_free(out[1]);
  }
  cairn_object_free(it);
  CHECK(data_check_every_position(ds, 1, 0) == 3);

  /* Restoring a state into another pipeline, and corrupt states. */
  void *state = NULL;
  size_t n = 0;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  int64_t v = 0;
  CHECK(data_next_i64(it, 2, 1, &v) == 1 && v == 10);
  CHECK_OK(cairn_iterator_save(it, &state, &n));
  CHECK(n > 0 && n < 256);
  cairn_dataset *other = NULL;
  CHECK_OK(cairn_dataset_range(g_ctx, 0, 3, 1, &other));
  cairn_object *it2 = NULL;
  CHECK_OK(cairn_dataset_iterate(other, &it2));
  CHECK_ERR(cairn_iterator_restore(it2, state, n), CAIRN_INVALID_ARGUMENT, "from_tensor_slices(x: float32[3,2]");
  CHECK_ERR(cairn_iterator_restore(it2, state, n), CAIRN_INVALID_ARGUMENT, "range(0, 3, 1)");
  CHECK(data_next_i64(it2, 1, 0, &v) == 1 && v == 0); /* unchanged */
  unsigned char *bytes = (unsigned char *)state;
  bytes[n / 2] ^= 0x40;
  CHECK_ERR(cairn_iterator_restore(it, state, n), CAIRN_DATA_LOSS, "corrupt iterator state");
  bytes[n / 2] ^= 0x40;
  CHECK_ERR(cairn_iterator_restore(it, state, 5), CAIRN_DATA_LOSS, "corrupt iterator state");
  CHECK_ERR(cairn_iterator_restore(it, NULL, 5), CAIRN_INVALID_ARGUMENT, "state is NULL");
  CHECK_OK(cairn_iterator_restore(it, state, n));
  CHECK(data_next_i64(it, 2, 1, &v) == 1 && v == 20);
  cairn_free(state);
  cairn_object_free(it2);
  cairn_dataset_free(other);

  /* A second iterator starts from the beginning. */
  CHECK_OK(cairn_dataset_iterate(ds, &it2));
  CHECK(data_next_i64(it2, 2, 1, &v) == 1 && v == 10);
  cairn_object_free(it2);
  cairn_object_free(it);
  cairn_dataset_free(ds);

  /* Bad input. */
  const int64_t zs[] = {2};
  const int64_t z[] = {1, 2};
  cairn_tensor *bad[2] = {ts[0], tensor(CAIRN_INT64, zs, 1, z, sizeof z)};
  CHECK_ERR(cairn_dataset_from_tensor_slices(g_ctx, names, bad, 2, &ds), CAIRN_INVALID_ARGUMENT, "[3,2]");
  CHECK_ERR(cairn_dataset_from_tensor_slices(g_ctx, names, bad, 2, &ds), CAIRN_INVALID_ARGUMENT, "[2]");
  cairn_tensor_free(bad[1]);
  int64_t s = 1;
  cairn_tensor *scalar[1] = {tensor(CAIRN_INT64, NULL, 0, &s, sizeof s)};
  CHECK_ERR(cairn_dataset_from_tensor_slices(g_ctx, NULL, scalar, 1, &ds), CAIRN_INVALID_ARGUMENT, "scalar");
  cairn_tensor_free(scalar[0]);
  cairn_tensor_free(ts[0]);
  cairn_tensor_free(ts[1]);
}

static void test_null_safety(void) {
  cairn_dataset_free(NULL);
  CHECK(cairn_dataset_num_components(NULL) == 0);
  CHECK(cairn_dataset_cardinality(NULL) == CAIRN_UNKNOWN_CARDINALITY);
  CHECK(cairn_iterator_position(NULL) == -1);
  char *text = NULL;
  CHECK_ERR(cairn_dataset_describe(NULL, &text), CAIRN_INVALID_ARGUMENT, "dataset is NULL");
  CHECK_ERR(cairn_dataset_component(NULL, 0, NULL, NULL, NULL, NULL), CAIRN_INVALID_ARGUMENT, "NULL");
  cairn_object *it = NULL;
  CHECK_ERR(cairn_dataset_iterate(NULL, &it), CAIRN_INVALID_ARGUMENT, "NULL");
  cairn_tensor *out[1] = {NULL};
  CHECK_ERR(cairn_iterator_next(NULL, out, 1), CAIRN_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(cairn_iterator_close(NULL), CAIRN_INVALID_ARGUMENT, "NULL");
  void *state = NULL;
  size_t n = 0;
  CHECK_ERR(cairn_iterator_save(NULL, &state, &n), CAIRN_INVALID_ARGUMENT, "NULL");
  cairn_object *tr = NULL;
  CHECK_OK(cairn_trackable_create(g_ctx, &tr));
  CHECK_ERR(cairn_iterator_next(tr, out, 1), CAIRN_INVALID_ARGUMENT, "is a trackable, expected a iterator");
  CHECK(cairn_iterator_position(tr) == -1);
  cairn_object_free(tr);
}

int main(void) {
  CHECK_OK(cairn_context_create(NULL, &g_ctx));
  test_range();
  test_from_tensors();
  test_from_tensor_slices();
  test_null_safety();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
