#include "runtime/graph/passes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace cairn::graph {

std::string PassStats::str() const {
  return fmt::format("folded {}, merged {}, removed {}, fused {}", folded, merged, removed, fused);
}

namespace {

// Builds a new graph from an old one node by node, remembering where each old output went, so a
// pass only decides per node whether to keep, replace or drop it.
class Rebuild {
 public:
  explicit Rebuild(const Graph& old) : old_(old), map_(old.nodes.size()) { out_.num_inputs = old.num_inputs; }

  Port at(Port p) const { return map_[p.node][p.output]; }
  const Graph& out() const { return out_; }

  // Copies old node `i` (inputs remapped) and returns its new index.
  int keep(int i) {
    const Node& n = old_.nodes[i];
    Node copy;
    copy.kind = n.kind;
    copy.def = n.def;
    if (n.attrs) copy.attrs = std::make_unique<AttrStore>(n.attrs->attrs());
    for (Port p : n.inputs) copy.inputs.push_back(at(p));
    copy.outputs = n.outputs;
    copy.index = n.index;
    copy.value = n.value;
    copy.variable = n.variable;
    copy.branches = n.branches;
    copy.max_iterations = n.max_iterations;
    return emit(i, std::move(copy));
  }
  // Adds `node` (inputs already in new numbering) in place of old node `i`'s outputs.
  int emit(int i, Node node) {
    int id = out_.add(std::move(node));
    for (size_t k = 0; k < old_.nodes[i].outputs.size(); ++k) map_[i].push_back({id, static_cast<int>(k)});
    return id;
  }
  // Adds a node that stands for no old node by itself (see alias).
  int add(Node node) { return out_.add(std::move(node)); }
  // Old node `i`'s outputs are these existing new ports.
  void alias(int i, std::vector<Port> ports) { map_[i] = std::move(ports); }

  Graph finish() {
    for (Port p : old_.outputs) out_.outputs.push_back(at(p));
    return std::move(out_);
  }

