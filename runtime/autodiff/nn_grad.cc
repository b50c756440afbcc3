// Gradients of Conv2D, MaxPool and AvgPool, and of their backprop ops (so that second-order
// gradients flow through convolutions and pools).
//
// Conv2D is bilinear: y = conv(x, f). Its two backprop ops are its transposes in each argument,
//   <BackpropInput(f, g), u> = <g, conv(u, f)>,   <BackpropFilter(x, g), v> = <g, conv(x, v)>,
// so each backprop op is linear in both inputs, and its gradients are again a conv or the other
// backprop op (as TF's _Conv2DBackpropInputGrad/_Conv2DBackpropFilterGrad). The pool gradients
// are linear in the incoming gradient: AvgPoolGrad is AvgPool's transpose (and AvgPool its),
// MaxPoolGrad and MaxPoolGradGrad are each other's transposes for fixed orig_input. Gradients
// with respect to orig_input/orig_output of the max-pool backprops are zero almost everywhere
// (the argmax is piecewise constant): zeros, as TF's _MaxPoolGradGrad gives.
#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

// The conv attributes (strides, padding, dilations, data_format) of a Conv2D or backprop call.
std::vector<NamedAttr> conv_attrs(const Attrs& attrs) {
  std::vector<NamedAttr> out;
  for (const char* name : {"strides", "padding", "dilations", "data_format"}) out.push_back({name, attrs.get(name)});
  return out;
}

// The pool attributes (ksize, strides, padding, data_format) of a pool or pool backprop call.
std::vector<NamedAttr> pool_attrs(const Attrs& attrs) {
  std::vector<NamedAttr> out;
  for (const char* name : {"ksize", "strides", "padding", "data_format"}) out.push_back({name, attrs.get(name)});
  return out;
}

Tensor conv2d(GradContext& g, const Tensor& x, const Tensor& f) {
  return run_op(g.ctx, "Conv2D", {x, f}, conv_attrs(g.attrs)).at(0);
}

// Runs a backprop op with the call's conv attributes and the static shape attribute `shape_attr`.
Tensor conv_backprop(GradContext& g, const char* op, const Tensor& a, const Tensor& b, const char* shape_attr,
                     const Shape& shape) {
  const std::vector<int64_t> dims = shape.to_vector();  // borrowed by the attribute until run_op returns
  std::vector<NamedAttr> attrs = conv_attrs(g.attrs);
  attrs.push_back(attr_ints(shape_attr, dims));
  return run_op(g.ctx, op, {a, b}, attrs).at(0);
}

Tensor backprop_input(GradContext& g, const Tensor& f, const Tensor& dy, const Shape& input_shape) {
  return conv_backprop(g, "Conv2DBackpropInput", f, dy, "input_sizes", input_shape);
}

Tensor backprop_filter(GradContext& g, const Tensor& x, const Tensor& dy, const Shape& filter_shape) {
  return conv_backprop(g, "Conv2DBackpropFilter", x, dy, "filter_sizes", filter_shape);
}

// y = conv(x, f): dx = BackpropInput(f, dy), df = BackpropFilter(x, dy).
void conv2d_grad(GradContext& g) {
  if (g.need(0)) g.set(0, backprop_input(g, g.x(1), g.dy(), g.x(0).shape()));
  if (g.need(1)) g.set(1, backprop_filter(g, g.x(0), g.dy(), g.x(1).shape()));
}

// y = BackpropInput(f, h) (shaped like conv's input): df = BackpropFilter(dy, h), dh = conv(dy, f).
void conv2d_backprop_input_grad(GradContext& g) {
  if (g.need(0)) g.set(0, backprop_filter(g, g.dy(), g.x(1), g.x(0).shape()));
  if (g.need(1)) g.set(1, conv2d(g, g.dy(), g.x(0)));
}

// y = BackpropFilter(x, h) (shaped like the filter): dx = BackpropInput(dy, h), dh = conv(x, dy).
void conv2d_backprop_filter_grad(GradContext& g) {
  if (g.need(0)) g.set(0, backprop_input(g, g.dy(), g.x(1), g.x(0).shape()));
  if (g.need(1)) g.set(1, conv2d(g, g.x(0), g.dy()));
}

void avg_pool_grad(GradContext& g) {
  const std::vector<int64_t> dims = g.x(0).shape().to_vector();
  std::vector<NamedAttr> attrs = pool_attrs(g.attrs);
  attrs.push_back(attr_ints("orig_input_shape", dims));
  g.set(0, run_op(g.ctx, "AvgPoolGrad", {g.dy()}, attrs).at(0));
}

// AvgPoolGrad is linear in its only input, with AvgPool as its transpose.
void avg_pool_grad_grad(GradContext& g) { g.set(0, run_op(g.ctx, "AvgPool", {g.dy()}, pool_attrs(g.attrs)).at(0)); }

void max_pool_grad(GradContext& g) {
  g.set(0, run_op(g.ctx, "MaxPoolGrad", {g.x(0), g.y(), g.dy()}, pool_attrs(g.attrs)).at(0));
}

void zero_argmax_inputs(GradContext& g) {
  for (int i : {0, 1})
    if (g.need(i)) g.set(i, op::zeros_like(g.ctx, g.x(i)));
}

// MaxPoolGrad(x, y, h) routes h to each window's argmax; its transpose in h reads there.
void max_pool_grad_grad(GradContext& g) {
  zero_argmax_inputs(g);
  if (g.need(2)) g.set(2, run_op(g.ctx, "MaxPoolGradGrad", {g.x(0), g.x(1), g.dy()}, pool_attrs(g.attrs)).at(0));
}

// MaxPoolGradGrad(x, y, h) reads h at each window's argmax; its transpose in h routes there.
void max_pool_grad_grad_grad(GradContext& g) {
  zero_argmax_inputs(g);
  if (g.need(2)) g.set(2, run_op(g.ctx, "MaxPoolGrad", {g.x(0), g.x(1), g.dy()}, pool_attrs(g.attrs)).at(0));
}

}  // namespace

CAIRN_REGISTER_GRADIENT("Conv2D", conv2d_grad);
CAIRN_REGISTER_GRADIENT("Conv2DBackpropInput", conv2d_backprop_input_grad);
CAIRN_REGISTER_GRADIENT("Conv2DBackpropFilter", conv2d_backprop_filter_grad);
CAIRN_REGISTER_GRADIENT("AvgPool", avg_pool_grad);
CAIRN_REGISTER_GRADIENT("AvgPoolGrad", avg_pool_grad_grad);
CAIRN_REGISTER_GRADIENT("MaxPool", max_pool_grad);
CAIRN_REGISTER_GRADIENT("MaxPoolGrad", max_pool_grad_grad);
CAIRN_REGISTER_GRADIENT("MaxPoolGradGrad", max_pool_grad_grad_grad);

}  // namespace cairn
