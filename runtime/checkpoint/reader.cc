#include "runtime/checkpoint/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>

#include "runtime/checkpoint/internal/index.h"
#include "runtime/checkpoint/internal/io.h"
#include "runtime/core/thread_pool.h"

namespace cairn::ckpt {

class Reader::Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly `n` bytes at `offset` or raises DataLoss.
  virtual void read(uint64_t offset, void* dst, size_t n) const = 0;
  // A hint that [offset, offset + n) is about to be read in order.
  virtual void will_read(uint64_t offset, uint64_t n) const {
    (void)offset;
    (void)n;
  }
};

namespace {

constexpr size_t kReadChunk = size_t{4} << 20;     // raw payloads: read this much, then hash it while cached
constexpr size_t kStoredChunk = size_t{1} << 20;   // compressed payloads: input buffer
constexpr size_t kParallelReadChunk = size_t{256} << 10;  // read_parallel's pieces: hashed while in cache
constexpr int kMaxWindowLog = 24;  // zstd decoder memory bound: 16 MiB, enough for levels up to 19
constexpr uint64_t kVerifyStringsFirstAbove = uint64_t{16} << 20;
constexpr uint64_t kMaxIndexBytes = (uint64_t{1} << 31) - 1;  // FlatBuffers' limit

class FileSource final : public Reader::Source {
 public:
  FileSource(internal::Fd fd, uint64_t size, std::string path) : fd_(std::move(fd)), size_(size), path_(std::move(path)) {}
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t n) const override { internal::pread_exact(fd_.get(), dst, n, offset, path_); }
  // Starts the kernel reading the whole payload while we read and hash it in small chunks.
  void will_read(uint64_t offset, uint64_t n) const override {
    if (n >= kReadChunk) ::posix_fadvise(fd_.get(), static_cast<off_t>(offset), static_cast<off_t>(n), POSIX_FADV_WILLNEED);
  }

 private:
  internal::Fd fd_;
  uint64_t size_;
  std::string path_;
};

class MemorySource final : public Reader::Source {
 public:
  MemorySource(const void* data, size_t size, std::string name)
      : data_(static_cast<const uint8_t*>(data)), size_(size), name_(std::move(name)) {}
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t n) const override {
    if (offset > size_ || n > size_ - offset) raise(Code::DataLoss, "{}: read past the end at offset {}", name_, offset);
    if (n) std::memcpy(dst, data_ + offset, n);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  std::string name_;
};

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  if (!dctx) raise(Code::ResourceExhausted, "checkpoint: cannot create a zstd decoder");
  return dctx.get();
}

[[noreturn]] void checksum_mismatch(const std::string& path, const TensorInfo& e) {
  raise(Code::DataLoss, "{}: checksum mismatch for key '{}'", path, e.key);
}

// Reads the stored bytes of a payload in order while hashing them.
class StoredStream {
 public:
  StoredStream(const Reader::Source& src, const TensorInfo& e) : src_(src), e_(e) { XXH3_64bits_reset(&hash_); }
  bool done() const { return pos_ == e_.stored_size; }
  // Reads the next chunk into `buf` (capacity `cap`); returns its length.
  size_t next(uint8_t* buf, size_t cap) {
    size_t len = static_cast<size_t>(std::min<uint64_t>(cap, e_.stored_size - pos_));
    src_.read(e_.offset + pos_, buf, len);
    XXH3_64bits_update(&hash_, buf, len);
    pos_ += len;
    return len;
  }
  // Hashes whatever is left and tells whether the stored checksum matches.
  bool finish_matches(uint8_t* buf, size_t cap) {
    while (!done()) next(buf, cap);
    return XXH3_64bits_digest(&hash_) == e_.checksum;
  }

 private:
  const Reader::Source& src_;
  const TensorInfo& e_;
  XXH3_state_t hash_;
  uint64_t pos_ = 0;
};

}  // namespace

Reader Reader::open(const std::string& path) {
  internal::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) internal::raise_errno(errno, path, "cannot open checkpoint");
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) internal::raise_errno(errno, path, "stat");
  if (!S_ISREG(st.st_mode)) raise(Code::InvalidArgument, "{}: not a regular file", path);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  auto source = std::make_unique<FileSource>(std::move(fd), static_cast<uint64_t>(st.st_size), path);
  return Reader(std::move(source), path);
}

