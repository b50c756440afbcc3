// Conv2D and its backprop ops (conv.comp), MaxPool/AvgPool and their gradients (pool.comp), NHWC,
// with the CPU's window geometry (runtime/cpu/window.h: SAME puts the odd padding after).
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/window.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

constexpr uint32_t kConvForward = 0, kConvBackpropInput = 1, kConvBackpropFilter = 2;
constexpr uint32_t kMaxPool = 0, kAvgPool = 1, kMaxPoolGrad = 2, kAvgPoolGrad = 3, kMaxPoolGradGrad = 4;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// x [N,H,W,Cin], f [KH,KW,Cin,Cout], y [N,OH,OW,Cout]; `total` is the output's element count.
void run_conv(KernelContext& kc, uint32_t mode, const Shape& x, const Shape& f, const Shape& y, const Tensor& a,
              const Tensor& b, Tensor& out) {
  DType dt = out.dtype();
  if (!has_variant(kc, dt)) return;
  for (const Shape* s : {&x, &f, &y}) check_indexable(kc, s->num_elements());
  if (out.num_elements() == 0) return;
  ConvGeometry g = conv_geometry(x, f, y, kc.attrs);
  ConvPush p{u32(out.num_elements()), u32(g.batch), u32(g.in_h), u32(g.in_w), u32(g.cin), u32(g.kh),
             u32(g.kw), u32(g.cout), u32(g.out_h), u32(g.out_w), u32(g.wh.stride), u32(g.ww.stride),
             u32(g.wh.dilation), u32(g.ww.dilation), static_cast<int32_t>(g.wh.pad), static_cast<int32_t>(g.ww.pad)};
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("conv", dt).c_str(), 3, sizeof(ConvPush), {mode});
  dev.dispatch(pl, {a.buffer(), b.buffer(), out.buffer()}, &p, groups_for(p.total));
}

void conv2d_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& f = kc.input(1);
  Tensor& y = kc.output(0);
  run_conv(kc, kConvForward, x.shape(), f.shape(), y.shape(), x, f, y);
}

void conv2d_backprop_input_kernel(KernelContext& kc) {
  const Tensor& f = kc.input(0);
  const Tensor& dy = kc.input(1);
  Tensor& dx = kc.output(0);
  run_conv(kc, kConvBackpropInput, dx.shape(), f.shape(), dy.shape(), f, dy, dx);
}

void conv2d_backprop_filter_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& dy = kc.input(1);
  Tensor& df = kc.output(0);
  run_conv(kc, kConvBackpropFilter, x.shape(), df.shape(), dy.shape(), x, dy, df);
}

// in: the pooled input's shape, pooled: the pooled output's shape.
void run_pool(KernelContext& kc, uint32_t mode, const Shape& in, const Shape& pooled, const Tensor& a,
              const Tensor& b, Tensor& out) {
  DType dt = out.dtype();
  if (!has_variant(kc, dt)) return;
  check_indexable(kc, in.num_elements());
  check_indexable(kc, pooled.num_elements());
  if (out.num_elements() == 0) return;
  std::vector<int64_t> ksize = kc.attrs.ints("ksize"), strides = kc.attrs.ints("strides");
  bool same = kc.attrs.s("padding") == "SAME";
  Window wh = make_window(in[1], ksize[1], strides[1], 1, pooled[1], same);
  Window ww = make_window(in[2], ksize[2], strides[2], 1, pooled[2], same);
  PoolPush p{u32(out.num_elements()), u32(in[0]), u32(in[1]), u32(in[2]), u32(in[3]), u32(ksize[1]),
             u32(ksize[2]), u32(pooled[1]), u32(pooled[2]), u32(strides[1]), u32(strides[2]),
             static_cast<int32_t>(wh.pad), static_cast<int32_t>(ww.pad)};
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(variant("pool", dt).c_str(), 3, sizeof(PoolPush), {mode});
  dev.dispatch(pl, {a.buffer(), b.buffer(), out.buffer()}, &p, groups_for(p.total));
}

template <uint32_t Mode>
void pool_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  run_pool(kc, Mode, x.shape(), y.shape(), x, x, y);
}

void avg_pool_grad_kernel(KernelContext& kc) {
  const Tensor& dy = kc.input(0);
  Tensor& dx = kc.output(0);
  run_pool(kc, kAvgPoolGrad, dx.shape(), dy.shape(), dy, dy, dx);
}

// MaxPoolGrad(orig_input, orig_output, grad) -> like orig_input; MaxPoolGradGrad -> like orig_output.
template <uint32_t Mode>
void max_pool_grad_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& y = kc.input(1);
  const Tensor& g = kc.input(2);
  run_pool(kc, Mode, x.shape(), y.shape(), x, g, kc.output(0));
}

}  // namespace

CAIRN_REGISTER_KERNEL("Conv2D", DeviceKind::Vulkan, conv2d_kernel);
CAIRN_REGISTER_KERNEL("Conv2DBackpropInput", DeviceKind::Vulkan, conv2d_backprop_input_kernel);
CAIRN_REGISTER_KERNEL("Conv2DBackpropFilter", DeviceKind::Vulkan, conv2d_backprop_filter_kernel);
CAIRN_REGISTER_KERNEL("MaxPool", DeviceKind::Vulkan, pool_kernel<kMaxPool>);
CAIRN_REGISTER_KERNEL("AvgPool", DeviceKind::Vulkan, pool_kernel<kAvgPool>);
CAIRN_REGISTER_KERNEL("MaxPoolGrad", DeviceKind::Vulkan, max_pool_grad_kernel<kMaxPoolGrad>);
CAIRN_REGISTER_KERNEL("AvgPoolGrad", DeviceKind::Vulkan, avg_pool_grad_kernel);
CAIRN_REGISTER_KERNEL("MaxPoolGradGrad", DeviceKind::Vulkan, max_pool_grad_kernel<kMaxPoolGradGrad>);

}  // namespace cairn::gpu
