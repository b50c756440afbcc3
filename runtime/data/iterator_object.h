// An iterator over a dataset as a tracked object (ObjectKind::Iterator): what cairn_dataset_iterate
// returns. It serializes callers, counts the elements it delivered, and saves and restores its
// position as a small byte string that a checkpoint stores under
// "<path>/.ATTRIBUTES/ITERATOR_STATE" (a uint8 vector).
//
// State layout (StateWriter encoding): magic+version, the pipeline's fingerprint (a hash of
// dataset->describe() and its element spec), the pipeline's description (for the error when a
// state is restored into another pipeline), the epoch, the position, whether the end was reached,
// the root iterator's own state, and a checksum of everything before it (corrupt bytes are
// DataLoss).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/track/object.h"

namespace cairn::data {

// The checkpoint attribute name of an iterator's state.
constexpr const char* kIteratorStateAttribute = "ITERATOR_STATE";

class IteratorObject final : public Object {
 public:
  // An iterator from the first element of a new iteration of `ds`: the first iterator of a dataset
  // runs epoch 0, the next one epoch 1, ... (so reshuffle_each_iteration gives each its own order).
  // The root iterator is made on the first use (next, save, restore), so file errors come then.
  static Ref<IteratorObject> create(DatasetPtr ds);
  IteratorObject(DatasetPtr ds, uint64_t epoch);
  ~IteratorObject() override;

  // The next element; false at the end (and on every later call). Throws FailedPrecondition after
  // close(), and the element's error for a failed element (which is skipped). Thread-safe.
  bool next(Element& out);
  // Elements delivered since the start (restored with the state).
  int64_t position() const { return position_.load(); }
  const DatasetPtr& dataset() const { return ds_; }
  uint64_t epoch() const;

  // The state as bytes (what cairn_iterator_save returns); save_state writes it as one put_bytes.
  std::string state();
  void save_state(StateWriter& w);
  // Replaces the position with a saved one. InvalidArgument naming both pipelines for a state of
  // another pipeline; DataLoss for corrupt bytes. The iterator is unchanged when it throws.
  void restore_state(std::string_view bytes);
  // Stops background work and waits for it; later next() calls are FailedPrecondition, while
  // state() still saves the position it stopped at. Idempotent.
  void close();
  bool closed() const { return closed_.load(); }

  std::string describe() const override;
  std::vector<std::pair<std::string, Tensor>> save_attributes() override;
  bool restore_attribute(const std::string& name, const Tensor& value) override;

 private:
  Iterator& root();  // call with call_mu_ held
  // close(); keep_state: save the root's position first (the destructor does not need it).
  void close_impl(bool keep_state);

  const DatasetPtr ds_;
  const uint64_t fingerprint_;
  mutable std::mutex call_mu_;  // serializes next/save/restore/close's teardown
  std::mutex root_mu_;          // guards swapping root_ (close cancels without waiting for call_mu_)
  std::unique_ptr<Iterator> root_;
  uint64_t epoch_;
  bool ended_ = false;
  std::optional<std::string> closed_root_state_;  // the root's state when close() ran (if it had started)
  bool close_save_failed_ = false;
  std::atomic<int64_t> position_{0};
  std::atomic<bool> closed_{false};
};

// The fingerprint of a pipeline that iterator states carry.
uint64_t pipeline_fingerprint(const Dataset& ds);

}  // namespace cairn::data
