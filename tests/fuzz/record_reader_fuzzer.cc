// libFuzzer target for the TFRecord reader: any bytes, read as an uncompressed, ZLIB or GZIP record
// stream, must read without crashing or hanging, raising only cairn::Error, with bounded memory.
// The first input byte picks the mode: bits 0-1 the compression (0 none, 1 ZLIB, 2 GZIP; 3 is none),
// bit 2 skips checksums (so mutations reach the framing), bit 3 a 7-byte buffer (the straddling
// path), bit 4 no read-ahead (otherwise 4 KiB chunks read ahead by the ring). Build and run with tests/fuzz/run_record_fuzzer.sh (clang), or replay
// the corpus under gcc with //tests/fuzz:record_reader_corpus_test.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/core/error.h"
#include "runtime/io/record_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  cairn::io::RecordReaderOptions opts;
  opts.compression = static_cast<cairn::io::Compression>((mode & 3) == 3 ? 0 : mode & 3);
  opts.verify_checksums = (mode & 4) == 0;
  // Read-ahead (bit 4 clear) with 4 KiB chunks, so inputs over 4 KiB start the ring; not with the
  // 7-byte buffer, where a thread handoff per 7 bytes would slow fuzzing to a crawl.
  const bool tiny = (mode & 8) != 0, ahead = (mode & 16) == 0 && !tiny;
  opts.buffer_size = tiny ? 7 : ahead ? 4096 : 0;
  opts.read_ahead = ahead;
  opts.force_read_ahead = ahead;
  // The rest of the input as a file the reader opens by path.
  int fd = memfd_create("record_fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  const uint8_t* p = data + 1;
  size_t left = size - 1;
  while (left > 0) {
    ssize_t put = write(fd, p, left);
    if (put <= 0) break;
    p += put;
    left -= static_cast<size_t>(put);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    auto r = cairn::io::RecordReader::open(path, opts);
    std::string_view rec;
    size_t n = 0, bytes = 0;
    uint64_t second = 0;
    while (r->next(&rec)) {
      if (n++ == 0) second = r->offset();
      bytes += rec.size();
    }
    (void)bytes;
    // Again from the start (a rewind of the inflate stream), and from the second record.
    r->seek(0);
    while (r->next(&rec)) {
    }
    if (n > 1) {
      r->seek(second);
      while (r->next(&rec)) {
      }
    }
  } catch (const cairn::Error&) {
  }
  close(fd);
  return 0;
}
