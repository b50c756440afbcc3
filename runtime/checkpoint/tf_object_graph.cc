#include "runtime/checkpoint/tf_object_graph.h"

#include <cstdint>
#include <algorithm>
#include <deque>
#include <map>

#include "runtime/core/error.h"
#include "runtime/track/walk.h"

namespace cairn::tfckpt {

namespace {

// Field numbers (trackable_object_graph.proto).
constexpr uint32_t kGraphNodes = 1;
constexpr uint32_t kObjChildren = 1, kObjAttributes = 2, kObjSlots = 3, kObjRegisteredSaver = 4, kObjHasValues = 5;
constexpr uint32_t kRefNodeId = 1, kRefLocalName = 2;
constexpr uint32_t kTensorName = 1, kTensorFullName = 2, kTensorKey = 3;
constexpr uint32_t kSlotVariable = 1, kSlotName = 2, kSlotNode = 3;
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5;

// One field of a message: a varint value or a length-delimited payload.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;
  std::string_view bytes;
};

// Walks the fields of one message; every malformed encoding raises DataLoss naming `what`.
class WireReader {
 public:
  WireReader(std::string_view data, const std::string& what) : p_(data.data()), end_(data.data() + data.size()), what_(what) {}
  bool next(Field& f) {
    if (p_ == end_) return false;
    uint64_t tag = varint();
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7);
    if (f.number == 0 || (tag >> 3) > 0x1fffffff) fail("invalid field number");
    switch (f.wire) {
      case kVarint: f.value = varint(); break;
      case kFixed64: skip(8); break;
      case kFixed32: skip(4); break;
      case kLen: {
        uint64_t n = varint();
        if (n > static_cast<uint64_t>(end_ - p_)) fail("a length runs past the end");
        f.bytes = std::string_view(p_, n);
        p_ += n;
        break;
      }
      default: fail("invalid wire type");
    }
    return true;
  }
  [[noreturn]] void fail(const char* why) const { raise(Code::DataLoss, "{}: {}", what_, why); }

 private:
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) fail("truncated varint");
      auto b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  void skip(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) fail("truncated fixed-width field");
    p_ += n;
  }
  const char* p_;
  const char* end_;
  const std::string& what_;
};

// A node id field: int32 on the wire (negative ids are 10-byte varints), range-checked later.
int64_t node_id(const Field& f, const WireReader& r) {
  if (f.wire != kVarint) r.fail("a node id is not a varint");
  return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(f.value)));
}

std::string_view len_field(const Field& f, const WireReader& r) {
  if (f.wire != kLen) r.fail("a string or message field is not length-delimited");
  return f.bytes;
}

struct RawSlot {
  int64_t variable = 0, slot = 0;
  std::string name;
};

}  // namespace

