#include "runtime/checkpoint/module_weights.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>

#include <algorithm>
#include <utility>
#include <vector>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/format.h"
#include "runtime/checkpoint/internal/io.h"
#include "runtime/core/error.h"
#include "runtime/eager/context.h"
#include "runtime/io/safetensors.h"
#include "runtime/track/walk.h"

namespace cairn::ckpt {
namespace {

constexpr std::string_view kValueSuffix = "/.ATTRIBUTES/VARIABLE_VALUE";
constexpr std::string_view kSlotMarker = "/.OPTIMIZER_SLOT/";

struct NamedVariable {
  std::string name;  // as the file names it
  std::string path;  // as Cairn's walk does
  Ref<Variable> variable;
};

std::string file_name_of(const std::vector<std::string>& path, const ModuleWeightsOptions& o) {
  std::string name = o.prefix;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i > 0) name += o.separator;
    name += path[i];
  }
  return name;
}

// Every variable under `root` in checkpoint order, with its name; InvalidArgument on a collision.
std::vector<NamedVariable> named_variables(Object& root, const ModuleWeightsOptions& o, std::string_view fn) {
  std::vector<NamedVariable> out;
  std::map<std::string, std::string> seen;  // name -> path
  for (PathedObject& p : breadth_first(root)) {
    auto* v = dynamic_cast<Variable*>(p.object.get());
    if (!v) continue;
    std::string name = file_name_of(p.path, o);
    std::string path = join_path(p.path);
    if (auto [it, fresh] = seen.emplace(name, path); !fresh)
      raise(Code::InvalidArgument, "{}: variables '{}' and '{}' both have the name '{}' (choose another separator)",
            fn, it->second, path, name);
    out.push_back({std::move(name), std::move(path), Ref<Variable>::share(v)});
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The file's weights under the prefix: normalized name -> entry.
std::map<std::string, const WeightsEntry*> file_weights(const WeightsFile& f, const ModuleWeightsOptions& o,
                                                        const std::string& path, std::string_view fn) {
  std::map<std::string, const WeightsEntry*> out;
  for (const WeightsEntry& e : f.entries()) {
    if (e.key == kObjectGraphKey || e.key.find(kSlotMarker) != std::string::npos) continue;
    std::string name = e.key;
    if (f.format() != WeightsFormat::Safetensors && ends_with(name, kValueSuffix))
      name.resize(name.size() - kValueSuffix.size());
    if (name.compare(0, o.prefix.size(), o.prefix) != 0) continue;
    if (auto [it, fresh] = out.emplace(name, &e); !fresh)
      raise(Code::InvalidArgument, "{}: {}: keys '{}' and '{}' both name the weight '{}'", fn, path, it->second->key,
            e.key, name);
  }
  return out;
}

std::string list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 10;
  std::string s;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > kShown) s += fmt::format(" and {} more", names.size() - kShown);
  return s;
}

Tensor host_value(const Variable& v) { return tensor_on_device(v.read(), v.context().cpu()); }

}  // namespace

size_t load_module_weights(Object& root, const std::string& path, const ModuleWeightsOptions& o, std::string_view fn) {
  const std::vector<NamedVariable> variables = named_variables(root, o, fn);
  std::unique_ptr<WeightsFile> file;
  try {
    file = WeightsFile::open(path);
  } catch (const Error& e) {
    raise(e.code(), "{}: {}", fn, e.message());
  }
  std::map<std::string, const WeightsEntry*> weights = file_weights(*file, o, path, fn);

  // Match and check every pair before loading anything.
  std::vector<std::pair<const NamedVariable*, const WeightsEntry*>> pairs;
  std::vector<std::string> missing;
  for (const NamedVariable& v : variables) {
    auto it = weights.find(v.name);
    if (it == weights.end()) {
      missing.push_back(v.name);
      continue;
    }
    const WeightsEntry& e = *it->second;
    if (e.dtype != v.variable->dtype())
      raise(Code::InvalidArgument, "{}: variable '{}' is {} but '{}' in {} is {}", fn, v.path,
            dtype_name(v.variable->dtype()), e.key, path, e.type_text);
    if (e.shape != v.variable->shape())
      raise(Code::InvalidArgument, "{}: variable '{}' has shape {} but '{}' in {} has shape {}", fn, v.path,
            v.variable->shape().str(), e.key, path, e.shape.str());
    pairs.emplace_back(&v, &e);
    weights.erase(it);
  }
  if (!missing.empty() && !o.allow_missing)
    raise(Code::NotFound, "{}: {} has no value for {} of the module's {} variables: {}", fn, path, missing.size(),
          variables.size(), list(missing));
  if (!weights.empty() && !o.allow_unused) {
    std::vector<std::string> unused;
    for (const auto& [name, e] : weights) unused.push_back(e->key);
    raise(Code::InvalidArgument, "{}: {} values of {} match no variable of the module (allow_unused skips them): {}",
          fn, unused.size(), path, list(unused));
  }

  std::vector<Tensor> values;
  values.reserve(pairs.size());
  for (const auto& [v, e] : pairs) {
    try {
      values.push_back(file->load(*e, v->variable->context().cpu()));
    } catch (const Error& err) {
      raise(err.code(), "{}: loading '{}' for variable '{}': {}", fn, e->key, v->path, err.message());
    }
  }
  for (size_t i = 0; i < pairs.size(); ++i) pairs[i].first->variable->assign(values[i], fn);
  return pairs.size();
}

void save_module_weights(Object& root, const std::string& path, WeightsFormat format, const ModuleWeightsOptions& o,
                         std::string_view fn) {
  const std::vector<NamedVariable> variables = named_variables(root, o, fn);
  if (variables.empty()) raise(Code::InvalidArgument, "{}: the object has no variables to save", fn);
  try {
    if (format == WeightsFormat::Safetensors) {
      std::vector<std::pair<std::string, Tensor>> tensors;
      for (const NamedVariable& v : variables) tensors.emplace_back(v.name, host_value(*v.variable));
      safetensors::WriteOptions w;
      w.checksums = o.checksums;
      w.metadata = o.metadata;
      if (o.max_shard_bytes > 0) {
        if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) internal::raise_errno(errno, path, "create the shard directory");
        safetensors::write_sharded(path, tensors, o.max_shard_bytes, w);
      }
      else safetensors::write_file(path, tensors, w);
      return;
    }
    std::vector<WeightsValue> values;
    for (const NamedVariable& v : variables) values.push_back({v.name, host_value(*v.variable)});
    write_weights(format, path, values);
  } catch (const Error& e) {
    raise(e.code(), "{}: {}", fn, e.message());
  }
}

}  // namespace cairn::ckpt
