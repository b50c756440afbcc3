// Miscellaneous elementwise ops: Cast, Identity, StopGradient, ZerosLike, OnesLike, ClipByValue, SelectV2, AddN.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

// True when `from` broadcasts to exactly `to` (NumPy rules, `to` unchanged).
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  int offset = to.rank() - from.rank();
  for (int i = 0; i < from.rank(); ++i)
    if (from[i] != 1 && from[i] != to[i + offset]) return false;
  return true;
}

void clip_shape(ShapeContext& c) {
  const Shape& t = c.in(0);
  const char* names[3] = {"t", "clip_value_min", "clip_value_max"};
  for (int k = 1; k <= 2; ++k)
    if (!broadcasts_to(c.in(k), t))
      raise(Code::InvalidArgument, "{}: {} with shape {} does not broadcast to t's shape {}", c.op(), names[k],
            c.in(k).str(), t.str());
  c.set_out(0, t);
}

void add_n_shape(ShapeContext& c) {
  for (int i = 1; i < c.num_inputs; ++i)
    if (c.in(i) != c.in(0))
      raise(Code::InvalidArgument, "{}: all inputs must have the same shape, but input {} has shape {} and input 0 has {}",
            c.op(), i, c.in(i).str(), c.in(0).str());
  c.set_out(0, c.in(0));
}

CAIRN_REGISTER_OP(OpBuilder("Cast")
                      .summary("Converts x to DstT: float->int truncates toward zero and saturates (NaN -> 0), "
                               "complex->real keeps the real part, x->bool is x != 0 (complex: either part). "
                               "Truncate=true rounds narrowing float casts toward zero instead of to nearest.")
                      .input("x", "SrcT")
                      .output("y", "DstT")
                      .type_attr("SrcT", dtypes::kAll)
                      .dtype_attr_required("DstT", dtypes::kAll)
                      .bool_attr("Truncate", false)
                      .shape(shapes::unchanged));

CAIRN_REGISTER_OP(OpBuilder("Identity")
                      .summary("A copy of the input.")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .shape(shapes::unchanged));

CAIRN_REGISTER_OP(OpBuilder("StopGradient")
                      .summary("A copy of the input that gradients do not flow through.")
                      .input("input", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .shape(shapes::unchanged));

CAIRN_REGISTER_OP(OpBuilder("ZerosLike")
                      .summary("Zeros (false for bool) with the shape and dtype of x.")
                      .input("x", "T")
                      .output("y", "T")
                      .type_attr("T", dtypes::kAll)
                      .shape(shapes::unchanged));

CAIRN_REGISTER_OP(OpBuilder("OnesLike")
                      .summary("Ones (true for bool) with the shape and dtype of x.")
                      .input("x", "T")
                      .output("y", "T")
                      .type_attr("T", dtypes::kAll)
                      .shape(shapes::unchanged));

CAIRN_REGISTER_OP(OpBuilder("ClipByValue")
                      .summary("min(max(t, clip_value_min), clip_value_max) applied as TF does (min with the "
                               "upper bound first); the bounds broadcast to t's shape; NaN in t stays NaN.")
                      .input("t", "T")
                      .input("clip_value_min", "T")
                      .input("clip_value_max", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kReal)
                      .shape(clip_shape)
                      .alias("Clip"));

CAIRN_REGISTER_OP(OpBuilder("SelectV2")
                      .summary("condition ? t : e elementwise, all three broadcasting together. The alias Select "
                               "has these V2 semantics (TF's v1 row-select by a vector condition is not supported).")
                      .input("condition", DType::Bool)
                      .input("t", "T")
                      .input("e", "T")
                      .output("output", "T")
                      .type_attr("T", dtypes::kAll)
                      .shape(shapes::broadcast)
                      .alias("Select"));

CAIRN_REGISTER_OP(OpBuilder("AddN")
                      .summary("Sum of one or more tensors of the same shape and dtype (integers wrap).")
                      .variadic_input("inputs", "T")
                      .output("sum", "T")
                      .type_attr("T", dtypes::kNumber)
                      .shape(add_n_shape));

}  // namespace
}  // namespace cairn
