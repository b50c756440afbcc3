#include "runtime/track/object.h"

#include <algorithm>
#include <exception>
#include <iterator>

#include "runtime/core/error.h"

namespace cairn {

EdgeObserver::~EdgeObserver() = default;

Object::Object(ObjectKind kind, Context& ctx) : kind_(kind), context_(Ref<Context>::share(&ctx)) {}

Object::~Object() = default;

std::string Object::describe() const { return object_kind_name(kind_); }

Ref<Object> Object::get_child(std::string_view) const { return nullptr; }

Ref<Object> Object::get(std::string_view name, std::string_view fn) const { raise_no_child(name, fn); }

void Object::set(std::string_view, Ref<Object>, std::string_view fn) { raise_unsupported("edges", fn); }

void Object::set_untracked(std::string_view, Ref<Object>, std::string_view fn) {
  raise_unsupported("untracked references", fn);
}

void Object::remove(std::string_view name, std::string_view fn) { raise_no_child(name, fn); }

void Object::raise_no_child(std::string_view name, std::string_view fn) const {
  raise(Code::NotFound, "{}: no child named \"{}\" in {}", fn, name, describe());
}

void Object::raise_unsupported(std::string_view what, std::string_view fn) const {
  raise(Code::InvalidArgument, "{}: a {} has no {}", fn, object_kind_name(kind_), what);
}

void Object::check_edge_name(std::string_view name, std::string_view fn) {
  if (name.empty()) raise(Code::InvalidArgument, "{}: edge name is empty", fn);
  if (name.find('/') != std::string_view::npos)
    raise(Code::InvalidArgument, "{}: edge name \"{}\" contains '/', which separates checkpoint key parts", fn, name);
  if (name == ".ATTRIBUTES" || name == ".OPTIMIZER_SLOT")
    raise(Code::InvalidArgument, "{}: edge name \"{}\" is reserved for checkpoint keys", fn, name);
}

void Object::add_edge_observer(std::shared_ptr<EdgeObserver> observer) {
  if (!observer) return;
  std::lock_guard<std::mutex> lock(observers_mu_);
  observers_.erase(std::remove_if(observers_.begin(), observers_.end(), [](const auto& w) { return w.expired(); }),
                   observers_.end());
  observers_.push_back(std::move(observer));
}

void Object::hold_edge_observer(std::shared_ptr<EdgeObserver> observer) {
  if (!observer) return;
  std::lock_guard<std::mutex> lock(observers_mu_);
  held_observers_.push_back(std::move(observer));
}

void Object::release_edge_observer(const EdgeObserver* observer) {
  std::vector<std::shared_ptr<EdgeObserver>> released;  // destroyed after the lock: it may be the last reference
  {
    std::lock_guard<std::mutex> lock(observers_mu_);
    auto keep = std::stable_partition(held_observers_.begin(), held_observers_.end(),
                                      [&](const auto& p) { return p.get() != observer; });
    released.assign(std::make_move_iterator(keep), std::make_move_iterator(held_observers_.end()));
    held_observers_.erase(keep, held_observers_.end());
  }
}

size_t Object::num_held_edge_observers() const {
  std::lock_guard<std::mutex> lock(observers_mu_);
  return held_observers_.size();
}

void Object::destroy() const {
  std::vector<std::shared_ptr<EdgeObserver>> live;
  {
    std::lock_guard<std::mutex> lock(observers_mu_);
    for (const auto& w : observers_)
      if (auto p = w.lock()) live.push_back(std::move(p));
  }
  for (auto& o : live) {
    try {
      o->on_object_destroyed(*this);
    } catch (...) {
      // Nobody to report to: the object goes either way.
    }
  }
  live.clear();  // an observer whose last reference this was goes before the object does
  delete this;
}

size_t Object::num_edge_observers() const {
  std::lock_guard<std::mutex> lock(observers_mu_);
  return static_cast<size_t>(
      std::count_if(observers_.begin(), observers_.end(), [](const auto& w) { return !w.expired(); }));
}

void Object::notify_edge_created(const std::string& name, Object& child) {
  std::vector<std::shared_ptr<EdgeObserver>> live;
  {
    std::lock_guard<std::mutex> lock(observers_mu_);
    if (observers_.empty()) return;
    for (const auto& w : observers_)
      if (auto p = w.lock()) live.push_back(std::move(p));
    if (live.size() != observers_.size()) observers_.assign(live.begin(), live.end());
  }
  std::exception_ptr first_error;
  for (auto& o : live) {
    try {
      o->on_edge_created(*this, name, child);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

const Edge* NamedEdges::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &edges_[it->second];
}

Ref<Object> NamedEdges::set(std::string_view name, Ref<Object> child) {
  std::string key(name);
  auto it = index_.find(key);
  if (it != index_.end()) {
    Ref<Object> old = std::move(edges_[it->second].child);
    edges_[it->second].child = std::move(child);
    return old;
  }
  index_.emplace(key, edges_.size());
  edges_.push_back(Edge{std::move(key), std::move(child)});
  return nullptr;
}

Ref<Object> NamedEdges::erase(std::string_view name) {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return nullptr;
  size_t pos = it->second;
  index_.erase(it);
  Ref<Object> old = std::move(edges_[pos].child);
  edges_.erase(edges_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (size_t i = pos; i < edges_.size(); ++i) index_[edges_[i].name] = i;
  return old;
}

}  // namespace cairn
