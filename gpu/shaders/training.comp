#version 450
// The fused optimizer updates of runtime/ops/training_ops.cc: one dispatch per variable, each
// element of every input read once and of every output written once. The op is a define (one
// variant per op: its bindings are its inputs in order, then its outputs); use_nesterov is
// specialization constant 0. The hyperparameters are one-element buffers.
//
// Every step is the elementwise ops' own `precise` expression (elementwise_ops.glsl), rounded to T
// after each step, in the order the op's summary gives: the result equals the unfused Vulkan ops'
// bit for bit, as the CPU kernels equal the unfused CPU ops.
#extension GL_GOOGLE_include_directive : require
#include "types.glsl"
#include "op_codes.h"
#include "elementwise_ops.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint NESTEROV = 0;

// Mirrored by TrainingPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push { uint n; } p;

#define IN(b, name) layout(binding = b) readonly buffer In##b { T name[]; };
#define OUT(b, name) layout(binding = b) writeonly buffer Out##b { T name[]; };

// One step of an unfused op: its expression, then the store's rounding to T.
float r(float v) { return float(T(v)); }
float add(float a, float b) { return r(binary_float(BOP_ADD, a, b)); }
float sub(float a, float b) { return r(binary_float(BOP_SUB, a, b)); }
float mul(float a, float b) { return r(binary_float(BOP_MUL, a, b)); }
float dv(float a, float b) { return r(binary_float(BOP_DIV, a, b)); }
float sq(float a) { return r(unary_float(UOP_SQUARE, a, 0.0, 0.0)); }
float rt(float a) { return r(unary_float(UOP_SQRT, a, 0.0, 0.0)); }

#if defined(OP_GD)
IN(0, var) IN(1, alpha) IN(2, g) OUT(3, var_out)
void update(uint i) { var_out[i] = T(sub(float(var[i]), mul(float(alpha[0]), float(g[i])))); }

#elif defined(OP_MOMENTUM) || defined(OP_KERAS_MOMENTUM)
IN(0, var) IN(1, accum) IN(2, lr) IN(3, g) IN(4, momentum) OUT(5, var_out) OUT(6, accum_out)
void update(uint i) {
  float x = float(var[i]), gi = float(g[i]), l = float(lr[0]), mo = float(momentum[0]);
#if defined(OP_KERAS_MOMENTUM)
  float lr_g = mul(l, gi);
  float a = sub(mul(mo, float(accum[i])), lr_g);
  var_out[i] = T(add(x, NESTEROV != 0 ? sub(mul(mo, a), lr_g) : a));
#else
  float a = add(mul(float(accum[i]), mo), gi);
  var_out[i] = T(sub(x, NESTEROV != 0 ? add(mul(gi, l), mul(mul(a, mo), l)) : mul(l, a)));
#endif
  accum_out[i] = T(a);
}

#elif defined(OP_ADAM) || defined(OP_ADAMW)
IN(0, var) IN(1, m) IN(2, v) IN(3, b1p) IN(4, b2p) IN(5, lr) IN(6, b1) IN(7, b2) IN(8, eps)
#if defined(OP_ADAMW)
IN(9, wd) IN(10, g) OUT(11, var_out) OUT(12, m_out) OUT(13, v_out)
#else
IN(9, g) OUT(10, var_out) OUT(11, m_out) OUT(12, v_out)
#endif
void update(uint i) {
  float l = float(lr[0]), beta1 = float(b1[0]);
  float alpha = mul(l, dv(rt(sub(1.0, float(b2p[0]))), sub(1.0, float(b1p[0]))));
  float one_minus_b1 = sub(1.0, beta1), one_minus_b2 = sub(1.0, float(b2[0]));
  float gi = float(g[i]), mi = float(m[i]), vi = float(v[i]), x = float(var[i]);
#if defined(OP_ADAMW)
  x = sub(x, mul(mul(x, float(wd[0])), l));
#endif
  float m_new = add(mi, mul(sub(gi, mi), one_minus_b1));
  float v_new = add(vi, mul(sub(sq(gi), vi), one_minus_b2));
  m_out[i] = T(m_new);
  v_out[i] = T(v_new);
#if defined(OP_ADAM)
  float num = NESTEROV != 0 ? add(mul(m_new, beta1), mul(gi, one_minus_b1)) : m_new;
#else
  float num = m_new;
#endif
  var_out[i] = T(sub(x, dv(mul(num, alpha), add(rt(v_new), float(eps[0])))));
}

#elif defined(OP_RMSPROP) || defined(OP_CENTERED_RMSPROP) || defined(OP_KERAS_RMSPROP) || \
    defined(OP_KERAS_CENTERED_RMSPROP)
#if defined(OP_CENTERED_RMSPROP) || defined(OP_KERAS_CENTERED_RMSPROP)
#define CENTERED 1
#endif
#if defined(OP_RMSPROP) || defined(OP_CENTERED_RMSPROP)
#define MOMENTUM 1
#endif
#if defined(OP_CENTERED_RMSPROP)
IN(0, var) IN(1, mg) IN(2, ms) IN(3, mom) IN(4, lr) IN(5, rho) IN(6, momentum) IN(7, eps) IN(8, g)
OUT(9, var_out) OUT(10, mg_out) OUT(11, ms_out) OUT(12, mom_out)
#elif defined(OP_RMSPROP)
IN(0, var) IN(1, ms) IN(2, mom) IN(3, lr) IN(4, rho) IN(5, momentum) IN(6, eps) IN(7, g)
OUT(8, var_out) OUT(9, ms_out) OUT(10, mom_out)
#elif defined(OP_KERAS_CENTERED_RMSPROP)
IN(0, var) IN(1, mg) IN(2, ms) IN(3, lr) IN(4, rho) IN(5, eps) IN(6, g)
OUT(7, var_out) OUT(8, mg_out) OUT(9, ms_out)
#else
IN(0, var) IN(1, ms) IN(2, lr) IN(3, rho) IN(4, eps) IN(5, g)
OUT(6, var_out) OUT(7, ms_out)
#endif
void update(uint i) {
  float rh = float(rho[0]), gi = float(g[i]);
  float one_minus_rho = sub(1.0, rh);
  float ms_new = add(mul(rh, float(ms[i])), mul(one_minus_rho, sq(gi)));
  ms_out[i] = T(ms_new);
  float denom = ms_new;
#if defined(CENTERED)
  float mg_new = add(mul(rh, float(mg[i])), mul(one_minus_rho, gi));
  mg_out[i] = T(mg_new);
  denom = sub(ms_new, sq(mg_new));
#endif
#if defined(MOMENTUM)
  float scaled = dv(mul(float(lr[0]), gi), rt(add(denom, float(eps[0]))));
  float mom_new = add(mul(float(momentum[0]), float(mom[i])), scaled);
  mom_out[i] = T(mom_new);
  var_out[i] = T(sub(float(var[i]), mom_new));
#else
  // Keras' formula without momentum: epsilon outside the root.
  var_out[i] = T(sub(float(var[i]), dv(mul(float(lr[0]), gi), add(rt(denom), float(eps[0])))));
#endif
}

#else
#error "define one of OP_GD, OP_MOMENTUM, OP_KERAS_MOMENTUM, OP_ADAM, OP_ADAMW, OP_[KERAS_][CENTERED_]RMSPROP"
#endif

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) update(i);
}
