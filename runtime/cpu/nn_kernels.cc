// CPU kernels for ops/nn_ops.cc.
//
// Conv2D lowers to im2col + GEMM (OpenBLAS through xtensor-blas's cxxblas layer, as MatMul does):
// output positions are cut into fixed-size tiles of rows; each tile's patches are gathered into a
// [rows, KH*KW*Cin] matrix and multiplied by the filter seen as a [KH*KW*Cin, Cout] matrix. The
// tiling depends only on the shapes, so results never depend on the thread count. 16-bit floats
// are widened to float for the GEMM.
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/cpu/axis.h"
#include "runtime/cpu/elementwise.h"
#include "runtime/cpu/window.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

// ---------------------------------------------------------------------------------------------
// Softmax / LogSoftmax along one axis: [outer, n, inner]. Exponentials are taken in compute_t
// (float for float16/bfloat16/float32), sums in double.

template <class T, bool kLog>
void softmax(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (x.num_elements() == 0) return;
  const AxisSplit sp = split_at_axis(x.shape(), kc.attrs.i("axis"), kc.op());
  const int64_t outer = sp.outer, n = sp.n, inner = sp.inner;
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  using C = compute_t<T>;

  if (inner == 1) {
    kc.pool.parallel_for(outer, std::max<int64_t>(1, 16384 / n), [&](int64_t b, int64_t e) {
      std::vector<C> tmp(static_cast<size_t>(n));
      for (int64_t o = b; o < e; ++o) {
        const T* row = in + o * n;
        T* dst = out + o * n;
        C m = widen(row[0]);
        for (int64_t i = 1; i < n; ++i) m = std::max(m, widen(row[i]));
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          const C d = widen(row[i]) - m;
          const C ex = std::exp(d);
          tmp[i] = kLog ? d : ex;
          sum += static_cast<double>(ex);
        }
        if constexpr (kLog) {
          const double lse = std::log(sum);
          for (int64_t i = 0; i < n; ++i) dst[i] = convert<T>(static_cast<double>(tmp[i]) - lse);
        } else {
          const double inv = 1.0 / sum;
          for (int64_t i = 0; i < n; ++i) dst[i] = convert<T>(static_cast<double>(tmp[i]) * inv);
        }
      }
    });
    return;
  }
  // Strided: a block [n, cols] of columns at a time, three passes (max, sum, write).
  constexpr int64_t kCols = 256;
  const int64_t chunks = (inner + kCols - 1) / kCols;
  kc.pool.parallel_for(outer * chunks, std::max<int64_t>(1, 16384 / (n * std::min(inner, kCols))),
                       [&](int64_t b, int64_t e) {
                         std::vector<C> m(kCols);
                         std::vector<double> sum(kCols);
                         for (int64_t t = b; t < e; ++t) {
                           const int64_t a = t / chunks, c0 = (t % chunks) * kCols;
                           const int64_t cols = std::min(kCols, inner - c0);
                           const T* base = in + a * n * inner + c0;
                           T* dst = out + a * n * inner + c0;
                           for (int64_t j = 0; j < cols; ++j) {
                             m[j] = widen(base[j]);
                             sum[j] = 0;
                           }
                           for (int64_t i = 1; i < n; ++i)
                             for (int64_t j = 0; j < cols; ++j) m[j] = std::max(m[j], widen(base[i * inner + j]));
                           for (int64_t i = 0; i < n; ++i)
                             for (int64_t j = 0; j < cols; ++j)
                               sum[j] += static_cast<double>(std::exp(widen(base[i * inner + j]) - m[j]));
                           for (int64_t j = 0; j < cols; ++j) sum[j] = kLog ? std::log(sum[j]) : 1.0 / sum[j];
                           for (int64_t i = 0; i < n; ++i)
                             for (int64_t j = 0; j < cols; ++j) {
                               const C d = widen(base[i * inner + j]) - m[j];
                               dst[i * inner + j] = kLog ? convert<T>(static_cast<double>(d) - sum[j])
                                                         : convert<T>(static_cast<double>(std::exp(d)) * sum[j]);
                             }
                         }
                       });
}

template <bool kLog>
void softmax_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) softmax<T, kLog>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("Softmax", DeviceKind::CPU, softmax_kernel<false>);
CAIRN_REGISTER_KERNEL("LogSoftmax", DeviceKind::CPU, softmax_kernel<true>);

// ---------------------------------------------------------------------------------------------
// Conv2D (Window, make_window and gemm live in window.h, shared with the backprop kernels)

