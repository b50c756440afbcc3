#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/io/crc32c.h"
#include "runtime/io/internal/file.h"
#include "runtime/io/record.h"
#include "runtime/io/record_index.h"

namespace cairn::io {

using internal::raise_errno;

namespace {
constexpr size_t kOutBytes = size_t{1} << 20;  // file writes of up to 1 MiB
constexpr size_t kDirectBytes = 256 << 10;     // uncompressed records this large skip the buffer
}  // namespace

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::None: return "NONE";
    case Compression::Zlib: return "ZLIB";
    case Compression::Gzip: return "GZIP";
  }
  return "?";
}

RecordWriter::RecordWriter(std::string path, const RecordWriterOptions& opts) : path_(std::move(path)), opts_(opts) {}

std::unique_ptr<RecordWriter> RecordWriter::open(const std::string& path, const RecordWriterOptions& opts) {
  const int c = static_cast<int>(opts.compression);
  if (c < 0 || c > 2) raise(Code::InvalidArgument, "RecordWriter: {}: unknown compression {}", path, c);
  if (opts.level < -1 || opts.level > 9)
    raise(Code::InvalidArgument, "RecordWriter: {}: compression level {} is not in -1..9", path, opts.level);
  if (opts.append && opts.write_index)
    raise(Code::InvalidArgument, "RecordWriter: {}: write_index needs a new file, not append (build the index after)", path);
  std::unique_ptr<RecordWriter> w(new RecordWriter(path, opts));
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (opts.append ? O_APPEND : O_TRUNC);
  w->fd_ = ::open(path.c_str(), flags, 0644);
  if (w->fd_ < 0) raise_errno(errno, path, "RecordWriter: open");
  // A sidecar left from an earlier file of this name would describe other bytes.
  if (::unlink(index_path(path).c_str()) != 0 && errno != ENOENT) raise_errno(errno, index_path(path), "RecordWriter: remove stale index");
  w->out_.resize(kOutBytes);
  if (opts.compression != Compression::None) {
    // As TensorFlow's ZlibOutputBuffer: deflate, window 2^15 (+16 for a gzip wrapper), memLevel 9.
    int window_bits = opts.compression == Compression::Gzip ? 31 : 15;
    if (deflateInit2(&w->zs_, opts.level, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY) != Z_OK)
      raise(Code::ResourceExhausted, "RecordWriter: {}: deflateInit2 failed", path);
    w->zstream_live_ = true;
  }
  return w;
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (...) {
  }
  if (zstream_live_) deflateEnd(&zs_);
  if (fd_ >= 0) ::close(fd_);
}

uint64_t RecordWriter::records() const { return records_; }
const std::string& RecordWriter::path() const { return path_; }

void RecordWriter::check_open(const char* fn) const {
  if (closed_) raise(Code::FailedPrecondition, "RecordWriter::{}: {}: the writer is closed", fn, path_);
}

void RecordWriter::write_file(const void* data, size_t n) { internal::write_all(fd_, data, n, path_); }

void RecordWriter::drain() {
  if (out_used_ == 0) return;
  write_file(out_.data(), out_used_);
  out_used_ = 0;
}

void RecordWriter::deflate_into_buffer(int flush_mode) {
  for (;;) {
    if (out_used_ == out_.size()) drain();
    zs_.next_out = out_.data() + out_used_;
    zs_.avail_out = static_cast<uInt>(out_.size() - out_used_);
    int rc = deflate(&zs_, flush_mode);
    out_used_ = out_.size() - zs_.avail_out;
    if (rc == Z_STREAM_END) return;
    if (rc != Z_OK && rc != Z_BUF_ERROR) raise(Code::Internal, "RecordWriter: {}: deflate failed ({})", path_, rc);
    // Done when deflate left output space unused: it has consumed the input and, for a flush,
    // emitted everything.
    if (zs_.avail_out != 0 && zs_.avail_in == 0) return;
  }
}

void RecordWriter::put(const void* data, size_t n) {
  stream_bytes_ += n;
  if (opts_.compression != Compression::None) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {  // avail_in is 32-bit
      uInt chunk = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
      zs_.next_in = const_cast<Bytef*>(p);
      zs_.avail_in = chunk;
      deflate_into_buffer(Z_NO_FLUSH);
      p += chunk;
      n -= chunk;
    }
    return;
  }
  if (n >= kDirectBytes) {  // big payloads go from the caller's memory to the file
    drain();
    write_file(data, n);
    return;
  }
  if (out_used_ + n > out_.size()) drain();
  std::memcpy(out_.data() + out_used_, data, n);
  out_used_ += n;
}

void RecordWriter::write(const void* data, size_t n) {
  check_open("write");
  if (data == nullptr && n > 0) raise(Code::InvalidArgument, "RecordWriter::write: {}: data is null", path_);
  uint8_t header[kRecordHeaderBytes];
  internal::store_le64(header, n);
  internal::store_le32(header + 8, mask_crc(crc32c(header, 8)));
  uint8_t footer[kRecordFooterBytes];
  internal::store_le32(footer, mask_crc(crc32c(data, n)));
  if (opts_.write_index) offsets_.push_back(stream_bytes_);
  put(header, sizeof header);
  if (n > 0) put(data, n);
  put(footer, sizeof footer);
  ++records_;
}

void RecordWriter::flush() {
  check_open("flush");
  // A sync flush ends the deflate output on a byte boundary, so a reader sees every record so far.
  if (opts_.compression != Compression::None) deflate_into_buffer(Z_SYNC_FLUSH);
  drain();
}

void RecordWriter::sync() {
  flush();
  if (::fsync(fd_) != 0) raise_errno(errno, path_, "RecordWriter::sync: fsync");
}

void RecordWriter::close() {
  if (closed_) return;
  closed_ = true;  // even when finishing fails, the writer takes no more records
  if (opts_.compression != Compression::None) {
    zs_.avail_in = 0;
    deflate_into_buffer(Z_FINISH);
    deflateEnd(&zs_);
    zstream_live_ = false;
  }
  drain();
  int fd = fd_;
  fd_ = -1;
  uint64_t size = opts_.write_index ? internal::file_size(fd, path_) : 0;
  if (::close(fd) != 0 && errno != EINTR) raise_errno(errno, path_, "RecordWriter::close");
  if (opts_.write_index) {
    RecordIndex idx;
    idx.compression = opts_.compression;
    idx.file_size = size;
    idx.stream_size = stream_bytes_;
    idx.offsets = std::move(offsets_);
    write_record_index(path_, idx);
  }
}

}  // namespace cairn::io
