// Lists and dicts of objects (TensorFlow's ListWrapper and DictWrapper): containers whose elements
// are tracked edges named by index ("0", "1", ...) or by key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/track/object.h"

namespace cairn {

class List final : public Object {
 public:
  static Ref<List> create(Context& ctx);
  explicit List(Context& ctx) : Object(ObjectKind::List, ctx) {}

  size_t size() const;
  // Appends `item` as edge "<old size>" and notifies the edge observers.
  void append(Ref<Object> item, std::string_view fn = "List::append");
  // Throws OutOfRange for i >= size().
  Ref<Object> at(size_t i, std::string_view fn = "List::at") const;
  // Replaces element i (i < size()) and notifies the edge observers.
  void set_at(size_t i, Ref<Object> item, std::string_view fn = "List::set_at");
  // Removes element i; later elements move down one index (their edge names change).
  void remove_at(size_t i, std::string_view fn = "List::remove_at");
  // True once an element was replaced or removed. TensorFlow refuses to checkpoint such lists,
  // because restore-on-create assumes append-only lists; the checkpoint writer may do the same.
  bool non_append_mutation() const;

  std::vector<Edge> children() const override;
  size_t num_children() const override { return size(); }
  Ref<Object> get_child(std::string_view name) const override;

  // By index name: "0", "1", ... (canonical decimal, no sign or leading zeros).
  Ref<Object> get(std::string_view name, std::string_view fn = "List::get") const override;
  void set(std::string_view name, Ref<Object> item, std::string_view fn = "List::set") override;
  void remove(std::string_view name, std::string_view fn = "List::remove") override;

  // Parses a canonical index name; nullopt for anything else.
  static std::optional<size_t> parse_index(std::string_view name);

 private:
  size_t index_or_throw(std::string_view name, std::string_view fn) const;
  [[noreturn]] void raise_out_of_range(size_t i, size_t size, std::string_view fn) const;

  std::vector<Ref<Object>> items_;
  bool non_append_mutation_ = false;
};

class Dict final : public Object {
 public:
  static Ref<Dict> create(Context& ctx);
  explicit Dict(Context& ctx) : Object(ObjectKind::Dict, ctx) {}

  size_t size() const { return num_children(); }

  // Keys in insertion order; a replaced key keeps its position.
  std::vector<Edge> children() const override;
  size_t num_children() const override;
  Ref<Object> get_child(std::string_view key) const override;

  Ref<Object> get(std::string_view key, std::string_view fn = "Dict::get") const override;
  // Inserts or replaces `key` and notifies the edge observers.
  void set(std::string_view key, Ref<Object> value, std::string_view fn = "Dict::set") override;
  void remove(std::string_view key, std::string_view fn = "Dict::remove") override;

 private:
  NamedEdges entries_;
};

}  // namespace cairn
