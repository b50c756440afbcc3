// Neural-network ops: Softmax, LogSoftmax, Conv2D, MaxPool, AvgPool (NHWC, TensorFlow semantics
// for SAME/VALID output sizes and padding), and their backprop ops Conv2DBackpropInput,
// Conv2DBackpropFilter, MaxPoolGrad, MaxPoolGradGrad and AvgPoolGrad (TF's static shape inputs
// are attributes here).
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void softmax_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  if (in.rank() < 1) raise(Code::InvalidArgument, "{}: logits must have rank >= 1, got shape {}", c.op(), in.str());
  normalize_axis(c.attrs.i("axis"), in.rank(), c.op());
  c.set_out(0, in);
}

CAIRN_REGISTER_OP(OpBuilder("Softmax")
                      .summary("exp(x - max) / sum(exp(x - max)) along `axis` (an attribute, default -1; TF uses the last axis).")
                      .input("logits", "T")
                      .output("softmax", "T")
                      .int_attr("axis", -1)
                      .type_attr("T", dtypes::kFloat)
                      .shape(softmax_shape));
CAIRN_REGISTER_OP(OpBuilder("LogSoftmax")
                      .summary("x - max - log(sum(exp(x - max))) along `axis` (an attribute, default -1; TF uses the last axis).")
                      .input("logits", "T")
                      .output("logsoftmax", "T")
                      .int_attr("axis", -1)
                      .type_attr("T", dtypes::kFloat)
                      .shape(softmax_shape));

// A length-4 NHWC window attribute (strides, dilations, ksize) whose batch and depth entries are 1.
std::vector<int64_t> nhwc_attr(ShapeContext& c, const char* name) {
  std::vector<int64_t> v = c.attrs.ints(name);
  if (v.size() != 4) raise(Code::InvalidArgument, "{}: {} must have 4 elements (NHWC), got {}", c.op(), name, v.size());
  for (int64_t x : v)
    if (x < 1) raise(Code::InvalidArgument, "{}: {} must be positive, got {}", c.op(), name, ints_str(v));
  if (v[0] != 1 || v[3] != 1)
    raise(Code::InvalidArgument, "{}: {} in the batch and depth dimensions must be 1, got {}", c.op(), name, ints_str(v));
  return v;
}

// TensorFlow's windowed output size. SAME: ceil(in / stride). VALID: (in - window + stride) / stride
// with C division, an error when negative (the window overshoots by at least two strides).
int64_t window_output(const char* op, const char* dim, int64_t in, int64_t k, int64_t dilation, int64_t stride,
                      bool same) {
  if (k > 1 && dilation > (INT64_MAX - 1) / (k - 1))
    raise(Code::InvalidArgument, "{}: dilated window in the {} dimension is too large", op, dim);
  const int64_t window = (k - 1) * dilation + 1;
  if (same) return in == 0 ? 0 : (in - 1) / stride + 1;
  if (in >= window) return (in - window) / stride + 1;
  if (window - in - stride < stride) return 0;
  raise(Code::InvalidArgument, "{}: with VALID padding the {} window ({}) is larger than the input {} ({})", op, dim,
        window, dim, in);
}

void conv2d_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const Shape& f = c.in(1);
  if (in.rank() != 4)
    raise(Code::InvalidArgument, "Conv2D: input must be 4-D [batch, height, width, channels], got shape {}", in.str());
  if (f.rank() != 4)
    raise(Code::InvalidArgument,
          "Conv2D: filter must be 4-D [height, width, in_channels, out_channels], got shape {}", f.str());
  if (f[0] < 1 || f[1] < 1)
    raise(Code::InvalidArgument, "Conv2D: filter height and width must be positive, got filter {}", f.str());
  if (in[3] != f[2])
    raise(Code::InvalidArgument, "Conv2D: input has {} channels but the filter expects {} (input {}, filter {})", in[3],
          f[2], in.str(), f.str());
  std::vector<int64_t> s = nhwc_attr(c, "strides");
  std::vector<int64_t> d = nhwc_attr(c, "dilations");
  const bool same = c.attrs.s("padding") == "SAME";
  const int64_t oh = window_output("Conv2D", "height", in[1], f[0], d[1], s[1], same);
  const int64_t ow = window_output("Conv2D", "width", in[2], f[1], d[2], s[2], same);
  c.set_out(0, Shape{in[0], oh, ow, f[3]});
}