TfObjectGraph parse_trackable_object_graph(std::string_view bytes, std::string_view what) {
  TfObjectGraph out;
  std::vector<std::vector<std::pair<int64_t, std::string>>> children;
  std::vector<std::vector<RawSlot>> slots;
  const std::string top = std::string(what);
  WireReader graph(bytes, top);
  Field f;
  while (graph.next(f)) {
    if (f.number != kGraphNodes) continue;  // unknown fields are skipped, as protobuf does
    const size_t id = out.graph.nodes.size();
    const std::string node_what = fmt::format("{}: node {}", what, id);
    WireReader obj(len_field(f, graph), node_what);
    ckpt::Node node;
    std::vector<std::string> full_names;
    children.emplace_back();
    slots.emplace_back();
    Field g;
    while (obj.next(g)) {
      if (g.number == kObjChildren) {
        WireReader ref(len_field(g, obj), node_what);
        std::pair<int64_t, std::string> edge{0, {}};
        Field h;
        while (ref.next(h)) {
          if (h.number == kRefNodeId) edge.first = node_id(h, ref);
          if (h.number == kRefLocalName) edge.second = std::string(len_field(h, ref));
        }
        children.back().push_back(std::move(edge));
      } else if (g.number == kObjAttributes) {
        WireReader t(len_field(g, obj), node_what);
        ckpt::Attribute a;
        std::string full_name;
        Field h;
        while (t.next(h)) {
          if (h.number == kTensorName) a.name = std::string(len_field(h, t));
          if (h.number == kTensorFullName) full_name = std::string(len_field(h, t));
          if (h.number == kTensorKey) a.key = std::string(len_field(h, t));
        }
        if (a.name.empty() || a.key.empty()) obj.fail("an attribute without a name or a checkpoint key");
        node.attributes.push_back(std::move(a));
        full_names.push_back(std::move(full_name));
      } else if (g.number == kObjSlots) {
        WireReader s(len_field(g, obj), node_what);
        RawSlot raw;
        Field h;
        while (s.next(h)) {
          if (h.number == kSlotVariable) raw.variable = node_id(h, s);
          if (h.number == kSlotName) raw.name = std::string(len_field(h, s));
          if (h.number == kSlotNode) raw.slot = node_id(h, s);
        }
        if (raw.name.empty()) obj.fail("a slot variable without a slot name");
        slots.back().push_back(std::move(raw));
      } else if (g.number == kObjRegisteredSaver) {
        obj.fail("the object is saved by a registered saver, which Cairn does not have");
      }
    }
    out.graph.nodes.push_back(std::move(node));
    out.full_names.push_back(std::move(full_names));
  }
  const size_t n = out.graph.nodes.size();
  if (n == 0) raise(Code::DataLoss, "{}: the object graph has no nodes", what);
  auto check = [&](int64_t id, size_t node, const char* role) {
    if (id < 0 || static_cast<uint64_t>(id) >= n)
      raise(Code::DataLoss, "{}: node {} refers to {} node {}, but the graph has {} nodes", what, node, role, id, n);
    return static_cast<uint32_t>(id);
  };
  for (size_t i = 0; i < n; ++i) {
    for (auto& [id, name] : children[i])
      out.graph.nodes[i].children.push_back({std::move(name), check(id, i, "child")});
    for (RawSlot& s : slots[i])
      out.graph.nodes[i].slots.push_back(
          {static_cast<uint32_t>(i), check(s.variable, i, "slotted variable"), std::move(s.name), check(s.slot, i, "slot")});
  }
  return out;
}

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, uint32_t number, uint32_t wire) { put_varint(out, (uint64_t{number} << 3) | wire); }
void put_bytes(std::string& out, uint32_t number, std::string_view bytes) {
  put_tag(out, number, kLen);
  put_varint(out, bytes.size());
  out.append(bytes);
}
// proto3 leaves out fields at their default (0 and ""), as TensorFlow's serializer does.
void put_uint(std::string& out, uint32_t number, uint64_t v) {
  if (v == 0) return;
  put_tag(out, number, kVarint);
  put_varint(out, v);
}
void put_string(std::string& out, uint32_t number, std::string_view s) {
  if (!s.empty()) put_bytes(out, number, s);
}

// Whether each node, a node below it or one of its slots holds a value (fixed point over cycles).
std::vector<bool> nodes_with_values(const ckpt::ObjectGraph& g) {
  std::vector<bool> has(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) has[i] = !g.nodes[i].attributes.empty() || !g.nodes[i].slots.empty();
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (has[i]) continue;
      for (const ckpt::ChildEdge& e : g.nodes[i].children)
        if (has[e.node_id]) {
          has[i] = changed = true;
          break;
        }
    }
  }
  return has;
}

}  // namespace

