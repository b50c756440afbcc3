#version 450
// Data movement for every dtype: out[out_base + sum(c_d * os_d)] = in[in_base + sum((c_d % mod_d) * is_d)]
// over an output index space of up to 6 dimensions. Transpose, Slice, StridedSlice, Reverse,
// Tile, Concat, Pack, Split, Unpack, Pad's interior and plain copies are all one of these. The
// element is a W-bit word (W_32, W_16, W_8); 8-byte dtypes move as two 32-bit words.
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

layout(local_size_x = 256) in;

layout(binding = 0) readonly buffer In { WORD src[]; };
layout(binding = 1) writeonly buffer Out { WORD dst[]; };

// Mirrored by StridedPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;
  uint rank;
  int in_base;
  uint out_base;
  uint dims[6];      // output index space, outermost first
  int in_strides[6];
  uint out_strides[6];
  uint mods[6];      // input coordinate is c % mods[d] (Tile); equal to dims[d] otherwise
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    int si = p.in_base;
    uint di = p.out_base;
    uint rest = i;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      uint c = rest % p.dims[d];
      rest /= p.dims[d];
      si += int(c % p.mods[d]) * p.in_strides[d];
      di += c * p.out_strides[d];
    }
    dst[di] = src[si];
  }
}
