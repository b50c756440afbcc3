// SIMD loops for the float32/float64 elementwise functors (runtime/cpu/elementwise_ops.h), shared by
// the unfused kernels and the fused loop so both compute every element with the same code.
//
// Instruction set: xsimd's default architecture for the build flags, which are the x86-64 baseline
// (SSE2: 4 floats or 2 doubles per batch); see docs/simd.md for the choice and the accuracy.
//
// Every element goes through the batch code, the ragged end of a range included (it is padded to
// one batch), so an element's result never depends on where a thread's range starts or ends.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace cairn {

template <class T>
using Batch = xsimd::batch<T>;

template <class T> constexpr bool is_simd_float_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class V> struct is_batch : std::false_type {};
template <class T, class A> struct is_batch<xsimd::batch<T, A>> : std::true_type {};
template <class V> constexpr bool is_batch_v = is_batch<V>::value;

// A functor opts into batches with `static constexpr bool simd = true` (its float operator()
// compiles for Batch<T>). Others run lane by lane on the scalar operator(), which gives the same
// results as calling them directly.
template <class F, class = void> struct has_simd : std::false_type {};
template <class F> struct has_simd<F, std::void_t<decltype(F::simd)>> : std::bool_constant<F::simd> {};
template <class F> constexpr bool has_simd_v = has_simd<F>::value;

// `cond ? a : b` for scalars and batches alike, so a functor is written once.
template <class V>
V pick(bool cond, V a, V b) { return cond ? a : b; }
template <class T, class A>
xsimd::batch<T, A> pick(xsimd::batch_bool<T, A> cond, xsimd::batch<T, A> a, xsimd::batch<T, A> b) {
  return xsimd::select(cond, a, b);
}

template <class T, class F>
Batch<T> apply_batch(F f, Batch<T> x) {
  if constexpr (has_simd_v<F>) {
    return f(x);
  } else {
    alignas(64) T lane[Batch<T>::size];
    x.store_aligned(lane);
    for (T& v : lane) v = f(v);
    return Batch<T>::load_aligned(lane);
  }
}

template <class T, class F>
Batch<T> apply_batch(F f, Batch<T> x, Batch<T> y) {
  if constexpr (has_simd_v<F>) {
    return f(x, y);
  } else {
    alignas(64) T a[Batch<T>::size], b[Batch<T>::size];
    x.store_aligned(a);
    y.store_aligned(b);
    for (size_t i = 0; i < Batch<T>::size; ++i) a[i] = f(a[i], b[i]);
    return Batch<T>::load_aligned(a);
  }
}

// Replaces the lanes of `r` where `outside(x)` holds with libm's `fn(x)`: for the inputs where an
// xsimd function is inaccurate. The test is one compare and one branch per batch.
template <class V, class Outside, class Fn>
V with_libm_lanes(V x, V r, Outside outside, Fn fn) {
  using T = typename V::value_type;
  if (!xsimd::any(outside(x))) return r;
  alignas(64) T in[V::size], out[V::size];
  x.store_aligned(in);
  r.store_aligned(out);
  for (size_t i = 0; i < V::size; ++i)
    if (outside(in[i])) out[i] = fn(in[i]);
  return V::load_aligned(out);
}

// exp, log and erf for scalars (libm) and batches (xsimd, libm where xsimd is inaccurate):
// - exp: xsimd's is accurate while the 2^k of its range reduction is a normal number; beyond, it
//   overflows early (float exp(88.5) gives inf, double exp(709.7) too) and flushes subnormal
//   results to zero. Lanes outside [-87, 88] (float) or [-708, 709] (double) use libm.
// - log: xsimd's double log is wrong for subnormal inputs; lanes below the smallest normal number
//   (zero and negatives included) use libm.
// - erf: xsimd's double erf gives NaN for huge inputs; lanes with |x| > 6 (where erf is +-1 to
//   the last bit) use libm.
template <class V> struct lane_type { using type = V; };
template <class T, class A> struct lane_type<xsimd::batch<T, A>> { using type = T; };

