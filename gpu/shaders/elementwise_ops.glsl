// The float arithmetic of the elementwise ops, one expression per op code (op_codes.h). Shared
// by unary.comp and binary.comp (op = their specialization constant) and by the fused shaders
// that gpu/vulkan/fused_shader.cc generates at run time (op = a literal), so a fused chain
// evaluates every step with the very expressions of the unfused op. Needs op_codes.h first.
// lo/hi: ClipByValue's bounds (unused by every other op).
//
// The functions are `precise`: their arithmetic is evaluated as written, never contracted into
// fma or reassociated. Without it a compiler may rewrite across the steps of a fused chain, e.g.
// (x + 0.75) - x into 0.75 (Mesa does), which the unfused ops, with a store between them, never
// allow; and may contract an op's own expression differently once it is inlined among others.
// Exact evaluation makes the fused and unfused shaders compute the same bits.
precise float erf_approx(float v) {
  // Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7 on float32 scale.
  float s = sign(v);
  float t = 1.0 / (1.0 + 0.3275911 * abs(v));
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1.0 - poly * exp(-v * v));
}

precise float unary_float(uint op, float v, float lo, float hi) {
  const float nan = uintBitsToFloat(0x7fc00000u);
  switch (op) {
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
    case UOP_CLIP: return isnan(v) ? v : min(max(v, lo), hi);
  }
  return nan;
}
precise float binary_float(uint op, float a, float b) {
  const float nan = uintBitsToFloat(0x7fc00000u);
  switch (op) {
    case BOP_ADD: return a + b;
    case BOP_SUB: return a - b;
    case BOP_MUL: return a * b;
    case BOP_DIV: return a / b;
    case BOP_FLOORDIV: return floor(a / b);
    case BOP_FLOORMOD: {
      // Sign of the divisor, as Python and TF.
      float r = a - b * floor(a / b);
      return (b == 0.0 || isinf(a)) ? nan : (isinf(b) ? ((a == 0.0 || sign(a) == sign(b)) ? a : b) : r);
    }
    case BOP_POW: {
      if (b == 0.0) return 1.0;
      if (a < 0.0 && b == floor(b)) {
        float m = pow(-a, b);
        return mod(b, 2.0) == 1.0 ? -m : m;
      }
      return pow(a, b);
    }
    case BOP_MAX: return (isnan(a) || isnan(b)) ? nan : max(a, b);
    case BOP_MIN: return (isnan(a) || isnan(b)) ? nan : min(a, b);
    case BOP_SQDIFF: return (a - b) * (a - b);
  }
  return nan;
}
