#version 450
// Sort and TopKV2 by ranking: over x viewed as [outer, r, inner], element i of a row goes to
// position rank(i) = #{j : x_j comes before x_i, or x_j ties x_i and j < i}. One invocation per
// element, O(r) reads each: stable, deterministic, and parallel without barriers (costly on CPU
// drivers); O(r^2) work per row, fine for the row lengths sorting is used for here.
// Order: ascending puts NaNs last; descending (TopKV2 always) puts NaNs first, like the CPU.
// TOPK (specialization constant 0): keep ranks < k and write int32 indices too.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TOPK = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) writeonly buffer V { T values[]; };
layout(binding = 2) writeonly buffer I { int indices[]; };

// Mirrored by SortPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;       // elements of x
  uint r, inner;    // the sorted axis and what follows it
  uint k;           // output length along the axis (r for Sort)
  uint descending;
} p;

bool nan(ACC v) {
#if IS_FLOAT
  return isnan(v);
#else
  return false;
#endif
}

// Whether a comes strictly before b.
bool before(ACC a, ACC b) {
  bool na = nan(a), nb = nan(b);
  if (p.descending != 0) return (na && !nb) || (!na && !nb && a > b);
  return (!na && nb) || (!na && !nb && a < b);
}

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += GRID_STRIDE) {
    uint in_ = e % p.inner;
    uint i = (e / p.inner) % p.r;
    uint o = e / (p.inner * p.r);
    uint base = o * p.r * p.inner + in_;
    ACC v = ACC(x[e]);
    uint rank = 0;
    for (uint j = 0; j < p.r; ++j) {
      ACC w = ACC(x[base + j * p.inner]);
      if (before(w, v) || (j < i && !before(v, w))) ++rank;
    }
    if (rank >= p.k) continue;
    uint dst = (o * p.k + rank) * p.inner + in_;
    values[dst] = x[e];
    if (TOPK != 0) indices[dst] = int(i);
  }
}
