#version 450
// GatherV2 for every dtype: out[o, j, i] = params[o, indices[j], i] over params viewed as
// [outer, n, inner]. Elements are WPE words (specialization constant 0) of W bits (W_32, W_16,
// W_8); indices are int32, or int64 (two words) with specialization constant 1. An index outside
// [0, n) gives zeros, as TensorFlow's GPU kernel (the CPU raises; the GPU cannot report it).
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
layout(constant_id = 0) const uint WPE = 1;
layout(constant_id = 1) const uint IDX_I64 = 0;

layout(binding = 0) readonly buffer P { WORD params[]; };
layout(binding = 1) readonly buffer I { int indices[]; };
layout(binding = 2) writeonly buffer O { WORD out_[]; };

// Mirrored by GatherPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;  // output words
  uint n;      // params' size along the axis
  uint count;  // number of indices
  uint inner;  // words per gathered slice
  uint zero;   // always 0: narrow constants need Int8/Int16, a run-time conversion only storage
} p;

void main() {
  for (uint w = gl_GlobalInvocationID.x; w < p.total; w += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint i = w % p.inner;
    uint j = (w / p.inner) % p.count;
    uint o = w / (p.inner * p.count);
    int idx;
    bool ok;
    if (IDX_I64 != 0) {
      idx = indices[2 * j];
      int hi = indices[2 * j + 1];
      ok = hi == 0 && idx >= 0;
    } else {
      idx = indices[j];
      ok = idx >= 0;
    }
    ok = ok && uint(idx) < p.n;
    if (ok)
      out_[w] = params[(o * p.n + uint(idx)) * p.inner + i];
    else
      out_[w] = WORD(p.zero);
  }
}
