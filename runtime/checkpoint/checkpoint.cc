#include "runtime/checkpoint/checkpoint.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "runtime/core/version.h"
#include "runtime/track/containers.h"
#include "runtime/track/slots.h"
#include "runtime/track/walk.h"

namespace cairn::ckpt {

namespace {
constexpr const char* kVariableValue = "VARIABLE_VALUE";
constexpr const char* kSaveCounter = "save_counter";

// First breadth-first path of every node of a saved graph (for keys in messages).
std::vector<std::string> checkpoint_node_paths(const ObjectGraph& g) {
  std::vector<std::string> paths(g.nodes.size());
  std::vector<bool> seen(g.nodes.size(), false);
  std::deque<uint32_t> queue{0};
  if (!g.nodes.empty()) seen[0] = true;
  while (!queue.empty()) {
    uint32_t id = queue.front();
    queue.pop_front();
    for (const ChildEdge& e : g.nodes[id].children) {
      if (e.node_id >= g.nodes.size() || seen[e.node_id]) continue;
      seen[e.node_id] = true;
      paths[e.node_id] = paths[id].empty() ? e.name : paths[id] + "/" + e.name;
      queue.push_back(e.node_id);
    }
  }
  return paths;
}

// The key of an object's attribute `name` (Object::save_attributes): "<path>/.ATTRIBUTES/<name>".
std::string attribute_key(const std::string& path, const std::string& name) { return path + "/.ATTRIBUTES/" + name; }

std::string join_names(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}
}  // namespace

std::string variable_key(const std::string& path) { return attribute_key(path, kVariableValue); }

std::string slot_key(const std::string& variable_path, const std::string& owner_path, const std::string& slot_name) {
  return variable_key(fmt::format("{}/{}/{}/{}", variable_path, kOptimizerSlot, owner_path, slot_name));
}

namespace {
// TensorFlow's rule: the slots of every (slot owner, variable) pair the walk reached become extra
// nodes after the walk's own, each with its value, and SlotRefs on the owner's node. A slot whose
// variable or owner is not saved is not saved either.
void add_slot_nodes(const std::vector<PathedObject>& order, const std::unordered_map<const Object*, uint32_t>& ids,
                    Checkpoint::Snapshot& s) {
  for (size_t o = 0; o < order.size(); ++o) {
    auto* owner = dynamic_cast<SlotOwner*>(order[o].object.get());
    if (!owner) continue;
    const std::string owner_path = join_path(order[o].path);
    for (size_t v = 0; v < order.size(); ++v) {
      if (order[v].object->kind() != ObjectKind::Variable) continue;
      const auto& var = static_cast<const Variable&>(*order[v].object);
      for (auto& [name, slot] : owner->slots_for(var)) {
        // TensorFlow refuses this too: the slot's value would be saved under two keys.
        if (ids.count(slot.get()))
          raise(Code::FailedPrecondition,
                "checkpoint: slot '{}' of {} ({}) is also tracked as an object of the graph; slot variables "
                "cannot be tracked dependencies",
                name, var.describe(), slot->describe());
        std::string key = slot_key(join_path(order[v].path), owner_path, name);
        Node node;
        node.kind = static_cast<uint32_t>(ObjectKind::Variable);
        node.attributes.push_back({kVariableValue, key});
        auto slot_node = static_cast<uint32_t>(s.graph.nodes.size());
        s.graph.nodes.push_back(std::move(node));
        s.graph.nodes[o].slots.push_back({static_cast<uint32_t>(o), static_cast<uint32_t>(v), name, slot_node});
        s.entries.emplace_back(std::move(key), slot->read());
      }
    }
  }
}
}  // namespace

// ---- BackgroundWriter ----

BackgroundWriter::~BackgroundWriter() {
  if (thread_.joinable()) thread_.join();
}

void BackgroundWriter::start(std::function<void()> job) {
  wait();
  thread_ = std::thread([this, job = std::move(job)] {
    try {
      job();
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

void BackgroundWriter::join() {
  if (thread_.joinable()) thread_.join();
}

void BackgroundWriter::wait() {
  join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

// ---- Checkpoint ----

Checkpoint::Checkpoint(Context& ctx, const std::vector<std::pair<std::string, Ref<Object>>>& children)
    : ctx_(Ref<Context>::share(&ctx)), root_(Trackable::create(ctx)) {
  std::vector<std::pair<std::string, Ref<Object>>> sorted = children;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].first == sorted[i - 1].first)
      raise(Code::InvalidArgument, "cairn_checkpoint_create: child \"{}\" is given twice", sorted[i].first);
  for (auto& [name, obj] : sorted) {
    if (name == kSaveCounter) raise(Code::InvalidArgument, "cairn_checkpoint_create: \"save_counter\" is reserved");
    root_->set(name, obj, "cairn_checkpoint_create");
  }
}

Checkpoint::~Checkpoint() {
  try {
    writer_.wait();
  } catch (const std::exception& e) {
    ctx_->log().log(LogLevel::Error, fmt::format("checkpoint: a background save failed: {}", e.what()));
  }
}

Variable& Checkpoint::save_counter() {
  std::lock_guard<std::mutex> lock(counter_mu_);
  if (!save_counter_) {
    Tensor zero = Tensor::allocate(ctx_->cpu(), DType::Int64, Shape{});
    *zero.mutable_data<int64_t>() = 0;
    VariableOptions opts;
    opts.name = kSaveCounter;
    opts.trainable = false;
    save_counter_ = Variable::create(*ctx_, zero, opts);
    root_->set(kSaveCounter, save_counter_, "checkpoint");
  }
  return *save_counter_;
}

int64_t Checkpoint::save_counter_value() {
  Tensor t = save_counter().read();
  int64_t v = 0;
  t.device()->read(*t.buffer(), &v, sizeof v);
  return v;
}

int64_t Checkpoint::increment_save_counter(std::string_view fn) {
  Tensor one = Tensor::allocate(ctx_->cpu(), DType::Int64, Shape{});
  *one.mutable_data<int64_t>() = 1;
  save_counter().assign_add(one, fn);
  return save_counter_value();
}

Checkpoint::Snapshot Checkpoint::snapshot() {
  save_counter();
  Snapshot s;
  std::vector<std::vector<Edge>> edges;
  std::vector<PathedObject> order = breadth_first(*root_, &edges);
  std::unordered_map<const Object*, uint32_t> ids;
  for (size_t i = 0; i < order.size(); ++i) ids.emplace(order[i].object.get(), static_cast<uint32_t>(i));
  s.graph.nodes.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Object& obj = *order[i].object;
    Node& node = s.graph.nodes[i];
    node.kind = static_cast<uint32_t>(obj.kind());
    if (obj.kind() == ObjectKind::List && static_cast<const List&>(obj).non_append_mutation())
      raise(Code::FailedPrecondition,
            "checkpoint: the list at '{}' had an element replaced or removed; only append-only lists can be saved "
            "(restore-on-create relies on it, as in TensorFlow)",
            join_path(order[i].path));
    // Every child the walk saw has an id: the edges are the walk's own snapshot.
    for (const Edge& e : edges[i]) node.children.push_back({e.name, ids.at(e.child.get())});
    if (obj.kind() == ObjectKind::Variable) {
      std::string key = variable_key(join_path(order[i].path));
      node.attributes.push_back({kVariableValue, key});
      s.entries.emplace_back(key, static_cast<Variable&>(obj).read());
    }
    // Other objects' own values (an iterator's ITERATOR_STATE), under "<path>/.ATTRIBUTES/<name>".
    for (auto& [name, value] : obj.save_attributes()) {
      if (name.empty() || name.find('/') != std::string::npos || name == kVariableValue)
        raise(Code::Internal, "checkpoint: {} at '{}' saves an attribute with the bad name \"{}\"", obj.describe(),
              join_path(order[i].path), name);
      std::string key = attribute_key(join_path(order[i].path), name);
      node.attributes.push_back({name, key});
      s.entries.emplace_back(std::move(key), std::move(value));
    }
  }
  add_slot_nodes(order, ids, s);
  s.metadata.save_counter = save_counter_value();
  s.metadata.library_version = kVersionString;
  return s;
}

void Checkpoint::write_snapshot(const Snapshot& s, const std::string& path) const {
  WriteOptions wo;
  wo.compress = options_.compress;
  wo.fsync = options_.fsync;
  // A synchronous save shares out compression and hashing to the context's threads (the bytes are
  // the same). A background save leaves them to the ops it runs beside: it would hold the pool
  // for the whole save, and those ops would run on one thread meanwhile.
  if (!options_.async) wo.pool = &ctx_->pool();
  write_checkpoint(path, s.graph, s.entries, s.metadata, wo);
}

void Checkpoint::write(const std::string& path) {
  if (path.empty()) raise(Code::InvalidArgument, "cairn_checkpoint_write: path is empty");
  writer_.wait();  // an earlier background failure surfaces here
  if (!options_.async) {
    write_snapshot(snapshot(), path);
    return;
  }
  // Tensors are immutable, so the snapshot already holds the values as they are now.
  auto snap = std::make_shared<Snapshot>(snapshot());
  writer_.start([this, snap, path] { write_snapshot(*snap, path); });
}

std::string Checkpoint::save(const std::string& prefix) {
  if (prefix.empty()) raise(Code::InvalidArgument, "cairn_checkpoint_save: prefix is empty");
  writer_.wait();
  std::string path = prefix + "-" + std::to_string(increment_save_counter("cairn_checkpoint_save"));
  write(path);
  return path;
}

std::shared_ptr<RestoreState> Checkpoint::restore(const std::string& path) {
  writer_.wait();  // before opening: an async save may be writing this very file
  auto reader = std::make_shared<Reader>(Reader::open(path));
  reader->set_thread_pool(&ctx_->pool());  // large values are read and hashed on its threads
  return restore(reader_source(std::move(reader)));
}

std::shared_ptr<RestoreState> Checkpoint::restore(std::shared_ptr<ValueSource> source) {
  writer_.wait();
  save_counter();
  auto state = std::make_shared<RestoreState>(std::move(source), root_);
  try {
    state->run();
  } catch (...) {
    // The caller gets the error, not a status: no "never restored" warning on top of it.
    state->expect_partial();
    throw;
  }
  // A newer restore supersedes older ones for deferred restores held by this checkpoint.
  restores_.assign(1, state);
  return state;
}

// ---- RestoreState ----

RestoreState::RestoreState(std::shared_ptr<ValueSource> source, Ref<Object> root)
    : source_(std::move(source)), root_(std::move(root)) {
  const ObjectGraph& g = source_->graph();
  // Node 0 is the root every match starts from; a container without one (an exported function
  // file) is not a checkpoint.
  if (g.nodes.empty())
    raise(Code::DataLoss, "{}: the object graph has no root node; this file is not a checkpoint", source_->path());
  node_paths_ = checkpoint_node_paths(g);
  node_matched_.assign(g.nodes.size(), false);
  node_live_.assign(g.nodes.size(), nullptr);
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (size_t r = 0; r < g.nodes[i].slots.size(); ++r)
      slots_by_variable_[g.nodes[i].slots[r].variable_node].emplace_back(i, r);
}

RestoreState::~RestoreState() {
  if (expect_partial_) return;
  try {
    std::vector<std::string> missing = unrestored_values();
    if (!missing.empty())
      root_->context().log().log(
          LogLevel::Warning,
          fmt::format("checkpoint {}: {} value(s) were never restored: {} (call expect_partial to silence this)",
                      source_->path(), missing.size(), join_names(missing)));
  } catch (...) {
  }
}

void RestoreState::run() {
  if (source_->graph().nodes.empty()) raise(Code::DataLoss, "{}: the object graph is empty", source_->path());
  match(*root_, 0, "");
}

void RestoreState::restore_values(Object& live, uint32_t node) {
  for (const Attribute& attr : source_->graph().nodes[node].attributes) {
    if (attr.name != kVariableValue) {
      // An object's own attribute (an iterator's state): the live object must take it.
      if (!live.restore_attribute(attr.name, source_->load(attr.key, live.context().cpu())))
        raise(Code::InvalidArgument, "restore: '{}' holds a {} attribute in the checkpoint, but the live object is a {}",
              attr.key, attr.name, live.describe());
      continue;
    }
    if (live.kind() != ObjectKind::Variable)
      raise(Code::InvalidArgument, "restore: '{}' holds a variable value in the checkpoint, but the live object is a {}",
            attr.key, live.describe());
    auto& var = static_cast<Variable&>(live);
    const ValueInfo info = value_info(attr.key);
    if (info.dtype != var.dtype() || info.shape != var.shape())
      raise(Code::InvalidArgument, "restore: '{}' is {}{} in the checkpoint but {} is {}{}", attr.key,
            dtype_name(info.dtype), info.shape.str(), var.describe(), dtype_name(var.dtype()), var.shape().str());
    var.assign(source_->load(attr.key, var.device()), attr.key);
  }
}

void RestoreState::match(Object& live, uint32_t node, const std::string& live_path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto seen = matched_.find(&live);
  if (seen != matched_.end() && seen->second == node) return;  // shared object reached again
  node_matched_[node] = true;
  matched_[&live] = node;
  matched_refs_.push_back(Ref<Object>::share(&live));
  if (!node_live_[node]) node_live_[node] = &live;
  restore_values(live, node);
  match_slots(live, node);
  for (const Edge& e : live.children())
    if (source_->keeps_live_value(node, e.name) && kept_.insert(e.child.get()).second)
      matched_refs_.push_back(e.child);
  const Node& n = source_->graph().nodes[node];
  if (n.children.empty()) return;
  // Observe before looking at the children, so an edge created meanwhile is not missed.
  live.add_edge_observer(shared_from_this());
  for (const ChildEdge& e : n.children) {
    std::string child_path = live_path.empty() ? e.name : live_path + "/" + e.name;
    if (Ref<Object> child = live.get_child(e.name)) {
      match(*child, e.node_id, child_path);
    } else {
      pending_[&live].emplace_back(e.name, e.node_id);
    }
  }
}

void RestoreState::match_slots(Object& live, uint32_t node) {
  const ObjectGraph& g = source_->graph();
  // `live` is a slot owner: the slots of its variables matched so far.
  if (auto* owner = dynamic_cast<SlotOwner*>(&live))
    for (const SlotRef& ref : g.nodes[node].slots) restore_slot(*owner, ref);
  // `live` is a variable: its slots in the owners matched so far.
  auto it = slots_by_variable_.find(node);
  if (it == slots_by_variable_.end() || live.kind() != ObjectKind::Variable) return;
  for (const auto& [owner_node, index] : it->second)
    if (auto* owner = dynamic_cast<SlotOwner*>(node_live_[owner_node]))
      restore_slot(*owner, g.nodes[owner_node].slots[index]);
}

void RestoreState::restore_slot(SlotOwner& owner, const SlotRef& ref) {
  Object* var = node_live_[ref.variable_node];
  if (!var || var->kind() != ObjectKind::Variable) return;  // matched later, or never
  // Weak: an optimizer holding a pending restore must not keep this state (and the objects it
  // matched) alive; like deferred edges, pending slots restore while the state lives.
  std::weak_ptr<RestoreState> self = weak_from_this();
  uint32_t slot_node = ref.slot_node;
  owner.restore_slot(static_cast<Variable&>(*var), source_->slot_name(owner, ref.slot_name),
                     [self, slot_node](Variable& slot) {
    if (auto state = self.lock()) state->restore_slot_value(slot, slot_node);
  });
}

void RestoreState::restore_slot_value(Variable& slot, uint32_t slot_node) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  restore_values(slot, slot_node);
  node_matched_[slot_node] = true;  // after the value: a failed restore still counts as unrestored
}

void RestoreState::on_edge_created(Object& parent, const std::string& name, Object& child) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = pending_.find(&parent);
  if (it == pending_.end()) return;
  auto& edges = it->second;
  auto e = std::find_if(edges.begin(), edges.end(), [&](const auto& p) { return p.first == name; });
  if (e == edges.end()) return;
  uint32_t node = e->second;
  edges.erase(e);
  if (edges.empty()) pending_.erase(it);
  match(child, node, node_paths_[node]);
}

ValueInfo RestoreState::value_info(const std::string& key) const {
  std::optional<ValueInfo> info = source_->info(key);
  if (!info) raise(Code::NotFound, "{}: no key named '{}'", source_->path(), key);
  return *info;
}

std::vector<std::string> RestoreState::unrestored_values() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::vector<std::string> out;
  const ObjectGraph& g = source_->graph();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!node_matched_[i])
      for (const Attribute& a : g.nodes[i].attributes) out.push_back(a.key);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> RestoreState::unmatched_live(bool values_only) const {
  std::vector<PathedObject> live = breadth_first(*root_);
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const PathedObject& p : live) {
    ObjectKind k = p.object->kind();
    if (values_only && k != ObjectKind::Variable) continue;
    // An empty list or dict holds nothing to restore (TensorFlow skips empty data structures).
    if ((k == ObjectKind::List || k == ObjectKind::Dict) && p.object->num_children() == 0) continue;
    if (matched_.count(p.object.get()) || kept_.count(p.object.get())) continue;
    out.push_back(p.path.empty() ? "(root)" : join_path(p.path));
  }
  return out;
}

void RestoreState::assert_consumed() const {
  std::vector<std::string> values = unrestored_values();
  std::vector<std::string> live = unmatched_live(false);
  if (values.empty() && live.empty()) return;
  std::string msg = fmt::format("cairn_restore_status_assert_consumed: {}", source_->path());
  if (!values.empty()) msg += fmt::format("; checkpoint values not restored: {}", join_names(values));
  if (!live.empty()) msg += fmt::format("; live objects not matched: {}", join_names(live));
  throw Error(Code::FailedPrecondition, msg);
}

void RestoreState::assert_existing_objects_matched() const {
  std::vector<std::string> live = unmatched_live(true);
  if (live.empty()) return;
  raise(Code::FailedPrecondition,
        "cairn_restore_status_assert_existing_objects_matched: {}: live variables not matched: {}", source_->path(),
        join_names(live));
}

}  // namespace cairn::ckpt
