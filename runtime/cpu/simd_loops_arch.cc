// The table of elementwise loops for one instruction set. runtime/cpu/BUILD compiles this file
// once per instruction set, each with its flags and one of CAIRN_SIMD_TARGET_BASELINE (SSE2 on
// x86-64, xsimd's default architecture elsewhere), _AVX2 and _AVX512 (x86-64 only) defined;
// simd_dispatch.cc picks a table at run time.
//
// Only functors with a batch form are instantiated here: the lane-by-lane ones would instantiate
// their scalar operator() (one symbol shared with every other translation unit), and a copy built
// with AVX-512 flags must never be the one the linker keeps. The other targets take those steps
// from the baseline table.
#include "runtime/cpu/elementwise_ops.h"
#include "runtime/cpu/simd_dispatch.h"

#if defined(CAIRN_SIMD_TARGET_BASELINE)
#define CAIRN_SIMD_LOOPS simd_loops_baseline
using SimdTarget = xsimd::default_arch;
constexpr cairn::SimdArch kSimdTarget = cairn::kBaselineSimdArch;
#elif defined(CAIRN_SIMD_TARGET_AVX2)
#define CAIRN_SIMD_LOOPS simd_loops_avx2
using SimdTarget = xsimd::fma3<xsimd::avx2>;
constexpr cairn::SimdArch kSimdTarget = cairn::SimdArch::kAvx2;
#elif defined(CAIRN_SIMD_TARGET_AVX512)
#define CAIRN_SIMD_LOOPS simd_loops_avx512
using SimdTarget = xsimd::avx512bw;
constexpr cairn::SimdArch kSimdTarget = cairn::SimdArch::kAvx512;
#else
#error "define one of CAIRN_SIMD_TARGET_BASELINE, CAIRN_SIMD_TARGET_AVX2, CAIRN_SIMD_TARGET_AVX512"
#endif

namespace cairn {
namespace {

using namespace graph;  // the FusedStep codes in the table's rows

constexpr bool kBaseline = kSimdTarget == kBaselineSimdArch;

template <class T, class F>
void unary_loop(SimdOperand<T> a, T* out, int64_t n) {
  simd_unary<T, SimdTarget>(F{}, a, out, n);
}

template <class T, class F>
void binary_loop(SimdOperand<T> a, SimdOperand<T> b, T* out, int64_t n) {
  simd_binary<T, SimdTarget>(F{}, a, b, out, n);
}

template <class T>
SimdLoopTable<T> make_table() {
  SimdLoopTable<T> t;
  if constexpr (!kBaseline) t = simd_loops_baseline().table<T>();  // the lane-by-lane steps
#define CAIRN_SIMD_UNARY_LOOP(name, step, F, ...) \
  if constexpr (kBaseline || has_simd_v<F>) t.unary[step] = &unary_loop<T, F>;
  CAIRN_FUSIBLE_UNARY_OPS(CAIRN_SIMD_UNARY_LOOP)
#undef CAIRN_SIMD_UNARY_LOOP
#define CAIRN_SIMD_BINARY_LOOP(name, step, F, ...) \
  if constexpr (kBaseline || has_simd_v<F>) t.binary[step - kFirstBinaryStep] = &binary_loop<T, F>;
  CAIRN_FUSIBLE_BINARY_OPS(CAIRN_SIMD_BINARY_LOOP)
#undef CAIRN_SIMD_BINARY_LOOP
  return t;
}

}  // namespace

const SimdLoops& CAIRN_SIMD_LOOPS() {
  static const SimdLoops loops{kSimdTarget, make_table<float>(), make_table<double>()};
  return loops;
}

}  // namespace cairn
