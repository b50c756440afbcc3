/* libcairn_mpi.so: the cairn_mpi_plugin table (plugin.h) over the system's MPI. Small on purpose:
 * each function maps Cairn's codes to MPI's and one MPI call's error to a message; the timeouts,
 * checks and 16-bit conversions live in libcairn (runtime/distribute/mpi_collective.cc). */
#include "runtime/distribute/mpi/plugin.h"

#include <limits.h>
#include <mpi/mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct cairn_mpi_comm {
  MPI_Comm comm;
};
struct cairn_mpi_request {
  MPI_Request request;
};

static int fail(char* err, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(err, CAIRN_MPI_ERROR_SIZE, format, args);
  va_end(args);
  return 1;
}

/* Fails with `call`'s name and MPI's text for `code` unless it is MPI_SUCCESS. */
static int check(int code, const char* call, char* err) {
  if (code == MPI_SUCCESS) return 0;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
  return fail(err, "%s failed: %s", call, text);
}

static int datatype(int type, MPI_Datatype* out) {
  switch (type) {
    case CAIRN_MPI_FLOAT32: *out = MPI_FLOAT; return 0;
    case CAIRN_MPI_FLOAT64: *out = MPI_DOUBLE; return 0;
    case CAIRN_MPI_INT32: *out = MPI_INT32_T; return 0;
    case CAIRN_MPI_INT64: *out = MPI_INT64_T; return 0;
    case CAIRN_MPI_BYTE: *out = MPI_BYTE; return 0;
    default: return 1;
  }
}

static int operation(int op, MPI_Op* out) {
  switch (op) {
    case CAIRN_MPI_SUM: *out = MPI_SUM; return 0;
    case CAIRN_MPI_MIN: *out = MPI_MIN; return 0;
    case CAIRN_MPI_MAX: *out = MPI_MAX; return 0;
    default: return 1;
  }
}

/* MPI counts are ints: larger ones are refused here (the caller splits them). */
static int check_count(int64_t count, char* err) {
  if (count < 0 || count > INT_MAX) return fail(err, "element count %lld is outside MPI's int range", (long long)count);
  return 0;
}

static const char* library_version(void) {
  static char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return "unknown MPI";
  return version;
}

