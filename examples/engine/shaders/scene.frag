#version 450
// Adds the per-pixel noise of a path tracer with few samples: each channel gets noise * u, u
// uniform in [-1, 1] from a hash of the pixel and the frame, then a [0, 1] clamp.
layout(push_constant) uniform Push {
  float time;
  uint frame;
  float noise;
} pc;

layout(location = 0) in vec3 color;
layout(location = 0) out vec4 out_color;

uint hash(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

float signed_unit(uint h) { return float(h >> 8) / 8388608.0 - 1.0; }

void main() {
  uvec2 p = uvec2(gl_FragCoord.xy);
  uint h = hash(p.x + 4099u * p.y + 16777619u * pc.frame);
  vec3 u = vec3(signed_unit(hash(h)), signed_unit(hash(h + 1u)), signed_unit(hash(h + 2u)));
  out_color = vec4(clamp(color + pc.noise * u, 0.0, 1.0), 1.0);
}
