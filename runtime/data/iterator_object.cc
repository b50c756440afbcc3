#include "runtime/data/iterator_object.h"

#include <cstring>

#include <fmt/format.h>
#include <xxhash.h>

#include "runtime/core/error.h"

namespace cairn::data {
namespace {

constexpr uint64_t kStateMagic = 0x3154495f4e524143ull;  // "CARN_IT1": magic and version 1

uint64_t checksum(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

}  // namespace

uint64_t pipeline_fingerprint(const Dataset& ds) { return checksum(ds.describe() + "\n" + ds.spec().text()); }

Ref<IteratorObject> IteratorObject::create(DatasetPtr ds) {
  if (!ds) raise(Code::InvalidArgument, "iterate: dataset is null");
  const uint64_t epoch = ds->take_iteration();
  return make_ref<IteratorObject>(std::move(ds), epoch);
}

IteratorObject::IteratorObject(DatasetPtr ds, uint64_t epoch)
    : Object(ObjectKind::Iterator, ds->context()), ds_(std::move(ds)), fingerprint_(pipeline_fingerprint(*ds_)),
      epoch_(epoch) {}

IteratorObject::~IteratorObject() {
  try {
    close_impl(false);
  } catch (...) {
  }
}

std::string IteratorObject::describe() const { return "iterator over " + ds_->describe(); }

uint64_t IteratorObject::epoch() const {
  std::lock_guard<std::mutex> lock(call_mu_);
  return epoch_;
}

Iterator& IteratorObject::root() {
  if (!root_) {
    std::unique_ptr<Iterator> it = ds_->make_iterator(epoch_);
    std::lock_guard<std::mutex> lock(root_mu_);
    root_ = std::move(it);
  }
  return *root_;
}

bool IteratorObject::next(Element& out) {
  std::lock_guard<std::mutex> lock(call_mu_);
  if (closed_) raise(Code::FailedPrecondition, "{}: the iterator is closed", ds_->describe());
  if (ended_) return false;
  Element e;
  if (!root().next(e)) {
    ended_ = true;
    return false;
  }
  out = std::move(e);
  ++position_;
  return true;
}

std::string IteratorObject::state() {
  std::lock_guard<std::mutex> lock(call_mu_);
  // A closed iterator still saves (a checkpoint may hold it): its root's state was kept at close,
  // or it never started (then a fresh root's state is its state).
  if (closed_ && !closed_root_state_ && close_save_failed_)
    raise(Code::FailedPrecondition, "{}: the iterator was closed before it could save its state", ds_->describe());
  StateWriter body;
  body.put_u64(kStateMagic);
  body.put_u64(fingerprint_);
  body.put_bytes(ds_->describe());
  body.put_u64(epoch_);
  body.put_i64(position_);
  body.put_bool(ended_);
  if (closed_ && closed_root_state_) {
    body.put_bytes(*closed_root_state_);
  } else if (closed_) {
    std::unique_ptr<Iterator> fresh = ds_->make_iterator(epoch_);
    StateWriter inner;
    fresh->save(inner);
    fresh->cancel();
    body.put_bytes(inner.bytes());
  } else {
    StateWriter inner;
    root().save(inner);
    body.put_bytes(inner.bytes());
  }
  const uint64_t sum = checksum(body.bytes());
  body.put_u64(sum);
  return body.take();
}

void IteratorObject::save_state(StateWriter& w) { w.put_bytes(state()); }

void IteratorObject::restore_state(std::string_view bytes) {
  const std::string what = ds_->describe();
  if (bytes.size() < 16) raise(Code::DataLoss, "{}: corrupt iterator state: {} bytes is too short", what, bytes.size());
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  uint64_t sum = 0;
  for (int i = 0; i < 8; ++i) sum |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[body.size() + i])) << (8 * i);
  if (checksum(body) != sum) raise(Code::DataLoss, "{}: corrupt iterator state: the checksum does not match", what);
  StateReader r(body, what, context());
  if (r.get_u64() != kStateMagic) r.corrupt("not an iterator state of this version");
  const uint64_t fingerprint = r.get_u64();
  const std::string saved = r.get_bytes();
  if (fingerprint != fingerprint_)
    raise(Code::InvalidArgument,
          "iterator restore: the state is of pipeline {} (fingerprint {:016x}), not of this iterator's pipeline {} "
          "(fingerprint {:016x})",
          saved, fingerprint, what, fingerprint_);
  const uint64_t epoch = r.get_u64();
  const int64_t position = r.get_i64();
  const bool ended = r.get_bool();
  const std::string inner = r.get_bytes();
  if (!r.done()) r.corrupt("bytes after the end");
  if (position < 0) r.corrupt("a negative position");

  std::lock_guard<std::mutex> lock(call_mu_);
  if (closed_) raise(Code::FailedPrecondition, "{}: the iterator is closed", what);
  std::unique_ptr<Iterator> it = ds_->make_iterator(epoch);
  StateReader ir(inner, what, context());
  it->restore(ir);
  if (!ir.done()) ir.corrupt("bytes after the end of the root iterator's state");
  std::unique_ptr<Iterator> old;
  {
    std::lock_guard<std::mutex> rl(root_mu_);
    old = std::exchange(root_, std::move(it));
  }
  if (old) old->cancel();
  epoch_ = epoch;
  position_ = position;
  ended_ = ended;
}

void IteratorObject::close() { close_impl(true); }

void IteratorObject::close_impl(bool keep_state) {
  if (closed_.exchange(true)) return;
  {
    // Cancel first, without waiting for a next() in progress: cancel is what makes it return.
    std::lock_guard<std::mutex> rl(root_mu_);
    if (root_) root_->cancel();
  }
  std::unique_ptr<Iterator> old;
  {
    std::lock_guard<std::mutex> lock(call_mu_);
    if (keep_state && root_) {
      try {  // keep the position, so that a checkpoint can still save this iterator
        StateWriter inner;
        root_->save(inner);
        closed_root_state_ = inner.take();
      } catch (...) {
        close_save_failed_ = true;
      }
    }
    std::lock_guard<std::mutex> rl(root_mu_);
    old = std::move(root_);
  }
  if (old) old->cancel();
}

std::vector<std::pair<std::string, Tensor>> IteratorObject::save_attributes() {
  const std::string s = state();
  Tensor t = Tensor::allocate(context().cpu(), DType::UInt8, Shape{static_cast<int64_t>(s.size())});
  if (!s.empty()) std::memcpy(t.raw_mutable_data(), s.data(), s.size());
  return {{kIteratorStateAttribute, std::move(t)}};
}

bool IteratorObject::restore_attribute(const std::string& name, const Tensor& value) {
  if (name != kIteratorStateAttribute) return false;
  if (value.dtype() != DType::UInt8 || value.rank() != 1)
    raise(Code::DataLoss, "{}: the checkpoint's iterator state is {}, expected a uint8 vector", describe(),
          value.debug_string());
  Tensor host = host_values(value, context().cpu(), "iterator restore");
  restore_state(std::string_view(static_cast<const char*>(host.raw_data()), host.nbytes()));
  return true;
}

}  // namespace cairn::data
