#include "runtime/checkpoint/tf_restore.h"

#include "runtime/core/error.h"

namespace cairn::tfckpt {

namespace {

// The bundle's values by key; the graph is the TfGraphSource's.
class BundleValues final : public ckpt::ValueSource {
 public:
  explicit BundleValues(std::shared_ptr<BundleReader> reader) : reader_(std::move(reader)) {}
  const std::string& path() const override { return reader_->prefix(); }
  const ckpt::ObjectGraph& graph() const override { return empty_; }
  std::optional<ckpt::ValueInfo> info(std::string_view key) const override {
    const BundleEntry* e = reader_->find(key);
    if (!e) return std::nullopt;
    return ckpt::ValueInfo{e->dtype, e->shape};
  }
  Tensor load(std::string_view key, Device& device) const override {
    const BundleEntry* e = reader_->find(key);
    if (!e) raise(Code::NotFound, "{}: no key named '{}'", reader_->prefix(), key);
    return reader_->load(*e, device);
  }

 private:
  std::shared_ptr<BundleReader> reader_;
  ckpt::ObjectGraph empty_;
};

}  // namespace

std::shared_ptr<ckpt::ValueSource> bundle_source(std::shared_ptr<BundleReader> reader, const TfRestoreOptions& options) {
  const BundleEntry* e = reader->find(kObjectGraphKey);
  if (!e)
    raise(Code::NotFound,
          "{}: no {}: a name-based (TF1) checkpoint has no object graph to restore by; read its values by name",
          reader->prefix(), kObjectGraphKey);
  if (e->dtype != DType::String || e->shape.rank() != 0)
    raise(Code::DataLoss, "{}: {} is {}{}, not a string scalar", reader->prefix(), kObjectGraphKey,
          dtype_name(e->dtype), e->shape.str());
  std::vector<std::string> bytes = reader->load_strings(*e);
  if (bytes.size() != 1) raise(Code::DataLoss, "{}: {} holds {} strings, not one", reader->prefix(), kObjectGraphKey, bytes.size());
  TfObjectGraph graph = parse_trackable_object_graph(bytes[0], reader->prefix() + ": " + std::string(kObjectGraphKey));
  return tf_graph_source(std::move(graph), std::make_shared<BundleValues>(std::move(reader)), options);
}

std::shared_ptr<ckpt::RestoreState> restore_tf(ckpt::Checkpoint& c, const std::string& prefix_or_dir,
                                               const TfRestoreOptions& options) {
  return c.restore(bundle_source(BundleReader::open(prefix_or_dir), options));
}

void write_tf(ckpt::Checkpoint& c, const std::string& prefix, const TfSaveOptions& options) {
  if (prefix.empty()) raise(Code::InvalidArgument, "write_tf: prefix is empty");
  TfSnapshot s = tf_snapshot(c, options);
  BundleWriter writer(prefix);
  for (auto& [key, value] : s.values) writer.add(key, tensor_on_device(value, c.context().cpu()));
  writer.add_strings(std::string(kObjectGraphKey), Shape{}, {serialize_trackable_object_graph(s.graph)});
  writer.finish();
}

}  // namespace cairn::tfckpt
