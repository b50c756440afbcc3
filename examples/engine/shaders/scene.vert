#version 450
// The scene, with no vertex buffers: instance 0 is a triangle covering the screen (a vertical
// background gradient), instances 1.. are shaded triangles that orbit and spin with the time.
layout(push_constant) uniform Push {
  float time;
  uint frame;
  float noise;
} pc;

layout(location = 0) out vec3 color;

void main() {
  uint v = uint(gl_VertexIndex);
  if (gl_InstanceIndex == 0) {
    vec2 p = vec2(float((v << 1) & 2u), float(v & 2u)) * 2.0 - 1.0;  // (-1,-1) (3,-1) (-1,3)
    gl_Position = vec4(p, 0.0, 1.0);
    color = mix(vec3(0.05, 0.10, 0.35), vec3(0.40, 0.28, 0.08), p.y * 0.5 + 0.5);
    return;
  }
  float s = float(gl_InstanceIndex);
  float spin = pc.time * (0.5 + 0.3 * s) + 2.1 * s;
  vec2 center = 0.55 * vec2(cos(0.7 * pc.time + 1.3 * s), sin(0.9 * pc.time + 1.7 * s));
  float corner = spin + float(v) * 2.0944;
  gl_Position = vec4(center + (0.3 + 0.05 * s) * vec2(cos(corner), sin(corner)), 0.0, 1.0);
  vec3 base = 0.2 + 0.8 * (0.5 + 0.5 * cos(vec3(0.0, 2.1, 4.2) + 1.3 * s));
  color = base * (0.35 + 0.65 * (0.5 + 0.5 * sin(2.0 * float(v) + pc.time + s)));
}
