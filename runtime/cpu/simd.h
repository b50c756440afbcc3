// SIMD loops for the float32/float64 elementwise functors (runtime/cpu/elementwise_ops.h), shared by
// the unfused kernels and the fused loop so both compute every element with the same code.
//
// Instruction set: the loops are templates on an xsimd architecture `A`. simd_loops_arch.cc
// instantiates them once per instruction set (SSE2, AVX2+FMA, AVX-512) in its own translation
// unit built with that set's flags, and simd_dispatch.h picks one at startup; the default `A` is
// the build's own baseline (SSE2). See docs/simd.md for the choice and the accuracy.
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

template <class T, class A = xsimd::default_arch>
using Batch = xsimd::batch<T, A>;

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

// `a > b ? a : b` and `a < b ? a : b` for scalars and batches. On x86 a batch takes one maxps /
// minps, which is defined as exactly that (the second operand for NaN and for equal zeros), where
// pick() needs a compare and a blend; other architectures' max differs on zeros and NaN.
template <class A>
constexpr bool is_x86_arch_v =
    std::is_base_of_v<xsimd::sse2, A> || std::is_base_of_v<xsimd::avx, A> || std::is_base_of_v<xsimd::avx512f, A>;
template <class V>
V greater_of(V a, V b) {
  if constexpr (is_batch_v<V>) {
    if constexpr (is_x86_arch_v<typename V::arch_type>) return xsimd::max(a, b);
    else return xsimd::select(a > b, a, b);
  } else {
    return a > b ? a : b;
  }
}
template <class V>
V less_of(V a, V b) {
  if constexpr (is_batch_v<V>) {
    if constexpr (is_x86_arch_v<typename V::arch_type>) return xsimd::min(a, b);
    else return xsimd::select(a < b, a, b);
  } else {
    return a < b ? a : b;
  }
}

// Forced inline (like the helpers the functors call on batches): out of line, every batch would
// pay a call and spill its registers, and GCC's size heuristics give up on the larger functors.
#define CAIRN_SIMD_INLINE inline __attribute__((always_inline))
// On the loops: everything they call is inlined into them (the functors' operator() included,
// which GCC otherwise keeps out of line for Sigmoid and Tanh, paying a call, a stack realignment
// and a spill per batch), except what is marked noinline (the cold libm lanes).
#define CAIRN_SIMD_LOOP __attribute__((flatten))
// On the batch loops: a cheap step (a load, one operation, a store per batch) otherwise spends half
// its instructions on the loop's counter, compare and branch.
#define CAIRN_SIMD_UNROLL _Pragma("GCC unroll 4")

template <class T, class A, class F>
CAIRN_SIMD_INLINE Batch<T, A> apply_batch(F f, Batch<T, A> x) {
  if constexpr (has_simd_v<F>) {
    return f(x);
  } else {
    alignas(64) T lane[Batch<T, A>::size];
    x.store_aligned(lane);
    for (T& v : lane) v = f(v);
    return Batch<T, A>::load_aligned(lane);
  }
}

template <class T, class A, class F>
CAIRN_SIMD_INLINE Batch<T, A> apply_batch(F f, Batch<T, A> x, Batch<T, A> y) {
  if constexpr (has_simd_v<F>) {
    return f(x, y);
  } else {
    alignas(64) T a[Batch<T, A>::size], b[Batch<T, A>::size];
    x.store_aligned(a);
    y.store_aligned(b);
    for (size_t i = 0; i < Batch<T, A>::size; ++i) a[i] = f(a[i], b[i]);
    return Batch<T, A>::load_aligned(a);
  }
}

// The lanes of `r` where `outside(x)` holds replaced with libm's `fn(x)`: rare, so out of line.
template <class V, class Outside, class Fn>
__attribute__((noinline, cold)) V libm_lanes(V x, V r, Outside outside, Fn fn) {
  using T = typename V::value_type;
  alignas(64) T in[V::size], out[V::size];
  x.store_aligned(in);
  r.store_aligned(out);
  for (size_t i = 0; i < V::size; ++i)
    if (outside(in[i])) out[i] = fn(in[i]);
  return V::load_aligned(out);
}

