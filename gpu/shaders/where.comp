#version 450
// Where: the coordinates of the non-zero elements in row-major order, as int64 (word pairs).
// One workgroup: invocation t owns a contiguous chunk of the elements, counts its non-zeros,
// the counts are scanned in shared memory, and each invocation writes its chunk's coordinates
// from its offset. COUNT_ONLY (push) writes just the total, which the host reads to size the
// output (Where's shape depends on the data, so one read is inherent).
// Elements are WPE words (specialization constant 0) of W bits; MASK (constant 1) is applied to
// every PERIOD-th word (constant 2; the sign-carrying word of a float) so -0.0 counts as zero.
#extension GL_GOOGLE_include_directive : require
#if defined(W_32)
#define WORD uint
#elif defined(W_16)
#extension GL_EXT_shader_16bit_storage : require
#define WORD uint16_t
#elif defined(W_8)
#extension GL_EXT_shader_8bit_storage : require
#define WORD uint8_t
#endif

#define THREADS 256
layout(local_size_x = THREADS) in;
layout(constant_id = 0) const uint WPE = 1;
layout(constant_id = 1) const uint MASK = 0xffffffffu;
layout(constant_id = 2) const uint PERIOD = 1;

layout(binding = 0) readonly buffer X { WORD x[]; };
layout(binding = 1) writeonly buffer O { uint coords[]; };
layout(binding = 2) writeonly buffer C { uint count; };

// Mirrored by WherePush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;           // elements
  uint rank;
  uint count_only;
  uint dims[8];
} p;

shared uint offsets[THREADS];

bool nonzero(uint e) {
  bool any = false;
  for (uint w = 0; w < WPE; ++w) {
    uint v = uint(x[e * WPE + w]);
    if (w % PERIOD == PERIOD - 1) v &= MASK;
    any = any || v != 0u;
  }
  return any;
}

void main() {
  uint t = gl_LocalInvocationID.x;
  uint chunk = (p.n + THREADS - 1) / THREADS;
  uint begin = min(t * chunk, p.n), end = min(begin + chunk, p.n);
  uint mine = 0;
  for (uint e = begin; e < end; ++e)
    if (nonzero(e)) ++mine;
  offsets[t] = mine;
  barrier();
  if (t == 0) {
    uint sum = 0;
    for (uint i = 0; i < THREADS; ++i) {
      uint c = offsets[i];
      offsets[i] = sum;
      sum += c;
    }
    if (p.count_only != 0) count = sum;
  }
  barrier();
  if (p.count_only != 0) return;
  uint row = offsets[t];
  for (uint e = begin; e < end; ++e) {
    if (!nonzero(e)) continue;
    uint rest = e;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      uint w = 2 * (row * p.rank + uint(d));
      coords[w] = rest % p.dims[d];
      coords[w + 1] = 0u;
      rest /= p.dims[d];
    }
    ++row;
  }
}
