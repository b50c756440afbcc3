// Gradients of elementwise math: unary functions, binary arithmetic (with broadcasting) and AddN.
#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

using namespace op;  // NOLINT: gradient formulas read better unqualified

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
CAIRN_NOT_DIFFERENTIABLE("StopGradient");

}  // namespace cairn