// Replaces the lanes of `r` where `outside(x)` holds with libm's `fn(x)`: for the inputs where an
// xsimd function is inaccurate. The test is one compare and one branch per batch.
template <class V, class Outside, class Fn>
CAIRN_SIMD_INLINE V with_libm_lanes(V x, V r, Outside outside, Fn fn) {
  if (__builtin_expect(xsimd::any(outside(x)), 0)) return libm_lanes(x, r, outside, fn);
  return r;
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
CAIRN_SIMD_INLINE V xsimd_within(V x, double lo, double hi, SimdFn simd_fn, LibmFn libm_fn) {
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
CAIRN_SIMD_INLINE V exp_any(V x) {
  const bool is_float = sizeof(typename lane_type<V>::type) == 4;
  return xsimd_within(x, is_float ? -87.0 : -708.0, is_float ? 88.0 : 709.0, [](auto b) { return xsimd::exp(b); },
                      [](auto v) { using std::exp; return exp(v); });
}

// exp(t) of a float32 batch with every lane t <= 0 or NaN (NaN gives NaN): the sigmoid's exp(-|x|),
// without the overflow handling exp_any needs. Cody-Waite reduction t = n ln2 + r, |r| <= ln2 / 2,
// a degree-6 polynomial for exp(r) and 2^n put into the exponent bits; subnormal results are
// rounded once, like libm's. Within 1 ulp of libm (docs/simd.md).
template <class A>
CAIRN_SIMD_INLINE xsimd::batch<float, A> exp_nonpositive(xsimd::batch<float, A> t) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  // exp(-104) < 2^-150 rounds to zero, as does everything below: the clamp keeps n >= -150 (and
  // -inf finite). max_ps returns its second operand when either is NaN, so NaN passes through.
  t = xsimd::max(B(-104.0f), t);
  // n = round(t / ln2): adding 1.5 * 2^23 rounds t / ln2 to an integer kept in k's low mantissa bits.
  const B shifter(0x1.8p23f);
  const B k = xsimd::fma(t, B(1.44269504f), shifter);
  const B n = k - shifter;
  // ln2 in two parts: n times the first (0x1.63p-1, 9 significant bits) is exact even without FMA.
  B r = xsimd::fnma(n, B(0x1.63p-1f), t);
  r = xsimd::fnma(n, B(-2.12194440e-4f), r);
  // Minimax for exp on [-ln2 / 2, ln2 / 2] (relative error 2e-9; fitted with Lawson's iteration).
  B p = xsimd::fma(B(1.38347468e-3f), r, B(8.37648287e-3f));
  p = xsimd::fma(p, r, B(4.16683555e-2f));
  p = xsimd::fma(p, r, B(1.66664004e-1f));
  p = xsimd::fma(p, r, B(4.99999911e-1f));
  p = xsimd::fma(p, r, B(1.0f));
  p = xsimd::fma(p, r, B(1.0f));
  // AVX-512 scales by 2^n in one instruction, rounding once: the same result as below.
#if defined(__x86_64__)
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) return B(_mm512_scalef_ps(p, n));
#endif
  // k's bits are 0x4b400000 + n, so shifting them left 23 leaves n << 23. Scaling by 2^(n + 64),
  // always normal and exact, then by 2^-64 rounds a subnormal result once.
  const I scale = (xsimd::bitwise_cast<I>(k) << 23) + I((127 + 64) << 23);
  return (p * xsimd::bitwise_cast<B>(scale)) * B(0x1p-64f);
}

template <class V>
CAIRN_SIMD_INLINE V log_any(V x) {
  using T = typename lane_type<V>::type;
  double smallest = 0;
  if constexpr (std::is_floating_point_v<T>) smallest = static_cast<double>(std::numeric_limits<T>::min());
  return xsimd_within(x, smallest, HUGE_VAL, [](auto b) { return xsimd::log(b); },
                      [](auto v) { using std::log; return log(v); });
}

template <class V>
CAIRN_SIMD_INLINE V erf_any(V x) {
  return xsimd_within(x, -6.0, 6.0, [](auto b) { return xsimd::erf(b); }, [](auto v) { using std::erf; return erf(v); });
}

