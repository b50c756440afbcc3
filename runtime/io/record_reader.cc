#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/io/crc32c.h"
#include "runtime/io/internal/file.h"
#include "runtime/io/record_index.h"
#include "runtime/io/record_reader.h"

namespace cairn::io {

namespace {

constexpr size_t kDefaultChunk = size_t{4} << 20;
constexpr size_t kCompressedInput = 256 << 10;

// One background thread that reads the next chunk of the file while the caller checksums this one.
class Prefetcher {
 public:
  Prefetcher(int fd, std::string path) : fd_(fd), path_(std::move(path)), thread_([this] { run(); }) {}
  ~Prefetcher() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void request(uint8_t* dst, size_t n, uint64_t offset) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      dst_ = dst;
      n_ = n;
      offset_ = offset;
      job_ = true;
      done_ = false;
    }
    cv_.notify_all();
  }
  // The bytes the request read (fewer than asked at the end of the file); rethrows its read error.
  size_t wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return got_;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || job_; });
      if (stop_) return;
      job_ = false;
      uint8_t* dst = dst_;
      size_t n = n_;
      uint64_t offset = offset_;
      lock.unlock();
      size_t got = 0;
      std::exception_ptr error;
      try {
        got = internal::pread_full(fd_, dst, n, offset, path_);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      got_ = got;
      error_ = error;
      done_ = true;
      cv_.notify_all();
    }
  }

  int fd_;
  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, job_ = false, done_ = false;
  uint8_t* dst_ = nullptr;
  size_t n_ = 0, got_ = 0;
  uint64_t offset_ = 0;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts after the fields it uses exist
};

}  // namespace

struct RecordReader::Impl {
  std::string path;
  RecordReaderOptions opts;
  int fd = -1;
  size_t chunk = kDefaultChunk;

  // The stream arrives in chunks; a record that straddles chunks is gathered into `spill`. The
  // window [p, p + avail) is the unconsumed part of one of them and starts at stream offset `offset`.
  std::vector<uint8_t> cur, next_buf, spill;
  size_t cur_len = 0, cur_pos = 0;
  bool in_spill = false;
  const uint8_t* p = nullptr;
  size_t avail = 0;
  uint64_t offset = 0;
  bool partial = false;

  uint64_t file_pos = 0;    // the next file byte to read
  uint64_t known_size = 0;  // the file's size when last looked at (uncompressed only)
  bool pending = false;     // a read-ahead of next_buf at file_pos is in flight

  // Compressed streams.
  z_stream zs{};
  bool zlive = false, stream_end = false;
  std::vector<uint8_t> in;

  std::optional<RecordIndex> index;
  std::string index_why;
  bool index_loaded = false;

  std::unique_ptr<Prefetcher> prefetcher;  // last: its thread stops before the buffers go

  ~Impl() {
    prefetcher.reset();
    if (zlive) inflateEnd(&zs);
    if (fd >= 0) ::close(fd);
  }

  void init_inflate() {
    int window_bits = opts.compression == Compression::Gzip ? 31 : 15;
    if (inflateInit2(&zs, window_bits) != Z_OK) raise(Code::ResourceExhausted, "RecordReader: {}: inflateInit2 failed", path);
    zlive = true;
  }

  // Replaces the current chunk with the next bytes of the stream; false when none are there yet.
  bool fill_chunk() {
    size_t got = opts.compression == Compression::None ? read_chunk() : inflate_chunk();
    cur_len = got;
    cur_pos = 0;
    return got > 0;
  }

  size_t read_chunk() {
    size_t got;
    if (pending) {
      pending = false;
      got = prefetcher->wait();
      std::swap(cur, next_buf);
    } else {
      got = internal::pread_full(fd, cur.data(), chunk, file_pos, path);
    }
    file_pos += got;
    if (got == chunk && opts.read_ahead) {  // a big file: read the next chunk while this one is used
      if (!prefetcher) prefetcher = std::make_unique<Prefetcher>(fd, path);
      if (next_buf.size() != chunk) next_buf.resize(chunk);
      prefetcher->request(next_buf.data(), chunk, file_pos);
      pending = true;
    }
    return got;
  }

  void cancel_read_ahead() {
    if (!pending) return;
    pending = false;
    try {
      prefetcher->wait();
    } catch (const Error&) {  // the read is abandoned; a new one reports its own errors
    }
  }

