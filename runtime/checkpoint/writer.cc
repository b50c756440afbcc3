#include "runtime/checkpoint/writer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <random>

#include "runtime/checkpoint/internal/index.h"
#include "runtime/checkpoint/internal/io.h"
#include "runtime/core/thread_pool.h"

namespace cairn::ckpt {

SaveEntry SaveEntry::string_scalar(std::string key, std::string bytes) {
  SaveEntry e;
  e.key = std::move(key);
  e.is_string = true;
  e.bytes = std::move(bytes);
  return e;
}

namespace {

using internal::BufferedFile;
using internal::Fd;

constexpr size_t kWriteBufferBytes = size_t{4} << 20;
constexpr size_t kMinCompressBytes = 128;       // smaller payloads cannot gain past zstd's framing
constexpr size_t kPlainCompressChunk = size_t{1} << 20;
constexpr size_t kHashWriteChunk = size_t{1} << 20;
constexpr size_t kMinParallelBytes = size_t{1} << 20;  // less is not worth handing to other threads
constexpr int kMaxZstdLevel = 19;  // higher levels want windows larger than readers accept
constexpr const char kTempInfix[] = ".tmp-";

struct ZstdCCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

// What one entry of the file is made of, in key order.
struct Item {
  std::string_view key;
  DType dtype;
  Shape shape;
  const Tensor* tensor = nullptr;     // numeric and bool values
  const std::string* bytes = nullptr; // string scalars
};

size_t shuffle_width(DType t) {
  return (dtype_is_floating(t) || t == DType::Complex64) ? dtype_size(t) : 0;
}

// Zero padding up to the next payload boundary.
void pad_to_alignment(BufferedFile& file) {
  file.write_zeros(static_cast<size_t>((kPayloadAlignment - file.position() % kPayloadAlignment) % kPayloadAlignment));
}

void check_zstd(size_t r, const std::string& path, std::string_view key) {
  if (ZSTD_isError(r)) raise(Code::Internal, "{}: zstd failed on key '{}': {}", path, key, ZSTD_getErrorName(r));
}

// The compressor of the calling thread, and its shuffle buffer (pool threads keep theirs).
struct ThreadCompressor {
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxDeleter> cctx;
  std::vector<uint8_t> shuffled;
};
ThreadCompressor& thread_compressor(const std::string& path) {
  thread_local ThreadCompressor tc;
  if (!tc.cctx) {
    tc.cctx.reset(ZSTD_createCCtx());
    if (!tc.cctx) raise(Code::ResourceExhausted, "{}: cannot create a zstd context", path);
  }
  return tc;
}

// At level 1, byte-shuffled payloads get a small (cache-resident) hash table and 7-byte minimum
// matches. Shuffled float weights have few matches: what shrinks them is the entropy coding of the
// sign, exponent and high mantissa bytes. On normal-distributed weights this compressed 1.4x
// faster than plain level 1 to a file 0.3% smaller; on pruned weights (3 of 4 zero) 6% faster, 2.5%
// larger (docs/benchmarks.md "Checkpoints"). The parameters depend on the level and dtype only, so
// the bytes stay the same for every thread count.
constexpr int kShuffledFastLevel = 1;
constexpr int kShuffledFastHashLog = 10;
constexpr int kShuffledFastMinMatch = 7;

void tune_for_shuffled_bytes(ZSTD_CCtx* c, int level, const std::string& path, std::string_view key) {
  if (level != kShuffledFastLevel) return;
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, kShuffledFastHashLog), path, key);
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, kShuffledFastMinMatch), path, key);
}

// One payload's stored form and checksums.
struct Encoded {
  Codec codec = Codec::None;
  uint64_t stored_size = 0;
  uint64_t checksum = 0;
  uint64_t raw_checksum = 0;
};

