/*
 * cairn.h: the C API of Cairn, an embeddable machine-learning runtime.
 *
 * This header is Cairn's only ABI. It is C99 and holds no C++ types.
 *
 * Conventions (see docs/capi.md for the longer version):
 *  - Errors. A fallible function returns `cairn_status *`, and NULL means success. A non-NULL
 *    status carries a cairn_code and a message that names the function or op and what was wrong.
 *    The caller frees it with cairn_status_free(). There is no thread-local "last error".
 *  - Ownership. Out-parameters come last. What they return is a new reference the caller frees
 *    with the matching cairn_X_free(). Borrowed returns say what owns them and how long they live.
 *    Every cairn_X_free(NULL) does nothing. Handles may be freed in any order: a tensor keeps its
 *    device memory alive after its context is freed.
 *  - Options structs start with `uint32_t struct_size` and have a CAIRN_X_OPTIONS_INIT macro that
 *    fills in the documented defaults. Passing NULL means all defaults.
 *  - Enum values are pinned and never reordered.
 *  - Threads. A cairn_context may be used from several threads at once. A cairn_tensor is
 *    immutable and may be read from any thread. A cairn_status belongs to whoever received it.
 *
 * Tags on each declaration: CONSTRUCTOR makes a handle, DESTRUCTOR frees one, METHOD does the rest.
 */
#ifndef CAIRN_CAIRN_H_
#define CAIRN_CAIRN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CAIRN_API __attribute__((visibility("default")))
#define CAIRN_MUST_USE __attribute__((warn_unused_result))
#else
#define CAIRN_API
#define CAIRN_MUST_USE
#endif

/* ---------------------------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------------------------- */

/* The ABI version this header describes. Bump on any incompatible change. */
#define CAIRN_ABI_VERSION 1u

/* METHOD. The ABI version of the loaded library; equals CAIRN_ABI_VERSION for a matching header.
 * Bindings compare the two at load time and refuse a mismatch. */
CAIRN_API uint32_t cairn_abi_version(void);

/* METHOD. The library's semantic version, e.g. "0.1.0". Static storage; never freed. */
CAIRN_API const char *cairn_version(void);

/* ---------------------------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------------------------- */

/* Status codes: TensorFlow's TF_Code values (the gRPC canonical codes). */
typedef enum cairn_code {
  CAIRN_OK = 0,
  CAIRN_CANCELLED = 1,
  CAIRN_UNKNOWN = 2,
  CAIRN_INVALID_ARGUMENT = 3,
  CAIRN_DEADLINE_EXCEEDED = 4,
  CAIRN_NOT_FOUND = 5,
  CAIRN_ALREADY_EXISTS = 6,
  CAIRN_PERMISSION_DENIED = 7,
  CAIRN_RESOURCE_EXHAUSTED = 8,
  CAIRN_FAILED_PRECONDITION = 9,
  CAIRN_ABORTED = 10,
  CAIRN_OUT_OF_RANGE = 11,
  CAIRN_UNIMPLEMENTED = 12,
  CAIRN_INTERNAL = 13,
  CAIRN_UNAVAILABLE = 14,
  CAIRN_DATA_LOSS = 15,
  CAIRN_CODE_FORCE32 = 0x7fffffff
} cairn_code;

/* An error: a code and a message. NULL means success. */
typedef struct cairn_status cairn_status;

/* METHOD. The status's code; CAIRN_OK for NULL. */
CAIRN_API cairn_code cairn_status_code(const cairn_status *s);

/* METHOD. The status's message, e.g. "Add: incompatible shapes [2,3] and [4]". Borrowed from `s`
 * and valid until it is freed; "" for NULL. */
CAIRN_API const char *cairn_status_message(const cairn_status *s);

/* DESTRUCTOR. Frees a status. NULL is fine. */
CAIRN_API void cairn_status_free(cairn_status *s);

/* METHOD. Frees a string or array the library allocated and handed over (documented per function).
 * NULL is fine. */
CAIRN_API void cairn_free(void *p);

/* ---------------------------------------------------------------------------------------------
 * Element types
 * ------------------------------------------------------------------------------------------- */

/* Element types; values are TensorFlow's DataType numbers. Bool is stored in one byte. */
typedef enum cairn_dtype {
  CAIRN_INVALID_DTYPE = 0,
  CAIRN_FLOAT32 = 1,
  CAIRN_FLOAT64 = 2,
  CAIRN_INT32 = 3,
  CAIRN_UINT8 = 4,
  CAIRN_INT16 = 5,
  CAIRN_INT8 = 6,
  CAIRN_STRING = 7,
  CAIRN_COMPLEX64 = 8,
  CAIRN_INT64 = 9,
  CAIRN_BOOL = 10,
  CAIRN_BFLOAT16 = 14,
  CAIRN_FLOAT16 = 19,
  CAIRN_DTYPE_FORCE32 = 0x7fffffff
} cairn_dtype;

