/* The C API of TFRecord files: round trips, the "not yet" tail, seeking, the index, shards, errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void temp_path(char *buf, size_t n, const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(buf, n, "%s/%s", dir ? dir : "/tmp", name);
}

/* Reads every complete record; returns how many matched `want` in order (-1 on an error). */
static int read_all(cairn_record_reader *r, const char *const *want, int n_want) {
  int i = 0;
  for (;;) {
    const void *data = NULL;
    size_t n = 0;
    cairn_bool got = CAIRN_FALSE;
    cairn_status *st = cairn_record_reader_next(r, &data, &n, &got);
    if (st) {
      fprintf(stderr, "read_all: %s\n", cairn_status_message(st));
      cairn_status_free(st);
      return -1;
    }
    if (!got) return i;
    if (i >= n_want || n != strlen(want[i]) || (n > 0 && memcmp(data, want[i], n) != 0)) return -1;
    ++i;
  }
}

static const char *const kRecs[] = {"alpha", "", "gamma gamma", "delta"};

static void test_round_trip(void) {
  const cairn_compression kinds[] = {CAIRN_COMPRESSION_NONE, CAIRN_COMPRESSION_ZLIB, CAIRN_COMPRESSION_GZIP};
  for (int k = 0; k < 3; ++k) {
    char path[512];
    temp_path(path, sizeof path, k == 0 ? "rt.tfrecord" : k == 1 ? "rt.zlib" : "rt.gz");
    cairn_record_writer_options wo = CAIRN_RECORD_WRITER_OPTIONS_INIT;
    wo.compression = kinds[k];
    wo.write_index = CAIRN_TRUE;
    cairn_record_writer *w = NULL;
    CHECK_OK(cairn_record_writer_open(path, &wo, &w));
    for (int i = 0; i < 4; ++i) CHECK_OK(cairn_record_writer_write(w, kRecs[i], strlen(kRecs[i])));
    CHECK(cairn_record_writer_count(w) == 4);
    CHECK_OK(cairn_record_writer_close(w));
    CHECK_OK(cairn_record_writer_close(w));
    CHECK_ERR(cairn_record_writer_write(w, "x", 1), CAIRN_FAILED_PRECONDITION, "closed");
    cairn_record_writer_free(w);

    cairn_record_reader_options ro;
    CHECK_OK(cairn_record_reader_options_init(&ro, sizeof ro));
    CHECK(ro.verify_checksums == CAIRN_TRUE && ro.read_ahead == CAIRN_TRUE && ro.buffer_size == 0);
    ro.compression = kinds[k];
    cairn_record_reader *r = NULL;
    CHECK_OK(cairn_record_reader_open(path, &ro, &r));
    CHECK(read_all(r, kRecs, 4) == 4);
    CHECK(cairn_record_reader_partial(r) == CAIRN_FALSE);
    /* Random access through the index, and shards. */
    CHECK_OK(cairn_record_reader_seek_record(r, 2));
    CHECK(read_all(r, kRecs + 2, 2) == 2);
    int64_t count = -1, begin = -1, end = -1;
    CHECK_OK(cairn_record_file_count(path, &ro, &count));
    CHECK(count == 4);
    CHECK_OK(cairn_record_shard_range(count, 3, 1, &begin, &end));
    CHECK(begin == 1 && end == 2);
    CHECK_ERR(cairn_record_reader_seek_record(r, 5), CAIRN_OUT_OF_RANGE, "past the end");
    CHECK_ERR(cairn_record_reader_seek_record(r, -1), CAIRN_INVALID_ARGUMENT, "negative");
    cairn_record_reader_free(r);
  }
}