 private:
  const Graph& old_;
  Graph out_;
  std::vector<std::vector<Port>> map_;
};

bool same_attr(AttrKind kind, const AttrValue& a, const AttrValue& b) {
  switch (kind) {
    case AttrKind::Int:
    case AttrKind::Bool: return a.i == b.i;
    case AttrKind::Float: return std::memcmp(&a.f, &b.f, sizeof a.f) == 0;  // -0 != 0, NaN == NaN
    case AttrKind::String: return a.s == b.s;
    case AttrKind::DType: return a.dtype == b.dtype;
    case AttrKind::Ints: return std::equal(a.ints, a.ints + a.n_ints, b.ints, b.ints + b.n_ints);
    case AttrKind::Floats:
      return a.n_floats == b.n_floats && std::memcmp(a.floats, b.floats, a.n_floats * sizeof(double)) == 0;
  }
  return false;
}

bool same_attrs(const OpDef& def, const Attrs& x, const Attrs& y) {
  for (size_t k = 0; k < def.attrs.size(); ++k)
    if (!same_attr(def.attrs[k].kind, x.at(static_cast<int>(k)), y.at(static_cast<int>(k)))) return false;
  return true;
}

size_t op_hash(const OpDef* def, const std::vector<Port>& inputs) {
  size_t h = std::hash<const void*>()(def);
  for (Port p : inputs) h = h * 1000003u ^ (static_cast<size_t>(p.node) * 31u + static_cast<size_t>(p.output));
  return h;
}

// Constants are compared by value only when they are small host tensors (gradient code makes a
// fresh scalar for every `2.0` it multiplies by).
constexpr size_t kMaxComparedConstantBytes = 4096;

bool comparable_constant(const Node& n) {
  return n.kind == NodeKind::Constant && n.value.device()->is_host() && n.value.nbytes() <= kMaxComparedConstantBytes &&
         n.value.dtype() != DType::String;
}

bool same_constant(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.device() == b.device() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

size_t constant_hash(const Tensor& t) {
  size_t h = static_cast<size_t>(t.dtype()) * 131u + static_cast<size_t>(t.num_elements());
  const unsigned char* p = static_cast<const unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) h = h * 1099511628211ull ^ p[i];
  return h;
}

bool is_pure_op(const Node& n) {
  return n.kind == NodeKind::Op && !n.def->has_side_effects() && !n.def->dynamic_output_shape;
}

size_t spec_bytes(const TensorSpec& s) {
  return dtype_size(s.dtype) * static_cast<size_t>(std::max<int64_t>(0, s.shape.num_elements()));
}

// Runs `n` on constant inputs; returns false (and folds nothing) when the op cannot run now: no
// kernel for the device, an error the replay should report in its place, or an oversized result.
bool evaluate(Context& ctx, const Node& n, const std::vector<const Tensor*>& ins, size_t max_bytes,
              std::vector<Tensor>& outs) {
  size_t in_bytes = 0, out_bytes = 0;
  for (const Tensor* t : ins) in_bytes += t->nbytes();
  for (const TensorSpec& s : n.outputs) {
    if (s.dtype == DType::String || dtype_size(s.dtype) == 0) return false;
    out_bytes += spec_bytes(s);
  }
  if (out_bytes > std::max(in_bytes, max_bytes)) return false;
  Device& device = ins.empty() ? ctx.default_device() : *ins[0]->device();
  for (const Tensor* t : ins)
    if (t->device() != &device) return false;
  KernelFn kernel = n.def->kernels[static_cast<int>(device.kind())];
  if (!kernel) return false;
  try {
    outs.clear();
    for (const TensorSpec& s : n.outputs) outs.push_back(Tensor::allocate(device, s.dtype, s.shape));
    KernelContext kc{*n.def, n.attrs->attrs(), device, ctx.pool(), ins.data(), static_cast<int>(ins.size()),
                     outs.data(), static_cast<int>(outs.size())};
    kernel(kc);
  } catch (const Error&) {
    return false;  // e.g. an integer division by zero: the replay raises it where eager would
  }
  return true;
}

}  // namespace

Graph clone(const Graph& g) {
  Rebuild r(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) r.keep(static_cast<int>(i));
  return r.finish();
}

int eliminate_dead_code(Graph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  for (Port p : g.outputs) live[p.node] = true;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    // Writes are observable (variables, summaries), random ops advance the context's seed sequence,
    // inputs are the signature.
    if (n.kind == NodeKind::Assign || n.kind == NodeKind::Input || (n.kind == NodeKind::Op && n.def->has_side_effects()))
      live[i] = true;
    for (const auto& b : n.branches)
      if (b->has_side_effects()) live[i] = true;
  }
  for (size_t i = g.nodes.size(); i-- > 0;)
    if (live[i])
      for (Port p : g.nodes[i].inputs) live[p.node] = true;
  int removed = static_cast<int>(std::count(live.begin(), live.end(), false));
  if (removed == 0) return 0;
  Rebuild r(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live[i]) r.keep(static_cast<int>(i));
  g = r.finish();
  return removed;
}

