// Gradients of elementwise math: unary functions, binary arithmetic (with broadcasting), AddN,
// ClipByValue and SelectV2, following TensorFlow's math_grad.py / nn_grad.py. The ops whose
// gradient is None in TF, or whose outputs are not floating, are marked not differentiable here.
#include <cmath>

#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

using namespace op;  // NOLINT: gradient formulas read better unqualified

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrtHalf = 0.70710678118654752440;

// ---- Binary arithmetic: each input's gradient is unbroadcast back to its shape. ----

void add_grad(GradContext& g) {
  if (g.need(0)) g.set(0, unbroadcast(g.ctx, g.dy(), g.x(0).shape()));
  if (g.need(1)) g.set(1, unbroadcast(g.ctx, g.dy(), g.x(1).shape()));
}

void sub_grad(GradContext& g) {
  if (g.need(0)) g.set(0, unbroadcast(g.ctx, g.dy(), g.x(0).shape()));
  if (g.need(1)) g.set(1, unbroadcast(g.ctx, neg(g.ctx, g.dy()), g.x(1).shape()));
}

void mul_grad(GradContext& g) {
  if (g.need(0)) g.set(0, unbroadcast(g.ctx, mul(g.ctx, g.dy(), g.x(1)), g.x(0).shape()));
  if (g.need(1)) g.set(1, unbroadcast(g.ctx, mul(g.ctx, g.x(0), g.dy()), g.x(1).shape()));
}

// z = x / y: dz/dx = 1/y, dz/dy = -x/y^2.
void div_grad(GradContext& g) {
  Context& c = g.ctx;
  if (g.need(0)) g.set(0, unbroadcast(c, div(c, g.dy(), g.x(1)), g.x(0).shape()));
  if (g.need(1)) {
    Tensor t = div(c, div(c, neg(c, g.x(0)), g.x(1)), g.x(1));
    g.set(1, unbroadcast(c, mul(c, g.dy(), t), g.x(1).shape()));
  }
}

void add_n_grad(GradContext& g) {
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.need(static_cast<int>(i))) g.set(static_cast<int>(i), g.dy());
}

// ---- Unary functions ----

void identity_grad(GradContext& g) { g.set(0, g.dy()); }
void neg_grad(GradContext& g) { g.set(0, neg(g.ctx, g.dy())); }

void square_grad(GradContext& g) {
  g.set(0, mul(g.ctx, g.dy(), mul(g.ctx, scalar_like(g.ctx, g.x(0), 2), g.x(0))));
}

void exp_grad(GradContext& g) { g.set(0, mul(g.ctx, g.dy(), g.y())); }
void log_grad(GradContext& g) { g.set(0, div(g.ctx, g.dy(), g.x(0))); }

// tanh' = 1 - y^2
void tanh_grad(GradContext& g) {
  Context& c = g.ctx;
  g.set(0, mul(c, g.dy(), sub(c, scalar_like(c, g.y(), 1), square(c, g.y()))));
}

// sigmoid' = y (1 - y)
void sigmoid_grad(GradContext& g) {
  Context& c = g.ctx;
  g.set(0, mul(c, g.dy(), mul(c, g.y(), sub(c, scalar_like(c, g.y(), 1), g.y()))));
}

void relu_grad(GradContext& g) {
  Context& c = g.ctx;
  Tensor positive = greater(c, g.x(0), scalar_like(c, g.x(0), 0));
  g.set(0, select(c, positive, g.dy(), zeros_like(c, g.dy())));
}

// Cast between floating dtypes passes the gradient back in the source dtype; TF gives no
// gradient through integer casts, and neither does the tape (it tracks only floating values).
void cast_grad(GradContext& g) {
  if (!is_differentiable_dtype(g.x(0).dtype())) return;
  g.set(0, cast(g.ctx, g.dy(), g.x(0).dtype()));
}


// ---- More binary ops ----

// z = x^y: dz/dx = y x^(y-1); dz/dy = z log(x), taken as 0 where x <= 0 (TF's choice: the real
// logarithm is undefined there, and 0^y has no useful slope in y). log is applied to a safe x so
// that the unselected branch holds no NaN that a second derivative would multiply into.
void pow_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor &x = g.x(0), &y = g.x(1), &z = g.y();
  if (g.need(0)) {
    Tensor slope = mul(c, y, pow(c, x, sub(c, y, scalar_like(c, y, 1))));
    g.set(0, unbroadcast(c, mul(c, g.dy(), slope), x.shape()));
  }
  if (g.need(1)) {
    Tensor positive = greater(c, x, scalar_like(c, x, 0));
    Tensor safe_x = select(c, positive, x, ones_like(c, x));
    Tensor log_x = select(c, positive, log(c, safe_x), zeros_like(c, x));
    g.set(1, unbroadcast(c, mul(c, g.dy(), mul(c, z, log_x)), y.shape()));
  }
}