/* A private duplicate of `comm`, with errors returned rather than fatal. */
static int duplicate(MPI_Comm comm, cairn_mpi_comm** out, char* err) {
  MPI_Comm dup;
  if (check(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup", err)) return 1;
  if (check(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", err)) return 1;
  cairn_mpi_comm* c = malloc(sizeof *c);
  if (!c) return fail(err, "out of memory");
  c->comm = dup;
  *out = c;
  return 0;
}

static int init_world(cairn_mpi_comm** comm, int* initialized_here, char* err) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) return fail(err, "MPI was already finalized in this process; it cannot start again");
  *initialized_here = 0;
  if (!initialized) {
    int provided = 0;
    if (check(MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread", err)) return 1;
    *initialized_here = 1;
  }
  return duplicate(MPI_COMM_WORLD, comm, err);
}

static int adopt(uintptr_t host_comm, cairn_mpi_comm** comm, char* err) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return fail(err, "the host's communicator needs MPI initialized (and not finalized)");
  if (host_comm == 0) return fail(err, "the host's communicator is null");
  return duplicate((MPI_Comm)host_comm, comm, err);
}

static int comm_rank(const cairn_mpi_comm* comm) {
  int r = -1;
  MPI_Comm_rank(comm->comm, &r);
  return r;
}

static int comm_size(const cairn_mpi_comm* comm) {
  int n = 0;
  MPI_Comm_size(comm->comm, &n);
  return n;
}

static int new_request(cairn_mpi_request** req, char* err) {
  *req = malloc(sizeof **req);
  return *req ? 0 : fail(err, "out of memory");
}

/* Keeps a request whose start succeeded, frees it otherwise. */
static int started(int code, const char* call, cairn_mpi_request** req, char* err) {
  if (check(code, call, err)) {
    free(*req);
    *req = NULL;
    return 1;
  }
  return 0;
}

/* Open MPI's nonblocking all-reduce (coll/libnbc) picks recursive doubling for every size unless
 * told otherwise, while its blocking MPI_Allreduce switches to a ring for large messages: measured
 * on 2 and 4 ranks over loopback TCP (bench/mpi_bench.sh, docs/benchmarks.md), Cairn's
 * MPI_Iallreduce ran at 0.63-0.89x MPI_Allreduce's bus bandwidth from 1 MB to 16 MB with the
 * default and at 1.04-1.67x with the ring. So a large all-reduce asks libnbc for the ring through
 * the MPI_T control variable, for that one call (the previous value is put back at once, so a host
 * that shares the process keeps its own choice), unless the user set the variable in the
 * environment. Other MPIs have no such variable, and nothing changes for them. */
#define RING_FROM_BYTES (64 * 1024)
#define LIBNBC_RING 1

static MPI_T_cvar_handle libnbc_algorithm;  /* NULL: not Open MPI's libnbc, or the user chose */
static int libnbc_algorithm_ready;          /* looked up (once per MPI session) */
static int mpi_t_started;                   /* MPI_T_init_thread succeeded: finalize pairs with it */

static void find_libnbc_algorithm(void) {
  if (libnbc_algorithm_ready) return;
  libnbc_algorithm_ready = 1;
  if (getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm")) return;
  int provided = 0, index = -1, count = 0;
  if (MPI_T_init_thread(MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return;
  mpi_t_started = 1;
  if (MPI_T_cvar_get_index("coll_libnbc_iallreduce_algorithm", &index) != MPI_SUCCESS ||
      MPI_T_cvar_handle_alloc(index, NULL, &libnbc_algorithm, &count) != MPI_SUCCESS || count != 1)
    libnbc_algorithm = NULL;
}

static int start_all_reduce(cairn_mpi_comm* comm, int type, int op, int64_t count, const void* input, void* output,
                            cairn_mpi_request** req, char* err) {
  MPI_Datatype t;
  MPI_Op o;
  if (datatype(type, &t) || type == CAIRN_MPI_BYTE) return fail(err, "no reduction for element type %d", type);
  if (operation(op, &o)) return fail(err, "unknown reduction %d", op);
  if (check_count(count, err) || new_request(req, err)) return 1;
  const void* send = input == output ? MPI_IN_PLACE : input;
  int size = 0, previous = 0, ring = LIBNBC_RING;
  MPI_Type_size(t, &size);
  find_libnbc_algorithm();
  const int use_ring = libnbc_algorithm && count * (int64_t)size >= RING_FROM_BYTES &&
                       MPI_T_cvar_read(libnbc_algorithm, &previous) == MPI_SUCCESS &&
                       MPI_T_cvar_write(libnbc_algorithm, &ring) == MPI_SUCCESS;
  const int code = MPI_Iallreduce(send, output, (int)count, t, o, comm->comm, &(*req)->request);
  if (use_ring) MPI_T_cvar_write(libnbc_algorithm, &previous);
  return started(code, "MPI_Iallreduce", req, err);
}

static int start_broadcast(cairn_mpi_comm* comm, int root, int type, int64_t count, void* data,
                           cairn_mpi_request** req, char* err) {
  MPI_Datatype t;
  if (datatype(type, &t)) return fail(err, "unknown element type %d", type);
  if (check_count(count, err) || new_request(req, err)) return 1;
  return started(MPI_Ibcast(data, (int)count, t, root, comm->comm, &(*req)->request), "MPI_Ibcast", req, err);
}

static int start_all_gather(cairn_mpi_comm* comm, int type, int64_t count, const void* input, void* output,
                            cairn_mpi_request** req, char* err) {
  MPI_Datatype t;
  if (datatype(type, &t)) return fail(err, "unknown element type %d", type);
  if (check_count(count, err) || new_request(req, err)) return 1;
  return started(MPI_Iallgather(input, (int)count, t, output, (int)count, t, comm->comm, &(*req)->request),
                 "MPI_Iallgather", req, err);
}

static int start_barrier(cairn_mpi_comm* comm, cairn_mpi_request** req, char* err) {
  if (new_request(req, err)) return 1;
  return started(MPI_Ibarrier(comm->comm, &(*req)->request), "MPI_Ibarrier", req, err);
}

static int test(cairn_mpi_request* req, int* done, char* err) {
  int flag = 0;
  if (check(MPI_Test(&req->request, &flag, MPI_STATUS_IGNORE), "MPI_Test", err)) return 1;
  *done = flag;
  if (flag) free(req);
  return 0;
}

static int free_comm(cairn_mpi_comm* comm, char* err) {
  int code = MPI_Comm_free(&comm->comm);
  free(comm);
  return check(code, "MPI_Comm_free", err);
}

static int finalize(char* err) {
  if (libnbc_algorithm) MPI_T_cvar_handle_free(&libnbc_algorithm);
  libnbc_algorithm = NULL;
  if (mpi_t_started) MPI_T_finalize();
  mpi_t_started = libnbc_algorithm_ready = 0;
  return check(MPI_Finalize(), "MPI_Finalize", err);
}

__attribute__((visibility("default"))) const cairn_mpi_plugin* cairn_mpi_plugin_table(void) {
  static const cairn_mpi_plugin table = {
      CAIRN_MPI_PLUGIN_VERSION, sizeof(cairn_mpi_plugin), library_version, init_world, adopt, comm_rank, comm_size,
      start_all_reduce, start_broadcast, start_all_gather, start_barrier, test, free_comm, finalize,
  };
  return &table;
}
