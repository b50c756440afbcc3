// The CPU elementwise table: one functor per unary and binary math op, from which the CPU kernels
// (unary_kernels.cc, binary_kernels.cc) and the CPU fused loop (fused_elementwise.cc) are both
// instantiated, so fused and unfused results are bitwise equal by construction.
//
// A functor provides `template <class T> static constexpr bool supports` (the dtypes it has a kernel
// for) and a templated operator() on compute_t<T> values (float for float16/bfloat16). Functors
// with `simd = true` also compile their float operator() for xsimd batches (runtime/cpu/simd.h):
// std:: math is reached through using-declarations so a batch finds xsimd's overload, and branches
// are written with pick(). Integer arithmetic that can overflow goes through unsigned types so it
// wraps like TensorFlow instead of being undefined.
//
// The rows naming these functors are in runtime/cpu/elementwise_table.h (with the ops' fused steps
// and Vulkan codes); adding an elementwise op: docs/simd.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/cpu/elementwise.h"
#include "runtime/cpu/elementwise_table.h"
#include "runtime/cpu/fused_elementwise.h"  // the FusedStep codes in the table
#include "runtime/cpu/simd.h"

namespace cairn {

// NaN of a scalar type or of a batch's element type.
template <class C>
auto quiet_nan() {
  if constexpr (is_batch_v<C>) return std::numeric_limits<typename C::value_type>::quiet_NaN();
  else return std::numeric_limits<C>::quiet_NaN();
}

template <class C>
C wrapping_neg(C x) {
  return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
}

template <class C>
C wrapping_mul(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Numerically stable logistic function: never computes exp of a large positive number.
// With e = exp(-|x|) (exp(-x) for x >= 0, exp(x) below; NaN gives NaN) it is 1 / (1 + e) or
// e / (1 + e): the numerator is picked first, so a batch pays one exp and one division.
// float32 batches take exp_nonpositive (simd.h), which needs no out-of-range lanes since -|x| <= 0.
template <class C>
CAIRN_SIMD_INLINE C stable_sigmoid(C x) {
  C e;
  if constexpr (is_batch_v<C> && std::is_same_v<typename lane_type<C>::type, float>) {
    e = exp_nonpositive(x | C(-0.0f));  // -|x|: the sign bit set
  } else {
    using std::fabs;
    e = exp_any(-fabs(x));
  }
  return pick(x >= C(0), C(1), e) / (C(1) + e);
}

struct NegF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return wrapping_neg(x);
    // Flip the sign bit: xsimd 8.1's AVX-512 negation is `0 - x`, which turns +0 into +0.
    else if constexpr (is_batch_v<C>) return x ^ C(-0.0);
    else return -x;
  }
};
struct AbsF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) return x < 0 ? wrapping_neg(x) : x;
      else return x;
    } else {
      using std::fabs;
      return fabs(x);
    }
  }
};
struct SignF {
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, complex64>) {
      float m = std::abs(x);
      return m == 0.0f ? C(0) : x / m;
    } else if constexpr (std::is_integral_v<C>) {
      return static_cast<C>((x > C(0)) - (x < C(0)));
    } else {
      // NaN and the signed zeros come back unchanged.
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);
    }
  }
};
struct SquareF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return wrapping_mul(x, x);
    else return x * x;
  }
};
struct ReciprocalF {
  static constexpr bool simd = true;
  static void check(const KernelContext& kc) { reject_integer_zeros(kc, 0); }
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(C(1) / x);  // zeros rejected up front
    else return C(1) / x;
  }
};

struct ExpF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return exp_any(x); }
};
struct LogF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return log_any(x); }
};
struct Log1pF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return std::log1p(x); }
};
struct SqrtF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const {
    using std::sqrt;
    return sqrt(x);
  }
};
struct RsqrtF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const {
    using std::sqrt;
    return C(1) / sqrt(x);
  }
};
struct SinF {
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return std::sin(x); }
};
struct CosF {
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return std::cos(x); }
};
struct TanhF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const {
    using std::tanh;
    return tanh(x);
  }
};
struct SigmoidF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return stable_sigmoid(x); }
};
struct ErfF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return erf_any(x); }
};

struct ReluF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x > C(0) ? x : C(0);
    } else {
      using std::isnan;
      return pick((x > C(0)) | isnan(x), x, C(0));  // NaN passes through
    }
  }
};
struct Relu6F {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    if (x > C(6)) return C(6);
    return x > C(0) ? x : C(0);
  }
};
struct EluF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return x > C(0) ? x : std::expm1(x); }
};
struct SeluF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const {
    // The constants of Klambauer et al. (2017), as TensorFlow uses them.
    const C alpha = static_cast<C>(1.6732632423543772848170429916717);
    const C scale = static_cast<C>(1.0507009873554804934193349852946);
    return x > C(0) ? scale * x : scale * alpha * std::expm1(x);
  }
};
struct SoftplusF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): the exponent is never positive.
    if (std::isnan(x)) return x;
    return (x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::fabs(x)));
  }
};

