/* The UCI digits as input pipelines (docs/data.md), shared by the training demos: the CSV file
 * mapped to (x, label) samples, split 80/20 (line i is a test sample when i % 5 == 4), the training
 * part shuffled and batched, the test part as two tensors. */
#ifndef CAIRN_EXAMPLES_C_DIGITS_DATA_H_
#define CAIRN_EXAMPLES_C_DIGITS_DATA_H_

#include <stdint.h>

#include "cairn/cairn.h"

enum { kDigitsFeatures = 64, kDigitsClasses = 10 };

typedef struct {
  cairn_dataset *train; /* (x float32[batch, 64], label int32[batch]), shuffled each pass, batched */
  int64_t n_train, n_test, steps_per_epoch;
  cairn_tensor *x_test, *y_test;
} DigitsData;

/* Builds the pipelines from the CSV at `path`; exits with a message naming `program` on an error. */
void digits_load(cairn_context *ctx, const char *path, int64_t batch_size, int64_t shuffle_seed, const char *program,
                 DigitsData *data);
/* Frees what digits_load made. */
void digits_free(DigitsData *data);
/* The hand-written training step (a cairn_function_fn; user_data is a DigitsStep), compiled by
 * train_digits and bench/fit_bench: a tape, the model's logits, the sparse crossentropy, the
 * gradients of the trainable weights and the optimizer's update. inputs: x [batch, 64] float32,
 * y [batch] int32; outputs: the loss and the logits. */
typedef struct {
  cairn_object *model, *optimizer;
} DigitsStep;
cairn_status *digits_train_step(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                                cairn_tensor **out, size_t n_out);
/* The demos' model: Dense(64, relu) -> Dense(10) logits named "mlp", compiled with Adam at
 * `learning_rate`, sparse crossentropy and accuracy (inside a strategy's scope, the compile picks it up). */
cairn_object *digits_model(cairn_context *ctx, double learning_rate);
/* FNV-1a 64 over the bytes of the model's trainable weights: equal weights, equal checksum. */
unsigned long long digits_weights_checksum(cairn_object *model);
/* Exits with "program: what: message" when `status` is an error. */
void digits_check(cairn_status *status, const char *program, const char *what);

#endif
