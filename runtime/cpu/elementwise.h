// Shared machinery for CPU elementwise kernels: NumPy broadcasting over up to three inputs,
// split across the context's thread pool in fixed ranges (results never depend on thread count).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "runtime/core/convert.h"
#include "runtime/core/thread_pool.h"
#include "runtime/cpu/simd_dispatch.h"
#include "runtime/ops/op_def.h"
#include "runtime/tensor/tensor.h"

namespace cairn {

constexpr int64_t kElementwiseGrain = 16384;

// Element strides of `in` seen through the broadcast output shape `out` (0 on broadcast axes).
inline void broadcast_strides(const Shape& in, const Shape& out, int64_t* strides) {
  int offset = out.rank() - in.rank();
  int64_t stride = 1;
  for (int i = out.rank() - 1; i >= 0; --i) {
    int j = i - offset;
    if (j < 0 || in[j] == 1) {
      strides[i] = 0;
    } else {
      strides[i] = stride;
    }
    if (j >= 0) stride *= in[j];
  }
}

// Calls body(o, idx) for every output element o, where idx[k] is the matching element of input k.
template <int N, class Body>
void broadcast_loop(ThreadPool& pool, const Shape& out, const Shape* const* ins, Body&& body) {
  const int64_t n = out.num_elements();
  if (n == 0) return;
  bool same = true;
  for (int k = 0; k < N; ++k) same = same && (*ins[k] == out);
  if (same) {
    pool.run(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      int64_t idx[N];
      for (int64_t o = b; o < e; ++o) {
        for (int k = 0; k < N; ++k) idx[k] = o;
        body(o, idx);
      }
    });
    return;
  }
  const int rank = out.rank();
  int64_t strides[N][kMaxRank];
  for (int k = 0; k < N; ++k) broadcast_strides(*ins[k], out, strides[k]);
  const int64_t inner = out[rank - 1];
  const int64_t rows = n / inner;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / inner);
  pool.run(rows, grain, [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      int64_t base[N] = {};
      int64_t rem = r;
      for (int d = rank - 2; d >= 0; --d) {
        int64_t coord = rem % out[d];
        rem /= out[d];
        for (int k = 0; k < N; ++k) base[k] += coord * strides[k][d];
      }
      int64_t idx[N];
      for (int64_t c = 0; c < inner; ++c) {
        for (int k = 0; k < N; ++k) idx[k] = base[k] + c * strides[k][rank - 1];
        body(r * inner + c, idx);
      }
    }
  });
}

// A functor F provides `template <class T> static constexpr bool supports` and
// `template <class T> auto operator()(T a, T b) const` working on compute_t<T> values.
// The result is stored as `Out` (T itself unless the functor says otherwise).

// Whether unary_apply runs F on xsimd batches: float32/float64 in and out, and a SIMD functor.
template <class T, class Out, class F>
constexpr bool simd_unary_path_v = is_simd_float_v<T> && std::is_same_v<T, Out> && has_simd_v<F>;
// binary_apply takes the batch loop for every float32/float64 functor (non-SIMD ones run lane by
// lane): it is also the path that splits a scalar broadcast across the threads.
template <class T, class Out>
constexpr bool simd_binary_path_v = is_simd_float_v<T> && std::is_same_v<T, Out>;

// The fused step of functor F (graph::FusedStep), or -1 for functors outside the table's rows;
// elementwise_ops.h specializes it from the rows.
template <class F> struct fused_step_of : std::integral_constant<int64_t, -1> {};

// The loop F runs on: the selected instruction set's (simd_dispatch.h) for the table's functors,
// the baseline's for the others.
template <class T, class F>
UnaryLoopFn<T> unary_loop_of() {
  constexpr int64_t step = fused_step_of<F>::value;
  if constexpr (step >= 0) return simd_loops().table<T>().unary[step];
  else return [](SimdOperand<T> a, T* out, int64_t n) { simd_unary<T>(F{}, a, out, n); };
}

template <class T, class F>
BinaryLoopFn<T> binary_loop_of() {
  constexpr int64_t step = fused_step_of<F>::value;
  if constexpr (step >= 0) return simd_loops().table<T>().binary[step - graph::kFirstBinaryStep];
  else return [](SimdOperand<T> a, SimdOperand<T> b, T* out, int64_t n) { simd_binary<T>(F{}, a, b, out, n); };
}

