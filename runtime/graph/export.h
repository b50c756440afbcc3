// Exported compiled functions (SavedModel-like): every concrete function of a Function, its graph
// and the values of the variables it references, in one file that loads with no host function.
//
// The file is a checkpoint-format file (design/CHECKPOINT.md), written and read by the checkpoint
// format code: 64-byte header, aligned payloads with XXH3-64 checksums, a verified index, footer,
// atomic write. Its entries are the graph (string entry kFunctionKey, a schemas/function.fbs
// FlatBuffer), each constant ("constants/<concrete>/<node>") and each variable value
// ("variables/<index>"). Loading verifies everything the checkpoint reader does, then every node:
// ops are looked up by name, their attributes resolved and their output shapes inferred again, and
// the file is refused (naming the concrete function and the node) when anything disagrees.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/graph/function.h"
#include "runtime/track/variable.h"

namespace cairn::graph {

constexpr uint32_t kFunctionFormatVersion = 1;
constexpr const char* kFunctionKey = "_CAIRN_FUNCTION";        // the graph entry
constexpr const char* kFunctionIdentifier = "CAFN";            // its FlatBuffer identifier
constexpr const char* kFunctionFileTag = "cairn.file";         // metadata key ...
constexpr const char* kFunctionFileKind = "function";          // ... and value

// Writes every concrete function of `fn` (trace order) to `path`, atomically. Raises
// FailedPrecondition when `fn` has no traces yet, Unimplemented for a string constant.
void export_function(const Function& fn, const std::string& path);
void export_concretes(const std::string& name, const std::vector<std::shared_ptr<const ConcreteFunction>>& concretes,
                      const std::string& path);

// What a function file holds, loaded into `ctx`: concrete functions whose Read/Assign nodes refer
// to fresh variables (owned here, initialised from the file).
class LoadedConcretes {
 public:
  const std::string& name() const { return name_; }
  const std::vector<std::shared_ptr<const ConcreteFunction>>& concretes() const { return concretes_; }
  const std::vector<Ref<Variable>>& variables() const { return variables_; }

  // The concrete function whose signature accepts these inputs' dtypes and shapes; raises
  // NotFound listing the signatures there are.
  const ConcreteFunction& match(const std::vector<Tensor>& inputs) const;
  // "float32[2,-1]; int32[]": every signature, for messages.
  std::string signatures() const;

 private:
  friend std::shared_ptr<LoadedConcretes> load_concretes(Context& ctx, const std::string& path);
  std::string name_;
  std::vector<std::shared_ptr<const ConcreteFunction>> concretes_;
  std::vector<Ref<Variable>> variables_;
};

// Reads and checks a function file. Raises NotFound for a missing file, DataLoss for a damaged
// one, InvalidArgument for a file that is not a function file or names an op, attribute or value
// this library cannot accept; messages name the file and the part (concrete function, node, key).
std::shared_ptr<LoadedConcretes> load_concretes(Context& ctx, const std::string& path);

// A loaded file as a Function with no host function: a call with a signature the file has runs
// that concrete function (the first call per signature re-traces it, which costs no host code);
// any other signature raises NotFound listing those it has.
struct LoadedFunction {
  Ref<Function> function;
  std::shared_ptr<LoadedConcretes> loaded;
};
LoadedFunction load_function(Context& ctx, const std::string& path);

// The host function and options that make a Function out of loaded concretes (the C API builds
// its handle from these too).
HostFunction loaded_host_function(std::shared_ptr<LoadedConcretes> loaded);
FunctionOptions loaded_function_options(const LoadedConcretes& loaded);

}  // namespace cairn::graph
