#version 450
// ArgMax / ArgMin along the middle axis of [outer, r, inner], one invocation per output. The
// first index of the best value wins; a NaN beats every number (the first NaN wins), as on the
// CPU. Indices are written as int32, or as int64 (two words) with specialization constant 1.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = AOP_ARGMAX;
layout(constant_id = 1) const uint OUT_I64 = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) writeonly buffer Y { uint y[]; };

// Mirrored by AxisPush in gpu/vulkan/kernels/push.h (exclusive and reverse unused).
layout(push_constant) uniform Push {
  uint outer;
  uint r;
  uint inner;
  uint exclusive;
  uint reverse;
} p;

bool better(ACC v, ACC best) {
#if IS_FLOAT
  if (isnan(best)) return false;
  if (isnan(v)) return true;
#endif
  return OP == AOP_ARGMAX ? v > best : v < best;
}

void main() {
  uint total = p.outer * p.inner;
  for (uint o = gl_GlobalInvocationID.x; o < total; o += GRID_STRIDE) {
    uint base = (o / p.inner) * p.r * p.inner + o % p.inner;
    ACC best = ACC(x[base]);
    uint at = 0;
    for (uint k = 1; k < p.r; ++k) {
      ACC v = ACC(x[base + k * p.inner]);
      if (better(v, best)) {
        best = v;
        at = k;
      }
    }
    if (OUT_I64 != 0) {
      y[2 * o] = at;
      y[2 * o + 1] = 0u;
    } else {
      y[o] = at;
    }
  }
}