struct FloorF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return std::floor(x); }
};
struct CeilF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return std::ceil(x); }
};
struct RoundF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  // Half to even, independent of the floating-point environment's rounding mode.
  template <class C> C operator()(C x) const {
    if (!std::isfinite(x)) return x;
    C f = std::floor(x);
    C frac = x - f;  // exact for binary floats
    C r;
    if (frac > C(0.5)) r = f + C(1);
    else if (frac < C(0.5)) r = f;
    else r = std::fmod(f, C(2)) == C(0) ? f : f + C(1);
    return std::copysign(r, x);  // -0.4 rounds to -0
  }
};

struct IsNanF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> bool operator()(C x) const { return std::isnan(x); }
};
struct IsFiniteF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> bool operator()(C x) const { return std::isfinite(x); }
};


// ---- Binary ----

// Integer division that wraps instead of trapping (INT_MIN / -1 raises SIGFPE on x86).
template <class T>
T safe_div(T a, T b) {
  if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) {
    if (b == T(-1)) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0) - static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}

template <class T>
T safe_floor_mod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = static_cast<T>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  } else {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

// Signed integers wrap around on overflow, as TensorFlow's kernels do in practice: the
// arithmetic is done in uint64_t, where wrapping is defined (signed overflow is undefined).
template <class C, class F>
C wrapping(C a, C b, F f) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>)
    return static_cast<C>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
  else
    return f(a, b);
}

struct AddF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return wrapping(a, b, [](auto x, auto y) { return x + y; }); }
};
struct SubF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return wrapping(a, b, [](auto x, auto y) { return x - y; }); }
};
struct MulF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return wrapping(a, b, [](auto x, auto y) { return x * y; }); }
};
struct DivF {
  static void check(const KernelContext& kc) { reject_integer_zeros(kc, 1); }
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return safe_div(a, b); }
};
struct FloorDivF {
  static void check(const KernelContext& kc) { reject_integer_zeros(kc, 1); }
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      C q = safe_div(a, b);
      if constexpr (std::is_signed_v<C>) {
        if (b != C(-1) && (a % b != 0) && ((a < 0) != (b < 0))) --q;
      }
      return q;
    } else {
      return std::floor(a / b);
    }
  }
};
struct FloorModF {
  static void check(const KernelContext& kc) { reject_integer_zeros(kc, 1); }
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const { return safe_floor_mod(a, b); }
};
struct PowF {
  static void check(const KernelContext& kc) { reject_negative_integer_exponents(kc); }
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      C result = 1;  // exponentiation by squaring; negative exponents were rejected up front
      C base = a;
      for (C e = b; e > 0; e = static_cast<C>(e >> 1)) {
        if (e & 1) result = static_cast<C>(static_cast<std::make_unsigned_t<C>>(result) * static_cast<std::make_unsigned_t<C>>(base));
        base = static_cast<C>(static_cast<std::make_unsigned_t<C>>(base) * static_cast<std::make_unsigned_t<C>>(base));
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct MaximumF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return a > b ? a : b;
    } else {
      using std::isnan;
      return pick(isnan(a) | isnan(b), C(quiet_nan<C>()), greater_of(a, b));
    }
  }
};
struct MinimumF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return a < b ? a : b;
    } else {
      using std::isnan;
      return pick(isnan(a) | isnan(b), C(quiet_nan<C>()), less_of(a, b));
    }
  }
};
struct SquaredDifferenceF {
  static constexpr bool simd = true;
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, complex64>) {
      C d = a - b;
      return d * std::conj(d);
    } else {
      // Both the difference and the square may overflow a signed integer: wrap, as Sub and Mul do.
      C d = wrapping(a, b, [](auto x, auto y) { return x - y; });
      return wrapping(d, d, [](auto x, auto y) { return x * y; });
    }
  }
};

// Each row's functor knows its fused step, so its unfused kernel runs the dispatched loop
// (elementwise.h, unary_loop_of) that the fused loop runs too.
#define CAIRN_FUSED_STEP_OF(name, step, F, ...) \
  template <> struct fused_step_of<F> : std::integral_constant<int64_t, graph::step> {};
CAIRN_FUSIBLE_UNARY_OPS(CAIRN_FUSED_STEP_OF)
CAIRN_FUSIBLE_BINARY_OPS(CAIRN_FUSED_STEP_OF)
#undef CAIRN_FUSED_STEP_OF

}  // namespace cairn
