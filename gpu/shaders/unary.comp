#version 450
// Elementwise unary ops y = f(x) over contiguous tensors. The op is specialization constant 0.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"
#include "elementwise_ops.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(binding = 0) readonly buffer X { T x[]; };
#if defined(OUT_BOOL)
layout(binding = 1) writeonly buffer Y { uint8_t y[]; };
#else
layout(binding = 1) writeonly buffer Y { T y[]; };
#endif

// Mirrored by UnaryPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;
  float a;  // Clip: lower; Gelu/Elu unused
  float b;  // Clip: upper
  int ia;   // integer Clip bounds
  int ib;
} p;

#if IS_FLOAT
float apply(float v) { return unary_float(OP, v, p.a, p.b); }
#else
int apply(int v) {
  switch (OP) {
    case UOP_NEG: return -v;
    case UOP_ABS: return abs(v);
    case UOP_SIGN: return sign(v);
    case UOP_SQUARE: return v * v;
    case UOP_RELU: return max(v, 0);
    case UOP_RELU6: return clamp(v, 0, 6);
    case UOP_IDENTITY: return v;
    case UOP_ZEROS: return 0;
    case UOP_ONES: return 1;
    case UOP_CLIP: return min(max(v, p.ia), p.ib);
    case UOP_LNOT: return v == 0 ? 1 : 0;
  }
  return 0;
}
#endif

#if defined(OUT_BOOL)
bool test(ACC v) {
#if IS_FLOAT
  if (OP == UOP_ISNAN) return isnan(v);
  return !isnan(v) && !isinf(v);
#else
  return OP != UOP_ISNAN;
#endif
}
#endif

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
#if defined(OUT_BOOL)
    y[i] = uint8_t(test(ACC(x[i])) ? 1 : 0);
#else
    y[i] = T(apply(ACC(x[i])));
#endif
  }
}
