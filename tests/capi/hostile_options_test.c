/* Regression tests for what the C API fuzzer (tests/fuzz/capi_fuzzer.cc) found in the runtime
 * behind the entry points: each case once crashed or tripped UBSan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

/* F-b3: prefetch accepts any buffer size; 2^62 once overflowed the read-ahead window. */
static void test_huge_prefetch_buffer(cairn_context *ctx) {
  cairn_dataset *range = NULL, *prefetched = NULL;
  cairn_object *it = NULL;
  cairn_tensor *t = NULL;
  int64_t v = -1;
  CHECK_OK(cairn_dataset_range(ctx, 0, 5, 1, &range));
  CHECK_OK(cairn_dataset_prefetch(range, INT64_C(1) << 62, &prefetched));
  CHECK_OK(cairn_dataset_iterate(prefetched, &it));
  CHECK_OK(cairn_iterator_next(it, &t, 1));
  CHECK(t != NULL);
  if (t) {
    CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
    CHECK(v == 0);
    cairn_tensor_free(t);
  }
  cairn_object_free(it);
  cairn_dataset_free(prefetched);
  cairn_dataset_free(range);
}

/* F-b2: a write to "<dir>/." failed UNKNOWN (rename's EBUSY); it names a directory, not a file. */
static void test_write_to_a_directory_path(cairn_context *ctx) {
  cairn_checkpoint *c = NULL;
  char path[600];
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(path, sizeof path, "%s/.", dir ? dir : "/tmp");
  CHECK_OK(cairn_checkpoint_create(ctx, NULL, NULL, 0, &c));
  CHECK_ERR(cairn_checkpoint_write(c, path), CAIRN_INVALID_ARGUMENT, "");
  cairn_checkpoint_free(c);
}

int main(void) {
  cairn_context *ctx = NULL;
  CHECK_OK(cairn_context_create(NULL, &ctx));
  test_huge_prefetch_buffer(ctx);
  test_write_to_a_directory_path(ctx);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
