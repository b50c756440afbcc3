#version 450
// RandomUniform, RandomStandardNormal and TruncatedNormal with the CPU's Philox4x32-10 streams
// (runtime/core/philox.h, runtime/cpu/random_kernels.cc): element i comes from block i / 4, slot
// i % 4, counter {block_lo, block_hi, attempt, 0} under the op's key. Uniform values are bit-exact;
// normals run Box-Muller in float here (double on the CPU), so they agree to float rounding.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = RND_UNIFORM;

layout(binding = 0) writeonly buffer Y { T y[]; };

// Mirrored by RandomPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;
  uint key0;
  uint key1;
} p;

uvec4 philox(uvec4 c, uvec2 k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k += uvec2(0x9E3779B9u, 0xBB67AE85u);
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

float normal(uvec4 w, uint s) {
  uint a = (s / 2) * 2;
  float u1 = (float(w[a]) + 1.0) * (1.0 / 4294967296.0);
  float u2 = float(w[a + 1]) * (1.0 / 4294967296.0);
  float r = sqrt(-2.0 * log(u1));
  float theta = 6.283185307179586 * u2;
  return s % 2 == 0 ? r * cos(theta) : r * sin(theta);
}

void main() {
  uint blocks = (p.n + 3) / 4;
  uvec2 key = uvec2(p.key0, p.key1);
  for (uint b = gl_GlobalInvocationID.x; b < blocks; b += GRID_STRIDE) {
    uvec4 w = philox(uvec4(b, 0u, 0u, 0u), key);
    for (uint s = 0; s < 4 && b * 4 + s < p.n; ++s) {
      float v;
      if (OP == RND_UNIFORM) {
#if defined(DT_F16)
        v = float(w[s] >> 21) * (1.0 / 2048.0);
#else
        v = float(w[s] >> 8) * (1.0 / 16777216.0);
#endif
      } else {
        v = normal(w, s);
        if (OP == RND_TRUNCATED) {
          for (uint attempt = 1; abs(v) > 2.0; ++attempt) {
            if (attempt == 256) {
              v = 0.0;
              break;
            }
            v = normal(philox(uvec4(b, 0u, attempt, 0u), key), s);
          }
        }
      }
      y[b * 4 + s] = T(v);
    }
  }
}
