// The plugin interface between the engine and a plugin (C linkage, so any compiler's plugin loads).
// The engine dlopens the plugin and looks these three up by name.
#pragma once

#include <stddef.h>

// The model's per-frame input and output sizes: 16 observation features in, 4 action scores out.
#define PLUGIN_OBS 16
#define PLUGIN_HIDDEN 32
#define PLUGIN_ACTIONS 4

extern "C" {
// Called once before the first frame. Returns 0 on success; otherwise writes a message to `err`.
typedef int (*plugin_init_fn)(char *err, size_t err_len);
// Called every frame: `obs` holds PLUGIN_OBS floats, `action` receives PLUGIN_ACTIONS
// probabilities. Returns 0 on success; otherwise writes a message to `err`.
typedef int (*plugin_frame_fn)(const float *obs, float *action, char *err, size_t err_len);
// Called once after the last frame.
typedef void (*plugin_shutdown_fn)(void);
}

// The model's weights, a fixed formula both sides know: the plugin loads them into its Cairn
// layers, and the engine computes the same network by hand to check the plugin's answers.
inline float plugin_weight(int layer, int row, int col) {
  int h = (layer * 131 + row * 31 + col * 17) % 97;
  return (static_cast<float>(h) / 97.0f - 0.5f) * (layer == 0 ? 0.5f : 0.8f);
}
inline float plugin_bias(int layer, int col) { return 0.01f * static_cast<float>((col % 5) - 2) * (layer + 1); }
