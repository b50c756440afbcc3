#include "runtime/cpu/fused_elementwise.h"

#include <algorithm>
#include <cmath>
#include <optional>
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

// Steps [first, last] run one after another; a run of more than one step is a scalar run: cheap
// steps (is_scalar_run_step) each reading the step before (the first reads register `source`) and
// a scalar, which the table's scalar_run loop runs keeping each batch in registers.
struct Run {
  int64_t first, last;
  int64_t source = -1;
  int64_t scalar_begin = 0, scalar_count = 0;  // its steps in Compiled::scalar_steps
};

// A program ready to run: its steps, grouped into runs, and where each register lives. Slots are
// reused once every reader of a register has run (a step may write the slot it reads: the loops
// load each batch before storing it), so a chain needs one slot however long it is and a block
// stays in the L1 cache.
template <class T>
struct Compiled {
  std::vector<Step<T>> steps;
  std::vector<Run> runs;
  std::vector<ScalarRunStep<T>> scalar_steps;
  std::vector<Register<T>> regs;
  int64_t num_slots = 0;
  ScalarRunFn<T> scalar_run = nullptr;
};

// Groups the steps into runs (see Run). `reads` counts the reads of each register.
template <class T>
void group_runs(Compiled<T>& c, const int64_t* prog, int nin, const std::vector<int64_t>& reads) {
  auto is_scalar = [&](int64_t reg) { return c.regs[reg].input != nullptr && c.regs[reg].scalar; };
  // Step j as a scalar-run step reading `value` (any register for a run's first step, else the
  // step before, read by nothing else), or nothing.
  auto as_scalar_step = [&](int64_t j, bool first, int64_t* value) -> std::optional<ScalarRunStep<T>> {
    const int64_t* s = prog + 3 * j;
    if (c.scalar_run == nullptr || !is_scalar_run_step(s[0])) return std::nullopt;
    const bool scalar_first = is_scalar(s[1]);
    const int64_t other = scalar_first ? s[2] : s[1];
    const int64_t scalar = scalar_first ? s[1] : s[2];
    if (!is_scalar(scalar) || is_scalar(other)) return std::nullopt;
    if (!first && (other != nin + j - 1 || reads[other] != 1)) return std::nullopt;
    // Which NaN an addition or a multiplication keeps when both operands are NaN depends on the
    // operand order the compiler chose, which differs between this loop and the step's own. With
    // a scalar that is not NaN, a NaN result has one possible source.
    const T k = c.regs[scalar].input[0];
    if (std::isnan(k)) return std::nullopt;
    *value = other;
    return ScalarRunStep<T>{s[0], scalar_first, k};
  };
  const int64_t steps = static_cast<int64_t>(c.steps.size());
  c.runs.reserve(static_cast<size_t>(steps));
  for (int64_t j = 0; j < steps; ++j) {
    int64_t value = -1;
    if (!c.runs.empty() && c.runs.back().scalar_count > 0)
      if (auto step = as_scalar_step(j, false, &value)) {
        c.scalar_steps.push_back(*step);
        ++c.runs.back().scalar_count;
        c.runs.back().last = j;
        continue;
      }
    Run run{j, j};
    if (auto step = as_scalar_step(j, true, &value)) {
      run.source = value;
      run.scalar_begin = static_cast<int64_t>(c.scalar_steps.size());
      run.scalar_count = 1;
      c.scalar_steps.push_back(*step);
    }
    c.runs.push_back(run);
  }
}

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
  std::vector<int64_t> last_read(c.regs.size(), -1), reads(c.regs.size(), 0);
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
      ++reads[s[k]];
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
  c.scalar_run = loops.scalar_run;
  group_runs(c, prog, nin, reads);
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
  const int64_t last = static_cast<int64_t>(c.steps.size()) - 1;
  for (const Run& run : c.runs) {
    T* dst = run.last == last ? out + pos : slots + c.steps[run.last].dst_slot * kFusedBlock;
    if (run.first < run.last) {
      c.scalar_run(c.scalar_steps.data() + run.scalar_begin, static_cast<int>(run.scalar_count), operand(run.source).p,
                   dst, len);
      continue;
    }
    const Step<T>& s = c.steps[run.first];
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
