// One view of the three weight formats Cairn reads by key (the C API's cairn_checkpoint_reader,
// `cairn ckpt`, cairn_object_load_weights): Cairn checkpoint files,
// TensorFlow checkpoints (tensor_bundle V2: a prefix, its `.index`, or a directory with a
// `checkpoint` state file) and safetensors (a file, an index .json, or a directory of shards).
// Entries are listed by key in byte order, as each format's own listing does.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/tensor/tensor.h"

namespace cairn::ckpt {

enum class WeightsFormat { Cairn, TfBundle, Safetensors };
const char* format_name(WeightsFormat f);  // "cairn", "tf", "safetensors"
// Parses a format_name(); InvalidArgument naming the choices otherwise.
WeightsFormat parse_format(const std::string& name);

struct WeightsEntry {
  std::string key;
  DType dtype = DType::Invalid;  // String for strings; Invalid when Cairn has no such dtype
  std::string type_text;         // the format's own dtype name ("float32", "F8_E4M3", "uint16")
  Shape shape;
  uint64_t raw_bytes = 0;     // the value's bytes once decoded
  uint64_t stored_bytes = 0;  // its bytes in the file
  std::string storage;  // where or how it is stored: a codec, "shard 0", a shard file
};

class WeightsFile {
 public:
  virtual ~WeightsFile() = default;
  // Opens `path` in the format its bytes (or the files beside it) show. NotFound when nothing is
  // there; the formats' own errors (DataLoss, ...) otherwise.
  static std::unique_ptr<WeightsFile> open(const std::string& path);
  // The format open() would read `path` as, from its name, its first bytes and the files beside
  // it; nothing is validated (a missing path is Cairn's, so its reader says NotFound).
  static WeightsFormat detect(const std::string& path);

  virtual WeightsFormat format() const = 0;
  const std::vector<WeightsEntry>& entries() const { return entries_; }
  // The entry `key`, or NotFound "<path>: no key named '<key>'".
  const WeightsEntry& entry(const std::string& key) const;

  // A non-string value on `device` (Invalid dtypes raise Unimplemented or InvalidArgument naming
  // the key). The one-argument form loads onto a host device of its own.
  virtual Tensor load(const WeightsEntry& e, Device& device) const = 0;
  Tensor load(const WeightsEntry& e) const;
  // A string value's elements in row-major order (a Cairn string scalar is one element).
  virtual std::vector<std::string> load_strings(const WeightsEntry& e) const = 0;
  // Checks one entry's checksum (DataLoss naming it on mismatch); returns false when the format
  // keeps none for it (safetensors without Cairn's opt-in checksums).
  virtual bool verify(const WeightsEntry& e) const = 0;
  // The file's metadata strings: a safetensors "__metadata__" (the first shard's); empty otherwise.
  virtual const std::map<std::string, std::string>& metadata() const;

 protected:
  explicit WeightsFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::vector<WeightsEntry> entries_;  // sorted by key
};

// A value to write: a tensor, or the elements of a string value.
struct WeightsValue {
  std::string key;
  Tensor tensor;
  bool is_string = false;
  Shape string_shape;
  std::vector<std::string> strings;
};

// Writes `values` to `path` in `format`, atomically as each format's writer does. Name-based: keys
// and values are carried, object graphs are not. Values the target cannot hold are left out and
// their keys returned: every string value in safetensors, string values other than scalars in a
// Cairn file, and the object graph entry (_CHECKPOINTABLE_OBJECT_GRAPH), whose bytes mean another
// thing in each format.
std::vector<std::string> write_weights(WeightsFormat format, const std::string& path,
                                       const std::vector<WeightsValue>& values);

}  // namespace cairn::ckpt
