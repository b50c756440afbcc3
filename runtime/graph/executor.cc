#include "runtime/graph/executor.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "runtime/core/profile_events.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/dispatch.h"

namespace cairn::graph {

// ---- Program ----

Program::Program(const Graph& graph, bool plan_memory) : graph_(graph) {
  int num_slots = 0;
  for (const Node& node : graph.nodes) {
    node_slot_.push_back(num_slots);
    num_slots += static_cast<int>(node.outputs.size());
  }
  for (Port p : graph.outputs) result_slots_.push_back(slot(p));
  std::vector<int> last_use = last_uses(num_slots);
  classify_slots(last_use, plan_memory);
  if (plan_memory) plan_registers(last_use);
  for (const SlotInfo& s : slots_) slot_registers_.push_back(s.reg);
  compile_instructions(last_use);
}

// The last node reading each slot. Results are read "after the last node" (the node count); a
// slot nobody reads dies at its own node.
std::vector<int> Program::last_uses(int num_slots) const {
  const int n = static_cast<int>(graph_.nodes.size());
  std::vector<int> last(static_cast<size_t>(num_slots), -1);
  for (int i = 0; i < n; ++i)
    for (Port p : graph_.nodes[static_cast<size_t>(i)].inputs) last[static_cast<size_t>(slot(p))] = i;
  for (int s : result_slots_) last[static_cast<size_t>(s)] = n;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < static_cast<int>(graph_.nodes[static_cast<size_t>(i)].outputs.size()); ++k) {
      int& l = last[static_cast<size_t>(slot({i, k}))];
      if (l < 0) l = i;
    }
  return last;
}

// Outputs of ops whose kernels write preallocated outputs are Planned, or Fresh when they are
// results or strings (or nothing is planned); everything else is Set by its node.
void Program::classify_slots(const std::vector<int>& last_use, bool plan_memory) {
  const int n = static_cast<int>(graph_.nodes.size());
  slots_.resize(last_use.size());
  for (int i = 0; i < n; ++i) {
    const Node& node = graph_.nodes[static_cast<size_t>(i)];
    for (int k = 0; k < static_cast<int>(node.outputs.size()); ++k) {
      const size_t s = static_cast<size_t>(slot({i, k}));
      SlotInfo& info = slots_[s];
      info.spec = node.outputs[static_cast<size_t>(k)];
      if (node.kind != NodeKind::Op || node.def->dynamic_output_shape) continue;
      const bool result = last_use[s] == n;
      info.kind = plan_memory && !result && info.spec.dtype != DType::String ? SlotKind::Planned : SlotKind::Fresh;
    }
  }
}

void Program::compile_instructions(const std::vector<int>& last_use) {
  const int n = static_cast<int>(graph_.nodes.size());
  std::vector<std::vector<int>> dying(static_cast<size_t>(n));
  for (size_t s = 0; s < last_use.size(); ++s)
    if (last_use[s] < n) dying[static_cast<size_t>(last_use[s])].push_back(static_cast<int>(s));
  instructions_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Node& node = graph_.nodes[static_cast<size_t>(i)];
    Instruction& in = instructions_[static_cast<size_t>(i)];
    in.node = i;
    in.op = node.kind == NodeKind::Op;
    if (in.op) {
      in.def = node.def;
      in.attrs = &node.attrs->attrs();
      in.eager = node.def->dynamic_output_shape;
      in.random = node.def->random;
      for (int d = 0; d < kNumDeviceKinds; ++d) in.kernels[d] = node.def->kernels[d];
    }
    in.in_begin = static_cast<int>(in_slots_.size());
    for (Port p : node.inputs) in_slots_.push_back(slot(p));
    in.num_in = static_cast<int>(node.inputs.size());
    in.out_begin = node_slot_[static_cast<size_t>(i)];
    in.num_out = static_cast<int>(node.outputs.size());
    in.all_planned = in.op;
    for (int k = 0; k < in.num_out; ++k)
      in.all_planned = in.all_planned && slots_[static_cast<size_t>(in.out_begin + k)].kind == SlotKind::Planned;
    // Unplanned slots first: a replay that keeps the registers drops only those.
    in.drop_begin = static_cast<int>(drops_.size());
    for (int s : dying[static_cast<size_t>(i)])
      if (slots_[static_cast<size_t>(s)].kind != SlotKind::Planned) drops_.push_back(s);
    in.num_drop_unplanned = static_cast<int>(drops_.size()) - in.drop_begin;
    for (int s : dying[static_cast<size_t>(i)])
      if (slots_[static_cast<size_t>(s)].kind == SlotKind::Planned) drops_.push_back(s);
    in.num_drop = static_cast<int>(drops_.size()) - in.drop_begin;
  }
}

