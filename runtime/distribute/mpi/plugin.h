/* The table of functions libcairn_mpi.so gives libcairn: the only link between Cairn and MPI.
 * libcairn never links libmpi (an embedder's process may carry its own MPI, and the library must
 * load where there is no MPI); it dlopens the plugin on first use (runtime/distribute/mpi_loader.cc)
 * and calls cairn_mpi_plugin_table(), the plugin's one exported symbol. C, so the table's layout is
 * fixed by the platform's C ABI. Grow it only at the end, raising CAIRN_MPI_PLUGIN_VERSION; the
 * loader refuses a table whose version differs or whose size is smaller than its own.
 *
 * Every function returns 0 on success; on failure nonzero, with a message in `err` (always
 * terminated, at most CAIRN_MPI_ERROR_SIZE bytes with the terminator). Collectives are nonblocking:
 * start_* returns a request that test() polls; the caller owns the buffers until test() reports it
 * done. */
#ifndef CAIRN_RUNTIME_DISTRIBUTE_MPI_PLUGIN_H_
#define CAIRN_RUNTIME_DISTRIBUTE_MPI_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN_MPI_PLUGIN_VERSION 1
#define CAIRN_MPI_PLUGIN_SYMBOL "cairn_mpi_plugin_table"
#define CAIRN_MPI_ERROR_SIZE 512

/* Element types the plugin maps to MPI datatypes (16-bit floats are reduced in float32 by the
 * caller, so they never reach the plugin). Bytes: for copies (broadcast, all-gather). */
enum { CAIRN_MPI_FLOAT32 = 1, CAIRN_MPI_FLOAT64 = 2, CAIRN_MPI_INT32 = 3, CAIRN_MPI_INT64 = 4, CAIRN_MPI_BYTE = 5 };
enum { CAIRN_MPI_SUM = 1, CAIRN_MPI_MIN = 2, CAIRN_MPI_MAX = 3 };

typedef struct cairn_mpi_comm cairn_mpi_comm;       /* a communicator the plugin uses */
typedef struct cairn_mpi_request cairn_mpi_request; /* one started collective */

typedef struct cairn_mpi_plugin {
  uint32_t version; /* CAIRN_MPI_PLUGIN_VERSION */
  uint32_t size;    /* sizeof(cairn_mpi_plugin) as the plugin was built */
  /* The MPI library's own version string (MPI_Get_library_version). */
  const char* (*library_version)(void);
  /* Initializes MPI (MPI_Init_thread, asking for MPI_THREAD_SERIALIZED) unless it already is, and
   * returns a private duplicate of MPI_COMM_WORLD. *initialized_here says whether this call ran
   * MPI_Init_thread (then finalize() ends MPI). */
  int (*init_world)(cairn_mpi_comm** comm, int* initialized_here, char* err);
  /* Adopts a host's communicator: `host_comm` is its MPI_Comm stored in a pointer-sized value
   * (Open MPI's MPI_Comm is a pointer). MPI must be initialized by the host; the plugin duplicates
   * the communicator, so Cairn's traffic never matches the host's. */
  int (*adopt)(uintptr_t host_comm, cairn_mpi_comm** comm, char* err);
  int (*comm_rank)(const cairn_mpi_comm* comm);
  int (*comm_size)(const cairn_mpi_comm* comm);
  /* Nonblocking collectives on `comm` (counts in elements of `type`). all_reduce: `input` may be
   * equal to `output` (in place). all_gather: `output` holds count * size elements. */
  int (*start_all_reduce)(cairn_mpi_comm* comm, int type, int op, int64_t count, const void* input, void* output,
                          cairn_mpi_request** req, char* err);
  int (*start_broadcast)(cairn_mpi_comm* comm, int root, int type, int64_t count, void* data,
                         cairn_mpi_request** req, char* err);
  int (*start_all_gather)(cairn_mpi_comm* comm, int type, int64_t count, const void* input, void* output,
                          cairn_mpi_request** req, char* err);
  int (*start_barrier)(cairn_mpi_comm* comm, cairn_mpi_request** req, char* err);
  /* Progresses `req`: *done is 1 once it completed (then the request is freed and must not be used
   * again), 0 while it runs. */
  int (*test)(cairn_mpi_request* req, int* done, char* err);
  /* Frees a communicator from init_world or adopt. Not for one with a collective that never
   * completed (freeing it would wait for that call): the caller leaves such a one. */
  int (*free_comm)(cairn_mpi_comm* comm, char* err);
  /* Ends MPI (MPI_Finalize); only for the caller whose init_world initialized it. */
  int (*finalize)(char* err);
} cairn_mpi_plugin;

/* The plugin's one exported symbol. */
typedef const cairn_mpi_plugin* (*cairn_mpi_plugin_table_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_RUNTIME_DISTRIBUTE_MPI_PLUGIN_H_ */
