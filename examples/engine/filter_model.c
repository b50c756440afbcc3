/* The denoiser's layers (see filter_model.h). */
#include "filter_model.h"

#include <stdio.h>

static cairn_status *conv(cairn_context *ctx, int index, int64_t filters, const char *activation, cairn_object **out) {
  char name[32];
  cairn_conv2d_options opts = CAIRN_CONV2D_OPTIONS_INIT;
  snprintf(name, sizeof name, "filter_conv_%d", index);
  opts.filters = filters;
  opts.padding = "SAME";
  opts.activation = activation;
  opts.name = name; /* copied by the layer */
  return cairn_conv2d_create(ctx, &opts, out);
}

cairn_status *filter_model_create(cairn_context *ctx, cairn_object **out) {
  const int64_t filters[3] = {16, 16, FILTER_OUT_CHANNELS};
  const char *activations[3] = {"relu", "relu", NULL};
  const int64_t probe_shape[4] = {1, 8, 8, FILTER_IN_CHANNELS};
  float probe_values[8 * 8 * FILTER_IN_CHANNELS] = {0};
  cairn_object *layers[3] = {NULL, NULL, NULL};
  cairn_model_options mo = CAIRN_MODEL_OPTIONS_INIT;
  cairn_tensor *probe = NULL, *probe_out = NULL;
  cairn_status *s = NULL;
  int i;
  *out = NULL;
  for (i = 0; i < 3 && !s; ++i) s = conv(ctx, i, filters[i], activations[i], &layers[i]);
  if (!s) {
    mo.name = "filter";
    mo.layers = (const cairn_object *const *)layers;
    mo.n_layers = 3;
    s = cairn_model_create(ctx, &mo, out);
  }
  for (i = 0; i < 3; ++i) cairn_object_free(layers[i]); /* the model keeps its own references */
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, probe_shape, 4, probe_values, sizeof probe_values, &probe);
  if (!s) s = cairn_layer_call(*out, probe, CAIRN_FALSE, &probe_out);
  cairn_tensor_free(probe);
  cairn_tensor_free(probe_out);
  if (s) {
    cairn_object_free(*out);
    *out = NULL;
  }
  return s;
}