// Greedy in node order: a node's outputs take free registers of their (dtype, element count),
// most recently freed first (its buffer is likeliest to be in cache), or new ones; a register is
// free again after the last reader of its slot. A node's outputs are assigned before its inputs
// are freed, so a kernel never writes a buffer it reads.
void Program::plan_registers(const std::vector<int>& last_use) {
  const size_t n = graph_.nodes.size();
  std::map<std::pair<DType, int64_t>, std::vector<int>> free;
  std::vector<std::vector<int>> freed_after(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < graph_.nodes[i].outputs.size(); ++k) {
      const int s = node_slot_[i] + static_cast<int>(k);
      SlotInfo& info = slots_[static_cast<size_t>(s)];
      if (info.kind != SlotKind::Planned) continue;
      std::vector<int>& candidates = free[{info.spec.dtype, info.spec.shape.num_elements()}];
      if (candidates.empty()) {
        candidates.push_back(static_cast<int>(registers_.size()));
        registers_.push_back({info.spec.dtype, info.spec.shape.num_elements(), {}});
      }
      info.reg = candidates.back();
      candidates.pop_back();
      registers_[static_cast<size_t>(info.reg)].slots.push_back(s);
      freed_after[static_cast<size_t>(last_use[static_cast<size_t>(s)])].push_back(info.reg);
    }
    for (int r : freed_after[i]) {
      const Register& reg = registers_[static_cast<size_t>(r)];
      free[{reg.dtype, reg.elements}].push_back(r);
    }
  }
}

// ---- ReplayState ----

ReplayState::ReplayState(const Program& program)
    : program_(&program),
      slots_(program.slots().size()),
      in_ptrs_(program.in_slots().size()),
      registers_(program.registers().size()),
      owners_(program.registers().size()),
      spares_(program.registers().size()) {
  for (size_t k = 0; k < in_ptrs_.size(); ++k) in_ptrs_[k] = &slots_[static_cast<size_t>(program.in_slots()[k])];
  for (size_t r = 0; r < registers_.size(); ++r)
    registers_[r].expected_refs = 1 + static_cast<int32_t>(program.registers()[r].slots.size());
}

void ReplayState::begin(Device& home, bool keep) {
  keep_ = keep;
  if (home_ == &home) return;
  home_ = &home;
  for (Tensor& t : slots_) t = Tensor();
  for (size_t r = 0; r < owners_.size(); ++r) {
    owners_[r] = Tensor();
    registers_[r].buffer = nullptr;
    spares_[r] = Tensor();
  }
}

namespace {
// Whether `t` is a buffer on `home` that nobody but `t` references, so it may be overwritten. On a
// GPU that is safe too: the device orders every dispatch after the earlier ones (a barrier before
// each), so a later kernel's write cannot overtake an earlier kernel's read.
// Borrowed memory (Tensor::borrow_host: a read-only file mapping, say) is never written.
bool private_on(const Tensor& t, const Device* home) {
  return t.valid() && t.device() == home && t.buffer()->free_borrowed == nullptr &&
         t.buffer()->refs.load(std::memory_order_acquire) == 1;
}
}  // namespace

// Outputs of several kinds, or Planned ones on a device that is not the home device.
void ReplayState::prepare_mixed_outputs(const Instruction& in, Device& device) {
  Tensor* outs = outputs(in);
  const SlotInfo* info = program_->slots().data() + in.out_begin;
  for (int k = 0; k < in.num_out; ++k) {
    switch (info[k].kind) {
      case SlotKind::Planned: {
        if (!keep_ || &device != home_) {  // registers hold buffers of the home device only
          outs[k] = Tensor::allocate(device, info[k].spec.dtype, info[k].spec.shape);
          // This slot no longer views the register's buffer, so the buffer's reference count no
          // longer says whether something outside the slots (a variable assigned one of its values)
          // holds it: the next write of the register must refresh it. (An op on another host
          // device, e.g. a second logical CPU's constant, reaches here with keep_ set.)
          if (keep_) registers_[static_cast<size_t>(info[k].reg)].buffer = nullptr;
          break;
        }
        if (!holds_private_view(info[k].reg, outs[k])) refresh(info[k].reg);
        break;
      }
      case SlotKind::Fresh: outs[k] = Tensor::allocate(device, info[k].spec.dtype, info[k].spec.shape); break;
      case SlotKind::Set: break;
    }
  }
}

