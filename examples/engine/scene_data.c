/* Training scenes (see scene_data.h). */
#include "scene_data.h"

#include "filter_model.h"

/* xorshift64*: a uniform float in [0, 1). */
static float next_uniform(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (float)((*s * 2685821657736338717ull) >> 40) / 16777216.0f;
}

static float clamp01(float v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

/* Twice the signed area of (a, b, p): the edge function of the rasterizer. */
static float edge(const float *a, const float *b, float px, float py) {
  return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
}

/* One triangle: corners in pixels, a base colour and a brightness per corner (the scene's
 * shading), interpolated barycentrically like the rasterizer's varyings. */
static void draw_triangle(uint64_t *rng, int size, float *clean) {
  float v[3][2], shade[3], color[3], area;
  int i, x, y;
  for (i = 0; i < 3; ++i) {
    v[i][0] = next_uniform(rng) * 1.4f * (float)size - 0.2f * (float)size;
    v[i][1] = next_uniform(rng) * 1.4f * (float)size - 0.2f * (float)size;
    shade[i] = 0.35f + 0.65f * next_uniform(rng);
    color[i] = 0.2f + 0.8f * next_uniform(rng);
  }
  area = edge(v[0], v[1], v[2][0], v[2][1]);
  if (area > -1 && area < 1) return; /* degenerate */
  for (y = 0; y < size; ++y)
    for (x = 0; x < size; ++x) {
      const float px = (float)x + 0.5f, py = (float)y + 0.5f;
      const float w0 = edge(v[1], v[2], px, py) / area, w1 = edge(v[2], v[0], px, py) / area;
      const float w2 = 1 - w0 - w1;
      float s;
      if (w0 < 0 || w1 < 0 || w2 < 0) continue;
      s = w0 * shade[0] + w1 * shade[1] + w2 * shade[2];
      for (i = 0; i < 3; ++i) clean[(y * size + x) * 3 + i] = color[i] * s;
    }
}

void scene_draw(uint64_t *rng, int size, float *noisy, float *clean) {
  float top[3], bottom[3];
  int i, x, y, n;
  for (i = 0; i < 3; ++i) {
    top[i] = 0.5f * next_uniform(rng);
    bottom[i] = 0.5f * next_uniform(rng);
  }
  for (y = 0; y < size; ++y)
    for (x = 0; x < size; ++x)
      for (i = 0; i < 3; ++i) {
        const float t = ((float)y + 0.5f) / (float)size;
        clean[(y * size + x) * 3 + i] = top[i] + (bottom[i] - top[i]) * t;
      }
  n = 2 + (int)(next_uniform(rng) * 4);
  for (i = 0; i < n; ++i) draw_triangle(rng, size, clean);
  for (y = 0; y < size * size; ++y) {
    for (i = 0; i < 3; ++i)
      noisy[y * 4 + i] = clamp01(clean[y * 3 + i] + FILTER_NOISE_AMPLITUDE * (2 * next_uniform(rng) - 1));
    noisy[y * 4 + 3] = 1;
  }
}