  size_t inflate_chunk() {
    zs.next_out = cur.data();
    zs.avail_out = static_cast<uInt>(chunk);
    while (zs.avail_out == chunk) {
      if (zs.avail_in == 0) {
        size_t n = internal::pread_full(fd, in.data(), in.size(), file_pos, path);
        if (n == 0) break;  // nothing more written yet
        file_pos += n;
        zs.next_in = in.data();
        zs.avail_in = static_cast<uInt>(n);
      }
      if (stream_end) {  // more input after a finished stream: a concatenated one (appends, gzip members)
        inflateReset(&zs);
        stream_end = false;
      }
      int rc = inflate(&zs, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_end = true;
      } else if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
        continue;  // wants more input
      } else if (rc != Z_OK) {
        raise(Code::DataLoss, "RecordReader: {}: corrupt {} stream at compressed offset {} (in the record at offset {}): {}",
              path, compression_name(opts.compression), file_pos - zs.avail_in, offset,
              zs.msg ? zs.msg : "inflate failed");
      }
    }
    return chunk - zs.avail_out;
  }

  void window_to_cur() {
    in_spill = false;
    p = cur.data() + cur_pos;
    avail = cur_len - cur_pos;
  }

  void consume(size_t n) {
    p += n;
    avail -= n;
    offset += n;
    if (in_spill) {
      if (avail == 0) window_to_cur();
    } else {
      cur_pos += n;
    }
  }

  // Makes n contiguous bytes available in the window; false when the stream has fewer now.
  bool need(size_t n) {
    if (avail >= n) return true;
    if (!in_spill && avail == 0) {
      if (!fill_chunk()) return false;
      window_to_cur();
      if (avail >= n) return true;
    }
    if (in_spill) {
      spill.erase(spill.begin(), spill.begin() + (p - spill.data()));
    } else {
      spill.assign(p, p + avail);
      cur_pos = cur_len;
    }
    in_spill = true;
    while (spill.size() < n) {
      if (cur_pos == cur_len && !fill_chunk()) break;
      size_t k = std::min(cur_len - cur_pos, n - spill.size());
      spill.insert(spill.end(), cur.data() + cur_pos, cur.data() + cur_pos + k);
      cur_pos += k;
    }
    p = spill.data();
    avail = spill.size();
    return avail >= n;
  }

  bool next(std::string_view* record) {
    partial = false;
    if (!need(kRecordHeaderBytes)) {
      partial = avail > 0;
      return false;
    }
    const uint64_t len = internal::load_le64(p);
    if (opts.verify_checksums && unmask_crc(internal::load_le32(p + 8)) != crc32c(p, 8))
      raise(Code::DataLoss, "RecordReader: {}: corrupt record at offset {}: length checksum mismatch", path, offset);
    if (len > kMaxRecordBytes)
      raise(Code::DataLoss, "RecordReader: {}: corrupt record at offset {}: impossible length {}", path, offset, len);
    const size_t total = kRecordHeaderBytes + static_cast<size_t>(len) + kRecordFooterBytes;
    if (opts.compression == Compression::None && offset + total > known_size) {
      known_size = internal::file_size(fd, path);  // buffer no more than the file holds yet
      if (offset + total > known_size) {
        partial = true;
        return false;
      }
    }
    if (!need(total)) {
      partial = true;
      return false;
    }
    if (opts.verify_checksums &&
        unmask_crc(internal::load_le32(p + kRecordHeaderBytes + len)) != crc32c(p + kRecordHeaderBytes, len))
      raise(Code::DataLoss, "RecordReader: {}: corrupt record at offset {}: data checksum mismatch", path, offset);
    *record = std::string_view(reinterpret_cast<const char*>(p + kRecordHeaderBytes), len);
    consume(total);
    return true;
  }

  void drop_window() {
    cancel_read_ahead();
    spill.clear();
    in_spill = false;
    cur_len = cur_pos = 0;
    p = nullptr;
    avail = 0;
    partial = false;
  }

  void seek(uint64_t target) {
    if (opts.compression == Compression::None) {
      drop_window();
      file_pos = offset = target;
      return;
    }
    if (target < offset) {  // back to the start of the compressed stream
      drop_window();
      inflateReset(&zs);
      zs.avail_in = 0;
      stream_end = false;
      file_pos = offset = 0;
    }
    partial = false;
    while (offset < target) {
      if (avail == 0 && !need(1))
        raise(Code::OutOfRange, "RecordReader::seek: {}: offset {} is past the end of the stream ({} bytes)", path,
              target, offset);
      consume(static_cast<size_t>(std::min<uint64_t>(avail, target - offset)));
    }
  }

  void seek_record(uint64_t i) {
    if (!index_loaded) {
      index = load_record_index(path, opts.compression, &index_why);
      index_loaded = true;
    }
    if (!index)
      raise(Code::FailedPrecondition, "RecordReader::seek_record: {}: needs a valid index sidecar ({}); build one with build_record_index",
            path, index_why);
    if (i > index->count())
      raise(Code::OutOfRange, "RecordReader::seek_record: {}: record {} is past the end ({} records)", path, i,
            index->count());
    seek(i == index->count() ? index->stream_size : index->offsets[i]);
  }
};

RecordReader::RecordReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RecordReader::~RecordReader() = default;

std::unique_ptr<RecordReader> RecordReader::open(const std::string& path, const RecordReaderOptions& opts) {
  const int c = static_cast<int>(opts.compression);
  if (c < 0 || c > 2) raise(Code::InvalidArgument, "RecordReader: {}: unknown compression {}", path, c);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->opts = opts;
  impl->chunk = opts.buffer_size == 0 ? kDefaultChunk : std::min<size_t>(opts.buffer_size, size_t{1} << 30);
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) internal::raise_errno(errno, path, "RecordReader: open");
  if (opts.compression == Compression::None) {
    (void)::posix_fadvise(impl->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  } else {
    impl->in.resize(kCompressedInput);
    impl->init_inflate();
  }
  impl->cur.resize(impl->chunk);
  return std::unique_ptr<RecordReader>(new RecordReader(std::move(impl)));
}

bool RecordReader::next(std::string_view* record) { return impl_->next(record); }
uint64_t RecordReader::offset() const { return impl_->offset; }
bool RecordReader::partial() const { return impl_->partial; }
void RecordReader::seek(uint64_t offset) { impl_->seek(offset); }
void RecordReader::seek_record(uint64_t index) { impl_->seek_record(index); }
const std::string& RecordReader::path() const { return impl_->path; }
uint64_t RecordReader::file_bytes_read() const { return std::max(impl_->file_pos, impl_->known_size); }

}  // namespace cairn::io
