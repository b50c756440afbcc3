// MatMul: 2-D or batched (rank >= 2 with NumPy broadcasting of the batch dimensions).
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void matmul_shape(ShapeContext& c) {
  const Shape& a = c.in(0);
  const Shape& b = c.in(1);
  if (a.rank() < 2 || b.rank() < 2)
    raise(Code::InvalidArgument, "MatMul: inputs must have rank >= 2, got {} and {}", a.str(), b.str());
  bool ta = c.attrs.b("transpose_a"), tb = c.attrs.b("transpose_b");
  int64_t m = ta ? a[a.rank() - 1] : a[a.rank() - 2];
  int64_t ka = ta ? a[a.rank() - 2] : a[a.rank() - 1];
  int64_t kb = tb ? b[b.rank() - 1] : b[b.rank() - 2];
  int64_t n = tb ? b[b.rank() - 2] : b[b.rank() - 1];
  if (ka != kb)
    raise(Code::InvalidArgument, "MatMul: inner dimensions do not match: {} and {} ({} vs {})", a.str(), b.str(), ka, kb);
  Shape batch_a, batch_b;
  for (int i = 0; i < a.rank() - 2; ++i) batch_a.push_back(a[i]);
  for (int i = 0; i < b.rank() - 2; ++i) batch_b.push_back(b[i]);
  Shape out = broadcast_shapes(batch_a, batch_b, "MatMul");
  out.push_back(m);
  out.push_back(n);
  c.set_out(0, out);
}

CAIRN_REGISTER_OP(OpBuilder("MatMul")
                      .summary("Matrix product of the last two dimensions; leading dimensions broadcast.")
                      .input("a", "T")
                      .input("b", "T")
                      .output("product", "T")
                      .bool_attr("transpose_a", false)
                      .bool_attr("transpose_b", false)
                      .type_attr("T", dtypes::kFloat | dtypes::kIndex | dtype_bit(DType::Complex64))
                      .shape(matmul_shape)
                      .alias("BatchMatMulV2"));

}  // namespace
}  // namespace cairn
