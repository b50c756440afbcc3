// Reductions over a list of axes (Sum, Mean, Prod, Max, Min, All, Any) and over one axis (ArgMax,
// ArgMin). TensorFlow takes the axes as an input tensor; Cairn takes them as the INTS attribute
// `axis`, where an empty list reduces every axis.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void reduce_shape(ShapeContext& c) {
  const AttrValue& axis = c.attrs.get("axis");
  const Shape& in = c.in(0);
  bool seen[kMaxRank] = {};
  for (size_t k = 0; k < axis.n_ints; ++k) {
    int a = normalize_axis(axis.ints[k], in.rank(), c.op());
    if (seen[a])
      raise(Code::InvalidArgument, "{}: axis {} appears more than once in axis {}", c.op(), a,
            ints_str(axis.ints, axis.n_ints));
    seen[a] = true;
  }
  shapes::reduce(c);
}

OpBuilder reduction(const char* name, DTypeSet allowed, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("input", "T")
                       .output("output", "T")
                       .ints_attr("axis", {})
                       .bool_attr("keep_dims", false)
                       .type_attr("T", allowed)
                       .shape(reduce_shape));
}

CAIRN_REGISTER_OP(reduction("Sum", dtypes::kNumber,
                            "Sum over the INTS attribute `axis` (all axes when empty); floats accumulate in double, integers wrap."));
CAIRN_REGISTER_OP(reduction("Mean", dtypes::kNumber,
                            "Mean over the attribute `axis`; integers truncate a 64-bit sum (TF wraps in T); empty floats give NaN, empty ints 0."));
CAIRN_REGISTER_OP(reduction("Prod", dtypes::kNumber, "Product over the attribute `axis`; floats accumulate in double; the empty product is 1."));
CAIRN_REGISTER_OP(reduction("Max", dtypes::kReal,
                            "Maximum over the attribute `axis`; NaN wins; empty gives the lowest value (-inf for floats)."));
CAIRN_REGISTER_OP(reduction("Min", dtypes::kReal,
                            "Minimum over the attribute `axis`; NaN wins; empty gives the highest value (+inf for floats)."));
CAIRN_REGISTER_OP(reduction("All", dtypes::kBool, "Logical and over the attribute `axis`; empty gives true."));
CAIRN_REGISTER_OP(reduction("Any", dtypes::kBool, "Logical or over the attribute `axis`; empty gives false."));

void arg_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  int axis = normalize_axis(c.attrs.i("axis"), in.rank(), c.op());
  if (in[axis] == 0)
    raise(Code::InvalidArgument, "{}: cannot reduce over axis {}, which is empty in shape {}", c.op(), axis, in.str());
  if (c.attrs.dtype("output_type") == DType::Int32 && in[axis] > INT32_MAX)
    raise(Code::InvalidArgument, "{}: axis {} has {} elements, too many for output_type int32", c.op(), axis, in[axis]);
  Shape out;
  for (int i = 0; i < in.rank(); ++i)
    if (i != axis) out.push_back(in[i]);
  c.set_out(0, out);
}

OpBuilder arg_reduction(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("input", "T")
                       .output("output", "output_type")
                       .int_attr("axis", 0)
                       .type_attr("T", dtypes::kReal)
                       .dtype_attr("output_type", dtypes::kIndex, DType::Int64)
                       .shape(arg_shape));
}

CAIRN_REGISTER_OP(arg_reduction("ArgMax",
                                "Index of the largest value along `axis` (an attribute); ties and NaNs take the first index."));
CAIRN_REGISTER_OP(arg_reduction("ArgMin",
                                "Index of the smallest value along `axis` (an attribute); ties and NaNs take the first index."));

}  // namespace
}  // namespace cairn