static void test_tail_and_seek(void) {
  char path[512];
  temp_path(path, sizeof path, "tail.tfrecord");
  cairn_record_writer *w = NULL;
  CHECK_OK(cairn_record_writer_open(path, NULL, &w));
  CHECK_OK(cairn_record_writer_write(w, kRecs[0], strlen(kRecs[0])));
  CHECK_OK(cairn_record_writer_flush(w));
  cairn_record_reader *r = NULL;
  CHECK_OK(cairn_record_reader_open(path, NULL, &r));
  CHECK(read_all(r, kRecs, 1) == 1);
  int64_t second = cairn_record_reader_offset(r);
  CHECK(second == 5 + 16);
  /* Half a record on disk: "not yet", and the reader stays put. */
  FILE *f = fopen(path, "ab");
  CHECK(f != NULL);
  if (f) {
    fwrite("\x0b\0\0\0", 1, 4, f);
    fclose(f);
  }
  const void *data = NULL;
  size_t n = 99;
  cairn_bool got = CAIRN_TRUE;
  CHECK_OK(cairn_record_reader_next(r, &data, &n, &got));
  CHECK(got == CAIRN_FALSE && data == NULL && n == 0);
  CHECK(cairn_record_reader_partial(r) == CAIRN_TRUE);
  CHECK(cairn_record_reader_offset(r) == second);
  cairn_record_reader_free(r);
  CHECK_OK(cairn_record_writer_close(w));
  cairn_record_writer_free(w);

  /* No index: seek_record says so; the index is built on request. */
  temp_path(path, sizeof path, "noindex.tfrecord");
  CHECK_OK(cairn_record_writer_open(path, NULL, &w));
  for (int i = 0; i < 4; ++i) CHECK_OK(cairn_record_writer_write(w, kRecs[i], strlen(kRecs[i])));
  CHECK_OK(cairn_record_writer_close(w));
  cairn_record_writer_free(w);
  CHECK_OK(cairn_record_reader_open(path, NULL, &r));
  CHECK_ERR(cairn_record_reader_seek_record(r, 1), CAIRN_FAILED_PRECONDITION, "no index");
  CHECK_OK(cairn_record_reader_seek(r, 5 + 16));
  CHECK(read_all(r, kRecs + 1, 3) == 3);
  CHECK_ERR(cairn_record_reader_seek(r, -3), CAIRN_INVALID_ARGUMENT, "negative");
  int64_t count = 0;
  CHECK_OK(cairn_record_index_build(path, NULL, &count));
  CHECK(count == 4);
  CHECK_OK(cairn_record_index_build(path, NULL, NULL));
  CHECK_OK(cairn_record_reader_seek_record(r, 3));
  CHECK(read_all(r, kRecs + 3, 1) == 1);
  cairn_record_reader_free(r);
}

static void test_errors(void) {
  char path[512];
  temp_path(path, sizeof path, "corrupt.tfrecord");
  cairn_record_writer *w = NULL;
  CHECK_ERR(cairn_record_writer_open(NULL, NULL, &w), CAIRN_INVALID_ARGUMENT, "path is NULL");
  CHECK_ERR(cairn_record_writer_open("/nonexistent-dir/x", NULL, &w), CAIRN_NOT_FOUND, "/nonexistent-dir/x");
  cairn_record_writer_options wo = CAIRN_RECORD_WRITER_OPTIONS_INIT;
  wo.compression = (cairn_compression)7;
  CHECK_ERR(cairn_record_writer_open(path, &wo, &w), CAIRN_INVALID_ARGUMENT, "unknown compression 7");
  wo.struct_size = 3;
  CHECK_ERR(cairn_record_writer_open(path, &wo, &w), CAIRN_INVALID_ARGUMENT, "struct_size");
  CHECK_OK(cairn_record_writer_open(path, NULL, &w));
  CHECK_OK(cairn_record_writer_write(w, "0123456789", 10));
  CHECK_OK(cairn_record_writer_write(w, "abcdef", 6));
  CHECK_OK(cairn_record_writer_close(w));
  cairn_record_writer_free(w);
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (f) {
    fseek(f, 26 + 12 + 2, SEEK_SET); /* inside the second record's data */
    fputc('X', f);
    fclose(f);
  }
  cairn_record_reader *r = NULL;
  CHECK_OK(cairn_record_reader_open(path, NULL, &r));
  const void *data;
  size_t n;
  cairn_bool got;
  CHECK_OK(cairn_record_reader_next(r, &data, &n, &got));
  CHECK(got && n == 10);
  CHECK_ERR(cairn_record_reader_next(r, &data, &n, &got), CAIRN_DATA_LOSS, "corrupt record at offset 26");
  CHECK_ERR(cairn_record_reader_next(r, NULL, &n, &got), CAIRN_INVALID_ARGUMENT, "data is NULL");
  cairn_record_reader_free(r);
  cairn_record_reader_options ro = CAIRN_RECORD_READER_OPTIONS_INIT;
  ro.verify_checksums = CAIRN_FALSE;
  int64_t count = 0;
  CHECK_OK(cairn_record_file_count(path, &ro, &count));
  CHECK(count == 2);
  CHECK_ERR(cairn_record_file_count(path, NULL, &count), CAIRN_DATA_LOSS, path);
  CHECK_ERR(cairn_record_reader_open("/nonexistent-dir/y", NULL, &r), CAIRN_NOT_FOUND, "/nonexistent-dir/y");
  int64_t b, e;
  CHECK_ERR(cairn_record_shard_range(10, 3, 3, &b, &e), CAIRN_INVALID_ARGUMENT, "shard 3 of 3");
  CHECK(cairn_record_reader_offset(NULL) == -1);
  CHECK(cairn_record_writer_count(NULL) == 0);
  cairn_record_reader_free(NULL);
  cairn_record_writer_free(NULL);
}

int main(void) {
  test_round_trip();
  test_tail_and_seek();
  test_errors();
  TEST_MAIN_END();
}
