// A module's variables by name in any weights format (Keras' load_weights / save_weights by name).
//
//   ModuleWeightsOptions o;
//   o.prefix = "model.";  o.separator = ".";
//   load_module_weights(model, "/data/model.safetensors", o);   // "model.layer-0.kernel", ...
//   save_module_weights(model, "/tmp/w.safetensors", WeightsFormat::Safetensors, o);
//
// A variable's name is its first breadth-first path from the module (the checkpoint's path:
// "layer-0/kernel"), '/' replaced by `separator`, `prefix` in front. Keys of Cairn and TensorFlow
// files lose "/.ATTRIBUTES/VARIABLE_VALUE" before matching; optimizer slots, the object graph and
// keys outside the prefix are not the module's weights and are passed over.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/checkpoint/weights_file.h"
#include "runtime/track/object.h"

namespace cairn::ckpt {

struct ModuleWeightsOptions {
  std::string prefix;
  std::string separator = "/";
  bool allow_missing = false;  // load: variables without a value keep theirs (else NotFound)
  bool allow_unused = false;   // load: values under the prefix no variable takes are skipped (else InvalidArgument)
  // Save, safetensors only:
  bool checksums = true;                        // "cairn.checksum.<name>" in __metadata__
  uint64_t max_shard_bytes = 0;                 // 0: one file at the path; else shards in the directory
  std::map<std::string, std::string> metadata;  // more __metadata__ strings
};

// Loads every variable under `root` from `path` (any format WeightsFile opens). All values are
// read and checked before the first assignment, so an error leaves every variable unchanged.
// Errors name `fn`, the variable's path and the file's key. Returns the number assigned.
size_t load_module_weights(Object& root, const std::string& path, const ModuleWeightsOptions& options,
                           std::string_view fn = "load_module_weights");

// Writes every variable under `root` to `path` in `format`, atomically. InvalidArgument when
// `root` has no variables or two names collide.
void save_module_weights(Object& root, const std::string& path, WeightsFormat format,
                         const ModuleWeightsOptions& options, std::string_view fn = "save_module_weights");

}  // namespace cairn::ckpt
