/* Iterators in checkpoints (d-core): an iterator saved beside variables resumes exactly after a
 * restore (direct and deferred), a state of another pipeline is refused, the manager and the
 * checkpoint reader see the ITERATOR_STATE entry. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_util.h"

static cairn_context *g_ctx;

static cairn_object *variable(float a, float b) {
  const int64_t shape[] = {2};
  const float v[] = {a, b};
  cairn_tensor *t = NULL;
  CHECK_OK(cairn_tensor_create(g_ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &t));
  cairn_object *var = NULL;
  CHECK_OK(cairn_variable_create(g_ctx, t, NULL, &var));
  cairn_tensor_free(t);
  return var;
}

static float first_value(cairn_object *var) {
  cairn_tensor *t = NULL;
  float v[2] = {0, 0};
  CHECK_OK(cairn_variable_read(var, &t));
  CHECK_OK(cairn_tensor_read(t, v, sizeof v));
  cairn_tensor_free(t);
  return v[0];
}

/* The pipeline of the test: a shuffled-looking, many-element source (10 elements of a range). */
static cairn_dataset *pipeline(int64_t stop) {
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_range(g_ctx, 100, 100 + stop, 1, &ds));
  return ds;
}

static cairn_checkpoint *checkpoint(cairn_object *weights, cairn_object *it) {
  const char *names[] = {"weights", "iterator"};
  cairn_object *objs[] = {weights, it};
  cairn_checkpoint *ck = NULL;
  CHECK_OK(cairn_checkpoint_create(g_ctx, names, objs, it ? 2 : 1, &ck));
  return ck;
}

static void test_resume(void) {
  char prefix[512];
  data_temp_path(prefix, sizeof prefix, "ckpt_iter");
  cairn_dataset *ds = pipeline(10);
  cairn_object *w = variable(1, 2);
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  int64_t v = 0;
  for (int i = 0; i < 4; ++i) CHECK(data_next_i64(it, 1, 0, &v) == 1 && v == 100 + i);
  cairn_checkpoint *ck = checkpoint(w, it);
  char *path = NULL;
  CHECK_OK(cairn_checkpoint_save(ck, prefix, &path));
  /* The uninterrupted run. */
  int64_t rest[6];
  for (int i = 0; i < 6; ++i) CHECK(data_next_i64(it, 1, 0, &rest[i]) == 1);
  CHECK(data_next_i64(it, 1, 0, &v) == 0);

  /* The checkpoint holds the state as a uint8 vector. */
  cairn_checkpoint_reader *r = NULL;
  CHECK_OK(cairn_checkpoint_reader_open(path, &r));
  int found = 0;
  for (size_t i = 0; i < cairn_checkpoint_reader_count(r); ++i)
    if (strcmp(cairn_checkpoint_reader_key(r, i), "iterator/.ATTRIBUTES/ITERATOR_STATE") == 0) {
      found = 1;
      CHECK(cairn_checkpoint_reader_dtype(r, i) == CAIRN_UINT8 && cairn_checkpoint_reader_rank(r, i) == 1);
      CHECK(cairn_checkpoint_reader_dim(r, i, 0) > 0 && cairn_checkpoint_reader_dim(r, i, 0) < 256);
    }
  CHECK(found);
  cairn_checkpoint_reader_free(r);

  /* A fresh program: new variable, new iterator, restore. */
  cairn_object *w2 = variable(0, 0);
  cairn_object *it2 = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it2));
  CHECK(data_next_i64(it2, 1, 0, &v) == 1); /* wherever it is, the restore replaces it */
  cairn_checkpoint *ck2 = checkpoint(w2, it2);
  cairn_restore_status *rs = NULL;
  CHECK_OK(cairn_checkpoint_restore(ck2, path, &rs));
  CHECK_OK(cairn_restore_status_assert_consumed(rs));
  CHECK(first_value(w2) == 1);
  CHECK(cairn_iterator_position(it2) == 4);
  for (int i = 0; i < 6; ++i) CHECK(data_next_i64(it2, 1, 0, &v) == 1 && v == rest[i]);
  CHECK(data_next_i64(it2, 1, 0, &v) == 0);
  cairn_restore_status_free(rs);
  cairn_checkpoint_free(ck2);
  cairn_object_free(it2);

  /* Deferred: the iterator is attached after the restore. */
  cairn_checkpoint *ck3 = checkpoint(w2, NULL);
  CHECK_OK(cairn_checkpoint_restore(ck3, path, &rs));
  CHECK_ERR(cairn_restore_status_assert_consumed(rs), CAIRN_FAILED_PRECONDITION, "iterator/.ATTRIBUTES/ITERATOR_STATE");
  cairn_object *it3 = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it3));
  CHECK_OK(cairn_object_set(cairn_checkpoint_root(ck3), "iterator", it3));
  CHECK_OK(cairn_restore_status_assert_consumed(rs));
  for (int i = 0; i < 6; ++i) CHECK(data_next_i64(it3, 1, 0, &v) == 1 && v == rest[i]);
  cairn_restore_status_free(rs);
  cairn_checkpoint_free(ck3);
  cairn_object_free(it3);

  /* Another pipeline: a clear INVALID_ARGUMENT naming both. */
  cairn_dataset *other = pipeline(5);
  cairn_object *it4 = NULL;
  CHECK_OK(cairn_dataset_iterate(other, &it4));
  cairn_checkpoint *ck4 = checkpoint(w2, it4);
  rs = NULL;
  CHECK_ERR(cairn_checkpoint_restore(ck4, path, &rs), CAIRN_INVALID_ARGUMENT, "range(100, 110, 1)");
  CHECK_ERR(cairn_checkpoint_restore(ck4, path, &rs), CAIRN_INVALID_ARGUMENT, "range(100, 105, 1)");
  CHECK(data_next_i64(it4, 1, 0, &v) == 1 && v == 100);
  cairn_checkpoint_free(ck4);
  cairn_object_free(it4);
  cairn_dataset_free(other);

  /* Something else where the iterator was. */
  cairn_object *tr = NULL;
  CHECK_OK(cairn_trackable_create(g_ctx, &tr));
  cairn_checkpoint *ck5 = checkpoint(w2, tr);
  CHECK_ERR(cairn_checkpoint_restore(ck5, path, &rs), CAIRN_INVALID_ARGUMENT, "ITERATOR_STATE");
  cairn_checkpoint_free(ck5);
  cairn_object_free(tr);

  /* A closed iterator still saves its position. */
  CHECK_OK(cairn_iterator_close(it));
  CHECK_OK(cairn_checkpoint_save(ck, prefix, NULL));

  cairn_free(path);
  cairn_checkpoint_free(ck);
  cairn_object_free(it);
  cairn_object_free(w);
  cairn_object_free(w2);
  cairn_dataset_free(ds);
}

