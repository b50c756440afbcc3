#include "runtime/track/containers.h"

#include <limits>

#include "runtime/core/error.h"

namespace cairn {

// ---------------------------------------------------------------------------------------------
// List

Ref<List> List::create(Context& ctx) { return make_ref<List>(ctx); }

size_t List::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return items_.size();
}

bool List::non_append_mutation() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return non_append_mutation_;
}

std::optional<size_t> List::parse_index(std::string_view name) {
  if (name.empty() || name.size() > 19) return std::nullopt;
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  size_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  return v;
}

void List::raise_out_of_range(size_t i, size_t size, std::string_view fn) const {
  raise(Code::OutOfRange, "{}: index {} is out of range for a list of size {}", fn, i, size);
}

size_t List::index_or_throw(std::string_view name, std::string_view fn) const {
  std::optional<size_t> i = parse_index(name);
  if (!i) raise(Code::NotFound, "{}: no child named \"{}\" in list (elements are named \"0\", \"1\", ...)", fn, name);
  return *i;
}

void List::append(Ref<Object> item, std::string_view fn) {
  if (!item) raise(Code::InvalidArgument, "{}: item is null", fn);
  size_t index;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    index = items_.size();
    items_.push_back(item);
  }
  notify_edge_created(std::to_string(index), *item);
}

Ref<Object> List::at(size_t i, std::string_view fn) const {
  size_t n;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (i < items_.size()) return items_[i];
    n = items_.size();
  }
  raise_out_of_range(i, n, fn);
}

void List::set_at(size_t i, Ref<Object> item, std::string_view fn) {
  if (!item) raise(Code::InvalidArgument, "{}: item is null", fn);
  Ref<Object> replaced;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (i >= items_.size()) {
      size_t n = items_.size();
      lock.unlock();
      raise_out_of_range(i, n, fn);
    }
    replaced = std::exchange(items_[i], item);
    if (replaced.get() != item.get()) non_append_mutation_ = true;
  }
  notify_edge_created(std::to_string(i), *item);
}

void List::remove_at(size_t i, std::string_view fn) {
  Ref<Object> removed;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (i >= items_.size()) {
      size_t n = items_.size();
      lock.unlock();
      raise_out_of_range(i, n, fn);
    }
    removed = std::move(items_[i]);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    non_append_mutation_ = true;
  }
}

std::vector<Edge> List::children() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<Edge> out;
  out.reserve(items_.size());
  for (size_t i = 0; i < items_.size(); ++i) out.push_back(Edge{std::to_string(i), items_[i]});
  return out;
}

Ref<Object> List::get_child(std::string_view name) const {
  std::optional<size_t> i = parse_index(name);
  if (!i) return nullptr;
  std::shared_lock<std::shared_mutex> lock(mu_);
  return *i < items_.size() ? items_[*i] : nullptr;
}

Ref<Object> List::get(std::string_view name, std::string_view fn) const { return at(index_or_throw(name, fn), fn); }

void List::set(std::string_view name, Ref<Object> item, std::string_view fn) {
  set_at(index_or_throw(name, fn), std::move(item), fn);
}

void List::remove(std::string_view name, std::string_view fn) { remove_at(index_or_throw(name, fn), fn); }

// ---------------------------------------------------------------------------------------------
// Dict

Ref<Dict> Dict::create(Context& ctx) { return make_ref<Dict>(ctx); }

std::vector<Edge> Dict::children() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return entries_.edges();
}

size_t Dict::num_children() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return entries_.size();
}

Ref<Object> Dict::get_child(std::string_view key) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Edge* e = entries_.find(key);
  return e ? e->child : nullptr;
}

Ref<Object> Dict::get(std::string_view key, std::string_view fn) const {
  if (Ref<Object> child = get_child(key)) return child;
  raise_no_child(key, fn);
}

void Dict::set(std::string_view key, Ref<Object> value, std::string_view fn) {
  if (!value) raise(Code::InvalidArgument, "{}: value is null", fn);
  check_edge_name(key, fn);
  Ref<Object> replaced;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    replaced = entries_.set(key, value);
  }
  notify_edge_created(std::string(key), *value);
}

void Dict::remove(std::string_view key, std::string_view fn) {
  Ref<Object> removed;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    removed = entries_.erase(key);
  }
  if (!removed) raise_no_child(key, fn);
}

}  // namespace cairn
