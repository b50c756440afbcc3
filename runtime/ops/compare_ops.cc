// Comparison and logical ops with NumPy broadcasting; all output bool (TensorFlow raw-op names).
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

// Equal/NotEqual: with incompatible_shape_error=false, shapes that do not broadcast give a scalar
// (false for Equal, true for NotEqual) instead of an error, as in TensorFlow.
void equality_shape(ShapeContext& c) {
  if (c.attrs.b("incompatible_shape_error")) {
    c.set_out(0, broadcast_shapes(c.in(0), c.in(1), c.op()));
    return;
  }
  const Shape& a = c.in(0);
  const Shape& b = c.in(1);
  int rank = a.rank() > b.rank() ? a.rank() : b.rank();
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      c.set_out(0, Shape());
      return;
    }
  }
  c.set_out(0, broadcast_shapes(a, b, c.op()));
}

OpBuilder equality(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("x", "T")
                       .input("y", "T")
                       .output("z", DType::Bool)
                       .type_attr("T", dtypes::kAll)
                       .bool_attr("incompatible_shape_error", true)
                       .shape(equality_shape));
}

OpBuilder ordering(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("x", "T")
                       .input("y", "T")
                       .output("z", DType::Bool)
                       .type_attr("T", dtypes::kReal)
                       .shape(shapes::broadcast));
}

OpBuilder logical(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("x", DType::Bool)
                       .input("y", DType::Bool)
                       .output("z", DType::Bool)
                       .shape(shapes::broadcast));
}

CAIRN_REGISTER_OP(equality("Equal", "x == y with broadcasting (NaN != NaN); every dtype incl. bool and complex."));
CAIRN_REGISTER_OP(equality("NotEqual", "x != y with broadcasting (NaN != NaN); every dtype incl. bool and complex."));
CAIRN_REGISTER_OP(ordering("Less", "x < y with broadcasting; real dtypes."));
CAIRN_REGISTER_OP(ordering("LessEqual", "x <= y with broadcasting; real dtypes."));
CAIRN_REGISTER_OP(ordering("Greater", "x > y with broadcasting; real dtypes."));
CAIRN_REGISTER_OP(ordering("GreaterEqual", "x >= y with broadcasting; real dtypes."));
CAIRN_REGISTER_OP(logical("LogicalAnd", "x AND y on bool tensors, with broadcasting."));
CAIRN_REGISTER_OP(logical("LogicalOr", "x OR y on bool tensors, with broadcasting."));
CAIRN_REGISTER_OP(OpBuilder("LogicalNot")
                      .summary("NOT x on a bool tensor.")
                      .input("x", DType::Bool)
                      .output("y", DType::Bool)
                      .shape(shapes::unchanged));

}  // namespace
}  // namespace cairn