/* METHOD. Bytes per element; 0 for CAIRN_STRING and unknown values. */
CAIRN_API size_t cairn_dtype_size(cairn_dtype dtype);

/* METHOD. "float32", "int64", ...; "invalid" for unknown values. Static storage. */
CAIRN_API const char *cairn_dtype_name(cairn_dtype dtype);

/* ---------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------- */

/* A context owns devices, the default device, allocator hooks, the thread pool, the log callback
 * and the RNG seed. Thread-safe: share one between threads freely. */
typedef struct cairn_context cairn_context;

typedef enum cairn_log_level {
  CAIRN_LOG_DEBUG = 0,
  CAIRN_LOG_INFO = 1,
  CAIRN_LOG_WARNING = 2,
  CAIRN_LOG_ERROR = 3,
  CAIRN_LOG_LEVEL_FORCE32 = 0x7fffffff
} cairn_log_level;

/* Receives log messages. `message` is borrowed for the duration of the call. Called from whichever
 * thread logs; it may call back into the C API. */
typedef void (*cairn_log_fn)(void *user_data, cairn_log_level level, const char *message);

/* Host allocator hooks. `allocate` returns `size` bytes aligned to `alignment` (a power of two,
 * at least 64) or NULL; `deallocate` gets the pointer and the size that was asked for. Both may be
 * called from any thread, also after cairn_context_free while tensors are still alive. */
typedef struct cairn_allocator {
  void *(*allocate)(void *user_data, size_t size, size_t alignment);
  void (*deallocate)(void *user_data, void *ptr, size_t size);
  void *user_data;
} cairn_allocator;

typedef struct cairn_context_options {
  uint32_t struct_size;      /* sizeof(cairn_context_options) */
  const char *device;        /* default device: NULL or "cpu" (default), "vulkan", "vulkan:N" */
  int32_t num_threads;       /* intra-op threads including the caller; 0 (default) = all cores */
  uint64_t seed;             /* base seed of random ops; default 0 */
  cairn_log_fn log_fn;       /* NULL (default): warnings and errors go to stderr */
  void *log_user_data;       /* passed to log_fn; default NULL */
  cairn_log_level log_level; /* least severe level delivered; default CAIRN_LOG_WARNING */
  const cairn_allocator *allocator; /* NULL (default): aligned_alloc/free. Copied at creation. */
} cairn_context_options;

#define CAIRN_CONTEXT_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_context_options), NULL, 0, 0, NULL, NULL, CAIRN_LOG_WARNING, NULL }

/* CONSTRUCTOR. Creates a context. `opts` may be NULL (all defaults).
 * @param out  receives the new context; free it with cairn_context_free().
 * Errors: INVALID_ARGUMENT for a bad struct_size or incomplete allocator, NOT_FOUND for an unknown
 * device name, UNAVAILABLE when the device's backend or driver is missing. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_create(const cairn_context_options *opts, cairn_context **out);

/* DESTRUCTOR. Drops the caller's reference. Tensors made from the context stay valid. NULL is fine. */
CAIRN_API void cairn_context_free(cairn_context *ctx);

/* METHOD. The name of the context's default device, e.g. "cpu". Borrowed from `ctx`. */
CAIRN_API const char *cairn_context_device(const cairn_context *ctx);

/* ---------------------------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------------------------- */

/* An immutable value: dtype, shape (rank <= 8) and a device buffer. Safe to read from any thread. */
typedef struct cairn_tensor cairn_tensor;

/* CONSTRUCTOR. Creates a tensor on the context's default device by copying `data` (row-major).
 * @param shape  `rank` dimensions, each >= 0; may be NULL when rank is 0 (a scalar).
 * @param data   `nbytes` bytes, which must equal cairn_dtype_size(dtype) * element count; may be
 *               NULL only when nbytes is 0. Borrowed for the call.
 * @param out    receives the new tensor; free it with cairn_tensor_free().
 * Errors: INVALID_ARGUMENT for a bad dtype, rank, dimension or nbytes (the message gives both
 * sizes). CAIRN_STRING tensors cannot be created this way. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_create(cairn_context *ctx, cairn_dtype dtype, const int64_t *shape,
                                                           size_t rank, const void *data, size_t nbytes,
                                                           cairn_tensor **out);

/* METHOD. The tensor's dtype; CAIRN_INVALID_DTYPE for NULL. */
CAIRN_API cairn_dtype cairn_tensor_dtype(const cairn_tensor *t);

/* METHOD. The tensor's rank; 0 for NULL. */
CAIRN_API size_t cairn_tensor_rank(const cairn_tensor *t);

/* METHOD. The size of dimension `axis`; -1 for NULL or an axis >= rank. */
CAIRN_API int64_t cairn_tensor_dim(const cairn_tensor *t, size_t axis);

/* METHOD. The number of elements (1 for a scalar); 0 for NULL. */
CAIRN_API int64_t cairn_tensor_num_elements(const cairn_tensor *t);

