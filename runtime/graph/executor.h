// The replay engine behind ConcreteFunction: a graph compiled once into a flat list of
// instructions over one array of tensor slots, with a memory plan for the intermediates.
//
// Every output of every node has a slot; a node's outputs are adjacent, so a kernel's output array
// is a pointer into the slot array. An op instruction carries what a kernel call needs, resolved at
// compile time (kernel per device kind, attributes, input slots, output specs), so the replay fast
// path (exact shapes, no dispatch hooks) does for an op node: look up the kernel of the first
// input's device, check that the output buffers are still private, build a KernelContext, call the
// kernel, and drop slots whose last reader it was.
//
// Memory plan: each op output that is neither a result nor a string gets a register, a buffer
// shared with other outputs of the same dtype and element count whose lifetimes do not overlap
// (greedy, in node order). A ReplayState keeps one buffer per register across replays, and the
// slots of a register keep views of it, so in steady state an op node allocates nothing. Before a
// kernel writes a register's buffer the state checks that nothing outside its own slots holds a
// reference (a variable that was assigned the value, a tensor a generic node passed on); if
// something does, the register gets another buffer, so a value still referenced elsewhere is
// never overwritten. A variable's replaced value becomes the register's next buffer (see
// ReplayState::offer), so a variable update each step allocates nothing either.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/graph/graph.h"

namespace cairn::graph {

// Where the tensor of a slot comes from on the fast path.
enum class SlotKind : uint8_t {
  Planned,  // an op output in a register: a view of the register's buffer, kept across replays
  Fresh,    // an op output allocated on every replay (a result, a string, a non-host device)
  Set,      // written by its node: inputs, constants, reads, ops whose kernel allocates, other kinds
};

struct SlotInfo {
  SlotKind kind = SlotKind::Set;
  int reg = -1;  // Planned: its register
  TensorSpec spec;
};

// A buffer of the memory plan and the slots that take turns using it.
struct Register {
  DType dtype = DType::Invalid;
  int64_t elements = 0;
  std::vector<int> slots;
};

struct Instruction {
  int node = 0;
  bool op = false;     // a registered op; otherwise the node runs through the generic path
  bool eager = false;  // an op that always goes through full dispatch (its kernel sizes its outputs)
  bool random = false;
  bool all_planned = false;  // every output is Planned (the common case, checked without a switch)
  const OpDef* def = nullptr;
  const Attrs* attrs = nullptr;
  KernelFn kernels[kNumDeviceKinds] = {};
  int in_begin = 0, num_in = 0;  // Program::in_slots[in_begin, +num_in)
  int out_begin = 0, num_out = 0;  // slots [out_begin, +num_out)
  // Program::drops[drop_begin, +num_drop): slots whose last reader this is; the first
  // num_drop_unplanned of them are not Planned (a replay that keeps Planned slots drops only those).
  int drop_begin = 0, num_drop_unplanned = 0, num_drop = 0;
};

class Program {
 public:
  // `graph` must outlive the program. With `plan_memory` (exact shapes) op outputs get registers.
  Program(const Graph& graph, bool plan_memory);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const Graph& graph() const { return graph_; }
  const std::vector<Instruction>& instructions() const { return instructions_; }
  const std::vector<SlotInfo>& slots() const { return slots_; }
  const std::vector<int>& slot_registers() const { return slot_registers_; }  // per slot: its register or -1
  const std::vector<Register>& registers() const { return registers_; }
  const std::vector<int>& in_slots() const { return in_slots_; }
  const std::vector<int>& drops() const { return drops_; }
  const std::vector<int>& result_slots() const { return result_slots_; }
  int slot(Port p) const { return node_slot_[static_cast<size_t>(p.node)] + p.output; }

 private:
  std::vector<int> last_uses(int num_slots) const;
  void classify_slots(const std::vector<int>& last_use, bool plan_memory);
  void plan_registers(const std::vector<int>& last_use);
  void compile_instructions(const std::vector<int>& last_use);

  const Graph& graph_;
  std::vector<Instruction> instructions_;  // one per node, in node order
  std::vector<SlotInfo> slots_;
  std::vector<int> slot_registers_;
  std::vector<int> node_slot_;  // per node: its first slot
  std::vector<Register> registers_;
  std::vector<int> in_slots_;
  std::vector<int> drops_;
  std::vector<int> result_slots_;  // per function output
};

// What one replay needs besides the program: the slots, the input pointer arrays and the register
// buffers, kept between replays. One caller uses a state at a time.
class ReplayState {
 public:
  explicit ReplayState(const Program& program);
  ReplayState(const ReplayState&) = delete;
  ReplayState& operator=(const ReplayState&) = delete;

