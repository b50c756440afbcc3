// Reading a checkpoint file. Opening checks the header, the footer, the index checksum, runs the
// FlatBuffers verifier and bounds-checks every entry; loading checks each payload's checksums
// before a value is returned. Damaged or hostile files raise DataLoss (or InvalidArgument for an
// unsupported version) naming the file and the key or part that failed; nothing crashes and no
// allocation exceeds what the validated index allows.
//
// A Reader is safe to use from several threads at once (all reads are positional).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/checkpoint/format.h"
#include "runtime/tensor/tensor.h"

namespace cairn {
class ThreadPool;
}

namespace cairn::ckpt {

class Reader {
 public:
  // Opens a checkpoint file. A missing file raises NotFound.
  static Reader open(const std::string& path);
  // Reads a checkpoint held in memory; `data` must outlive the reader. `name` appears in errors.
  static Reader open_memory(const void* data, size_t size, std::string name = "<memory>");

  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  ~Reader();

  // Threads that share the reading and hashing of a large uncompressed payload (for example the
  // context's pool); null (the default): the calling thread alone. The pool must outlive the loads.
  void set_thread_pool(ThreadPool* pool) { pool_ = pool; }

  const std::string& path() const { return path_; }
  uint32_t format_version() const { return format_version_; }
  uint64_t file_size() const { return file_size_; }

  // Every entry, sorted by key (byte order), the object graph entry included.
  const std::vector<TensorInfo>& entries() const { return entries_; }
  // The entry for `key`, or nullptr.
  const TensorInfo* find(std::string_view key) const;
  // The entry for `key`; raises NotFound "<path>: no key named '<key>'".
  const TensorInfo& info(std::string_view key) const;

  const ObjectGraph& graph() const { return graph_; }
  const Metadata& metadata() const { return metadata_; }

  // The value of a non-string entry as a new tensor on `device` (decoded on the host, then
  // copied when `device` is not a host device). Raises DataLoss on a checksum mismatch or a
  // payload that does not decode to exactly its raw size, InvalidArgument for a string entry.
  Tensor load(std::string_view key, Device& device) const;
  Tensor load(const TensorInfo& entry, Device& device) const;
  // Decodes a non-string entry into `dst`, a host tensor of the entry's dtype and shape whose
  // buffer nobody else reads (no allocation: the restore reuses replaced buffers this way). On an
  // error `dst` holds partly written bytes. InvalidArgument when `dst` does not fit the entry.
  void load_into(const TensorInfo& entry, const Tensor& dst) const;
  // The bytes of a string scalar entry (InvalidArgument for any other dtype).
  std::string load_string(std::string_view key) const;
  std::string load_string(const TensorInfo& entry) const;
  // Checks one entry's checksums (decompressing through a small buffer, without keeping the
  // value). Raises DataLoss naming the key when they do not match.
  void verify(const TensorInfo& entry) const;

  class Source;  // where the bytes come from: a file or memory

 private:
  Reader(std::unique_ptr<Source> source, std::string path);
  // Decodes `e` into `dst` (raw_size bytes), or only checks it when `dst` is null.
  void decode(const TensorInfo& e, uint8_t* dst) const;
  // Reads an uncompressed payload into `dst` on the pool's threads, hashing it in order as the
  // pieces arrive; returns the hash of the stored bytes.
  uint64_t read_parallel(const TensorInfo& e, uint8_t* dst) const;

  std::unique_ptr<Source> source_;
  ThreadPool* pool_ = nullptr;
  std::string path_;
  uint32_t format_version_ = 0;
  uint64_t file_size_ = 0;
  std::vector<TensorInfo> entries_;
  ObjectGraph graph_;
  Metadata metadata_;
};

}  // namespace cairn::ckpt
