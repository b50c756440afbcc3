#version 450
// NHWC pooling, one invocation per output element (specialization constant 0 picks the op):
//   0 MaxPool          max of the in-bounds window (NaN wins)
//   1 AvgPool          mean of the in-bounds window (padding is not counted)
//   2 MaxPoolGrad      dx[n,ih,iw,c] = sum of dy over windows whose argmax is (ih, iw)
//   3 AvgPoolGrad      dx[n,ih,iw,c] = sum of dy / window count over windows covering (ih, iw)
//   4 MaxPoolGradGrad  y[n,oh,ow,c] = g[n, argmax of the window, c]
// The argmax is the first (row-major) element holding the maximum, or the first NaN, as on the CPU.
// Bindings: 0 the pooled input x (unused by AvgPoolGrad), 1 dy or g (unused by the forward ops).
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) readonly buffer G { T g[]; };
layout(binding = 2) writeonly buffer O { T o[]; };

// Mirrored by PoolPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;
  uint batch, in_h, in_w, c;
  uint kh, kw;
  uint out_h, out_w;
  uint stride_h, stride_w;
  int pad_h, pad_w;
} p;

// The window of output (oh, ow): rows [y0, y1) and columns [x0, x1), clipped to the input.
void window(uint oh, uint ow, out int y0, out int y1, out int x0, out int x1) {
  int ys = int(oh * p.stride_h) - p.pad_h, xs = int(ow * p.stride_w) - p.pad_w;
  y0 = max(ys, 0);
  y1 = min(ys + int(p.kh), int(p.in_h));
  x0 = max(xs, 0);
  x1 = min(xs + int(p.kw), int(p.in_w));
}

uint argmax(uint n, uint ch, uint oh, uint ow) {
  int y0, y1, x0, x1;
  window(oh, ow, y0, y1, x0, x1);
  uint best = 0xffffffffu;
  ACC best_v = ACC(0);
  for (int y = y0; y < y1; ++y)
    for (int xx = x0; xx < x1; ++xx) {
      uint at = ((n * p.in_h + uint(y)) * p.in_w + uint(xx)) * p.c + ch;
      ACC v = ACC(x[at]);
#if IS_FLOAT
      bool take = best == 0xffffffffu || v > best_v || (isnan(v) && !isnan(best_v));
#else
      bool take = best == 0xffffffffu || v > best_v;
#endif
      if (take) {
        best = at;
        best_v = v;
      }
    }
  return best;
}

// Forward ops and MaxPoolGradGrad: e indexes the pooled output.
ACC pooled(uint e) {
  uint ch = e % p.c, ow = (e / p.c) % p.out_w, oh = (e / (p.c * p.out_w)) % p.out_h;
  uint n = e / (p.c * p.out_w * p.out_h);
  if (MODE == 0) return ACC(x[argmax(n, ch, oh, ow)]);
  if (MODE == 4) return ACC(g[argmax(n, ch, oh, ow)]);
  int y0, y1, x0, x1;
  window(oh, ow, y0, y1, x0, x1);
  ACC acc = ACC(0);
  for (int y = y0; y < y1; ++y)
    for (int xx = x0; xx < x1; ++xx) acc += ACC(x[((n * p.in_h + uint(y)) * p.in_w + uint(xx)) * p.c + ch]);
  return acc / ACC((y1 - y0) * (x1 - x0));
}

// The outputs whose windows cover input row (or column) i: [first, last] clipped to [0, out).
void covering(int i, int pad, uint k, uint stride, uint out_n, out int first, out int last) {
  int hi = i + pad;                     // o * stride <= i + pad
  int lo = hi - int(k) + 1;             // o * stride >= i + pad - k + 1
  first = lo <= 0 ? 0 : (lo + int(stride) - 1) / int(stride);
  last = min(hi < 0 ? -1 : hi / int(stride), int(out_n) - 1);
}

// Gradient ops: e indexes the input.
ACC gradient(uint e) {
  uint ch = e % p.c, iw = (e / p.c) % p.in_w, ih = (e / (p.c * p.in_w)) % p.in_h;
  uint n = e / (p.c * p.in_w * p.in_h);
  int oh0, oh1, ow0, ow1;
  covering(int(ih), p.pad_h, p.kh, p.stride_h, p.out_h, oh0, oh1);
  covering(int(iw), p.pad_w, p.kw, p.stride_w, p.out_w, ow0, ow1);
  ACC acc = ACC(0);
  for (int oh = oh0; oh <= oh1; ++oh)
    for (int ow = ow0; ow <= ow1; ++ow) {
      ACC dy = ACC(g[((n * p.out_h + uint(oh)) * p.out_w + uint(ow)) * p.c + ch]);
      if (MODE == 2) {
        if (argmax(n, ch, uint(oh), uint(ow)) == e) acc += dy;
      } else {
        int y0, y1, x0, x1;
        window(uint(oh), uint(ow), y0, y1, x0, x1);
        acc += dy / ACC((y1 - y0) * (x1 - x0));
      }
    }
  return acc;
}

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += GRID_STRIDE)
    o[e] = T(MODE == 2 || MODE == 3 ? gradient(e) : pooled(e));
}
