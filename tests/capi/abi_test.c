/* The ABI 1 rules of the header's preamble: one struct_size rule for every versioned struct,
 * cairn_X_init equal to CAIRN_X_INIT, growable tensor-spec arrays, the options-struct
 * constructors, cairn_bool results, save_counter's status and the op attribute builder. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

/* cairn_X_init gives exactly the bytes of a static CAIRN_X_INIT (static storage zeroes padding),
 * and an unknown size writes nothing. */
#define CHECK_INIT(T, INIT)                                                          \
  do {                                                                               \
    static const T expected = INIT;                                                  \
    T got;                                                                           \
    memset(&got, 0xAB, sizeof got);                                                  \
    CHECK_OK(T##_init(&got, (uint32_t)sizeof got));                                  \
    CHECK(memcmp(&expected, &got, sizeof got) == 0);                                 \
    memset(&got, 0xAB, sizeof got);                                                  \
    CHECK_ERR(T##_init(&got, (uint32_t)sizeof got + 8), CAIRN_INVALID_ARGUMENT,      \
              #T ".struct_size is");                                                 \
    CHECK(((unsigned char *)&got)[0] == 0xAB);                                       \
    CHECK_ERR(T##_init(NULL, (uint32_t)sizeof got), CAIRN_INVALID_ARGUMENT, "NULL"); \
  } while (0)

static void initializers_match_macros(void) {
  CHECK_INIT(cairn_context_options, CAIRN_CONTEXT_OPTIONS_INIT);
  CHECK_INIT(cairn_variable_options, CAIRN_VARIABLE_OPTIONS_INIT);
  CHECK_INIT(cairn_checkpoint_options, CAIRN_CHECKPOINT_OPTIONS_INIT);
  CHECK_INIT(cairn_checkpoint_manager_options, CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT);
  CHECK_INIT(cairn_tape_options, CAIRN_TAPE_OPTIONS_INIT);
  CHECK_INIT(cairn_optimizer_options, CAIRN_OPTIMIZER_OPTIONS_INIT);
  CHECK_INIT(cairn_exponential_decay_options, CAIRN_EXPONENTIAL_DECAY_OPTIONS_INIT);
  CHECK_INIT(cairn_cosine_decay_options, CAIRN_COSINE_DECAY_OPTIONS_INIT);
  CHECK_INIT(cairn_dense_options, CAIRN_DENSE_OPTIONS_INIT);
  CHECK_INIT(cairn_conv2d_options, CAIRN_CONV2D_OPTIONS_INIT);
  CHECK_INIT(cairn_pool2d_options, CAIRN_POOL2D_OPTIONS_INIT);
  CHECK_INIT(cairn_flatten_options, CAIRN_FLATTEN_OPTIONS_INIT);
  CHECK_INIT(cairn_embedding_options, CAIRN_EMBEDDING_OPTIONS_INIT);
  CHECK_INIT(cairn_norm_options, CAIRN_NORM_OPTIONS_INIT);
  CHECK_INIT(cairn_dropout_options, CAIRN_DROPOUT_OPTIONS_INIT);
  CHECK_INIT(cairn_activation_options, CAIRN_ACTIVATION_OPTIONS_INIT);
  CHECK_INIT(cairn_sequential_options, CAIRN_SEQUENTIAL_OPTIONS_INIT);
  CHECK_INIT(cairn_function_options, CAIRN_FUNCTION_OPTIONS_INIT);
  CHECK_INIT(cairn_tensor_spec, CAIRN_TENSOR_SPEC_INIT);
  CHECK_INIT(cairn_vulkan_device_info, CAIRN_VULKAN_DEVICE_INFO_INIT);
  CHECK_INIT(cairn_vulkan_options, CAIRN_VULKAN_OPTIONS_INIT);
}

/* A binary compiled against the pre-1.0 header passes the older size of the two structs that
 * grew; init fills only that much and the library reads only that much. */
static void older_sizes_are_read_partially(void) {
  const uint32_t old_function = (uint32_t)offsetof(cairn_function_options, static_inputs);
  const uint32_t old_context = (uint32_t)offsetof(cairn_context_options, log_release);
  cairn_function_options fo;
  cairn_context_options co;
  cairn_context *ctx = NULL;
  memset(&fo, 0xCD, sizeof fo);
  CHECK_OK(cairn_function_options_init(&fo, old_function));
  CHECK(fo.struct_size == old_function && fo.retrace_warning == 5);
  CHECK(((unsigned char *)&fo)[old_function] == 0xCD); /* static_inputs untouched */
  memset(&co, 0xCD, sizeof co);
  CHECK_OK(cairn_context_options_init(&co, old_context));
  /* log_release holds 0xCD bytes: a library that read past struct_size would call it. */
  CHECK_OK(cairn_context_create(&co, &ctx));
  cairn_context_free(ctx);
  co.struct_size = old_context + 4; /* not the size of any released version */
  CHECK_ERR(cairn_context_create(&co, &ctx), CAIRN_INVALID_ARGUMENT,
            "cairn_context_create: cairn_context_options.struct_size is");
  co.struct_size = (uint32_t)sizeof co + 16; /* a newer header than this library */
  CHECK_ERR(cairn_context_create(&co, &ctx), CAIRN_INVALID_ARGUMENT, "newer cairn.h");
}

/* An array of specs takes its stride from element 0, and every element must agree. */
static void tensor_spec_arrays(cairn_context *ctx) {
  const int64_t any[1] = {-1};
  cairn_tensor_spec specs[2] = {CAIRN_TENSOR_SPEC_INIT, CAIRN_TENSOR_SPEC_INIT};
  cairn_function_options o = CAIRN_FUNCTION_OPTIONS_INIT;
  cairn_function *fn = NULL;
  specs[0].dtype = specs[1].dtype = CAIRN_FLOAT32;
  specs[0].shape = specs[1].shape = any;
  specs[0].rank = specs[1].rank = 1;
  o.input_signature = specs;
  o.n_input_signature = 1;
  CHECK_OK(cairn_function_create(ctx, "identity", check_identity_fn, NULL, &o, &fn));
  cairn_function_free(fn);
  fn = NULL;
  o.n_input_signature = 2;
  specs[1].struct_size = 12;
  CHECK_ERR(cairn_function_create(ctx, "identity", check_identity_fn, NULL, &o, &fn), CAIRN_INVALID_ARGUMENT,
            "cairn_tensor_spec[1].struct_size is 12 but element 0's is");
  specs[0].struct_size = 12;
  CHECK_ERR(cairn_function_create(ctx, "identity", check_identity_fn, NULL, &o, &fn), CAIRN_INVALID_ARGUMENT,
            "cairn_tensor_spec.struct_size is 12");
  CHECK(fn == NULL);
}

static void layer_options(cairn_context *ctx) {
  cairn_object *layer = NULL, *other = NULL;
  cairn_embedding_options eo = CAIRN_EMBEDDING_OPTIONS_INIT;
  cairn_dropout_options dro = CAIRN_DROPOUT_OPTIONS_INIT;
  cairn_activation_options ao = CAIRN_ACTIVATION_OPTIONS_INIT;
  cairn_sequential_options so = CAIRN_SEQUENTIAL_OPTIONS_INIT;
  CHECK_OK(cairn_flatten_create(ctx, NULL, &layer));
  cairn_object_free(layer);
  CHECK_ERR(cairn_embedding_create(ctx, NULL, &layer), CAIRN_INVALID_ARGUMENT, "cairn_embedding_create: opts is NULL");
  CHECK_ERR(cairn_embedding_create(ctx, &eo, &layer), CAIRN_INVALID_ARGUMENT, "must be positive");
  eo.input_dim = 10;
  eo.output_dim = 4;
  eo.name = "words";
  CHECK_OK(cairn_embedding_create(ctx, &eo, &layer));
  cairn_object_free(layer);
  dro.rate = 1.5;
  CHECK_ERR(cairn_dropout_create(ctx, &dro, &layer), CAIRN_INVALID_ARGUMENT, "rate must be in [0, 1)");
  CHECK_OK(cairn_dropout_create(ctx, NULL, &layer));
  cairn_object_free(layer);
  ao.activation = "no-such-activation";
  CHECK_ERR(cairn_activation_create(ctx, &ao, &layer), CAIRN_INVALID_ARGUMENT, "no-such-activation");
  so.name = "net";
  CHECK_OK(cairn_sequential_create(ctx, &so, &layer));
  CHECK_OK(cairn_sequential_create(ctx, NULL, &other));
  CHECK(cairn_object_same(layer, layer) == CAIRN_TRUE && cairn_object_same(layer, other) == CAIRN_FALSE);
  cairn_object_free(other);
  cairn_object_free(layer);
}

static void schedule_options(cairn_context *ctx) {
  cairn_exponential_decay_options eo = CAIRN_EXPONENTIAL_DECAY_OPTIONS_INIT;
  cairn_cosine_decay_options co = CAIRN_COSINE_DECAY_OPTIONS_INIT;
  cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
  cairn_object *schedule = NULL, *opt = NULL;
  double lr = 0;
  CHECK_ERR(cairn_schedule_exponential_decay(ctx, NULL, &schedule), CAIRN_INVALID_ARGUMENT, "opts is NULL");
  CHECK_ERR(cairn_schedule_exponential_decay(ctx, &eo, &schedule), CAIRN_INVALID_ARGUMENT, "decay_steps");
  eo.initial_learning_rate = 0.5;
  eo.decay_steps = 10;
  eo.decay_rate = 0.5;
  CHECK_OK(cairn_schedule_exponential_decay(ctx, &eo, &schedule));
  oo.schedule = schedule;
  CHECK_OK(cairn_optimizer_create(ctx, &oo, &opt));
  CHECK_OK(cairn_optimizer_learning_rate(opt, &lr));
  CHECK(lr == 0.5);
  cairn_object_free(opt);
  cairn_object_free(schedule);
  CHECK_ERR(cairn_schedule_cosine_decay(ctx, &co, &schedule), CAIRN_INVALID_ARGUMENT, "decay_steps");
  co.decay_steps = 100;
  CHECK_OK(cairn_schedule_cosine_decay(ctx, &co, &schedule));
  cairn_object_free(schedule);
}

static void save_counter_status(cairn_context *ctx) {
  cairn_checkpoint *ckpt = NULL;
  int64_t counter = -1;
  CHECK_OK(cairn_checkpoint_create(ctx, NULL, NULL, 0, &ckpt));
  CHECK_OK(cairn_checkpoint_save_counter(ckpt, &counter));
  CHECK(counter == 0);
  CHECK_ERR(cairn_checkpoint_save_counter(ckpt, NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
  CHECK_ERR(cairn_checkpoint_save_counter(NULL, &counter), CAIRN_INVALID_ARGUMENT, "ckpt is NULL");
  cairn_checkpoint_free(ckpt);
}

/* The builder gives the same results as a cairn_attr array, replaces repeated names and copies
 * its values in. */
static void attribute_builder(cairn_context *ctx) {
  const float av[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {2, 2};
  int64_t axes[1] = {1};
  float by_array[4], by_builder[4], sums[2];
  cairn_tensor *a = NULL, *out = NULL;
  cairn_op_attrs *attrs = NULL;
  cairn_attr flat[2];
  memset(flat, 0, sizeof flat);
  flat[0].name = "transpose_b";
  flat[0].kind = CAIRN_ATTR_BOOL;
  flat[0].i = 1;
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, av, sizeof av, &a));
  {
    cairn_tensor *in[2] = {a, a};
    CHECK_OK(cairn_op_run(ctx, "MatMul", in, 2, flat, 1, &out, 1));
    CHECK_OK(cairn_tensor_read(out, by_array, sizeof by_array));
    cairn_tensor_free(out);
    CHECK_OK(cairn_op_attrs_create(&attrs));
    CHECK(cairn_op_attrs_size(attrs) == 0);
    CHECK_OK(cairn_op_attrs_set_bool(attrs, "transpose_b", CAIRN_FALSE));
    CHECK_OK(cairn_op_attrs_set_bool(attrs, "transpose_b", CAIRN_TRUE)); /* replaces */
    CHECK(cairn_op_attrs_size(attrs) == 1);
    CHECK_OK(cairn_op_run_attrs(ctx, "MatMul", in, 2, attrs, &out, 1));
    CHECK_OK(cairn_tensor_read(out, by_builder, sizeof by_builder));
    CHECK(memcmp(by_array, by_builder, sizeof by_array) == 0 && by_builder[1] == 11);
    cairn_tensor_free(out);
    cairn_op_attrs_free(attrs);
  }
  CHECK_OK(cairn_op_attrs_create(&attrs));
  CHECK_OK(cairn_op_attrs_set_ints(attrs, "axis", axes, 1));
  axes[0] = 0; /* the set holds its own copy */
  CHECK_OK(cairn_op_run_attrs(ctx, "Sum", &a, 1, attrs, &out, 1));
  CHECK_OK(cairn_tensor_read(out, sums, sizeof sums));
  CHECK(sums[0] == 3 && sums[1] == 7);
  cairn_tensor_free(out);
  CHECK_ERR(cairn_op_attrs_set_bool(attrs, "keep_dims", 2), CAIRN_INVALID_ARGUMENT, "must be 0 or 1");
  CHECK_ERR(cairn_op_attrs_set_string(attrs, "padding", NULL), CAIRN_INVALID_ARGUMENT, "value is NULL");
  CHECK_ERR(cairn_op_attrs_set_ints(attrs, "axis", NULL, 2), CAIRN_INVALID_ARGUMENT, "values is NULL");
  CHECK_ERR(cairn_op_attrs_set_int(attrs, NULL, 1), CAIRN_INVALID_ARGUMENT, "name is NULL");
  CHECK_OK(cairn_op_attrs_set_float(attrs, "bogus", 1.5));
  CHECK_ERR(cairn_op_run_attrs(ctx, "Sum", &a, 1, attrs, &out, 1), CAIRN_INVALID_ARGUMENT, "bogus");
  CHECK_ERR(cairn_op_run_attrs(ctx, "NoSuchOp", &a, 1, NULL, &out, 1), CAIRN_NOT_FOUND, "cairn_op_run_attrs");
  cairn_op_attrs_free(attrs);
  cairn_op_attrs_free(NULL);
  CHECK(cairn_op_attrs_size(NULL) == 0);
  cairn_tensor_free(a);
}

int main(void) {
  cairn_context *ctx = NULL;
  CHECK(CAIRN_VERSION_MAJOR == cairn_abi_version());
  initializers_match_macros();
  older_sizes_are_read_partially();
  CHECK_OK(cairn_context_create(NULL, &ctx));
  tensor_spec_arrays(ctx);
  layer_options(ctx);
  schedule_options(ctx);
  save_counter_status(ctx);
  attribute_builder(ctx);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
