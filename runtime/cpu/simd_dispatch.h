// Run-time choice of the instruction set for the float32/float64 elementwise loops.
//
// simd_loops_arch.cc is compiled once per instruction set (on x86-64 SSE2, AVX2+FMA and AVX-512,
// elsewhere the portable baseline alone; see runtime/cpu/BUILD) into a table of loops, one per
// fused step (the rows of elementwise_ops.h).
// The unfused kernels and the fused loop both call the selected table, so on one machine their
// results are bitwise equal; between instruction sets the transcendentals may differ in the last
// bits (FMA), within the bounds docs/simd.md states.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/fused_elementwise.h"
#include "runtime/cpu/simd.h"

namespace cairn {

// kPortable is xsimd's default architecture for the build's flags (NEON on aarch64): the only
// one off x86-64 (runtime/cpu/BUILD defines CAIRN_SIMD_X86 on x86-64).
enum class SimdArch { kPortable, kSse2, kAvx2, kAvx512 };

#if defined(CAIRN_SIMD_X86)
constexpr SimdArch kBaselineSimdArch = SimdArch::kSse2;
#else
constexpr SimdArch kBaselineSimdArch = SimdArch::kPortable;
#endif

// "portable", "sse2", "avx2" (with FMA) or "avx512".
const char* simd_arch_name(SimdArch arch);

template <class T> using UnaryLoopFn = void (*)(SimdOperand<T> a, T* out, int64_t n);
template <class T> using BinaryLoopFn = void (*)(SimdOperand<T> a, SimdOperand<T> b, T* out, int64_t n);

// The binary steps cheap enough that loading and storing each batch is most of their loop's work:
// runs of them with scalar operands go through one loop (ScalarRunFn).
constexpr bool is_scalar_run_step(int64_t step) {
  return step == graph::kStepAdd || step == graph::kStepSub || step == graph::kStepMul ||
         step == graph::kStepMaximum || step == graph::kStepMinimum;
}

// A step of a scalar run: a binary step for which is_scalar_run_step holds, whose operands are the
// run's value so far and the scalar `value`, in that order unless `scalar_first`.
template <class T>
struct ScalarRunStep {
  int64_t step;
  bool scalar_first;
  T value;
};

// out[i] = the steps applied in turn to a[i], for i in [0, n), keeping each batch in registers
// from one step to the next. Each step computes what its own loop in the same table computes (the
// same batch code; lanes never mix), so the results are bitwise those of the steps run one by one,
// as long as no scalar is NaN (fused_elementwise.cc keeps such steps out of runs: which NaN an
// addition keeps when both operands are NaN depends on the operand order the compiler chose).
template <class T>
using ScalarRunFn = void (*)(const ScalarRunStep<T>* steps, int n_steps, const T* a, T* out, int64_t n);

// One loop per fused step for one element type: unary[step], binary[step - kFirstBinaryStep]; and
// the loop for runs of cheap steps with scalar operands.
template <class T>
struct SimdLoopTable {
  UnaryLoopFn<T> unary[graph::kFirstBinaryStep] = {};
  BinaryLoopFn<T> binary[graph::kNumFusedSteps - graph::kFirstBinaryStep] = {};
  ScalarRunFn<T> scalar_run = nullptr;
};

struct SimdLoops {
  SimdArch arch;
  SimdLoopTable<float> f32;
  SimdLoopTable<double> f64;

  template <class T>
  const SimdLoopTable<T>& table() const {
    if constexpr (sizeof(T) == 4) return f32;
    else return f64;
  }
};

// The loops in use: the best instruction set this CPU (and its OS) supports, or the one the
// environment variable CAIRN_SIMD names (sse2, avx2, avx512; portable off x86-64), read once; a
// name that is unknown or that the CPU lacks is an error (InvalidArgument) on first use.
const SimdLoops& simd_loops();

// The instruction sets this CPU supports, baseline first.
std::vector<SimdArch> available_simd_archs();

// Switches the loops in use (tests and benchmarks: the same work on each instruction set).
// Throws InvalidArgument when the CPU lacks `arch`. Not to be called while kernels run.
void use_simd_arch(SimdArch arch);

// The per-instruction-set tables (simd_loops_arch.cc); only call those the CPU supports. The
// wide ones exist on x86-64 only.
const SimdLoops& simd_loops_baseline();
#if defined(CAIRN_SIMD_X86)
const SimdLoops& simd_loops_avx2();
const SimdLoops& simd_loops_avx512();
#endif

}  // namespace cairn
