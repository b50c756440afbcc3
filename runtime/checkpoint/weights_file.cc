#include "runtime/checkpoint/weights_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "runtime/checkpoint/format.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/checkpoint/writer.h"
#include "runtime/core/error.h"
#include "runtime/eager/context.h"
#include "runtime/io/safetensors.h"

namespace cairn::ckpt {
namespace {

Device& host() {
  static Context* ctx = [] {
    ContextOptions o;
    o.num_threads = 1;
    return new Context(o);
  }();
  return ctx->cpu();
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The first 8 bytes of a file ("" when it cannot be read).
std::string magic(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char b[8] = {};
  if (!f.read(b, sizeof b)) return "";
  return std::string(b, sizeof b);
}

class CairnWeights final : public WeightsFile {
 public:
  explicit CairnWeights(const std::string& path) : WeightsFile(path), r_(Reader::open(path)) {
    for (const TensorInfo& e : r_.entries())
      entries_.push_back({e.key, e.dtype, dtype_name(e.dtype), e.shape, e.raw_size, e.stored_size, codec_name(e.codec)});
  }
  WeightsFormat format() const override { return WeightsFormat::Cairn; }
  Tensor load(const WeightsEntry& e, Device& d) const override { return r_.load(e.key, d); }
  std::vector<std::string> load_strings(const WeightsEntry& e) const override { return {r_.load_string(e.key)}; }
  bool verify(const WeightsEntry& e) const override {
    r_.verify(r_.info(e.key));
    return true;
  }

 private:
  Reader r_;
};

// A sharded Cairn checkpoint through its index (shard_index.h): one listing over every shard.
class ShardedCairnWeights final : public WeightsFile {
 public:
  explicit ShardedCairnWeights(const std::string& path) : WeightsFile(path), r_(ShardedReader::open(path)) {
    for (const TensorInfo& e : r_->entries()) {
      const std::string& shard = r_->shard_of(e.key).path();
      entries_.push_back({e.key, e.dtype, dtype_name(e.dtype), e.shape, e.raw_size, e.stored_size,
                          fmt::format("{}, {}", codec_name(e.codec), shard.substr(shard.rfind('/') + 1))});
    }
  }
  WeightsFormat format() const override { return WeightsFormat::Cairn; }
  Tensor load(const WeightsEntry& e, Device& d) const override { return r_->shard_of(e.key).load(e.key, d); }
  std::vector<std::string> load_strings(const WeightsEntry& e) const override { return {r_->load_string(e.key)}; }
  bool verify(const WeightsEntry& e) const override {
    const Reader& shard = r_->shard_of(e.key);
    shard.verify(shard.info(e.key));
    return true;
  }

 private:
  std::shared_ptr<ShardedReader> r_;
};

class TfWeights final : public WeightsFile {
 public:
  explicit TfWeights(const std::string& path) : WeightsFile(path), r_(tfckpt::BundleReader::open(path)) {
    for (const tfckpt::BundleEntry& e : r_->entries()) {
      const std::string where = e.has_slices ? "partitioned" : fmt::format("shard {}", e.shard_id);
      const auto size = static_cast<uint64_t>(e.size);
      entries_.push_back({e.key, e.dtype, tfckpt::tf_dtype_name(e.tf_dtype), e.shape, size, size, where});
    }
  }
  WeightsFormat format() const override { return WeightsFormat::TfBundle; }
  Tensor load(const WeightsEntry& e, Device& d) const override { return r_->load(r_->info(e.key), d); }
  std::vector<std::string> load_strings(const WeightsEntry& e) const override { return r_->load_strings(r_->info(e.key)); }
  bool verify(const WeightsEntry& e) const override {
    r_->verify(r_->info(e.key));
    return true;
  }

 private:
  std::shared_ptr<tfckpt::BundleReader> r_;
};

class SafetensorsWeights final : public WeightsFile {
 public:
  explicit SafetensorsWeights(const std::string& path)
      : WeightsFile(path), m_(safetensors::Model::open(path)) {
    const bool sharded = m_.files().size() > 1;
    for (const std::string& name : m_.names()) {
      const safetensors::TensorEntry* t = m_.find(name);
      std::string where = t->dtype;
      if (sharded) {
        const std::string& file = m_.file_of(name)->path();
        where += " in " + file.substr(file.find_last_of('/') + 1);
      }
      entries_.push_back({name, t->cairn_dtype, t->dtype, t->shape, t->end - t->begin, t->end - t->begin, where});
    }
  }
  WeightsFormat format() const override { return WeightsFormat::Safetensors; }
  Tensor load(const WeightsEntry& e, Device& d) const override { return m_.load(e.key, d); }
  std::vector<std::string> load_strings(const WeightsEntry& e) const override {
    raise(Code::InvalidArgument, "{}: '{}' is not a string (safetensors has no strings)", path_, e.key);
  }
  bool verify(const WeightsEntry& e) const override { return m_.file_of(e.key)->verify(e.key); }
  const std::map<std::string, std::string>& metadata() const override { return m_.metadata(); }

 private:
  safetensors::Model m_;  // loads check Cairn's checksums where the file has them
};

}  // namespace

const char* format_name(WeightsFormat f) {
  switch (f) {
    case WeightsFormat::Cairn: return "cairn";
    case WeightsFormat::TfBundle: return "tf";
    case WeightsFormat::Safetensors: return "safetensors";
  }
  return "unknown";
}

WeightsFormat parse_format(const std::string& name) {
  if (name == "cairn") return WeightsFormat::Cairn;
  if (name == "tf") return WeightsFormat::TfBundle;
  if (name == "safetensors") return WeightsFormat::Safetensors;
  raise(Code::InvalidArgument, "unknown format '{}' (expected cairn, tf or safetensors)", name);
}

WeightsFormat WeightsFile::detect(const std::string& path) {
  if (is_dir(path)) {
    if (exists(path + "/" + std::string(safetensors::kIndexFileName)) ||
        exists(path + "/" + std::string(safetensors::kSingleFileName)))
      return WeightsFormat::Safetensors;
    return WeightsFormat::TfBundle;  // through its `checkpoint` file (NotFound without)
  }
  if (ends_with(path, ".safetensors") || ends_with(path, ".json")) return WeightsFormat::Safetensors;
  if (ends_with(path, ".index") || (!exists(path) && exists(path + ".index"))) return WeightsFormat::TfBundle;
  // A missing file gets the Cairn reader's NotFound, as before TensorFlow and safetensors came in.
  if (!exists(path)) return WeightsFormat::Cairn;
  const std::string head = magic(path);  // a checkpoint file, or a sharded checkpoint's index
  if (head == std::string(kHeaderMagic, 8) || head == std::string(kShardIndexMagic, 8)) return WeightsFormat::Cairn;
  return WeightsFormat::Safetensors;  // its header length decides; errors name the rules
}

std::unique_ptr<WeightsFile> WeightsFile::open(const std::string& path) {
  switch (detect(path)) {
    case WeightsFormat::Cairn:
      if (is_shard_index(path)) return std::make_unique<ShardedCairnWeights>(path);
      return std::make_unique<CairnWeights>(path);
    case WeightsFormat::TfBundle: return std::make_unique<TfWeights>(path);
    case WeightsFormat::Safetensors: return std::make_unique<SafetensorsWeights>(path);
  }
  raise(Code::Internal, "WeightsFile::open: unknown format");
}

Tensor WeightsFile::load(const WeightsEntry& e) const { return load(e, host()); }

const std::map<std::string, std::string>& WeightsFile::metadata() const {
  static const std::map<std::string, std::string> none;
  return none;
}

const WeightsEntry& WeightsFile::entry(const std::string& key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const WeightsEntry& e, const std::string& k) { return e.key < k; });
  if (it == entries_.end() || it->key != key) raise(Code::NotFound, "{}: no key named '{}'", path_, key);
  return *it;
}

