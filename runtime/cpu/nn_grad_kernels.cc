// CPU kernels for the backprop ops of ops/nn_ops.cc: Conv2DBackpropInput, Conv2DBackpropFilter,
// MaxPoolGrad, MaxPoolGradGrad and AvgPoolGrad.
//
// The convolution backprops reuse Conv2D's im2col view (window.h): over fixed-size tiles of output
// positions, the filter gradient accumulates patches^T * out_backprop, and the input gradient
// computes out_backprop * filter^T (one patch-shaped row per output position) and scatters each
// row back onto the input pixels it was gathered from (col2im). Tiles run in order and the GEMMs
// are threaded by BLAS; the pool gathers patches, and scatters one image per task (images never
// overlap). The pool gradients scatter per (image, block of channels), which are also disjoint.
// So the summation order depends only on the shapes, never on the thread count. 16-bit floats
// accumulate in float and are rounded once at the end.
#include <cmath>
#include <vector>

#include "runtime/cpu/elementwise.h"
#include "runtime/cpu/window.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

// A zeroed accumulator in compute_t<T> over an output tensor: the output itself for float and
// double, a float buffer copied (rounded) into the output by finish() for 16-bit types.
template <class T>
class Accumulator {
 public:
  using C = compute_t<T>;
  explicit Accumulator(Tensor& out) : out_(out) {
    const auto n = static_cast<size_t>(out.num_elements());
    if constexpr (std::is_same_v<T, C>) {
      data_ = out.mutable_data<T>();
      std::fill(data_, data_ + n, C(0));
    } else {
      wide_.assign(n, C(0));
      data_ = wide_.data();
    }
  }
  C* data() { return data_; }
  void finish() {
    if constexpr (!std::is_same_v<T, C>) {
      T* dst = out_.mutable_data<T>();
      for (size_t i = 0; i < wide_.size(); ++i) dst[i] = convert<T>(wide_[i]);
    }
  }

 private:
  Tensor& out_;
  std::vector<C> wide_;
  C* data_ = nullptr;
};

// `t`'s elements [begin, begin + n) as compute_t<T>: a pointer into t for float and double,
// otherwise widened into `scratch`.
template <class T>
const compute_t<T>* widened(const Tensor& t, int64_t begin, int64_t n, std::vector<compute_t<T>>& scratch) {
  const T* p = t.data<T>() + begin;
  if constexpr (std::is_same_v<T, compute_t<T>>) {
    return p;
  } else {
    scratch.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) scratch[static_cast<size_t>(i)] = widen(p[i]);
    return scratch.data();
  }
}

// Rows per im2col tile: about 2^18 patch elements, at least 16 rows (as Conv2D).
int64_t tile_rows(int64_t rows, int64_t k) { return std::min(rows, std::max<int64_t>(16, (int64_t{1} << 18) / k)); }

void check_blas_range(const KernelContext& kc, int64_t k, int64_t cout, int64_t tile) {
  if (k > INT32_MAX || cout > INT32_MAX || tile > INT32_MAX)
    raise(Code::InvalidArgument, "{}: filter of {} taps x {} output channels is too large for the BLAS int range",
          kc.op(), k, cout);
}

// ---------------------------------------------------------------------------------------------
// Conv2DBackpropFilter(input, out_backprop) -> [KH, KW, Cin, Cout]: sum over output positions
// of patch (x) out_backprop.

template <class T>
void conv2d_backprop_filter(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& dy = kc.input(1);
  Tensor& df = kc.output(0);
  if (df.num_elements() == 0) return;
  using C = compute_t<T>;
  const ConvGeometry g = conv_geometry(x.shape(), df.shape(), dy.shape(), kc.attrs);
  const int64_t k = g.k(), rows = g.rows(), cout = g.cout;
  Accumulator<T> acc(df);
  if (rows > 0) {
    const int64_t tile = tile_rows(rows, k);
    check_blas_range(kc, k, cout, tile);
    const T* in = x.data<T>();
    std::vector<C> patches(static_cast<size_t>(tile * k)), dy_wide;
    for (int64_t r0 = 0; r0 < rows; r0 += tile) {
      const int64_t m = std::min(tile, rows - r0);
      kc.pool.parallel_for(m, std::max<int64_t>(1, 4096 / k),
                           [&](int64_t b, int64_t e) { im2col(g, in, r0 + b, r0 + e, patches.data() + b * k); });
      const C* grad = widened<T>(dy, r0 * cout, m * cout, dy_wide);
      // df[k, cout] += patches[m, k]^T grad[m, cout]
      gemm<C>(patches.data(), grad, acc.data(), k, cout, m, true, false, C(1));
    }
  }
  acc.finish();
}

// ---------------------------------------------------------------------------------------------
// Conv2DBackpropInput(filter, out_backprop) -> [N, H, W, Cin]: each output position's
// out_backprop row times filter^T, added back onto the input pixels of its patch.

