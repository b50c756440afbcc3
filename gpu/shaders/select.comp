#version 450
// SelectV2: out = cond ? t : e with NumPy broadcasting over the three inputs, for every dtype:
// elements are WPE words (specialization constant 0: 2 for 8-byte dtypes) of W bits (W_32, W_16,
// W_8). The host collapses the shapes to at most 6 dimensions.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#if defined(W_32)
#define WORD uint
#elif defined(W_16)
#extension GL_EXT_shader_16bit_storage : require
#define WORD uint16_t
#elif defined(W_8)
#define WORD uint8_t
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WPE = 1;

layout(binding = 0) readonly buffer C { uint8_t cond[]; };
layout(binding = 1) readonly buffer X { WORD t[]; };
layout(binding = 2) readonly buffer Y { WORD e[]; };
layout(binding = 3) writeonly buffer Z { WORD z[]; };

// Mirrored by SelectPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;        // output elements
  uint rank;
  uint dims[6];  // output dimensions, outermost first
  uint cs[6];    // element strides of cond, t and e per output dimension (0 where broadcast)
  uint ts[6];
  uint es[6];
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint ci = 0, ti = 0, ei = 0, rest = i;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      uint c = rest % p.dims[d];
      rest /= p.dims[d];
      ci += c * p.cs[d];
      ti += c * p.ts[d];
      ei += c * p.es[d];
    }
    bool take_t = uint(cond[ci]) != 0u;
    // Branches, not ?: on narrow words: a select of 8/16-bit values needs the Int8/Int16
    // capabilities, beyond 8/16-bit storage.
    for (uint w = 0; w < WPE; ++w) {
      if (take_t)
        z[i * WPE + w] = t[ti * WPE + w];
      else
        z[i * WPE + w] = e[ei * WPE + w];
    }
  }
}
