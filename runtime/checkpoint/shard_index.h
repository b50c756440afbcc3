// Sharded checkpoints (docs/checkpoints.md, "Sharded checkpoints"): ranks that hold the same values
// (data parallelism) divide the values among them, each writes its share as an ordinary checkpoint
// file (a shard), and one small index file names the shards. The index is the checkpoint: its path
// is what a manager lists and what a restore or `cairn ckpt` is given.
//
// Index file (text, one record a line, keys percent-escaped):
//   CAIRNSHD 1
//   shards <count>
//   shard <rank> <file name in the index's directory> <size in bytes> <checksum, hex>
//   key <shard> <escaped key>          (every value key but _CHECKPOINTABLE_OBJECT_GRAPH, sorted)
//   checksum <XXH3-64 of every line above, hex>
// A shard's checksum is the XXH3-64 of its own index (its footer's), which covers the checksum of
// every payload: it names the shard's content without reading the payloads again.
//
// Each shard holds the object graph with only its own values' attributes; a reader merges them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/checkpoint/format.h"
#include "runtime/checkpoint/reader.h"

namespace cairn::ckpt {

constexpr char kShardIndexMagic[8] = {'C', 'A', 'I', 'R', 'N', 'S', 'H', 'D'};
constexpr uint32_t kShardIndexVersion = 1;

struct ShardFile {
  std::string file;  // a file name in the index's directory
  uint64_t size = 0;
  uint64_t checksum = 0;  // the shard's index checksum (its footer's)
  bool operator==(const ShardFile& o) const { return file == o.file && size == o.size && checksum == o.checksum; }
};

struct ShardIndex {
  std::vector<ShardFile> shards;                         // by rank
  std::vector<std::pair<std::string, uint32_t>> keys;    // value key -> shard, sorted by key
};

std::string encode_shard_index(const ShardIndex& index);
// Parses and checks an index (checksum, shard numbers, sorted unique keys); DataLoss naming `path`.
ShardIndex parse_shard_index(std::string_view text, std::string_view path);
// Reads and parses the index at `path` (NotFound when missing).
ShardIndex read_shard_index(const std::string& path);
// Whether `path` starts with the index magic (false when it cannot be read).
bool is_shard_index(const std::string& path);

// Whether `path` opens as a Cairn checkpoint: a checkpoint file, or a sharded checkpoint's index
// with every shard it names intact (the check a CheckpointManager's scan needs).
bool is_intact_checkpoint(const std::string& path);

// The size and checksum of the shard file at `path`, from its footer (DataLoss when it has none).
ShardFile describe_shard(const std::string& path);
// "<index file name>.shard-<rank>-of-<count>-<nonce, 16 hex digits>": the nonce differs for every
// save, so a save never writes over a committed checkpoint's shards.
std::string shard_file_name(const std::string& index_file_name, int rank, int count, uint64_t nonce);
// Whether `file_name` is a shard file of some checkpoint "<checkpoint_name>-<N>".
bool is_shard_file_name(const std::string& file_name, const std::string& checkpoint_name);

// Which of `count` shards holds each value, by size: the largest first, each to the shard with the
// fewest bytes so far (the lowest rank on ties). Deterministic, so every rank computes the same.
std::vector<int> assign_shards(const std::vector<std::pair<std::string, uint64_t>>& sized_keys, int count);

// A sharded checkpoint opened through its index: every shard opened (reading only their indices),
// its size and checksum checked against the index, and its keys against the index's. Lookups go to
// the shard holding the key; the object graph is the shards' graphs merged. Thread-safe as Reader.
class ShardedReader {
 public:
  static std::shared_ptr<ShardedReader> open(const std::string& index_path);
  // As Reader::set_thread_pool, for every shard.
  void set_thread_pool(ThreadPool* pool) {
    for (Reader& r : shards_) r.set_thread_pool(pool);
  }

  const std::string& path() const { return path_; }
  // Every entry, sorted by key, the object graph entry included once (shard 0's).
  const std::vector<TensorInfo>& entries() const { return entries_; }
  const TensorInfo* find(std::string_view key) const;
  // The shard holding `key`; NotFound "<path>: no key named '<key>'".
  const Reader& shard_of(std::string_view key) const;
  size_t shard_count() const { return shards_.size(); }
  const ObjectGraph& graph() const { return graph_; }
  const Metadata& metadata() const { return shards_.front().metadata(); }
  // The merged graph's bytes for the _CHECKPOINTABLE_OBJECT_GRAPH key; other keys as Reader's.
  std::string load_string(std::string_view key) const;

 private:
  std::string path_;
  std::vector<Reader> shards_;
  std::vector<TensorInfo> entries_;
  std::vector<uint32_t> entry_shard_;  // by entry
  ObjectGraph graph_;
};

}  // namespace cairn::ckpt