CAIRN_REGISTER_OP(OpBuilder("Conv2D")
                      .summary("2-D cross-correlation of NHWC input with an HWIO filter; SAME/VALID padding only, NHWC only.")
                      .input("input", "T")
                      .input("filter", "T")
                      .output("output", "T")
                      .ints_attr_required("strides")
                      .string_attr_required("padding", {"SAME", "VALID"})
                      .ints_attr("dilations", {1, 1, 1, 1})
                      .string_attr("data_format", "NHWC", {"NHWC"})
                      .type_attr("T", dtypes::kFloat)
                      .shape(conv2d_shape));

void pool_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  if (in.rank() != 4)
    raise(Code::InvalidArgument, "{}: input must be 4-D [batch, height, width, channels], got shape {}", c.op(), in.str());
  std::vector<int64_t> k = nhwc_attr(c, "ksize");
  std::vector<int64_t> s = nhwc_attr(c, "strides");
  const bool same = c.attrs.s("padding") == "SAME";
  const int64_t oh = window_output(c.op(), "height", in[1], k[1], 1, s[1], same);
  const int64_t ow = window_output(c.op(), "width", in[2], k[2], 1, s[2], same);
  c.set_out(0, Shape{in[0], oh, ow, in[3]});
}

OpBuilder pool(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("input", "T")
                       .output("output", "T")
                       .ints_attr_required("ksize")
                       .ints_attr_required("strides")
                       .string_attr_required("padding", {"SAME", "VALID"})
                       .string_attr("data_format", "NHWC", {"NHWC"})
                       .type_attr("T", dtypes::kFloat)
                       .shape(pool_shape));
}

CAIRN_REGISTER_OP(pool("MaxPool", "Maximum over each NHWC window; padding is ignored; NaN wins."));
CAIRN_REGISTER_OP(pool("AvgPool", "Mean over each NHWC window, dividing by the number of non-padding elements."));

// ---- Backprop ops ----

// A length-4 NHWC shape attribute (input_sizes, filter_sizes, orig_input_shape) as a Shape.
Shape shape_attr(ShapeContext& c, const char* name) {
  std::vector<int64_t> v = c.attrs.ints(name);
  if (v.size() != 4) raise(Code::InvalidArgument, "{}: {} must have 4 elements, got {}", c.op(), name, ints_str(v));
  for (int64_t x : v)
    if (x < 0) raise(Code::InvalidArgument, "{}: {} must be non-negative, got {}", c.op(), name, ints_str(v));
  // Shape::from rejects an element count that overflows; its message must name the op.
  const std::string what = fmt::format("{}: {}", c.op(), name);
  return Shape::from(v.data(), v.size(), what.c_str());
}

void require_rank4(ShapeContext& c, int i, const char* what) {
  if (c.in(i).rank() != 4)
    raise(Code::InvalidArgument, "{}: {} must be 4-D, got shape {}", c.op(), what, c.in(i).str());
}

// The Conv2D output shape for an input and filter shape, checked against `out_backprop`.
void check_conv_backprop(ShapeContext& c, const Shape& in, const Shape& f, const Shape& dy) {
  if (f[0] < 1 || f[1] < 1)
    raise(Code::InvalidArgument, "{}: filter height and width must be positive, got filter {}", c.op(), f.str());
  if (in[3] != f[2])
    raise(Code::InvalidArgument, "{}: input has {} channels but the filter expects {} (input {}, filter {})", c.op(),
          in[3], f[2], in.str(), f.str());
  std::vector<int64_t> s = nhwc_attr(c, "strides");
  std::vector<int64_t> d = nhwc_attr(c, "dilations");
  const bool same = c.attrs.s("padding") == "SAME";
  const Shape want{in[0], window_output(c.op(), "height", in[1], f[0], d[1], s[1], same),
                   window_output(c.op(), "width", in[2], f[1], d[2], s[2], same), f[3]};
  if (dy != want)
    raise(Code::InvalidArgument, "{}: out_backprop has shape {} but Conv2D of input {} with filter {} gives {}",
          c.op(), dy.str(), in.str(), f.str(), want.str());
}

void conv2d_backprop_input_shape(ShapeContext& c) {
  require_rank4(c, 0, "filter");
  require_rank4(c, 1, "out_backprop");
  const Shape in = shape_attr(c, "input_sizes");
  check_conv_backprop(c, in, c.in(0), c.in(1));
  c.set_out(0, in);
}

void conv2d_backprop_filter_shape(ShapeContext& c) {
  require_rank4(c, 0, "input");
  require_rank4(c, 1, "out_backprop");
  const Shape f = shape_attr(c, "filter_sizes");
  check_conv_backprop(c, c.in(0), f, c.in(1));
  c.set_out(0, f);
}