Reader Reader::open_memory(const void* data, size_t size, std::string name) {
  auto source = std::make_unique<MemorySource>(data, size, name);
  return Reader(std::move(source), std::move(name));
}

Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

Reader::Reader(std::unique_ptr<Source> source, std::string path) : source_(std::move(source)), path_(std::move(path)) {
  file_size_ = source_->size();
  if (file_size_ < kHeaderSize + kFooterSize)
    raise(Code::DataLoss, "{}: file is too small ({} bytes) to be a checkpoint", path_, file_size_);
  uint8_t header_bytes[kHeaderSize];
  source_->read(0, header_bytes, kHeaderSize);
  Header header = decode_header(header_bytes, path_);
  uint8_t footer_bytes[kFooterSize];
  source_->read(file_size_ - kFooterSize, footer_bytes, kFooterSize);
  Footer footer = decode_footer(footer_bytes, path_);
  if (footer.format_version != header.format_version)
    raise(Code::DataLoss, "{}: footer format version {} differs from the header's {}", path_, footer.format_version,
          header.format_version);
  const uint64_t index_end = file_size_ - kFooterSize;
  if (footer.index_offset < kHeaderSize || footer.index_offset % kPayloadAlignment != 0 ||
      footer.index_offset > index_end || footer.index_size != index_end - footer.index_offset || footer.index_size == 0)
    raise(Code::DataLoss, "{}: footer places the index at [{}, +{}), which does not end at the footer ({})", path_,
          footer.index_offset, footer.index_size, index_end);
  format_version_ = header.format_version;

  if (footer.index_size > kMaxIndexBytes)
    raise(Code::DataLoss, "{}: footer claims an index of {} bytes (at most {})", path_, footer.index_size, kMaxIndexBytes);
  // A damaged footer of a big file can claim most of it as the index: a large index is checked
  // through a small buffer before memory is committed to it.
  const size_t index_size = static_cast<size_t>(footer.index_size);
  if (index_size > kReadChunk && kEnforceChecksums) {
    TensorInfo region;
    region.offset = footer.index_offset;
    region.stored_size = footer.index_size;
    region.checksum = footer.index_checksum;
    StoredStream stream(*source_, region);
    std::vector<uint8_t> buf(kReadChunk);
    if (!stream.finish_matches(buf.data(), buf.size())) raise(Code::DataLoss, "{}: index checksum mismatch", path_);
  }
  // uint64_t storage keeps the FlatBuffer 8-byte aligned.
  std::vector<uint64_t> index((index_size + 7) / 8);
  auto* index_bytes = reinterpret_cast<uint8_t*>(index.data());
  source_->read(footer.index_offset, index_bytes, index_size);
  if (checksum(index_bytes, index_size) != footer.index_checksum && kEnforceChecksums)
    raise(Code::DataLoss, "{}: index checksum mismatch", path_);
  internal::ParsedIndex parsed = internal::parse_index(index_bytes, static_cast<size_t>(footer.index_size),
                                                       footer.index_offset, format_version_, path_);
  entries_ = std::move(parsed.entries);
  graph_ = std::move(parsed.graph);
  metadata_ = std::move(parsed.metadata);
}

const TensorInfo* Reader::find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const TensorInfo& e, std::string_view k) { return std::string_view(e.key) < k; });
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

const TensorInfo& Reader::info(std::string_view key) const {
  const TensorInfo* e = find(key);
  if (!e) raise(Code::NotFound, "{}: no key named '{}'", path_, key);
  return *e;
}

Tensor Reader::load(std::string_view key, Device& device) const { return load(info(key), device); }

Tensor Reader::load(const TensorInfo& e, Device& device) const {
  if (e.dtype == DType::String)
    raise(Code::InvalidArgument, "{}: key '{}' is a string scalar; read it with load_string", path_, e.key);
  Tensor t = Tensor::allocate(device, e.dtype, e.shape);
  if (device.is_host()) {
    decode(e, static_cast<uint8_t*>(t.raw_mutable_data()));
  } else {
    std::unique_ptr<uint8_t[]> host(new (std::nothrow) uint8_t[e.raw_size ? e.raw_size : 1]);
    if (!host) raise(Code::ResourceExhausted, "{}: key '{}': cannot allocate {} host bytes", path_, e.key, e.raw_size);
    decode(e, host.get());
    device.write(*t.buffer(), host.get(), e.raw_size);
  }
  return t;
}