std::string serialize_trackable_object_graph(const TfObjectGraph& tg) {
  const ckpt::ObjectGraph& g = tg.graph;
  ckpt::validate_object_graph(g, "serialize_trackable_object_graph");
  std::vector<bool> has = nodes_with_values(g);
  std::string out, node, part;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ckpt::Node& n = g.nodes[i];
    node.clear();
    for (const ckpt::ChildEdge& e : n.children) {
      part.clear();
      put_uint(part, kRefNodeId, e.node_id);
      put_string(part, kRefLocalName, e.name);
      put_bytes(node, kObjChildren, part);
    }
    for (size_t a = 0; a < n.attributes.size(); ++a) {
      part.clear();
      put_string(part, kTensorName, n.attributes[a].name);
      if (i < tg.full_names.size() && a < tg.full_names[i].size()) put_string(part, kTensorFullName, tg.full_names[i][a]);
      put_string(part, kTensorKey, n.attributes[a].key);
      put_bytes(node, kObjAttributes, part);
    }
    for (const ckpt::SlotRef& s : n.slots) {
      part.clear();
      put_uint(part, kSlotVariable, s.variable_node);
      put_string(part, kSlotName, s.slot_name);
      put_uint(part, kSlotNode, s.slot_node);
      put_bytes(node, kObjSlots, part);
    }
    part.clear();
    put_uint(part, 1, has[i] ? 1 : 0);
    put_bytes(node, kObjHasValues, part);
    put_bytes(out, kGraphNodes, node);
  }
  return out;
}

namespace {

class TfGraphSource final : public ckpt::ValueSource {
 public:
  TfGraphSource(TfObjectGraph graph, std::shared_ptr<ckpt::ValueSource> values, const TfRestoreOptions& options)
      : graph_(std::move(graph.graph)), values_(std::move(values)), keras_(options.keras_names) {
    if (keras_)
      mapping_ = map_keras_graph(graph_, [this](const std::string& key) -> std::optional<Shape> {
        std::optional<ckpt::ValueInfo> info = values_->info(key);
        return info ? std::optional<Shape>(info->shape) : std::nullopt;
      });
    root_has_save_counter_ = false;
    for (const ckpt::ChildEdge& e : graph_.nodes[0].children) root_has_save_counter_ |= e.name == "save_counter";
  }
  const std::string& path() const override { return values_->path(); }
  const ckpt::ObjectGraph& graph() const override { return graph_; }
  std::optional<ckpt::ValueInfo> info(std::string_view key) const override { return values_->info(key); }
  Tensor load(std::string_view key, Device& device) const override { return values_->load(key, device); }
  std::string slot_name(const SlotOwner& owner, const std::string& stored) const override {
    return keras_ ? cairn_slot_name(owner, stored) : stored;
  }
  bool keeps_live_value(uint32_t node, std::string_view edge) const override {
    if (node == 0 && edge == "save_counter" && !root_has_save_counter_) return true;
    return keras_ && keras_keeps_live_value(mapping_, node, edge);
  }

 private:
  ckpt::ObjectGraph graph_;
  std::shared_ptr<ckpt::ValueSource> values_;
  bool keras_;
  KerasMapping mapping_;
  bool root_has_save_counter_ = false;
};

}  // namespace

std::shared_ptr<ckpt::ValueSource> tf_graph_source(TfObjectGraph graph, std::shared_ptr<ckpt::ValueSource> values,
                                                   const TfRestoreOptions& options) {
  if (graph.graph.nodes.empty()) raise(Code::DataLoss, "{}: the object graph has no nodes", values->path());
  return std::make_shared<TfGraphSource>(std::move(graph), std::move(values), options);
}

std::string escape_local_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '.')
      out += "..";
    else if (c == '/')
      out += ".S";
    else
      out.push_back(c);
  }
  return out;
}