// On batches, xsimd's `simd_fn` with libm's `libm_fn` for the lanes outside [lo, hi] (NaN stays
// with xsimd); on scalars, libm.
template <class V, class SimdFn, class LibmFn>
V xsimd_within(V x, double lo, double hi, SimdFn simd_fn, LibmFn libm_fn) {
  if constexpr (is_batch_v<V>) {
    using T = typename V::value_type;
    const T l = static_cast<T>(lo), h = static_cast<T>(hi);
    auto outside = [&](auto v) {
      using W = decltype(v);  // a lane or the whole batch
      return (v < W(l)) | (v > W(h));
    };
    return with_libm_lanes(x, simd_fn(x), outside, libm_fn);
  } else {
    return libm_fn(x);
  }
}

template <class V>
V exp_any(V x) {
  const bool is_float = sizeof(typename lane_type<V>::type) == 4;
  return xsimd_within(x, is_float ? -87.0 : -708.0, is_float ? 88.0 : 709.0, [](auto b) { return xsimd::exp(b); },
                      [](auto v) { using std::exp; return exp(v); });
}

template <class V>
V log_any(V x) {
  using T = typename lane_type<V>::type;
  double smallest = 0;
  if constexpr (std::is_floating_point_v<T>) smallest = static_cast<double>(std::numeric_limits<T>::min());
  return xsimd_within(x, smallest, HUGE_VAL, [](auto b) { return xsimd::log(b); },
                      [](auto v) { using std::log; return log(v); });
}

template <class V>
V erf_any(V x) {
  return xsimd_within(x, -6.0, 6.0, [](auto b) { return xsimd::erf(b); }, [](auto v) { using std::erf; return erf(v); });
}

// One operand of a loop: `p[i]` for a full operand, `p[0]` for every element of a scalar one.
template <class T>
struct SimdOperand {
  const T* p;
  bool scalar;
};

namespace simd_detail {

template <class T, bool Scalar>
Batch<T> load(const T* p, int64_t i) {
  if constexpr (Scalar) return Batch<T>(p[0]);
  else return Batch<T>::load_unaligned(p + i);
}

// A padded copy of the last `rem` (< one batch) elements of a full operand, or the scalar.
template <class T, bool Scalar>
Batch<T> load_tail(const T* p, int64_t i, int64_t rem) {
  if constexpr (Scalar) {
    return Batch<T>(p[0]);
  } else {
    alignas(64) T lane[Batch<T>::size] = {};
    std::copy(p + i, p + i + rem, lane);
    return Batch<T>::load_aligned(lane);
  }
}

template <class T>
void store_tail(Batch<T> v, T* out, int64_t rem) {
  alignas(64) T lane[Batch<T>::size];
  v.store_aligned(lane);
  std::copy(lane, lane + rem, out);
}

template <class T, bool SA, class F>
void unary_loop(F f, const T* a, T* out, int64_t n) {
  constexpr int64_t kLanes = Batch<T>::size;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) apply_batch<T>(f, load<T, SA>(a, i)).store_unaligned(out + i);
  if (i < n) store_tail(apply_batch<T>(f, load_tail<T, SA>(a, i, n - i)), out + i, n - i);
}

template <class T, bool SA, bool SB, class F>
void binary_loop(F f, const T* a, const T* b, T* out, int64_t n) {
  constexpr int64_t kLanes = Batch<T>::size;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    apply_batch<T>(f, load<T, SA>(a, i), load<T, SB>(b, i)).store_unaligned(out + i);
  if (i < n)
    store_tail(apply_batch<T>(f, load_tail<T, SA>(a, i, n - i), load_tail<T, SB>(b, i, n - i)), out + i, n - i);
}

}  // namespace simd_detail

// out[i] = f(a[i]) for i in [0, n).
template <class T, class F>
void simd_unary(F f, SimdOperand<T> a, T* out, int64_t n) {
  if (a.scalar) simd_detail::unary_loop<T, true>(f, a.p, out, n);
  else simd_detail::unary_loop<T, false>(f, a.p, out, n);
}

// out[i] = f(a[i], b[i]) for i in [0, n).
template <class T, class F>
void simd_binary(F f, SimdOperand<T> a, SimdOperand<T> b, T* out, int64_t n) {
  using namespace simd_detail;
  if (!a.scalar && !b.scalar) binary_loop<T, false, false>(f, a.p, b.p, out, n);
  else if (a.scalar && !b.scalar) binary_loop<T, true, false>(f, a.p, b.p, out, n);
  else if (!a.scalar) binary_loop<T, false, true>(f, a.p, b.p, out, n);
  else binary_loop<T, true, true>(f, a.p, b.p, out, n);
}

}  // namespace cairn
