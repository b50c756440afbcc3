// Finite-difference cases for Conv2D, MaxPool, AvgPool and their backprop ops: strides 1 and 2,
// SAME and VALID, dilation 2, odd sizes, batch and channels > 1.
#include <algorithm>
#include <numeric>
#include <random>

#include "runtime/autodiff/tape.h"
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

// Second order: fn's outputs are the gradients of sum(square(op(inputs))) / 2 taken by an inner
// tape (seeded with y itself, which avoids the Sum), so the outer tape differentiates the gradient
// functions themselves (the backprop ops).
OpFn half_squared_gradient(OpFn op) {
  return [op](Context& ctx, const std::vector<Tensor>& in) {
    GradientTape tape(ctx);
    for (const Tensor& t : in) tape.watch(t);
    Tensor y = op(ctx, in).at(0);
    return tape.gradient(y, in, &y, Unconnected::Zero);
  };
}

// One convolution setting: input and filter shapes, stride, dilation, padding.
struct ConvSetting {
  const char* label;
  Shape input, filter;
  int64_t stride, dilation;
  const char* padding;
};

const std::vector<ConvSetting>& conv_settings() {
  static const std::vector<ConvSetting> s = {
      {"VALID stride 1", {2, 5, 4, 3}, {2, 3, 3, 2}, 1, 1, "VALID"},
      {"SAME stride 1", {2, 4, 5, 2}, {3, 2, 2, 3}, 1, 1, "SAME"},
      {"SAME stride 2 odd sizes", {2, 5, 7, 2}, {3, 3, 2, 3}, 2, 1, "SAME"},
      {"VALID stride 2 odd sizes", {1, 7, 5, 3}, {3, 2, 3, 2}, 2, 1, "VALID"},
      {"SAME dilation 2", {2, 6, 5, 2}, {2, 3, 2, 2}, 1, 2, "SAME"},
      {"VALID dilation 2", {1, 7, 6, 2}, {2, 2, 2, 3}, 1, 2, "VALID"},
  };
  return s;
}

std::vector<CaseAttr> conv_attrs(const ConvSetting& s) {
  return {a_ints("strides", {1, s.stride, s.stride, 1}), a_str("padding", s.padding),
          a_ints("dilations", {1, s.dilation, s.dilation, 1})};
}

std::vector<CaseAttr> plus(std::vector<CaseAttr> attrs, CaseAttr extra) {
  attrs.push_back(std::move(extra));
  return attrs;
}

// The shape Conv2D gives for the setting (its out_backprop shape).
Shape conv_output(const ConvSetting& s) {
  return run_op(ctx(), "Conv2D", {uniform(s.input), uniform(s.filter)},
                {attr_ints("strides", {1, s.stride, s.stride, 1}), attr_string("padding", s.padding),
                 attr_ints("dilations", {1, s.dilation, s.dilation, 1})})
      .at(0)
      .shape();
}

std::vector<GradCase> conv_cases() {
  std::vector<GradCase> out;
  for (const ConvSetting& s : conv_settings()) {
    const Shape dy = conv_output(s);
    out.push_back({"Conv2D", s.label, {uniform(s.input), uniform(s.filter)}, op_fn("Conv2D", conv_attrs(s))});
    out.push_back({"Conv2DBackpropInput", s.label, {uniform(s.filter), uniform(dy)},
                   op_fn("Conv2DBackpropInput", plus(conv_attrs(s), a_ints("input_sizes", s.input.to_vector())))});
    out.push_back({"Conv2DBackpropFilter", s.label, {uniform(s.input), uniform(dy)},
                   op_fn("Conv2DBackpropFilter", plus(conv_attrs(s), a_ints("filter_sizes", s.filter.to_vector())))});
  }
  const ConvSetting& s = conv_settings()[2];
  out.push_back({"Conv2D", std::string("second order, ") + s.label, {uniform(s.input), uniform(s.filter)},
                 half_squared_gradient(op_fn("Conv2D", conv_attrs(s)))});
  return out;
}

// One pooling setting.
struct PoolSetting {
  const char* label;
  Shape input;
  int64_t kh, kw, stride;
  const char* padding;
};

const std::vector<PoolSetting>& pool_settings() {
  static const std::vector<PoolSetting> s = {
      {"2x2 VALID stride 2", {2, 4, 6, 3}, 2, 2, 2, "VALID"},
      {"3x3 SAME stride 2 odd sizes", {2, 5, 7, 2}, 3, 3, 2, "SAME"},
      {"3x2 SAME stride 1 overlapping", {1, 5, 4, 3}, 3, 2, 1, "SAME"},
      {"2x3 VALID stride 1 overlapping", {2, 5, 5, 2}, 2, 3, 1, "VALID"},
  };
  return s;
}

std::vector<CaseAttr> pool_attrs(const PoolSetting& s) {
  return {a_ints("ksize", {1, s.kh, s.kw, 1}), a_ints("strides", {1, s.stride, s.stride, 1}),
          a_str("padding", s.padding)};
}

Tensor pooled(const char* op, const PoolSetting& s, const Tensor& x) {
  return run_op(ctx(), op, {x},
                {attr_ints("ksize", {1, s.kh, s.kw, 1}), attr_ints("strides", {1, s.stride, s.stride, 1}),
                 attr_string("padding", s.padding)})
      .at(0);
}

// Distinct values 0.1 apart in shuffled order: no ties in any max window, and a finite-difference
// step never changes which element is the maximum.
Tensor without_ties(const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(99));
  for (double& x : v) x = 0.1 * x - 1;
  return f64(v, shape);
}

std::vector<GradCase> pool_cases() {
  std::vector<GradCase> out;
  for (const PoolSetting& s : pool_settings()) {
    const Tensor x = without_ties(s.input);
    const Tensor y = pooled("MaxPool", s, x);
    out.push_back({"MaxPool", s.label, {x}, op_fn("MaxPool", pool_attrs(s))});
    out.push_back({"AvgPool", s.label, {uniform(s.input)}, op_fn("AvgPool", pool_attrs(s))});
    out.push_back({"AvgPoolGrad", s.label, {uniform(y.shape())},
                   op_fn("AvgPoolGrad", plus(pool_attrs(s), a_ints("orig_input_shape", s.input.to_vector())))});
    // Every input is checked: the gradient with respect to orig_input and orig_output is zero,
    // which the finite difference sees too (no ties, so the argmax does not move).
    out.push_back({"MaxPoolGrad", s.label, {x, y, uniform(y.shape())}, op_fn("MaxPoolGrad", pool_attrs(s))});
    out.push_back({"MaxPoolGradGrad", s.label, {x, y, uniform(s.input)}, op_fn("MaxPoolGradGrad", pool_attrs(s))});
  }
  const PoolSetting& s = pool_settings()[1];
  for (const char* name : {"MaxPool", "AvgPool"})
    out.push_back({name, std::string("second order, ") + s.label, {without_ties(s.input)},
                   half_squared_gradient(op_fn(name, pool_attrs(s)))});
  return out;
}

}  // namespace

CAIRN_GRAD_CASES(conv_cases);
CAIRN_GRAD_CASES(pool_cases);

}  // namespace cairn::test
