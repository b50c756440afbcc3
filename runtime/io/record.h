// TFRecord files: TensorFlow's record framing, byte-compatible with tf.io.TFRecordWriter and
// TFRecordDataset, with whole-stream ZLIB or GZIP compression. Each record is
//   uint64 length (LE) | uint32 masked crc32c(length bytes) | data[length] | uint32 masked crc32c(data)
// (tensorflow core/lib/io/record_writer.cc). The reader is in record_reader.h, the optional index
// sidecar in record_index.h; docs/records.md describes all three.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cairn::io {

// Whole-stream compression; nothing in the file says which, so readers are told. == cairn_compression.
enum class Compression { None = 0, Zlib = 1, Gzip = 2 };

// "NONE", "ZLIB", "GZIP".
const char* compression_name(Compression c);

// Bytes of framing around each record's data: 12 before (length, its CRC), 4 after (the data's CRC).
inline constexpr size_t kRecordHeaderBytes = 12;
inline constexpr size_t kRecordFooterBytes = 4;

struct RecordWriterOptions {
  Compression compression = Compression::None;
  int level = -1;            // zlib level 0..9; -1 is zlib's default (6), as TensorFlow's
  bool write_index = false;  // write the `<path>.cairnidx` sidecar on close (record_index.h)
  bool append = false;       // append to an existing file instead of truncating it (no index then)
};

class RecordWriter {  // not thread-safe: one writer per thread, or serialize the calls
 public:
  // Creates/truncates `path` (throws naming the path). append=true opens for appending (no index then;
  // an existing sidecar is removed, since it would be stale). A compressed append starts a new
  // zlib/gzip stream after the old one; readers continue across the concatenation.
  static std::unique_ptr<RecordWriter> open(const std::string& path, const RecordWriterOptions& opts = {});
  void write(const void* data, size_t n);   // throws on I/O error naming the path
  void flush();                              // pushes buffered bytes (and the zlib stream's sync flush) to the OS
  void sync();                               // flush + fsync
  void close();                              // flush, finish the stream, write the index sidecar; idempotent
  uint64_t records() const;                  // records written
  const std::string& path() const;
  ~RecordWriter();                           // closes, swallowing errors

  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

 private:
  RecordWriter(std::string path, const RecordWriterOptions& opts);
  void put(const void* data, size_t n);      // into the stream: buffer, or deflate
  void deflate_into_buffer(int flush_mode);  // runs deflate until it wants more input
  void drain();                              // writes the output buffer to the file
  void write_file(const void* data, size_t n);
  void check_open(const char* fn) const;

  std::string path_;
  RecordWriterOptions opts_;
  int fd_ = -1;
  bool closed_ = false;
  bool zstream_live_ = false;
  z_stream zs_{};
  std::vector<uint8_t> out_;   // bytes for the file (framed records, or deflate output)
  size_t out_used_ = 0;
  uint64_t records_ = 0;
  uint64_t stream_bytes_ = 0;  // uncompressed stream position (== file position without compression)
  std::vector<uint64_t> offsets_;  // each record's stream offset, for the index
};

}  // namespace cairn::io
