#include "runtime/graph/fusion.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "runtime/cpu/elementwise_table.h"

namespace cairn::graph {
namespace {

// The step set: the elementwise table (runtime/cpu/elementwise_table.h), by op name.
const std::unordered_map<std::string_view, FusedStep>& step_names() {
  static const auto* names = new std::unordered_map<std::string_view, FusedStep>{
#define CAIRN_STEP_NAME(name, step, ...) {name, step},
      CAIRN_FUSIBLE_UNARY_OPS(CAIRN_STEP_NAME) CAIRN_FUSIBLE_BINARY_OPS(CAIRN_STEP_NAME)
#undef CAIRN_STEP_NAME
  };
  return *names;
}

// The output is as large as the largest input (the others hold one element).
void fused_shape(ShapeContext& sc) {
  int best = 0;
  for (int i = 1; i < sc.num_inputs; ++i)
    if (sc.in(i).num_elements() > sc.in(best).num_elements() ||
        (sc.in(i).num_elements() == sc.in(best).num_elements() && sc.in(i).rank() > sc.in(best).rank()))
      best = i;
  sc.set_out(0, sc.in(best));
}

OpDef make_fused_def() {
  OpDef def;
  def.name = "FusedElementwise";
  def.summary = "Internal: a chain of elementwise ops evaluated in one pass (graph fusion).";
  ArgDef x;
  x.name = "x";
  x.type_attr = "T";
  x.type_attr_index = 0;
  x.variadic = true;
  ArgDef y;
  y.name = "y";
  y.type_attr = "T";
  y.type_attr_index = 0;
  def.inputs = {x};
  def.outputs = {y};
  AttrDef t;
  t.name = "T";
  t.kind = AttrKind::DType;
  t.inferred = true;
  AttrDef program;
  program.name = "program";
  program.kind = AttrKind::Ints;
  def.attrs = {t, program};
  def.shape_fn = fused_shape;
  def.differentiable = false;  // never recorded: a replay under a tape runs the unfused graph
  return def;
}

OpDef& mutable_fused_def() {
  static OpDef* def = new OpDef(make_fused_def());
  return *def;
}

// The backends' fused kernels by device kind (the CPU's is installed on first use).
FusedBackend* backends() {
  static FusedBackend* table = [] {
    auto* t = new FusedBackend[kNumDeviceKinds];
    t[static_cast<int>(DeviceKind::CPU)] =
        FusedBackend{cpu_fused_elementwise_kernel, {DType::Float32, DType::Float64}, nullptr};
    mutable_fused_def().kernels[static_cast<int>(DeviceKind::CPU)] = cpu_fused_elementwise_kernel;
    return t;
  }();
  return table;
}

// ---- Grouping ----

bool fusible_dtype(DType d) { return d == DType::Float32 || d == DType::Float64; }

// Whether node `i` may join a group of dtype/shape `spec`.
bool fits(const Graph& g, int i, const TensorSpec& spec) {
  const Node& n = g.nodes[i];
  if (n.kind != NodeKind::Op || !fusible_op(*n.def) || n.outputs.size() != 1) return false;
  const TensorSpec& out = n.outputs[0];
  if (out.dtype != spec.dtype || !(out.shape == spec.shape)) return false;
  for (Port p : n.inputs) {
    const TensorSpec& in = g.spec(p);
    if (in.dtype != spec.dtype) return false;
    if (!(in.shape == spec.shape) && in.shape.num_elements() != 1) return false;
  }
  return true;
}

// The device kind a captured value (constant, variable read) lives on; -1 for other nodes.
int captured_kind(const Node& src) {
  if (src.kind == NodeKind::Constant) return static_cast<int>(src.value.device()->kind());
  if (src.kind == NodeKind::Read) return static_cast<int>(src.variable->device().kind());
  return -1;
}

// The fused kernel reads captured values in place: they must all live on one device kind (the
// replay's, checked by fused_device_kinds).
bool captures_one_kind(const Graph& g, const std::vector<Port>& inputs) {
  int kind = -1;
  for (Port p : inputs) {
    int k = captured_kind(g.nodes[p.node]);
    if (k < 0) continue;
    if (kind >= 0 && k != kind) return false;
    kind = k;
  }
  return true;
}

struct Group {
  std::vector<int> members;  // ascending; the last is the root
  std::vector<Port> inputs;  // external inputs, in first-use order
  std::vector<int64_t> program;
};

Group encode(const Graph& g, std::vector<int> members) {
  std::sort(members.begin(), members.end());
  Group grp;
  grp.members = members;
  std::unordered_map<int, int64_t> reg_of_member;
  auto reg = [&](Port p) -> int64_t {
    auto m = reg_of_member.find(p.node);
    if (m != reg_of_member.end()) return m->second;
    for (size_t k = 0; k < grp.inputs.size(); ++k)
      if (grp.inputs[k] == p) return static_cast<int64_t>(k);
    grp.inputs.push_back(p);
    return static_cast<int64_t>(grp.inputs.size() - 1);
  };
  // Inputs first (registers 0..k-1), so collect them before numbering the steps.
  for (int m : members)
    for (Port p : g.nodes[m].inputs)
      if (!std::binary_search(members.begin(), members.end(), p.node)) reg(p);
  const int64_t nin = static_cast<int64_t>(grp.inputs.size());
  for (size_t j = 0; j < members.size(); ++j) {
    const Node& n = g.nodes[members[j]];
    grp.program.push_back(step_names().at(n.def->name));
    grp.program.push_back(reg(n.inputs[0]));
    grp.program.push_back(n.inputs.size() > 1 ? reg(n.inputs[1]) : -1);
    reg_of_member[members[j]] = nin + static_cast<int64_t>(j);
  }
  return grp;
}

Node fused_node(const Group& grp, const TensorSpec& spec) {
  const OpDef& def = fused_elementwise_def();
  Attrs attrs(def);
  attrs.at(0).kind = AttrKind::DType;
  attrs.at(0).dtype = spec.dtype;
  attrs.at(1).kind = AttrKind::Ints;
  attrs.at(1).ints = grp.program.data();
  attrs.at(1).n_ints = grp.program.size();
  Node n;
  n.kind = NodeKind::Op;
  n.def = &def;
  n.attrs = std::make_unique<AttrStore>(attrs);  // copies the program
  n.inputs = grp.inputs;
  n.outputs = {spec};
  return n;
}

}  // namespace

const OpDef& fused_elementwise_def() {
  backends();  // the CPU kernel is in place
  return mutable_fused_def();
}

const char* fused_step_op(int64_t step) {
  for (const auto& [name, s] : step_names())
    if (s == step) return name.data();  // the keys view string literals
  return nullptr;
}

void register_fused_backend(DeviceKind kind, FusedBackend backend) {
  mutable_fused_def().kernels[static_cast<int>(kind)] = backend.kernel;
  backends()[static_cast<int>(kind)] = std::move(backend);
}

unsigned fused_device_kinds(const Graph& g) {
  unsigned kinds = 0;
  for (int k = 0; k < kNumDeviceKinds; ++k)
    if (backends()[k].kernel) kinds |= 1u << k;
  const OpDef* fused = &fused_elementwise_def();
  for (const Node& n : g.nodes) {
    if (n.kind != NodeKind::Op || n.def != fused) continue;
    unsigned node_kinds = 0;
    for (int k = 0; k < kNumDeviceKinds; ++k) {
      const std::vector<DType>& dts = backends()[k].dtypes;
      if (std::find(dts.begin(), dts.end(), n.outputs[0].dtype) != dts.end()) node_kinds |= 1u << k;
    }
    for (Port p : n.inputs) {
      int k = captured_kind(g.nodes[p.node]);
      if (k >= 0) node_kinds &= 1u << k;
    }
    kinds &= node_kinds;
  }
  return kinds;
}

bool fused_backend_ready(Context& ctx, Device& device) {
  const FusedBackend& b = backends()[static_cast<int>(device.kind())];
  if (!b.kernel) return false;
  return !b.ready || b.ready(ctx, device);
}

bool fusible_op(const OpDef& def) {
  if (def.has_side_effects() || def.dynamic_output_shape) return false;
  return step_names().count(def.name) != 0;
}

int fuse_elementwise(Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    for (Port p : g.nodes[i].inputs) consumers[p.node].push_back(i);
  std::vector<bool> is_result(static_cast<size_t>(n), false);
  for (Port p : g.outputs) is_result[p.node] = true;

  std::vector<int> group_of(static_cast<size_t>(n), -1);
  std::vector<Group> groups;
  for (int root = n - 1; root >= 0; --root) {
    if (group_of[root] != -1) continue;
    const Node& r = g.nodes[root];
    if (r.kind != NodeKind::Op || r.outputs.size() != 1 || !fusible_dtype(r.outputs[0].dtype)) continue;
    const TensorSpec spec = r.outputs[0];
    if (!fits(g, root, spec)) continue;
    const int id = static_cast<int>(groups.size());
    std::vector<int> members{root}, work{root};
    group_of[root] = id;
    while (!work.empty()) {
      int m = work.back();
      work.pop_back();
      for (Port p : g.nodes[m].inputs) {
        int q = p.node;
        if (group_of[q] != -1 || is_result[q] || !fits(g, q, spec)) continue;
        bool all_inside = std::all_of(consumers[q].begin(), consumers[q].end(), [&](int c) { return group_of[c] == id; });
        if (!all_inside) continue;  // revisited when its last consumer joins
        group_of[q] = id;
        members.push_back(q);
        work.push_back(q);
      }
    }
    Group grp = encode(g, members);
    if (members.size() < 2 || !captures_one_kind(g, grp.inputs)) {
      for (int m : members) group_of[m] = -2;  // never reconsidered
      continue;
    }
    groups.push_back(std::move(grp));
  }
  if (groups.empty()) return 0;

  // Rebuild: a group's fused node takes its root's place; the other members disappear.
  Graph out;
  out.num_inputs = g.num_inputs;
  std::vector<int> new_index(static_cast<size_t>(n), -1);
  int absorbed = 0;
  for (int i = 0; i < n; ++i) {
    int gid = group_of[i];
    if (gid >= 0 && groups[gid].members.back() != i) continue;
    Node node;
    if (gid >= 0) {
      node = fused_node(groups[gid], g.nodes[i].outputs[0]);
      absorbed += static_cast<int>(groups[gid].members.size());
    } else {
      node = std::move(g.nodes[i]);
    }
    for (Port& p : node.inputs) p.node = new_index[p.node];
    new_index[i] = out.add(std::move(node));
  }
  for (Port p : g.outputs) out.outputs.push_back({new_index[p.node], p.output});
  g = std::move(out);
  return absorbed;
}

}  // namespace cairn::graph
