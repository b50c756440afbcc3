#include "runtime/checkpoint/keras_names.h"

#include <algorithm>
#include <map>

#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"

namespace cairn::tfckpt {

namespace {

constexpr const char* kVariableValue = "VARIABLE_VALUE";

// Keras' optimizer slot lists (keras/src/optimizers/*.py and tf_keras' new optimizers), each a list
// parallel to the optimizer's trainable variables, and the Cairn slot each holds per kind.
struct SlotList {
  optim::Kind kind;
  const char* slot;  // Cairn's name (Optimizer::slot_names)
  const char* list;  // Keras' attribute
};
constexpr SlotList kSlotLists[] = {
    {optim::Kind::Adam, "m", "_momentums"},          {optim::Kind::Adam, "v", "_velocities"},
    {optim::Kind::AdamW, "m", "_momentums"},         {optim::Kind::AdamW, "v", "_velocities"},
    {optim::Kind::SGD, "momentum", "_momentums"},    {optim::Kind::RMSprop, "rms", "_velocities"},
    {optim::Kind::RMSprop, "momentum", "_momentums"}, {optim::Kind::RMSprop, "mg", "_average_gradients"},
};

bool is_keras_slot_list(std::string_view name) {
  for (const SlotList& s : kSlotLists)
    if (name == s.list) return true;
  return false;
}
// Keras optimizer edges with no Cairn counterpart to match: bookkeeping lists whose variables are
// reached through other edges, and the slot lists turned into SlotRefs.
const std::set<std::string>& keras_optimizer_internal() {
  static const std::set<std::string> edges{"_variables", "_trainable_variables", "_trainable_variables_indices",
                                           "_index_dict"};
  return edges;
}

const ckpt::ChildEdge* find_edge(const ckpt::Node& n, std::string_view name) {
  for (const ckpt::ChildEdge& e : n.children)
    if (e.name == name) return &e;
  return nullptr;
}

void rename_edge(ckpt::Node& n, std::string_view from, const std::string& to) {
  if (find_edge(n, to)) return;  // never two edges of one name
  for (ckpt::ChildEdge& e : n.children)
    if (e.name == from) e.name = to;
}

void drop_edges(ckpt::Node& n, const std::function<bool(const std::string&)>& drop) {
  n.children.erase(std::remove_if(n.children.begin(), n.children.end(), [&](const ckpt::ChildEdge& e) { return drop(e.name); }),
                   n.children.end());
}

// The children "0", "1", ... of a list node, in index order, up to the first gap.
std::vector<uint32_t> list_items(const ckpt::Node& list) {
  std::vector<uint32_t> out;
  while (const ckpt::ChildEdge* e = find_edge(list, std::to_string(out.size()))) out.push_back(e->node_id);
  return out;
}

const ckpt::Attribute* variable_value(const ckpt::Node& n) {
  for (const ckpt::Attribute& a : n.attributes)
    if (a.name == kVariableValue) return &a;
  return nullptr;
}

bool is_empty(const ckpt::Node& n) { return n.children.empty() && n.attributes.empty() && n.slots.empty(); }

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Keras 3 layers keep some weights in private attributes (Dense's and Conv's "_kernel" for LoRA,
// Embedding's "_embeddings"); Cairn's edges carry the public names.
void map_keras3_layer(ckpt::Node& layer) {
  rename_edge(layer, "_kernel", "kernel");
  rename_edge(layer, "_embeddings", "embeddings");
}

// Keras 3 Sequential: "_functional/_operations" holds the InputLayer (no values, no edges) and then
// the layers; Cairn's Sequential has them as "layer-0", "layer-1", ...
void map_keras3_sequential(ckpt::ObjectGraph& g, uint32_t model) {
  const ckpt::ChildEdge* functional = find_edge(g.nodes[model], "_functional");
  if (!functional) return;
  const ckpt::ChildEdge* ops = find_edge(g.nodes[functional->node_id], "_operations");
  if (!ops) return;
  std::vector<uint32_t> items = list_items(g.nodes[ops->node_id]);
  if (items.empty() || !is_empty(g.nodes[items[0]])) return;  // not the shape a Sequential has
  ckpt::Node& m = g.nodes[model];
  drop_edges(m, [](const std::string& name) { return name == "_functional" || starts_with(name, "layer-"); });
  for (size_t i = 1; i < items.size(); ++i) {
    m.children.push_back({"layer-" + std::to_string(i - 1), items[i]});
    map_keras3_layer(g.nodes[items[i]]);
  }
}

bool is_keras2_model(const ckpt::Node& n) { return find_edge(n, "layer-0") || find_edge(n, "layer_with_weights-0"); }

// Keras 2 models list each layer twice ("layer-N" and "layer_with_weights-K"); Cairn's Sequential
// has the first. "_functional" and the model's own "optimizer" edge are dropped for both versions:
// the optimizer is matched where the checkpoint's root names it.
void drop_keras_model_edges(ckpt::Node& m) {
  drop_edges(m, [](const std::string& name) { return starts_with(name, "layer_with_weights-") || name == "optimizer"; });
}

// The trainable variables of a Keras 2 model in Keras' order (layer by layer, each layer's weights
// in creation order), which is the order its optimizer built its slot lists in. Batch
// normalization's moving statistics are not trainable.
std::vector<uint32_t> keras2_trainable_variables(const ckpt::ObjectGraph& g, uint32_t model) {
  std::vector<uint32_t> out;
  for (size_t k = 0;; ++k) {
    const ckpt::ChildEdge* layer = find_edge(g.nodes[model], "layer_with_weights-" + std::to_string(k));
    if (!layer) break;
    for (const ckpt::ChildEdge& w : g.nodes[layer->node_id].children)
      if (variable_value(g.nodes[w.node_id]) && w.name != "moving_mean" && w.name != "moving_variance")
        out.push_back(w.node_id);
  }
  return out;
}

// The Keras optimizer at `opt`: Cairn names for the step and learning rate, and SlotRefs for the
// slot lists (variable i of the optimizer owns item i of each list). Keras 3 lists the variables
// in "_trainable_variables"; Keras 2 does not, and they are the model's (the model whose
// "optimizer" edge leads here) in Keras' order, checked shape by shape.
void map_keras_optimizer(ckpt::ObjectGraph& g, uint32_t opt, const std::vector<uint32_t>& model_vars,
                         const ShapeOf& shape_of) {
  std::vector<uint32_t> vars;
  if (const ckpt::ChildEdge* tv = find_edge(g.nodes[opt], "_trainable_variables"))
    vars = list_items(g.nodes[tv->node_id]);
  else
    vars = model_vars;
  auto shape_of_node = [&](uint32_t node) -> std::optional<Shape> {
    const ckpt::Attribute* a = variable_value(g.nodes[node]);
    return a ? shape_of(a->key) : std::nullopt;
  };
  std::vector<ckpt::SlotRef> refs;
  for (const ckpt::ChildEdge& e : g.nodes[opt].children) {
    if (!is_keras_slot_list(e.name)) continue;
    std::vector<uint32_t> slots = list_items(g.nodes[e.node_id]);
    // A list that does not pair with the variables one to one is left unmatched: its values stay
    // unrestored and assert_consumed names them.
    if (slots.size() != vars.size()) continue;
    bool same = true;
    for (size_t i = 0; i < slots.size() && same; ++i) {
      std::optional<Shape> vs = shape_of_node(vars[i]), ss = shape_of_node(slots[i]);
      same = vs && ss && *vs == *ss;
    }
    if (!same) continue;
    for (size_t i = 0; i < slots.size(); ++i) refs.push_back({opt, vars[i], e.name, slots[i]});
  }
  ckpt::Node& o = g.nodes[opt];
  drop_edges(o, [](const std::string& name) { return is_keras_slot_list(name) || keras_optimizer_internal().count(name); });
  rename_edge(o, "_iterations", "iter");
  rename_edge(o, "_learning_rate", "learning_rate");
  o.slots.insert(o.slots.end(), refs.begin(), refs.end());
}

}  // namespace

KerasMapping map_keras_graph(ckpt::ObjectGraph& g, const ShapeOf& shape_of) {
  KerasMapping out;
  const auto n = static_cast<uint32_t>(g.nodes.size());
  // Optimizers first found, with the Keras 2 model (if any) that names each one as its optimizer.
  std::map<uint32_t, std::vector<uint32_t>> model_vars;
  for (uint32_t i = 0; i < n; ++i)
    if (find_edge(g.nodes[i], "_iterations")) out.optimizer_nodes.insert(i);
  for (uint32_t i = 0; i < n; ++i) {
    const ckpt::ChildEdge* opt = find_edge(g.nodes[i], "optimizer");
    if (opt && out.optimizer_nodes.count(opt->node_id) && is_keras2_model(g.nodes[i]) &&
        !model_vars.count(opt->node_id))
      model_vars[opt->node_id] = keras2_trainable_variables(g, i);
  }
  for (uint32_t opt : out.optimizer_nodes) map_keras_optimizer(g, opt, model_vars[opt], shape_of);
  for (uint32_t i = 0; i < n; ++i) {
    if (out.optimizer_nodes.count(i)) continue;
    const bool keras3 = find_edge(g.nodes[i], "_functional") != nullptr;
    if (keras3) map_keras3_sequential(g, i);
    if (keras3 || is_keras2_model(g.nodes[i])) drop_keras_model_edges(g.nodes[i]);
  }
  return out;
}

std::string cairn_slot_name(const SlotOwner& owner, const std::string& stored) {
  const auto* opt = dynamic_cast<const optim::Optimizer*>(&owner);
  if (!opt) return stored;
  for (const SlotList& s : kSlotLists)
    if (s.kind == opt->kind_of() && stored == s.list) return s.slot;
  // No such list on this kind: the optimizer never creates the slot, the value stays unrestored.
  return stored;
}

namespace {

// The Keras 3 slot list holding Cairn slot `slot` of an optimizer of kind `kind` (the inverse of
// cairn_slot_name); empty for a slot Keras has no list for.
std::string keras_slot_list(optim::Kind kind, const std::string& slot) {
  for (const SlotList& s : kSlotLists)
    if (s.kind == kind && slot == s.slot) return s.list;
  return {};
}

uint32_t add_node(ckpt::ObjectGraph& g, std::vector<ckpt::ChildEdge> children = {}) {
  ckpt::Node n;
  n.children = std::move(children);
  g.nodes.push_back(std::move(n));
  return static_cast<uint32_t>(g.nodes.size() - 1);
}

uint32_t add_list(ckpt::ObjectGraph& g, const std::vector<uint32_t>& items, size_t first_index = 0) {
  std::vector<ckpt::ChildEdge> children;
  for (size_t i = 0; i < items.size(); ++i) children.push_back({std::to_string(first_index + i), items[i]});
  return add_node(g, std::move(children));
}

void sequential_to_keras(ckpt::ObjectGraph& g, uint32_t node, const std::vector<Ref<Object>>& objects) {
  std::vector<uint32_t> ops{add_node(g)};  // the InputLayer: no values, no edges
  for (const ckpt::ChildEdge& e : g.nodes[node].children) {
    if (!starts_with(e.name, "layer-")) continue;
    ops.push_back(e.node_id);
    auto* layer = e.node_id < objects.size() ? dynamic_cast<nn::Layer*>(objects[e.node_id].get()) : nullptr;
    const std::string_view type = layer ? layer->type_name() : "";
    if (type == "Dense" || type == "Conv2D") rename_edge(g.nodes[e.node_id], "kernel", "_kernel");
    if (type == "Embedding")
      rename_edge(g.nodes[e.node_id], "embeddings", "_embeddings");
  }
  uint32_t list = add_list(g, ops);
  uint32_t functional = add_node(g, {{"_operations", list}});
  drop_edges(g.nodes[node], [](const std::string& name) { return starts_with(name, "layer-"); });
  g.nodes[node].children.insert(g.nodes[node].children.begin(), {"_functional", functional});
}

void optimizer_to_keras(ckpt::ObjectGraph& g, uint32_t node, const optim::Optimizer& opt,
                        const std::map<uint32_t, size_t>& rank) {
  // Ids, not pointers: adding the list nodes below reallocates g.nodes.
  std::optional<uint32_t> iter, lr;
  if (const ckpt::ChildEdge* e = find_edge(g.nodes[node], "iter")) iter = e->node_id;
  if (const ckpt::ChildEdge* e = find_edge(g.nodes[node], "learning_rate")) lr = e->node_id;
  // The slotted variables in Keras' order, and each one's slots by Cairn name.
  std::map<uint32_t, std::map<std::string, uint32_t>> slots;
  for (const ckpt::SlotRef& r : g.nodes[node].slots) slots[r.variable_node][r.slot_name] = r.slot_node;
  std::vector<uint32_t> vars;
  for (auto& [v, _] : slots) vars.push_back(v);
  auto rank_of = [&](uint32_t v) {
    auto it = rank.find(v);
    return it == rank.end() ? std::make_pair(size_t{1}, size_t{v}) : std::make_pair(size_t{0}, it->second);
  };
  std::stable_sort(vars.begin(), vars.end(), [&](uint32_t a, uint32_t b) { return rank_of(a) < rank_of(b); });
  std::vector<uint32_t> variables;  // Keras' _variables: iterations, learning rate, then the slots
  if (iter) variables.push_back(*iter);
  if (lr) variables.push_back(*lr);
  std::map<std::string, std::vector<uint32_t>> lists;
  for (uint32_t v : vars)
    for (const std::string& name : opt.slot_names()) {
      auto s = slots[v].find(name);
      std::string list = keras_slot_list(opt.kind_of(), name);
      if (s == slots[v].end() || list.empty()) continue;
      variables.push_back(s->second);
      lists[list].push_back(s->second);
    }
  std::vector<ckpt::ChildEdge> children{{"_variables", add_list(g, variables)}, {"_trainable_variables", add_list(g, vars)}};
  if (iter) children.push_back({"_iterations", *iter});
  if (lr) children.push_back({"_learning_rate", *lr});
  for (const char* name : {"_momentums", "_velocities", "_average_gradients"})
    if (lists.count(name)) children.push_back({name, add_list(g, lists[name])});
  g.nodes[node].children = std::move(children);
  g.nodes[node].slots.clear();
}

}  // namespace

void to_keras_graph(ckpt::ObjectGraph& g, const std::vector<Ref<Object>>& objects) {
  // Keras' model.trainable_variables order: each top-level model's weights, layer by layer.
  std::map<const Object*, uint32_t> node_of;
  for (size_t i = 0; i < objects.size(); ++i) node_of.emplace(objects[i].get(), static_cast<uint32_t>(i));
  std::map<uint32_t, size_t> rank;
  for (const ckpt::ChildEdge& e : g.nodes[0].children)
    if (auto* layer = e.node_id < objects.size() ? dynamic_cast<nn::Layer*>(objects[e.node_id].get()) : nullptr)
      for (const Ref<Variable>& w : layer->trainable_weights()) {
        auto it = node_of.find(w.get());
        if (it != node_of.end()) rank.emplace(it->second, rank.size());
      }
  const size_t walked = std::min(objects.size(), g.nodes.size());
  for (size_t i = 0; i < walked; ++i) {
    if (dynamic_cast<nn::Sequential*>(objects[i].get())) sequential_to_keras(g, static_cast<uint32_t>(i), objects);
    if (auto* opt = dynamic_cast<optim::Optimizer*>(objects[i].get()))
      optimizer_to_keras(g, static_cast<uint32_t>(i), *opt, rank);
  }
}

bool keras_keeps_live_value(const KerasMapping& m, uint32_t node, std::string_view edge) {
  return m.optimizer_nodes.count(node) && edge != "iter" && edge != "learning_rate";
}

}  // namespace cairn::tfckpt
