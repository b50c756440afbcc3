// npc_brain: an engine plugin that decides an NPC's action every frame with a small Cairn model
// (Dense 16 -> 32 relu, Dense 32 -> 4 softmax), through the C API of an installed libcairn.
// The model is created once in plugin_init; plugin_frame runs one forward pass per frame.
#include <cairn/cairn.h>

#include <cstdio>
#include <vector>

#include "plugin.h"

#define PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

cairn_context *ctx = nullptr;
cairn_object *hidden = nullptr;
cairn_object *head = nullptr;

// Turns a status into the plugin's error text; true when there was an error.
bool failed(cairn_status *s, const char *what, char *err, size_t err_len) {
  if (s == nullptr) return false;
  std::snprintf(err, err_len, "npc_brain: %s: %s", what, cairn_status_message(s));
  cairn_status_free(s);
  return true;
}

cairn_status *row_tensor(const float *v, int64_t n, cairn_tensor **out) {
  int64_t shape[2] = {1, n};
  return cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, v, static_cast<size_t>(n) * sizeof(float), out);
}

// Builds a Dense layer by calling it once, then replaces its glorot weights with plugin_weight's.
bool dense(int layer, int64_t in, int64_t units, const char *activation, cairn_object **out, char *err,
           size_t err_len) {
  cairn_dense_options opts = CAIRN_DENSE_OPTIONS_INIT;
  opts.units = units;
  opts.activation = activation;
  if (failed(cairn_dense_create(ctx, &opts, out), "cairn_dense_create", err, err_len)) return false;

  std::vector<float> kernel(static_cast<size_t>(in * units)), bias(static_cast<size_t>(units));
  for (int64_t r = 0; r < in; ++r)
    for (int64_t c = 0; c < units; ++c) kernel[static_cast<size_t>(r * units + c)] = plugin_weight(layer, int(r), int(c));
  for (int64_t c = 0; c < units; ++c) bias[static_cast<size_t>(c)] = plugin_bias(layer, int(c));

  cairn_tensor *x = nullptr, *y = nullptr, *k = nullptr, *b = nullptr;
  cairn_object_array *weights = nullptr;
  int64_t kshape[2] = {in, units};
  cairn_status *s = row_tensor(kernel.data(), in, &x);  // any row of `in` values builds the layer
  if (!s) s = cairn_layer_call(*out, x, CAIRN_FALSE, &y);        // creates kernel [in, units] and bias [units]
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, kshape, 2, kernel.data(), kernel.size() * sizeof(float), &k);
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, &units, 1, bias.data(), bias.size() * sizeof(float), &b);
  if (!s) s = cairn_layer_weights(*out, CAIRN_FALSE, &weights);
  bool ok = !failed(s, "building the dense layer", err, err_len);
  if (ok && cairn_object_array_size(weights) != 2) {
    std::snprintf(err, err_len, "npc_brain: the dense layer has %zu weights, expected kernel and bias",
                  cairn_object_array_size(weights));
    ok = false;
  }
  ok = ok && !failed(cairn_variable_assign(cairn_object_array_get(weights, 0), k), "kernel", err, err_len);
  ok = ok && !failed(cairn_variable_assign(cairn_object_array_get(weights, 1), b), "bias", err, err_len);
  cairn_object_array_free(weights);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_tensor_free(k);
  cairn_tensor_free(b);
  return ok;
}

}  // namespace

PLUGIN_EXPORT int plugin_init(char *err, size_t err_len) {
  if (failed(cairn_context_create(nullptr, &ctx), "cairn_context_create", err, err_len)) return 1;
  if (!dense(0, PLUGIN_OBS, PLUGIN_HIDDEN, "relu", &hidden, err, err_len)) return 1;
  if (!dense(1, PLUGIN_HIDDEN, PLUGIN_ACTIONS, "softmax", &head, err, err_len)) return 1;
  std::printf("npc_brain: Cairn %s on %s, model Dense(%d, relu) -> Dense(%d, softmax)\n", cairn_version(),
              cairn_context_device(ctx), PLUGIN_HIDDEN, PLUGIN_ACTIONS);
  return 0;
}

PLUGIN_EXPORT int plugin_frame(const float *obs, float *action, char *err, size_t err_len) {
  cairn_tensor *x = nullptr, *h = nullptr, *p = nullptr;
  cairn_status *s = row_tensor(obs, PLUGIN_OBS, &x);
  if (!s) s = cairn_layer_call(hidden, x, CAIRN_FALSE, &h);
  if (!s) s = cairn_layer_call(head, h, CAIRN_FALSE, &p);
  if (!s) s = cairn_tensor_read(p, action, PLUGIN_ACTIONS * sizeof(float));
  cairn_tensor_free(x);
  cairn_tensor_free(h);
  cairn_tensor_free(p);
  return failed(s, "frame", err, err_len) ? 1 : 0;
}

PLUGIN_EXPORT void plugin_shutdown(void) {
  cairn_object_free(head);
  cairn_object_free(hidden);
  cairn_context_free(ctx);
  head = hidden = nullptr;
  ctx = nullptr;
}
