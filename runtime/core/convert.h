// Element conversion between any two tensor element types (Cast and the kernels use it).
#pragma once

#include <cmath>
#include <type_traits>

#include "runtime/core/dtype.h"

namespace cairn {

template <class T> struct is_half : std::false_type {};
template <> struct is_half<float16> : std::true_type {};
template <> struct is_half<bfloat16> : std::true_type {};

// Widens a stored element to the type its arithmetic happens in.
template <class T>
inline compute_t<T> widen(T v) {
  if constexpr (is_half<T>::value) return static_cast<float>(v);
  else return v;
}

// Converts like a C cast (truncation toward zero for float->int), with these rules:
// complex->real takes the real part; anything->bool is "!= 0"; float->int of NaN is 0.
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half<From>::value) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_half<To>::value) {
    if constexpr (std::is_same_v<From, complex64>) return To(v.real());
    else return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<From, complex64>) {
    return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, complex64>) {
    return complex64(static_cast<float>(v), 0.0f);
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return To(0);
    // Saturate instead of invoking undefined behaviour on out-of-range values.
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    double d = static_cast<double>(v);
    if (d <= lo) return std::numeric_limits<To>::lowest();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace cairn
