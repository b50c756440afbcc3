// Window geometry and the BLAS GEMM shared by the Conv2D/pool kernels (nn_kernels.cc) and their
// backprop kernels (conv_grad_kernels.cc). Shape functions have already validated the geometry.
#pragma once

#include <xtensor-blas/xlinalg.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/core/convert.h"
#include "runtime/ops/op_def.h"

namespace cairn {

// One spatial dimension of a windowed op. Output o reads inputs o * stride - pad + i * dilation
// for i in [0, k).
struct Window {
  int64_t in, k, stride, dilation, out, pad;  // pad: elements of padding before the first input
};

// TensorFlow's SAME padding puts the odd element of padding after the input.
inline Window make_window(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t out, bool same) {
  Window w{in, k, stride, dilation, out, 0};
  if (same && out > 0) {
    const int64_t span = (k - 1) * dilation + 1;
    const int64_t covered = in - (out - 1) * stride;  // > 0
    w.pad = std::max<int64_t>(0, span - covered) / 2;
  }
  return w;
}

// Row-major C = op(A) op(B) + beta C, with C [m, n] and the inner dimension k.
template <class C>
void gemm(const C* a, const C* b, C* c, int64_t m, int64_t n, int64_t k, bool trans_a = false, bool trans_b = false,
          C beta = C(0)) {
  cxxblas::gemm<int>(cxxblas::RowMajor, trans_a ? cxxblas::Trans : cxxblas::NoTrans,
                     trans_b ? cxxblas::Trans : cxxblas::NoTrans, static_cast<int>(m), static_cast<int>(n),
                     static_cast<int>(k), C(1), a, static_cast<int>(trans_a ? m : k), b,
                     static_cast<int>(trans_b ? k : n), beta, c, static_cast<int>(n));
}

// Conv2D's geometry from its input [N,H,W,Cin], filter [KH,KW,Cin,Cout] and output [N,OH,OW,Cout]
// shapes and the strides/dilations/padding attributes. Its im2col matrix has one row per output
// position (rows()) and one column per filter tap and input channel (k()).
struct ConvGeometry {
  int64_t batch, in_h, in_w, cin, kh, kw, cout, out_h, out_w;
  Window wh, ww;
  int64_t k() const { return kh * kw * cin; }
  int64_t rows() const { return batch * out_h * out_w; }
};

inline ConvGeometry conv_geometry(const Shape& x, const Shape& f, const Shape& y, const Attrs& attrs) {
  const std::vector<int64_t> strides = attrs.ints("strides"), dil = attrs.ints("dilations");
  const bool same = attrs.s("padding") == "SAME";
  ConvGeometry g{x[0], x[1], x[2], x[3], f[0], f[1], f[3], y[1], y[2], {}, {}};
  g.wh = make_window(g.in_h, g.kh, strides[1], dil[1], g.out_h, same);
  g.ww = make_window(g.in_w, g.kw, strides[2], dil[2], g.out_w, same);
  return g;
}

// Calls fn(row offset in the patch, input pixel index (n, iy, ix) flattened, or -1 for padding)
// for each filter tap (i, j) of output row r, in the im2col column order.
template <class F>
inline void for_each_tap(const ConvGeometry& g, int64_t r, F&& fn) {
  const int64_t ox = r % g.out_w, oy = (r / g.out_w) % g.out_h, nb = r / (g.out_w * g.out_h);
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t iy = oy * g.wh.stride - g.wh.pad + i * g.wh.dilation;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t ix = ox * g.ww.stride - g.ww.pad + j * g.ww.dilation;
      const bool inside = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
      fn((i * g.kw + j) * g.cin, inside ? (nb * g.in_h + iy) * g.in_w + ix : int64_t{-1});
    }
  }
}

// Gathers patch rows [r0, r1) of the im2col matrix of input `in` into `dst` ([r1 - r0, k]).
template <class T, class C>
void im2col(const ConvGeometry& g, const T* in, int64_t r0, int64_t r1, C* dst) {
  const int64_t k = g.k(), cin = g.cin;
  for (int64_t r = r0; r < r1; ++r) {
    C* row = dst + (r - r0) * k;
    for_each_tap(g, r, [&](int64_t offset, int64_t pixel) {
      C* seg = row + offset;
      if (pixel < 0) {
        std::fill(seg, seg + cin, C(0));
      } else {
        const T* src = in + pixel * cin;
        for (int64_t c = 0; c < cin; ++c) seg[c] = widen(src[c]);
      }
    });
  }
}

}  // namespace cairn
