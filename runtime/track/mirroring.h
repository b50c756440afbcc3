// Mirrored variables (tf.distribute's MirroredVariable), the part the object graph knows about.
// runtime/distribute's MirroredStrategy sets two per-thread scopes:
//  - MirrorScope (strategy.scope(), and every replica thread): a Variable created while one lives
//    on the thread gets one component per device, each holding the same initial value. The
//    Variable object made is replica 0's component and owns the others (Variable::component).
//  - ReplicaScope (each replica thread): the replica the thread runs for. A mirrored variable's
//    read, assign, update and device() then act on that replica's component, so a traced function
//    captures the component of the replica being traced, and an optimizer updates each replica's
//    own copy. Outside a ReplicaScope a read is replica 0's value and a write goes to every
//    component (a checkpoint restore, set_learning_rate).
// Both are cheap when absent: one thread-local pointer or int test.
#pragma once

#include <vector>

namespace cairn {

class Device;

class MirrorScope {
 public:
  // `devices`: one per replica, in replica order (at least one). Borrowed for the scope's life.
  explicit MirrorScope(const std::vector<Device*>& devices);
  ~MirrorScope();
  MirrorScope(const MirrorScope&) = delete;
  MirrorScope& operator=(const MirrorScope&) = delete;
  // The devices of the innermost scope on this thread, or null.
  static const std::vector<Device*>* current() { return innermost_ ? innermost_->devices_ : nullptr; }

 private:
  const std::vector<Device*>* devices_;
  MirrorScope* outer_;
  static inline thread_local MirrorScope* innermost_ = nullptr;
};

class ReplicaScope {
 public:
  explicit ReplicaScope(int replica) : outer_(current_) { current_ = replica; }
  ~ReplicaScope() { current_ = outer_; }
  ReplicaScope(const ReplicaScope&) = delete;
  ReplicaScope& operator=(const ReplicaScope&) = delete;
  // The replica this thread runs for, or -1 outside replicas.
  static int current() { return current_; }

 private:
  int outer_;
  static inline thread_local int current_ = -1;
};

}  // namespace cairn
