// Second derivatives through nested GradientTapes. For each finite-difference case of an
// elementwise op (and of MatMul and the reductions of reduce_grad.cc), an inner tape gives
// G = dL/dx for L = sum(w1 * f(x)); an outer tape around it differentiates H = sum(w2 * G). That
// must match central differences of H, where H is evaluated with the inner tape alone. This checks
// that every gradient function is built from ops whose own gradients are right.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <set>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

// The ops whose gradients are checked again under an outer tape.
const std::set<std::string>& second_order_ops() {
  static const std::set<std::string> names = {
      // unary
      "Identity", "Neg", "Square", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "Cast", "Abs", "Sin", "Cos", "Erf",
      "Log1p", "Reciprocal", "Sqrt", "Rsqrt", "Softplus", "Relu6", "Elu", "Selu", "Gelu",
      // binary and n-ary
      "Add", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "SquaredDifference", "FloorMod", "AddN",
      "ClipByValue", "SelectV2",
      // beyond elementwise
      "MatMul", "Max", "Min", "Prod", "Cumsum"};
  return names;
}

// Cases placed on purpose where the function is differentiable once but not twice: a tie in Max
// or Min (the share of the gradient jumps), zeros in Prod (the gradient there is assembled per
// zero count, which TF's cumprod form does not differentiate either), and Pow's zero base (the
// y-slope x^y log x is not twice differentiable at 0).
bool only_once_differentiable(const GradCase& c) {
  return c.label.find("tie") != std::string::npos || c.label.find("zero") != std::string::npos;
}

struct Weights {
  std::vector<Tensor> outputs;  // w1, one per floating output
  std::vector<Tensor> sources;  // w2, one per differentiated input
};

std::vector<int> floating_inputs(const GradCase& c) {
  if (!c.wrt.empty()) return c.wrt;
  std::vector<int> wrt;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].dtype() == DType::Float64) wrt.push_back(static_cast<int>(i));
  return wrt;
}

// H(inputs) = sum_s sum(w2_s * dL/dx_s), with dL/dx from a tape of its own. When an outer tape
// watches the inputs, it records the whole computation, the gradient functions included.
Tensor weighted_gradient(Context& ctx, const GradCase& c, const std::vector<Tensor>& inputs,
                         const std::vector<int>& wrt, const Weights& w) {
  GradientTape inner(ctx);
  std::vector<Tensor> sources;
  for (int i : wrt) {
    inner.watch(inputs[static_cast<size_t>(i)]);
    sources.push_back(inputs[static_cast<size_t>(i)]);
  }
  std::vector<Tensor> outputs = c.fn(ctx, inputs);
  std::vector<Tensor> terms;
  for (size_t k = 0; k < outputs.size(); ++k)
    if (w.outputs[k].valid()) terms.push_back(op::all_sum(ctx, op::mul(ctx, outputs[k], w.outputs[k])));
  std::vector<Tensor> grads = inner.gradient(op::add_n(ctx, terms), sources, nullptr, Unconnected::Zero);
  std::vector<Tensor> weighted;
  for (size_t s = 0; s < grads.size(); ++s) weighted.push_back(op::all_sum(ctx, op::mul(ctx, grads[s], w.sources[s])));
  return op::add_n(ctx, weighted);
}

// The largest relative error of the outer tape's dH/dx against central differences of H.
GradReport check_second_order(Context& ctx, const GradCase& c) {
  const std::vector<int> wrt = floating_inputs(c);
  Weights w;
  for (const Tensor& out : c.fn(ctx, c.inputs))
    w.outputs.push_back(out.dtype() == DType::Float64 ? uniform(out.shape(), 0.5, 1.5) : Tensor());
  for (int i : wrt) w.sources.push_back(uniform(c.inputs[static_cast<size_t>(i)].shape(), 0.5, 1.5));

  std::vector<Tensor> analytic;
  {
    GradientTape outer(ctx);
    std::vector<Tensor> sources;
    for (int i : wrt) {
      outer.watch(c.inputs[static_cast<size_t>(i)]);
      sources.push_back(c.inputs[static_cast<size_t>(i)]);
    }
    Tensor h = weighted_gradient(ctx, c, c.inputs, wrt, w);
    analytic = outer.gradient(h, sources, nullptr, Unconnected::Zero);
  }

  GradReport report;
  for (size_t s = 0; s < wrt.size(); ++s) {
    const size_t input = static_cast<size_t>(wrt[s]);
    const std::vector<double> xv = as_doubles(c.inputs[input]);
    const std::vector<double> got = as_doubles(analytic[s]);
    for (size_t e = 0; e < xv.size(); ++e) {
      auto h_at = [&](double delta) {
        std::vector<double> moved = xv;
        moved[e] += delta;
        std::vector<Tensor> in = c.inputs;
        in[input] = f64(moved, c.inputs[input].shape());
        return as_doubles(weighted_gradient(ctx, c, in, wrt, w))[0];
      };
      const double numeric = (h_at(c.step) - h_at(-c.step)) / (2 * c.step);
      const double err = std::fabs(got[e] - numeric) / std::max(1.0, std::fabs(numeric));
      if (!(err <= report.max_error)) {  // also catches NaN
        report.max_error = std::isnan(err) ? INFINITY : err;
        report.worst = fmt::format("input {} element {}: outer tape {} vs finite difference {}", wrt[s], e, got[e], numeric);
      }
    }
  }
  return report;
}

}  // namespace

