// Conv2D, MaxPool2D and AvgPool2D on NHWC inputs.
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/layer_util.h"

namespace cairn::nn {
namespace {

void check_padding(const Layer& layer, const std::string& padding) {
  if (padding != "SAME" && padding != "VALID")
    raise(Code::InvalidArgument, "{}: padding must be \"SAME\" or \"VALID\", got \"{}\"", layer.describe(), padding);
}

void check_positive(const Layer& layer, const char* what, int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) raise(Code::InvalidArgument, "{}: {} must be positive, got {}x{}", layer.describe(), what, a, b);
}

void require_nhwc(const Layer& layer, const Shape& s) {
  if (s.rank() != 4)
    raise(Code::InvalidArgument, "{}: input must be 4-D [batch, height, width, channels], got shape {}",
          layer.describe(), s.str());
}

class Conv2D final : public Layer {
 public:
  Conv2D(Context& ctx, const Conv2DOptions& options) : Layer(ctx, "Conv2D", options.name), options_(options) {
    if (options.filters <= 0) raise(Code::InvalidArgument, "{}: filters must be positive, got {}", describe(), options.filters);
    check_positive(*this, "kernel size", options.kernel_h, options.kernel_w);
    check_positive(*this, "strides", options.stride_h, options.stride_w);
    check_padding(*this, options.padding);
  }

 protected:
  void check_input(const Shape& s, DType dtype) const override {
    require_floating(*this, dtype);
    require_nhwc(*this, s);
    if (kernel_) require_built_for(*this, *kernel_, dtype, s[3], s, "channels");
  }

  void build(const Shape& s, DType dtype) override {
    const Shape kshape{options_.kernel_h, options_.kernel_w, s[3], options_.filters};
    kernel_ = &add_weight("kernel", kshape, options_.kernel_initializer, dtype);
    if (options_.use_bias) bias_ = &add_weight("bias", Shape{options_.filters}, options_.bias_initializer, dtype);
  }

  Tensor forward(const Tensor& x, bool) override {
    Context& ctx = context();
    const std::vector<int64_t> strides{1, options_.stride_h, options_.stride_w, 1};
    Tensor y = run_op(ctx, "Conv2D", {x, kernel_->read()},
                      {attr_ints("strides", strides), attr_string("padding", options_.padding)})[0];
    if (bias_) y = op::add(ctx, y, bias_->read());
    return activate(ctx, options_.activation, y);
  }

  void get_config(nlohmann::json& c) const override {
    c["filters"] = options_.filters;
    c["kernel_size"] = {options_.kernel_h, options_.kernel_w};
    c["strides"] = {options_.stride_h, options_.stride_w};
    c["padding"] = options_.padding;
    c["activation"] = activation_name(options_.activation);
    c["use_bias"] = options_.use_bias;
    c["kernel_initializer"] = initializer_config(options_.kernel_initializer);
    c["bias_initializer"] = initializer_config(options_.bias_initializer);
  }

 private:
  Conv2DOptions options_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

class Pool2D final : public Layer {
 public:
  // `op` is "MaxPool" or "AvgPool".
  Pool2D(Context& ctx, const char* type, const char* op, const Pool2DOptions& options)
      : Layer(ctx, type, options.name), op_(op), options_(options) {
    check_positive(*this, "pool size", options.pool_h, options.pool_w);
    if (options_.stride_h == 0) options_.stride_h = options_.pool_h;
    if (options_.stride_w == 0) options_.stride_w = options_.pool_w;
    check_positive(*this, "strides", options_.stride_h, options_.stride_w);
    check_padding(*this, options.padding);
  }

 protected:
  void check_input(const Shape& s, DType dtype) const override {
    require_floating(*this, dtype);
    require_nhwc(*this, s);
  }

  Tensor forward(const Tensor& x, bool) override {
    const std::vector<int64_t> ksize{1, options_.pool_h, options_.pool_w, 1};
    const std::vector<int64_t> strides{1, options_.stride_h, options_.stride_w, 1};
    return run_op(context(), op_, {x},
                  {attr_ints("ksize", ksize), attr_ints("strides", strides), attr_string("padding", options_.padding)})[0];
  }

  void get_config(nlohmann::json& c) const override {
    c["pool_size"] = {options_.pool_h, options_.pool_w};
    c["strides"] = {options_.stride_h, options_.stride_w};
    c["padding"] = options_.padding;
  }

 private:
  const char* op_;
  Pool2DOptions options_;
};

}  // namespace

Ref<Layer> conv2d(Context& ctx, const Conv2DOptions& options) { return make_ref<Conv2D>(ctx, options); }
Ref<Layer> max_pool2d(Context& ctx, const Pool2DOptions& options) {
  return make_ref<Pool2D>(ctx, "MaxPooling2D", "MaxPool", options);
}
Ref<Layer> avg_pool2d(Context& ctx, const Pool2DOptions& options) {
  return make_ref<Pool2D>(ctx, "AveragePooling2D", "AvgPool", options);
}

}  // namespace cairn::nn