int eliminate_common_subexpressions(Graph& g) {
  Rebuild r(g);
  std::unordered_multimap<size_t, int> ops, constants;  // hash -> new node
  std::unordered_map<const Variable*, int> reads;      // variable -> its read since the last write
  int merged = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int old = static_cast<int>(i);
    if (is_pure_op(n)) {
      std::vector<Port> inputs;  // in new numbering, where an equal earlier node would read
      for (Port p : n.inputs) inputs.push_back(r.at(p));
      size_t h = op_hash(n.def, inputs);
      auto range = ops.equal_range(h);
      int found = -1;
      for (auto it = range.first; it != range.second && found < 0; ++it) {
        const Node& cand = r.out().nodes[it->second];
        if (cand.def == n.def && cand.inputs == inputs && same_attrs(*n.def, cand.attrs->attrs(), n.attrs->attrs()))
          found = it->second;
      }
      if (found >= 0) {
        std::vector<Port> ports;
        for (size_t k = 0; k < n.outputs.size(); ++k) ports.push_back({found, static_cast<int>(k)});
        r.alias(old, std::move(ports));
        ++merged;
      } else {
        ops.emplace(h, r.keep(old));
      }
    } else if (comparable_constant(n)) {
      size_t h = constant_hash(n.value);
      auto range = constants.equal_range(h);
      int found = -1;
      for (auto it = range.first; it != range.second && found < 0; ++it)
        if (same_constant(r.out().nodes[it->second].value, n.value)) found = it->second;
      if (found >= 0) {
        r.alias(old, {{found, 0}});
        ++merged;
      } else {
        constants.emplace(h, r.keep(old));
      }
    } else if (n.kind == NodeKind::Read) {
      auto it = reads.find(n.variable.get());
      if (it != reads.end()) {
        r.alias(old, {{it->second, 0}});
        ++merged;
      } else {
        reads[n.variable.get()] = r.keep(old);
      }
    } else {
      if (n.kind == NodeKind::Assign) reads.erase(n.variable.get());  // later reads see the new value
      if (n.is_control_flow()) reads.clear();  // a branch may write any variable
      r.keep(old);
    }
  }
  if (merged > 0) g = r.finish();
  return merged;
}

int fold_constants(Context& ctx, Graph& g, size_t max_folded_bytes) {
  Rebuild r(g);
  int folded = 0;
  std::vector<const Tensor*> ins;
  std::vector<Tensor> outs;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int old = static_cast<int>(i);
    bool constant_inputs = is_pure_op(n);
    ins.clear();
    for (size_t k = 0; k < n.inputs.size() && constant_inputs; ++k) {
      const Node& src = r.out().nodes[r.at(n.inputs[k]).node];
      constant_inputs = src.kind == NodeKind::Constant;
      ins.push_back(&src.value);
    }
    if (!constant_inputs || !evaluate(ctx, n, ins, max_folded_bytes, outs)) {
      r.keep(old);
      continue;
    }
    std::vector<Port> ports;
    for (Tensor& t : outs) {
      Node c;
      c.kind = NodeKind::Constant;
      c.outputs = {{t.dtype(), t.shape()}};
      c.value = std::move(t);
      ports.push_back({r.add(std::move(c)), 0});  // one constant per output, in output order
    }
    r.alias(old, std::move(ports));
    ++folded;
  }
  if (folded > 0) g = r.finish();
  return folded;
}

int place_constants(Graph& g, Device& device) {
  int moved = 0;
  for (Node& n : g.nodes) {
    if (n.kind == NodeKind::Constant && n.value.device()->is_host() && n.value.device() != &device &&
        dtype_size(n.value.dtype()) != 0) {
      n.value = tensor_on_device(n.value, device);
      ++moved;
    }
    for (auto& b : n.branches) {
      auto placed = std::make_shared<Graph>(clone(*b));
      moved += place_constants(*placed, device);
      b = std::move(placed);
    }
  }
  return moved;
}

PassStats optimize(Context& ctx, Graph& g, const PassOptions& options) {
  PassStats stats;
  // Control-flow subgraphs first, each on its own (what they capture comes in as inputs).
  for (Node& n : g.nodes)
    for (auto& b : n.branches) {
      auto optimized = std::make_shared<Graph>(clone(*b));
      PassStats inner = optimize(ctx, *optimized, options);
      stats.folded += inner.folded;
      stats.merged += inner.merged;
      stats.removed += inner.removed;
      b = std::move(optimized);
    }
  // Folding exposes equal constants to CSE, and CSE exposes more all-constant ops to folding.
  for (int round = 0; round < 4; ++round) {
    int changed = 0;
    if (options.eliminate_common_subexpressions) changed += eliminate_common_subexpressions(g);
    stats.merged += changed;
    if (options.fold_constants) {
      int f = fold_constants(ctx, g, options.max_folded_bytes);
      stats.folded += f;
      changed += f;
    }
    if (changed == 0) break;
  }
  if (options.eliminate_dead_code) stats.removed += eliminate_dead_code(g);
  if (options.order_split_collectives) order_split_collectives(g);
  return stats;
}

