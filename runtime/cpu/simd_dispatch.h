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

// One loop per fused step for one element type: unary[step], binary[step - kFirstBinaryStep].
template <class T>
struct SimdLoopTable {
  UnaryLoopFn<T> unary[graph::kFirstBinaryStep] = {};
  BinaryLoopFn<T> binary[graph::kNumFusedSteps - graph::kFirstBinaryStep] = {};
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