  const Program& program() const { return *program_; }
  Tensor& value(Port p) { return slots_[static_cast<size_t>(program_->slot(p))]; }
  const Tensor* const* inputs(const Instruction& in) const { return in_ptrs_.data() + in.in_begin; }
  Tensor* outputs(const Instruction& in) { return slots_.data() + in.out_begin; }

  // Called before each replay. `home` is the device the replay's inputs are on, where the
  // registers live (a state last used with another device forgets its buffers). With `keep`,
  // Planned outputs use the registers and their slots are kept after the replay, so steady-state
  // replays allocate only their results, on the CPU and on a GPU alike; without (hooks, unknown
  // dims, inputs on several devices), every op output is allocated by the replay and every slot
  // dropped after its last reader.
  void begin(Device& home, bool keep);
  // Gets the output slots of an op instruction ready for its kernel on `device`.
  void prepare_outputs(const Instruction& in, Device& device) {
    if (!in.all_planned || !keep_ || &device != home_) return prepare_mixed_outputs(in, device);
    Tensor* outs = outputs(in);
    const int* reg = program_->slot_registers().data() + in.out_begin;
    for (int k = 0; k < in.num_out; ++k)
      if (!holds_private_view(reg[k], outs[k])) refresh(reg[k]);
  }
  // Empties the slots whose last reader `in` is, except Planned ones while they are kept.
  void drop_after(const Instruction& in) {
    const int n = keep_ ? in.num_drop_unplanned : in.num_drop;
    const int* d = program_->drops().data() + in.drop_begin;
    for (int k = 0; k < n; ++k) slots_[static_cast<size_t>(d[k])] = Tensor();
  }
  // Takes `old`, a variable's value just replaced by the value in `written`: when nothing else
  // holds it, it becomes the next buffer of `written`'s register (a fast replay's variable update
  // then allocates nothing). Empties `old`.
  void offer(Tensor& old, Port written);
  // The function's results, leaving their slots empty.
  std::vector<Tensor> take_results();
  // After a replay that threw: empties every slot a replay does not keep.
  void clear();

 private:
  // What the output check reads for one register, packed together.
  struct RegisterState {
    Buffer* buffer = nullptr;   // owners_[r].buffer()
    int32_t expected_refs = 0;  // the owner's reference plus one per slot of the register
  };
  // Whether `out` still views register `r`'s buffer and only our slots reference that buffer.
  bool holds_private_view(int r, const Tensor& out) const {
    const RegisterState& reg = registers_[static_cast<size_t>(r)];
    return reg.buffer != nullptr && out.buffer() == reg.buffer &&
           reg.buffer->refs.load(std::memory_order_acquire) == reg.expected_refs;
  }
  void prepare_mixed_outputs(const Instruction& in, Device& device);
  void refresh(int reg);

  const Program* program_;
  Device* home_ = nullptr;  // where the registers' buffers live
  bool keep_ = false;
  std::vector<Tensor> slots_;
  std::vector<const Tensor*> in_ptrs_;  // per instruction input: its slot
  std::vector<RegisterState> registers_;
  std::vector<Tensor> owners_;  // per register: its buffer
  std::vector<Tensor> spares_;  // per register: a buffer for its next refresh
};

// Runs the nodes a Program cannot run itself (every kind but Op).
class GenericNodes {
 public:
  virtual void run(Context& ctx, const Instruction& in, ReplayState& state, bool fast) = 0;

 protected:
  ~GenericNodes() = default;
};

// Told where each node's work starts and ends while a replay runs on this thread (a Vulkan capture
// learns its nodes' commands this way: a chunk of a frame budget never splits a node). Nodes of a
// replay nested inside a node (a called function, a branch) belong to that node and are not told.
class NodeObserver {
 public:
  // `label` names the node as the profiler does ("MatMul_3", "FusedElementwise_0"); valid during
  // the call only.
  virtual void node_begins(const std::string& label) = 0;
  virtual void node_ends() = 0;

 protected:
  ~NodeObserver() = default;
};

// Replaces the observer this thread's replays tell (nullptr: none) and returns the one before. An
// eager op that a capture counts as one node hides the replays it runs inside this way.
NodeObserver* exchange_node_observer(NodeObserver* observer);

// Makes `observer` see the nodes of the replays this thread runs while the scope lives.
class ObserveNodes {
 public:
  explicit ObserveNodes(NodeObserver& observer);
  ~ObserveNodes();
  ObserveNodes(const ObserveNodes&) = delete;
  ObserveNodes& operator=(const ObserveNodes&) = delete;

 private:
  NodeObserver* outer_;
};

// Runs every instruction of the state's program (after state.begin). `fast`: exact shapes and no
// dispatch hooks, so op nodes call their kernels directly; otherwise each op goes through full
// eager dispatch.
void execute(Context& ctx, ReplayState& state, bool fast, GenericNodes& generic);

}  // namespace cairn::graph
