#version 450
// Elementwise unary ops y = f(x) over contiguous tensors. The op is specialization constant 0.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"

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
float erf_approx(float v) {
  // Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7 on float32 scale.
  float s = sign(v);
  float t = 1.0 / (1.0 + 0.3275911 * abs(v));
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1.0 - poly * exp(-v * v));
}

float apply(float v) {
  const float nan = uintBitsToFloat(0x7fc00000u);
  switch (OP) {
    case UOP_NEG: return -v;
    case UOP_ABS: return abs(v);
    case UOP_SIGN: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);
    case UOP_SQUARE: return v * v;
    case UOP_RECIPROCAL: return 1.0 / v;
    case UOP_EXP: return exp(v);
    case UOP_LOG: return v < 0.0 ? nan : log(v);
    case UOP_LOG1P: {
      // Kahan's trick: exact for small v, where 1 + v rounds.
      float u = 1.0 + v;
      if (u == 1.0) return v;
      if (isinf(u)) return u;
      return v < -1.0 ? nan : log(u) * v / (u - 1.0);
    }
    case UOP_SQRT: return v < 0.0 ? nan : sqrt(v);
    case UOP_RSQRT: return v < 0.0 ? nan : 1.0 / sqrt(v);
    case UOP_SIN: return sin(v);
    case UOP_COS: return cos(v);
    case UOP_TANH: return abs(v) > 9.0 ? sign(v) : tanh(v);
    case UOP_SIGMOID: {
      float e = exp(-abs(v));
      return v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    }
    case UOP_ERF: return erf_approx(v);
    case UOP_RELU: return isnan(v) ? v : (v > 0.0 ? v : 0.0);
    case UOP_RELU6: return isnan(v) ? v : clamp(v, 0.0, 6.0);
    case UOP_ELU: return v > 0.0 ? v : exp(v) - 1.0;
    case UOP_SELU: {
      const float alpha = 1.6732632423543772848170429916717;
      const float scale = 1.0507009873554804934193349852946;
      return v > 0.0 ? scale * v : scale * alpha * (exp(v) - 1.0);
    }
    case UOP_SOFTPLUS: return max(v, 0.0) + log(1.0 + exp(-abs(v)));
    case UOP_GELU: return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752440));
    case UOP_GELU_TANH: {
      float inner = 0.7978845608028654 * (v + 0.044715 * v * v * v);
      return 0.5 * v * (1.0 + (abs(inner) > 9.0 ? sign(inner) : tanh(inner)));
    }
    case UOP_FLOOR: return floor(v);
    case UOP_CEIL: return ceil(v);
    case UOP_ROUND: return roundEven(v);
    case UOP_IDENTITY: return v;
    case UOP_ZEROS: return 0.0;
    case UOP_ONES: return 1.0;
    case UOP_CLIP: return isnan(v) ? v : min(max(v, p.a), p.b);
  }
  return nan;
}
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
