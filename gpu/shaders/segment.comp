#version 450
// UnsortedSegmentSum: out[s, i] = sum of data[k, i] over rows k with ids[k] == s, one invocation
// per output element walking the rows in order (deterministic, and the CPU's summation order).
// Ids are int32, or int64 (two words) with specialization constant 0; rows whose id is outside
// [0, num_segments) are dropped.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint IDX_I64 = 0;

layout(binding = 0) readonly buffer D { T data[]; };
layout(binding = 1) readonly buffer I { int ids[]; };
layout(binding = 2) writeonly buffer O { T out_[]; };

// Mirrored by SegmentPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;  // output elements: num_segments * inner
  uint rows;   // number of ids
  uint inner;
} p;

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += GRID_STRIDE) {
    int s = int(e / p.inner);
    uint i = e % p.inner;
    ACC acc = ACC(0);
    for (uint k = 0; k < p.rows; ++k) {
      bool match = IDX_I64 != 0 ? (ids[2 * k] == s && ids[2 * k + 1] == 0) : ids[k] == s;
      if (match) acc += ACC(data[k * p.inner + i]);
    }
    out_[e] = T(acc);
  }
}
