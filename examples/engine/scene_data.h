/* Procedural training images for the denoiser, drawn like the engine's scene (shaders/scene.*):
 * a vertical background gradient and shaded triangles, then the renderer's per-pixel noise. */
#ifndef CAIRN_EXAMPLES_ENGINE_SCENE_DATA_H_
#define CAIRN_EXAMPLES_ENGINE_SCENE_DATA_H_

#include <stdint.h>

/* Fills `noisy` ([size, size, 4], alpha 1) and `clean` ([size, size, 3]) with one random scene
 * drawn from `*rng` (any nonzero start). */
void scene_draw(uint64_t *rng, int size, float *noisy, float *clean);

#endif /* CAIRN_EXAMPLES_ENGINE_SCENE_DATA_H_ */