// Points every slot of register `r` at a private buffer: the current one when only we hold it,
// else the spare, else a new one. Other slots of the register are dead while one is written.
void ReplayState::refresh(int r) {
  const Register& reg = program_->registers()[static_cast<size_t>(r)];
  for (int s : reg.slots) slots_[static_cast<size_t>(s)] = Tensor();
  Tensor& owner = owners_[static_cast<size_t>(r)];
  Tensor& spare = spares_[static_cast<size_t>(r)];
  if (!private_on(owner, home_))
    owner = private_on(spare, home_) ? std::move(spare) : Tensor::allocate(*home_, reg.dtype, Shape{reg.elements});
  spare = Tensor();
  registers_[static_cast<size_t>(r)].buffer = owner.buffer();
  for (int s : reg.slots) slots_[static_cast<size_t>(s)] = owner.reshaped(program_->slots()[static_cast<size_t>(s)].spec.shape);
}

void ReplayState::offer(Tensor& old, Port written) {
  const SlotInfo& info = program_->slots()[static_cast<size_t>(program_->slot(written))];
  if (info.kind == SlotKind::Planned && private_on(old, home_)) {
    const Register& reg = program_->registers()[static_cast<size_t>(info.reg)];
    if (old.dtype() == reg.dtype && old.num_elements() == reg.elements) spares_[static_cast<size_t>(info.reg)] = std::move(old);
  }
  old = Tensor();
}

std::vector<Tensor> ReplayState::take_results() {
  std::vector<Tensor> out;
  out.reserve(program_->result_slots().size());
  for (int s : program_->result_slots()) out.push_back(slots_[static_cast<size_t>(s)]);
  for (int s : program_->result_slots()) slots_[static_cast<size_t>(s)] = Tensor();
  return out;
}

void ReplayState::clear() {
  for (size_t s = 0; s < slots_.size(); ++s)
    if (!keep_ || program_->slots()[s].kind != SlotKind::Planned) slots_[s] = Tensor();
}

// ---- execute ----

namespace {
// Whether every input after the first is on `device`, or on another host device when `device` is
// one (host memory is shared by host devices, such as the CPUs of two contexts). A kernel must
// never see another device's buffer: mixed inputs go through dispatch, which reports them.
bool inputs_on(const Tensor* const* ins, int n, const Device& device) {
  for (int k = 1; k < n; ++k) {
    const Device* d = ins[k]->device();
    if (d != &device && !(d->is_host() && device.is_host())) return false;
  }
  return true;
}

void run_op_instruction(Context& ctx, ThreadPool& pool, const Instruction& in, ReplayState& state, bool fast) {
  const Tensor* const* ins = state.inputs(in);
  Tensor* outs = state.outputs(in);
  if (fast && !in.eager) {
    // Attributes were resolved and shapes inferred at trace time; outputs come from the memory plan.
    // An op without inputs runs where eager dispatch would put it: the caller's device scope (a
    // replica's device), else the default device.
    Device& device = in.num_in > 0 ? *ins[0]->device() : scoped_device(ctx);
    KernelFn kernel = in.kernels[static_cast<int>(device.kind())];
    if (kernel && inputs_on(ins, in.num_in, device)) {
      // Errors name the op, as eager dispatch's do (an allocation failure says which op asked).
      try {
        state.prepare_outputs(in, device);
        KernelContext kc{*in.def, *in.attrs, device, pool, ins, in.num_in, outs, in.num_out};
        if (in.random) kc.random_seed = ctx.next_random_seed();
        kernel(kc);
      } catch (...) {
        rethrow_naming_op(*in.def);
      }
      return;
    }
  }
  // The full eager path: validates, re-infers shapes, lets hooks (a tape) see the op, and reports
  // a missing kernel or inputs on different devices.
  std::vector<NamedAttr> named = explicit_attrs(*in.attrs);
  run_op(ctx, *in.def, ins, in.num_in, named.data(), static_cast<int>(named.size()), outs, in.num_out);
}
}  // namespace

