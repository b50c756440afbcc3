#include "runtime/track/trackable.h"

#include <fmt/format.h>

#include "runtime/core/error.h"

namespace cairn {

Ref<Trackable> Trackable::create(Context& ctx) { return make_ref<Trackable>(ctx); }

std::vector<Edge> Trackable::children() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tracked_.edges();
}

size_t Trackable::num_children() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tracked_.size();
}

Ref<Object> Trackable::get_child(std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Edge* e = tracked_.find(name);
  return e ? e->child : nullptr;
}

Ref<Object> Trackable::get(std::string_view name, std::string_view fn) const {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (const Edge* e = tracked_.find(name)) return e->child;
    if (const Edge* e = untracked_.find(name)) return e->child;
  }
  raise_no_child(name, fn);
}

void Trackable::set(std::string_view name, Ref<Object> child, std::string_view fn) {
  if (!child) raise(Code::InvalidArgument, "{}: child is null", fn);
  check_edge_name(name, fn);
  Ref<Object> replaced, untracked_replaced;  // released after the lock
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    untracked_replaced = untracked_.erase(name);
    replaced = tracked_.set(name, child);
  }
  notify_edge_created(std::string(name), *child);
}

void Trackable::set_untracked(std::string_view name, Ref<Object> child, std::string_view fn) {
  if (!child) raise(Code::InvalidArgument, "{}: child is null", fn);
  if (name.empty()) raise(Code::InvalidArgument, "{}: name is empty", fn);
  Ref<Object> replaced, tracked_replaced;  // released after the lock
  std::unique_lock<std::shared_mutex> lock(mu_);
  tracked_replaced = tracked_.erase(name);
  replaced = untracked_.set(name, std::move(child));
}

void Trackable::remove(std::string_view name, std::string_view fn) {
  Ref<Object> removed;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    removed = tracked_.erase(name);
    if (!removed) removed = untracked_.erase(name);
  }
  if (!removed) raise_no_child(name, fn);
}

std::vector<Edge> Trackable::untracked() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return untracked_.edges();
}

namespace {
void check_scope_name(std::string_view name, std::string_view fn) {
  if (name.empty()) raise(Code::InvalidArgument, "{}: module name is empty", fn);
  if (name.find_first_of("/:") != std::string_view::npos)
    raise(Code::InvalidArgument, "{}: module name \"{}\" contains '/' or ':'", fn, name);
}
}  // namespace

Module::Module(Context& ctx, std::string_view name, const Module* parent_scope, std::string_view fn)
    : Module(ObjectKind::Module, ctx, name, parent_scope, fn) {}

Module::Module(ObjectKind kind, Context& ctx, std::string_view name, const Module* parent_scope, std::string_view fn)
    : Trackable(kind, ctx), name_(name) {
  check_scope_name(name, fn);
  scope_ = parent_scope ? fmt::format("{}/{}", parent_scope->scope(), name) : name_;
}

Ref<Module> Module::create(Context& ctx, std::string_view name, const Module* parent_scope, std::string_view fn) {
  return make_ref<Module>(ctx, name, parent_scope, fn);
}

std::string Module::describe() const { return fmt::format("module '{}'", name_); }

}  // namespace cairn
