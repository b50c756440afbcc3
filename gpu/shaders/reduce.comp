#version 450
// Reductions over the middle axis of an [outer, r, inner] view. inner == 1: one workgroup per
// output row, combined with subgroup operations and shared memory. inner > 1: one invocation per
// output, reading r values strided by inner (adjacent invocations read adjacent elements).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
#include "types.glsl"
#include "op_codes.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) writeonly buffer Y { T y[]; };

// Mirrored by ReducePush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint outer;
  uint r;
  uint inner;
  uint mean;     // 1: divide the result by `divisor` (Mean's last pass)
  uint divisor;
} p;

ACC identity() {
#if IS_FLOAT
  const float inf = uintBitsToFloat(0x7f800000u);
  switch (OP) {
    case ROP_PROD: return 1.0;
    case ROP_MAX: return -inf;
    case ROP_MIN: return inf;
  }
  return 0.0;
#else
  switch (OP) {
    case ROP_PROD: return 1;
    case ROP_MAX: return int(0x80000000u);
    case ROP_MIN: return 0x7fffffff;
  }
  return 0;
#endif
}

ACC combine(ACC a, ACC b) {
#if IS_FLOAT
  if (OP == ROP_MAX || OP == ROP_MIN) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
  }
#endif
  switch (OP) {
    case ROP_PROD: return a * b;
    case ROP_MAX: return max(a, b);
    case ROP_MIN: return min(a, b);
  }
  return a + b;
}

ACC subgroup_combine(ACC v) {
#if IS_FLOAT
  // NaN must win for Max/Min; subgroupMax is undefined on NaN, so carry it separately.
  if (OP == ROP_MAX || OP == ROP_MIN) {
    if (subgroupAny(isnan(v))) return uintBitsToFloat(0x7fc00000u);
  }
#endif
  switch (OP) {
    case ROP_PROD: return subgroupMul(v);
    case ROP_MAX: return subgroupMax(v);
    case ROP_MIN: return subgroupMin(v);
  }
  return subgroupAdd(v);
}

ACC finish(ACC v) {
  if (p.mean == 0) return v;
#if IS_FLOAT
  return v / float(p.divisor);
#else
  return v / int(p.divisor);
#endif
}

shared ACC partial[256];

void main() {
  if (p.inner > 1) {
    uint total = p.outer * p.inner;
    for (uint o = gl_GlobalInvocationID.x; o < total; o += GRID_STRIDE) {
      uint base = (o / p.inner) * p.r * p.inner + o % p.inner;
      ACC acc = identity();
      for (uint k = 0; k < p.r; ++k) acc = combine(acc, ACC(x[base + k * p.inner]));
      y[o] = T(finish(acc));
    }
    return;
  }
  for (uint row = gl_WorkGroupID.x; row < p.outer; row += gl_NumWorkGroups.x) {
    ACC acc = identity();
    uint base = row * p.r;
    for (uint k = gl_LocalInvocationID.x; k < p.r; k += gl_WorkGroupSize.x) acc = combine(acc, ACC(x[base + k]));
    acc = subgroup_combine(acc);
    if (subgroupElect()) partial[gl_SubgroupID] = acc;
    barrier();
    if (gl_LocalInvocationID.x == 0) {
      ACC total = partial[0];
      for (uint s = 1; s < gl_NumSubgroups; ++s) total = combine(total, partial[s]);
      y[row] = T(finish(total));
    }
    barrier();
  }
}
