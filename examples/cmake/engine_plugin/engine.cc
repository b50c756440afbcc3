// A tiny "engine": loads a plugin with dlopen, calls plugin_init, runs 100 frames (each with a new
// observation, timed), then plugin_shutdown. It checks every frame's answer against the same
// network computed by hand from plugin.h's weights and prints one result line.
// Usage: engine PLUGIN.so
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "plugin.h"

namespace {

// The plugin's model by hand: softmax(relu(obs @ W0 + b0) @ W1 + b1).
void reference(const float *obs, double *out) {
  double h[PLUGIN_HIDDEN], logits[PLUGIN_ACTIONS], max = -1e300, sum = 0;
  for (int c = 0; c < PLUGIN_HIDDEN; ++c) {
    double v = plugin_bias(0, c);
    for (int r = 0; r < PLUGIN_OBS; ++r) v += double(obs[r]) * plugin_weight(0, r, c);
    h[c] = v > 0 ? v : 0;
  }
  for (int c = 0; c < PLUGIN_ACTIONS; ++c) {
    double v = plugin_bias(1, c);
    for (int r = 0; r < PLUGIN_HIDDEN; ++r) v += h[r] * plugin_weight(1, r, c);
    logits[c] = v;
    max = std::max(max, v);
  }
  for (int c = 0; c < PLUGIN_ACTIONS; ++c) sum += out[c] = std::exp(logits[c] - max);
  for (int c = 0; c < PLUGIN_ACTIONS; ++c) out[c] /= sum;
}

template <typename F>
F lookup(void *plugin, const char *name) {
  void *sym = dlsym(plugin, name);
  if (!sym) {
    std::fprintf(stderr, "engine: the plugin has no %s: %s\n", name, dlerror());
    std::exit(1);
  }
  return reinterpret_cast<F>(sym);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: engine PLUGIN.so\n");
    return 2;
  }
  void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    std::fprintf(stderr, "engine: cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  auto init = lookup<plugin_init_fn>(plugin, "plugin_init");
  auto frame = lookup<plugin_frame_fn>(plugin, "plugin_frame");
  auto shutdown = lookup<plugin_shutdown_fn>(plugin, "plugin_shutdown");

  char err[512] = {0};
  if (init(err, sizeof err) != 0) {
    std::fprintf(stderr, "engine: plugin_init failed: %s\n", err);
    return 1;
  }
  const int frames = 100;
  std::vector<double> us;
  double max_diff = 0;
  int counts[PLUGIN_ACTIONS] = {0};
  for (int f = 0; f < frames; ++f) {
    float obs[PLUGIN_OBS], action[PLUGIN_ACTIONS];
    double want[PLUGIN_ACTIONS];
    for (int i = 0; i < PLUGIN_OBS; ++i) obs[i] = float(std::sin(0.1 * f + 0.7 * i));  // the NPC's view this frame
    auto t0 = std::chrono::steady_clock::now();
    if (frame(obs, action, err, sizeof err) != 0) {
      std::fprintf(stderr, "engine: frame %d failed: %s\n", f, err);
      return 1;
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    reference(obs, want);
    int best = 0;
    for (int c = 0; c < PLUGIN_ACTIONS; ++c) {
      max_diff = std::max(max_diff, std::fabs(action[c] - want[c]));
      if (action[c] > action[best]) best = c;
    }
    ++counts[best];
  }
  shutdown();
  dlclose(plugin);

  std::sort(us.begin(), us.end());
  bool ok = max_diff < 1e-5;
  std::printf("engine: %d frames %s: max |plugin - reference| = %.1e, actions chosen %d/%d/%d/%d, "
              "frame time median %.1f us, max %.1f us\n",
              frames, ok ? "OK" : "WRONG", max_diff, counts[0], counts[1], counts[2], counts[3], us[us.size() / 2],
              us.back());
  return ok ? 0 : 1;
}
