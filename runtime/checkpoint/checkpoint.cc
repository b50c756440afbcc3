#include "runtime/checkpoint/checkpoint.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "runtime/checkpoint/spare_buffers.h"
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
    opts.device = &ctx_->cpu();
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

// ---- RestoreCore ----

namespace {
std::atomic<int64_t> g_live_restores{0};
}  // namespace

int64_t live_restores() { return g_live_restores.load(); }

// Who holds it: the status (RestoreState), every object with a pending child edge (hold_edge_observer,
// TF's _deferred_dependencies), and every optimizer's pending slot restore. What it holds: the
// source and the matched variables (leaves, which hold nothing back). Every other live object it
// knows by address only, watched through on_object_destroyed: holding a parent that holds this
// state would be a cycle that nothing frees.
class RestoreCore : public EdgeObserver, public std::enable_shared_from_this<RestoreCore> {
 public:
  explicit RestoreCore(std::shared_ptr<ValueSource> source, Context& ctx);
  ~RestoreCore() override;

  void run(Object& root);
  void assert_consumed(Object& root) const;
  void assert_existing_objects_matched(Object& root) const;
  void expect_partial() { expect_partial_ = true; }
  void cancel_pending();

  void on_edge_created(Object& parent, const std::string& name, Object& child) override;
  void on_object_destroyed(const Object& object) override;

 private:
  // Remembers `live` as matched: variables by reference, other objects by address (watched).
  void remember(Object& live);
  void match(Object& live, uint32_t node, const std::string& live_path);
  void restore_values(Object& live, uint32_t node);
  // Restores a variable's value, into a spare buffer when there is one (SpareBuffers).
  void restore_variable(Variable& var, const std::string& key);
  // Tells spares_ the size of every variable value in the source.
  void expect_values();
  // Slots: once a slot owner's node and a variable's node are both matched (in either order),
  // the owner is asked to restore the slot now or when it creates it.
  void match_slots(Object& live, uint32_t node);
  void restore_slot(SlotOwner& owner, const SlotRef& ref);
  void restore_slot_value(Variable& slot, uint32_t slot_node);
  std::vector<std::string> unrestored_values() const;
  std::vector<std::string> unmatched_live(Object& root, bool values_only) const;
  // The dtype and shape of `key`; NotFound naming the source and the key when it has none.
  ValueInfo value_info(const std::string& key) const;

  std::shared_ptr<ValueSource> source_;
  Ref<Context> ctx_;                     // for the warning, which may come after every object is gone
  std::vector<std::string> node_paths_;  // first breadth-first path of each checkpoint node
  mutable std::recursive_mutex mu_;
  std::vector<bool> node_matched_;
  // Live object -> checkpoint node. Addresses stay unique: a dying object is erased
  // (on_object_destroyed) before its memory can be reused.
  std::unordered_map<const Object*, uint32_t> matched_;
  std::vector<Ref<Variable>> variables_;  // matched variables: they keep their identity and slots
  std::vector<Object*> node_live_;        // the first live object matched to each node (cleared when it dies)
  // Live objects the source declares to keep their own values (ValueSource::keeps_live_value).
  std::unordered_set<const Object*> kept_;
  // variable node -> (slot owner node, index into its slots), for every SlotRef in the file.
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, size_t>>> slots_by_variable_;
  // Deferred restores: (live parent, edge name) -> checkpoint node to match when the edge appears.
  // Every parent here holds this state (hold_edge_observer) until its list empties.
  std::unordered_map<Object*, std::vector<std::pair<std::string, uint32_t>>> pending_;
  bool cancelled_ = false;
  std::atomic<bool> expect_partial_{false};
  SpareBuffers spares_;  // only during run(): deferred restores allocate
};

RestoreCore::RestoreCore(std::shared_ptr<ValueSource> source, Context& ctx)
    : source_(std::move(source)), ctx_(Ref<Context>::share(&ctx)) {
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
  g_live_restores.fetch_add(1);
}

// The last holder is gone: whatever is unrestored now can never be restored (TF warns here too).
RestoreCore::~RestoreCore() {
  g_live_restores.fetch_sub(1);
  if (expect_partial_) return;
  try {
    std::vector<std::string> missing = unrestored_values();
    if (!missing.empty())
      ctx_->log().log(LogLevel::Warning,
                      fmt::format("checkpoint {}: {} value(s) were never restored: {} (call expect_partial to "
                                  "silence this)",
                                  source_->path(), missing.size(), join_names(missing)));
  } catch (...) {
  }
}

