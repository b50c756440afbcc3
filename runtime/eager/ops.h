// Typed C++ shorthands for running registered ops eagerly: what gradient functions, optimizers,
// layers and losses are written in. Every function dispatches through run_op, so dispatch hooks
// (the tape, graph capture) see these ops like any other, and they run on the inputs' device.
#pragma once

#include <string_view>
#include <vector>

#include "runtime/eager/dispatch.h"

namespace cairn::op {

using Axes = std::vector<int64_t>;

// The first output of `op` (for ops without a shorthand below).
Tensor run1(Context& ctx, std::string_view op, const std::vector<Tensor>& inputs,
            const std::vector<NamedAttr>& attrs = {});

// A scalar of `dtype` holding `value`, on `device`.
Tensor scalar(Context& ctx, Device& device, DType dtype, double value);
// A scalar of `like`'s dtype on `like`'s device.
Tensor scalar_like(Context& ctx, const Tensor& like, double value);
// A tensor of `dtype` and `shape` filled with `value`, on `device`.
Tensor filled(Context& ctx, Device& device, DType dtype, const Shape& shape, double value);

Tensor identity(Context& ctx, const Tensor& x);
Tensor add(Context& ctx, const Tensor& x, const Tensor& y);
Tensor sub(Context& ctx, const Tensor& x, const Tensor& y);
Tensor mul(Context& ctx, const Tensor& x, const Tensor& y);
Tensor div(Context& ctx, const Tensor& x, const Tensor& y);
Tensor maximum(Context& ctx, const Tensor& x, const Tensor& y);
Tensor pow(Context& ctx, const Tensor& x, const Tensor& y);
Tensor add_n(Context& ctx, const std::vector<Tensor>& xs);
Tensor neg(Context& ctx, const Tensor& x);
Tensor square(Context& ctx, const Tensor& x);
Tensor sqrt(Context& ctx, const Tensor& x);
Tensor rsqrt(Context& ctx, const Tensor& x);
Tensor exp(Context& ctx, const Tensor& x);
Tensor log(Context& ctx, const Tensor& x);
Tensor reciprocal(Context& ctx, const Tensor& x);
Tensor sign(Context& ctx, const Tensor& x);
Tensor relu(Context& ctx, const Tensor& x);
Tensor sigmoid(Context& ctx, const Tensor& x);
Tensor tanh(Context& ctx, const Tensor& x);
Tensor zeros_like(Context& ctx, const Tensor& x);
Tensor ones_like(Context& ctx, const Tensor& x);
Tensor cast(Context& ctx, const Tensor& x, DType dtype);
// Comparisons give bool tensors; select picks t where cond is true, e where false (broadcasting).
Tensor greater(Context& ctx, const Tensor& x, const Tensor& y);
Tensor less(Context& ctx, const Tensor& x, const Tensor& y);
Tensor equal(Context& ctx, const Tensor& x, const Tensor& y);
Tensor select(Context& ctx, const Tensor& cond, const Tensor& t, const Tensor& e);

Tensor matmul(Context& ctx, const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
Tensor sum(Context& ctx, const Tensor& x, const Axes& axes, bool keep_dims = false);
Tensor mean(Context& ctx, const Tensor& x, const Axes& axes, bool keep_dims = false);
Tensor reduce_max(Context& ctx, const Tensor& x, const Axes& axes, bool keep_dims = false);
Tensor all_sum(Context& ctx, const Tensor& x);   // the sum of every element, as a scalar
Tensor all_mean(Context& ctx, const Tensor& x);  // the mean of every element, as a scalar
Tensor reshape(Context& ctx, const Tensor& x, const Shape& shape);
Tensor transpose(Context& ctx, const Tensor& x, const Axes& perm);
Tensor tile(Context& ctx, const Tensor& x, const Axes& multiples);
Tensor broadcast_to(Context& ctx, const Tensor& x, const Shape& shape);
Tensor softmax(Context& ctx, const Tensor& x, int64_t axis = -1);
Tensor log_softmax(Context& ctx, const Tensor& x, int64_t axis = -1);
Tensor one_hot(Context& ctx, const Tensor& indices, int64_t depth, DType dtype);
Tensor argmax(Context& ctx, const Tensor& x, int64_t axis, DType output_type = DType::Int64);
Tensor gather(Context& ctx, const Tensor& params, const Tensor& indices, int64_t axis = 0);
Tensor stop_gradient(Context& ctx, const Tensor& x);

// The gradient of a broadcasting op's input: sums `grad` over the axes along which `shape` was
// broadcast, and reshapes the result to `shape`.
Tensor unbroadcast(Context& ctx, const Tensor& grad, const Shape& shape);

// Reduction axes normalised to [0, rank), sorted; an empty list means every axis.
Axes reduction_axes(const Axes& axes, int rank);

}  // namespace cairn::op
