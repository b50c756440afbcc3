// Writing a checkpoint file: atomically (temp file, fsync, rename, fsync of the directory),
// deterministically (same state, same bytes), and streaming (payload by payload, no second copy
// of all values in memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/checkpoint/format.h"
#include "runtime/tensor/tensor.h"

namespace cairn {
class ThreadPool;
}

namespace cairn::ckpt {

// One value to save: a tensor (any dtype but String, on any device; non-host tensors are copied
// to the host one at a time) or a string scalar (dtype STRING, shape []).
struct SaveEntry {
  std::string key;
  Tensor tensor;
  bool is_string = false;
  std::string bytes;  // the value of a string scalar

  SaveEntry() = default;
  SaveEntry(std::string k, Tensor t) : key(std::move(k)), tensor(std::move(t)) {}
  static SaveEntry string_scalar(std::string key, std::string bytes);
};

struct WriteOptions {
  // zstd (level `zstd_level`) per payload, with a byte shuffle for float dtypes. A payload that
  // does not shrink by at least 5% is stored raw.
  bool compress = false;
  // At most 19 (readers bound the zstd window to 16 MiB). Level 1 by default: on float weights
  // the gain is entropy coding of the shuffled exponent bytes, not matches, so level 3 stored no
  // less (85.4% of raw against 83.9%) for twice the CPU (docs/checkpoints.md "Compression").
  int zstd_level = 1;
  // fsync the file before the rename and the directory after it. Off only for tests and scratch.
  bool fsync = true;
  // With `compress`: threads that compress and hash payloads ahead of the one writing the file
  // (for example the context's pool); null: all on the calling thread. The file's bytes do not
  // depend on it. Uncompressed saves run on the calling thread.
  ThreadPool* pool = nullptr;
  // With a pool: at most this many raw bytes of payloads are encoded ahead of what is written
  // (a compressed payload waits in memory for its turn). A larger payload is compressed while it
  // is written, on the writing thread.
  size_t max_bytes_ahead = size_t{64} << 20;
};

struct WriteStats {
  uint64_t file_size = 0;
  uint64_t raw_bytes = 0;      // sum of the entries' raw sizes
  uint64_t stored_bytes = 0;   // sum of the entries' stored sizes
  size_t entries = 0;
  size_t compressed_entries = 0;
};

// Writes `entries` (any order; sorted by key here), the object graph and the metadata to `path`.
// Adds the _CHECKPOINTABLE_OBJECT_GRAPH string entry itself (the key is reserved). The file
// appears at `path` complete or not at all; an existing file there is replaced.
// Raises InvalidArgument for bad input (empty, duplicate or reserved keys, string tensors, graph
// ids out of range, attributes naming keys that are not saved) and an I/O code for I/O failures.
WriteStats write_checkpoint(const std::string& path, const ObjectGraph& graph, const std::vector<SaveEntry>& entries,
                            const Metadata& metadata, const WriteOptions& options = {});

// Temporary files are "<target>.tmp-<16 hex digits>" in the target's directory.
bool is_temp_file_name(const std::string& name);
// Removes stale temporary files left by interrupted writes: those in `dir` whose name starts with
// `name_prefix` (empty: every temporary file in `dir`). Returns the paths removed. Call it when no
// write into `dir` is in progress (e.g. when a manager starts).
std::vector<std::string> remove_stale_temp_files(const std::string& dir, const std::string& name_prefix = "");

}  // namespace cairn::ckpt