// Compresses `raw` into one zstd frame, handing the output to `sink`, which gives out buffers of
// ZSTD_CStreamOutSize() bytes (`sink.buffer()`) and takes what zstd put in them (`sink.take(n)`).
// The writer compressing into the file and a pool thread compressing into memory run this same
// sequence of zstd calls, with the same input blocks and output buffer sizes, so they produce the
// same bytes. Gives up (returning false) as soon as the output passes 95% of the input.
template <class Sink>
bool compress_frame(const uint8_t* raw, size_t n, size_t width, int level, const std::string& path, std::string_view key,
                    Sink& sink, Encoded& enc) {
  ThreadCompressor& tc = thread_compressor(path);
  ZSTD_CCtx* c = tc.cctx.get();
  check_zstd(ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters), path, key);
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level), path, key);
  if (width > 1) tune_for_shuffled_bytes(c, level, path, key);
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0), path, key);
  check_zstd(ZSTD_CCtx_setPledgedSrcSize(c, n), path, key);
  if (width > 1 && tc.shuffled.size() < kShuffleBlockBytes) tc.shuffled.resize(kShuffleBlockBytes);

  const uint64_t limit = n - n / 20;
  const size_t block = width > 1 ? kShuffleBlockBytes : kPlainCompressChunk;
  const size_t out_size = ZSTD_CStreamOutSize();
  uint64_t stored = 0;
  XXH3_state_t hash, raw_hash;
  XXH3_64bits_reset(&hash);
  XXH3_64bits_reset(&raw_hash);
  for (size_t off = 0; off < n; off += block) {
    size_t len = std::min(block, n - off);
    const uint8_t* src = raw + off;
    XXH3_64bits_update(&raw_hash, src, len);
    if (width > 1) {
      shuffle_bytes(src, tc.shuffled.data(), len, width);
      src = tc.shuffled.data();
    }
    const bool last = off + len == n;
    ZSTD_inBuffer in{src, len, 0};
    for (;;) {
      ZSTD_outBuffer out{sink.buffer(), out_size, 0};
      size_t r = ZSTD_compressStream2(c, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      check_zstd(r, path, key);
      stored += out.pos;
      if (stored > limit) return false;
      XXH3_64bits_update(&hash, out.dst, out.pos);
      sink.take(out.pos);
      if (last ? r == 0 : in.pos == in.size) break;
    }
  }
  enc.codec = width > 1 ? Codec::ZstdShuffle : Codec::Zstd;
  enc.stored_size = stored;
  enc.checksum = XXH3_64bits_digest(&hash);
  enc.raw_checksum = XXH3_64bits_digest(&raw_hash);
  return true;
}

// Compressed output straight into the file, through one out buffer.
class FileSink {
 public:
  FileSink(BufferedFile& file, std::vector<uint8_t>& out) : file_(file), out_(out) { out_.resize(ZSTD_CStreamOutSize()); }
  uint8_t* buffer() { return out_.data(); }
  void take(size_t n) { file_.write(out_.data(), n); }

 private:
  BufferedFile& file_;
  std::vector<uint8_t>& out_;
};

// Compressed output into memory, for a payload encoded ahead of its turn. Room for 95% of the
// raw size plus one out buffer: compress_frame stops once it passes 95%.
class MemorySink {
 public:
  explicit MemorySink(size_t raw_size)
      : capacity_(raw_size - raw_size / 20 + ZSTD_CStreamOutSize()), data_(new uint8_t[capacity_]) {}
  uint8_t* buffer() { return data_.get() + size_; }
  void take(size_t n) { size_ += n; }
  std::unique_ptr<uint8_t[]> release() { return std::move(data_); }

 private:
  size_t capacity_;
  std::unique_ptr<uint8_t[]> data_;  // left uninitialized: pages nobody writes are never touched
  size_t size_ = 0;
};

