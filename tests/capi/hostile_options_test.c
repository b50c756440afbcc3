/* Regression tests for what the C API fuzzer (tests/fuzz/capi_fuzzer.cc) found in the runtime
 * behind the entry points: each case once crashed, tripped UBSan, gave an undocumented code or a
 * message that did not name the C function. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* "<TEST_TMPDIR>/.": a path that names a directory, where a file is to be written. */
static const char *directory_dot(void) {
  static char path[600];
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(path, sizeof path, "%s/.", dir ? dir : "/tmp");
  return path;
}

/* F-b2: a write to "<dir>/." failed UNKNOWN (rename's EBUSY); it names a directory, not a file. */
static void test_write_to_a_directory_path(cairn_context *ctx) {
  cairn_checkpoint *c = NULL;
  CHECK_OK(cairn_checkpoint_create(ctx, NULL, NULL, 0, &c));
  CHECK_ERR(cairn_checkpoint_write(c, directory_dot()), CAIRN_INVALID_ARGUMENT, "");
  cairn_checkpoint_free(c);
}

/* G1: a runtime message that does not know its caller ("batch: batch_size is -9") comes back
 * named by the C function, as cairn.h's conventions promise. */
static void test_messages_name_the_c_function(cairn_context *ctx) {
  cairn_dataset *range = NULL, *batched = NULL;
  cairn_status *st;
  CHECK_OK(cairn_dataset_range(ctx, 0, 5, 1, &range));
  st = cairn_dataset_batch(range, -9, CAIRN_FALSE, &batched);
  CHECK(st != NULL);
  if (st) {
    const char *msg = cairn_status_message(st);
    CHECK(cairn_status_code(st) == CAIRN_INVALID_ARGUMENT);
    CHECK(strncmp(msg, "cairn_dataset_batch: ", 21) == 0);
    CHECK(strstr(msg, "-9") != NULL);
    cairn_status_free(st);
  }
  CHECK(batched == NULL);
  cairn_dataset_free(range);
}

/* F-b2 through safetensors: exporting to "<dir>/." is INVALID_ARGUMENT (rename's EBUSY), not
 * UNKNOWN; every file writer shares one errno mapping. */
static void test_export_to_a_directory_path(cairn_context *ctx) {
  cairn_checkpoint *c = NULL;
  CHECK_OK(cairn_checkpoint_create(ctx, NULL, NULL, 0, &c));
  CHECK_ERR(cairn_checkpoint_export(c, directory_dot(), CAIRN_WEIGHTS_SAFETENSORS, NULL), CAIRN_INVALID_ARGUMENT,
            "cairn_checkpoint_export: ");
  cairn_checkpoint_free(c);
}

int main(void) {
  cairn_context *ctx = NULL;
  CHECK_OK(cairn_context_create(NULL, &ctx));
  test_huge_prefetch_buffer(ctx);
  test_write_to_a_directory_path(ctx);
  test_messages_name_the_c_function(ctx);
  test_export_to_a_directory_path(ctx);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