namespace {
// A node's name as graphdef.h names nodes ("MatMul_3"; a fused plan's nodes are "FusedElementwise_<k>").
std::string node_label(const Instruction& in, const Node& n) {
  return fmt::format("{}_{}",
                     in.def                     ? in.def->name.c_str()
                     : n.kind == NodeKind::Cond ? "If"  // TF's name, as in the GraphDef
                                                : node_kind_name(n.kind),
                     in.node);
}

void run_instruction(Context& ctx, ThreadPool& pool, const Instruction& in, ReplayState& state, bool fast,
                     GenericNodes& generic) {
  if (in.op) run_op_instruction(ctx, pool, in, state, fast);
  else generic.run(ctx, in, state, fast);
}

// The profiler is on: each node's host time (inputs and constants aside), named by node_label; the
// eager dispatch a node falls back to does not record it again.
[[gnu::noinline]] void execute_profiled(Context& ctx, ReplayState& state, bool fast, GenericNodes& generic) {
  ThreadPool& pool = ctx.pool();
  prof::ReplayScope scope;
  const Graph& graph = state.program().graph();
  std::string& label = prof::current_label();
  const std::string outer = label;  // a replay inside a Cond or While node of another replay
  for (const Instruction& in : state.program().instructions()) {
    const Node& n = graph.nodes[static_cast<size_t>(in.node)];
    if (n.kind == NodeKind::Input || n.kind == NodeKind::Constant) {  // no work of their own
      generic.run(ctx, in, state, fast);
      state.drop_after(in);
      continue;
    }
    label = node_label(in, n);
    const int64_t start = prof::now_ns();
    try {
      run_instruction(ctx, pool, in, state, fast, generic);
    } catch (...) {
      label = outer;
      throw;
    }
    const int64_t end = prof::now_ns();
    const Tensor* out = in.num_out > 0 ? &state.outputs(in)[0] : nullptr;
    prof::Event e;
    e.category = "graph";
    e.name = label;
    e.device = out && out->valid() ? out->device()->name() : ctx.default_device().name();
    e.start_ns = start;
    e.duration_ns = end - start;
    state.drop_after(in);
    prof::record(std::move(e));
  }
  label = outer;
}

NodeObserver*& node_observer() {
  static thread_local NodeObserver* observer = nullptr;
  return observer;
}

// A NodeObserver watches (a capture, which records rather than runs, so it is not profiled): tells
// it each node, every node included (a Constant's upload is its node's work), and hides the nodes
// of nested replays from it.
[[gnu::noinline]] void execute_observed(Context& ctx, ReplayState& state, bool fast, GenericNodes& generic) {
  ThreadPool& pool = ctx.pool();
  NodeObserver* observer = node_observer();
  const Graph& graph = state.program().graph();
  for (const Instruction& in : state.program().instructions()) {
    observer->node_begins(node_label(in, graph.nodes[static_cast<size_t>(in.node)]));
    node_observer() = nullptr;
    try {
      run_instruction(ctx, pool, in, state, fast, generic);
    } catch (...) {
      node_observer() = observer;
      throw;
    }
    node_observer() = observer;
    observer->node_ends();
    state.drop_after(in);
  }
}
}  // namespace

NodeObserver* exchange_node_observer(NodeObserver* observer) { return std::exchange(node_observer(), observer); }

ObserveNodes::ObserveNodes(NodeObserver& observer) : outer_(node_observer()) { node_observer() = &observer; }
ObserveNodes::~ObserveNodes() { node_observer() = outer_; }

void execute(Context& ctx, ReplayState& state, bool fast, GenericNodes& generic) {
  if (__builtin_expect(node_observer() != nullptr, 0)) return execute_observed(ctx, state, fast, generic);
  if (__builtin_expect(prof::on(), 0)) return execute_profiled(ctx, state, fast, generic);
  ThreadPool& pool = ctx.pool();
  for (const Instruction& in : state.program().instructions()) {
    if (in.op) run_op_instruction(ctx, pool, in, state, fast);
    else generic.run(ctx, in, state, fast);
    state.drop_after(in);
  }
}

}  // namespace cairn::graph
