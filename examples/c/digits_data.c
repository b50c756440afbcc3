#include "digits_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_program = "digits";

void digits_check(cairn_status *status, const char *program, const char *what) {
  if (status == NULL) return;
  fprintf(stderr, "%s: %s: %s\n", program, what, cairn_status_message(status));
  cairn_status_free(status);
  exit(1);
}

static void check(cairn_status *status, const char *what) { digits_check(status, g_program, what); }

/* The map "prepare": 64 float32 pixel components and an int32 label in, x = pixels / 16 as a
 * float32[64] vector and the label out. Compiled: traced once, replayed on the pipeline's threads. */
static cairn_status *prepare(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                             cairn_tensor **out, size_t n_out) {
  cairn_tensor *packed = NULL, *ins[2];
  cairn_attr axis;
  cairn_status *s;
  (void)user_data;
  (void)n_in;
  (void)n_out;
  memset(&axis, 0, sizeof axis);
  axis.name = "axis";
  axis.kind = CAIRN_ATTR_INT;
  axis.i = 0;
  s = cairn_op_run(ctx, "Pack", in, kDigitsFeatures, &axis, 1, &packed, 1);
  if (!s) {
    const float sixteenth = 0.0625f;
    cairn_tensor *scale = NULL;
    s = cairn_tensor_create(ctx, CAIRN_FLOAT32, NULL, 0, &sixteenth, sizeof sixteenth, &scale);
    ins[0] = packed;
    ins[1] = scale;
    if (!s) s = cairn_op_run(ctx, "Mul", ins, 2, NULL, 0, &out[0], 1);
    cairn_tensor_free(scale);
  }
  if (!s) s = cairn_tensor_share(in[kDigitsFeatures], &out[1]);
  cairn_tensor_free(packed);
  return s;
}

/* Frees the previous stage `prev` once `status` says the next one (*next) was built from it. */
static cairn_dataset *stage(cairn_dataset *prev, cairn_status *status, cairn_dataset **next, const char *what) {
  check(status, what);
  cairn_dataset_free(prev);
  return *next;
}

void digits_load(cairn_context *ctx, const char *path, int64_t batch_size, int64_t shuffle_seed, const char *program,
                 DigitsData *data) {
  cairn_dtype dtypes[kDigitsFeatures + 1];
  cairn_csv_options csv_opts = CAIRN_CSV_OPTIONS_INIT;
  cairn_map_options map_opts = CAIRN_MAP_OPTIONS_INIT;
  const char *out_names[2] = {"x", "label"};
  cairn_dataset *csv = NULL, *samples = NULL, *train = NULL, *test = NULL, *d = NULL, *part = NULL;
  cairn_object *it = NULL;
  cairn_tensor *test_batch[2] = {NULL, NULL};
  int k;

  g_program = program;
  for (k = 0; k < kDigitsFeatures; ++k) dtypes[k] = CAIRN_FLOAT32;
  dtypes[kDigitsFeatures] = CAIRN_INT32;
  csv_opts.column_dtypes = dtypes;
  csv_opts.n_columns = kDigitsFeatures + 1;
  check(cairn_dataset_csv(ctx, &path, 1, &csv_opts, &csv), "csv");
  map_opts.n_outputs = 2;
  map_opts.output_names = out_names;
  check(cairn_dataset_map(csv, "prepare", prepare, NULL, &map_opts, &samples), "map");
  cairn_dataset_free(csv);

  /* Line i is a test sample when i % 5 == 4. */
  check(cairn_dataset_shard(samples, 5, 4, &test), "shard");
  check(cairn_dataset_shard(samples, 5, 0, &train), "shard");
  for (k = 1; k < 4; ++k) {
    check(cairn_dataset_shard(samples, 5, k, &part), "shard");
    train = stage(train, cairn_dataset_concatenate(train, part, &d), &d, "concatenate");
    cairn_dataset_free(part);
  }
  cairn_dataset_free(samples);
  data->n_train = cairn_dataset_cardinality(train);
  data->n_test = cairn_dataset_cardinality(test);

  train = stage(train, cairn_dataset_shuffle(train, data->n_train, shuffle_seed, 1, &d), &d, "shuffle");
  data->train = stage(train, cairn_dataset_batch(train, batch_size, 0, &d), &d, "batch");
  data->steps_per_epoch = cairn_dataset_cardinality(data->train);

  test = stage(test, cairn_dataset_batch(test, data->n_test, 0, &d), &d, "batch");
  check(cairn_dataset_iterate(test, &it), "iterate");
  check(cairn_iterator_next(it, test_batch, 2), "test set");
  data->x_test = test_batch[0];
  data->y_test = test_batch[1];
  cairn_object_free(it);
  cairn_dataset_free(test);
}

