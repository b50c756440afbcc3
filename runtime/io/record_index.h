// The optional index sidecar of a record file: `<path>.cairnidx`, a name TensorFlow's tools never
// read (TFRecordDataset globs and TensorBoard's "tfevents" match skip it), holding each record's
// offset, for an O(1) record count, seeking to record i and sharding. The record file itself stays
// byte-identical to TensorFlow's. Format (little-endian), docs/records.md:
//   "CAIRNIDX" | u32 version (1) | u32 compression | u64 file_size | u64 stream_size | u64 count
//   | u64 offset[count] | u32 masked crc32c of everything before it
// file_size is the record file's size when indexed (compressed bytes), stream_size the end of the
// last record in the uncompressed stream, offset[i] where record i starts in the uncompressed stream.
// An index is used only when its CRC, length, compression and file_size all match; otherwise it is
// stale or corrupt and ignored (counts fall back to a scan, seek_record reports why).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/io/record.h"

namespace cairn::io {

struct RecordReaderOptions;

inline constexpr char kIndexSuffix[] = ".cairnidx";
inline constexpr uint32_t kIndexVersion = 1;

// "<record_path>.cairnidx".
std::string index_path(const std::string& record_path);

struct RecordIndex {
  Compression compression = Compression::None;
  uint64_t file_size = 0;
  uint64_t stream_size = 0;
  std::vector<uint64_t> offsets;
  uint64_t count() const { return offsets.size(); }
};

// Writes the sidecar of `record_path` (a temporary file renamed into place).
void write_record_index(const std::string& record_path, const RecordIndex& index);

// The sidecar of `record_path` when it exists and describes the file as it is now; otherwise
// nullopt, with the reason ("no index", "index crc mismatch", "stale: file size ...") in *why.
std::optional<RecordIndex> load_record_index(const std::string& record_path, Compression compression,
                                             std::string* why = nullptr);

// Scans `record_path` (checksums as opts say), writes its sidecar and returns it. Only complete records
// are indexed; a file that grows later makes the index stale.
RecordIndex build_record_index(const std::string& record_path, const RecordReaderOptions& opts);

// Complete records in the file: from a valid index in O(1), else by a scan.
uint64_t count_records(const std::string& record_path, const RecordReaderOptions& opts);

// Records [begin, end) of shard `shard` of `num_shards` over `count` records: [shard*count/num_shards,
// (shard+1)*count/num_shards). Every record lands in exactly one shard; sizes differ by at most one.
std::pair<uint64_t, uint64_t> shard_range(uint64_t count, uint64_t num_shards, uint64_t shard);

}  // namespace cairn::io