// The gradient goes to x where `x_wins` holds, else to y (ties go to x, as in TF).
void route_grad(GradContext& g, const Tensor& x_wins) {
  Context& c = g.ctx;
  Tensor zeros = zeros_like(c, g.dy());
  if (g.need(0)) g.set(0, unbroadcast(c, select(c, x_wins, g.dy(), zeros), g.x(0).shape()));
  if (g.need(1)) g.set(1, unbroadcast(c, select(c, x_wins, zeros, g.dy()), g.x(1).shape()));
}
void maximum_grad(GradContext& g) { route_grad(g, run1(g.ctx, "GreaterEqual", {g.x(0), g.x(1)})); }
void minimum_grad(GradContext& g) { route_grad(g, run1(g.ctx, "LessEqual", {g.x(0), g.x(1)})); }

// z = (x - y)^2: dz/dx = 2 (x - y) = -dz/dy
void squared_difference_grad(GradContext& g) {
  Context& c = g.ctx;
  Tensor gx = mul(c, g.dy(), mul(c, scalar_like(c, g.dy(), 2), sub(c, g.x(0), g.x(1))));
  if (g.need(0)) g.set(0, unbroadcast(c, gx, g.x(0).shape()));
  if (g.need(1)) g.set(1, unbroadcast(c, neg(c, gx), g.x(1).shape()));
}

// z = x - floor(x / y) y: dz/dx = 1, dz/dy = -floor(x / y) (floor is piecewise constant).
void floor_mod_grad(GradContext& g) {
  Context& c = g.ctx;
  if (g.need(0)) g.set(0, unbroadcast(c, g.dy(), g.x(0).shape()));
  if (g.need(1)) {
    Tensor quotient = run1(c, "FloorDiv", {g.x(0), g.x(1)});
    g.set(1, unbroadcast(c, neg(c, mul(c, g.dy(), quotient)), g.x(1).shape()));
  }
}

// out = clip(t, lo, hi): the gradient goes to lo where t < lo, to hi where t > hi, else to t.
void clip_by_value_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& t = g.x(0);
  Tensor below = less(c, t, g.x(1));
  Tensor above = greater(c, t, g.x(2));
  Tensor zeros = zeros_like(c, g.dy());
  if (g.need(0)) g.set(0, select(c, run1(c, "LogicalOr", {below, above}), zeros, g.dy()));
  if (g.need(1)) g.set(1, unbroadcast(c, select(c, below, g.dy(), zeros), g.x(1).shape()));
  if (g.need(2)) g.set(2, unbroadcast(c, select(c, above, g.dy(), zeros), g.x(2).shape()));
}

// out = condition ? t : e. The bool condition gets no gradient.
void select_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& cond = g.x(0);
  Tensor zeros = zeros_like(c, g.dy());
  if (g.need(1)) g.set(1, unbroadcast(c, select(c, cond, g.dy(), zeros), g.x(1).shape()));
  if (g.need(2)) g.set(2, unbroadcast(c, select(c, cond, zeros, g.dy()), g.x(2).shape()));
}

// ---- More unary functions ----

// |x|' = sign(x), 0 at 0 (TF's subgradient).
void abs_grad(GradContext& g) { g.set(0, mul(g.ctx, g.dy(), sign(g.ctx, g.x(0)))); }
void sin_grad(GradContext& g) { g.set(0, mul(g.ctx, g.dy(), run1(g.ctx, "Cos", {g.x(0)}))); }
void cos_grad(GradContext& g) { g.set(0, neg(g.ctx, mul(g.ctx, g.dy(), run1(g.ctx, "Sin", {g.x(0)})))); }
void log1p_grad(GradContext& g) {
  Context& c = g.ctx;
  g.set(0, div(c, g.dy(), add(c, scalar_like(c, g.x(0), 1), g.x(0))));
}

// y = 1/x: y' = -y^2
void reciprocal_grad(GradContext& g) { g.set(0, neg(g.ctx, mul(g.ctx, g.dy(), square(g.ctx, g.y())))); }

// y = sqrt(x): y' = 0.5 / y
void sqrt_grad(GradContext& g) {
  Context& c = g.ctx;
  g.set(0, div(c, mul(c, g.dy(), scalar_like(c, g.y(), 0.5)), g.y()));
}

