#include "runtime/checkpoint/writer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "runtime/checkpoint/internal/index.h"
#include "runtime/checkpoint/internal/io.h"

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

class PayloadWriter {
 public:
  PayloadWriter(BufferedFile& file, const std::string& path, const WriteOptions& options)
      : file_(file), path_(path), options_(options) {}

  // Appends one payload at the next aligned offset and fills in `info`'s location fields.
  void write(TensorInfo& info, const uint8_t* raw, size_t n, size_t width) {
    pad_to_alignment(file_);
    info.offset = file_.position();
    info.raw_size = n;
    if (options_.compress && n >= kMinCompressBytes && try_compress(info, raw, n, width)) return;
    file_.rewind(info.offset);
    // Hash each chunk just before writing it, so the write copies from cache; chunks of this size
    // go from the tensor's memory to the file without passing through the buffer.
    XXH3_state_t hash;
    XXH3_64bits_reset(&hash);
    for (size_t off = 0; off < n; off += kHashWriteChunk) {
      size_t len = std::min(kHashWriteChunk, n - off);
      XXH3_64bits_update(&hash, raw + off, len);
      file_.write(raw + off, len);
    }
    info.codec = Codec::None;
    info.stored_size = n;
    info.checksum = info.raw_checksum = XXH3_64bits_digest(&hash);
  }

 private:
  // Streams one zstd frame into the file; gives up (returning false) as soon as the output
  // passes 95% of the input. The caller then rewinds over what was written.
  bool try_compress(TensorInfo& info, const uint8_t* raw, size_t n, size_t width) {
    if (!cctx_) {
      cctx_.reset(ZSTD_createCCtx());
      if (!cctx_) raise(Code::ResourceExhausted, "{}: cannot create a zstd context", path_);
      out_.resize(ZSTD_CStreamOutSize());
    }
    ZSTD_CCtx* c = cctx_.get();
    check_zstd(ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters), path_, info.key);
    check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, options_.zstd_level), path_, info.key);
    check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0), path_, info.key);
    check_zstd(ZSTD_CCtx_setPledgedSrcSize(c, n), path_, info.key);
    if (width > 1 && shuffled_.size() < kShuffleBlockBytes) shuffled_.resize(kShuffleBlockBytes);

    const uint64_t limit = n - n / 20;
    const size_t block = width > 1 ? kShuffleBlockBytes : kPlainCompressChunk;
    uint64_t stored = 0;
    XXH3_state_t hash, raw_hash;
    XXH3_64bits_reset(&hash);
    XXH3_64bits_reset(&raw_hash);
    for (size_t off = 0; off < n; off += block) {
      size_t len = std::min(block, n - off);
      const uint8_t* src = raw + off;
      XXH3_64bits_update(&raw_hash, src, len);
      if (width > 1) {
        shuffle_bytes(src, shuffled_.data(), len, width);
        src = shuffled_.data();
      }
      const bool last = off + len == n;
      ZSTD_inBuffer in{src, len, 0};
      for (;;) {
        ZSTD_outBuffer out{out_.data(), out_.size(), 0};
        size_t r = ZSTD_compressStream2(c, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
        check_zstd(r, path_, info.key);
        stored += out.pos;
        if (stored > limit) return false;
        file_.write(out_.data(), out.pos);
        XXH3_64bits_update(&hash, out_.data(), out.pos);
        if (last ? r == 0 : in.pos == in.size) break;
      }
    }
    info.codec = width > 1 ? Codec::ZstdShuffle : Codec::Zstd;
    info.stored_size = stored;
    info.checksum = XXH3_64bits_digest(&hash);
    info.raw_checksum = XXH3_64bits_digest(&raw_hash);
    return true;
  }

  BufferedFile& file_;
  const std::string& path_;
  const WriteOptions& options_;
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxDeleter> cctx_;
  std::vector<uint8_t> out_;
  std::vector<uint8_t> shuffled_;
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

  BufferedFile file(fd.get(), guard.path, kWriteBufferBytes, kHashWriteChunk);
  uint8_t header[kHeaderSize];
  encode_header(Header{}, header);
  file.write(header, sizeof header);

  WriteStats stats;
  std::vector<TensorInfo> infos(items.size());
  PayloadWriter payloads(file, path, options);
  std::vector<uint8_t> staging;  // for tensors that do not live in host memory
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    TensorInfo& info = infos[i];
    info.key = std::string(it.key);
    info.dtype = it.dtype;
    info.shape = it.shape;
    const uint8_t* raw;
    size_t n;
    if (it.bytes) {
      raw = reinterpret_cast<const uint8_t*>(it.bytes->data());
      n = it.bytes->size();
    } else {
      const Tensor& t = *it.tensor;
      n = static_cast<size_t>(t.num_elements()) * dtype_size(t.dtype());
      if (t.nbytes() < n) raise(Code::Internal, "write_checkpoint: key '{}': buffer smaller than its shape", it.key);
      if (t.device()->is_host()) {
        raw = static_cast<const uint8_t*>(t.raw_data());
      } else {
        staging.resize(n);
        t.device()->read(*t.buffer(), staging.data(), n);
        raw = staging.data();
      }
    }
    payloads.write(info, raw, n, it.bytes ? 0 : shuffle_width(it.dtype));
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
