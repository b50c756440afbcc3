#include "runtime/core/dtype.h"

#include <cstring>

#include "runtime/core/error.h"

namespace cairn {

namespace {
struct DTypeInfo {
  DType type;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfo[] = {
    {DType::Float32, "float32", 4}, {DType::Float64, "float64", 8}, {DType::Int32, "int32", 4},
    {DType::UInt8, "uint8", 1},     {DType::Int16, "int16", 2},     {DType::Int8, "int8", 1},
    {DType::String, "string", 0},   {DType::Complex64, "complex64", 8}, {DType::Int64, "int64", 8},
    {DType::Bool, "bool", 1},       {DType::BFloat16, "bfloat16", 2},   {DType::Float16, "float16", 2},
};
const DTypeInfo* find(DType t) {
  for (const auto& i : kInfo)
    if (i.type == t) return &i;
  return nullptr;
}
}  // namespace

size_t dtype_size(DType t) {
  const DTypeInfo* i = find(t);
  return i ? i->size : 0;
}

const char* dtype_name(DType t) {
  const DTypeInfo* i = find(t);
  return i ? i->name : "invalid";
}

DType dtype_from_name(const char* name) {
  if (name == nullptr) return DType::Invalid;
  for (const auto& i : kInfo)
    if (std::strcmp(i.name, name) == 0) return i.type;
  return DType::Invalid;
}

bool dtype_is_valid(DType t) { return find(t) != nullptr; }
bool dtype_is_floating(DType t) { return dtype_in(dtypes::kFloat, t); }
bool dtype_is_integer(DType t) { return dtype_in(dtypes::kInt, t); }
bool dtype_is_signed(DType t) { return dtype_in(dtypes::kSignedNumber, t); }
bool dtype_is_complex(DType t) { return t == DType::Complex64; }
bool dtype_is_numeric(DType t) { return dtype_in(dtypes::kNumber, t); }

void throw_bad_dtype_visit(DType t) {
  raise(Code::InvalidArgument, "dtype {} ({}) has no element type here", dtype_name(t), static_cast<int>(t));
}

}  // namespace cairn