template <class T>
void conv2d(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  const Tensor& f = kc.input(1);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0) return;
  using C = compute_t<T>;  // float or double: what the GEMM runs in
  const ConvGeometry g = conv_geometry(x.shape(), f.shape(), y.shape(), kc.attrs);
  const int64_t cin = g.cin, kh = g.kh, kw = g.kw, cout = g.cout;
  const int64_t k = g.k();
  const int64_t rows = g.rows();
  const std::vector<int64_t> strides = kc.attrs.ints("strides");
  T* out = y.mutable_data<T>();
  if (k == 0) {
    std::fill(out, out + rows * cout, convert<T>(0.0f));
    return;
  }
  if (k > INT32_MAX || cout > INT32_MAX)
    raise(Code::InvalidArgument, "Conv2D: filter {} is too large for the BLAS int range", f.shape().str());
  const T* in = x.data<T>();

  // The filter as a [k, cout] matrix in C.
  std::vector<C> filter_wide;
  const C* filter;
  if constexpr (std::is_same_v<T, C>) {
    filter = f.data<T>();
  } else {
    filter_wide.resize(static_cast<size_t>(k * cout));
    const T* p = f.data<T>();
    for (size_t i = 0; i < filter_wide.size(); ++i) filter_wide[i] = widen(p[i]);
    filter = filter_wide.data();
  }

  // A 1x1 filter with unit strides reads the input as a [rows, cin] matrix directly.
  const bool direct = std::is_same_v<T, C> && kh == 1 && kw == 1 && strides[1] == 1 && strides[2] == 1;
  // Rows per tile: about 2^18 patch elements, at least 16 rows.
  const int64_t tile = std::min(rows, std::max<int64_t>(16, (int64_t{1} << 18) / k));
  const int64_t tiles = (rows + tile - 1) / tile;

  // Computes output rows [r0, r0 + m) given scratch for patches and (16-bit types) results.
  auto run_tile = [&](int64_t t, std::vector<C>& patches, std::vector<C>& result, bool parallel_gather) {
    const int64_t r0 = t * tile, m = std::min(tile, rows - r0);
    const C* a = nullptr;
    if constexpr (std::is_same_v<T, C>) {
      if (direct) a = in + r0 * cin;
    }
    if (!direct) {
      patches.resize(static_cast<size_t>(tile * k));
      if (parallel_gather) {
        kc.pool.parallel_for(m, std::max<int64_t>(1, 4096 / k),
                             [&](int64_t b, int64_t e) { im2col(g, in, r0 + b, r0 + e, patches.data() + b * k); });
      } else {
        im2col(g, in, r0, r0 + m, patches.data());
      }
      a = patches.data();
    }
    if constexpr (std::is_same_v<T, C>) {
      gemm<C>(a, filter, out + r0 * cout, m, cout, k);
    } else {
      result.resize(static_cast<size_t>(tile * cout));
      gemm<C>(a, filter, result.data(), m, cout, k);
      for (int64_t i = 0; i < m * cout; ++i) out[r0 * cout + i] = convert<T>(result[i]);
    }
  };

  if (tile * k * cout >= 64 * 64 * 64) {
    // Large GEMMs: BLAS threads internally; the pool gathers the patches of each tile.
    std::vector<C> patches, result;
    for (int64_t t = 0; t < tiles; ++t) run_tile(t, patches, result, true);
  } else {
    kc.pool.parallel_for(tiles, 1, [&](int64_t b, int64_t e) {
      std::vector<C> patches, result;
      for (int64_t t = b; t < e; ++t) run_tile(t, patches, result, false);
    });
  }
}

void conv2d_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) conv2d<T>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("Conv2D", DeviceKind::CPU, conv2d_kernel);

// ---------------------------------------------------------------------------------------------
// MaxPool / AvgPool: each output averages or maximises the in-bounds part of its window.

template <class T, bool kMax>
void pool2d(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0) return;
  const int64_t batch = x.shape()[0], in_h = x.shape()[1], in_w = x.shape()[2], ch = x.shape()[3];
  const int64_t out_h = y.shape()[1], out_w = y.shape()[2];
  const std::vector<int64_t> ksize = kc.attrs.ints("ksize"), strides = kc.attrs.ints("strides");
  const bool same = kc.attrs.s("padding") == "SAME";
  const Window wh = make_window(in_h, ksize[1], strides[1], 1, out_h, same);
  const Window ww = make_window(in_w, ksize[2], strides[2], 1, out_w, same);
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  using C = compute_t<T>;
  using Acc = std::conditional_t<kMax, C, double>;
  const int64_t work_per_row = out_w * ch * std::min(ksize[1], in_h) * std::min(ksize[2], in_w);
  kc.pool.parallel_for(batch * out_h, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work_per_row)),
                       [&](int64_t b, int64_t e) {
                         std::vector<Acc> acc(static_cast<size_t>(ch));
                         for (int64_t row = b; row < e; ++row) {
                           const int64_t nb = row / out_h, oy = row % out_h;
                           const int64_t y0 = oy * wh.stride - wh.pad;
                           const int64_t ys = std::max<int64_t>(0, y0), ye = wh.k >= in_h - y0 ? in_h : y0 + wh.k;
                           for (int64_t ox = 0; ox < out_w; ++ox) {
                             const int64_t x0 = ox * ww.stride - ww.pad;
                             const int64_t xs = std::max<int64_t>(0, x0), xe = ww.k >= in_w - x0 ? in_w : x0 + ww.k;
                             if constexpr (kMax) std::fill(acc.begin(), acc.end(), -std::numeric_limits<C>::infinity());
                             else std::fill(acc.begin(), acc.end(), 0.0);
                             for (int64_t iy = ys; iy < ye; ++iy)
                               for (int64_t ix = xs; ix < xe; ++ix) {
                                 const T* src = in + ((nb * in_h + iy) * in_w + ix) * ch;
                                 for (int64_t c = 0; c < ch; ++c) {
                                   const C v = widen(src[c]);
                                   if constexpr (kMax) {
                                     if (v > acc[c] || std::isnan(v)) acc[c] = v;  // NaN wins
                                   } else {
                                     acc[c] += static_cast<double>(v);
                                   }
                                 }
                               }
                             T* dst = out + ((nb * out_h + oy) * out_w + ox) * ch;
                             const double count = static_cast<double>((ye - ys) * (xe - xs));
                             for (int64_t c = 0; c < ch; ++c) {
                               if constexpr (kMax) dst[c] = convert<T>(acc[c]);
                               else dst[c] = convert<T>(acc[c] / count);
                             }
                           }
                         }
                       });
}

template <bool kMax>
void pool_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) pool2d<T, kMax>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("MaxPool", DeviceKind::CPU, pool_kernel<true>);
CAIRN_REGISTER_KERNEL("AvgPool", DeviceKind::CPU, pool_kernel<false>);

}  // namespace
}  // namespace cairn
