#version 450
// OneHot: out[o, d, i] = indices[o, i] == d ? on : off, for depth d along the output axis.
// Indices are int32, or int64 (two words) with specialization constant 0; indices outside
// [0, depth) give a row of `off`.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint IDX_I64 = 0;

layout(binding = 0) readonly buffer I { int indices[]; };
layout(binding = 1) writeonly buffer O { T out_[]; };

// Mirrored by OneHotPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;  // output elements
  uint depth;
  uint inner;  // index elements after the output axis
  float on;
  float off;
  int ion;
  int ioff;
} p;

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += GRID_STRIDE) {
    uint i = e % p.inner;
    uint d = (e / p.inner) % p.depth;
    uint o = e / (p.inner * p.depth);
    uint j = o * p.inner + i;
    bool hit = IDX_I64 != 0 ? (indices[2 * j + 1] == 0 && indices[2 * j] == int(d)) : indices[j] == int(d);
#if IS_FLOAT
    out_[e] = T(hit ? p.on : p.off);
#else
    out_[e] = T(hit ? p.ion : p.ioff);
#endif
  }
}
