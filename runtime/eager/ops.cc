#include "runtime/eager/ops.h"

#include <algorithm>

#include "runtime/ops/registry.h"

namespace cairn::op {

Tensor run1(Context& ctx, std::string_view op, const std::vector<Tensor>& inputs, const std::vector<NamedAttr>& attrs) {
  return run_op(ctx, op, inputs, attrs)[0];
}

Tensor scalar(Context& ctx, Device& device, DType dtype, double value) {
  Tensor host = Tensor::allocate(ctx.cpu(), DType::Float64, Shape{});
  *host.mutable_data<double>() = value;
  Tensor typed = dtype == DType::Float64 ? host : run1(ctx, "Cast", {host}, {attr_dtype("DstT", dtype)});
  // A scalar "on" a symbolic device (inside a function trace) stays on the CPU: the trace captures
  // it as a constant.
  if (device.kind() == DeviceKind::Symbolic) return typed;
  return tensor_on_device(typed, device);
}

Tensor scalar_like(Context& ctx, const Tensor& like, double value) {
  return scalar(ctx, *like.device(), like.dtype(), value);
}

Tensor filled(Context& ctx, Device& device, DType dtype, const Shape& shape, double value) {
  std::vector<int64_t> dims = shape.to_vector();
  return run1(ctx, "Fill", {scalar(ctx, device, dtype, value)}, {attr_ints("dims", dims)});
}

Tensor identity(Context& ctx, const Tensor& x) { return run1(ctx, "Identity", {x}); }
Tensor add(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Add", {x, y}); }
Tensor sub(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Sub", {x, y}); }
Tensor mul(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Mul", {x, y}); }
Tensor div(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "RealDiv", {x, y}); }
Tensor maximum(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Maximum", {x, y}); }
Tensor pow(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Pow", {x, y}); }
Tensor add_n(Context& ctx, const std::vector<Tensor>& xs) {
  if (xs.size() == 1) return xs[0];
  return run_op(ctx, "AddN", xs)[0];
}
Tensor neg(Context& ctx, const Tensor& x) { return run1(ctx, "Neg", {x}); }
Tensor square(Context& ctx, const Tensor& x) { return run1(ctx, "Square", {x}); }
Tensor sqrt(Context& ctx, const Tensor& x) { return run1(ctx, "Sqrt", {x}); }
Tensor rsqrt(Context& ctx, const Tensor& x) { return run1(ctx, "Rsqrt", {x}); }
Tensor exp(Context& ctx, const Tensor& x) { return run1(ctx, "Exp", {x}); }
Tensor log(Context& ctx, const Tensor& x) { return run1(ctx, "Log", {x}); }
Tensor reciprocal(Context& ctx, const Tensor& x) { return run1(ctx, "Reciprocal", {x}); }
Tensor sign(Context& ctx, const Tensor& x) { return run1(ctx, "Sign", {x}); }
Tensor relu(Context& ctx, const Tensor& x) { return run1(ctx, "Relu", {x}); }
Tensor sigmoid(Context& ctx, const Tensor& x) { return run1(ctx, "Sigmoid", {x}); }
Tensor tanh(Context& ctx, const Tensor& x) { return run1(ctx, "Tanh", {x}); }
Tensor zeros_like(Context& ctx, const Tensor& x) { return run1(ctx, "ZerosLike", {x}); }
Tensor ones_like(Context& ctx, const Tensor& x) { return run1(ctx, "OnesLike", {x}); }
Tensor cast(Context& ctx, const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return run1(ctx, "Cast", {x}, {attr_dtype("DstT", dtype)});
}
Tensor greater(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Greater", {x, y}); }
Tensor less(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Less", {x, y}); }
Tensor equal(Context& ctx, const Tensor& x, const Tensor& y) { return run1(ctx, "Equal", {x, y}); }
Tensor select(Context& ctx, const Tensor& cond, const Tensor& t, const Tensor& e) {
  return run1(ctx, "SelectV2", {cond, t, e});
}

Tensor matmul(Context& ctx, const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return run1(ctx, "MatMul", {a, b}, {attr_bool("transpose_a", transpose_a), attr_bool("transpose_b", transpose_b)});
}

namespace {
Tensor reduce(Context& ctx, const char* name, const Tensor& x, const Axes& axes, bool keep_dims) {
  return run1(ctx, name, {x}, {attr_ints("axis", axes), attr_bool("keep_dims", keep_dims)});
}
Axes all_axes(int rank) {
  Axes a(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) a[i] = i;
  return a;
}
}  // namespace

Tensor sum(Context& ctx, const Tensor& x, const Axes& axes, bool keep_dims) { return reduce(ctx, "Sum", x, axes, keep_dims); }
Tensor mean(Context& ctx, const Tensor& x, const Axes& axes, bool keep_dims) {
  return reduce(ctx, "Mean", x, axes, keep_dims);
}
Tensor reduce_max(Context& ctx, const Tensor& x, const Axes& axes, bool keep_dims) {
  return reduce(ctx, "Max", x, axes, keep_dims);
}
Tensor all_sum(Context& ctx, const Tensor& x) { return sum(ctx, x, all_axes(x.rank())); }
Tensor all_mean(Context& ctx, const Tensor& x) { return mean(ctx, x, all_axes(x.rank())); }

Tensor reshape(Context& ctx, const Tensor& x, const Shape& shape) {
  std::vector<int64_t> dims = shape.to_vector();
  return run1(ctx, "Reshape", {x}, {attr_ints("shape", dims)});
}
Tensor transpose(Context& ctx, const Tensor& x, const Axes& perm) { return run1(ctx, "Transpose", {x}, {attr_ints("perm", perm)}); }
Tensor tile(Context& ctx, const Tensor& x, const Axes& multiples) {
  return run1(ctx, "Tile", {x}, {attr_ints("multiples", multiples)});
}

Tensor broadcast_to(Context& ctx, const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  // Right-align x's dims with shape's, then tile the size-1 dims.
  const int rank = shape.rank(), offset = rank - x.rank();
  if (offset < 0) raise(Code::InvalidArgument, "broadcast_to: cannot broadcast {} to {}", x.shape().str(), shape.str());
  std::vector<int64_t> aligned(static_cast<size_t>(rank), 1);
  Axes multiples(static_cast<size_t>(rank), 1);
  for (int i = 0; i < rank; ++i) {
    int64_t xd = i >= offset ? x.shape().dim(i - offset) : 1;
    aligned[i] = xd;
    if (xd == shape.dim(i)) continue;
    if (xd != 1) raise(Code::InvalidArgument, "broadcast_to: cannot broadcast {} to {}", x.shape().str(), shape.str());
    multiples[i] = shape.dim(i);
  }
  Tensor r = reshape(ctx, x, Shape::from(aligned.data(), aligned.size(), "broadcast_to"));
  return tile(ctx, r, multiples);
}

Tensor softmax(Context& ctx, const Tensor& x, int64_t axis) { return run1(ctx, "Softmax", {x}, {attr_int("axis", axis)}); }
Tensor log_softmax(Context& ctx, const Tensor& x, int64_t axis) {
  return run1(ctx, "LogSoftmax", {x}, {attr_int("axis", axis)});
}
Tensor one_hot(Context& ctx, const Tensor& indices, int64_t depth, DType dtype) {
  return run1(ctx, "OneHot", {indices}, {attr_int("depth", depth), attr_dtype("dtype", dtype)});
}
Tensor argmax(Context& ctx, const Tensor& x, int64_t axis, DType output_type) {
  return run1(ctx, "ArgMax", {x}, {attr_int("axis", axis), attr_dtype("output_type", output_type)});
}
Tensor gather(Context& ctx, const Tensor& params, const Tensor& indices, int64_t axis) {
  return run1(ctx, "GatherV2", {params, indices}, {attr_int("axis", axis)});
}
Tensor stop_gradient(Context& ctx, const Tensor& x) { return run1(ctx, "StopGradient", {x}); }

Axes reduction_axes(const Axes& axes, int rank) {
  if (axes.empty()) return all_axes(rank);
  Axes out;
  for (int64_t a : axes) out.push_back(a < 0 ? a + rank : a);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Tensor unbroadcast(Context& ctx, const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const int rank = grad.rank(), offset = rank - shape.rank();
  Axes axes;
  for (int i = 0; i < rank; ++i) {
    int64_t d = i >= offset ? shape.dim(i - offset) : 1;
    if (d == 1 && (grad.shape().dim(i) != 1 || i < offset)) axes.push_back(i);
  }
  Tensor g = axes.empty() ? grad : sum(ctx, grad, axes, true);
  return reshape(ctx, g, shape);
}

}  // namespace cairn::op
