#version 450
// Passes along the middle axis of an [outer, r, inner] view, one invocation per (outer, inner)
// lane (adjacent invocations read adjacent elements): Softmax, LogSoftmax (max-shifted, float
// only) and Cumsum (exclusive / reverse). The op is specialization constant 0.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) writeonly buffer Y { T y[]; };

// Mirrored by AxisPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint outer;
  uint r;
  uint inner;
  uint exclusive;  // Cumsum
  uint reverse;    // Cumsum
} p;

void main() {
  uint lanes = p.outer * p.inner;
  for (uint lane = gl_GlobalInvocationID.x; lane < lanes; lane += GRID_STRIDE) {
    uint base = (lane / p.inner) * p.r * p.inner + lane % p.inner;
    if (OP == AOP_CUMSUM) {
      ACC acc = ACC(0);
      for (uint k = 0; k < p.r; ++k) {
        uint at = base + (p.reverse != 0 ? p.r - 1 - k : k) * p.inner;
        ACC v = ACC(x[at]);
        if (p.exclusive != 0) {
          y[at] = T(acc);
          acc += v;
        } else {
          acc += v;
          y[at] = T(acc);
        }
      }
      continue;
    }
#if IS_FLOAT
    float m = uintBitsToFloat(0xff800000u);  // -inf
    for (uint k = 0; k < p.r; ++k) {
      float v = float(x[base + k * p.inner]);
      m = (isnan(v) || v > m) ? v : m;
      if (isnan(m)) break;
    }
    float s = 0.0;
    for (uint k = 0; k < p.r; ++k) s += exp(float(x[base + k * p.inner]) - m);
    if (OP == AOP_SOFTMAX) {
      float inv = 1.0 / s;
      for (uint k = 0; k < p.r; ++k) y[base + k * p.inner] = T(exp(float(x[base + k * p.inner]) - m) * inv);
    } else {
      float ls = log(s);
      for (uint k = 0; k < p.r; ++k) y[base + k * p.inner] = T(float(x[base + k * p.inner]) - m - ls);
    }
#endif
  }
}
