/* The denoiser both sides share: train_filter.c trains it on the CPU and saves its weights, the
 * engine builds the same layers (same names) in its Vulkan context and loads them.
 *
 * Input: [N, H, W, 4] float32, the renderer's RGBA (alpha 1) with per-pixel noise, as a path tracer
 * with few samples gives. Output: [N, H, W, 3] float32, the clean RGB estimate. Three 3x3 SAME
 * convolutions (4 -> 16 relu -> 16 relu -> 3), 3,347 weights. */
#ifndef CAIRN_EXAMPLES_ENGINE_FILTER_MODEL_H_
#define CAIRN_EXAMPLES_ENGINE_FILTER_MODEL_H_

#include <cairn/cairn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FILTER_IN_CHANNELS 4
#define FILTER_OUT_CHANNELS 3
/* The renderer's noise: each channel gets amplitude * u, u uniform in [-1, 1], then [0, 1] clamp. */
#define FILTER_NOISE_AMPLITUDE 0.25f

/* Builds the model (cairn_model_create, layers "filter_conv_0..2") and calls it once on a zero
 * [1, 8, 8, 4] input so its weights exist. Free with cairn_object_free. */
cairn_status *filter_model_create(cairn_context *ctx, cairn_object **out);

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_EXAMPLES_ENGINE_FILTER_MODEL_H_ */