void Reader::load_into(const TensorInfo& e, const Tensor& dst) const {
  if (e.dtype == DType::String)
    raise(Code::InvalidArgument, "{}: key '{}' is a string scalar; read it with load_string", path_, e.key);
  if (!dst.valid() || !dst.device()->is_host() || dst.dtype() != e.dtype || dst.shape() != e.shape)
    raise(Code::InvalidArgument, "Reader::load_into: {}: key '{}' is {}{}, the destination is {}", path_, e.key,
          dtype_name(e.dtype), e.shape.str(), dst.valid() ? dst.debug_string() : std::string("an empty tensor"));
  decode(e, static_cast<uint8_t*>(dst.raw_mutable_data()));
}

std::string Reader::load_string(std::string_view key) const { return load_string(info(key)); }

std::string Reader::load_string(const TensorInfo& e) const {
  if (e.dtype != DType::String)
    raise(Code::InvalidArgument, "{}: key '{}' is {}{}, not a string scalar", path_, e.key, dtype_name(e.dtype), e.shape.str());
  // A string's size is not bounded by a shape, and std::string touches all of its memory: check
  // a large compressed one through small buffers before allocating what it claims.
  if (e.codec != Codec::None && e.raw_size > kVerifyStringsFirstAbove) verify(e);
  std::string s;
  try {
    s.resize(e.raw_size);
  } catch (const std::exception&) {
    raise(Code::ResourceExhausted, "{}: key '{}': cannot allocate {} bytes", path_, e.key, e.raw_size);
  }
  decode(e, reinterpret_cast<uint8_t*>(s.data()));
  return s;
}

void Reader::verify(const TensorInfo& e) const { decode(e, nullptr); }

