// safetensors files (huggingface/safetensors): `u64 N (LE) | N bytes of JSON | data`, read through
// mmap with every rule of the reference implementation (safetensors/src/tensor.rs) enforced, and
// written byte for byte as the reference writes them. Sharded models (`model-0000k-of-0000N.safetensors`
// plus `model.safetensors.index.json`) are read and written too. docs/safetensors.md has the details:
// dtype mapping, the F8 conversion rule, the checksum metadata key and the error of each rule.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/tensor/tensor.h"

namespace cairn::safetensors {

// The metadata key of a tensor's opt-in checksum: "cairn.checksum.<tensor name>" = "xxh3:<16 hex
// digits>" (XXH3-64 of the tensor's bytes as stored, lowercase hex). The format has no checksum of
// its own; readers that do not know the key keep it as an ordinary metadata string.
inline constexpr std::string_view kChecksumKeyPrefix = "cairn.checksum.";

struct TensorEntry {
  std::string name;
  std::string dtype;        // as in the file: "F32", "F8_E4M3", ...
  DType cairn_dtype;        // what load() returns; Invalid when Cairn has no dtype for it (load raises)
  Shape shape;
  uint64_t begin, end;      // byte offsets relative to the start of the data section
};

struct ReadOptions {
  // Checks each tensor's "cairn.checksum.<name>" on load when the file has one (DataLoss on mismatch).
  bool verify_checksums = true;
  // CPU loads borrow the mapped file when the data is aligned to the element size (no copy).
  bool zero_copy = true;
  // What F8_E5M2 and F8_E4M3 load as: Float32 or Float16 (both hold every F8 value exactly).
  DType f8_as = DType::Float32;
};

// One .safetensors file, mapped into memory. Thread-safe: load() may run on several threads.
class File {
 public:
  // Maps and validates the file. NotFound for a missing file, DataLoss for one that breaks a rule
  // (the message names the file, the rule and the tensor), Unimplemented for a tensor of rank > 8.
  static std::shared_ptr<File> open(const std::string& path, const ReadOptions& options = {});
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& path() const { return path_; }
  // The "__metadata__" strings, checksum keys included.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<TensorEntry>& tensors() const { return tensors_; }  // in file (offset) order
  const TensorEntry* find(std::string_view name) const;                  // nullptr when absent

  // The tensor `name` on `device`. On a host device with zero_copy and an aligned offset the
  // tensor borrows the mapping (which stays alive while the tensor does); otherwise it is copied.
  // NotFound for an unknown name, Unimplemented for a dtype Cairn lacks (U16, U32, U64, F4, ...),
  // DataLoss when a stored checksum does not match.
  Tensor load(std::string_view name, Device& device) const;
  // Checks the stored checksum of `name`; returns false when it has none. DataLoss on mismatch.
  bool verify(std::string_view name) const;
  // The tensor's bytes as stored (little-endian, C order), inside the mapping.
  std::string_view raw_bytes(const TensorEntry& entry) const;

  struct Mapping;  // the mmap; shared with the tensors that borrow it

 private:
  File() = default;
  std::string path_;
  ReadOptions options_;
  std::shared_ptr<Mapping> mapping_;
  uint64_t data_start_ = 0;  // 8 + N
  std::map<std::string, std::string> metadata_;
  std::vector<TensorEntry> tensors_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

struct WriteOptions {
  // "__metadata__" (omitted when empty and checksums are off).
  std::map<std::string, std::string> metadata;
  // Adds "cairn.checksum.<name>" for every tensor.
  bool checksums = false;
};

// Writes `tensors` as the reference writer does: sorted by dtype alignment (largest first) then
// by name, JSON without spaces, header padded with spaces to a multiple of 8. Metadata keys are
// written sorted (the reference's order is a hash map's, so it varies). Atomic: a temporary file
// in the same directory is renamed over `path`; a failed write leaves any old file as it was.
// InvalidArgument for duplicate names, string tensors or a name "__metadata__".
void write_file(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                const WriteOptions& options = {});
// The same bytes in memory.
std::string serialize(const std::vector<std::pair<std::string, Tensor>>& tensors, const WriteOptions& options = {});

inline constexpr std::string_view kIndexFileName = "model.safetensors.index.json";
inline constexpr std::string_view kSingleFileName = "model.safetensors";

// A model: one file, or shards listed by model.safetensors.index.json. Thread-safe reads.
class Model {
 public:
  // `path_or_dir`: a .safetensors file, an index .json file, or a directory holding
  // model.safetensors.index.json or else model.safetensors. Every shard is opened and validated,
  // and every tensor of the weight map must be in the shard it names (DataLoss otherwise).
  static Model open(const std::string& path_or_dir, const ReadOptions& options = {});

  std::vector<std::string> names() const;  // sorted
  const TensorEntry* find(std::string_view name) const;
  Tensor load(std::string_view name, Device& device) const;
  // The shard holding `name` (nullptr when absent).
  const File* file_of(std::string_view name) const;
  const std::vector<std::shared_ptr<File>>& files() const { return files_; }
  // The first file's "__metadata__" (write_sharded puts the caller's metadata in every shard).
  const std::map<std::string, std::string>& metadata() const;

 private:
  std::vector<std::shared_ptr<File>> files_;
  std::map<std::string, size_t, std::less<>> file_index_;  // tensor name -> files_ position
};

// Writes `tensors` into `dir` as the Hugging Face tools do: one model.safetensors when everything
// fits in `max_shard_bytes`, else model-00001-of-0000N.safetensors ... plus
// model.safetensors.index.json ({"metadata": {"total_size": bytes}, "weight_map": {name: file}},
// keys sorted, indent 2). Tensors fill shards in the order given; one larger than the limit gets a
// shard of its own. Shards are written first and the index last, each atomically; shard files and
// an index left from an earlier write with other names are removed afterwards.
void write_sharded(const std::string& dir, const std::vector<std::pair<std::string, Tensor>>& tensors,
                   uint64_t max_shard_bytes, const WriteOptions& options = {});

}  // namespace cairn::safetensors
