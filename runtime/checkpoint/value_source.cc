#include "runtime/checkpoint/value_source.h"

namespace cairn::ckpt {

ValueSource::~ValueSource() = default;

namespace {
// The adapter keeps Reader free of restore concerns: Reader stays the file format only.
class ReaderSource final : public ValueSource {
 public:
  explicit ReaderSource(std::shared_ptr<Reader> reader) : reader_(std::move(reader)) {}
  const std::string& path() const override { return reader_->path(); }
  const ObjectGraph& graph() const override { return reader_->graph(); }
  std::optional<ValueInfo> info(std::string_view key) const override {
    const TensorInfo* e = reader_->find(key);
    if (!e) return std::nullopt;
    return ValueInfo{e->dtype, e->shape};
  }
  Tensor load(std::string_view key, Device& device) const override { return reader_->load(key, device); }
  Tensor load_reusing(std::string_view key, Device& device, Tensor spare) const override {
    if (!spare.valid() || spare.device() != &device) return load(key, device);
    reader_->load_into(reader_->info(key), spare);
    return spare;
  }

 private:
  std::shared_ptr<Reader> reader_;
};

class ShardedSource final : public ValueSource {
 public:
  explicit ShardedSource(std::shared_ptr<ShardedReader> reader) : reader_(std::move(reader)) {}
  const std::string& path() const override { return reader_->path(); }
  const ObjectGraph& graph() const override { return reader_->graph(); }
  std::optional<ValueInfo> info(std::string_view key) const override {
    const TensorInfo* e = reader_->find(key);
    if (!e) return std::nullopt;
    return ValueInfo{e->dtype, e->shape};
  }
  Tensor load(std::string_view key, Device& device) const override { return reader_->shard_of(key).load(key, device); }
  Tensor load_reusing(std::string_view key, Device& device, Tensor spare) const override {
    if (!spare.valid() || spare.device() != &device) return load(key, device);
    const Reader& shard = reader_->shard_of(key);
    shard.load_into(shard.info(key), spare);
    return spare;
  }

 private:
  std::shared_ptr<ShardedReader> reader_;
};
}  // namespace

std::shared_ptr<ValueSource> reader_source(std::shared_ptr<Reader> reader) {
  return std::make_shared<ReaderSource>(std::move(reader));
}

std::shared_ptr<ValueSource> sharded_source(std::shared_ptr<ShardedReader> reader) {
  return std::make_shared<ShardedSource>(std::move(reader));
}

}  // namespace cairn::ckpt
