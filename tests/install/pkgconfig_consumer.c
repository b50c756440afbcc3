/* A C program built outside the repository with `cc app.c $(pkg-config --cflags --libs cairn)`
 * against an installed prefix (tests/install/cmake_consumer.sh): adds two tensors and prints the
 * library's version and the sum. */
#include <stdio.h>

#include <cairn/cairn.h>

int main(void) {
  const float a[3] = {1.0f, 2.0f, 3.0f}, b[3] = {10.0f, 20.0f, 30.0f};
  float sum[3];
  int64_t n = 3;
  cairn_context *ctx = NULL;
  cairn_tensor *ta = NULL, *tb = NULL, *ins[2], *out = NULL;
  cairn_status *s = cairn_context_create(NULL, &ctx);
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, a, sizeof a, &ta);
  if (!s) s = cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, b, sizeof b, &tb);
  ins[0] = ta;
  ins[1] = tb;
  if (!s) s = cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1);
  if (!s) s = cairn_tensor_read(out, sum, sizeof sum);
  if (s) {
    fprintf(stderr, "pkgconfig_consumer: %s\n", cairn_status_message(s));
    cairn_status_free(s);
    return 1;
  }
  printf("cairn %s (ABI %u): [1 2 3] + [10 20 30] = [%g %g %g]\n", cairn_version(), cairn_abi_version(),
         (double)sum[0], (double)sum[1], (double)sum[2]);
  cairn_tensor_free(out);
  cairn_tensor_free(tb);
  cairn_tensor_free(ta);
  cairn_context_free(ctx);
  return 0;
}