namespace {

// Keeps the nodes reachable from the root (children breadth-first, then slot nodes in the order
// their SlotRefs are met), renumbered in that order as TensorFlow numbers them, and names every
// value by the first path that reaches it. `values[node][i]` is the value of attribute i.
TfSnapshot prune_and_name(const ckpt::ObjectGraph& g, const std::vector<std::vector<Tensor>>& values,
                          const std::vector<std::vector<std::string>>& full_names) {
  const size_t n = g.nodes.size();
  std::vector<int64_t> new_id(n, -1);
  std::vector<uint32_t> order;
  std::vector<std::string> path(n);
  auto visit = [&](uint32_t id, std::string p) {
    if (new_id[id] >= 0) return;
    new_id[id] = static_cast<int64_t>(order.size());
    order.push_back(id);
    path[id] = std::move(p);
  };
  visit(0, "");
  for (size_t i = 0; i < order.size(); ++i)
    for (const ckpt::ChildEdge& e : g.nodes[order[i]].children) {
      const std::string& base = path[order[i]];
      visit(e.node_id, base.empty() ? escape_local_name(e.name) : base + "/" + escape_local_name(e.name));
    }
  // Slots whose variable and owner are both saved, after the walk's nodes (TensorFlow's rule).
  std::map<uint32_t, std::string> slot_path;
  for (size_t i = 0, walked = order.size(); i < walked; ++i)
    for (const ckpt::SlotRef& r : g.nodes[order[i]].slots) {
      if (new_id[r.variable_node] < 0 || new_id[r.slot_node] >= 0) continue;
      const std::string p = path[r.variable_node] + "/" + ckpt::kOptimizerSlot + "/" + path[order[i]] + "/" +
                            escape_local_name(r.slot_name);
      visit(r.slot_node, p);
    }
  TfSnapshot out;
  out.graph.graph.nodes.resize(order.size());
  out.graph.full_names.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const ckpt::Node& old = g.nodes[order[i]];
    ckpt::Node& node = out.graph.graph.nodes[i];
    for (const ckpt::ChildEdge& e : old.children) node.children.push_back({e.name, static_cast<uint32_t>(new_id[e.node_id])});
    for (const ckpt::SlotRef& r : old.slots)
      if (new_id[r.variable_node] >= 0 && new_id[r.slot_node] >= 0)
        node.slots.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(new_id[r.variable_node]), r.slot_name,
                              static_cast<uint32_t>(new_id[r.slot_node])});
    for (size_t a = 0; a < old.attributes.size(); ++a) {
      std::string key = path[order[i]] + "/.ATTRIBUTES/" + old.attributes[a].name;
      node.attributes.push_back({old.attributes[a].name, key});
      out.graph.full_names[i].push_back(order[i] < full_names.size() && a < full_names[order[i]].size()
                                            ? full_names[order[i]][a]
                                            : std::string());
      out.values.emplace_back(std::move(key), values[order[i]][a]);
    }
  }
  std::sort(out.values.begin(), out.values.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

TfSnapshot tf_snapshot(ckpt::Checkpoint& c, const TfSaveOptions& options) {
  ckpt::Checkpoint::Snapshot s = c.snapshot();
  std::vector<Ref<Object>> objects;
  for (PathedObject& p : breadth_first(c.root())) objects.push_back(std::move(p.object));
  // The walk above must be the snapshot's: node i is objects[i] for the walk's nodes.
  bool same = objects.size() <= s.graph.nodes.size();
  for (size_t i = 0; same && i < objects.size(); ++i)
    same = s.graph.nodes[i].kind == static_cast<uint32_t>(objects[i]->kind()) &&
           s.graph.nodes[i].children.size() == objects[i]->num_children();
  if (!same)
    raise(Code::FailedPrecondition, "tf_snapshot: the object graph changed while it was being saved; save again");
  std::map<std::string, Tensor> by_key;
  for (ckpt::SaveEntry& e : s.entries) by_key.emplace(e.key, std::move(e.tensor));
  std::vector<std::vector<Tensor>> values(s.graph.nodes.size());
  std::vector<std::vector<std::string>> full_names(s.graph.nodes.size());
  for (size_t i = 0; i < s.graph.nodes.size(); ++i)
    for (const ckpt::Attribute& a : s.graph.nodes[i].attributes) {
      values[i].push_back(by_key.at(a.key));
      std::string name;
      if (i < objects.size() && objects[i]->kind() == ObjectKind::Variable) {
        name = static_cast<const Variable&>(*objects[i]).name();
        if (size_t colon = name.rfind(':'); colon != std::string::npos) name.resize(colon);
      }
      full_names[i].push_back(std::move(name));
    }
  ckpt::ObjectGraph& g = s.graph;
  if (!options.save_counter) {
    auto& root = g.nodes[0].children;
    root.erase(std::remove_if(root.begin(), root.end(), [](const ckpt::ChildEdge& e) { return e.name == "save_counter"; }),
               root.end());
  }
  if (options.keras_names) to_keras_graph(g, objects);
  values.resize(g.nodes.size());  // nodes the Keras layout added hold no values
  return prune_and_name(g, values, full_names);
}

}  // namespace cairn::tfckpt
