#version 450
// Range: y[i] = start + i * delta. Integers wrap like the CPU's (exact within [start, limit));
// floats compute in float (the CPU in double, then rounds).
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) writeonly buffer Y { T y[]; };

// Mirrored by RangePush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;
  float start;
  float delta;
  int istart;
  int idelta;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
#if IS_FLOAT
    y[i] = T(fma(float(i), p.delta, p.start));
#else
    y[i] = T(p.istart + int(i) * p.idelta);
#endif
  }
}
