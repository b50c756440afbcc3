// CPU kernels for the binary arithmetic ops in ops/binary_ops.cc.
#include <cmath>
#include <limits>

#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

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
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return wrapping(a, b, [](auto x, auto y) { return x + y; }); }
};
struct SubF {
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return wrapping(a, b, [](auto x, auto y) { return x - y; }); }
};
struct MulF {
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return wrapping(a, b, [](auto x, auto y) { return x * y; }); }
};
struct DivF {
  template <class T> static constexpr bool supports = is_numeric_v<T>;
  template <class C> C operator()(C a, C b) const { return safe_div(a, b); }
};
struct FloorDivF {
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
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const { return safe_floor_mod(a, b); }
};
struct PowF {
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
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    }
    return a > b ? a : b;
  }
};
struct MinimumF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    }
    return a < b ? a : b;
  }
};
struct SquaredDifferenceF {
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

// Integer division and modulo by zero are errors, checked before any output is written.
void check_integer_divisor(KernelContext& kc) {
  visit_dtype(kc.input(1).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_int_v<T>) {
      const T* p = kc.input(1).data<T>();
      for (int64_t i = 0, n = kc.input(1).num_elements(); i < n; ++i)
        if (p[i] == T(0)) raise(Code::InvalidArgument, "{}: integer division by zero", kc.op());
    }
  });
}

void check_integer_exponent(KernelContext& kc) {
  visit_dtype(kc.input(1).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_int_v<T> && std::is_signed_v<T>) {
      const T* p = kc.input(1).data<T>();
      for (int64_t i = 0, n = kc.input(1).num_elements(); i < n; ++i)
        if (p[i] < 0) raise(Code::InvalidArgument, "{}: integers to negative integer powers are not allowed", kc.op());
    }
  });
}

template <class F>
void divide_kernel(KernelContext& kc) {
  check_integer_divisor(kc);
  binary_kernel<F>(kc);
}

void pow_kernel(KernelContext& kc) {
  check_integer_exponent(kc);
  binary_kernel<PowF>(kc);
}

CAIRN_REGISTER_KERNEL("Add", DeviceKind::CPU, binary_kernel<AddF>);
CAIRN_REGISTER_KERNEL("Sub", DeviceKind::CPU, binary_kernel<SubF>);
CAIRN_REGISTER_KERNEL("Mul", DeviceKind::CPU, binary_kernel<MulF>);
CAIRN_REGISTER_KERNEL("RealDiv", DeviceKind::CPU, divide_kernel<DivF>);
CAIRN_REGISTER_KERNEL("FloorDiv", DeviceKind::CPU, divide_kernel<FloorDivF>);
CAIRN_REGISTER_KERNEL("FloorMod", DeviceKind::CPU, divide_kernel<FloorModF>);
CAIRN_REGISTER_KERNEL("Pow", DeviceKind::CPU, pow_kernel);
CAIRN_REGISTER_KERNEL("Maximum", DeviceKind::CPU, binary_kernel<MaximumF>);
CAIRN_REGISTER_KERNEL("Minimum", DeviceKind::CPU, binary_kernel<MinimumF>);
CAIRN_REGISTER_KERNEL("SquaredDifference", DeviceKind::CPU, binary_kernel<SquaredDifferenceF>);

}  // namespace
}  // namespace cairn
