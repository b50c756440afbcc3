/* Cairn demo: a tiny classifier head run eagerly through the C API.
 *   logits = relu(x @ w1 + b1) @ w2 + b2,   probs = softmax(logits),   class = argmax(probs)
 * Every step is a cairn_op_run call; errors are reported with the runtime's own messages. */
#include <stdio.h>
#include <stdlib.h>

#include "cairn/cairn.h"

static void check(cairn_status *s, const char *what) {
  if (s == NULL) return;
  fprintf(stderr, "demo: %s failed: %s\n", what, cairn_status_message(s));
  cairn_status_free(s);
  exit(1);
}

static cairn_tensor *matrix(cairn_context *ctx, const float *v, int64_t rows, int64_t cols) {
  int64_t shape[2];
  cairn_tensor *t = NULL;
  shape[0] = rows;
  shape[1] = cols;
  check(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, v, (size_t)(rows * cols) * sizeof(float), &t), "tensor");
  return t;
}

static cairn_tensor *vector(cairn_context *ctx, const float *v, int64_t n) {
  cairn_tensor *t = NULL;
  check(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, (size_t)n * sizeof(float), &t), "tensor");
  return t;
}

/* Runs a one-output op and frees nothing: the caller owns the result. */
static cairn_tensor *op(cairn_context *ctx, const char *name, cairn_tensor *a, cairn_tensor *b,
                        const cairn_attr *attrs, size_t n_attrs) {
  cairn_tensor *ins[2];
  cairn_tensor *out = NULL;
  ins[0] = a;
  ins[1] = b;
  check(cairn_op_run(ctx, name, ins, b ? 2 : 1, attrs, n_attrs, &out, 1), name);
  return out;
}

static void print_matrix(const char *title, const cairn_tensor *t) {
  int64_t r, c, rows = cairn_tensor_dim(t, 0), cols = cairn_tensor_dim(t, 1);
  float *v = malloc(cairn_tensor_nbytes(t));
  check(cairn_tensor_read(t, v, cairn_tensor_nbytes(t)), "read");
  printf("%s [%lld x %lld]\n", title, (long long)rows, (long long)cols);
  for (r = 0; r < rows; ++r) {
    printf("  ");
    for (c = 0; c < cols; ++c) printf("%8.4f", v[r * cols + c]);
    printf("\n");
  }
  free(v);
}

int main(void) {
  /* four samples with three features each */
  const float x[12] = {0.9f, 0.1f, 0.0f, 0.1f, 0.8f, 0.2f, 0.0f, 0.2f, 0.9f, 0.5f, 0.5f, 0.1f};
  const float w1[12] = {1.5f, -0.5f, 0.2f, 0.1f, -0.4f, 1.4f, 0.3f, 0.2f, 0.1f, -0.3f, 1.6f, 0.4f};
  const float b1[4] = {0.0f, 0.1f, 0.0f, -0.1f};
  const float w2[12] = {2.0f, -1.0f, -1.0f, -1.0f, 2.0f, -1.0f, -1.0f, -1.0f, 2.0f, 0.5f, 0.5f, 0.5f};
  const float b2[3] = {0.1f, 0.0f, -0.1f};
  cairn_context *ctx = NULL;
  cairn_tensor *tx, *tw1, *tb1, *tw2, *tb2, *h, *hb, *hr, *logits, *lb, *probs, *cls;
  cairn_attr axis1 = {0};
  int64_t classes[4];
  int i;

  check(cairn_context_create(NULL, &ctx), "context");
  printf("Cairn %s on %s, %zu ops registered\n", cairn_version(), cairn_context_device(ctx), cairn_op_count());

  tx = matrix(ctx, x, 4, 3);
  tw1 = matrix(ctx, w1, 3, 4);
  tb1 = vector(ctx, b1, 4);
  tw2 = matrix(ctx, w2, 4, 3);
  tb2 = vector(ctx, b2, 3);

  h = op(ctx, "MatMul", tx, tw1, NULL, 0);
  hb = op(ctx, "Add", h, tb1, NULL, 0); /* bias broadcasts over the batch */
  hr = op(ctx, "Relu", hb, NULL, NULL, 0);
  logits = op(ctx, "MatMul", hr, tw2, NULL, 0);
  lb = op(ctx, "Add", logits, tb2, NULL, 0);
  probs = op(ctx, "Softmax", lb, NULL, NULL, 0);
  axis1.name = "axis";
  axis1.kind = CAIRN_ATTR_INT;
  axis1.i = 1;
  cls = op(ctx, "ArgMax", probs, NULL, &axis1, 1);

  print_matrix("hidden = relu(x @ w1 + b1)", hr);
  print_matrix("probabilities = softmax(hidden @ w2 + b2)", probs);
  check(cairn_tensor_read(cls, classes, sizeof classes), "read classes");
  printf("predicted classes:");
  for (i = 0; i < 4; ++i) printf(" %lld", (long long)classes[i]);
  printf("\n");

  {
    /* Errors are values: a shape mismatch comes back as a status naming the op and both shapes. */
    cairn_tensor *bad = NULL;
    cairn_tensor *ins[2];
    cairn_status *s;
    ins[0] = tx;
    ins[1] = tb1;
    s = cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &bad, 1);
    printf("error demo: %s\n", cairn_status_message(s));
    cairn_status_free(s);
  }

  cairn_tensor_free(cls);
  cairn_tensor_free(probs);
  cairn_tensor_free(lb);
  cairn_tensor_free(logits);
  cairn_tensor_free(hr);
  cairn_tensor_free(hb);
  cairn_tensor_free(h);
  cairn_tensor_free(tb2);
  cairn_tensor_free(tw2);
  cairn_tensor_free(tb1);
  cairn_tensor_free(tw1);
  cairn_tensor_free(tx);
  cairn_context_free(ctx);
  return 0;
}
