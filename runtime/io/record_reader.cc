#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <new>
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

constexpr size_t kDefaultChunk = size_t{1} << 20;  // fits in L2 beside the ring's next chunk
constexpr size_t kReadAheadBytes = size_t{4} << 20;  // the ring: 4 chunks, or 2 larger ones
constexpr size_t kLargeRead = 64 << 10;  // reads while records are large: a header and a little more

// An allocator whose resize() leaves new bytes uninitialized: a record read straight into the
// spill buffer is not zeroed first.
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Bytes = std::vector<uint8_t, UninitAllocator<uint8_t>>;
constexpr size_t kCompressedInput = 256 << 10;

// A background thread that reads the next chunks of the file into a ring of buffers while the
// caller checksums the current one. It stops at the end of the file (a short chunk) or on an error.
class ReadAhead {
 public:
  ReadAhead(int fd, std::string path, size_t chunk, size_t depth, uint64_t offset)
      : fd_(fd), path_(std::move(path)), chunk_(chunk), slots_(depth), lens_(depth), offset_(offset) {
    for (auto& s : slots_) s.resize(chunk);
    thread_ = std::thread([this] { run(); });
  }
  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // The next chunk, valid until the following call: chunk bytes, or fewer at the end of the file
  // (the thread has stopped then). Rethrows the thread's read error.
  std::pair<const uint8_t*, size_t> next() {
    std::unique_lock<std::mutex> lock(mu_);
    if (held_) {  // the caller is done with the previous chunk: its slot is free again
      held_ = false;
      ++head_;
      cv_.notify_all();
    }
    cv_.wait(lock, [&] { return tail_ > head_ || error_; });
    if (tail_ == head_) std::rethrow_exception(error_);
    held_ = true;
    size_t i = head_ % slots_.size();
    return {slots_[i].data(), lens_[i]};
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || tail_ - head_ < slots_.size(); });
      if (stop_) return;
      size_t i = tail_ % slots_.size();
      uint64_t offset = offset_;
      lock.unlock();
      size_t got = 0;
      std::exception_ptr error;
      try {
        got = internal::pread_full(fd_, slots_[i].data(), chunk_, offset, path_);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error) {
        error_ = error;
      } else {
        lens_[i] = got;
        offset_ += got;
        ++tail_;
      }
      cv_.notify_all();
      if (error || got < chunk_) return;  // the end of the file (for now): the reader carries on itself
    }
  }

  int fd_;
  std::string path_;
  size_t chunk_;
  std::vector<std::vector<uint8_t>> slots_;
  std::vector<size_t> lens_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t offset_;
  uint64_t head_ = 0, tail_ = 0;  // chunks taken by the caller, chunks read
  bool held_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

bool read_ahead_pays() {
  // On one or two CPUs the thread competes with its caller for the core it would free up: measured
  // on a 2-vCPU machine, reads with it were 0.55x raw read() against 0.66x without (docs/records.md).
  static const bool pays = std::thread::hardware_concurrency() >= 4;
  return pays;
}

struct RecordReader::Impl {
  std::string path;
  RecordReaderOptions opts;
  int fd = -1;
  size_t chunk = kDefaultChunk;
  bool large = false;     // records are large (over half a chunk): read them straight into `spill`

  // The stream arrives in chunks; a record that straddles chunks is gathered into `spill`. The
  // window [p, p + avail) is the unconsumed part of one of them and starts at stream offset `offset`.
  Bytes own, spill;                  // own: the chunk buffer without read-ahead, and for inflate
  const uint8_t* cur = nullptr;      // the current chunk: `own`, or a slot of the read-ahead ring
  size_t cur_len = 0, cur_pos = 0;
  bool in_spill = false;
  const uint8_t* p = nullptr;
  size_t avail = 0;
  uint64_t offset = 0;
  bool partial = false;

  uint64_t file_pos = 0;    // the next file byte to read
  uint64_t known_size = 0;  // the file's size when last looked at (uncompressed only)
  bool ahead_done = false;  // the read-ahead reached the end of the file; the reader goes on itself

  // Compressed streams.
  z_stream zs{};
  bool zlive = false, stream_end = false;
  std::vector<uint8_t> in;

  std::optional<RecordIndex> index;
  std::string index_why;

  std::unique_ptr<ReadAhead> ahead;

  ~Impl() {
    ahead.reset();
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
    if (ahead && !ahead_done && !large) {
      auto [data, got] = ahead->next();
      cur = data;
      file_pos += got;
      ahead_done = got < chunk;
      if (got > 0) return got;
    }
    ahead.reset();  // stopped at the end of the file: later reads (a growing file) are direct
    ahead_done = false;
    // Large records: read a header and a little more; the rest of the record comes straight into
    // `spill` (need), so it is copied once, by the kernel, as a plain read() would.
    const size_t want = large ? std::min(chunk, kLargeRead) : chunk;
    size_t got = internal::pread_full(fd, own.data(), want, file_pos, path);
    cur = own.data();
    file_pos += got;
    if (got == chunk && opts.read_ahead && !large)  // a big file: read the next chunks while this one is used
      ahead = std::make_unique<ReadAhead>(fd, path, chunk, std::max<size_t>(2, kReadAheadBytes / chunk), file_pos);
    return got;
  }

  void cancel_read_ahead() {
    ahead.reset();
    ahead_done = false;
  }

  size_t inflate_chunk() {
    cur = own.data();
    zs.next_out = own.data();
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
    p = cur + cur_pos;
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
      if (cur_pos == cur_len && large && opts.compression == Compression::None) {
        cancel_read_ahead();  // the ring would read what comes here from elsewhere
        const size_t have = spill.size();
        spill.resize(n);
        size_t got = internal::pread_full(fd, spill.data() + have, n - have, file_pos, path);
        file_pos += got;
        spill.resize(have + got);
        break;
      }
      if (cur_pos == cur_len && !fill_chunk()) break;
      size_t k = std::min(cur_len - cur_pos, n - spill.size());
      spill.insert(spill.end(), cur + cur_pos, cur + cur_pos + k);
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
    // Records over half a chunk straddle chunks, and a straddler is copied: read such records
    // straight from the file instead, until small ones come again.
    if (opts.compression == Compression::None) large = total > chunk / 2 || (large && total > chunk / 8);
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
    // A valid index stays valid while the file grows (records are only appended); a missing or
    // stale one is looked for again, since it may have been built meanwhile.
    if (!index) index = load_record_index(path, opts.compression, &index_why);
    if (!index)
      raise(Code::FailedPrecondition, "RecordReader::seek_record: {}: needs a valid index sidecar ({}); build one with cairn_record_index_build",
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
  impl->opts.read_ahead = opts.force_read_ahead || (opts.read_ahead && read_ahead_pays());
  impl->chunk = opts.buffer_size == 0 ? kDefaultChunk : std::min<size_t>(opts.buffer_size, size_t{1} << 30);
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) internal::raise_errno(errno, path, "RecordReader: open");
  if (opts.compression == Compression::None) {
    (void)::posix_fadvise(impl->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  } else {
    impl->in.resize(kCompressedInput);
    impl->init_inflate();
  }
  impl->own.resize(impl->chunk);
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
