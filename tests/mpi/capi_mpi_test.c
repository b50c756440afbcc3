/* The C API's collectives across processes (cairn_mpi_*) under mpirun (tests/mpi/run.sh): the
 * plugin found beside the program (run.sh copies both into one directory, with CAIRN_MPI_PLUGIN
 * unset), all-reduce, broadcast, all-gather, barrier, a bad root and NULL handles. Prints one line
 * per rank; exits nonzero on the first failed check. */
#include <cairn/cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1;

static void fail(const char* what, cairn_status* s) {
  fprintf(stderr, "capi_mpi_test rank %d: %s: %s\n", rank, what, s ? cairn_status_message(s) : "check failed");
  exit(1);
}

#define OK(call)                        \
  do {                                  \
    cairn_status* s_ = (call);          \
    if (s_) fail(#call, s_);            \
  } while (0)
#define CHECK(cond) \
  if (!(cond)) fail(#cond, NULL)

static cairn_tensor* floats(cairn_context* ctx, const float* v, int64_t n) {
  cairn_tensor* t = NULL;
  OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &n, 1, v, (size_t)n * sizeof(float), &t));
  return t;
}

int main(void) {
  cairn_context* ctx = NULL;
  OK(cairn_context_create(NULL, &ctx));
  cairn_mpi* mpi = NULL;
  OK(cairn_mpi_init(ctx, 20000, &mpi));
  rank = cairn_mpi_rank(mpi);
  const int n = cairn_mpi_size(mpi);
  CHECK(n >= 1 && rank >= 0 && rank < n);

  const float mine[3] = {(float)rank, 1.0f, -(float)rank};
  cairn_tensor* x = floats(ctx, mine, 3);
  cairn_tensor* sum = NULL;
  OK(cairn_mpi_all_reduce(mpi, CAIRN_REDUCE_SUM, x, &sum));
  float got[3];
  OK(cairn_tensor_read(sum, got, sizeof got));
  CHECK(got[0] == (float)(n * (n - 1) / 2) && got[1] == (float)n && got[2] == -(float)(n * (n - 1) / 2));

  cairn_tensor* from_last = NULL;
  OK(cairn_mpi_broadcast(mpi, n - 1, x, &from_last));
  OK(cairn_tensor_read(from_last, got, sizeof got));
  CHECK(got[0] == (float)(n - 1) && got[2] == -(float)(n - 1));

  cairn_tensor* all = NULL;
  OK(cairn_mpi_all_gather(mpi, x, &all));
  CHECK(cairn_tensor_rank(all) == 1 && cairn_tensor_dim(all, 0) == 3 * n);
  float* gathered = malloc((size_t)(3 * n) * sizeof(float));
  OK(cairn_tensor_read(all, gathered, (size_t)(3 * n) * sizeof(float)));
  for (int r = 0; r < n; ++r) CHECK(gathered[3 * r] == (float)r && gathered[3 * r + 2] == -(float)r);
  free(gathered);

  OK(cairn_mpi_barrier(mpi));
  cairn_status* s = cairn_mpi_broadcast(mpi, n, x, &from_last);
  CHECK(s && cairn_status_code(s) == CAIRN_INVALID_ARGUMENT && strstr(cairn_status_message(s), "cairn_mpi_broadcast"));
  cairn_status_free(s);
  s = cairn_mpi_barrier(NULL);
  CHECK(s && cairn_status_code(s) == CAIRN_INVALID_ARGUMENT);
  cairn_status_free(s);
  CHECK(cairn_mpi_rank(NULL) == -1 && cairn_mpi_size(NULL) == 0);

  cairn_tensor_free(x);
  cairn_tensor_free(sum);
  cairn_tensor_free(from_last);
  cairn_tensor_free(all);
  cairn_mpi_free(mpi); /* the last user of Cairn's MPI_Init: finalizes MPI */
  cairn_context_free(ctx);
  printf("capi_mpi_test rank %d of %d: ok\n", rank, n);
  return 0;
}
