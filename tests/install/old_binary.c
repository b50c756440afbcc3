/* An "old binary": compiled against capi/abi/cairn.h, the header the ABI baseline was taken from
 * (tools/abi_check --update copies it there), then run against the library built now
 * (tests/install/old_binary.sh). It uses a broad slice of ABI 1 the way a program built at the
 * baseline does: versions, a context with options, tensors, ops with attributes, variables, a tape
 * and an optimizer step, a Dense layer, checkpoints and the reader, options structs passed with
 * their struct_size (from the _INIT macros and the _init functions). Prints "old_binary: OK ...". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairn/cairn.h>

static void check(cairn_status *s, const char *what) {
  if (s == NULL) return;
  fprintf(stderr, "old_binary: %s failed: %s\n", what, cairn_status_message(s));
  cairn_status_free(s);
  exit(1);
}

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "old_binary: %s\n", what);
    exit(1);
  }
}

static cairn_tensor *floats(cairn_context *ctx, const float *v, const int64_t *shape, size_t rank) {
  size_t i, n = 1;
  cairn_tensor *t = NULL;
  for (i = 0; i < rank; ++i) n *= (size_t)shape[i];
  check(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, rank, v, n * sizeof(float), &t), "cairn_tensor_create");
  return t;
}

static float scalar_of(const cairn_tensor *t) {
  float v = 0;
  check(cairn_tensor_read(t, &v, sizeof v), "cairn_tensor_read");
  return v;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[4096];
  cairn_context_options copts = CAIRN_CONTEXT_OPTIONS_INIT;
  cairn_context *ctx = NULL;
  const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s2[1] = {2};
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, w0[2] = {1.0f, -1.0f};
  cairn_tensor *ta, *tb, *prod = NULL, *arg = NULL, *ins[2];
  cairn_attr axis;
  float pv[4];
  int64_t idx[2];

  /* Versions: the library is ABI 1 and at least the baseline's version. */
  expect(cairn_abi_version() == CAIRN_ABI_VERSION, "ABI version differs from the baseline header's");
  expect(strncmp(cairn_version(), "1.", 2) == 0, "library version is not 1.x");

  /* A context from options passed with their struct_size. */
  copts.log_level = CAIRN_LOG_ERROR;
  check(cairn_context_create(&copts, &ctx), "cairn_context_create");

  /* Tensors and ops: MatMul, then ArgMax with an attribute. */
  ta = floats(ctx, a, s23, 2);
  tb = floats(ctx, b, s32, 2);
  expect(cairn_tensor_rank(ta) == 2 && cairn_tensor_dim(ta, 1) == 3 && cairn_tensor_nbytes(ta) == 24, "tensor shape");
  ins[0] = ta;
  ins[1] = tb;
  check(cairn_op_run(ctx, "MatMul", ins, 2, NULL, 0, &prod, 1), "MatMul");
  check(cairn_tensor_read(prod, pv, sizeof pv), "read MatMul");
  expect(pv[0] == 4 && pv[1] == 5 && pv[2] == 10 && pv[3] == 11, "MatMul values");
  memset(&axis, 0, sizeof axis);
  axis.name = "axis";
  axis.kind = CAIRN_ATTR_INT;
  axis.i = 1;
  ins[0] = prod;
  check(cairn_op_run(ctx, "ArgMax", ins, 1, &axis, 1, &arg, 1), "ArgMax");
  check(cairn_tensor_read(arg, idx, sizeof idx), "read ArgMax");
  expect(idx[0] == 1 && idx[1] == 1, "ArgMax values");

  {
    /* Variables with options; a tape and an SGD step on loss = mean((w - 0)^2). */
    cairn_variable_options vopts = CAIRN_VARIABLE_OPTIONS_INIT;
    cairn_tape_options topts = CAIRN_TAPE_OPTIONS_INIT;
    cairn_optimizer_options oopts;
    cairn_object *w = NULL, *opt = NULL;
    cairn_tape *tape = NULL;
    cairn_tensor *init = floats(ctx, w0, s2, 1), *zero, *wv = NULL, *loss = NULL, *grad = NULL, *after = NULL;
    const float z[2] = {0, 0};
    float wa[2];
    int64_t iterations = 0;

    vopts.name = "w";
    check(cairn_variable_create(ctx, init, &vopts, &w), "cairn_variable_create");
    check(cairn_optimizer_options_init(&oopts, (uint32_t)sizeof oopts), "cairn_optimizer_options_init");
    oopts.learning_rate = 0.25;
    check(cairn_optimizer_create(ctx, &oopts, &opt), "cairn_optimizer_create");
    zero = floats(ctx, z, s2, 1);
    check(cairn_tape_create(ctx, &topts, &tape), "cairn_tape_create");
    check(cairn_variable_read(w, &wv), "cairn_variable_read");
    check(cairn_loss(ctx, CAIRN_LOSS_MEAN_SQUARED_ERROR, zero, wv, CAIRN_FALSE, &loss), "cairn_loss");
    expect(fabsf(scalar_of(loss) - 1.0f) < 1e-6f, "loss value");
    check(cairn_tape_gradient_variables(tape, loss, &w, 1, NULL, CAIRN_UNCONNECTED_ZERO, &grad), "gradient");
    check(cairn_optimizer_apply_gradients(opt, (const cairn_tensor *const *)&grad, &w, 1), "apply_gradients");
    check(cairn_optimizer_iterations(opt, &iterations), "cairn_optimizer_iterations");
    check(cairn_variable_read(w, &after), "cairn_variable_read");
    check(cairn_tensor_read(after, wa, sizeof wa), "read w");
    /* d/dw mean(w^2) = w, so w - 0.25 * w = 0.75 w */
    expect(iterations == 1 && fabsf(wa[0] - 0.75f) < 1e-6f && fabsf(wa[1] + 0.75f) < 1e-6f, "SGD step");

    {
      /* Checkpoints: save with options, change the variable, restore, read the file back. */
      cairn_checkpoint_options kopts;
      cairn_checkpoint *ckpt = NULL;
      cairn_restore_status *rs = NULL;
      cairn_checkpoint_reader *reader = NULL;
      const char *names[1] = {"w"};
      char *saved = NULL;
      int64_t counter = 0;
      cairn_tensor *back = NULL, *twice = NULL;
      float wb[2];
      size_t i, found = 0;

      check(cairn_checkpoint_options_init(&kopts, (uint32_t)sizeof kopts), "cairn_checkpoint_options_init");
      kopts.compress = CAIRN_TRUE;
      kopts.fsync = CAIRN_FALSE;
      check(cairn_checkpoint_create(ctx, names, &w, 1, &ckpt), "cairn_checkpoint_create");
      check(cairn_checkpoint_set_options(ckpt, &kopts), "cairn_checkpoint_set_options");
      snprintf(path, sizeof path, "%s/ckpt", dir);
      check(cairn_checkpoint_save(ckpt, path, &saved), "cairn_checkpoint_save");
      check(cairn_checkpoint_save_counter(ckpt, &counter), "cairn_checkpoint_save_counter");
      expect(counter == 1, "save counter");
      twice = floats(ctx, w0, s2, 1);
      check(cairn_variable_assign(w, twice), "cairn_variable_assign");
      check(cairn_checkpoint_restore(ckpt, saved, &rs), "cairn_checkpoint_restore");
      check(cairn_restore_status_assert_consumed(rs), "assert_consumed");
      check(cairn_variable_read(w, &back), "cairn_variable_read");
      check(cairn_tensor_read(back, wb, sizeof wb), "read restored w");
      expect(wb[0] == wa[0] && wb[1] == wa[1], "restored value");
      check(cairn_checkpoint_reader_open(saved, &reader), "cairn_checkpoint_reader_open");
      for (i = 0; i < cairn_checkpoint_reader_count(reader); ++i)
        if (strstr(cairn_checkpoint_reader_key(reader, i), "w/.ATTRIBUTES/VARIABLE_VALUE")) ++found;
      expect(found == 1, "reader lists the variable");
      cairn_checkpoint_reader_free(reader);
      cairn_restore_status_free(rs);
      cairn_free(saved);
      cairn_tensor_free(back);
      cairn_tensor_free(twice);
      cairn_checkpoint_free(ckpt);
    }
    cairn_tensor_free(after);
    cairn_tensor_free(grad);
    cairn_tensor_free(loss);
    cairn_tensor_free(wv);
    cairn_tensor_free(zero);
    cairn_tensor_free(init);
    cairn_tape_free(tape);
    cairn_object_free(opt);
    cairn_object_free(w);
  }

  {
    /* A Dense layer from its _INIT macro and one from its _init function. */
    cairn_dense_options d1 = CAIRN_DENSE_OPTIONS_INIT, d2;
    cairn_object *l1 = NULL, *l2 = NULL;
    cairn_tensor *h = NULL, *y = NULL;
    int64_t params = 0;
    d1.units = 4;
    d1.activation = "relu";
    check(cairn_dense_options_init(&d2, (uint32_t)sizeof d2), "cairn_dense_options_init");
    d2.units = 1;
    d2.use_bias = CAIRN_FALSE;
    check(cairn_dense_create(ctx, &d1, &l1), "cairn_dense_create");
    check(cairn_dense_create(ctx, &d2, &l2), "cairn_dense_create");
    check(cairn_layer_call(l1, ta, CAIRN_FALSE, &h), "cairn_layer_call");
    check(cairn_layer_call(l2, h, CAIRN_FALSE, &y), "cairn_layer_call");
    expect(cairn_tensor_dim(y, 0) == 2 && cairn_tensor_dim(y, 1) == 1, "Dense output shape");
    check(cairn_layer_count_params(l1, &params), "cairn_layer_count_params");
    expect(params == 3 * 4 + 4, "Dense parameter count");
    cairn_tensor_free(y);
    cairn_tensor_free(h);
    cairn_object_free(l2);
    cairn_object_free(l1);
  }

  {
    /* Errors still come back as statuses with their codes. */
    cairn_tensor *bad = NULL;
    cairn_status *s;
    ins[0] = ta;
    ins[1] = ta;
    s = cairn_op_run(ctx, "MatMul", ins, 2, NULL, 0, &bad, 1);
    expect(s != NULL && cairn_status_code(s) == CAIRN_INVALID_ARGUMENT, "MatMul of [2,3] x [2,3] is INVALID_ARGUMENT");
    cairn_status_free(s);
  }

  cairn_tensor_free(arg);
  cairn_tensor_free(prod);
  cairn_tensor_free(tb);
  cairn_tensor_free(ta);
  cairn_context_free(ctx);
  printf("old_binary: OK against libcairn %s (built with the baseline header of ABI %u)\n", cairn_version(),
         CAIRN_ABI_VERSION);
  return 0;
}
