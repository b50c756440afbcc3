#version 450
// Batched matrix product C[b] = op(A[b]) * op(B[b]) with a tiled shared-memory kernel: each
// 16x16 workgroup computes a 64x64 tile of C, each invocation a 4x4 block held in registers,
// stepping through K in slices of BK (specialization constant 1, chosen from the device's
// shared-memory limit).
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 1) const uint BK = 16;
const uint BM = 64;
const uint BN = 64;

layout(binding = 0) readonly buffer A { T a[]; };
layout(binding = 1) readonly buffer B { T b[]; };
layout(binding = 2) writeonly buffer C { T c[]; };

// Mirrored by MatMulPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint m;
  uint n;
  uint k;
  uint a_batch_stride;  // 0 when A is shared by every batch
  uint b_batch_stride;
  uint transpose_a;
  uint transpose_b;
} p;

shared ACC As[BK][BM + 1];
shared ACC Bs[BK][BN + 1];

ACC load_a(uint base, uint row, uint kk) {
  if (row >= p.m || kk >= p.k) return ACC(0);
  return ACC(a[base + (p.transpose_a != 0 ? kk * p.m + row : row * p.k + kk)]);
}

ACC load_b(uint base, uint kk, uint col) {
  if (col >= p.n || kk >= p.k) return ACC(0);
  return ACC(b[base + (p.transpose_b != 0 ? col * p.k + kk : kk * p.n + col)]);
}

void main() {
  uint batch = gl_WorkGroupID.z;
  uint row0 = gl_WorkGroupID.y * BM;
  uint col0 = gl_WorkGroupID.x * BN;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16 + tx;
  uint a_base = batch * p.a_batch_stride;
  uint b_base = batch * p.b_batch_stride;

  ACC acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = ACC(0);

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    // 256 invocations fill BK x 64 of each tile; along k for A when transposed keeps reads adjacent.
    for (uint e = tid; e < BK * BM; e += 256) {
      uint r = e % BM, kk = e / BM;
      if (p.transpose_a == 0) { r = e / BK; kk = e % BK; }
      As[kk][r] = load_a(a_base, row0 + r, k0 + kk);
    }
    for (uint e = tid; e < BK * BN; e += 256) {
      uint col = e % BN, kk = e / BN;
      if (p.transpose_b != 0) { col = e / BK; kk = e % BK; }
      Bs[kk][col] = load_b(b_base, k0 + kk, col0 + col);
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      ACC av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  uint c_base = batch * p.m * p.n;
  for (int i = 0; i < 4; ++i) {
    uint row = row0 + ty + 16 * i;
    if (row >= p.m) continue;
    for (int j = 0; j < 4; ++j) {
      uint col = col0 + tx + 16 * j;
      if (col < p.n) c[c_base + row * p.n + col] = T(acc[i][j]);
    }
  }
}