void RestoreCore::run(Object& root) {
  if (source_->graph().nodes.empty()) raise(Code::DataLoss, "{}: the object graph is empty", source_->path());
  std::lock_guard<std::recursive_mutex> lock(mu_);
  expect_values();
  try {
    match(root, 0, "");
  } catch (...) {
    spares_.clear();
    throw;
  }
  spares_.clear();
}

void RestoreCore::expect_values() {
  for (const Node& n : source_->graph().nodes)
    for (const Attribute& attr : n.attributes) {
      if (attr.name != kVariableValue) continue;
      std::optional<ValueInfo> info = source_->info(attr.key);
      if (!info || info->dtype == DType::String) continue;
      const int64_t elements = info->shape.num_elements();
      spares_.expect(info->dtype, elements, static_cast<size_t>(elements) * dtype_size(info->dtype));
    }
}

void RestoreCore::restore_variable(Variable& var, const std::string& key) {
  const ValueInfo info = value_info(key);
  if (info.dtype != var.dtype() || info.shape != var.shape())
    raise(Code::InvalidArgument, "restore: '{}' is {}{} in the checkpoint but {} is {}{}", key,
          dtype_name(info.dtype), info.shape.str(), var.describe(), dtype_name(var.dtype()), var.shape().str());
  Device& device = var.device();
  Tensor spare = spares_.take(var.dtype(), var.shape(), device);
  spares_.give(var.exchange(source_->load_reusing(key, device, std::move(spare)), key));
}

void RestoreCore::restore_values(Object& live, uint32_t node) {
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
    restore_variable(static_cast<Variable&>(live), attr.key);
  }
}

void RestoreCore::remember(Object& live) {
  if (live.kind() == ObjectKind::Variable)
    variables_.push_back(Ref<Variable>::share(static_cast<Variable*>(&live)));
  else
    live.add_edge_observer(shared_from_this());  // edges to come; on_object_destroyed erases its address
}

void RestoreCore::match(Object& live, uint32_t node, const std::string& live_path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto seen = matched_.find(&live);
  if (seen != matched_.end() && seen->second == node) return;  // shared object reached again
  node_matched_[node] = true;
  if (seen == matched_.end() && !kept_.count(&live)) remember(live);
  matched_[&live] = node;
  if (!node_live_[node]) node_live_[node] = &live;
  restore_values(live, node);
  match_slots(live, node);
  for (const Edge& e : live.children())
    if (source_->keeps_live_value(node, e.name) && kept_.insert(e.child.get()).second &&
        !matched_.count(e.child.get()))
      remember(*e.child);
  const Node& n = source_->graph().nodes[node];
  // remember() made this state an observer of `live` before it looks at the children below, so an
  // edge created meanwhile is not missed.
  for (const ChildEdge& e : n.children) {
    std::string child_path = live_path.empty() ? e.name : live_path + "/" + e.name;
    if (Ref<Object> child = live.get_child(e.name)) {
      match(*child, e.node_id, child_path);
    } else {
      auto [it, first] = pending_.try_emplace(&live);
      it->second.emplace_back(e.name, e.node_id);
      // The value waits on the object that will receive it, not on the checkpoint or the status.
      if (first) live.hold_edge_observer(shared_from_this());
    }
  }
}

void RestoreCore::match_slots(Object& live, uint32_t node) {
  const ObjectGraph& g = source_->graph();
  // `live` is a slot owner: the slots of its variables matched so far.
  if (auto* owner = dynamic_cast<SlotOwner*>(&live))
    for (const SlotRef& ref : g.nodes[node].slots) restore_slot(*owner, ref);
  // `live` is a variable: its slots in the owners matched so far (and still alive).
  auto it = slots_by_variable_.find(node);
  if (it == slots_by_variable_.end() || live.kind() != ObjectKind::Variable) return;
  for (const auto& [owner_node, index] : it->second)
    if (auto* owner = dynamic_cast<SlotOwner*>(node_live_[owner_node]))
      restore_slot(*owner, g.nodes[owner_node].slots[index]);
}

void RestoreCore::restore_slot(SlotOwner& owner, const SlotRef& ref) {
  Object* var = node_live_[ref.variable_node];
  if (!var || var->kind() != ObjectKind::Variable) return;  // matched later, or never
  // The optimizer holds this state until it creates the slot (TF's deferred slot restorations):
  // the restore outlives the checkpoint and the status. No cycle: the state does not hold the
  // optimizer, and the variable it holds does not hold the optimizer either.
  std::shared_ptr<RestoreCore> self = shared_from_this();
  uint32_t slot_node = ref.slot_node;
  owner.restore_slot(static_cast<Variable&>(*var), source_->slot_name(owner, ref.slot_name),
                     [self, slot_node](Variable& slot) { self->restore_slot_value(slot, slot_node); });
}