uint64_t hash_bytes(const uint8_t* raw, size_t n) {
  XXH3_state_t hash;
  XXH3_64bits_reset(&hash);
  for (size_t off = 0; off < n; off += kHashWriteChunk) XXH3_64bits_update(&hash, raw + off, std::min(kHashWriteChunk, n - off));
  return XXH3_64bits_digest(&hash);
}

// Where one entry's raw bytes are and how they are to be stored.
struct Payload {
  const uint8_t* raw = nullptr;  // null until staged, for tensors not in host memory
  size_t n = 0;
  size_t width = 0;  // shuffle width; 0 for none
  bool ahead = false;  // counted in ParallelPayloads' bytes ahead
  // Filled by encode() when the payload is encoded ahead of its turn.
  bool encoded = false;
  Encoded enc;
  std::unique_ptr<uint8_t[]> stored;  // the compressed bytes (codec != None)
};

class PayloadWriter {
 public:
  PayloadWriter(BufferedFile& file, const std::string& path, const WriteOptions& options)
      : file_(file), path_(path), options_(options) {}

  bool compresses(size_t n) const { return options_.compress && n >= kMinCompressBytes; }

  // Encodes `p` in memory (compressed bytes and checksums), on any thread; the file is untouched.
  void encode(Payload& p, std::string_view key) const {
    if (compresses(p.n)) {
      MemorySink sink(p.n);
      if (compress_frame(p.raw, p.n, p.width, options_.zstd_level, path_, key, sink, p.enc)) {
        p.stored = sink.release();
        p.encoded = true;
        return;
      }
    }
    p.enc = Encoded{};
    p.enc.stored_size = p.n;
    p.enc.checksum = p.enc.raw_checksum = hash_bytes(p.raw, p.n);
    p.encoded = true;
  }

  // Appends one payload at the next aligned offset and fills in `info`'s location fields. An
  // encoded payload is written as it is; any other is encoded here, on the writing thread.
  void write(TensorInfo& info, Payload& p) {
    pad_to_alignment(file_);
    info.offset = file_.position();
    info.raw_size = p.n;
    if (p.encoded) {
      if (p.enc.codec == Codec::None) {
        file_.write(p.raw, p.n);
      } else {
        file_.write(p.stored.get(), static_cast<size_t>(p.enc.stored_size));
        p.stored.reset();
      }
      set_info(info, p.enc);
      return;
    }
    Encoded enc;
    if (compresses(p.n)) {
      FileSink sink(file_, out_);
      if (compress_frame(p.raw, p.n, p.width, options_.zstd_level, path_, info.key, sink, enc)) {
        set_info(info, enc);
        return;
      }
      file_.rewind(info.offset);
    }
    // Hash each chunk just before writing it, so the write copies from cache. A payload of a chunk
    // or more goes from the tensor's memory to the file without passing through the buffer, its
    // shorter last chunk included (buffering it cost an extra copy of up to a chunk per payload:
    // 22% of the bytes of 2.56 MiB tensors); smaller payloads are gathered in the buffer.
    const bool through = p.n >= kHashWriteChunk;
    XXH3_state_t hash;
    XXH3_64bits_reset(&hash);
    for (size_t off = 0; off < p.n; off += kHashWriteChunk) {
      size_t len = std::min(kHashWriteChunk, p.n - off);
      XXH3_64bits_update(&hash, p.raw + off, len);
      if (through) file_.write_through(p.raw + off, len);
      else file_.write(p.raw + off, len);
    }
    enc.stored_size = p.n;
    enc.checksum = enc.raw_checksum = XXH3_64bits_digest(&hash);
    set_info(info, enc);
  }

 private:
  static void set_info(TensorInfo& info, const Encoded& enc) {
    info.codec = enc.codec;
    info.stored_size = enc.stored_size;
    info.checksum = enc.checksum;
    info.raw_checksum = enc.raw_checksum;
  }

  BufferedFile& file_;
  const std::string& path_;
  const WriteOptions& options_;
  std::vector<uint8_t> out_;  // FileSink's buffer
};

