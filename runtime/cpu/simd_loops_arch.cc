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

// Applies scalar-run step `st` to each of the batches `v...` (named variables, not an array, so
// that they stay in registers across the dispatch on the step).
template <class T, class... V>
CAIRN_SIMD_INLINE void scalar_run_step(const ScalarRunStep<T>& st, V&... v) {
  using B = Batch<T, SimdTarget>;
  const B c(st.value);
  switch (st.step) {
#define CAIRN_SCALAR_RUN_CASE(name, step, F, ...)                      \
  case step:                                                           \
    if constexpr (is_scalar_run_step(step)) {                          \
      if (st.scalar_first) ((v = apply_batch<T, SimdTarget>(F{}, c, v)), ...); \
      else ((v = apply_batch<T, SimdTarget>(F{}, v, c)), ...);         \
    }                                                                  \
    break;
    CAIRN_FUSIBLE_BINARY_OPS(CAIRN_SCALAR_RUN_CASE)
#undef CAIRN_SCALAR_RUN_CASE
    default: break;
  }
}

template <class T>
CAIRN_SIMD_LOOP void scalar_run(const ScalarRunStep<T>* steps, int n_steps, const T* a, T* out, int64_t n) {
  using B = Batch<T, SimdTarget>;
  constexpr int64_t L = B::size;
  const simd_detail::LoopOperand<T, SimdTarget, false> x(a);
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {  // four batches per dispatch on each step
    B v0 = x.at(i), v1 = x.at(i + L), v2 = x.at(i + 2 * L), v3 = x.at(i + 3 * L);
    for (int s = 0; s < n_steps; ++s) scalar_run_step<T>(steps[s], v0, v1, v2, v3);
    v0.store_unaligned(out + i);
    v1.store_unaligned(out + i + L);
    v2.store_unaligned(out + i + 2 * L);
    v3.store_unaligned(out + i + 3 * L);
  }
  for (; i + L <= n; i += L) {
    B v = x.at(i);
    for (int s = 0; s < n_steps; ++s) scalar_run_step<T>(steps[s], v);
    v.store_unaligned(out + i);
  }
  if (i < n) {  // the last elements, padded to a batch as the steps' own loops pad them
    B v = x.tail(i, n - i);
    for (int s = 0; s < n_steps; ++s) scalar_run_step<T>(steps[s], v);
    simd_detail::store_tail<T, SimdTarget>(v, out + i, n - i);
  }
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
  t.scalar_run = &scalar_run<T>;
  return t;
}

}  // namespace

const SimdLoops& CAIRN_SIMD_LOOPS() {
  static const SimdLoops loops{kSimdTarget, make_table<float>(), make_table<double>()};
  return loops;
}

}  // namespace cairn
