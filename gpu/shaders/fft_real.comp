#version 450
// The real-signal FFTs around VkFFT's complex transforms, over data viewed as
// [lines, rows, cols] (1-D transforms have one row). Complex numbers are float pairs.
//   FFT_REAL_PACK:  real input [lines, in_rows, in_cols] -> complex [lines, rows, cols], cropped or
//               zero-padded, imaginary parts 0 (RFFT's signal).
//   FFT_REAL_CROP:  complex [lines, rows, in_cols] -> complex [lines, rows, cols], cols <= in_cols
//               (RFFT keeps cols / 2 + 1 frequencies).
//   FFT_REAL_HERMITIAN: half spectrum [lines, in_rows, in_cols] (cropped or zero-padded to
//               [rows, cols / 2 + 1]) -> the full spectrum [lines, rows, cols] with
//               X[r, c] = conj(X[(rows - r) % rows, cols - c]) for c > cols / 2 (IRFFT's input).
//   FFT_REAL_REAL:  complex [lines, rows, cols] -> its real parts (IRFFT's output). The imaginary
//               parts of the DC and Nyquist terms only reach the imaginary result, as in c2r.
#extension GL_GOOGLE_include_directive : require
#include "op_codes.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MODE = 0;

layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer O { float out_[]; };

// Mirrored by FftRealPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint total;            // output elements (complex or real)
  uint rows, cols;       // output's inner dimensions
  uint in_rows, in_cols; // input's inner dimensions
} p;

// The half spectrum, cropped or zero-padded.
vec2 half_at(uint l, uint r, uint c) {
  if (r >= p.in_rows || c >= p.in_cols) return vec2(0.0);
  uint i = (l * p.in_rows + r) * p.in_cols + c;
  return vec2(x[2 * i], x[2 * i + 1]);
}

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.total; e += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint c = e % p.cols;
    uint r = (e / p.cols) % p.rows;
    uint l = e / (p.cols * p.rows);
    if (MODE == FFT_REAL_REAL) {
      out_[e] = x[2 * e];
      continue;
    }
    vec2 v;
    if (MODE == FFT_REAL_PACK) {
      bool inside = r < p.in_rows && c < p.in_cols;
      v = vec2(inside ? x[(l * p.in_rows + r) * p.in_cols + c] : 0.0, 0.0);
    } else if (MODE == FFT_REAL_CROP) {
      v = half_at(l, r, c);
    } else if (c <= p.cols / 2) {
      v = half_at(l, r, c);
    } else {
      vec2 m = half_at(l, (p.rows - r) % p.rows, p.cols - c);
      v = vec2(m.x, -m.y);
    }
    out_[2 * e] = v.x;
    out_[2 * e + 1] = v.y;
  }
}
