#version 450
// Conv2D (NHWC input, [KH, KW, Cin, Cout] filter) and its two backprop ops, one invocation per
// output element (specialization constant 0 picks the mode):
//   0 Conv2D               y[n,oh,ow,co]  = sum_{i,j,ci} x[n, oh*sh - ph + i*dh, ow*sw - pw + j*dw, ci] f[i,j,ci,co]
//   1 Conv2DBackpropInput  dx[n,ih,iw,ci] = sum over (i, j, co) whose output position lands on (ih, iw)
//   2 Conv2DBackpropFilter df[i,j,ci,co]  = sum_{n,oh,ow} x[n, ih, iw, ci] dy[n,oh,ow,co]
// Binding 0 is x (mode 0, 2) or the filter (mode 1); binding 1 the filter (mode 0) or dy.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;

layout(binding = 0) readonly buffer A { T a[]; };
layout(binding = 1) readonly buffer B { T b[]; };
layout(binding = 2) writeonly buffer O { T o[]; };

// Mirrored by ConvPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;
  uint batch, in_h, in_w, cin;
  uint kh, kw, cout;
  uint out_h, out_w;
  uint stride_h, stride_w, dil_h, dil_w;
  int pad_h, pad_w;
} p;

ACC forward(uint e) {
  uint co = e % p.cout, ow = (e / p.cout) % p.out_w, oh = (e / (p.cout * p.out_w)) % p.out_h;
  uint n = e / (p.cout * p.out_w * p.out_h);
  ACC acc = ACC(0);
  for (uint i = 0; i < p.kh; ++i) {
    int ih = int(oh * p.stride_h + i * p.dil_h) - p.pad_h;
    if (ih < 0 || ih >= int(p.in_h)) continue;
    for (uint j = 0; j < p.kw; ++j) {
      int iw = int(ow * p.stride_w + j * p.dil_w) - p.pad_w;
      if (iw < 0 || iw >= int(p.in_w)) continue;
      uint xb = ((n * p.in_h + uint(ih)) * p.in_w + uint(iw)) * p.cin;
      uint fb = (i * p.kw + j) * p.cin * p.cout + co;
      for (uint ci = 0; ci < p.cin; ++ci) acc += ACC(a[xb + ci]) * ACC(b[fb + ci * p.cout]);
    }
  }
  return acc;
}

ACC backprop_input(uint e) {
  uint ci = e % p.cin, iw = (e / p.cin) % p.in_w, ih = (e / (p.cin * p.in_w)) % p.in_h;
  uint n = e / (p.cin * p.in_w * p.in_h);
  ACC acc = ACC(0);
  for (uint i = 0; i < p.kh; ++i) {
    int th = int(ih) + p.pad_h - int(i * p.dil_h);  // oh * stride_h
    if (th < 0 || th % int(p.stride_h) != 0) continue;
    uint oh = uint(th) / p.stride_h;
    if (oh >= p.out_h) continue;
    for (uint j = 0; j < p.kw; ++j) {
      int tw = int(iw) + p.pad_w - int(j * p.dil_w);
      if (tw < 0 || tw % int(p.stride_w) != 0) continue;
      uint ow = uint(tw) / p.stride_w;
      if (ow >= p.out_w) continue;
      uint yb = ((n * p.out_h + oh) * p.out_w + ow) * p.cout;
      uint fb = ((i * p.kw + j) * p.cin + ci) * p.cout;
      for (uint co = 0; co < p.cout; ++co) acc += ACC(b[yb + co]) * ACC(a[fb + co]);
    }
  }
  return acc;
}

ACC backprop_filter(uint e) {
  uint co = e % p.cout, ci = (e / p.cout) % p.cin, j = (e / (p.cout * p.cin)) % p.kw;
  uint i = e / (p.cout * p.cin * p.kw);
  ACC acc = ACC(0);
  for (uint n = 0; n < p.batch; ++n)
    for (uint oh = 0; oh < p.out_h; ++oh) {
      int ih = int(oh * p.stride_h + i * p.dil_h) - p.pad_h;
      if (ih < 0 || ih >= int(p.in_h)) continue;
      for (uint ow = 0; ow < p.out_w; ++ow) {
        int iw = int(ow * p.stride_w + j * p.dil_w) - p.pad_w;
        if (iw < 0 || iw >= int(p.in_w)) continue;
        acc += ACC(a[((n * p.in_h + uint(ih)) * p.in_w + uint(iw)) * p.cin + ci]) *
               ACC(b[((n * p.out_h + oh) * p.out_w + ow) * p.cout + co]);
      }
    }
  return acc;
}

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += GRID_STRIDE) {
    ACC v = MODE == 0 ? forward(e) : (MODE == 1 ? backprop_input(e) : backprop_filter(e));
    o[e] = T(v);
  }
}
