#include "runtime/cpu/fused_elementwise.h"

#include <algorithm>
#include <vector>

#include "runtime/cpu/simd_dispatch.h"
#include "runtime/core/error.h"
#include "runtime/core/thread_pool.h"

namespace cairn {
namespace {

using namespace graph;  // the FusedStep codes

// Elements per block: a block's registers (one per step) stay in the L1/L2 cache.
constexpr int64_t kBlock = 512;
// Elements per parallel chunk (a multiple of kBlock); chunks are fixed ranges of the output.
constexpr int64_t kGrain = 32 * kBlock;

template <class T>
void run_program(const KernelContext& kc, const AttrValue& program) {
  const int nin = kc.num_inputs;
  const int64_t steps = static_cast<int64_t>(program.n_ints / 3);
  const int64_t* prog = program.ints;
  T* out = kc.output(0).mutable_data<T>();
  const int64_t n = kc.output(0).num_elements();
  // The unfused kernels' loops (simd_dispatch.h), so fused and unfused results are bitwise equal.
  const SimdLoopTable<T>& loops = simd_loops().table<T>();
  for (int64_t j = 0; j < steps; ++j) {
    const int64_t step = prog[3 * j];
    const bool known = step >= 0 && step < kNumFusedSteps &&
                       (step < kFirstBinaryStep ? loops.unary[step] != nullptr
                                                : loops.binary[step - kFirstBinaryStep] != nullptr);
    if (!known) raise(Code::Internal, "FusedElementwise: unknown step {}", step);
  }
  kc.pool.run(n, kGrain, [&](int64_t begin, int64_t end) {
    static thread_local std::vector<T> scratch;
    if (scratch.size() < static_cast<size_t>(steps * kBlock)) scratch.resize(static_cast<size_t>(steps * kBlock));
    for (int64_t pos = begin; pos < end; pos += kBlock) {
      const int64_t len = std::min(kBlock, end - pos);
      auto operand = [&](int64_t reg) -> SimdOperand<T> {
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
        if (s[0] < kFirstBinaryStep) loops.unary[s[0]](operand(s[1]), dst, len);
        else loops.binary[s[0] - kFirstBinaryStep](operand(s[1]), operand(s[2]), dst, len);
      }
    }
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
