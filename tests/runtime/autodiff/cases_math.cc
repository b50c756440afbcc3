// Finite-difference cases for the elementwise math gradients of runtime/autodiff/math_grad.cc
// beyond the core arithmetic: unary functions and activations, Pow, Maximum/Minimum,
// SquaredDifference, FloorMod, ClipByValue and SelectV2. Inputs stay away from kinks (where the
// finite difference straddles two slopes) and from domain edges.
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

// Magnitudes drawn from [lo, hi), every other element negated: both signs, none near 0.
Tensor away_from_zero(const Shape& shape, double lo = 0.2, double hi = 2) {
  std::vector<double> v = as_doubles(uniform(shape, lo, hi));
  for (size_t i = 1; i < v.size(); i += 2) v[i] = -v[i];
  return f64(v, shape);
}

using Draw = std::function<Tensor(const Shape&)>;
// Draws from [lo, hi), or with magnitudes in [lo, hi) and both signs.
Draw in(double lo, double hi) { return [lo, hi](const Shape& s) { return uniform(s, lo, hi); }; }
Draw nonzero(double lo, double hi) { return [lo, hi](const Shape& s) { return away_from_zero(s, lo, hi); }; }

// Each unary op over a few shapes (a scalar included), with inputs drawn by `draw`.
void add_unary(std::vector<GradCase>& out, const char* name, const Draw& draw,
               std::vector<CaseAttr> attrs = {}, const std::string& label = "") {
  for (const Shape& s : {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 1, 3}})
    out.push_back({name, (label.empty() ? "" : label + ", ") + "shape " + s.str(), {draw(s)}, op_fn(name, attrs)});
}

std::vector<GradCase> unary_cases() {
  std::vector<GradCase> out;
  add_unary(out, "Abs", nonzero(0.1, 3));
  add_unary(out, "Sin", in(-3, 3));
  add_unary(out, "Cos", in(-3, 3));
  add_unary(out, "Erf", in(-2.5, 2.5));
  add_unary(out, "Log1p", in(-0.6, 4));
  add_unary(out, "Reciprocal", nonzero(0.3, 2));
  add_unary(out, "Sqrt", in(0.2, 4));
  add_unary(out, "Rsqrt", in(0.2, 4));
  add_unary(out, "Softplus", in(-4, 4));
  add_unary(out, "Elu", nonzero(0.05, 3));
  add_unary(out, "Selu", nonzero(0.05, 3));
  add_unary(out, "Gelu", in(-4, 4), {}, "exact");
  add_unary(out, "Gelu", in(-4, 4), {a_bool("approximate", true)}, "approximate");
  // Relu6 on both sides of both kinks, and between them.
  out.push_back({"Relu6", "around 0 and 6", {f64({-2, -0.3, 0.4, 3, 5.6, 6.5, 9, 1.2}, {2, 4})}, op_fn("Relu6")});
  add_unary(out, "Relu6", in(0.1, 5.9), {}, "inside");
  return out;
}

// Each binary op on equal shapes, two broadcasting pairs, and a scalar; `x` and `y` draw the inputs.
void add_binary(std::vector<GradCase>& out, const char* name, const Draw& x, const Draw& y) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 1, 3}, {4, 1}}, {{3}, {2, 3}}, {{2, 3}, {}}};
  for (const auto& [sx, sy] : shapes)
    out.push_back({name, sx.str() + " with " + sy.str(), {x(sx), y(sy)}, op_fn(name)});
}

std::vector<GradCase> binary_cases() {
  std::vector<GradCase> out;
  add_binary(out, "Pow", in(0.3, 2.5), in(-2, 2));
  // A negative base with integer exponents: only x has a gradient to compare (TF gives y none there,
  // and the real power is undefined off the integers).
  out.push_back({"Pow", "negative base", {f64({-1.5, -0.7, 0.8, -2.0}, {4}), f64({2, 3, 2, 3}, {4})}, op_fn("Pow"), {0}});
  // A zero base with integer exponents >= 2: both slopes are 0, from either side.
  out.push_back({"Pow", "zero base", {f64({0, 0, 1.3}, {3}), f64({2, 3, 2.5}, {3})}, op_fn("Pow")});
  add_binary(out, "Maximum", in(-2, 2), in(-2, 2));
  add_binary(out, "Minimum", in(-2, 2), in(-2, 2));
  add_binary(out, "SquaredDifference", in(-2, 2), in(-2, 2));
  add_binary(out, "FloorMod", in(-4, 4), nonzero(0.7, 2));
  return out;
}

std::vector<GradCase> select_and_clip_cases() {
  std::vector<GradCase> out;
  auto fn_clip = op_fn("ClipByValue");
  out.push_back({"ClipByValue", "scalar bounds",
                 {f64({-2, -0.7, 0.1, 0.45, 0.8, 1.9}, {2, 3}), f64({-0.5}, {}), f64({0.6}, {})}, fn_clip});
  out.push_back({"ClipByValue", "bounds per column",
                 {uniform({4, 3}, -2, 2), uniform({3}, -1.2, -0.2), uniform({3}, 0.2, 1.2)}, fn_clip});
  out.push_back({"ClipByValue", "bounds per element",
                 {uniform({2, 3}, -2, 2), uniform({2, 3}, -1, -0.1), uniform({2, 3}, 0.1, 1)}, fn_clip});

  auto fn_select = op_fn("SelectV2");
  Tensor cond = make_as(DType::Bool, {1, 0, 0, 1, 1, 0}, {2, 3});
  out.push_back({"SelectV2", "same shape", {cond, uniform({2, 3}), uniform({2, 3})}, fn_select});
  out.push_back({"SelectV2", "broadcast t and e", {cond, uniform({3}), uniform({2, 1})}, fn_select});
  out.push_back({"SelectV2", "broadcast condition",
                 {make_as(DType::Bool, {0, 1}, {2, 1}), uniform({2, 4}), uniform({})}, fn_select});
  out.push_back({"SelectV2", "all three broadcast",
                 {make_as(DType::Bool, {1, 0, 1}, {3}), uniform({2, 1}), uniform({4, 1, 1})}, fn_select});
  return out;
}

}  // namespace

CAIRN_GRAD_CASES(unary_cases);
CAIRN_GRAD_CASES(binary_cases);
CAIRN_GRAD_CASES(select_and_clip_cases);

}  // namespace cairn::test
