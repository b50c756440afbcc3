// Random tensors from the counter-based Philox4x32-10 generator (core/philox.h). Element i depends
// only on the key and i, so results never depend on the thread count. TensorFlow takes the shape
// as an input tensor; Cairn takes it as the INTS attribute `shape`.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void random_shape(ShapeContext& c) {
  const AttrValue& shape = c.attrs.get("shape");
  c.set_out(0, Shape::from(shape.ints, shape.n_ints, c.op()));
}

OpBuilder random_op(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .output("output", "dtype")
                       .ints_attr_required("shape")
                       .dtype_attr("dtype", dtypes::kFloat, DType::Float32)
                       .int_attr("seed", 0)
                       .int_attr("seed2", 0)
                       .random()
                       .shape(random_shape));
}

CAIRN_REGISTER_OP(random_op("RandomUniform",
                            "Uniform [0, 1) of attribute `shape` (Philox, not TF's stream); seeds 0,0 take a fresh per-call key from the context."));
CAIRN_REGISTER_OP(random_op("RandomStandardNormal",
                            "Standard normals (Box-Muller) of attribute `shape`; seeds 0,0 take a fresh per-call key from the context."));
CAIRN_REGISTER_OP(random_op("TruncatedNormal",
                            "Standard normals redrawn while |x| > 2, of attribute `shape`; seeds 0,0 take a fresh per-call key from the context."));

}  // namespace
}  // namespace cairn
