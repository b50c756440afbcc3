// Sequential reading of TFRecord files (record.h describes the framing), with checksums verified by
// default, ZLIB/GZIP streams through zlib's inflate, and the tail semantics TensorBoard relies on:
// a truncated last record of a file still being written is "not yet", not corruption.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/io/record.h"

namespace cairn::io {

struct RecordReaderOptions {
  Compression compression = Compression::None;
  bool verify_checksums = true;  // false: skip both CRCs (a bad length is still caught if impossible)
  size_t buffer_size = 0;        // bytes per read (uncompressed stream bytes); 0: 4 MiB
  bool read_ahead = true;        // a background thread reads the next chunk of a large uncompressed file
};

// Records larger than this are taken for corruption ("impossible length"), whatever the CRCs say.
inline constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 48;

class RecordReader {  // not thread-safe: one reader per thread
 public:
  // Opens `path` (throws NotFound/PermissionDenied naming it). Reads nothing yet.
  static std::unique_ptr<RecordReader> open(const std::string& path, const RecordReaderOptions& opts = {});
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // The next record: true with its bytes in *record (valid until the next call on this reader), or
  // false when no complete record follows: the end of the file, or a last record still being written
  // (partial() is then true). Either way the reader stays at offset(), and a later call retries from
  // there, reading only what was appended since. A corrupt record (length or data CRC mismatch,
  // impossible length, corrupt deflate data) raises DataLoss "<path>: ... at offset N"; the offset is
  // the record's start in the uncompressed stream (and, for deflate errors, the compressed offset).
  bool next(std::string_view* record);

  // Where the next record starts, in the uncompressed stream (the file offset without compression).
  uint64_t offset() const;
  // True after next() returned false with bytes of an incomplete record waiting at offset().
  bool partial() const;

  // Moves to `offset`, which must be a record's start (a wrong one is caught by the length CRC).
  // Compressed streams decompress from the start (backwards) or skip forward: O(offset).
  void seek(uint64_t offset);
  // Moves to record `index` (0-based; index == count moves to the end). Needs a valid index sidecar
  // (record_index.h); without one FailedPrecondition says why. OutOfRange past the end.
  void seek_record(uint64_t index);

  const std::string& path() const;
  // How far into the file the reader has looked (compressed bytes for ZLIB/GZIP): after next()
  // returned false, the file's size as the reader saw it.
  uint64_t file_bytes_read() const;

 private:
  struct Impl;
  explicit RecordReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::io
