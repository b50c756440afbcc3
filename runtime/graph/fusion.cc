#include "runtime/graph/fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "runtime/core/thread_pool.h"

namespace cairn::graph {
namespace {

// ---- The step set. Each formula matches the op's CPU kernel for float and double exactly
// (runtime/cpu/unary_kernels.cc, binary_kernels.cc): same operations, same order, same type. ----

const std::unordered_map<std::string_view, FusedStep>& step_names() {
  static const auto* names = new std::unordered_map<std::string_view, FusedStep>{
      {"Neg", kStepNeg},       {"Abs", kStepAbs},         {"Sign", kStepSign},
      {"Square", kStepSquare}, {"Reciprocal", kStepReciprocal}, {"Exp", kStepExp},
      {"Log", kStepLog},       {"Log1p", kStepLog1p},     {"Sqrt", kStepSqrt},
      {"Rsqrt", kStepRsqrt},   {"Sin", kStepSin},         {"Cos", kStepCos},
      {"Tanh", kStepTanh},     {"Sigmoid", kStepSigmoid}, {"Erf", kStepErf},
      {"Relu", kStepRelu},     {"Relu6", kStepRelu6},     {"Elu", kStepElu},
      {"Selu", kStepSelu},     {"Softplus", kStepSoftplus}, {"Floor", kStepFloor},
      {"Ceil", kStepCeil},     {"Round", kStepRound},     {"Add", kStepAdd},
      {"Sub", kStepSub},       {"Mul", kStepMul},         {"RealDiv", kStepDiv},
      {"Maximum", kStepMaximum}, {"Minimum", kStepMinimum}, {"Pow", kStepPow},
      {"SquaredDifference", kStepSquaredDifference}};
  return *names;
}

template <class C>
C unary(int64_t step, C x) {
  switch (step) {
    case kStepNeg: return -x;
    case kStepAbs: return std::fabs(x);
    case kStepSign: return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);
    case kStepSquare: return x * x;
    case kStepReciprocal: return C(1) / x;
    case kStepExp: return std::exp(x);
    case kStepLog: return std::log(x);
    case kStepLog1p: return std::log1p(x);
    case kStepSqrt: return std::sqrt(x);
    case kStepRsqrt: return C(1) / std::sqrt(x);
    case kStepSin: return std::sin(x);
    case kStepCos: return std::cos(x);
    case kStepTanh: return std::tanh(x);
    case kStepSigmoid: {
      if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
      C e = std::exp(x);
      return e / (C(1) + e);
    }
    case kStepErf: return std::erf(x);
    case kStepRelu:
      if (std::isnan(x)) return x;
      return x > C(0) ? x : C(0);
    case kStepRelu6:
      if (std::isnan(x)) return x;
      if (x > C(6)) return C(6);
      return x > C(0) ? x : C(0);
    case kStepElu: return x > C(0) ? x : std::expm1(x);
    case kStepSelu: {
      const C alpha = static_cast<C>(1.6732632423543772848170429916717);
      const C scale = static_cast<C>(1.0507009873554804934193349852946);
      return x > C(0) ? scale * x : scale * alpha * std::expm1(x);
    }
    case kStepSoftplus:
      if (std::isnan(x)) return x;
      return (x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::fabs(x)));
    case kStepFloor: return std::floor(x);
    case kStepCeil: return std::ceil(x);
    case kStepRound: {
      if (!std::isfinite(x)) return x;
      C f = std::floor(x);
      C frac = x - f;
      C r;
      if (frac > C(0.5)) r = f + C(1);
      else if (frac < C(0.5)) r = f;
      else r = std::fmod(f, C(2)) == C(0) ? f : f + C(1);
      return std::copysign(r, x);
    }
  }
  return x;
}

// Binary steps are written as separate functors so each block loop is a tight, vectorizable loop.
struct AddF { template <class C> C operator()(C a, C b) const { return a + b; } };
struct SubF { template <class C> C operator()(C a, C b) const { return a - b; } };
struct MulF { template <class C> C operator()(C a, C b) const { return a * b; } };
struct DivF { template <class C> C operator()(C a, C b) const { return static_cast<C>(a / b); } };
struct MaximumF {
  template <class C> C operator()(C a, C b) const {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    return a > b ? a : b;
  }
};
struct MinimumF {
  template <class C> C operator()(C a, C b) const {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    return a < b ? a : b;
  }
};
struct PowF { template <class C> C operator()(C a, C b) const { return std::pow(a, b); } };
struct SquaredDifferenceF {
  template <class C> C operator()(C a, C b) const {
    C d = a - b;
    return d * d;
  }
};

// An operand of one step within a block: `p[i]` for a full operand, `p[0]` for a scalar.
template <class T>
struct Operand {
  const T* p;
  bool scalar;
};

template <class T, class F>
void binary_block(Operand<T> a, Operand<T> b, T* d, int64_t len, F f) {
  if (!a.scalar && !b.scalar) {
    for (int64_t i = 0; i < len; ++i) d[i] = f(a.p[i], b.p[i]);
  } else if (a.scalar && !b.scalar) {
    const T x = a.p[0];
    for (int64_t i = 0; i < len; ++i) d[i] = f(x, b.p[i]);
  } else if (!a.scalar) {
    const T y = b.p[0];
    for (int64_t i = 0; i < len; ++i) d[i] = f(a.p[i], y);
  } else {
    const T v = f(a.p[0], b.p[0]);
    for (int64_t i = 0; i < len; ++i) d[i] = v;
  }
}