// One operand of a loop: `p[i]` for a full operand, `p[0]` for every element of a scalar one.
template <class T>
struct SimdOperand {
  const T* p;
  bool scalar;
};

// Everything below is a template on the architecture `A`, so each instruction set's copy has its
// own symbols: no copy built with AVX-512 flags can stand in for the SSE2 one at link time.
// (Plain loops rather than std::copy for the same reason: std::copy<float*> has one name for all.)
namespace simd_detail {

// One operand of a loop. A scalar one is broadcast once, before the loop: read per batch, it would
// be reloaded every time, since the compiler must assume the output may overwrite it.
template <class T, class A, bool Scalar>
struct LoopOperand {
  const T* p;
  Batch<T, A> splat;

  explicit LoopOperand(const T* q) : p(q), splat(Scalar ? q[0] : T(0)) {}

  Batch<T, A> at(int64_t i) const {
    if constexpr (Scalar) return splat;
    else return Batch<T, A>::load_unaligned(p + i);
  }

  // A padded copy of the last `rem` (< one batch) elements of a full operand, or the scalar.
  Batch<T, A> tail(int64_t i, int64_t rem) const {
    if constexpr (Scalar) {
      return splat;
    } else {
      alignas(64) T lane[Batch<T, A>::size] = {};
      for (int64_t k = 0; k < rem; ++k) lane[k] = p[i + k];
      return Batch<T, A>::load_aligned(lane);
    }
  }
};

template <class T, class A>
void store_tail(Batch<T, A> v, T* out, int64_t rem) {
  alignas(64) T lane[Batch<T, A>::size];
  v.store_aligned(lane);
  for (int64_t k = 0; k < rem; ++k) out[k] = lane[k];
}

template <class T, class A, bool SA, class F>
CAIRN_SIMD_LOOP void unary_loop(F f, const T* a, T* out, int64_t n) {
  constexpr int64_t kLanes = Batch<T, A>::size;
  const LoopOperand<T, A, SA> x(a);
  int64_t i = 0;
  CAIRN_SIMD_UNROLL
  for (; i + kLanes <= n; i += kLanes) apply_batch<T, A>(f, x.at(i)).store_unaligned(out + i);
  if (i < n) store_tail<T, A>(apply_batch<T, A>(f, x.tail(i, n - i)), out + i, n - i);
}

template <class T, class A, bool SA, bool SB, class F>
CAIRN_SIMD_LOOP void binary_loop(F f, const T* a, const T* b, T* out, int64_t n) {
  constexpr int64_t kLanes = Batch<T, A>::size;
  const LoopOperand<T, A, SA> x(a);
  const LoopOperand<T, A, SB> y(b);
  int64_t i = 0;
  CAIRN_SIMD_UNROLL
  for (; i + kLanes <= n; i += kLanes) apply_batch<T, A>(f, x.at(i), y.at(i)).store_unaligned(out + i);
  if (i < n) store_tail<T, A>(apply_batch<T, A>(f, x.tail(i, n - i), y.tail(i, n - i)), out + i, n - i);
}

}  // namespace simd_detail

// out[i] = f(a[i]) for i in [0, n).
template <class T, class A = xsimd::default_arch, class F>
void simd_unary(F f, SimdOperand<T> a, T* out, int64_t n) {
  if (a.scalar) simd_detail::unary_loop<T, A, true>(f, a.p, out, n);
  else simd_detail::unary_loop<T, A, false>(f, a.p, out, n);
}

// out[i] = f(a[i], b[i]) for i in [0, n).
template <class T, class A = xsimd::default_arch, class F>
void simd_binary(F f, SimdOperand<T> a, SimdOperand<T> b, T* out, int64_t n) {
  using namespace simd_detail;
  if (!a.scalar && !b.scalar) binary_loop<T, A, false, false>(f, a.p, b.p, out, n);
  else if (a.scalar && !b.scalar) binary_loop<T, A, true, false>(f, a.p, b.p, out, n);
  else if (!a.scalar) binary_loop<T, A, false, true>(f, a.p, b.p, out, n);
  else binary_loop<T, A, true, true>(f, a.p, b.p, out, n);
}

}  // namespace cairn