// y = x^(-1/2): y' = -0.5 y^3
void rsqrt_grad(GradContext& g) {
  Context& c = g.ctx;
  Tensor cube = mul(c, square(c, g.y()), g.y());
  g.set(0, mul(c, g.dy(), mul(c, scalar_like(c, cube, -0.5), cube)));
}

// erf'(x) = 2/sqrt(pi) exp(-x^2)
void erf_grad(GradContext& g) {
  Context& c = g.ctx;
  Tensor density = exp(c, neg(c, square(c, g.x(0))));
  g.set(0, mul(c, g.dy(), mul(c, scalar_like(c, density, 2 / std::sqrt(kPi)), density)));
}

// softplus'(x) = sigmoid(x)
void softplus_grad(GradContext& g) { g.set(0, mul(g.ctx, g.dy(), sigmoid(g.ctx, g.x(0)))); }

// Relu6 passes the gradient where 0 < x < 6 (as TF's Relu6Grad, which looks at the input).
void relu6_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& x = g.x(0);
  Tensor inside = run1(c, "LogicalAnd", {greater(c, x, scalar_like(c, x, 0)), less(c, x, scalar_like(c, x, 6))});
  g.set(0, select(c, inside, g.dy(), zeros_like(c, g.dy())));
}

// For y < 0, elu'(x) = exp(x) = y + 1 (TF's EluGrad, written with the output).
void elu_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& y = g.y();
  Tensor negative = less(c, y, scalar_like(c, y, 0));
  g.set(0, select(c, negative, mul(c, g.dy(), add(c, y, scalar_like(c, y, 1))), g.dy()));
}

// TF's SELU constants (Klambauer et al. 2017), the ones the Selu kernel uses.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// For y < 0, selu'(x) = scale alpha exp(x) = y + scale alpha; for x > 0 it is scale.
void selu_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& y = g.y();
  Tensor negative = less(c, y, scalar_like(c, y, 0));
  Tensor left = mul(c, g.dy(), add(c, y, scalar_like(c, y, kSeluScale * kSeluAlpha)));
  g.set(0, select(c, negative, left, mul(c, g.dy(), scalar_like(c, y, kSeluScale))));
}

// d/dx of x Phi(x): Phi(x) + x phi(x), with the standard normal cdf Phi and pdf phi.
Tensor gelu_exact_slope(Context& c, const Tensor& x) {
  auto k = [&](double v) { return scalar_like(c, x, v); };
  Tensor cdf = mul(c, k(0.5), add(c, k(1), run1(c, "Erf", {mul(c, x, k(kSqrtHalf))})));
  Tensor pdf = mul(c, k(1 / std::sqrt(2 * kPi)), exp(c, mul(c, k(-0.5), square(c, x))));
  return add(c, cdf, mul(c, x, pdf));
}

// d/dx of x s, s = sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) (the kernel's form of
// 0.5 x (1 + tanh u)): s + 2 x s (1 - s) u'.
Tensor gelu_tanh_slope(Context& c, const Tensor& x) {
  auto k = [&](double v) { return scalar_like(c, x, v); };
  const double root = std::sqrt(2 / kPi), cubic = 0.044715;
  Tensor x2 = square(c, x);
  Tensor u = mul(c, k(root), add(c, x, mul(c, k(cubic), mul(c, x2, x))));
  Tensor du = mul(c, k(root), add(c, k(1), mul(c, k(3 * cubic), x2)));
  Tensor s = sigmoid(c, mul(c, k(2), u));
  Tensor ds = mul(c, mul(c, k(2), s), sub(c, k(1), s));
  return add(c, s, mul(c, mul(c, x, ds), du));
}

void gelu_grad(GradContext& g) {
  Tensor slope = g.attrs.b("approximate") ? gelu_tanh_slope(g.ctx, g.x(0)) : gelu_exact_slope(g.ctx, g.x(0));
  g.set(0, mul(g.ctx, g.dy(), slope));
}

}  // namespace

