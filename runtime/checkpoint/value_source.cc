#include "runtime/checkpoint/value_source.h"

namespace cairn::ckpt {

ValueSource::~ValueSource() = default;

namespace {

// The file that holds `key`: the reader itself, or the shard holding it.
const Reader& reader_of(const Reader& r, std::string_view) { return r; }
const Reader& reader_of(const ShardedReader& r, std::string_view key) { return r.shard_of(key); }

// The adapter keeps the readers free of restore concerns: they stay the file format only. `R` is a
// Reader (one file) or a ShardedReader (each value from the shard holding it).
template <class R>
class ReaderSource final : public ValueSource {
 public:
  explicit ReaderSource(std::shared_ptr<R> reader) : reader_(std::move(reader)) {}
  const std::string& path() const override { return reader_->path(); }
  const ObjectGraph& graph() const override { return reader_->graph(); }
  std::optional<ValueInfo> info(std::string_view key) const override {
    const TensorInfo* e = reader_->find(key);
    if (!e) return std::nullopt;
    return ValueInfo{e->dtype, e->shape};
  }
  Tensor load(std::string_view key, Device& device) const override { return reader_of(*reader_, key).load(key, device); }
  Tensor load_reusing(std::string_view key, Device& device, Tensor spare) const override {
    if (!spare.valid() || spare.device() != &device) return load(key, device);
    const Reader& file = reader_of(*reader_, key);
    file.load_into(file.info(key), spare);
    return spare;
  }

 private:
  std::shared_ptr<R> reader_;
};
}  // namespace

std::shared_ptr<ValueSource> reader_source(std::shared_ptr<Reader> reader) {
  return std::make_shared<ReaderSource<Reader>>(std::move(reader));
}

std::shared_ptr<ValueSource> sharded_source(std::shared_ptr<ShardedReader> reader) {
  return std::make_shared<ReaderSource<ShardedReader>>(std::move(reader));
}

}  // namespace cairn::ckpt
