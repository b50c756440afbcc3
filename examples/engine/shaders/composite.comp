#version 450
// The engine's composite pass: one RGBA8 frame of 2 * width x height, the raw (noisy) render on
// the left and the model's output on the right, both read from the buffers they live in (the
// model's output straight from Cairn's VkBuffer).
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer Raw { float raw[]; };            // [h, w, 4]
layout(std430, binding = 1) readonly buffer Filtered { float filtered[]; };  // [h, w, 3] from word `filtered_word`
layout(std430, binding = 2) writeonly buffer Frame { uint pixels[]; };        // [h, 2w] RGBA8

layout(push_constant) uniform Push {
  uint width;
  uint height;
  uint filtered_word;  // the tensor's offset in words from the bound offset (alignment remainder)
} pc;

void main() {
  uvec2 g = gl_GlobalInvocationID.xy;
  if (g.x >= 2u * pc.width || g.y >= pc.height) return;
  uint i = g.y * pc.width + g.x % pc.width;
  vec3 c;
  if (g.x < pc.width) {
    c = vec3(raw[4u * i], raw[4u * i + 1u], raw[4u * i + 2u]);
  } else {
    uint f = pc.filtered_word + 3u * i;
    c = vec3(filtered[f], filtered[f + 1u], filtered[f + 2u]);
  }
  pixels[g.y * 2u * pc.width + g.x] = packUnorm4x8(vec4(clamp(c, 0.0, 1.0), 1.0));
}
