// Gradients of MatMul (with transposes and broadcast batch dimensions), reductions Sum and Mean,
// Reshape, and the softmax family.
#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

using namespace op;  // NOLINT

// C = op(A) op(B). For the four transpose combinations (as TF's _MatMulGrad):
//   ta=0 tb=0: dA = dC B^T,   dB = A^T dC
//   ta=0 tb=1: dA = dC B,     dB = dC^T A
//   ta=1 tb=0: dA = B dC^T,   dB = A dC
//   ta=1 tb=1: dA = B^T dC^T, dB = dC^T A^T
// Batch dimensions broadcast, so each gradient is unbroadcast to its input's shape.
void matmul_grad(GradContext& g) {
  Context& c = g.ctx;
  const bool ta = g.attrs.b("transpose_a"), tb = g.attrs.b("transpose_b");
  const Tensor &a = g.x(0), &b = g.x(1), &dc = g.dy();
  if (g.need(0)) {
    Tensor da = !ta ? matmul(c, dc, b, false, !tb) : (!tb ? matmul(c, b, dc, false, true) : matmul(c, b, dc, true, true));
    g.set(0, unbroadcast(c, da, a.shape()));
  }
  if (g.need(1)) {
    Tensor db = !tb ? (!ta ? matmul(c, a, dc, true, false) : matmul(c, a, dc, false, false))
                    : (!ta ? matmul(c, dc, a, true, false) : matmul(c, dc, a, true, true));
    g.set(1, unbroadcast(c, db, b.shape()));
  }
}

// The reduced gradient broadcast back over the reduced axes.
Tensor expand_reduced(Context& c, const Tensor& dy, const Shape& in_shape, const Axes& axes) {
  Shape kept = in_shape;
  for (int64_t a : axes) kept.set_dim(static_cast<int>(a), 1);
  return broadcast_to(c, reshape(c, dy, kept), in_shape);
}

void sum_grad(GradContext& g) {
  Axes axes = reduction_axes(g.attrs.ints("axis"), g.x(0).rank());
  g.set(0, expand_reduced(g.ctx, g.dy(), g.x(0).shape(), axes));
}

void mean_grad(GradContext& g) {
  Context& c = g.ctx;
  const Shape& s = g.x(0).shape();
  Axes axes = reduction_axes(g.attrs.ints("axis"), g.x(0).rank());
  int64_t count = 1;
  for (int64_t a : axes) count *= s.dim(static_cast<int>(a));
  Tensor scaled = div(c, g.dy(), scalar_like(c, g.dy(), static_cast<double>(count)));
  g.set(0, expand_reduced(c, scaled, s, axes));
}

void reshape_grad(GradContext& g) { g.set(0, reshape(g.ctx, g.dy(), g.x(0).shape())); }

// y = softmax(x): dx = (dy - sum(dy * y, axis)) * y
void softmax_grad(GradContext& g) {
  Context& c = g.ctx;
  int64_t axis = g.attrs.i("axis");
  Tensor dot = sum(c, mul(c, g.dy(), g.y()), {axis}, true);
  g.set(0, mul(c, sub(c, g.dy(), dot), g.y()));
}

// y = log_softmax(x): dx = dy - exp(y) * sum(dy, axis)
void log_softmax_grad(GradContext& g) {
  Context& c = g.ctx;
  int64_t axis = g.attrs.i("axis");
  Tensor total = sum(c, g.dy(), {axis}, true);
  g.set(0, sub(c, g.dy(), mul(c, exp(c, g.y()), total)));
}

}  // namespace

CAIRN_REGISTER_GRADIENT("MatMul", matmul_grad);
CAIRN_REGISTER_GRADIENT("Sum", sum_grad);
CAIRN_REGISTER_GRADIENT("Mean", mean_grad);
CAIRN_REGISTER_GRADIENT("Reshape", reshape_grad);
CAIRN_REGISTER_GRADIENT("Softmax", softmax_grad);
CAIRN_REGISTER_GRADIENT("LogSoftmax", log_softmax_grad);

}  // namespace cairn