static void test_manager(void) {
  char dir[512];
  data_temp_path(dir, sizeof dir, "ckpt_manager_iter");
  cairn_dataset *ds = pipeline(10);
  cairn_object *w = variable(3, 4);
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  cairn_checkpoint *ck = checkpoint(w, it);
  cairn_checkpoint_manager *m = NULL;
  CHECK_OK(cairn_checkpoint_manager_create(ck, dir, NULL, &m));
  int64_t v = 0;
  for (int step = 0; step < 3; ++step) {
    CHECK(data_next_i64(it, 1, 0, &v) == 1);
    CHECK_OK(cairn_checkpoint_manager_save(m, -1, NULL));
  }
  CHECK(cairn_checkpoint_manager_count(m) == 3);
  const char *latest = cairn_checkpoint_manager_latest(m);
  CHECK(latest != NULL);

  cairn_object *it2 = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it2));
  cairn_checkpoint *ck2 = checkpoint(w, it2);
  cairn_restore_status *rs = NULL;
  CHECK_OK(cairn_checkpoint_restore(ck2, latest, &rs));
  CHECK(cairn_iterator_position(it2) == 3);
  CHECK(data_next_i64(it2, 1, 0, &v) == 1 && v == 103);
  cairn_restore_status_free(rs);
  cairn_checkpoint_free(ck2);
  cairn_object_free(it2);
  cairn_checkpoint_manager_free(m);
  cairn_checkpoint_free(ck);
  cairn_object_free(it);
  cairn_object_free(w);
  cairn_dataset_free(ds);
}

int main(void) {
  CHECK_OK(cairn_context_create(NULL, &g_ctx));
  test_resume();
  test_manager();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
