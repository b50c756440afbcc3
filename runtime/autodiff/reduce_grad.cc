// Gradients of the reductions Max, Min and Prod and of the scan Cumsum (Sum and Mean are in
// linalg_grad.cc), following TensorFlow's math_grad.py. Boolean reductions and the index
// reductions have no floating output and are marked not differentiable.
#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

using namespace op;  // NOLINT: gradient formulas read better unqualified

// The input's shape with the reduced axes set to 1: a reduction's output (or its gradient)
// reshaped to this broadcasts against the input.
Shape kept_shape(const Shape& in, const Axes& axes) {
  Shape kept = in;
  for (int64_t a : axes) kept.set_dim(static_cast<int>(a), 1);
  return kept;
}

Axes reduced_axes(const GradContext& g) { return reduction_axes(g.attrs.ints("axis"), g.x(0).rank()); }

// Max and Min: the gradient goes to the elements equal to the result, shared evenly among ties
// (as TF's _MinOrMaxGrad).
void extremum_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& x = g.x(0);
  const Axes axes = reduced_axes(g);
  const Shape kept = kept_shape(x.shape(), axes);
  Tensor chosen = cast(c, equal(c, x, reshape(c, g.y(), kept)), x.dtype());
  Tensor ties = sum(c, chosen, axes, true);
  g.set(0, mul(c, div(c, chosen, ties), reshape(c, g.dy(), kept)));
}

// Prod: d prod / d x_i is the product of the other elements. Dividing the product by x_i fails
// where x_i is 0, so the zeros are counted per reduced slice instead:
//   no zero:   product of the others = P / x_i
//   one zero:  the zero's gradient is the product of the nonzeros; every other element's is 0
//   more:      every gradient is 0
// P and the divisions use x with its zeros replaced by 1, so no branch ever holds inf or NaN (which
// a second derivative through the select would multiply by 0 into NaN).
void prod_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& x = g.x(0);
  const Axes axes = reduced_axes(g);
  Tensor zero = scalar_like(c, x, 0);
  Tensor is_zero = equal(c, x, zero);
  Tensor safe_x = select(c, is_zero, ones_like(c, x), x);
  Tensor nonzero_prod = run_op(c, "Prod", {safe_x}, {attr_ints("axis", axes), attr_bool("keep_dims", true)})[0];
  Tensor zeros = sum(c, cast(c, is_zero, x.dtype()), axes, true);
  Tensor no_zero = equal(c, zeros, zero);
  Tensor sole_zero = run_op(c, "LogicalAnd", {equal(c, zeros, scalar_like(c, x, 1)), is_zero})[0];
  Tensor others = select(c, no_zero, div(c, nonzero_prod, safe_x), select(c, sole_zero, nonzero_prod, zero));
  g.set(0, mul(c, others, reshape(c, g.dy(), kept_shape(x.shape(), axes))));
}

// Each input element feeds the outputs on one side of it, so its gradient is the sum of their
// gradients: a cumsum of dy in the opposite direction, exclusive exactly when the forward one was.
void cumsum_grad(GradContext& g) {
  g.set(0, run_op(g.ctx, "Cumsum", {g.dy()},
                  {attr_int("axis", g.attrs.i("axis")), attr_bool("exclusive", g.attrs.b("exclusive")),
                   attr_bool("reverse", !g.attrs.b("reverse"))})[0]);
}

}  // namespace

CAIRN_REGISTER_GRADIENT("Max", extremum_grad);
CAIRN_REGISTER_GRADIENT("Min", extremum_grad);
CAIRN_REGISTER_GRADIENT("Prod", prod_grad);
CAIRN_REGISTER_GRADIENT("Cumsum", cumsum_grad);

// Bool or index outputs.
CAIRN_NOT_DIFFERENTIABLE("All");
CAIRN_NOT_DIFFERENTIABLE("Any");
CAIRN_NOT_DIFFERENTIABLE("ArgMax");
CAIRN_NOT_DIFFERENTIABLE("ArgMin");

}  // namespace cairn
