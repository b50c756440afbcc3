// CPU kernels for the unary math ops in ops/unary_ops.cc. Functors work on compute_t<T> values
// (float for float16/bfloat16); integer arithmetic that can overflow goes through unsigned types so
// it wraps like TensorFlow instead of being undefined.
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

template <class C>
C wrapping_neg(C x) {
  return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
}

template <class C>
C wrapping_mul(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Numerically stable logistic function: never computes exp of a large positive number.
template <class C>
C stable_sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  C e = std::exp(x);  // x < 0 (or NaN, which falls through to NaN)
  return e / (C(1) + e);
}

struct NegF {
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return wrapping_neg(x);
    else return -x;
  }
};
struct AbsF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) return x < 0 ? wrapping_neg(x) : x;
      else return x;
    } else {
      return std::fabs(x);
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
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return wrapping_mul(x, x);
    else return x * x;
  }
};
struct ReciprocalF {
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return static_cast<C>(C(1) / x);  // zeros rejected up front
    else return C(1) / x;
  }
};

struct ExpF {
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return std::exp(x); }
};
struct LogF {
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return std::log(x); }
};
struct Log1pF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return std::log1p(x); }
};
struct SqrtF {
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return std::sqrt(x); }
};
struct RsqrtF {
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return C(1) / std::sqrt(x); }
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
  template <class T> static constexpr bool supports = is_float_v<T> || is_complex_v<T>;
  template <class C> C operator()(C x) const { return std::tanh(x); }
};
struct SigmoidF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return stable_sigmoid(x); }
};
struct ErfF {
  template <class T> static constexpr bool supports = is_float_v<T>;
  template <class C> C operator()(C x) const { return std::erf(x); }
};

struct ReluF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    return x > C(0) ? x : C(0);
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

// Integer reciprocal of zero is an error, checked before any output is written.
void reciprocal_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_int_v<T>) {
      const T* p = kc.input(0).data<T>();
      for (int64_t i = 0, n = kc.input(0).num_elements(); i < n; ++i)
        if (p[i] == T(0)) raise(Code::InvalidArgument, "{}: integer division by zero", kc.op());
    }
  });
  unary_kernel<ReciprocalF>(kc);
}

template <class C>
C gelu_exact(C x) {
  // x * Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2: no cancellation for negative x.
  if (std::isinf(x)) return x > C(0) ? x : C(0);
  return x * C(0.5) * std::erfc(-x * static_cast<C>(0.70710678118654752440));
}

template <class C>
C gelu_tanh(C x) {
  // 0.5 * x * (1 + tanh(u)) == x * sigmoid(2u), which avoids 1 + tanh(u) cancelling for negative x.
  if (std::isinf(x)) return x > C(0) ? x : C(0);
  const C k = static_cast<C>(0.79788456080286535588);  // sqrt(2 / pi)
  C u = k * (x + C(0.044715) * x * x * x);
  return x * stable_sigmoid(C(2) * u);
}

void gelu_kernel(KernelContext& kc) {
  const bool approximate = kc.attrs.b("approximate");
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using C = compute_t<T>;
      if (approximate) unary_apply<T, T>(kc, [](C x) { return gelu_tanh(x); });
      else unary_apply<T, T>(kc, [](C x) { return gelu_exact(x); });
    } else {
      throw_unsupported_dtype(kc, kc.input(0).dtype());
    }
  });
}

CAIRN_REGISTER_KERNEL("Neg", DeviceKind::CPU, unary_kernel<NegF>);
CAIRN_REGISTER_KERNEL("Abs", DeviceKind::CPU, unary_kernel<AbsF>);
CAIRN_REGISTER_KERNEL("Sign", DeviceKind::CPU, unary_kernel<SignF>);
CAIRN_REGISTER_KERNEL("Square", DeviceKind::CPU, unary_kernel<SquareF>);
CAIRN_REGISTER_KERNEL("Reciprocal", DeviceKind::CPU, reciprocal_kernel);
CAIRN_REGISTER_KERNEL("Exp", DeviceKind::CPU, unary_kernel<ExpF>);
CAIRN_REGISTER_KERNEL("Log", DeviceKind::CPU, unary_kernel<LogF>);
CAIRN_REGISTER_KERNEL("Log1p", DeviceKind::CPU, unary_kernel<Log1pF>);
CAIRN_REGISTER_KERNEL("Sqrt", DeviceKind::CPU, unary_kernel<SqrtF>);
CAIRN_REGISTER_KERNEL("Rsqrt", DeviceKind::CPU, unary_kernel<RsqrtF>);
CAIRN_REGISTER_KERNEL("Sin", DeviceKind::CPU, unary_kernel<SinF>);
CAIRN_REGISTER_KERNEL("Cos", DeviceKind::CPU, unary_kernel<CosF>);
CAIRN_REGISTER_KERNEL("Tanh", DeviceKind::CPU, unary_kernel<TanhF>);
CAIRN_REGISTER_KERNEL("Sigmoid", DeviceKind::CPU, unary_kernel<SigmoidF>);
CAIRN_REGISTER_KERNEL("Erf", DeviceKind::CPU, unary_kernel<ErfF>);
CAIRN_REGISTER_KERNEL("Relu", DeviceKind::CPU, unary_kernel<ReluF>);
CAIRN_REGISTER_KERNEL("Relu6", DeviceKind::CPU, unary_kernel<Relu6F>);
CAIRN_REGISTER_KERNEL("Elu", DeviceKind::CPU, unary_kernel<EluF>);
CAIRN_REGISTER_KERNEL("Selu", DeviceKind::CPU, unary_kernel<SeluF>);
CAIRN_REGISTER_KERNEL("Softplus", DeviceKind::CPU, unary_kernel<SoftplusF>);
CAIRN_REGISTER_KERNEL("Gelu", DeviceKind::CPU, gelu_kernel);
CAIRN_REGISTER_KERNEL("Floor", DeviceKind::CPU, unary_kernel<FloorF>);
CAIRN_REGISTER_KERNEL("Ceil", DeviceKind::CPU, unary_kernel<CeilF>);
CAIRN_REGISTER_KERNEL("Round", DeviceKind::CPU, unary_kernel<RoundF>);
CAIRN_REGISTER_KERNEL("IsNan", DeviceKind::CPU, unary_predicate_kernel<IsNanF>);
CAIRN_REGISTER_KERNEL("IsFinite", DeviceKind::CPU, unary_predicate_kernel<IsFiniteF>);

}  // namespace
}  // namespace cairn