namespace {

bool is_op(const Node& n, std::string_view name) { return n.kind == NodeKind::Op && n.def->name == name; }
bool is_collective(const Node& n) { return n.kind == NodeKind::Op && n.def->name.rfind("Collective", 0) == 0; }
// Whether a node's place among its kind matters beyond its inputs.
bool is_ordered(const Node& n) {
  return n.kind == NodeKind::Read || n.kind == NodeKind::Assign || n.is_control_flow() ||
         (n.kind == NodeKind::Op && (n.def->stateful || n.def->random));
}

// Each node's place in the schedule: inputs first; then, by bucket, the nodes the k-th Start needs
// (k: the first Start that needs it), those no Start needs, and the Dones last; trace order within.
struct Rank {
  int group = 0;  // 0: inputs, 1: the others, 2: Dones
  int bucket = 0;
  int index = 0;
  bool operator<(const Rank& o) const { return std::tie(group, bucket, index) < std::tie(o.group, o.bucket, o.index); }
};

std::vector<Rank> schedule_ranks(const Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<Rank> rank(static_cast<size_t>(n));
  int starts = 0;
  for (const Node& node : g.nodes) starts += is_op(node, "CollectiveAllReduceStart");
  for (int i = 0; i < n; ++i) {
    const Node& node = g.nodes[static_cast<size_t>(i)];
    rank[static_cast<size_t>(i)] = {node.kind == NodeKind::Input ? 0 : is_op(node, "CollectiveAllReduceDone") ? 2 : 1,
                                    starts, i};
  }
  int k = 0;
  for (int i = 0; i < n; ++i) {
    if (!is_op(g.nodes[static_cast<size_t>(i)], "CollectiveAllReduceStart")) continue;
    std::vector<int> stack{i};
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      Rank& r = rank[static_cast<size_t>(j)];
      if (r.bucket != starts) continue;  // an earlier Start needs it already
      r.bucket = k;
      for (Port p : g.nodes[static_cast<size_t>(j)].inputs) stack.push_back(p.node);
    }
    ++k;
  }
  return rank;
}

}  // namespace

int order_split_collectives(Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& x) { return is_op(x, "CollectiveAllReduceStart"); }))
    return 0;
  // What must run before what: inputs, the collectives' order, the other ordered nodes' order.
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  std::vector<int> waiting(static_cast<size_t>(n), 0);
  auto edge = [&](int from, int to) {
    users[static_cast<size_t>(from)].push_back(to);
    ++waiting[static_cast<size_t>(to)];
  };
  int last_collective = -1, last_ordered = -1;
  for (int i = 0; i < n; ++i) {
    const Node& node = g.nodes[static_cast<size_t>(i)];
    for (Port p : node.inputs) edge(p.node, i);
    int& last = is_collective(node) ? last_collective : last_ordered;
    if (!is_collective(node) && !is_ordered(node)) continue;
    if (last >= 0) edge(last, i);
    last = i;
  }
  const std::vector<Rank> rank = schedule_ranks(g);
  std::set<Rank> ready;
  for (int i = 0; i < n; ++i)
    if (waiting[static_cast<size_t>(i)] == 0) ready.insert(rank[static_cast<size_t>(i)]);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.begin()->index;
    ready.erase(ready.begin());
    order.push_back(i);
    for (int u : users[static_cast<size_t>(i)])
      if (--waiting[static_cast<size_t>(u)] == 0) ready.insert(rank[static_cast<size_t>(u)]);
  }
  int moved = 0;
  Rebuild r(g);
  for (int k = 0; k < n; ++k) {
    moved += order[static_cast<size_t>(k)] != k;
    r.keep(order[static_cast<size_t>(k)]);
  }
  if (moved) g = r.finish();
  return moved;
}

}  // namespace cairn::graph
