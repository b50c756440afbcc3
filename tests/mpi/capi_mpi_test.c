/* The C API's collectives across processes (cairn_mpi_*) under mpirun (tests/mpi/run.sh): the
 * plugin found beside the program (run.sh copies both into one directory, with CAIRN_MPI_PLUGIN
 * unset), all-reduce, broadcast, all-gather, barrier, a bad root and NULL handles. Prints one line
 * per rank; exits nonzero on the first failed check. With $CAIRN_MPI_TEST_CKPT_DIR (a directory
 * every rank sees): a sharded checkpoint saved through a manager sharded over the cairn_mpi, read
 * back through its index and restored. Where Vulkan is available (lavapipe in CI), the collectives
 * also run on Vulkan tensors: staged through the host, results back on the input's device. */
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

static void sharded_checkpoint(cairn_context* ctx, cairn_mpi* mpi) {
  const char* dir = getenv("CAIRN_MPI_TEST_CKPT_DIR");
  if (!dir) return;
  const float values[5] = {1, 2, 3, 4, 5}, zeros[5] = {0};
  cairn_tensor* init = floats(ctx, values, 5);
  cairn_object* vars[2] = {NULL, NULL};
  OK(cairn_variable_create(ctx, init, NULL, &vars[0]));
  OK(cairn_variable_create(ctx, init, NULL, &vars[1]));
  const char* names[2] = {"a", "b"};
  cairn_checkpoint* ckpt = NULL;
  OK(cairn_checkpoint_create(ctx, names, vars, 2, &ckpt));
  cairn_checkpoint_manager* m = NULL;
  OK(cairn_checkpoint_manager_create(ckpt, dir, NULL, &m));
  OK(cairn_checkpoint_manager_shard(m, mpi));
  char* path = NULL;
  OK(cairn_checkpoint_manager_save(m, -1, &path));
  CHECK(cairn_checkpoint_manager_count(m) == 1 && strcmp(cairn_checkpoint_manager_latest(m), path) == 0);
  cairn_checkpoint_reader* r = NULL;
  OK(cairn_checkpoint_reader_open(path, &r));
  CHECK(cairn_checkpoint_reader_count(r) == 4); /* a, b, save_counter and the object graph */
  cairn_checkpoint_reader_free(r);
  cairn_tensor* zero = floats(ctx, zeros, 5);
  OK(cairn_variable_assign(vars[1], zero));
  cairn_restore_status* rs = NULL;
  OK(cairn_checkpoint_restore(ckpt, path, &rs));
  OK(cairn_restore_status_assert_consumed(rs));
  cairn_tensor* back = NULL;
  OK(cairn_variable_read(vars[1], &back));
  float got[5];
  OK(cairn_tensor_read(back, got, sizeof got));
  CHECK(memcmp(got, values, sizeof got) == 0);
  cairn_status* s = cairn_checkpoint_manager_shard(NULL, mpi);
  CHECK(s && cairn_status_code(s) == CAIRN_INVALID_ARGUMENT);
  cairn_status_free(s);
  cairn_tensor_free(back);
  cairn_tensor_free(zero);
  cairn_tensor_free(init);
  cairn_restore_status_free(rs);
  cairn_free(path);
  cairn_checkpoint_manager_free(m);
  cairn_checkpoint_free(ckpt);
  cairn_object_free(vars[0]);
  cairn_object_free(vars[1]);
}

/* All-reduce, broadcast and all-gather of a tensor on "vulkan": values as on the CPU, and each
 * result on the Vulkan device. */
static void vulkan_tensors(cairn_context* ctx, cairn_mpi* mpi, int n) {
  if (!cairn_vulkan_available()) {
    printf("capi_mpi_test rank %d: no Vulkan, its case skipped\n", rank);
    return;
  }
  const float mine[2] = {(float)(rank + 1), 0.5f};
  cairn_tensor *host = floats(ctx, mine, 2), *x = NULL, *sum = NULL, *from0 = NULL, *all = NULL;
  OK(cairn_tensor_copy_to_device(ctx, host, "vulkan", &x));
  CHECK(strncmp(cairn_tensor_device(x), "vulkan", 6) == 0);
  OK(cairn_mpi_all_reduce(mpi, CAIRN_REDUCE_MAX, x, &sum));
  OK(cairn_mpi_broadcast(mpi, 0, x, &from0));
  OK(cairn_mpi_all_gather(mpi, x, &all));
  CHECK(strncmp(cairn_tensor_device(sum), "vulkan", 6) == 0 && strncmp(cairn_tensor_device(from0), "vulkan", 6) == 0 &&
        strncmp(cairn_tensor_device(all), "vulkan", 6) == 0);
  float got[2], gathered[128];
  OK(cairn_tensor_read(sum, got, sizeof got));
  CHECK(got[0] == (float)n && got[1] == 0.5f);
  OK(cairn_tensor_read(from0, got, sizeof got));
  CHECK(got[0] == 1.0f && got[1] == 0.5f);
  CHECK(n <= 64);
  OK(cairn_tensor_read(all, gathered, (size_t)(2 * n) * sizeof(float)));
  for (int r = 0; r < n; ++r) CHECK(gathered[2 * r] == (float)(r + 1) && gathered[2 * r + 1] == 0.5f);
  cairn_tensor_free(host);
  cairn_tensor_free(x);
  cairn_tensor_free(sum);
  cairn_tensor_free(from0);
  cairn_tensor_free(all);
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

  vulkan_tensors(ctx, mpi, n);
  sharded_checkpoint(ctx, mpi);

  cairn_tensor_free(x);
  cairn_tensor_free(sum);
  cairn_tensor_free(from_last);
  cairn_tensor_free(all);
  cairn_mpi_free(mpi); /* the last user of Cairn's MPI_Init: finalizes MPI */
  cairn_context_free(ctx);
  printf("capi_mpi_test rank %d of %d: ok\n", rank, n);
  return 0;
}
