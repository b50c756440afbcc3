#version 450
// Batched matrix product without shared memory or barriers, for CPU-like devices (lavapipe),
// where barriers are costly and invocations are SIMD lanes: each invocation keeps a TM x 4 block
// of C in registers, rows row0 .. row0 + TM - 1 and columns col0 + lane + 64 j, so at each k the
// A values are uniform across the workgroup and the B values of the lanes are adjacent in memory.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 1) const uint TM = 8;
layout(constant_id = 2) const uint TN = 4;
const uint BN = 64 * TN;

layout(binding = 0) readonly buffer A { T a[]; };
layout(binding = 1) readonly buffer B { T b[]; };
layout(binding = 2) writeonly buffer C { T c[]; };

// Mirrored by MatMulPush in gpu/vulkan/kernels/push.h (the same push block as matmul.comp).
layout(push_constant) uniform Push {
  uint m;
  uint n;
  uint k;
  uint a_batch_stride;
  uint b_batch_stride;
  uint transpose_a;
  uint transpose_b;
} p;

void main() {
  uint batch = gl_WorkGroupID.z;
  uint row0 = gl_WorkGroupID.y * TM;
  uint lane = gl_LocalInvocationID.x;
  uint col0 = gl_WorkGroupID.x * BN + lane;
  uint a_base = batch * p.a_batch_stride;
  uint b_base = batch * p.b_batch_stride;
  // Rows and columns past the edge read a clamped element and are never written.
  uint rows[TM];
  for (uint i = 0; i < TM; ++i) rows[i] = min(row0 + i, p.m - 1);
  uint cols[TN];
  for (uint j = 0; j < TN; ++j) cols[j] = min(col0 + 64 * j, p.n - 1);

  ACC acc[TM][TN];
  for (uint i = 0; i < TM; ++i)
    for (uint j = 0; j < TN; ++j) acc[i][j] = ACC(0);

  for (uint kk = 0; kk < p.k; ++kk) {
    ACC bv[TN];
    for (uint j = 0; j < TN; ++j)
      bv[j] = ACC(b[b_base + (p.transpose_b != 0 ? cols[j] * p.k + kk : kk * p.n + cols[j])]);
    for (uint i = 0; i < TM; ++i) {
      ACC av = ACC(a[a_base + (p.transpose_a != 0 ? kk * p.m + rows[i] : rows[i] * p.k + kk)]);
      for (uint j = 0; j < TN; ++j) acc[i][j] += av * bv[j];
    }
  }

  uint c_base = batch * p.m * p.n;
  for (uint i = 0; i < TM; ++i) {
    uint row = row0 + i;
    if (row >= p.m) break;
    for (uint j = 0; j < TN; ++j) {
      uint col = col0 + 64 * j;
      if (col < p.n) c[c_base + row * p.n + col] = T(acc[i][j]);
    }
  }
}
