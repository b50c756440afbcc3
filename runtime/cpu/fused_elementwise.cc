#include "runtime/cpu/fused_elementwise.h"

#include <algorithm>
#include <vector>

#include "runtime/cpu/simd_dispatch.h"
#include "runtime/core/error.h"
#include "runtime/core/thread_pool.h"

namespace cairn {
namespace {

using namespace graph;  // the FusedStep codes

// Elements per block: every step of the program runs over one block before the next block starts,
// so a block's intermediates stay in the L1 cache (4 KB of float32 per scratch slot).
constexpr int64_t kFusedBlock = 1024;
// Elements per parallel chunk (a multiple of kFusedBlock); chunks are fixed ranges of the output.
constexpr int64_t kGrain = 16 * kFusedBlock;

// Where a register lives: an input tensor (a scalar one is read at p[0] for every element), or a
// scratch slot of one block.
template <class T>
struct Register {
  const T* input = nullptr;  // null: the slot
  bool scalar = false;
  int64_t slot = -1;
};

// One step, resolved once per call: the unfused kernel's own loop (the same machine code, so even
// the NaN a step propagates is the unfused one: which operand's NaN an addition keeps depends on
// how the compiler ordered the operands) and its registers.
template <class T>
struct Step {
  UnaryLoopFn<T> unary;    // null for a binary step
  BinaryLoopFn<T> binary;  // null for a unary step
  int64_t a, b;            // operand registers (b = -1 for a unary step)
  int64_t dst_slot;        // unused for the last step, which writes the output
};

// A program ready to run: its steps and where each register lives. Slots are reused once every
// reader of a register has run (a step may write the slot it reads: the loops load each batch
// before storing it), so a chain needs one slot however long it is and a block stays in the L1 cache.
template <class T>
struct Compiled {
  std::vector<Step<T>> steps;
  std::vector<Register<T>> regs;
  int64_t num_slots = 0;
};

template <class T>
Compiled<T> compile(const KernelContext& kc, const AttrValue& program, const SimdLoopTable<T>& loops) {
  const int nin = kc.num_inputs;
  const int64_t steps = static_cast<int64_t>(program.n_ints / 3);
  const int64_t* prog = program.ints;
  Compiled<T> c;
  c.regs.resize(static_cast<size_t>(nin + steps));
  for (int i = 0; i < nin; ++i) {
    const Tensor& t = kc.input(i);
    c.regs[i].input = t.data<T>();
    c.regs[i].scalar = t.num_elements() == 1;
  }
  std::vector<int64_t> last_read(c.regs.size(), -1);
  for (int64_t j = 0; j < steps; ++j) {
    const int64_t* s = prog + 3 * j;
    const bool unary = s[0] >= 0 && s[0] < kFirstBinaryStep;
    const bool known = unary ? loops.unary[s[0]] != nullptr
                             : s[0] >= kFirstBinaryStep && s[0] < kNumFusedSteps &&
                                   loops.binary[s[0] - kFirstBinaryStep] != nullptr;
    if (!known) raise(Code::Internal, "FusedElementwise: unknown step {}", s[0]);
    for (int k = 1; k <= (unary ? 1 : 2); ++k) {
      if (s[k] < 0 || s[k] >= nin + j) raise(Code::Internal, "FusedElementwise: step {} reads register {}", j, s[k]);
      last_read[s[k]] = j;
    }
  }
  std::vector<int64_t> free_slots;
  for (int64_t j = 0; j < steps; ++j) {
    const int64_t* s = prog + 3 * j;
    const bool unary = s[0] < kFirstBinaryStep;
    for (int k = 1; k <= (unary ? 1 : 2); ++k) {
      const Register<T>& r = c.regs[s[k]];
      if (r.input == nullptr && last_read[s[k]] == j && (k == 1 || s[2] != s[1])) free_slots.push_back(r.slot);
    }
    Step<T> step{};
    step.a = s[1];
    step.b = unary ? -1 : s[2];
    if (unary) step.unary = loops.unary[s[0]];
    else step.binary = loops.binary[s[0] - kFirstBinaryStep];
    if (free_slots.empty()) free_slots.push_back(c.num_slots++);
    step.dst_slot = c.regs[nin + j].slot = free_slots.back();
    free_slots.pop_back();
    c.steps.push_back(step);
  }
  return c;
}

// Runs every step over [pos, pos + len).
template <class T>
void run_block(const Compiled<T>& c, T* slots, T* out, int64_t pos, int64_t len) {
  auto operand = [&](int64_t reg) -> SimdOperand<T> {
    const Register<T>& r = c.regs[reg];
    if (r.input == nullptr) return {slots + r.slot * kFusedBlock, false};
    return {r.scalar ? r.input : r.input + pos, r.scalar};
  };
  const size_t last = c.steps.size() - 1;
  for (size_t j = 0; j <= last; ++j) {
    const Step<T>& s = c.steps[j];
    T* dst = j == last ? out + pos : slots + s.dst_slot * kFusedBlock;
    const SimdOperand<T> a = operand(s.a);
    const SimdOperand<T> b = s.b < 0 ? a : operand(s.b);
    if (s.unary != nullptr) s.unary(a, dst, len);
    else s.binary(a, b, dst, len);
  }
}

template <class T>
void run_program(const KernelContext& kc, const AttrValue& program) {
  T* out = kc.output(0).mutable_data<T>();
  const int64_t n = kc.output(0).num_elements();
  // The unfused kernels' table (simd_dispatch.h), so fused and unfused results are bitwise equal.
  const Compiled<T> c = compile<T>(kc, program, simd_loops().table<T>());
  kc.pool.run(n, kGrain, [&](int64_t begin, int64_t end) {
    static thread_local std::vector<T> slots;
    const size_t need = static_cast<size_t>(c.num_slots * kFusedBlock);
    if (slots.size() < need) slots.resize(need);
    for (int64_t pos = begin; pos < end; pos += kFusedBlock)
      run_block(c, slots.data(), out, pos, std::min(kFusedBlock, end - pos));
  });
}

}  // namespace

void cpu_fused_elementwise_kernel(KernelContext& kc) {
  const AttrValue& program = kc.attrs.at(1);
  if (program.n_ints == 0 || program.n_ints % 3 != 0)
    raise(Code::Internal, "FusedElementwise: a program of {} ints is malformed", program.n_ints);
  switch (kc.output(0).dtype()) {
    case DType::Float32: return run_program<float>(kc, program);
    case DType::Float64: return run_program<double>(kc, program);
    default: raise(Code::Internal, "FusedElementwise: dtype {} is not fused", dtype_name(kc.output(0).dtype()));
  }
}

}  // namespace cairn
