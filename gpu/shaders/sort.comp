#version 450
// Sort and TopKV2 by a bitonic sort of each row's element indices. Over x viewed as
// [outer, r, inner], line l = o * inner + i is the row x[(o * r + j) * inner + i], j < r. Each
// line gets pw (r rounded up to a power of two) slots of scratch holding indices j; slots j >= r
// are sentinels that sort after every element. Comparisons read x through the indices and break
// ties by index, a strict total order, so the result is the stable sort exactly (like the CPU).
// Order: ascending puts NaNs last; descending (TopKV2 always) puts NaNs first, like the CPU.
// Three modes, one dispatch each: 0 fills the indices, 1 is one compare-exchange step (kk, jj)
// of the bitonic network (pw * log2(pw)^2 / 4 compares per line over all steps), 2 writes the
// first k ranks (values, and int32 indices when TOPK).
// TOPK (specialization constant 0): write int32 indices too.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TOPK = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) writeonly buffer V { T values[]; };
layout(binding = 2) writeonly buffer I { int indices[]; };
layout(binding = 3) buffer S { uint slots[]; };

// Mirrored by SortPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint lines;       // outer * inner
  uint r, inner;    // the sorted axis and what follows it
  uint k;           // output length along the axis (r for Sort)
  uint descending;
  uint mode;        // 0 init, 1 bitonic step, 2 write
  uint pw;          // r rounded up to a power of two
  uint kk, jj;      // the bitonic step (mode 1)
} p;

bool nan(ACC v) {
#if IS_FLOAT
  return isnan(v);
#else
  return false;
#endif
}

// Whether value a comes strictly before value b.
bool before(ACC a, ACC b) {
  bool na = nan(a), nb = nan(b);
  if (p.descending != 0) return (na && !nb) || (!na && !nb && a > b);
  return (!na && nb) || (!na && !nb && a < b);
}

// Whether row element ia comes strictly before ib in line `line` (sentinels last, by index).
bool slot_before(uint line, uint ia, uint ib) {
  if (ia >= p.r || ib >= p.r) {
    if (ia >= p.r && ib >= p.r) return ia < ib;
    return ib >= p.r;
  }
  uint o = line / p.inner, in_ = line % p.inner;
  uint base = o * p.r * p.inner + in_;
  ACC a = ACC(x[base + ia * p.inner]);
  ACC b = ACC(x[base + ib * p.inner]);
  if (before(a, b)) return true;
  if (before(b, a)) return false;
  return ia < ib;
}

void main() {
  if (p.mode == 0) {
    uint total = p.lines * p.pw;
    for (uint e = gl_GlobalInvocationID.x; e < total; e += GRID_STRIDE) slots[e] = e % p.pw;
  } else if (p.mode == 1) {
    uint half_ = p.pw / 2;
    uint total = p.lines * half_;
    for (uint t = gl_GlobalInvocationID.x; t < total; t += GRID_STRIDE) {
      uint line = t / half_, q = t % half_;
      uint i = 2 * p.jj * (q / p.jj) + (q % p.jj);  // bit jj of i is clear; its partner is i + jj
      uint s0 = line * p.pw + i, s1 = s0 + p.jj;
      uint a = slots[s0], b = slots[s1];
      bool up = (i & p.kk) == 0;
      bool swap = up ? slot_before(line, b, a) : slot_before(line, a, b);
      if (swap) {
        slots[s0] = b;
        slots[s1] = a;
      }
    }
  } else {
    uint total = p.lines * p.k;
    for (uint e = gl_GlobalInvocationID.x; e < total; e += GRID_STRIDE) {
      uint line = e / p.k, rank = e % p.k;
      uint j = slots[line * p.pw + rank];
      uint o = line / p.inner, in_ = line % p.inner;
      uint dst = (o * p.k + rank) * p.inner + in_;
      values[dst] = x[(o * p.r + j) * p.inner + in_];
      if (TOPK != 0) indices[dst] = int(j);
    }
  }
}