// Writes the payloads in key order on one thread (the one holding the turn to write) while pool
// threads encode later payloads ahead of it, at most max_bytes_ahead raw bytes beyond the file.
// Whichever thread finishes the payload next in line writes it and every ready one after it.
class ParallelPayloads {
 public:
  ParallelPayloads(PayloadWriter& writer, const std::vector<Item>& items, std::vector<Payload>& payloads,
                   std::vector<TensorInfo>& infos, const std::function<void(size_t)>& stage, size_t max_bytes_ahead)
      : max_ahead_(max_bytes_ahead),
        writer_(writer), items_(items), payloads_(payloads), infos_(infos), stage_(stage), ready_(items.size(), 0) {}

  void run(ThreadPool& pool) {
    pool.parallel_for(pool.num_threads(), 1, [this](int64_t, int64_t) { work(); });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Payloads encoded ahead must be in host memory and small enough to hold.
  bool encodes_ahead(size_t i) const { return payloads_[i].raw && payloads_[i].n <= max_ahead_; }
  size_t max_ahead_;

  void work() {
    try {
      for (;;) {
        size_t i;
        {
          std::unique_lock<std::mutex> lock(mu_);
          if (failed_ || next_item_ == items_.size()) return;
          i = next_item_++;
          if (encodes_ahead(i)) {
            // Wait for room, unless this is the next payload to write (it never waits).
            room_.wait(lock, [&] { return failed_ || i == next_write_ || ahead_bytes_ + payloads_[i].n <= max_ahead_; });
            if (failed_) return;
            ahead_bytes_ += payloads_[i].n;
            payloads_[i].ahead = true;
          }
        }
        if (payloads_[i].ahead) writer_.encode(payloads_[i], items_[i].key);
        {
          std::lock_guard<std::mutex> lock(mu_);
          ready_[i] = 1;
        }
        write_ready();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
      room_.notify_all();
    }
  }

  // Writes the payloads in line that are ready, unless another thread is already doing it (that
  // thread looks again before it stops, so nothing ready is left behind).
  void write_ready() {
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (writing_ || failed_ || next_write_ == items_.size() || !ready_[next_write_]) return;
        writing_ = true;
        i = next_write_;
      }
      if (!payloads_[i].raw) stage_(i);
      writer_.write(infos_[i], payloads_[i]);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (payloads_[i].ahead) ahead_bytes_ -= payloads_[i].n;
        ++next_write_;
        writing_ = false;
      }
      room_.notify_all();
    }
  }

  PayloadWriter& writer_;
  const std::vector<Item>& items_;
  std::vector<Payload>& payloads_;
  std::vector<TensorInfo>& infos_;
  const std::function<void(size_t)>& stage_;

  std::mutex mu_;
  std::condition_variable room_;
  std::vector<char> ready_;  // encoded, or to be encoded by the writing thread
  size_t next_item_ = 0;
  size_t next_write_ = 0;
  size_t ahead_bytes_ = 0;  // raw bytes of payloads encoded (or being encoded) but not written
  bool writing_ = false;
  bool failed_ = false;
  std::exception_ptr error_;
};

std::string temp_suffix() {
  std::random_device rd;
  uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{}{:016x}", kTempInfix, r);
}