TEST_CASE("second derivatives from nested tapes match finite differences of the first") {
  std::set<std::string> checked;
  for (const GradCase& c : grad_cases()) {
    if (!second_order_ops().count(c.op) || only_once_differentiable(c)) continue;
    CAPTURE(c.op);
    CAPTURE(c.label);
    GradReport r;
    try {
      r = check_second_order(ctx(), c);
    } catch (const Error& e) {
      FAIL_CHECK(c.op << " [" << c.label << "] threw: " << e.message());
      continue;
    }
    CHECK_MESSAGE(r.max_error <= c.tolerance, c.op << " [" << c.label << "]: " << r.worst);
    checked.insert(c.op);
  }
  // Every listed op had at least one case smooth enough to check.
  for (const std::string& name : second_order_ops()) CHECK_MESSAGE(checked.count(name), "no second-order check for " << name);
}

// d/dx of the first derivative of f, both from tapes: the outer one records the inner's gradient.
std::vector<double> second_derivative(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  Context& c = ctx();
  GradientTape outer(c);
  outer.watch(x);
  Tensor first;
  {
    GradientTape inner(c);
    inner.watch(x);
    first = inner.gradient(f(x), {x})[0];
  }
  return as_doubles(outer.gradient(first, {x})[0]);
}

TEST_CASE("d2/dx2 x^3 = 6x through Mul and through Pow") {
  const std::vector<double> xs = {-2, -0.5, 0.25, 1, 3};
  Tensor x = f64(xs, {5});
  Context& c = ctx();
  auto cube_by_mul = [&](const Tensor& t) { return op::mul(c, op::mul(c, t, t), t); };
  auto cube_by_pow = [&](const Tensor& t) { return op::pow(c, t, op::scalar_like(c, t, 3)); };
  for (const auto& f : {std::function<Tensor(const Tensor&)>(cube_by_mul), std::function<Tensor(const Tensor&)>(cube_by_pow)}) {
    std::vector<double> got = second_derivative(f, x);
    REQUIRE(got.size() == xs.size());
    for (size_t i = 0; i < xs.size(); ++i) CHECK(got[i] == doctest::Approx(6 * xs[i]).epsilon(1e-12));
  }
}

TEST_CASE("d2/dx2 sin x = -sin x, and the third derivative from three tapes is -cos x") {
  Context& c = ctx();
  const std::vector<double> xs = {-1.3, 0.2, 2.4};
  Tensor x = f64(xs, {3});
  auto sin = [&](const Tensor& t) { return run_op(c, "Sin", {t})[0]; };
  std::vector<double> second = second_derivative(sin, x);
  for (size_t i = 0; i < xs.size(); ++i) CHECK(second[i] == doctest::Approx(-std::sin(xs[i])).epsilon(1e-12));

  GradientTape third_tape(c);
  third_tape.watch(x);
  Tensor second_t;
  {
    GradientTape outer(c);
    outer.watch(x);
    Tensor first;
    {
      GradientTape inner(c);
      inner.watch(x);
      first = inner.gradient(sin(x), {x})[0];
    }
    second_t = outer.gradient(first, {x})[0];
  }
  std::vector<double> third = as_doubles(third_tape.gradient(second_t, {x})[0]);
  for (size_t i = 0; i < xs.size(); ++i) CHECK(third[i] == doctest::Approx(-std::cos(xs[i])).epsilon(1e-12));
}

}  // namespace cairn::test
