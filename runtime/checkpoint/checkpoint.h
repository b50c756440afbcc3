// tf.train.Checkpoint over Cairn's object graph: save the graph reachable from a root, restore it
// by matching checkpoint nodes to live objects along the same named edges, and restore values for
// objects that do not exist yet the moment their edge is created (deferred restore).
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/checkpoint/format.h"
#include "runtime/checkpoint/manager.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/value_source.h"
#include "runtime/checkpoint/writer.h"
#include "runtime/track/slots.h"
#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"

namespace cairn::ckpt {

constexpr const char* kOptimizerSlot = ".OPTIMIZER_SLOT";

struct CheckpointOptions {
  bool compress = false;  // zstd per payload (stored raw when it does not shrink)
  bool async = false;     // save/write snapshot the values and write on a background thread
  bool fsync = true;      // off only for scratch directories and tests
};

// Runs one write at a time on a background thread. An error is kept until the next wait().
class BackgroundWriter {
 public:
  ~BackgroundWriter();
  // Waits for the running job (if any), rethrowing its error, then starts `job`.
  void start(std::function<void()> job);
  // Waits for the running job and rethrows its error, once.
  void wait();
  // Waits for the running job; its error stays for the next wait().
  void join();

 private:
  std::thread thread_;
  std::exception_ptr error_;
};

class RestoreState;

class Checkpoint {
 public:
  // The root's children are `children`, set in name order as tf.train.Checkpoint(**kwargs) does.
  Checkpoint(Context& ctx, const std::vector<std::pair<std::string, Ref<Object>>>& children);
  ~Checkpoint();

  Trackable& root() { return *root_; }
  Context& context() { return *ctx_; }
  // The int64 save counter, created on first use as the root's edge "save_counter".
  Variable& save_counter();
  int64_t save_counter_value();
  // Adds one to save_counter and returns the new value; `fn` names the caller in errors.
  int64_t increment_save_counter(std::string_view fn);

  void set_options(const CheckpointOptions& options) { options_ = options; }
  const CheckpointOptions& options() const { return options_; }

  // Increments save_counter and writes "<prefix>-<save_counter>"; returns that path.
  std::string save(const std::string& prefix);
  // Writes to exactly `path` without touching save_counter.
  void write(const std::string& path);
  // Restores from `path`. The state stays attached to this checkpoint (and to the returned
  // pointer) so deferred restores keep working while either lives.
  std::shared_ptr<RestoreState> restore(const std::string& path);
  // Restores from another source of values (a TensorFlow bundle: tf_object_graph.h).
  std::shared_ptr<RestoreState> restore(std::shared_ptr<ValueSource> source);
  // Waits for an async save and rethrows its error.
  void sync() { writer_.wait(); }
  BackgroundWriter& writer() { return writer_; }

  // What a save writes: the object graph, the values (snapshots) and the metadata.
  struct Snapshot {
    ObjectGraph graph;
    std::vector<SaveEntry> entries;
    Metadata metadata;
  };
  Snapshot snapshot();
  void write_snapshot(const Snapshot& s, const std::string& path) const;

 private:
  Ref<Context> ctx_;
  Ref<Trackable> root_;
  Ref<Variable> save_counter_;
  std::mutex counter_mu_;
  CheckpointOptions options_;
  BackgroundWriter writer_;
  std::vector<std::shared_ptr<RestoreState>> restores_;  // keeps deferred restores alive
};

// The result of one restore: matching state, deferred restores and the assertions.
class RestoreState : public EdgeObserver, public std::enable_shared_from_this<RestoreState> {
 public:
  RestoreState(std::shared_ptr<ValueSource> source, Ref<Object> root);
  ~RestoreState() override;

  // Matches the whole live graph under the root (called once by Checkpoint::restore).
  void run();

  // TF's assert_consumed: every checkpoint value was restored and every live object under the
  // root was matched. Throws FailedPrecondition naming every unmatched path.
  void assert_consumed() const;
  // TF's assert_existing_objects_matched: every live object that holds values (variables) under
  // the root was matched.
  void assert_existing_objects_matched() const;
  // Silences the warning about unrestored checkpoint values.
  void expect_partial() { expect_partial_ = true; }

  void on_edge_created(Object& parent, const std::string& name, Object& child) override;

 private:
  void match(Object& live, uint32_t node, const std::string& live_path);
  void restore_values(Object& live, uint32_t node);
  // Slots: once a slot owner's node and a variable's node are both matched (in either order),
  // the owner is asked to restore the slot now or when it creates it.
  void match_slots(Object& live, uint32_t node);
  void restore_slot(SlotOwner& owner, const SlotRef& ref);
  void restore_slot_value(Variable& slot, uint32_t slot_node);
  std::vector<std::string> unrestored_values() const;
  std::vector<std::string> unmatched_live(bool values_only) const;
  // The dtype and shape of `key`; NotFound naming the source and the key when it has none.
  ValueInfo value_info(const std::string& key) const;

  std::shared_ptr<ValueSource> source_;
  Ref<Object> root_;
  std::vector<std::string> node_paths_;  // first breadth-first path of each checkpoint node
  mutable std::recursive_mutex mu_;
  std::vector<bool> node_matched_;
  std::unordered_map<const Object*, uint32_t> matched_;  // live object -> checkpoint node
  std::vector<Ref<Object>> matched_refs_;                // keeps matched objects' identity stable
  std::vector<Object*> node_live_;                       // the first live object matched to each node
  // Live objects the source declares to keep their own values (ValueSource::keeps_live_value).
  std::unordered_set<const Object*> kept_;
  // variable node -> (slot owner node, index into its slots), for every SlotRef in the file.
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, size_t>>> slots_by_variable_;
  // Deferred restores: (live parent, edge name) -> checkpoint node to match when the edge appears.
  std::unordered_map<const Object*, std::vector<std::pair<std::string, uint32_t>>> pending_;
  std::atomic<bool> expect_partial_{false};
};

// The variable value key of a path: "<path>/.ATTRIBUTES/VARIABLE_VALUE".
std::string variable_key(const std::string& path);
// The value key of a slot: "<variable path>/.OPTIMIZER_SLOT/<owner path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE".
std::string slot_key(const std::string& variable_path, const std::string& owner_path, const std::string& slot_name);

}  // namespace cairn::ckpt