// Checks the caller's input and returns it as items sorted by key, object graph entry included.
std::vector<Item> collect_items(const std::vector<SaveEntry>& entries, const std::string& graph_bytes) {
  std::vector<Item> items;
  items.reserve(entries.size() + 1);
  for (const SaveEntry& e : entries) {
    if (e.key.empty()) raise(Code::InvalidArgument, "write_checkpoint: an entry has an empty key");
    if (e.key.find('\0') != std::string::npos)
      raise(Code::InvalidArgument, "write_checkpoint: key '{}' contains a NUL byte", e.key);
    if (e.key == kObjectGraphKey)
      raise(Code::InvalidArgument, "write_checkpoint: key '{}' is reserved for the object graph", e.key);
    Item item;
    item.key = e.key;
    if (e.is_string) {
      item.dtype = DType::String;
      item.bytes = &e.bytes;
    } else {
      if (!e.tensor.valid()) raise(Code::InvalidArgument, "write_checkpoint: key '{}' has no tensor", e.key);
      if (dtype_size(e.tensor.dtype()) == 0)
        raise(Code::InvalidArgument, "write_checkpoint: key '{}' has dtype {}; save strings with SaveEntry::string_scalar",
              e.key, dtype_name(e.tensor.dtype()));
      item.dtype = e.tensor.dtype();
      item.shape = e.tensor.shape();
      item.tensor = &e.tensor;
    }
    items.push_back(item);
  }
  Item graph_item;
  graph_item.key = kObjectGraphKey;
  graph_item.dtype = DType::String;
  graph_item.bytes = &graph_bytes;
  items.push_back(graph_item);
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  for (size_t i = 1; i < items.size(); ++i)
    if (items[i].key == items[i - 1].key) raise(Code::InvalidArgument, "write_checkpoint: duplicate key '{}'", items[i].key);
  return items;
}