template <class T>
void conv2d_backprop_input(KernelContext& kc) {
  const Tensor& f = kc.input(0);
  const Tensor& dy = kc.input(1);
  Tensor& dx = kc.output(0);
  if (dx.num_elements() == 0) return;
  using C = compute_t<T>;
  const ConvGeometry g = conv_geometry(dx.shape(), f.shape(), dy.shape(), kc.attrs);
  const int64_t k = g.k(), rows = g.rows(), cout = g.cout, cin = g.cin;
  Accumulator<T> acc(dx);
  if (rows > 0 && cout > 0) {
    const int64_t tile = tile_rows(rows, k);
    check_blas_range(kc, k, cout, tile);
    std::vector<C> filter_wide, dy_wide, cols(static_cast<size_t>(tile * k));
    const C* filter = widened<T>(f, 0, k * cout, filter_wide);
    const int64_t per_image = g.out_h * g.out_w;
    C* out = acc.data();
    for (int64_t r0 = 0; r0 < rows; r0 += tile) {
      const int64_t m = std::min(tile, rows - r0);
      const C* grad = widened<T>(dy, r0 * cout, m * cout, dy_wide);
      // cols[m, k] = grad[m, cout] filter[k, cout]^T
      gemm<C>(grad, filter, cols.data(), m, k, cout, false, true);
      // col2im, one image per task: rows of one image scatter in order, images are disjoint.
      const int64_t first = r0 / per_image, last = (r0 + m - 1) / per_image;
      kc.pool.parallel_for(last - first + 1, 1, [&](int64_t b, int64_t e) {
        for (int64_t img = first + b; img < first + e; ++img) {
          const int64_t lo = std::max(r0, img * per_image), hi = std::min(r0 + m, (img + 1) * per_image);
          for (int64_t r = lo; r < hi; ++r) {
            const C* row = cols.data() + (r - r0) * k;
            for_each_tap(g, r, [&](int64_t offset, int64_t pixel) {
              if (pixel < 0) return;
              C* dst = out + pixel * cin;
              const C* src = row + offset;
              for (int64_t c = 0; c < cin; ++c) dst[c] += src[c];
            });
          }
        }
      });
    }
  }
  acc.finish();
}

// ---------------------------------------------------------------------------------------------
// Pool gradients. Each output (image, oy, ox, channel) has a window of in-bounds input pixels.

struct PoolGeometry {
  int64_t batch, in_h, in_w, ch, out_h, out_w;
  Window wh, ww;
};

PoolGeometry pool_geometry(const Shape& in, const Shape& out, const Attrs& attrs) {
  const std::vector<int64_t> ksize = attrs.ints("ksize"), strides = attrs.ints("strides");
  const bool same = attrs.s("padding") == "SAME";
  PoolGeometry g{in[0], in[1], in[2], in[3], out[1], out[2], {}, {}};
  g.wh = make_window(g.in_h, ksize[1], strides[1], 1, g.out_h, same);
  g.ww = make_window(g.in_w, ksize[2], strides[2], 1, g.out_w, same);
  return g;
}

// The in-bounds inputs [begin, end) of window o (written so that huge windows cannot overflow).
struct Range {
  int64_t begin, end;
};
Range window_range(const Window& w, int64_t o) {
  const int64_t start = o * w.stride - w.pad;
  return {std::max<int64_t>(0, start), w.k >= w.in - start ? w.in : start + w.k};
}

constexpr int64_t kChannelBlock = 16;

// Runs fn(image, c0, c1, oy, ox, rows, cols) for every output position, split across the pool by
// (image, block of channels): tasks touch disjoint input pixels and channels.
template <class F>
void for_each_window(KernelContext& kc, const PoolGeometry& g, F&& fn) {
  const int64_t blocks = (g.ch + kChannelBlock - 1) / kChannelBlock;
  const int64_t work = std::max<int64_t>(
      1, g.out_h * g.out_w * std::min(g.wh.k, g.in_h) * std::min(g.ww.k, g.in_w) * std::min(g.ch, kChannelBlock));
  kc.pool.parallel_for(g.batch * blocks, std::max<int64_t>(1, 16384 / work), [&](int64_t b, int64_t e) {
    for (int64_t unit = b; unit < e; ++unit) {
      const int64_t nb = unit / blocks, c0 = (unit % blocks) * kChannelBlock, c1 = std::min(g.ch, c0 + kChannelBlock);
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const Range ry = window_range(g.wh, oy);
        for (int64_t ox = 0; ox < g.out_w; ++ox) fn(nb, c0, c1, oy, ox, ry, window_range(g.ww, ox));
      }
    }
  });
}

// The flat index of the element MaxPool's window picks for channel c: the first (row-major)
// holding the maximum, or the first NaN (MaxPool lets NaN win).
template <class T>
int64_t window_argmax(const T* in, const PoolGeometry& g, int64_t nb, int64_t c, Range ry, Range rx) {
  int64_t best = -1;
  compute_t<T> best_v = 0;
  for (int64_t iy = ry.begin; iy < ry.end; ++iy)
    for (int64_t ix = rx.begin; ix < rx.end; ++ix) {
      const int64_t idx = ((nb * g.in_h + iy) * g.in_w + ix) * g.ch + c;
      const compute_t<T> v = widen(in[idx]);
      if (best < 0 || v > best_v || (std::isnan(v) && !std::isnan(best_v))) {
        best = idx;
        best_v = v;
      }
    }
  return best;
}

