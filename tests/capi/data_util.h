/* Helpers of the dataset C tests (d-core): pulling int64 scalars and byte strings from iterators. */
#ifndef CAIRN_TESTS_CAPI_DATA_UTIL_H_
#define CAIRN_TESTS_CAPI_DATA_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static inline void data_temp_path(char *buf, size_t n, const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(buf, n, "%s/%s", dir ? dir : "/tmp", name);
}

static inline void data_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fwrite(text, 1, strlen(text), f);
  fclose(f);
}

/* The int64 scalar of component `c` of the next element into *v: 1 for an element, 0 at the end
 * (OUT_OF_RANGE), -1 on another error (printed). `n` is the number of components (at most 8). */
static inline int data_next_i64(cairn_object *it, size_t n, size_t c, int64_t *v) {
  cairn_tensor *out[8] = {0};
  cairn_status *st = cairn_iterator_next(it, out, n);
  if (st) {
    int end = cairn_status_code(st) == CAIRN_OUT_OF_RANGE;
    if (!end) fprintf(stderr, "data_next_i64: %s\n", cairn_status_message(st));
    cairn_status_free(st);
    return end ? 0 : -1;
  }
  cairn_status *rs = cairn_tensor_read(out[c], v, sizeof *v);
  int ok = rs == NULL;
  cairn_status_free(rs);
  for (size_t i = 0; i < n; ++i) cairn_tensor_free(out[i]);
  return ok ? 1 : -1;
}

/* The bytes of uint8-vector component `c` of the next element, NUL-terminated, into buf (cap
 * bytes): 1 for an element, 0 at the end, -1 on another error (its message into buf). */
static inline int data_next_bytes(cairn_object *it, size_t n, size_t c, char *buf, size_t cap) {
  cairn_tensor *out[8] = {0};
  cairn_status *st = cairn_iterator_next(it, out, n);
  buf[0] = 0;
  if (st) {
    int end = cairn_status_code(st) == CAIRN_OUT_OF_RANGE;
    if (!end) snprintf(buf, cap, "%s", cairn_status_message(st));
    cairn_status_free(st);
    return end ? 0 : -1;
  }
  size_t nb = cairn_tensor_nbytes(out[c]);
  int ok = cairn_tensor_dtype(out[c]) == CAIRN_UINT8 && nb < cap;
  if (ok) {
    cairn_status *rs = cairn_tensor_read(out[c], buf, nb);
    ok = rs == NULL;
    cairn_status_free(rs);
    buf[nb] = 0;
  }
  for (size_t i = 0; i < n; ++i) cairn_tensor_free(out[i]);
  return ok ? 1 : -1;
}

/* Saves `it` after every element of a run of `ds`, restores each state into a fresh iterator and
 * checks that it yields exactly the rest of the run (by the int64 component `c`, or by the bytes
 * of component `c` when bytes is set). Returns the number of elements. */
static inline int data_check_every_position(const cairn_dataset *ds, size_t c, int bytes) {
  size_t n = cairn_dataset_num_components(ds);
  enum { kMax = 64 };
  char seen[kMax][512];
  void *states[kMax + 1];
  size_t sizes[kMax + 1];
  cairn_object *it = NULL;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  int count = 0;
  for (;;) {
    CHECK_OK(cairn_iterator_save(it, &states[count], &sizes[count]));
    int r;
    if (bytes) {
      r = data_next_bytes(it, n, c, seen[count], sizeof seen[count]);
    } else {
      int64_t v = 0;
      r = data_next_i64(it, n, c, &v);
      snprintf(seen[count], sizeof seen[count], "%lld", (long long)v);
    }
    CHECK(r >= 0);
    if (r <= 0) break;
    if (++count == kMax) break;
  }
  for (int p = 0; p <= count; ++p) {
    cairn_object *fresh = NULL;
    CHECK_OK(cairn_dataset_iterate(ds, &fresh));
    CHECK_OK(cairn_iterator_restore(fresh, states[p], sizes[p]));
    CHECK(cairn_iterator_position(fresh) == p);
    for (int k = p; k <= count; ++k) {
      char got[512];
      int r;
      if (bytes) {
        r = data_next_bytes(fresh, n, c, got, sizeof got);
      } else {
        int64_t v = 0;
        r = data_next_i64(fresh, n, c, &v);
        snprintf(got, sizeof got, "%lld", (long long)v);
      }
      if (k == count) {
        CHECK(r == 0);
      } else {
        CHECK(r == 1 && strcmp(got, seen[k]) == 0);
        if (r != 1 || strcmp(got, seen[k]) != 0)
          fprintf(stderr, "  position %d, element %d: got \"%s\", expected \"%s\"\n", p, k, got, seen[k]);
      }
    }
    cairn_object_free(fresh);
    cairn_free(states[p]);
  }
  cairn_object_free(it);
  return count;
}

#endif /* CAIRN_TESTS_CAPI_DATA_UTIL_H_ */