template <class T, FusedStep S>
void unary_block(Operand<T> a, T* d, int64_t len) {
  if (a.scalar) {
    const T v = unary<T>(S, a.p[0]);
    for (int64_t i = 0; i < len; ++i) d[i] = v;
  } else {
    for (int64_t i = 0; i < len; ++i) d[i] = unary<T>(S, a.p[i]);  // S is constant: the switch folds away
  }
}

template <class T>
void unary_dispatch(int64_t step, Operand<T> a, T* d, int64_t len) {
  switch (step) {
#define CAIRN_FUSED_UNARY(s) \
  case s: return unary_block<T, s>(a, d, len);
    CAIRN_FUSED_UNARY(kStepNeg) CAIRN_FUSED_UNARY(kStepAbs) CAIRN_FUSED_UNARY(kStepSign)
    CAIRN_FUSED_UNARY(kStepSquare) CAIRN_FUSED_UNARY(kStepReciprocal) CAIRN_FUSED_UNARY(kStepExp)
    CAIRN_FUSED_UNARY(kStepLog) CAIRN_FUSED_UNARY(kStepLog1p) CAIRN_FUSED_UNARY(kStepSqrt)
    CAIRN_FUSED_UNARY(kStepRsqrt) CAIRN_FUSED_UNARY(kStepSin) CAIRN_FUSED_UNARY(kStepCos) CAIRN_FUSED_UNARY(kStepTanh)
    CAIRN_FUSED_UNARY(kStepSigmoid) CAIRN_FUSED_UNARY(kStepErf) CAIRN_FUSED_UNARY(kStepRelu)
    CAIRN_FUSED_UNARY(kStepRelu6) CAIRN_FUSED_UNARY(kStepElu) CAIRN_FUSED_UNARY(kStepSelu)
    CAIRN_FUSED_UNARY(kStepSoftplus) CAIRN_FUSED_UNARY(kStepFloor) CAIRN_FUSED_UNARY(kStepCeil)
    CAIRN_FUSED_UNARY(kStepRound)
#undef CAIRN_FUSED_UNARY
  }
  raise(Code::Internal, "FusedElementwise: unknown unary step {}", step);
}

template <class T>
void binary_dispatch(int64_t step, Operand<T> a, Operand<T> b, T* d, int64_t len) {
  switch (step) {
    case kStepAdd: return binary_block(a, b, d, len, AddF{});
    case kStepSub: return binary_block(a, b, d, len, SubF{});
    case kStepMul: return binary_block(a, b, d, len, MulF{});
    case kStepDiv: return binary_block(a, b, d, len, DivF{});
    case kStepMaximum: return binary_block(a, b, d, len, MaximumF{});
    case kStepMinimum: return binary_block(a, b, d, len, MinimumF{});
    case kStepPow: return binary_block(a, b, d, len, PowF{});
    case kStepSquaredDifference: return binary_block(a, b, d, len, SquaredDifferenceF{});
  }
  raise(Code::Internal, "FusedElementwise: unknown binary step {}", step);
}

// ---- The kernel ----

// Elements per block: a block's registers (one per step) stay in the L1/L2 cache.
constexpr int64_t kBlock = 512;
// Elements per parallel chunk (a multiple of kBlock); chunks are fixed ranges of the output.
constexpr int64_t kGrain = 32 * kBlock;

// The program: three ints per step (step, operand a, operand b or -1). Registers 0..num_inputs-1
// are the inputs; step j writes register num_inputs + j; the last step is the output.
template <class T>
void run_program(const KernelContext& kc, const AttrValue& program) {
  const int nin = kc.num_inputs;
  const int64_t steps = static_cast<int64_t>(program.n_ints / 3);
  const int64_t* prog = program.ints;
  T* out = kc.output(0).mutable_data<T>();
  const int64_t n = kc.output(0).num_elements();
  kc.pool.run(n, kGrain, [&](int64_t begin, int64_t end) {
    static thread_local std::vector<T> scratch;
    if (scratch.size() < static_cast<size_t>(steps * kBlock)) scratch.resize(static_cast<size_t>(steps * kBlock));
    for (int64_t pos = begin; pos < end; pos += kBlock) {
      const int64_t len = std::min(kBlock, end - pos);
      auto operand = [&](int64_t reg) -> Operand<T> {
        if (reg < nin) {
          const Tensor& t = kc.input(static_cast<int>(reg));
          bool scalar = t.num_elements() == 1;
          return {t.data<T>() + (scalar ? 0 : pos), scalar};
        }
        return {scratch.data() + (reg - nin) * kBlock, false};
      };
      for (int64_t j = 0; j < steps; ++j) {
        const int64_t* s = prog + 3 * j;
        T* dst = j == steps - 1 ? out + pos : scratch.data() + j * kBlock;
        if (s[0] < kFirstBinaryStep) unary_dispatch<T>(s[0], operand(s[1]), dst, len);
        else binary_dispatch<T>(s[0], operand(s[1]), operand(s[2]), dst, len);
      }
    }
  });
}

void fused_kernel(KernelContext& kc) {
  const AttrValue& program = kc.attrs.at(1);
  if (program.n_ints == 0 || program.n_ints % 3 != 0)
    raise(Code::Internal, "FusedElementwise: a program of {} ints is malformed", program.n_ints);
  switch (kc.output(0).dtype()) {
    case DType::Float32: return run_program<float>(kc, program);
    case DType::Float64: return run_program<double>(kc, program);
    default: raise(Code::Internal, "FusedElementwise: dtype {} is not fused", dtype_name(kc.output(0).dtype()));
  }
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
    t[static_cast<int>(DeviceKind::CPU)] = FusedBackend{fused_kernel, {DType::Float32, DType::Float64}, nullptr};
    mutable_fused_def().kernels[static_cast<int>(DeviceKind::CPU)] = fused_kernel;
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
