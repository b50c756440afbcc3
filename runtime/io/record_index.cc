#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/io/crc32c.h"
#include "runtime/io/internal/file.h"
#include "runtime/io/record_index.h"
#include "runtime/io/record_reader.h"

namespace cairn::io {

namespace {
constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'I', 'D', 'X'};
constexpr size_t kFixedBytes = 40;  // magic, version, compression, file_size, stream_size, count

// Reads the whole of a small file; false when it does not exist.
bool slurp(const std::string& path, std::vector<uint8_t>* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    internal::raise_errno(errno, path, "open index");
  }
  try {
    out->resize(internal::file_size(fd, path));
    out->resize(internal::pread_full(fd, out->data(), out->size(), 0, path));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return true;
}
}  // namespace

std::string index_path(const std::string& record_path) { return record_path + kIndexSuffix; }

void write_record_index(const std::string& record_path, const RecordIndex& index) {
  std::vector<uint8_t> b(kFixedBytes + 8 * index.offsets.size() + 4);
  std::memcpy(b.data(), kMagic, 8);
  internal::store_le32(&b[8], kIndexVersion);
  internal::store_le32(&b[12], static_cast<uint32_t>(index.compression));
  internal::store_le64(&b[16], index.file_size);
  internal::store_le64(&b[24], index.stream_size);
  internal::store_le64(&b[32], index.offsets.size());
  for (size_t i = 0; i < index.offsets.size(); ++i) internal::store_le64(&b[kFixedBytes + 8 * i], index.offsets[i]);
  size_t body = b.size() - 4;
  internal::store_le32(&b[body], mask_crc(crc32c(b.data(), body)));

  const std::string final_path = index_path(record_path);
  const std::string tmp = final_path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) internal::raise_errno(errno, tmp, "write index: open");
  try {
    internal::write_all(fd, b.data(), b.size(), tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0 && errno != EINTR) internal::raise_errno(errno, tmp, "write index: close");
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) internal::raise_errno(errno, final_path, "write index: rename");
}

std::optional<RecordIndex> load_record_index(const std::string& record_path, Compression compression,
                                             std::string* why) {
  std::string ignored;
  std::string& reason = why ? *why : ignored;
  const std::string ipath = index_path(record_path);
  std::vector<uint8_t> b;
  if (!slurp(ipath, &b)) {
    reason = "no index " + ipath;
    return std::nullopt;
  }
  auto bad = [&](const std::string& what) {
    reason = ipath + ": " + what;
    return std::nullopt;
  };
  if (b.size() < kFixedBytes + 4 || std::memcmp(b.data(), kMagic, 8) != 0) return bad("not an index (bad magic or size)");
  if (internal::load_le32(&b[8]) != kIndexVersion) return bad("unknown version " + std::to_string(internal::load_le32(&b[8])));
  const uint64_t count = internal::load_le64(&b[32]);
  if (count > (b.size() - kFixedBytes - 4) / 8 || b.size() != kFixedBytes + 8 * count + 4)
    return bad("length does not match its record count");
  if (unmask_crc(internal::load_le32(&b[b.size() - 4])) != crc32c(b.data(), b.size() - 4)) return bad("checksum mismatch");
  RecordIndex idx;
  idx.compression = static_cast<Compression>(internal::load_le32(&b[12]));
  idx.file_size = internal::load_le64(&b[16]);
  idx.stream_size = internal::load_le64(&b[24]);
  if (idx.compression != compression)
    return bad(std::string("written for compression ") + compression_name(idx.compression) + ", read as " +
               compression_name(compression));
  int fd = ::open(record_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) internal::raise_errno(errno, record_path, "open");
  uint64_t size = 0;
  try {
    size = internal::file_size(fd, record_path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (size != idx.file_size)
    return bad("stale: it describes " + std::to_string(idx.file_size) + " bytes, the file has " + std::to_string(size));
  idx.offsets.resize(count);
  uint64_t prev = 0;
  for (uint64_t i = 0; i < count; ++i) {
    idx.offsets[i] = internal::load_le64(&b[kFixedBytes + 8 * i]);
    if ((i > 0 && idx.offsets[i] < prev + kRecordHeaderBytes + kRecordFooterBytes) || idx.offsets[i] >= idx.stream_size)
      return bad("offsets out of order");
    prev = idx.offsets[i];
  }
  if (compression == Compression::None && idx.stream_size != idx.file_size) return bad("stream size differs from the file size");
  reason.clear();
  return idx;
}

RecordIndex build_record_index(const std::string& record_path, const RecordReaderOptions& opts) {
  auto reader = RecordReader::open(record_path, opts);
  RecordIndex idx;
  idx.compression = opts.compression;
  std::string_view rec;
  for (;;) {
    uint64_t at = reader->offset();
    if (!reader->next(&rec)) break;
    idx.offsets.push_back(at);
  }
  idx.stream_size = reader->offset();
  // The size the scan saw: a file that grew meanwhile no longer matches and reads as stale.
  idx.file_size = reader->file_bytes_read();
  write_record_index(record_path, idx);
  return idx;
}

uint64_t count_records(const std::string& record_path, const RecordReaderOptions& opts) {
  if (auto idx = load_record_index(record_path, opts.compression)) return idx->count();
  auto reader = RecordReader::open(record_path, opts);
  std::string_view rec;
  uint64_t n = 0;
  while (reader->next(&rec)) ++n;
  return n;
}

std::pair<uint64_t, uint64_t> shard_range(uint64_t count, uint64_t num_shards, uint64_t shard) {
  if (num_shards == 0 || shard >= num_shards)
    raise(Code::InvalidArgument, "shard_range: shard {} of {} does not exist", shard, num_shards);
  // 128-bit products: count * shard may pass 2^64.
  auto at = [&](uint64_t s) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(count) * s / num_shards);
  };
  return {at(shard), at(shard + 1)};
}

}  // namespace cairn::io