// Removes the temporary file unless the write went through.
struct TempFileGuard {
  std::string path;
  bool committed = false;
  ~TempFileGuard() {
    if (!committed && !path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

WriteStats write_checkpoint(const std::string& path, const ObjectGraph& graph, const std::vector<SaveEntry>& entries,
                            const Metadata& metadata, const WriteOptions& options) {
  if (path.empty()) raise(Code::InvalidArgument, "write_checkpoint: empty path");
  if (options.compress && (options.zstd_level < ZSTD_minCLevel() || options.zstd_level > kMaxZstdLevel))
    raise(Code::InvalidArgument, "write_checkpoint: zstd level {} is outside [{}, {}]", options.zstd_level, ZSTD_minCLevel(),
          kMaxZstdLevel);
  validate_object_graph(graph, "write_checkpoint");

  // Keys first (the graph's attribute indices refer to their sorted order), then the graph bytes.
  std::string graph_bytes;
  std::vector<Item> items = collect_items(entries, graph_bytes);
  std::vector<std::string_view> keys;
  keys.reserve(items.size());
  for (const Item& it : items) keys.push_back(it.key);
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const Attribute& a : graph.nodes[i].attributes)
      if (!std::binary_search(keys.begin(), keys.end(), std::string_view(a.key)))
        raise(Code::InvalidArgument, "write_checkpoint: node {} attribute '{}' refers to key '{}', which is not being saved", i,
              a.name, a.key);
  graph_bytes = internal::build_object_graph(graph, keys);

  TempFileGuard guard;
  Fd fd;
  for (int attempt = 0; attempt < 16 && !fd.valid(); ++attempt) {
    guard.path = path + temp_suffix();
    fd = Fd(::open(guard.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (!fd.valid() && errno != EEXIST) {
      int err = errno;
      guard.path.clear();
      internal::raise_errno(err, path, "cannot create a temporary file beside it");
    }
  }
  if (!fd.valid()) {
    guard.path.clear();
    raise(Code::AlreadyExists, "{}: cannot find a free temporary file name", path);
  }

  BufferedFile file(fd.get(), guard.path, kWriteBufferBytes, kHashWriteChunk, /*early_writeback=*/options.fsync);
  uint8_t header[kHeaderSize];
  encode_header(Header{}, header);
  file.write(header, sizeof header);

  WriteStats stats;
  std::vector<TensorInfo> infos(items.size());
  std::vector<Payload> payloads(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    TensorInfo& info = infos[i];
    info.key = std::string(it.key);
    info.dtype = it.dtype;
    info.shape = it.shape;
    Payload& p = payloads[i];
    if (it.bytes) {
      p.raw = reinterpret_cast<const uint8_t*>(it.bytes->data());
      p.n = it.bytes->size();
    } else {
      const Tensor& t = *it.tensor;
      p.n = static_cast<size_t>(t.num_elements()) * dtype_size(t.dtype());
      p.width = shuffle_width(it.dtype);
      if (t.nbytes() < p.n) raise(Code::Internal, "write_checkpoint: key '{}': buffer smaller than its shape", it.key);
      if (t.device()->is_host()) p.raw = static_cast<const uint8_t*>(t.raw_data());
    }
  }
  // Tensors that do not live in host memory are copied to the host one at a time, on the
  // writing thread, when their turn comes.
  std::vector<uint8_t> staging;
  std::function<void(size_t)> stage = [&](size_t i) {
    const Tensor& t = *items[i].tensor;
    staging.resize(payloads[i].n);
    t.device()->read(*t.buffer(), staging.data(), payloads[i].n);
    payloads[i].raw = staging.data();
  };

  PayloadWriter writer(file, path, options);
  size_t total_bytes = 0;
  for (const Payload& p : payloads) total_bytes += p.n;
  // Only compression is worth sharing out: an uncompressed save is bound by the write, and hashing
  // ahead on another thread made it wait whenever that thread was descheduled.
  if (options.compress && options.pool && options.pool->num_threads() > 1 && items.size() > 1 &&
      total_bytes >= kMinParallelBytes) {
    ParallelPayloads(writer, items, payloads, infos, stage, options.max_bytes_ahead).run(*options.pool);
  } else {
    for (size_t i = 0; i < items.size(); ++i) {
      if (!payloads[i].raw) stage(i);
      writer.write(infos[i], payloads[i]);
    }
  }
  for (const TensorInfo& info : infos) {
    stats.raw_bytes += info.raw_size;
    stats.stored_bytes += info.stored_size;
    if (info.codec != Codec::None) ++stats.compressed_entries;
  }
  stats.entries = infos.size();

  pad_to_alignment(file);
  Footer footer;
  footer.index_offset = file.position();
  {
    std::vector<uint8_t> index = internal::build_index(infos, graph, metadata);
    footer.index_size = index.size();
    footer.index_checksum = checksum(index.data(), index.size());
    file.write(index.data(), index.size());
  }
  uint8_t footer_bytes[kFooterSize];
  encode_footer(footer, footer_bytes);
  file.write(footer_bytes, sizeof footer_bytes);
  file.finish();
  stats.file_size = file.position();

  if (options.fsync) internal::fsync_fd(fd.get(), guard.path);
  fd.close_checked(guard.path);
  if (::rename(guard.path.c_str(), path.c_str()) != 0) internal::raise_errno(errno, path, "rename into place");
  guard.committed = true;
  if (options.fsync) internal::fsync_parent_dir(path);
  return stats;
}

bool is_temp_file_name(const std::string& name) {
  size_t pos = name.rfind(kTempInfix);
  if (pos == std::string::npos || pos == 0) return false;
  std::string_view hex(name.data() + pos + sizeof(kTempInfix) - 1, name.size() - pos - (sizeof(kTempInfix) - 1));
  return hex.size() == 16 && std::all_of(hex.begin(), hex.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<std::string> remove_stale_temp_files(const std::string& dir, const std::string& name_prefix) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) internal::raise_errno(errno, dir, "open directory");
  std::vector<std::string> names;
  while (struct dirent* ent = ::readdir(d.get())) {
    std::string name = ent->d_name;
    if (name.compare(0, name_prefix.size(), name_prefix) == 0 && is_temp_file_name(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> removed;
  std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  for (const std::string& name : names) {
    std::string p = base + name;
    if (::unlink(p.c_str()) == 0) removed.push_back(p);
    else if (errno != ENOENT) internal::raise_errno(errno, p, "remove stale temporary file");
  }
  return removed;
}

}  // namespace cairn::ckpt