uint64_t Reader::read_parallel(const TensorInfo& e, uint8_t* dst) const {
  const size_t n = static_cast<size_t>(e.stored_size);
  const size_t pieces = (n + kParallelReadChunk - 1) / kParallelReadChunk;
  std::mutex mu;
  std::vector<char> done(pieces, 0);
  size_t next_piece = 0, next_hash = 0;
  bool hashing = false, failed = false;
  std::exception_ptr error;
  XXH3_state_t hash;
  XXH3_64bits_reset(&hash);
  auto span = [&](size_t k) { return std::min(kParallelReadChunk, n - k * kParallelReadChunk); };
  auto work = [&](int64_t, int64_t) {
    try {
      for (;;) {
        size_t k;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (failed || next_piece == pieces) return;
          k = next_piece++;
        }
        source_->read(e.offset + k * kParallelReadChunk, dst + k * kParallelReadChunk, span(k));
        // Hash the pieces in order: whoever completes the next one hashes it and every completed
        // one after it, unless another thread is at it (that one looks again before it stops).
        std::unique_lock<std::mutex> lock(mu);
        done[k] = 1;
        while (!hashing && !failed && next_hash < pieces && done[next_hash]) {
          hashing = true;
          size_t h = next_hash;
          lock.unlock();
          XXH3_64bits_update(&hash, dst + h * kParallelReadChunk, span(h));
          lock.lock();
          ++next_hash;
          hashing = false;
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  pool_->parallel_for(pool_->num_threads(), 1, work);
  if (error) std::rethrow_exception(error);
  return XXH3_64bits_digest(&hash);
}

void Reader::decode(const TensorInfo& e, uint8_t* dst) const {
  source_->will_read(e.offset, e.stored_size);
  if (e.codec == Codec::None && dst && pool_ && pool_->num_threads() > 1 && e.stored_size >= 2 * kParallelReadChunk) {
    if (read_parallel(e, dst) != e.checksum && kEnforceChecksums) checksum_mismatch(path_, e);
    return;
  }
  StoredStream stored(*source_, e);
  if (e.codec == Codec::None) {
    std::vector<uint8_t> scratch(dst ? 0 : static_cast<size_t>(std::min<uint64_t>(kReadChunk, e.raw_size)));
    for (uint64_t off = 0; !stored.done(); off += kReadChunk)
      stored.next(dst ? dst + off : scratch.data(), kReadChunk);
    if (!stored.finish_matches(nullptr, 0) && kEnforceChecksums) checksum_mismatch(path_, e);
    return;
  }

  const bool shuffled = e.codec == Codec::ZstdShuffle;
  const size_t width = shuffled ? dtype_size(e.dtype) : 1;
  std::vector<uint8_t> in_buf(static_cast<size_t>(std::min<uint64_t>(kStoredChunk, e.stored_size)));
  // Shuffled data decodes block by block into `block`, then unshuffles into place; plain data
  // decodes straight into `dst` (or into `block` when only checking).
  const size_t block_cap =
      static_cast<size_t>(std::min<uint64_t>(shuffled ? kShuffleBlockBytes : ZSTD_DStreamOutSize(), e.raw_size));
  std::vector<uint8_t> block(shuffled || !dst ? block_cap : 0);
  std::vector<uint8_t> unshuffled(shuffled && !dst ? block_cap : 0);

  // A decode failure on bytes whose checksum does not match is reported as the checksum mismatch.
  auto fail = [&](const std::string& why) {
    if (!stored.finish_matches(in_buf.data(), in_buf.size()) && kEnforceChecksums) checksum_mismatch(path_, e);
    raise(Code::DataLoss, "{}: key '{}': {}", path_, e.key, why);
  };

  ZSTD_DCtx* d = thread_dctx();
  ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, kMaxWindowLog);
  XXH3_state_t raw_hash;
  XXH3_64bits_reset(&raw_hash);
  uint64_t produced = 0;  // raw bytes finished (hashed, and in place when dst is set)
  size_t block_fill = 0;
  ZSTD_inBuffer in{in_buf.data(), 0, 0};
  bool frame_done = false;
  while (!frame_done) {
    if (in.pos == in.size && !stored.done()) in = ZSTD_inBuffer{in_buf.data(), stored.next(in_buf.data(), in_buf.size()), 0};
    ZSTD_outBuffer out;
    if (shuffled) {
      out = ZSTD_outBuffer{block.data(), static_cast<size_t>(std::min<uint64_t>(block_cap, e.raw_size - produced)), block_fill};
    } else if (dst) {
      out = ZSTD_outBuffer{dst, static_cast<size_t>(e.raw_size), static_cast<size_t>(produced)};
    } else {
      out = ZSTD_outBuffer{block.data(), block_cap, 0};
    }
    const size_t in_before = in.pos, out_before = out.pos;
    size_t r = ZSTD_decompressStream(d, &out, &in);
    if (ZSTD_isError(r)) fail(fmt::format("cannot decompress: {}", ZSTD_getErrorName(r)));
    frame_done = r == 0;
    if (shuffled) {
      block_fill = out.pos;
      if (block_fill == out.size && block_fill > 0) {
        uint8_t* target = dst ? dst + produced : unshuffled.data();
        unshuffle_bytes(block.data(), target, block_fill, width);
        XXH3_64bits_update(&raw_hash, target, block_fill);
        produced += block_fill;
        block_fill = 0;
      }
    } else if (dst) {
      XXH3_64bits_update(&raw_hash, dst + produced, out.pos - produced);
      produced = out.pos;
    } else {
      XXH3_64bits_update(&raw_hash, block.data(), out.pos);
      produced += out.pos;
      if (produced > e.raw_size) fail(fmt::format("decodes to more than its {} raw bytes", e.raw_size));
    }
    if (!frame_done && in.pos == in_before && out.pos == out_before) {
      if (produced + block_fill >= e.raw_size && out.pos == out.size)
        fail(fmt::format("decodes to more than its {} raw bytes", e.raw_size));
      if (in.pos == in.size && stored.done()) fail("the compressed payload ends before its zstd frame does");
      fail("the zstd decoder made no progress");
    }
  }
  if (in.pos != in.size || !stored.done()) fail("stored bytes follow the end of the zstd frame");
  if (produced != e.raw_size || block_fill != 0)
    fail(fmt::format("decodes to {} bytes instead of {}", produced + block_fill, e.raw_size));
  if (!stored.finish_matches(in_buf.data(), in_buf.size()) && kEnforceChecksums) checksum_mismatch(path_, e);
  if (XXH3_64bits_digest(&raw_hash) != e.raw_checksum && kEnforceChecksums)
    raise(Code::DataLoss, "{}: checksum mismatch for key '{}' (decoded bytes)", path_, e.key);
}

}  // namespace cairn::ckpt
