// TensorFlow checkpoints in the tensor_bundle V2 format (tensorflow core/util/tensor_bundle,
// core/protobuf/tensor_bundle.proto; facts in design/FORMATS.md): `<prefix>.index`, a LevelDB table
// mapping each key to a BundleEntryProto (key "" holds the BundleHeaderProto), and the data shards
// `<prefix>.data-NNNNN-of-MMMMM` holding raw little-endian values and string tensors (varint64
// lengths, their masked CRC32C, then the bytes).
//
// Reading checks everything a hostile or damaged file could get wrong: the table (tf_table.h), each
// entry's dtype/shape/size against its shard's length, and each value's CRC32C on load. Errors name
// the file and the key; DataLoss for corrupt data, NotFound for missing files, InvalidArgument for a
// dtype Cairn has no DType for or a wrong use. Both the reader and writer are ours; our .proto
// (runtime/io/proto/tensor_bundle.proto) carries TensorFlow's field numbers for reference and tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor/tensor.h"

namespace cairn::tfckpt {

struct BundleEntry {
  std::string key;
  DType dtype = DType::Invalid;  // Invalid when TensorFlow's dtype has no Cairn DType (see tf_dtype)
  Shape shape;
  int32_t shard_id = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc32c = 0;
  bool has_slices = false;       // a partitioned variable: the value is assembled from its slices
  int32_t tf_dtype = 0;          // TensorFlow's DataType number (equal to Cairn's where Cairn has it)
};

// TensorFlow's name of a DataType number ("uint16" for 17), or "DataType(<n>)" when unknown.
std::string tf_dtype_name(int32_t tf_dtype);

class BundleReader {
 public:
  // `prefix_or_dir`: a checkpoint prefix (".../ckpt-2"; a trailing ".index" is accepted too) or a
  // directory, which is read through its `checkpoint` state file (NotFound when it has none).
  static std::shared_ptr<BundleReader> open(const std::string& prefix_or_dir);
  ~BundleReader();

  const std::string& prefix() const { return prefix_; }
  int32_t num_shards() const { return num_shards_; }
  // Every entry sorted by key (byte order), without the header entry "" and without the slice
  // entries of partitioned variables (keys starting with a zero byte), as tf.train.list_variables.
  const std::vector<BundleEntry>& entries() const { return entries_; }
  const BundleEntry* find(std::string_view key) const;
  // find() or NotFound "<prefix>: no key named '<key>'".
  const BundleEntry& info(std::string_view key) const;

  // The value as a new tensor on `device`; the CRC32C is verified (DataLoss naming the key).
  // InvalidArgument for string entries and dtypes Cairn lacks. Partitioned variables are assembled
  // from their slices, each slice verified.
  Tensor load(const BundleEntry& e, Device& device) const;
  // A string entry's elements in row-major order, lengths and value CRCs verified.
  std::vector<std::string> load_strings(const BundleEntry& e) const;
  // Reads one entry and checks its CRC32C without keeping the value.
  void verify(const BundleEntry& e) const;

 private:
  BundleReader() = default;
  void read_index(const std::string& index_path);
  // Reads [offset, offset + size) of a shard into dst (bounds were checked at open).
  void read_bytes(const BundleEntry& e, uint8_t* dst) const;
  void check_crc(const BundleEntry& e, uint32_t crc) const;
  void assemble(const BundleEntry& e, uint8_t* dst) const;

  std::string prefix_;
  int32_t num_shards_ = 0;
  std::vector<int> shard_fds_;
  std::vector<BundleEntry> entries_;
  // Partitioned variables: name -> its slices' stored entries, and (same order) each slice's
  // (start, length) per dimension.
  std::multimap<std::string, BundleEntry> slices_;
  std::map<std::string, std::vector<std::vector<std::pair<int64_t, int64_t>>>> slice_extents_;
};

// The checkpoint prefix named by `dir`/checkpoint (TensorFlow's CheckpointState text proto, field
// model_checkpoint_path; a relative path is taken relative to `dir`), or nullopt when there is no
// state file or the prefix it names has no `.index`. A state file that does not parse raises DataLoss.
std::optional<std::string> latest_checkpoint(const std::string& dir);

// Writes one shard: `<prefix>.data-00000-of-00001` and `<prefix>.index`, both under temporary names
// renamed into place by finish(), data first, so a reader never sees a half-written bundle.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // A tensor of any dtype but String, on any device (copied to the host now). Keys must be unique
  // and non-empty (InvalidArgument otherwise).
  void add(const std::string& key, const Tensor& value);
  void add_strings(const std::string& key, const Shape& shape, const std::vector<std::string>& values);
  // Writes everything, keys sorted. The writer is spent afterwards.
  void finish();

 private:
  struct Pending;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<Pending>> pending_;
  bool finished_ = false;
};

// Writes `dir`/checkpoint (atomically) naming `latest` and `all` as TensorFlow's
// update_checkpoint_state does.
void write_checkpoint_state(const std::string& dir, const std::string& latest, const std::vector<std::string>& all);

}  // namespace cairn::tfckpt