CAIRN_REGISTER_GRADIENT("Add", add_grad);
CAIRN_REGISTER_GRADIENT("Sub", sub_grad);
CAIRN_REGISTER_GRADIENT("Mul", mul_grad);
CAIRN_REGISTER_GRADIENT("RealDiv", div_grad);
CAIRN_REGISTER_GRADIENT("AddN", add_n_grad);
CAIRN_REGISTER_GRADIENT("Identity", identity_grad);
CAIRN_REGISTER_GRADIENT("Neg", neg_grad);
CAIRN_REGISTER_GRADIENT("Square", square_grad);
CAIRN_REGISTER_GRADIENT("Exp", exp_grad);
CAIRN_REGISTER_GRADIENT("Log", log_grad);
CAIRN_REGISTER_GRADIENT("Tanh", tanh_grad);
CAIRN_REGISTER_GRADIENT("Sigmoid", sigmoid_grad);
CAIRN_REGISTER_GRADIENT("Relu", relu_grad);
CAIRN_REGISTER_GRADIENT("Cast", cast_grad);
CAIRN_REGISTER_GRADIENT("Pow", pow_grad);
CAIRN_REGISTER_GRADIENT("Maximum", maximum_grad);
CAIRN_REGISTER_GRADIENT("Minimum", minimum_grad);
CAIRN_REGISTER_GRADIENT("SquaredDifference", squared_difference_grad);
CAIRN_REGISTER_GRADIENT("FloorMod", floor_mod_grad);
CAIRN_REGISTER_GRADIENT("ClipByValue", clip_by_value_grad);
CAIRN_REGISTER_GRADIENT("SelectV2", select_grad);
CAIRN_REGISTER_GRADIENT("Abs", abs_grad);
CAIRN_REGISTER_GRADIENT("Sin", sin_grad);
CAIRN_REGISTER_GRADIENT("Cos", cos_grad);
CAIRN_REGISTER_GRADIENT("Log1p", log1p_grad);
CAIRN_REGISTER_GRADIENT("Reciprocal", reciprocal_grad);
CAIRN_REGISTER_GRADIENT("Sqrt", sqrt_grad);
CAIRN_REGISTER_GRADIENT("Rsqrt", rsqrt_grad);
CAIRN_REGISTER_GRADIENT("Erf", erf_grad);
CAIRN_REGISTER_GRADIENT("Softplus", softplus_grad);
CAIRN_REGISTER_GRADIENT("Relu6", relu6_grad);
CAIRN_REGISTER_GRADIENT("Elu", elu_grad);
CAIRN_REGISTER_GRADIENT("Selu", selu_grad);
CAIRN_REGISTER_GRADIENT("Gelu", gelu_grad);

// Piecewise constant, or outputs that are not floating: TF gives no gradient through these.
CAIRN_NOT_DIFFERENTIABLE("StopGradient");
CAIRN_NOT_DIFFERENTIABLE("Ceil");
CAIRN_NOT_DIFFERENTIABLE("Floor");
CAIRN_NOT_DIFFERENTIABLE("Round");
CAIRN_NOT_DIFFERENTIABLE("Sign");
CAIRN_NOT_DIFFERENTIABLE("FloorDiv");
CAIRN_NOT_DIFFERENTIABLE("ZerosLike");
CAIRN_NOT_DIFFERENTIABLE("OnesLike");
CAIRN_NOT_DIFFERENTIABLE("IsFinite");
CAIRN_NOT_DIFFERENTIABLE("IsNan");
// Fused optimizer updates (ops/training_ops.cc): TensorFlow gives them no gradient either.
CAIRN_NOT_DIFFERENTIABLE("ApplyGradientDescent");
CAIRN_NOT_DIFFERENTIABLE("ApplyMomentum");
CAIRN_NOT_DIFFERENTIABLE("ApplyKerasMomentum");
CAIRN_NOT_DIFFERENTIABLE("ApplyAdam");
CAIRN_NOT_DIFFERENTIABLE("ApplyAdamW");
CAIRN_NOT_DIFFERENTIABLE("ApplyRMSProp");
CAIRN_NOT_DIFFERENTIABLE("ApplyCenteredRMSProp");
CAIRN_NOT_DIFFERENTIABLE("ApplyKerasRMSProp");
CAIRN_NOT_DIFFERENTIABLE("ApplyKerasCenteredRMSProp");
CAIRN_NOT_DIFFERENTIABLE("Equal");
CAIRN_NOT_DIFFERENTIABLE("NotEqual");
CAIRN_NOT_DIFFERENTIABLE("Greater");
CAIRN_NOT_DIFFERENTIABLE("GreaterEqual");
CAIRN_NOT_DIFFERENTIABLE("Less");
CAIRN_NOT_DIFFERENTIABLE("LessEqual");
CAIRN_NOT_DIFFERENTIABLE("LogicalAnd");
CAIRN_NOT_DIFFERENTIABLE("LogicalOr");
CAIRN_NOT_DIFFERENTIABLE("LogicalNot");

}  // namespace cairn