// MaxPoolGrad(orig_input, orig_output, grad): each window's grad added at its argmax.
template <class T>
void max_pool_grad(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& dy = kc.input(2);
  Tensor& dx = kc.output(0);
  if (dx.num_elements() == 0) return;
  const PoolGeometry g = pool_geometry(x.shape(), dy.shape(), kc.attrs);
  Accumulator<T> acc(dx);
  const T* in = x.data<T>();
  const T* grad = dy.data<T>();
  compute_t<T>* out = acc.data();
  for_each_window(kc, g, [&](int64_t nb, int64_t c0, int64_t c1, int64_t oy, int64_t ox, Range ry, Range rx) {
    const T* src = grad + ((nb * g.out_h + oy) * g.out_w + ox) * g.ch;
    for (int64_t c = c0; c < c1; ++c) out[window_argmax(in, g, nb, c, ry, rx)] += widen(src[c]);
  });
  acc.finish();
}

// MaxPoolGradGrad(orig_input, orig_output, grad): each window reads grad at its argmax.
template <class T>
void max_pool_grad_grad(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& ddx = kc.input(2);
  Tensor& ddy = kc.output(0);
  if (ddy.num_elements() == 0) return;
  const PoolGeometry g = pool_geometry(x.shape(), ddy.shape(), kc.attrs);
  const T* in = x.data<T>();
  const T* grad = ddx.data<T>();
  T* out = ddy.mutable_data<T>();
  for_each_window(kc, g, [&](int64_t nb, int64_t c0, int64_t c1, int64_t oy, int64_t ox, Range ry, Range rx) {
    T* dst = out + ((nb * g.out_h + oy) * g.out_w + ox) * g.ch;
    for (int64_t c = c0; c < c1; ++c) dst[c] = grad[window_argmax(in, g, nb, c, ry, rx)];
  });
}

// AvgPoolGrad(grad): each window's grad divided evenly among its in-bounds elements.
template <class T>
void avg_pool_grad(KernelContext& kc) {
  const Tensor& dy = kc.input(0);
  Tensor& dx = kc.output(0);
  if (dx.num_elements() == 0) return;
  using C = compute_t<T>;
  const PoolGeometry g = pool_geometry(dx.shape(), dy.shape(), kc.attrs);
  Accumulator<T> acc(dx);
  const T* grad = dy.data<T>();
  C* out = acc.data();
  for_each_window(kc, g, [&](int64_t nb, int64_t c0, int64_t c1, int64_t oy, int64_t ox, Range ry, Range rx) {
    const T* src = grad + ((nb * g.out_h + oy) * g.out_w + ox) * g.ch;
    const C count = static_cast<C>((ry.end - ry.begin) * (rx.end - rx.begin));
    for (int64_t iy = ry.begin; iy < ry.end; ++iy)
      for (int64_t ix = rx.begin; ix < rx.end; ++ix) {
        C* dst = out + ((nb * g.in_h + iy) * g.in_w + ix) * g.ch;
        for (int64_t c = c0; c < c1; ++c) dst[c] += widen(src[c]) / count;
      }
  });
  acc.finish();
}

// Calls fn(tag) with the dtype tag of input 0 when it is a float type.
template <class F>
void on_float_input(KernelContext& kc, F&& fn) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) fn(tag);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

#define CAIRN_TYPED(fn) [&](auto tag) { fn<typename decltype(tag)::type>(kc); }
void conv2d_backprop_input_kernel(KernelContext& kc) { on_float_input(kc, CAIRN_TYPED(conv2d_backprop_input)); }
void conv2d_backprop_filter_kernel(KernelContext& kc) { on_float_input(kc, CAIRN_TYPED(conv2d_backprop_filter)); }
void max_pool_grad_kernel(KernelContext& kc) { on_float_input(kc, CAIRN_TYPED(max_pool_grad)); }
void max_pool_grad_grad_kernel(KernelContext& kc) { on_float_input(kc, CAIRN_TYPED(max_pool_grad_grad)); }
void avg_pool_grad_kernel(KernelContext& kc) { on_float_input(kc, CAIRN_TYPED(avg_pool_grad)); }
#undef CAIRN_TYPED

CAIRN_REGISTER_KERNEL("Conv2DBackpropInput", DeviceKind::CPU, conv2d_backprop_input_kernel);
CAIRN_REGISTER_KERNEL("Conv2DBackpropFilter", DeviceKind::CPU, conv2d_backprop_filter_kernel);
CAIRN_REGISTER_KERNEL("MaxPoolGrad", DeviceKind::CPU, max_pool_grad_kernel);
CAIRN_REGISTER_KERNEL("MaxPoolGradGrad", DeviceKind::CPU, max_pool_grad_grad_kernel);
CAIRN_REGISTER_KERNEL("AvgPoolGrad", DeviceKind::CPU, avg_pool_grad_kernel);

}  // namespace
}  // namespace cairn
