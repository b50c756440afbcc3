#include <stdio.h>
#include "cairn/cairn.h"

int main(void) {
  cairn_context *ctx = NULL;
  cairn_tensor *a = NULL, *b = NULL, *c = NULL;
  const float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
  const int64_t shape_a[2] = {2, 3}, shape_b[1] = {3};
  float out[6];
  cairn_status *s = cairn_context_create(NULL, &ctx);
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, shape_a, 2, av, sizeof av, &a);
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, shape_b, 1, bv, sizeof bv, &b);
  if (!s) { cairn_tensor *in[2] = {a, b}; s = cairn_op_run(ctx, "Add", in, 2, NULL, 0, &c, 1); }
  if (!s) s = cairn_tensor_read(c, out, sizeof out);
  if (s) { fprintf(stderr, "error: %s\n", cairn_status_message(s)); cairn_status_free(s); return 1; }
  printf("%g %g %g / %g %g %g\n", out[0], out[1], out[2], out[3], out[4], out[5]);
  cairn_tensor_free(c); cairn_tensor_free(b); cairn_tensor_free(a); cairn_context_free(ctx);
  return 0;
}
