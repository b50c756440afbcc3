// Wide accumulators for CPU kernels that sum (reductions, Cumsum): floats accumulate in double,
// complex64 in complex<double>, and integers in 64 bits with wrap-around (the low bits equal
// wrap-around in T).
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "runtime/core/convert.h"

namespace cairn {

template <class T>
using wide_t = std::conditional_t<is_complex_v<T>, std::complex<double>,
                                  std::conditional_t<is_float_v<T>, double, uint64_t>>;

template <class T>
wide_t<T> to_wide(T v) {
  if constexpr (is_complex_v<T>) return std::complex<double>(v.real(), v.imag());
  else if constexpr (is_float_v<T>) return static_cast<double>(widen(v));
  else if constexpr (std::is_signed_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return static_cast<uint64_t>(v);
}

template <class T>
T from_wide(wide_t<T> a) {
  if constexpr (is_complex_v<T>) return complex64(static_cast<float>(a.real()), static_cast<float>(a.imag()));
  else if constexpr (is_float_v<T>) return convert<T>(a);
  else return static_cast<T>(a);  // keeps the low bits: two's-complement wrap-around
}

}  // namespace cairn
