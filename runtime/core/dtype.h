// Element types. Values equal TensorFlow's DataType numbers and cairn_dtype in the C header.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

#include "runtime/core/half.h"

namespace cairn {

enum class DType : int32_t {
  Invalid = 0,
  Float32 = 1,
  Float64 = 2,
  Int32 = 3,
  UInt8 = 4,
  Int16 = 5,
  Int8 = 6,
  String = 7,
  Complex64 = 8,
  Int64 = 9,
  Bool = 10,
  BFloat16 = 14,
  Float16 = 19,
};

using complex64 = std::complex<float>;

// Size in bytes of one element; 0 for Invalid and String (strings have no fixed size).
size_t dtype_size(DType t);
// "float32", "int64", ...; "invalid" for anything unknown.
const char* dtype_name(DType t);
// Parses a dtype_name(); returns Invalid when unknown.
DType dtype_from_name(const char* name);
bool dtype_is_valid(DType t);  // one of the enumerated values, String included
bool dtype_is_floating(DType t);  // f16, bf16, f32, f64
bool dtype_is_integer(DType t);   // signed and unsigned, not bool
bool dtype_is_signed(DType t);
bool dtype_is_complex(DType t);
bool dtype_is_numeric(DType t);   // everything but String and Bool

// A set of dtypes as a bit mask (every enum value is below 32).
using DTypeSet = uint32_t;
// A DType can hold any int32 (attribute values and C API arguments arrive unchecked): a value
// outside [0, 32) has no bit, so it is in no set. A bare `1u << t` would be undefined there and,
// on x86, alias t % 32 (35 would pass as int32).
constexpr DTypeSet dtype_bit(DType t) {
  const int v = static_cast<int>(t);
  return v >= 0 && v < 32 ? DTypeSet{1} << v : DTypeSet{0};
}
constexpr bool dtype_in(DTypeSet s, DType t) { return (s & dtype_bit(t)) != 0; }

namespace dtypes {
constexpr DTypeSet kFloat = dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16) |
                            dtype_bit(DType::Float32) | dtype_bit(DType::Float64);
constexpr DTypeSet kSignedInt = dtype_bit(DType::Int8) | dtype_bit(DType::Int16) |
                                dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
constexpr DTypeSet kInt = kSignedInt | dtype_bit(DType::UInt8);
constexpr DTypeSet kReal = kFloat | kInt;                    // ordered numbers
constexpr DTypeSet kNumber = kReal | dtype_bit(DType::Complex64);
constexpr DTypeSet kFloatComplex = kFloat | dtype_bit(DType::Complex64);
constexpr DTypeSet kSignedNumber = kFloat | kSignedInt | dtype_bit(DType::Complex64);
constexpr DTypeSet kBool = dtype_bit(DType::Bool);
constexpr DTypeSet kAll = kNumber | kBool;                   // every tensor dtype but string
constexpr DTypeSet kIndex = dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
}  // namespace dtypes

// Maps a C++ element type to its DType.
template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<complex64> { static constexpr DType value = DType::Complex64; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<float16> { static constexpr DType value = DType::Float16; };

template <class T> struct TypeTag { using type = T; };

// Calls f(TypeTag<T>{}) with the C++ type of `t`. Throws for String/Invalid.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f);

// The type arithmetic happens in: float for the 16-bit floats, T otherwise.
template <class T> struct ComputeType { using type = T; };
template <> struct ComputeType<float16> { using type = float; };
template <> struct ComputeType<bfloat16> { using type = float; };
template <class T> using compute_t = typename ComputeType<T>::type;

[[noreturn]] void throw_bad_dtype_visit(DType t);

template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::UInt8: return f(TypeTag<uint8_t>{});
    case DType::Int16: return f(TypeTag<int16_t>{});
    case DType::Int8: return f(TypeTag<int8_t>{});
    case DType::Complex64: return f(TypeTag<complex64>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::BFloat16: return f(TypeTag<bfloat16>{});
    case DType::Float16: return f(TypeTag<float16>{});
    default: throw_bad_dtype_visit(t);
  }
}

}  // namespace cairn