OpBuilder conv_backprop(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .ints_attr_required("strides")
                       .string_attr_required("padding", {"SAME", "VALID"})
                       .ints_attr("dilations", {1, 1, 1, 1})
                       .string_attr("data_format", "NHWC", {"NHWC"})
                       .type_attr("T", dtypes::kFloat));
}

CAIRN_REGISTER_OP(conv_backprop("Conv2DBackpropInput",
                                "Gradient of Conv2D with respect to its input: the transposed convolution of "
                                "out_backprop with the filter, shaped `input_sizes`.")
                      .input("filter", "T")
                      .input("out_backprop", "T")
                      .output("output", "T")
                      .ints_attr_required("input_sizes")
                      .shape(conv2d_backprop_input_shape));
CAIRN_REGISTER_OP(conv_backprop("Conv2DBackpropFilter",
                                "Gradient of Conv2D with respect to its filter: input patches times out_backprop, "
                                "summed over batch and positions, shaped `filter_sizes`.")
                      .input("input", "T")
                      .input("out_backprop", "T")
                      .output("output", "T")
                      .ints_attr_required("filter_sizes")
                      .shape(conv2d_backprop_filter_shape));

// The pooled shape of `in` under the op's ksize/strides/padding, checked against input `i`.
void check_pooled(ShapeContext& c, const Shape& in, int i, const char* what) {
  std::vector<int64_t> k = nhwc_attr(c, "ksize");
  std::vector<int64_t> s = nhwc_attr(c, "strides");
  const bool same = c.attrs.s("padding") == "SAME";
  const Shape want{in[0], window_output(c.op(), "height", in[1], k[1], 1, s[1], same),
                   window_output(c.op(), "width", in[2], k[2], 1, s[2], same), in[3]};
  if (c.in(i) != want)
    raise(Code::InvalidArgument, "{}: {} has shape {} but pooling input {} gives {}", c.op(), what, c.in(i).str(),
          in.str(), want.str());
}

// MaxPoolGrad(orig_input, orig_output, grad) -> orig_input's shape.
void max_pool_grad_shape(ShapeContext& c) {
  require_rank4(c, 0, "orig_input");
  check_pooled(c, c.in(0), 1, "orig_output");
  check_pooled(c, c.in(0), 2, "grad");
  c.set_out(0, c.in(0));
}

// MaxPoolGradGrad(orig_input, orig_output, grad) -> orig_output's shape; grad is shaped like orig_input.
void max_pool_grad_grad_shape(ShapeContext& c) {
  require_rank4(c, 0, "orig_input");
  check_pooled(c, c.in(0), 1, "orig_output");
  if (c.in(2) != c.in(0))
    raise(Code::InvalidArgument, "{}: grad has shape {} but orig_input has {}", c.op(), c.in(2).str(), c.in(0).str());
  c.set_out(0, c.in(1));
}

void avg_pool_grad_shape(ShapeContext& c) {
  const Shape in = shape_attr(c, "orig_input_shape");
  check_pooled(c, in, 0, "grad");
  c.set_out(0, in);
}

OpBuilder pool_backprop(const char* name, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .ints_attr_required("ksize")
                       .ints_attr_required("strides")
                       .string_attr_required("padding", {"SAME", "VALID"})
                       .string_attr("data_format", "NHWC", {"NHWC"})
                       .type_attr("T", dtypes::kFloat));
}

CAIRN_REGISTER_OP(pool_backprop("MaxPoolGrad",
                                "Gradient of MaxPool: each window's grad goes to the first element (row-major) "
                                "holding the window's maximum of orig_input (a NaN when there is one).")
                      .input("orig_input", "T")
                      .input("orig_output", "T")
                      .input("grad", "T")
                      .output("output", "T")
                      .shape(max_pool_grad_shape));
CAIRN_REGISTER_OP(pool_backprop("MaxPoolGradGrad",
                                "Gradient of MaxPoolGrad with respect to its grad: each window reads grad (shaped "
                                "like orig_input) at the element MaxPoolGrad routes to.")
                      .input("orig_input", "T")
                      .input("orig_output", "T")
                      .input("grad", "T")
                      .output("output", "T")
                      .shape(max_pool_grad_grad_shape));
CAIRN_REGISTER_OP(pool_backprop("AvgPoolGrad",
                                "Gradient of AvgPool: each window's grad spread evenly over its non-padding "
                                "elements, shaped `orig_input_shape`.")
                      .input("grad", "T")
                      .output("output", "T")
                      .ints_attr_required("orig_input_shape")
                      .shape(avg_pool_grad_shape));

}  // namespace
}  // namespace cairn