void digits_free(DigitsData *data) {
  cairn_tensor_free(data->x_test);
  cairn_tensor_free(data->y_test);
  cairn_dataset_free(data->train);
  memset(data, 0, sizeof *data);
}

cairn_status *digits_train_step(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                                cairn_tensor **out, size_t n_out) {
  DigitsStep *st = (DigitsStep *)user_data;
  cairn_tensor *grads[8] = {NULL};
  cairn_object *vars[8];
  cairn_object_array *weights = NULL;
  cairn_tape *tape = NULL;
  cairn_status *s;
  size_t i, nw = 0;
  (void)n_in;
  (void)n_out;
  s = cairn_tape_create(ctx, NULL, &tape);
  if (!s) s = cairn_layer_call(st->model, in[0], 1, &out[1]);
  if (!s) s = cairn_loss(ctx, CAIRN_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, in[1], out[1], 1, &out[0]);
  if (!s) s = cairn_layer_weights(st->model, 1, &weights);
  if (!s) {
    nw = cairn_object_array_size(weights);
    for (i = 0; i < nw; ++i) vars[i] = cairn_object_array_get(weights, i);
    s = cairn_tape_gradient_variables(tape, out[0], vars, nw, NULL, CAIRN_UNCONNECTED_NONE, grads);
  }
  if (!s) s = cairn_optimizer_apply_gradients(st->optimizer, (const cairn_tensor *const *)grads, vars, nw);
  for (i = 0; i < nw; ++i) cairn_tensor_free(grads[i]);
  cairn_object_array_free(weights);
  cairn_tape_free(tape);
  return s;
}

cairn_object *digits_model(cairn_context *ctx, double learning_rate) {
  cairn_object *layers[2] = {NULL, NULL}, *model = NULL, *adam = NULL;
  cairn_dense_options d = CAIRN_DENSE_OPTIONS_INIT;
  cairn_model_options m = CAIRN_MODEL_OPTIONS_INIT;
  cairn_optimizer_options o = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_compile_options c = CAIRN_COMPILE_OPTIONS_INIT;
  const char *metrics[1] = {"accuracy"};
  d.units = 64;
  d.activation = "relu";
  check(cairn_dense_create(ctx, &d, &layers[0]), "Dense");
  d.units = kDigitsClasses;
  d.activation = NULL;
  check(cairn_dense_create(ctx, &d, &layers[1]), "Dense");
  m.name = "mlp";
  m.layers = (const cairn_object *const *)layers;
  m.n_layers = 2;
  check(cairn_model_create(ctx, &m, &model), "model");
  o.kind = CAIRN_OPTIMIZER_ADAM;
  o.learning_rate = learning_rate;
  check(cairn_optimizer_create(ctx, &o, &adam), "optimizer");
  c.optimizer = adam;
  c.loss = "sparse_categorical_crossentropy";
  c.metrics = metrics;
  c.n_metrics = 1;
  check(cairn_model_compile(model, &c), "compile");
  cairn_object_free(adam);
  cairn_object_free(layers[0]);
  cairn_object_free(layers[1]);
  return model;
}

unsigned long long digits_weights_checksum(cairn_object *model) {
  unsigned long long h = 0xcbf29ce484222325ull;
  cairn_object_array *weights = NULL;
  size_t i, j;
  check(cairn_layer_weights(model, 1, &weights), "weights");
  for (i = 0; i < cairn_object_array_size(weights); ++i) {
    cairn_tensor *t = NULL;
    unsigned char *bytes;
    size_t n;
    check(cairn_variable_read(cairn_object_array_get(weights, i), &t), "weight");
    n = cairn_tensor_nbytes(t);
    bytes = malloc(n);
    if (!bytes) check(cairn_status_create(CAIRN_RESOURCE_EXHAUSTED, "out of memory"), "weight");
    check(cairn_tensor_read(t, bytes, n), "weight");
    for (j = 0; j < n; ++j) h = (h ^ bytes[j]) * 0x100000001b3ull;
    free(bytes);
    cairn_tensor_free(t);
  }
  cairn_object_array_free(weights);
  return h;
}
