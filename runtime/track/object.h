// The object graph: nodes joined by ordered, named edges (TensorFlow's Trackable). Checkpoints walk
// these edges; module queries (module.h) and walks (walk.h) read them.
//
// Threads: every object may be read from several threads at once. Writes to one object are
// serialized by that object's lock, and readers only ever see snapshots (children() copies), so
// nobody iterates an edge list that another thread is changing.
//
// Lifetime: edges hold references, so a cycle keeps its objects alive until one of its edges is
// deleted (there is no cycle collector). Edge observers are held weakly, except those an object
// holds on purpose (hold_edge_observer): a restore's pending values live on the objects that wait.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/object_kind.h"
#include "runtime/core/refcount.h"
#include "runtime/eager/context.h"
#include "runtime/tensor/tensor.h"

namespace cairn {

class Object;

// One tracked edge: its name and the child it points to.
struct Edge {
  std::string name;
  Ref<Object> child;
};

// Told about every tracked edge created on an object: Object::set, List::append, List::set and a
// dict insert, including an edge that replaces an earlier one of the same name. The deferred
// restore of checkpoints hangs off this.
//
// Calls come on the thread that created the edge, after the parent's lock is released, so an
// observer may read and write the graph (assign variables, add observers, set edges). An exception
// from an observer reaches the caller that created the edge; the edge stays, and the remaining
// observers still run first.
class EdgeObserver {
 public:
  virtual ~EdgeObserver();
  virtual void on_edge_created(Object& parent, const std::string& name, Object& child) = 0;
  // Called once when an object this observer watches loses its last reference, before any part
  // of it is destroyed: an observer that remembers objects by address without holding them (a
  // restore's matching state, which must not keep the graph alive) forgets `object` here. The
  // object must not be retained, and is intact until the call returns. Exceptions are dropped.
  virtual void on_object_destroyed(const Object& object) { (void)object; }
};

class Object : public RefCounted {
 public:
  ObjectKind kind() const { return kind_; }
  Context& context() const { return *context_; }
  const Ref<Context>& context_ref() const { return context_; }

  // ---- Tracked edges (what walks and checkpoints follow) ----

  // A snapshot of the tracked edges in order: creation order for trackables, modules and dicts,
  // index order ("0", "1", ...) for lists. Empty for variables.
  virtual std::vector<Edge> children() const { return {}; }
  virtual size_t num_children() const { return 0; }
  // The child at tracked edge `name`, or null.
  virtual Ref<Object> get_child(std::string_view name) const;

  // ---- Generic access by name (what cairn_object_get/set/delete do) ----
  // `fn` names the caller in error messages ("cairn_object_set: ...").

  // The child at `name`, tracked or untracked. Throws NotFound (OutOfRange for a list index).
  virtual Ref<Object> get(std::string_view name, std::string_view fn = "Object::get") const;
  // Creates or replaces the tracked edge `name` (a list index, a dict key, an attribute name).
  // A replaced edge keeps its position. Notifies the edge observers.
  virtual void set(std::string_view name, Ref<Object> child, std::string_view fn = "Object::set");
  // Holds `child` alive under `name` without tracking it: never walked, never checkpointed.
  // Replaces a tracked edge of the same name (and a tracked set replaces an untracked one).
  virtual void set_untracked(std::string_view name, Ref<Object> child,
                             std::string_view fn = "Object::set_untracked");
  // Deletes the tracked or untracked edge `name`. Throws NotFound when there is none.
  virtual void remove(std::string_view name, std::string_view fn = "Object::remove");

  // ---- Observers ----

  // Registers `observer`, held weakly: once the caller's last shared_ptr goes, it is pruned.
  // To see every edge of an object, register first and then read children(): an edge created
  // concurrently is then reported by one or the other (possibly both), never by neither.
  void add_edge_observer(std::shared_ptr<EdgeObserver> observer);
  size_t num_edge_observers() const;  // live ones

  // Keeps `observer` alive as long as this object lives, or until release_edge_observer. This is
  // TensorFlow's _deferred_dependencies: a restore waiting for an edge of this object stays alive
  // with the object, not with the checkpoint that started it. The observer must not hold this
  // object (or anything that reaches it) by reference, or the two keep each other alive.
  void hold_edge_observer(std::shared_ptr<EdgeObserver> observer);
  // Holding does not register: an observer that wants the edges also calls add_edge_observer.
  // Drops the references hold_edge_observer took (every one) to `observer`.
  void release_edge_observer(const EdgeObserver* observer);
  size_t num_held_edge_observers() const;  // references held, counting repeats

  // "module 'm1'", "variable 'v:0'", "list", ... for messages.
  virtual std::string describe() const;

  // ---- Checkpointed attributes (besides a variable's value, which checkpoints handle themselves) ----

  // The values this object saves under "<path>/.ATTRIBUTES/<name>" (an iterator's
  // ITERATOR_STATE). Names are non-empty and contain no '/'. Called while a checkpoint is taken.
  virtual std::vector<std::pair<std::string, Tensor>> save_attributes() { return {}; }
  // Restores attribute `name` from a checkpoint; false when this object has no such attribute
  // (the checkpoint then reports a mismatch). Throws for a value it cannot take.
  virtual bool restore_attribute(const std::string& name, const Tensor& value) {
    (void)name;
    (void)value;
    return false;
  }

 protected:
  Object(ObjectKind kind, Context& ctx);
  ~Object() override;

  // Tells the edge observers (on_object_destroyed) while the object is still whole, then deletes it.
  void destroy() const override;
  // Call after releasing mu_.
  void notify_edge_created(const std::string& name, Object& child);
  // Throws InvalidArgument unless `name` may name a tracked edge: non-empty, no '/' (it separates
  // checkpoint key parts) and not a reserved checkpoint key part.
  static void check_edge_name(std::string_view name, std::string_view fn);
  [[noreturn]] void raise_no_child(std::string_view name, std::string_view fn) const;
  [[noreturn]] void raise_unsupported(std::string_view what, std::string_view fn) const;

  mutable std::shared_mutex mu_;  // guards the subclass's edges

 private:
  const ObjectKind kind_;
  const Ref<Context> context_;
  mutable std::mutex observers_mu_;
  mutable std::vector<std::weak_ptr<EdgeObserver>> observers_;
  std::vector<std::shared_ptr<EdgeObserver>> held_observers_;  // guarded by observers_mu_
};

// Edges kept in insertion order with a name index; a replaced edge keeps its slot. Not locked:
// the owning object's lock guards it.
class NamedEdges {
 public:
  const std::vector<Edge>& edges() const { return edges_; }
  size_t size() const { return edges_.size(); }
  const Edge* find(std::string_view name) const;
  // Sets `name` to `child`; returns the child it replaced (null when the edge is new).
  Ref<Object> set(std::string_view name, Ref<Object> child);
  // Removes `name`; returns the removed child (null when there was none).
  Ref<Object> erase(std::string_view name);

 private:
  std::vector<Edge> edges_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace cairn
