// Scans and sorting: Cumsum, TopKV2, Sort. TensorFlow takes Cumsum's axis and TopKV2's k as input
// tensors; Cairn takes them as attributes with TF's names.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void axis_shape(ShapeContext& c) {
  normalize_axis(c.attrs.i("axis"), c.in(0).rank(), c.op());
  c.set_out(0, c.in(0));
}

CAIRN_REGISTER_OP(OpBuilder("Cumsum")
                      .summary("Cumulative sum along `axis` (an attribute); `exclusive` starts from 0, `reverse` scans from the end.")
                      .input("x", "T")
                      .output("out", "T")
                      .int_attr("axis", 0)
                      .bool_attr("exclusive", false)
                      .bool_attr("reverse", false)
                      .type_attr("T", dtypes::kNumber)
                      .shape(axis_shape));

void top_k_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  if (in.rank() < 1) raise(Code::InvalidArgument, "{}: input must have rank >= 1, got shape {}", c.op(), in.str());
  const int64_t k = c.attrs.i("k");
  const int64_t last = in[in.rank() - 1];
  if (k > last)
    raise(Code::InvalidArgument, "{}: k ({}) must not exceed the last dimension ({}) of input {}", c.op(), k, last,
          in.str());
  if (last > INT32_MAX)
    raise(Code::InvalidArgument, "{}: the last dimension ({}) is too large for int32 indices", c.op(), last);
  Shape out = in;
  out.set_dim(in.rank() - 1, k);
  c.set_out(0, out);
  c.set_out(1, out);
}

CAIRN_REGISTER_OP(OpBuilder("TopKV2")
                      .summary("The k largest values along the last axis and their int32 indices, largest first; ties "
                               "take the lower index; NaN counts as largest; `k` is an attribute; output is always sorted.")
                      .input("input", "T")
                      .output("values", "T")
                      .output("indices", DType::Int32)
                      .int_attr_required("k", 0)
                      .bool_attr("sorted", true)
                      .type_attr("T", dtypes::kReal)
                      .shape(top_k_shape)
                      .alias("TopK"));

CAIRN_REGISTER_OP(OpBuilder("Sort")
                      .summary("Stable sort along `axis`; NaNs sort last ascending (like NumPy) and first descending.")
                      .input("input", "T")
                      .output("output", "T")
                      .int_attr("axis", -1)
                      .bool_attr("descending", false)
                      .type_attr("T", dtypes::kReal)
                      .shape(axis_shape));

}  // namespace
}  // namespace cairn
