// tf.train.Checkpoint over Cairn's object graph: save the graph reachable from a root, restore it
// by matching checkpoint nodes to live objects along the same named edges, and restore values for
// objects that do not exist yet the moment their edge is created (deferred restore). Deferred
// restores hang off the objects that wait for them, so they outlive the Checkpoint and the status.
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
class RestoreCore;

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
  // Restores from `path`. Values whose objects do not exist yet wait on the live objects that will
  // create them (RestoreState), so deferred restores outlive this checkpoint and the returned
  // status. A newer restore of this checkpoint cancels the older one's deferred restores.
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
  std::weak_ptr<RestoreCore> last_restore_;  // the restore a newer one supersedes
};

// RestoreCore is the matching state of one restore (TensorFlow's _CheckpointRestoreCoordinator),
// defined in checkpoint.cc. The status, and every live object that still waits for a value of it
// (an edge not created yet, an optimizer slot not created yet), hold it.

// The result of one restore (TensorFlow's CheckpointLoadStatus): the assertions over its matching
// state.
//
// Deferred restores live on the objects that receive them, as TensorFlow's _deferred_dependencies:
// an object with a pending child edge (a layer not built yet, a list item not appended yet, an
// iterator not attached yet) holds the matching state, and so does an optimizer for a slot it has
// not created yet. Freeing the status and the Checkpoint loses nothing; an object drops its hold
// once nothing is pending on it. The state holds only variables (leaves) by reference; other
// objects it knows by address and forgets when they die, so it never keeps the graph alive.
//
// The "value(s) were never restored" warning is logged when the matching state goes: when the
// status and the checkpoint are gone and nothing is pending on a live object any more (TF logs on
// the coordinator's deletion), so it names values that can no longer be restored. expect_partial()
// silences that warning and nothing else: deferred restores still happen.
class RestoreState {
 public:
  RestoreState(std::shared_ptr<ValueSource> source, Ref<Object> root);
  ~RestoreState();

  // Matches the whole live graph under the root (called once by Checkpoint::restore).
  void run();

  // TF's assert_consumed: every checkpoint value was restored and every live object under the
  // root was matched. Throws FailedPrecondition naming every unmatched path.
  void assert_consumed() const;
  // TF's assert_existing_objects_matched: every live object that holds values (variables) under
  // the root was matched.
  void assert_existing_objects_matched() const;
  // Silences the warning about unrestored checkpoint values (also for the objects that still wait).
  void expect_partial();
  // Stops this restore's deferred restores (a failed restore, or one a newer restore of the same
  // checkpoint supersedes) and releases the objects' holds on its state.
  void cancel_pending();

  const std::shared_ptr<RestoreCore>& core() const { return core_; }

 private:
  Ref<Object> root_;  // the status walks the live graph from here; the matching state does not hold it
  std::shared_ptr<RestoreCore> core_;
};

// How many restores' matching states are alive (held by a status or a waiting object). For tests
// that prove a finished restore leaves nothing behind.
int64_t live_restores();

// The variable value key of a path: "<path>/.ATTRIBUTES/VARIABLE_VALUE".
std::string variable_key(const std::string& path);
// The value key of a slot: "<variable path>/.OPTIMIZER_SLOT/<owner path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE".
std::string slot_key(const std::string& variable_path, const std::string& owner_path, const std::string& slot_name);

}  // namespace cairn::ckpt
