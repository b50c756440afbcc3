#version 450
// Cast between float32, float16, int32, bool/uint8 (SRC_* and DST_* defines) and int64 (two
// 32-bit words, low first), following runtime/core/convert.h: float -> int truncates toward zero
// and saturates, NaN -> 0; anything -> bool is != 0; int -> int wraps.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require

layout(local_size_x = 256) in;

#if defined(SRC_F32)
#define SRC_T float
#elif defined(SRC_F16)
#define SRC_T float16_t
#elif defined(SRC_I32)
#define SRC_T int
#elif defined(SRC_U8)
#define SRC_T uint8_t
#elif defined(SRC_I64)
#define SRC_T uint
#endif
#if defined(DST_F32)
#define DST_T float
#elif defined(DST_F16)
#define DST_T float16_t
#elif defined(DST_I32)
#define DST_T int
#elif defined(DST_U8) || defined(DST_BOOL)
#define DST_T uint8_t
#elif defined(DST_I64)
#define DST_T uint
#endif

layout(binding = 0) readonly buffer X { SRC_T x[]; };
layout(binding = 1) writeonly buffer Y { DST_T y[]; };

layout(push_constant) uniform Push { uint n; } p;

#if defined(SRC_F32) || defined(SRC_F16)
#define SRC_FLOAT 1
float load(uint i) { return float(x[i]); }
#elif defined(SRC_I64)
#define SRC_FLOAT 0
// int64 narrows by keeping the low word (a C cast); != 0 looks at both words.
int load(uint i) { return int(x[2 * i]); }
bool nonzero(uint i) { return x[2 * i] != 0u || x[2 * i + 1] != 0u; }
#else
#define SRC_FLOAT 0
int load(uint i) { return int(x[i]); }
#endif

#if !defined(SRC_I64)
bool nonzero(uint i) { return load(i) != 0; }
#endif

int to_int(float v, int lo, int hi) {
  if (isnan(v)) return 0;
  if (v <= float(lo)) return lo;
  if (v >= float(hi)) return hi;
  return int(v);  // truncation toward zero
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
#if defined(DST_BOOL)
    y[i] = uint8_t(nonzero(i) ? 1 : 0);
#elif defined(DST_F32) || defined(DST_F16)
    y[i] = DST_T(float(load(i)));
#elif defined(DST_I32)
#if SRC_FLOAT
    // float(INT_MAX) rounds up to 2^31: saturate there.
    float v = load(i);
    y[i] = isnan(v) ? 0 : (v >= 2147483648.0 ? 2147483647 : (v <= -2147483648.0 ? int(0x80000000u) : int(v)));
#else
    y[i] = load(i);
#endif
#elif defined(DST_U8)
#if SRC_FLOAT
    y[i] = uint8_t(to_int(load(i), 0, 255));
#else
    y[i] = uint8_t(uint(load(i)) & 255u);
#endif
#elif defined(DST_I64)
#if SRC_FLOAT
    // Saturates at +-2^63 (not representable in 32-bit arithmetic otherwise).
    float v = load(i);
    uint lo = 0u, hi = 0u;
    if (isnan(v)) {
    } else if (v >= 9223372036854775807.0) {
      lo = 0xffffffffu; hi = 0x7fffffffu;
    } else if (v <= -9223372036854775808.0) {
      lo = 0u; hi = 0x80000000u;
    } else {
      float a = trunc(abs(v));
      uint h = uint(a / 4294967296.0);
      uint l = uint(a - float(h) * 4294967296.0);
      if (v < 0.0) { l = ~l + 1u; h = ~h + (l == 0u ? 1u : 0u); }
      lo = l; hi = h;
    }
    y[2 * i] = lo;
    y[2 * i + 1] = hi;
#else
    int v = load(i);
#if defined(SRC_U8)
    y[2 * i] = uint(v) & 255u;
    y[2 * i + 1] = 0u;
#else
    y[2 * i] = uint(v);
    y[2 * i + 1] = v < 0 ? 0xffffffffu : 0u;
#endif
#endif
#endif
  }
}
