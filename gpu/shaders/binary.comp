#version 450
// Elementwise binary ops z = f(x, y) with NumPy broadcasting. The host collapses the shapes to at
// most 6 dimensions and passes each input's element strides (0 along broadcast dimensions).
// With OUT_BOOL the op is a comparison and z holds bools (bytes).
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"
#include "elementwise_ops.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(binding = 0) readonly buffer X { T x[]; };
layout(binding = 1) readonly buffer Y { T y[]; };
#if defined(OUT_BOOL)
layout(binding = 2) writeonly buffer Z { uint8_t z[]; };
#else
layout(binding = 2) writeonly buffer Z { T z[]; };
#endif

// Mirrored by BinaryPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint n;
  uint rank;     // 0: both inputs are contiguous and the same shape as the output
  uint dims[6];  // output dimensions, outermost first
  uint xs[6];    // x element strides per output dimension
  uint ys[6];
} p;

// IEEE comparisons: every one but != is false when a NaN is involved.
bool compare(ACC a, ACC b) {
  switch (OP) {
    case BOP_EQ: return a == b;
    case BOP_NE: return a != b;
    case BOP_LT: return a < b;
    case BOP_LE: return a <= b;
    case BOP_GT: return a > b;
    case BOP_GE: return a >= b;
  }
  return false;
}

#if IS_FLOAT
float apply(float a, float b) { return binary_float(OP, a, b); }
#else
int apply(int a, int b) {
  switch (OP) {
    case BOP_ADD: return a + b;
    case BOP_SUB: return a - b;
    case BOP_MUL: return a * b;
    case BOP_MAX: return max(a, b);
    case BOP_MIN: return min(a, b);
    case BOP_SQDIFF: return (a - b) * (a - b);
    case BOP_LAND: return (a != 0 && b != 0) ? 1 : 0;
    case BOP_LOR: return (a != 0 || b != 0) ? 1 : 0;
  }
  return 0;
}
#endif

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    uint xi = i, yi = i;
    if (p.rank > 0) {
      xi = 0;
      yi = 0;
      uint rest = i;
      for (int d = int(p.rank) - 1; d >= 0; --d) {
        uint c = rest % p.dims[d];
        rest /= p.dims[d];
        xi += c * p.xs[d];
        yi += c * p.ys[d];
      }
    }
#if defined(OUT_BOOL)
    z[i] = uint8_t(compare(ACC(x[xi]), ACC(y[yi])) ? 1 : 0);
#else
    z[i] = T(apply(ACC(x[xi]), ACC(y[yi])));
#endif
  }
}
