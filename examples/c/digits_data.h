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
/* Exits with "program: what: message" when `status` is an error. */
void digits_check(cairn_status *status, const char *program, const char *what);

#endif