/* METHOD. The size of the tensor's data in bytes; 0 for NULL. */
CAIRN_API size_t cairn_tensor_nbytes(const cairn_tensor *t);

/* METHOD. The name of the device holding the tensor, e.g. "cpu". Borrowed: lives as long as the
 * tensor. NULL for NULL. */
CAIRN_API const char *cairn_tensor_device(const cairn_tensor *t);

/* METHOD. Copies the tensor's data to host memory, waiting for the device when needed.
 * @param dst     `nbytes` writable bytes.
 * @param nbytes  must equal cairn_tensor_nbytes(t).
 * Errors: INVALID_ARGUMENT for NULL arguments or a size mismatch. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_read(const cairn_tensor *t, void *dst, size_t nbytes);

/* CONSTRUCTOR. A tensor with the same value on `device` ("cpu", "vulkan", "vulkan:N").
 * Copying to the device the tensor is already on shares its buffer (tensors are immutable).
 * @param out  receives the new tensor; free it with cairn_tensor_free().
 * Errors: NOT_FOUND for an unknown device name, UNAVAILABLE when its backend is missing. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_copy_to_device(cairn_context *ctx, const cairn_tensor *t,
                                                                   const char *device, cairn_tensor **out);

/* DESTRUCTOR. Frees a tensor handle; the data goes when no other tensor shares it. NULL is fine. */
CAIRN_API void cairn_tensor_free(cairn_tensor *t);

/* ---------------------------------------------------------------------------------------------
 * Eager ops
 * ------------------------------------------------------------------------------------------- */

typedef enum cairn_attr_kind {
  CAIRN_ATTR_INT = 1,
  CAIRN_ATTR_FLOAT = 2,
  CAIRN_ATTR_BOOL = 3,
  CAIRN_ATTR_INTS = 4,
  CAIRN_ATTR_STRING = 5,
  CAIRN_ATTR_DTYPE = 6,
  CAIRN_ATTR_FLOATS = 7,
  CAIRN_ATTR_KIND_FORCE32 = 0x7fffffff
} cairn_attr_kind;

/* One attribute of an op call. Set `name`, `kind` and the field for that kind; the others are
 * ignored. A bool goes in `i` (0 or 1). Arrays and strings are borrowed for the call. */
typedef struct cairn_attr {
  const char *name;
  cairn_attr_kind kind;
  int64_t i;             /* CAIRN_ATTR_INT, CAIRN_ATTR_BOOL */
  double f;              /* CAIRN_ATTR_FLOAT */
  const int64_t *ints;   /* CAIRN_ATTR_INTS */
  size_t n_ints;
  const char *s;         /* CAIRN_ATTR_STRING (NUL-terminated) */
  cairn_dtype dtype;     /* CAIRN_ATTR_DTYPE */
  const double *floats;  /* CAIRN_ATTR_FLOATS */
  size_t n_floats;
} cairn_attr;

/* METHOD. Runs op `op` (TensorFlow raw-op names: "Add", "MatMul", "Softmax", ...) eagerly.
 * The op runs on the device of its inputs, which must all share one; an op without inputs runs
 * on the context's default device.
 * @param inputs     `n_inputs` tensors, borrowed.
 * @param attrs      `n_attrs` attributes, borrowed; unset attributes take their defaults.
 * @param outputs    room for exactly the op's output count; each receives a new tensor the caller
 *                   frees. On error nothing is written.
 * Errors: NOT_FOUND for an unknown op; INVALID_ARGUMENT for a wrong input or output count, a wrong
 * dtype, incompatible shapes, an unknown, missing or mistyped attribute, an out-of-range axis;
 * UNIMPLEMENTED when the device has no kernel for the dtype. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_run(cairn_context *ctx, const char *op, cairn_tensor *const *inputs,
                                                    size_t n_inputs, const cairn_attr *attrs, size_t n_attrs,
                                                    cairn_tensor **outputs, size_t n_outputs);

/* ---------------------------------------------------------------------------------------------
 * The op registry (for binding generators and tools)
 * ------------------------------------------------------------------------------------------- */

/* METHOD. How many ops are registered. */
CAIRN_API size_t cairn_op_count(void);

/* METHOD. The name of op `i` in name order; NULL when i >= cairn_op_count(). Static storage. */
CAIRN_API const char *cairn_op_name(size_t i);

/* METHOD. The whole registry as JSON: an array of {"name", "summary", "inputs": [{"name",
 * "type_attr" | "dtype", "variadic"?, "number_attr"?}], "outputs": [...], "attrs": [{"name",
 * "kind" ("INT", "FLOAT", "BOOL", "INTS", "STRING", "DTYPE", "FLOATS"), "default"?, "inferred"?,
 * "allowed_dtypes"?, "allowed_values"?}]}, sorted by name. An attribute without "default" is
 * required; an "inferred" DTYPE attribute is taken from the inputs.
 * @param out  receives a NUL-terminated string; free it with cairn_free(). */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_registry_json(char **out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAIRN_CAIRN_H_ */