void RestoreCore::restore_slot_value(Variable& slot, uint32_t slot_node) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (cancelled_) return;
  restore_values(slot, slot_node);
  node_matched_[slot_node] = true;  // after the value: a failed restore still counts as unrestored
}

void RestoreCore::on_edge_created(Object& parent, const std::string& name, Object& child) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = pending_.find(&parent);
  if (it == pending_.end()) return;
  auto& edges = it->second;
  auto e = std::find_if(edges.begin(), edges.end(), [&](const auto& p) { return p.first == name; });
  if (e == edges.end()) return;
  uint32_t node = e->second;
  edges.erase(e);
  if (edges.empty()) {
    pending_.erase(it);
    // Nothing waits on `parent` any more. The caller (notify_edge_created) holds this state
    // meanwhile, so this is never the last reference.
    parent.release_edge_observer(this);
  }
  match(child, node, node_paths_[node]);
}

void RestoreCore::on_object_destroyed(const Object& object) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  matched_.erase(&object);
  kept_.erase(&object);
  // Its pending edges can never be created now; their values stay unrestored (and are reported).
  pending_.erase(const_cast<Object*>(&object));
  for (Object*& live : node_live_)
    if (live == &object) live = nullptr;
}

void RestoreCore::cancel_pending() {
  std::shared_ptr<RestoreCore> self = shared_from_this();  // a released hold may be the last but this
  std::lock_guard<std::recursive_mutex> lock(mu_);
  cancelled_ = true;
  // Under the lock, a waiting object that is dying blocks in on_object_destroyed, so it is whole.
  for (auto& [parent, edges] : pending_) parent->release_edge_observer(this);
  pending_.clear();
}

ValueInfo RestoreCore::value_info(const std::string& key) const {
  std::optional<ValueInfo> info = source_->info(key);
  if (!info) raise(Code::NotFound, "{}: no key named '{}'", source_->path(), key);
  return *info;
}

std::vector<std::string> RestoreCore::unrestored_values() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::vector<std::string> out;
  const ObjectGraph& g = source_->graph();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!node_matched_[i])
      for (const Attribute& a : g.nodes[i].attributes) out.push_back(a.key);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> RestoreCore::unmatched_live(Object& root, bool values_only) const {
  std::vector<PathedObject> live = breadth_first(root);
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

void RestoreCore::assert_consumed(Object& root) const {
  std::vector<std::string> values = unrestored_values();
  std::vector<std::string> live = unmatched_live(root, false);
  if (values.empty() && live.empty()) return;
  std::string msg = fmt::format("cairn_restore_status_assert_consumed: {}", source_->path());
  if (!values.empty()) msg += fmt::format("; checkpoint values not restored: {}", join_names(values));
  if (!live.empty()) msg += fmt::format("; live objects not matched: {}", join_names(live));
  throw Error(Code::FailedPrecondition, msg);
}

void RestoreCore::assert_existing_objects_matched(Object& root) const {
  std::vector<std::string> live = unmatched_live(root, true);
  if (live.empty()) return;
  raise(Code::FailedPrecondition,
        "cairn_restore_status_assert_existing_objects_matched: {}: live variables not matched: {}", source_->path(),
        join_names(live));
}

// ---- RestoreState ----

RestoreState::RestoreState(std::shared_ptr<ValueSource> source, Ref<Object> root)
    : root_(std::move(root)), core_(std::make_shared<RestoreCore>(std::move(source), root_->context())) {}

RestoreState::~RestoreState() = default;

void RestoreState::run() { core_->run(*root_); }
void RestoreState::assert_consumed() const { core_->assert_consumed(*root_); }
void RestoreState::assert_existing_objects_matched() const { core_->assert_existing_objects_matched(*root_); }
void RestoreState::expect_partial() { core_->expect_partial(); }
void RestoreState::cancel_pending() { core_->cancel_pending(); }

// ---- Checkpoint::restore (after RestoreCore, which it cancels) ----

std::shared_ptr<RestoreState> Checkpoint::restore(const std::string& path) {
  writer_.wait();  // before opening: an async save may be writing this very file
  if (is_shard_index(path)) {  // a sharded checkpoint: each value from the shard holding it
    auto sharded = ShardedReader::open(path);
    sharded->set_thread_pool(&ctx_->pool());
    return restore(sharded_source(std::move(sharded)));
  }
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
    // The caller gets the error, not a status: no "never restored" warning on top of it, and no
    // deferred restore of a restore that failed.
    state->expect_partial();
    state->cancel_pending();
    throw;
  }
  // A newer restore supersedes the older one's deferred restores (the objects let go of it).
  if (auto older = last_restore_.lock()) older->cancel_pending();
  last_restore_ = state->core();
  return state;
}

}  // namespace cairn::ckpt