std::vector<std::string> write_weights(WeightsFormat format, const std::string& path,
                                       const std::vector<WeightsValue>& values) {
  std::vector<std::string> skipped;
  auto graph_entry = [](const WeightsValue& v) { return v.key == kObjectGraphKey; };
  switch (format) {
    case WeightsFormat::Safetensors: {
      std::vector<std::pair<std::string, Tensor>> tensors;
      for (const WeightsValue& v : values) {
        if (v.is_string) skipped.push_back(v.key);
        else tensors.emplace_back(v.key, v.tensor);
      }
      safetensors::write_file(path, tensors);
      break;
    }
    case WeightsFormat::TfBundle: {
      tfckpt::BundleWriter w(path);
      for (const WeightsValue& v : values) {
        if (graph_entry(v)) skipped.push_back(v.key);
        else if (v.is_string) w.add_strings(v.key, v.string_shape, v.strings);
        else w.add(v.key, v.tensor);
      }
      w.finish();
      break;
    }
    case WeightsFormat::Cairn: {
      std::vector<SaveEntry> entries;
      for (const WeightsValue& v : values) {
        if (graph_entry(v) || (v.is_string && v.strings.size() != 1)) skipped.push_back(v.key);
        else if (v.is_string) entries.push_back(SaveEntry::string_scalar(v.key, v.strings[0]));
        else entries.emplace_back(v.key, v.tensor);
      }
      ObjectGraph graph;
      graph.nodes.emplace_back();  // a root without children: the values are reached by name
      write_checkpoint(path, graph, entries, Metadata{});
      break;
    }
  }
  return skipped;
}

}  // namespace cairn::ckpt
