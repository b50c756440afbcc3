// Binary arithmetic ops with NumPy broadcasting (TensorFlow raw-op names and semantics).
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

OpBuilder binary(const char* name, DTypeSet allowed, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("x", "T")
                       .input("y", "T")
                       .output("z", "T")
                       .type_attr("T", allowed)
                       .shape(shapes::broadcast));
}

CAIRN_REGISTER_OP(binary("Add", dtypes::kNumber, "x + y, elementwise with broadcasting.").alias("AddV2"));
CAIRN_REGISTER_OP(binary("Sub", dtypes::kNumber, "x - y, elementwise with broadcasting."));
CAIRN_REGISTER_OP(binary("Mul", dtypes::kNumber, "x * y, elementwise with broadcasting."));
CAIRN_REGISTER_OP(binary("RealDiv", dtypes::kNumber,
                         "x / y; integer division truncates, and an integer divisor of zero is an error.")
                      .alias("Div"));
CAIRN_REGISTER_OP(binary("FloorDiv", dtypes::kReal, "floor(x / y); an integer divisor of zero is an error."));
CAIRN_REGISTER_OP(binary("FloorMod", dtypes::kReal,
                         "x - floor(x / y) * y, with the sign of y; an integer divisor of zero is an error."));
CAIRN_REGISTER_OP(binary("Pow", dtypes::kNumber, "x ** y; integers to negative integer powers are an error."));
CAIRN_REGISTER_OP(binary("Maximum", dtypes::kReal, "max(x, y); NaN wins for floats."));
CAIRN_REGISTER_OP(binary("Minimum", dtypes::kReal, "min(x, y); NaN wins for floats."));
CAIRN_REGISTER_OP(binary("SquaredDifference", dtypes::kNumber, "(x - y) * conj(x - y)."));

}  // namespace
}  // namespace cairn