// out = F(a, b) where each input has the output's shape or one element (the fused loop's case too).
// Returns false, doing nothing, for other broadcasts.
template <class T, class F>
bool simd_binary_apply(KernelContext& kc, F) {
  const Tensor& a = kc.input(0);
  const Tensor& b = kc.input(1);
  Tensor& out = kc.output(0);
  auto operand = [&](const Tensor& t) -> std::optional<SimdOperand<T>> {
    if (t.shape() == out.shape()) return SimdOperand<T>{t.data<T>(), false};
    if (t.num_elements() == 1) return SimdOperand<T>{t.data<T>(), true};
    return std::nullopt;
  };
  std::optional<SimdOperand<T>> oa = operand(a), ob = operand(b);
  if (!oa || !ob) return false;
  T* po = out.mutable_data<T>();
  const BinaryLoopFn<T> loop = binary_loop_of<T, F>();
  kc.pool.run(out.num_elements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    auto at = [&](SimdOperand<T> o) { return SimdOperand<T>{o.scalar ? o.p : o.p + begin, o.scalar}; };
    loop(at(*oa), at(*ob), po + begin, end - begin);
  });
  return true;
}

// out = F(a, b) with broadcasting; Out is the stored output type for input type T.
template <class T, class Out, class F>
void binary_apply(KernelContext& kc, F f) {
  if constexpr (simd_binary_path_v<T, Out>) {
    if (simd_binary_apply<T>(kc, f)) return;
  }
  const Tensor& a = kc.input(0);
  const Tensor& b = kc.input(1);
  Tensor& out = kc.output(0);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  Out* po = out.mutable_data<Out>();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    // Same shapes (the common case): a flat loop the compiler vectorizes, without the index array.
    kc.pool.run(out.num_elements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) po[o] = convert<Out>(f(widen(pa[o]), widen(pb[o])));
    });
    return;
  }
  const Shape* shapes[2] = {&a.shape(), &b.shape()};
  broadcast_loop<2>(kc.pool, out.shape(), shapes, [&](int64_t o, const int64_t* i) {
    po[o] = convert<Out>(f(widen(pa[i[0]]), widen(pb[i[1]])));
  });
}

template <class T, class Out, class F>
void unary_apply(KernelContext& kc, F f) {
  const Tensor& a = kc.input(0);
  Tensor& out = kc.output(0);
  const T* pa = a.data<T>();
  Out* po = out.mutable_data<Out>();
  if constexpr (simd_unary_path_v<T, Out, F>) {
    const UnaryLoopFn<T> loop = unary_loop_of<T, F>();
    kc.pool.run(a.num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      loop(SimdOperand<T>{pa + b, false}, po + b, e - b);
    });
    return;
  }
  kc.pool.run(a.num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) po[o] = convert<Out>(f(widen(pa[o])));
  });
}

[[noreturn]] void throw_unsupported_dtype(const KernelContext& kc, DType t);

// Integer operand checks, run before any output is written: a zero in integer input `input`
// (division, modulo, reciprocal), a negative integer exponent in input 1 (Pow).
void reject_integer_zeros(const KernelContext& kc, int input);
void reject_negative_integer_exponents(const KernelContext& kc);

// A functor may reject bad operands up front with `static void check(const KernelContext&)`.
template <class F, class = void> struct has_check : std::false_type {};
template <class F> struct has_check<F, std::void_t<decltype(&F::check)>> : std::true_type {};

template <class F>
void run_check(const KernelContext& kc) {
  if constexpr (has_check<F>::value) F::check(kc);
}

// Kernel for a binary op whose output has the input dtype.
template <class F>
void binary_kernel(KernelContext& kc) {
  run_check<F>(kc);
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (F::template supports<T>) binary_apply<T, T>(kc, F{});
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

// Kernel for a binary predicate (output bool).
template <class F>
void compare_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (F::template supports<T>) binary_apply<T, bool>(kc, F{});
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

// Kernel for a unary op whose output has the input dtype.
template <class F>
void unary_kernel(KernelContext& kc) {
  run_check<F>(kc);
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (F::template supports<T>) unary_apply<T, T>(kc, F{});
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

// Kernel for a unary predicate (output bool).
template <class F>
void unary_predicate_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (F::template supports<T>) unary_apply<T, bool>(kc, F{});
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

template <class T> constexpr bool is_complex_v = std::is_same_v<T, complex64>;
template <class T> constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T> constexpr bool is_numeric_v = !is_bool_v<T>;
template <class T> constexpr bool is_real_v = !is_bool_v<T> && !is_complex_v<T>;
template <class T> constexpr bool is_float_v = std::is_floating_point_v<compute_t<T>>;
template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !is_bool_v<T>;

}  // namespace cairn
