/**
 * @file cairn.h
 * @brief The C API of Cairn, an embeddable machine-learning runtime.
 *
 * This header is Cairn's only ABI. It is C99 and holds no C++ types. The library is
 * libcairn.so.1 (SONAME), and every symbol carries the version node CAIRN_1.
 *
 * ABI 1 is a promise. A program built against this header runs against every later 1.x library:
 * functions, enum values, struct layouts and semantics documented here never change
 * incompatibly; later 1.x releases only add functions, enum values and options-struct fields
 * (at the end of a struct). Each declaration says since which version it exists ("Since 1.0").
 * An ABI checker (tools/abi_check, abidiff) guards this against a committed baseline.
 *
 * Experimental. Declarations inside `#if defined(CAIRN_EXPERIMENTAL)` blocks (graph export and
 * load, control flow, the TensorArray) may change in any release; define CAIRN_EXPERIMENTAL
 * before including this header to use them. Fields documented as "experimental" keep their
 * place in their struct, but their meaning may change.
 *
 * Conventions (docs/capi.md has the longer version):
 *  - Errors. A fallible function returns `cairn_status *`, and NULL means success. A non-NULL
 *    status carries a cairn_code and a message that names the function or op and what was wrong:
 *    "cairn_X: ..." from cairn_X, and from the calls that run something the caller names, that
 *    thing: the op from cairn_op_run ("MatMul: ..."), the function from cairn_function_call
 *    ("function 'f': ...") and the failing branch or op from cairn_cond and cairn_while_loop
 *    ("function 'cond's else branch': ..."). The caller frees it with cairn_status_free().
 *    There is no thread-local "last error".
 *  - Ownership. Out-parameters come last. What they return is a new reference the caller frees
 *    with the matching cairn_X_free(). Borrowed returns say what owns them and how long they live.
 *    Every cairn_X_free(NULL) does nothing. Handles may be freed in any order: a tensor keeps its
 *    device memory alive after its context is freed.
 *  - Booleans are cairn_bool (int32_t): CAIRN_FALSE (0) or CAIRN_TRUE (1). Parameters and
 *    fields refuse other values where the documentation says so.
 *  - Options structs start with `uint32_t struct_size`, the size of the struct in the header the
 *    caller was compiled with. Fill one with its CAIRN_X_INIT macro or, from languages that
 *    cannot expand C macros, its cairn_X_init(opts, sizeof *opts) function; both give every
 *    field its documented default. Passing NULL means all defaults. The one struct_size rule:
 *    a library accepts the size of every released version of a struct, up to its own, and reads
 *    only the fields that size covers (later fields keep their defaults), so binaries built
 *    against an older header keep working. Any other size, including one from a header newer
 *    than the library, is INVALID_ARGUMENT naming the function and the struct. Structs the
 *    library fills in (cairn_vulkan_device_info) follow the same rule: it writes only the fields
 *    that struct_size covers. Arrays of structs that may grow (cairn_tensor_spec) take their
 *    stride from the struct_size of their first element.
 *  - Enum values are pinned and never reordered; each enum ends with a _FORCE32 sentinel.
 *
 * Threads, per handle kind:
 *  - cairn_context: may be used from several threads at once.
 *  - cairn_tensor: immutable; read and share from any thread. Free a handle once, when no other
 *    thread uses that handle.
 *  - cairn_object (trackables, modules, variables, lists, dicts, optimizers, layers, metrics):
 *    may be read and written from several threads at once (writes to one object are serialized).
 *  - cairn_object_array: immutable; read from any thread.
 *  - cairn_checkpoint, cairn_checkpoint_manager, cairn_restore_status: one thread at a time.
 *  - cairn_checkpoint_reader: several threads at once (reads are positional).
 *  - cairn_function: may be called from several threads at once; a new signature is traced once
 *    while other callers of that signature wait.
 *  - cairn_tape: records only the ops of the thread that created it, as tf.GradientTape does,
 *    because ops on other threads (a data loader, another request) must not leak into a tape.
 *    Use it, and free it, on that thread; a gradient call from another thread is
 *    FAILED_PRECONDITION. Bindings whose threads can move (Go) pin the thread while a tape lives.
 *  - cairn_op_attrs: one thread at a time; a finished set may be read by several op runs at once.
 *  - cairn_status: belongs to whoever received it.
 *
 * Tags on each declaration: CONSTRUCTOR makes a handle, DESTRUCTOR frees one, METHOD does the
 * rest, FUNCTION computes a value without a handle of its own.
 */
#ifndef CAIRN_CAIRN_H_
#define CAIRN_CAIRN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
/** Marks a function the library exports. */
#define CAIRN_API __attribute__((visibility("default")))
/** Marks a function whose status must not be ignored (it would leak). */
#define CAIRN_MUST_USE __attribute__((warn_unused_result))
#else
/** Marks a function the library exports. */
#define CAIRN_API
/** Marks a function whose status must not be ignored (dropping it leaks). */
#define CAIRN_MUST_USE
#endif

/* ---------------------------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------------------------- */

/** The ABI version this header describes (the 1 of libcairn.so.1). Since 1.0. */
#define CAIRN_ABI_VERSION 1u
/** The library version this header comes with: major (the ABI), minor (additions), patch. Since 1.0. */
#define CAIRN_VERSION_MAJOR 1
/** The minor version: releases that only add. Since 1.0. */
#define CAIRN_VERSION_MINOR 3
/** The patch version: releases that only fix. Since 1.0. */
#define CAIRN_VERSION_PATCH 0

/** The boolean type of every field, parameter and result: CAIRN_FALSE or CAIRN_TRUE. Since 1.0. */
typedef int32_t cairn_bool;
/** False, as a cairn_bool. Since 1.0. */
#define CAIRN_FALSE 0
/** True, as a cairn_bool. Since 1.0. */
#define CAIRN_TRUE 1

/** METHOD. The ABI version of the loaded library; equals CAIRN_ABI_VERSION for a matching header.
 * Bindings compare the two at load time and refuse a mismatch. Since 1.0. */
CAIRN_API uint32_t cairn_abi_version(void);

/** METHOD. The library's semantic version, e.g. "1.0.0". Static storage; never freed. Since 1.0. */
CAIRN_API const char *cairn_version(void);

/* ---------------------------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------------------------- */

/** Status codes: TensorFlow's TF_Code values (the gRPC canonical codes). Since 1.0. */
typedef enum cairn_code {
  CAIRN_OK = 0, /**< success (never in a status: success is NULL) */
  CAIRN_CANCELLED = 1, /**< the operation was cancelled */
  CAIRN_UNKNOWN = 2, /**< an error of no other kind */
  CAIRN_INVALID_ARGUMENT = 3, /**< the caller passed a bad argument */
  CAIRN_DEADLINE_EXCEEDED = 4, /**< a wait ran out of time */
  CAIRN_NOT_FOUND = 5, /**< a named thing (file, op, key, device) does not exist */
  CAIRN_ALREADY_EXISTS = 6, /**< the thing to create exists already */
  CAIRN_PERMISSION_DENIED = 7, /**< the caller may not do this */
  CAIRN_RESOURCE_EXHAUSTED = 8, /**< out of memory or over a limit */
  CAIRN_FAILED_PRECONDITION = 9, /**< the state does not allow this call now */
  CAIRN_ABORTED = 10, /**< the operation was aborted */
  CAIRN_OUT_OF_RANGE = 11, /**< an index or value past the valid range */
  CAIRN_UNIMPLEMENTED = 12, /**< not supported (for example no kernel for a dtype) */
  CAIRN_INTERNAL = 13, /**< a broken invariant inside the library */
  CAIRN_UNAVAILABLE = 14, /**< a backend or driver is missing */
  CAIRN_DATA_LOSS = 15, /**< a damaged or truncated file */
  CAIRN_CODE_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_code;

/** An error: a code and a message. NULL means success. Since 1.0. */
typedef struct cairn_status cairn_status;

/** METHOD. The status's code; CAIRN_OK for NULL. Since 1.0. */
CAIRN_API cairn_code cairn_status_code(const cairn_status *s);

/** METHOD. The status's message, e.g. "Add: incompatible shapes [2,3] and [4]". Borrowed from `s`
 * and valid until it is freed; "" for NULL. Since 1.0. */
CAIRN_API const char *cairn_status_message(const cairn_status *s);

/** DESTRUCTOR. Frees a status. NULL is fine. When memory runs out while the library reports an
 * error, any function may return one static RESOURCE_EXHAUSTED status ("out of memory"); it is
 * freed like any other (cairn_status_free ignores it), so callers need no special case. Since 1.0. */
CAIRN_API void cairn_status_free(cairn_status *s);

/** CONSTRUCTOR. A status with `code` and a copy of `message` (NULL means ""), for callbacks that
 * report their own errors (cairn_function_fn). CAIRN_OK gives NULL (success). An unknown code
 * becomes CAIRN_UNKNOWN. Returns NULL for CAIRN_OK only. Since 1.0. */
CAIRN_API cairn_status *cairn_status_create(cairn_code code, const char *message);

/** METHOD. Frees a string or array the library allocated and handed over (documented per function).
 * NULL is fine. Since 1.0. */
CAIRN_API void cairn_free(void *p);

/* ---------------------------------------------------------------------------------------------
 * Element types
 * ------------------------------------------------------------------------------------------- */

/** Element types; values are TensorFlow's DataType numbers. Bool is stored in one byte. Since 1.0. */
typedef enum cairn_dtype {
  CAIRN_INVALID_DTYPE = 0, /**< no dtype (what getters return for NULL) */
  CAIRN_FLOAT32 = 1, /**< 32-bit float */
  CAIRN_FLOAT64 = 2, /**< 64-bit float */
  CAIRN_INT32 = 3, /**< 32-bit signed integer */
  CAIRN_UINT8 = 4, /**< 8-bit unsigned integer */
  CAIRN_INT16 = 5, /**< 16-bit signed integer */
  CAIRN_INT8 = 6, /**< 8-bit signed integer */
  CAIRN_STRING = 7, /**< byte strings (checkpoint entries only) */
  CAIRN_COMPLEX64 = 8, /**< two 32-bit floats (real, imaginary) */
  CAIRN_INT64 = 9, /**< 64-bit signed integer */
  CAIRN_BOOL = 10, /**< one byte, 0 or 1 */
  CAIRN_BFLOAT16 = 14, /**< bfloat16 (8-bit exponent) */
  CAIRN_FLOAT16 = 19, /**< IEEE half precision */
  CAIRN_DTYPE_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_dtype;

/** METHOD. Bytes per element; 0 for CAIRN_STRING and unknown values. Since 1.0. */
CAIRN_API size_t cairn_dtype_size(cairn_dtype dtype);

/** METHOD. "float32", "int64", ...; "invalid" for unknown values. Static storage. Since 1.0. */
CAIRN_API const char *cairn_dtype_name(cairn_dtype dtype);

/* ---------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------- */

/** A context owns devices, the default device, allocator hooks, the thread pool, the log callback
 * and the RNG seed. Thread-safe: share one between threads freely. Since 1.0. */
typedef struct cairn_context cairn_context;

/** Severity of a log message; a context delivers those at or above its log_level. Since 1.0. */
typedef enum cairn_log_level {
  CAIRN_LOG_DEBUG = 0, /**< details for debugging */
  CAIRN_LOG_INFO = 1, /**< progress and facts */
  CAIRN_LOG_WARNING = 2, /**< something is likely wrong */
  CAIRN_LOG_ERROR = 3, /**< an operation failed */
  CAIRN_LOG_LEVEL_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_log_level;

/** Receives log messages. `message` is borrowed for the duration of the call. Called from whichever
 * thread logs; it may call back into the C API. Objects and checkpoints keep their context alive,
 * so calls can come after cairn_context_free; `log_release` in the options says when they stop. Since 1.0. */
typedef void (*cairn_log_fn)(void *user_data, cairn_log_level level, const char *message);

/** Host allocator hooks. `allocate` returns `size` bytes aligned to `alignment` (a power of two,
 * at least 64) or NULL; `deallocate` gets the pointer and the size that was asked for. Both may be
 * called from any thread, also after cairn_context_free while tensors are still alive. Since 1.0. */
typedef struct cairn_allocator {
  void *(*allocate)(void *user_data, size_t size, size_t alignment); /**< returns memory or NULL */
  void (*deallocate)(void *user_data, void *ptr, size_t size);      /**< takes back what allocate gave */
  void *user_data;                                                  /**< passed to every hook */
  /** Called once with user_data after the last block went back through `deallocate` (the context
   * and every tensor made from it are gone); no hook is called after it. NULL: nothing to release. */
  void (*release)(void *user_data);
} cairn_allocator;

/** Options for cairn_context_create; start from CAIRN_CONTEXT_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_context_options {
  uint32_t struct_size;      /**< sizeof(cairn_context_options) */
  const char *device;        /**< default device: NULL or "cpu" (default), "vulkan", "vulkan:N" */
  int32_t num_threads;       /**< intra-op threads including the caller; 0 (default) = all cores */
  uint64_t seed;             /**< base seed of random ops; default 0 */
  cairn_log_fn log_fn;       /**< NULL (default): warnings and errors go to stderr */
  void *log_user_data;       /**< passed to log_fn; default NULL */
  cairn_log_level log_level; /**< least severe level delivered; default CAIRN_LOG_WARNING */
  /** NULL (default): the system allocator, and freed blocks of 4 KiB or more are kept for reuse
   * (up to 128 MiB per context, returned when the context is destroyed). Given hooks see every
   * allocation. Copied at creation. */
  const cairn_allocator *allocator;
  /** Called once with log_user_data when the context is destroyed (after cairn_context_free and the
   * last object or checkpoint made from it); log_fn is never called after it. Default NULL. */
  void (*log_release)(void *log_user_data);
} cairn_context_options;

/** The defaults of cairn_context_options (see cairn_context_options_init). Since 1.0. */
#define CAIRN_CONTEXT_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_context_options), NULL, 0, 0, NULL, NULL, CAIRN_LOG_WARNING, NULL, NULL }

/** CONSTRUCTOR. Creates a context. `opts` may be NULL (all defaults). When creation fails, neither
 * log_release nor the allocator's release is called: the caller still owns their user_data.
 * @param out  receives the new context; free it with cairn_context_free().
 * Errors: INVALID_ARGUMENT for a bad struct_size or incomplete allocator, NOT_FOUND for an unknown
 * device name, UNAVAILABLE when the device's backend or driver is missing. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_create(const cairn_context_options *opts, cairn_context **out);

/** DESTRUCTOR. Drops the caller's reference. Tensors made from the context stay valid. NULL is fine. Since 1.0. */
CAIRN_API void cairn_context_free(cairn_context *ctx);

/** METHOD. The name of the context's default device, e.g. "cpu". Borrowed from `ctx`. Since 1.0. */
CAIRN_API const char *cairn_context_device(const cairn_context *ctx);

/* ---------------------------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------------------------- */

/** An immutable value: dtype, shape (rank <= 8) and a device buffer. Safe to read from any thread. Since 1.0. */
typedef struct cairn_tensor cairn_tensor;

/** CONSTRUCTOR. Creates a tensor on the context's default device (inside a device scope, on the
 * scope's device: see "Device placement") by copying `data` (row-major).
 * @param shape  `rank` dimensions, each >= 0; may be NULL when rank is 0 (a scalar).
 * @param data   `nbytes` bytes, which must equal cairn_dtype_size(dtype) * element count; may be
 *               NULL only when nbytes is 0. Borrowed for the call.
 * @param out    receives the new tensor; free it with cairn_tensor_free().
 * Errors: INVALID_ARGUMENT for a bad dtype, rank, dimension or nbytes (the message gives both
 * sizes). CAIRN_STRING tensors cannot be created this way. For CAIRN_BOOL, one byte per element;
 * any nonzero byte is stored as 1, so reads return only 0 and 1. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_create(cairn_context *ctx, cairn_dtype dtype, const int64_t *shape,
                                                           size_t rank, const void *data, size_t nbytes,
                                                           cairn_tensor **out);

/** METHOD. The tensor's dtype; CAIRN_INVALID_DTYPE for NULL. Since 1.0. */
CAIRN_API cairn_dtype cairn_tensor_dtype(const cairn_tensor *t);

/** METHOD. The tensor's rank; 0 for NULL. Since 1.0. */
CAIRN_API size_t cairn_tensor_rank(const cairn_tensor *t);

/** METHOD. The size of dimension `axis`; -1 for NULL or an axis >= rank. Since 1.0. */
CAIRN_API int64_t cairn_tensor_dim(const cairn_tensor *t, size_t axis);

/** METHOD. The number of elements (1 for a scalar); 0 for NULL. Since 1.0. */
CAIRN_API int64_t cairn_tensor_num_elements(const cairn_tensor *t);

/** METHOD. The size of the tensor's data in bytes; 0 for NULL. Since 1.0. */
CAIRN_API size_t cairn_tensor_nbytes(const cairn_tensor *t);

/** METHOD. The name of the device holding the tensor, e.g. "cpu". Borrowed: lives as long as the
 * tensor. NULL for NULL. Since 1.0. */
CAIRN_API const char *cairn_tensor_device(const cairn_tensor *t);

/** METHOD. Copies the tensor's data to host memory, waiting for the device when needed.
 * @param dst     `nbytes` writable bytes.
 * @param nbytes  must equal cairn_tensor_nbytes(t).
 * Errors: INVALID_ARGUMENT for NULL arguments or a size mismatch. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_read(const cairn_tensor *t, void *dst, size_t nbytes);

/** CONSTRUCTOR. A tensor with the same value on `device` ("cpu", "vulkan", "vulkan:N").
 * Copying to the device the tensor is already on shares its buffer (tensors are immutable).
 * @param out  receives the new tensor; free it with cairn_tensor_free().
 * Errors: NOT_FOUND for an unknown device name, UNAVAILABLE when its backend is missing. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_copy_to_device(cairn_context *ctx, const cairn_tensor *t,
                                                                   const char *device, cairn_tensor **out);

/** CONSTRUCTOR. A second handle to the same immutable value (no copy, no context needed).
 * @param out  receives the new handle; free it with cairn_tensor_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_share(const cairn_tensor *t, cairn_tensor **out);

/** DESTRUCTOR. Frees a tensor handle; the data goes when no other tensor shares it. NULL is fine. Since 1.0. */
CAIRN_API void cairn_tensor_free(cairn_tensor *t);

/* ---------------------------------------------------------------------------------------------
 * Eager ops
 * ------------------------------------------------------------------------------------------- */

/** The kind of an op attribute: which field of cairn_attr holds its value. Since 1.0. */
typedef enum cairn_attr_kind {
  CAIRN_ATTR_INT = 1, /**< int64 in `i` */
  CAIRN_ATTR_FLOAT = 2, /**< double in `f` */
  CAIRN_ATTR_BOOL = 3, /**< 0 or 1 in `i` */
  CAIRN_ATTR_INTS = 4, /**< `ints` and `n_ints` */
  CAIRN_ATTR_STRING = 5, /**< NUL-terminated `s` */
  CAIRN_ATTR_DTYPE = 6, /**< a cairn_dtype in `dtype` */
  CAIRN_ATTR_FLOATS = 7, /**< `floats` and `n_floats` */
  CAIRN_ATTR_KIND_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_attr_kind;

/** One attribute of an op call. Set `name`, `kind` and the field for that kind; the others are
 * ignored. A bool goes in `i` (0 or 1). Arrays and strings are borrowed for the call. Since 1.0. */
typedef struct cairn_attr {
  const char *name;      /**< the attribute's name, e.g. "transpose_a" */
  cairn_attr_kind kind;  /**< which field below holds the value */
  int64_t i;             /**< CAIRN_ATTR_INT, CAIRN_ATTR_BOOL */
  double f;              /**< CAIRN_ATTR_FLOAT */
  const int64_t *ints;   /**< CAIRN_ATTR_INTS */
  size_t n_ints;         /**< elements in `ints` */
  const char *s;         /**< CAIRN_ATTR_STRING (NUL-terminated) */
  cairn_dtype dtype;     /**< CAIRN_ATTR_DTYPE */
  const double *floats;  /**< CAIRN_ATTR_FLOATS */
  size_t n_floats;       /**< elements in `floats` */
} cairn_attr;

/** METHOD. Runs op `op` (TensorFlow raw-op names: "Add", "MatMul", "Softmax", ...) eagerly.
 * The op runs on the device of its inputs, which must all share one; an op without inputs runs
 * on the context's default device.
 * @param inputs     `n_inputs` tensors, borrowed.
 * @param attrs      `n_attrs` attributes, borrowed; unset attributes take their defaults.
 * @param outputs    room for exactly the op's output count; each receives a new tensor the caller
 *                   frees. On error nothing is written.
 * Errors, each message starting with the op's name: NOT_FOUND for an unknown op; INVALID_ARGUMENT
 * for a wrong input or output count, a wrong dtype, incompatible shapes, an unknown, missing or
 * mistyped attribute, an out-of-range axis, an output whose element count or size overflows;
 * UNIMPLEMENTED when the device has no kernel for the dtype; RESOURCE_EXHAUSTED when memory (or a
 * device's buffer limit) runs out; FAILED_PRECONDITION for a stateful op whose resource is gone (a
 * summary op on a closed writer); DEADLINE_EXCEEDED or INTERNAL from a lost or hung device only.
 * INTERNAL never answers bad input: it is a bug in Cairn. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_run(cairn_context *ctx, const char *op, cairn_tensor *const *inputs,
                                                    size_t n_inputs, const cairn_attr *attrs, size_t n_attrs,
                                                    cairn_tensor **outputs, size_t n_outputs);

/** An attribute set built one attribute at a time: the form of op attributes that can grow.
 * cairn_attr is frozen in ABI 1 (its ten fields never change); attribute kinds added later are
 * set through this builder, with new cairn_op_attrs_set_X functions. Values are copied in. Setting
 * a name again replaces its value. Since 1.0. */
typedef struct cairn_op_attrs cairn_op_attrs;

/** CONSTRUCTOR. An empty attribute set.
 * @param out  receives it; free with cairn_op_attrs_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_create(cairn_op_attrs **out);

/** METHOD. Sets attribute `name` (borrowed for the call; copied) to an INT value.
 * Errors (all setters): INVALID_ARGUMENT for NULL attrs or name, or a NULL array with n > 0. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_int(cairn_op_attrs *attrs, const char *name, int64_t value);

/** METHOD. Sets a FLOAT attribute. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_float(cairn_op_attrs *attrs, const char *name, double value);

/** METHOD. Sets a BOOL attribute; INVALID_ARGUMENT unless value is CAIRN_FALSE or CAIRN_TRUE. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_bool(cairn_op_attrs *attrs, const char *name,
                                                               cairn_bool value);

/** METHOD. Sets an INTS attribute from `n` values (copied). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_ints(cairn_op_attrs *attrs, const char *name,
                                                               const int64_t *values, size_t n);

/** METHOD. Sets a FLOATS attribute from `n` values (copied). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_floats(cairn_op_attrs *attrs, const char *name,
                                                                 const double *values, size_t n);

/** METHOD. Sets a STRING attribute (NUL-terminated, copied); INVALID_ARGUMENT for NULL value. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_string(cairn_op_attrs *attrs, const char *name,
                                                                 const char *value);

/** METHOD. Sets a DTYPE attribute. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_attrs_set_dtype(cairn_op_attrs *attrs, const char *name,
                                                                cairn_dtype value);

/** METHOD. The number of attributes set; 0 for NULL. Since 1.0. */
CAIRN_API size_t cairn_op_attrs_size(const cairn_op_attrs *attrs);

/** DESTRUCTOR. Frees an attribute set. NULL is fine. Since 1.0. */
CAIRN_API void cairn_op_attrs_free(cairn_op_attrs *attrs);

/** METHOD. cairn_op_run with the attributes of `attrs` (NULL: none). Otherwise identical: same
 * errors, same outputs. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_run_attrs(cairn_context *ctx, const char *op,
                                                          cairn_tensor *const *inputs, size_t n_inputs,
                                                          const cairn_op_attrs *attrs, cairn_tensor **outputs,
                                                          size_t n_outputs);

/* ---------------------------------------------------------------------------------------------
 * The op registry (for binding generators and tools)
 * ------------------------------------------------------------------------------------------- */

/** METHOD. How many outputs op `op` produces with these attributes: fixed for most ops; for ops
 * with a variadic output (Split, Unpack) it comes from the count attribute (num_split, num).
 * @param attrs  the attributes the call will pass (borrowed); unset ones take their defaults.
 * @param out    receives the count.
 * Errors: NOT_FOUND for an unknown op; INVALID_ARGUMENT for a missing or mistyped count. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_num_outputs(const char *op, const cairn_attr *attrs, size_t n_attrs,
                                                            size_t *out);

/** METHOD. How many ops are registered. Since 1.0. */
CAIRN_API size_t cairn_op_count(void);

/** METHOD. The name of op `i` in name order; NULL when i >= cairn_op_count(). Static storage. Since 1.0. */
CAIRN_API const char *cairn_op_name(size_t i);

/** METHOD. The whole registry as JSON: an array of {"name", "summary", "inputs": [{"name",
 * "type_attr" | "dtype", "variadic"?, "number_attr"?}], "outputs": [...], "attrs": [{"name",
 * "kind" ("INT", "FLOAT", "BOOL", "INTS", "STRING", "DTYPE", "FLOATS"), "default"?, "inferred"?,
 * "allowed_dtypes"?, "allowed_values"?}]}, sorted by name. An attribute without "default" is
 * required; an "inferred" DTYPE attribute is taken from the inputs.
 * @param out  receives a NUL-terminated string; free it with cairn_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_op_registry_json(char **out);

/* ---------------------------------------------------------------------------------------------
 * Tracked objects
 *
 * The object graph (TensorFlow's Trackable, tf.Module, tf.Variable, ListWrapper, DictWrapper):
 * objects joined by named, ordered edges. Checkpoints save what is reachable along tracked edges,
 * breadth-first from the root in edge-creation order; an object reached by several paths is saved
 * once, under the first path.
 *
 * Handles. A cairn_object handle holds one reference to its object. Functions that hand out an
 * object (create, get, array_get's owner) make a new handle each time, so two handles may refer
 * to one object (cairn_object_same tells). Freeing a handle drops its reference; edges hold their
 * own, so handles and objects may be freed in any order. An object keeps its context alive.
 * A cycle of tracked or untracked edges keeps its objects alive until one of its edges is deleted.
 *
 * Edge names. A tracked edge name (attribute name or dict key) is non-empty, holds no '/' (it
 * separates checkpoint key parts) and is not ".ATTRIBUTES" or ".OPTIMIZER_SLOT". List elements are
 * named "0", "1", ... by their index.
 *
 * Threads. Objects may be read and written from several threads at once: writes to one object are
 * serialized, and reads see a consistent snapshot. A variable read returns a snapshot tensor that
 * later assignments do not change. Do not free a handle while another thread uses it.
 * ------------------------------------------------------------------------------------------- */

/** A handle to a tracked object (see above); free with cairn_object_free(). Since 1.0. */
typedef struct cairn_object cairn_object;

/** The kinds of objects. Since 1.0. */
typedef enum cairn_object_kind {
  CAIRN_OBJECT_INVALID = 0, /**< what cairn_object_kind_of returns for NULL */
  CAIRN_OBJECT_TRACKABLE = 1, /**< cairn_trackable_create */
  CAIRN_OBJECT_VARIABLE = 2, /**< cairn_variable_create */
  CAIRN_OBJECT_LIST = 3, /**< cairn_list_create */
  CAIRN_OBJECT_DICT = 4, /**< cairn_dict_create */
  CAIRN_OBJECT_MODULE = 5, /**< cairn_module_create */
  CAIRN_OBJECT_OPTIMIZER = 6, /**< cairn_optimizer_create */
  CAIRN_OBJECT_LAYER = 7,     /**< the layer constructors and cairn_sequential_create */
  CAIRN_OBJECT_ITERATOR = 8,  /**< cairn_dataset_iterate (since 1.1) */
  CAIRN_OBJECT_KIND_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_object_kind;

/** CONSTRUCTOR. A new trackable: an object whose attributes (set with cairn_object_set) are
 * tracked edges, kept in the order they were first set.
 * @param ctx  borrowed; the object keeps the context alive.
 * @param out  receives the new object; free it with cairn_object_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_trackable_create(cairn_context *ctx, cairn_object **out);

/** CONSTRUCTOR. A new module (tf.Module): a trackable with a name. Variables created with the
 * module as their scope are named "<name>/<variable name>:0".
 * @param name  borrowed for the call; NULL means "module". Non-empty, no '/' or ':'.
 * @param out   receives the new module; free it with cairn_object_free().
 * Errors: INVALID_ARGUMENT for NULL ctx or out, or a bad name. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_module_create(cairn_context *ctx, const char *name, cairn_object **out);

/** CONSTRUCTOR. Like cairn_module_create, inside the name scope of `parent_scope`: a module "m2"
 * created in the scope of module "m1" has scope "m1/m2", and its variables are named
 * "m1/m2/<name>:0". The two modules are not linked by an edge.
 * @param parent_scope  a module, borrowed for the call; NULL is the same as cairn_module_create.
 * Errors: as cairn_module_create; INVALID_ARGUMENT when parent_scope is not a module. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_module_create_in_scope(cairn_context *ctx, const char *name,
                                                                    const cairn_object *parent_scope,
                                                                    cairn_object **out);

/** METHOD. The module's name, e.g. "m2". Borrowed from the object: valid while any handle to it
 * lives. NULL for NULL or an object that is not a module. Since 1.0. */
CAIRN_API const char *cairn_module_name(const cairn_object *module);

/** METHOD. The module's name scope, e.g. "m1/m2" (its name for a module created without a parent
 * scope). Borrowed like cairn_module_name. NULL for NULL or an object that is not a module. Since 1.0. */
CAIRN_API const char *cairn_module_scope(const cairn_object *module);

/** Options of cairn_variable_create. Since 1.0. */
typedef struct cairn_variable_options {
  uint32_t struct_size;       /**< sizeof(cairn_variable_options) */
  const char *name;           /**< NULL (default) means "Variable"; non-empty, no ':'. Copied. */
  cairn_bool trainable;       /**< CAIRN_TRUE (default): whether trainable_only queries include it */
  const cairn_object *scope;  /**< a module or NULL (default): names the variable "<scope>/<name>:0".
                                 Borrowed for the call; the variable does not keep it. */
} cairn_variable_options;

/** The defaults of cairn_variable_options (see cairn_variable_options_init). Since 1.0. */
#define CAIRN_VARIABLE_OPTIONS_INIT { (uint32_t)sizeof(cairn_variable_options), NULL, 1, NULL }

/** CONSTRUCTOR. A new variable holding `initial`: its dtype, shape and device are the variable's
 * for life. The value is shared with `initial`, not copied (tensors are immutable).
 * @param initial  borrowed for the call. Any dtype but CAIRN_STRING.
 * @param opts     borrowed for the call; NULL means all defaults.
 * @param out      receives the new variable; free it with cairn_object_free().
 * Errors: INVALID_ARGUMENT for NULL ctx, initial or out, a bad struct_size, name or trainable
 * value, a scope that is not a module, or a string tensor. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_variable_create(cairn_context *ctx, const cairn_tensor *initial,
                                                             const cairn_variable_options *opts, cairn_object **out);

/** METHOD. A snapshot of the variable's value; later assignments do not change it.
 * @param out  receives a new tensor; free it with cairn_tensor_free().
 * Errors: INVALID_ARGUMENT for NULL arguments or an object that is not a variable. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_variable_read(cairn_object *var, cairn_tensor **out);

/** METHOD. Replaces the variable's value with `value`, which must have the variable's dtype and
 * shape. A value on another device is copied to the variable's device.
 * @param value  borrowed for the call.
 * Errors: INVALID_ARGUMENT for NULL arguments, an object that is not a variable, or a dtype or
 * shape mismatch, e.g. "cairn_variable_assign: shape [3] does not match variable 'v:0' of shape
 * [2]". On error the value is unchanged. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_variable_assign(cairn_object *var, const cairn_tensor *value);

/** METHOD. Adds `delta` to the variable (the Add op, on the variable's device). `delta` must have
 * the variable's dtype and shape (no broadcasting). The update is atomic with respect to other
 * writers of the same variable.
 * @param delta  borrowed for the call.
 * Errors: as cairn_variable_assign; the Add op's own errors (e.g. for bool) prefixed with
 * "cairn_variable_assign_add: ". Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_variable_assign_add(cairn_object *var, const cairn_tensor *delta);

/** METHOD. Subtracts `delta` from the variable (the Sub op); otherwise as cairn_variable_assign_add. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_variable_assign_sub(cairn_object *var, const cairn_tensor *delta);

/** METHOD. The variable's name, e.g. "m1/m_v:0" or "Variable:0". Borrowed from the object: valid
 * while any handle to it lives. NULL for NULL or an object that is not a variable. Since 1.0. */
CAIRN_API const char *cairn_variable_name(const cairn_object *var);

/** METHOD. 1 when the variable is trainable, 0 when not, -1 for NULL or an object that is not a
 * variable. Since 1.0. */
CAIRN_API cairn_bool cairn_variable_trainable(const cairn_object *var);

/** METHOD. The variable's dtype; CAIRN_INVALID_DTYPE for NULL or an object that is not a variable.
 * (Its shape: cairn_variable_read, then cairn_tensor_rank / cairn_tensor_dim; a read does not copy.) Since 1.0. */
CAIRN_API cairn_dtype cairn_variable_dtype(const cairn_object *var);

/** CONSTRUCTOR. A new, empty list (ListWrapper). Its elements are tracked edges "0", "1", ...
 * @param out  receives the new list; free it with cairn_object_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_list_create(cairn_context *ctx, cairn_object **out);

/** METHOD. Appends `item` to the list as edge "<old size>". A checkpoint value waiting for that
 * edge is restored into `item` before this returns.
 * @param item  borrowed; the list takes its own reference.
 * Errors: INVALID_ARGUMENT for NULL arguments or a `list` that is not a list; the error of a
 * pending restore (the item stays appended). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_list_append(cairn_object *list, cairn_object *item);

/** METHOD. The number of elements; 0 for NULL or an object that is not a list. Since 1.0. */
CAIRN_API size_t cairn_list_size(const cairn_object *list);

/** METHOD. Element `index` of the list (the same as cairn_object_get with its decimal name).
 * @param out  receives a new handle; free it with cairn_object_free().
 * Errors: INVALID_ARGUMENT for NULL arguments or a non-list; OUT_OF_RANGE for index >= size. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_list_get(cairn_object *list, size_t index, cairn_object **out);

/** METHOD. Replaces element `index` (< size) with `item`. TensorFlow refuses to checkpoint a list
 * whose elements were replaced or deleted (restore-on-create needs append-only lists).
 * @param item  borrowed; the list takes its own reference.
 * Errors: as cairn_list_get; the error of a pending restore (the item stays in place). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_list_set(cairn_object *list, size_t index, cairn_object *item);

/** CONSTRUCTOR. A new, empty dict (DictWrapper): string keys, kept in insertion order; each entry
 * is a tracked edge named by its key. Set, get and delete entries with cairn_object_set/get/delete.
 * @param out  receives the new dict; free it with cairn_object_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dict_create(cairn_context *ctx, cairn_object **out);

/** METHOD. Creates or replaces the tracked edge `name` of `parent`: an attribute of a trackable or
 * module, a key of a dict, or an existing index ("0", "1", ...) of a list. A replaced edge keeps
 * its position; a new one goes last. An untracked reference of the same name is replaced. An edge
 * may point back to its parent or an ancestor (a cycle). A checkpoint value waiting for this edge
 * is restored into `child` before this returns.
 * @param name   borrowed for the call; a valid edge name (see above).
 * @param child  borrowed; the parent takes its own reference.
 * Errors: INVALID_ARGUMENT for NULL arguments, a bad name, or a variable parent (variables have no
 * edges); NOT_FOUND / OUT_OF_RANGE for a list name that is not an existing index; the error of a
 * pending restore (the edge stays). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_set(cairn_object *parent, const char *name, cairn_object *child);

/** METHOD. Keeps `child` alive under `name` without tracking it: it is never walked, listed by the
 * module queries or checkpointed (an attribute TensorFlow does not track). A tracked edge of the
 * same name is replaced. Only trackables and modules have untracked references.
 * @param name   borrowed for the call; non-empty (may contain '/').
 * @param child  borrowed; the parent takes its own reference.
 * Errors: INVALID_ARGUMENT for NULL arguments, an empty name, or a list, dict or variable parent. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_set_untracked(cairn_object *parent, const char *name,
                                                                  cairn_object *child);

/** METHOD. The child at `name`, tracked or untracked. Lists name their elements "0", "1", ...
 * @param out  receives a new handle; free it with cairn_object_free().
 * Errors: INVALID_ARGUMENT for NULL arguments; NOT_FOUND when there is no such child
 * ('cairn_object_get: no child named "w" in trackable'); OUT_OF_RANGE for a list index >= size. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_get(cairn_object *parent, const char *name, cairn_object **out);

/** METHOD. Deletes the edge `name` (tracked or untracked) from every later walk and checkpoint.
 * Deleting list element i moves the later elements down one index.
 * Errors: INVALID_ARGUMENT for NULL arguments; NOT_FOUND / OUT_OF_RANGE when there is no such edge. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_delete(cairn_object *parent, const char *name);

/** METHOD. The object's kind; CAIRN_OBJECT_INVALID for NULL. Since 1.0. */
CAIRN_API cairn_object_kind cairn_object_kind_of(const cairn_object *obj);

/** METHOD. 1 when both handles refer to the same object, 0 otherwise (also when either is NULL). Since 1.0. */
CAIRN_API cairn_bool cairn_object_same(const cairn_object *a, const cairn_object *b);

/** METHOD. The number of tracked edges of the object (0 for variables and NULL). Since 1.0. */
CAIRN_API size_t cairn_object_child_count(const cairn_object *obj);

/** CONSTRUCTOR. A new handle to the object `obj` refers to (for example to keep an object lent by a
 * cairn_object_array after the array is freed).
 * @param obj  borrowed for the call.
 * @param out  receives the new handle; free it with cairn_object_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_share(const cairn_object *obj, cairn_object **out);

/** DESTRUCTOR. Frees a handle, dropping its reference; the object goes when nothing else refers to
 * it. NULL is fine. Never pass a handle borrowed from a cairn_object_array. Since 1.0. */
CAIRN_API void cairn_object_free(cairn_object *obj);

/* ---------------------------------------------------------------------------------------------
 * Object arrays and module queries
 *
 * The queries follow tf.Module: an object's attributes are its tracked edges sorted by name (a
 * list's in index order); lists and dicts are looked through (elements in index order, dict keys
 * sorted) and never reported themselves; an object's direct results come before those of its
 * submodules, and only modules are recursed into (a plain trackable is a result, not searched).
 * The root itself is never reported. Each result carries a path: edge names joined by '/'.
 * ------------------------------------------------------------------------------------------- */

/** An immutable array of objects, each with a path. Since 1.0. */
typedef struct cairn_object_array cairn_object_array;

/** METHOD. The tracked edges of `obj` in order (creation order; index order for lists); each
 * entry's path is the edge name. Variables give an empty array.
 * @param out  receives a new array; free it with cairn_object_array_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_children(cairn_object *obj, cairn_object_array **out);

/** METHOD. tf.Module.variables (trainable_only 0) or .trainable_variables (1): own variables sorted
 * by attribute name first, then those of submodules, depth-first; each variable once, with the
 * path it was first found by.
 * @param out  receives a new array; free it with cairn_object_array_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_variables(cairn_object *root, cairn_bool trainable_only,
                                                              cairn_object_array **out);

/** METHOD. tf.Module.submodules: every module reachable from `root` (root excluded), each once. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_submodules(cairn_object *root, cairn_object_array **out);

/** METHOD. tf.Module._flatten(with_path=True): every (path, object) pair, so an object reachable
 * by several paths appears once per path. A module met again while its own walk is in progress
 * (a cycle) has its direct attributes listed but is not searched again, so this ends. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_flatten(cairn_object *root, cairn_object_array **out);

/** METHOD. Every object reachable from `root` along tracked edges in checkpoint order: the root
 * first (path ""), then breadth-first in edge order; each object once, with the first path that
 * reaches it. Lists and dicts are included. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_walk(cairn_object *root, cairn_object_array **out);

/** METHOD. The number of entries; 0 for NULL. Since 1.0. */
CAIRN_API size_t cairn_object_array_size(const cairn_object_array *a);

/** METHOD. Entry `i`; NULL for NULL or i >= size. Borrowed from `a`: valid until the array is freed.
 * Do not free it; to keep the object longer, take a new handle with cairn_object_share. Since 1.0. */
CAIRN_API cairn_object *cairn_object_array_get(const cairn_object_array *a, size_t i);

/** METHOD. The path of entry `i`, e.g. "sub/v" ("" for a walk's root). Borrowed from `a`. NULL for
 * NULL or i >= size. Since 1.0. */
CAIRN_API const char *cairn_object_array_path(const cairn_object_array *a, size_t i);

/** DESTRUCTOR. Frees the array and the handles it lent. NULL is fine. Since 1.0. */
CAIRN_API void cairn_object_array_free(cairn_object_array *a);

/* ---------------------------------------------------------------------------------------------
 * Checkpoints (tf.train.Checkpoint)
 *
 * A checkpoint is a root trackable whose children are given at creation (set in name order, as
 * TensorFlow's Checkpoint(**kwargs) does), plus a "save_counter" int64 variable created on first
 * use. One checkpoint is one file; see ../shared/design/CHECKPOINT.md for the format and its
 * guarantees. Keys read like tf.train.list_variables: "<path>/.ATTRIBUTES/VARIABLE_VALUE".
 * Threads: one checkpoint (and its manager) is used from one thread at a time.
 * ------------------------------------------------------------------------------------------- */

/** Threads: a checkpoint, its restore statuses and its manager are used from one thread at a time.
 * A reader may be used from several threads at once (its reads are positional). Since 1.0. */
typedef struct cairn_checkpoint cairn_checkpoint;
/** What a restore matched (TF's CheckpointLoadStatus); free with cairn_restore_status_free(). Since 1.0. */
typedef struct cairn_restore_status cairn_restore_status;
/** A checkpoint manager (tf.train.CheckpointManager); free with cairn_checkpoint_manager_free(). Since 1.0. */
typedef struct cairn_checkpoint_manager cairn_checkpoint_manager;
/** A reader of a checkpoint file (tf.train.load_checkpoint); free with cairn_checkpoint_reader_free(). Since 1.0. */
typedef struct cairn_checkpoint_reader cairn_checkpoint_reader;
/** This process's membership in an MPI communicator (cairn_mpi_init, with the collectives over MPI).
 * Since 1.4. */
typedef struct cairn_mpi cairn_mpi;

/** Options of one checkpoint (cairn_checkpoint_set_options); start from CAIRN_CHECKPOINT_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_checkpoint_options {
  uint32_t struct_size; /**< sizeof(cairn_checkpoint_options) */
  cairn_bool compress;   /**< zstd per payload, stored raw when it would not shrink; default 0 */
  cairn_bool async;      /**< save/write snapshot the values and write in the background; default 0.
                           An error shows up on the next save, write, restore or sync. */
  cairn_bool fsync;      /**< fsync file and directory (crash safety); default 1 */
} cairn_checkpoint_options;

/** The defaults of cairn_checkpoint_options (see cairn_checkpoint_options_init). Since 1.0. */
#define CAIRN_CHECKPOINT_OPTIONS_INIT { (uint32_t)sizeof(cairn_checkpoint_options), 0, 0, 1 }

/** CONSTRUCTOR. A checkpoint over `n` named root children (TF's Checkpoint(**kwargs)).
 * @param names    `n` edge names, borrowed; unique, non-empty, no '/', not "save_counter".
 * @param objects  `n` objects, borrowed; the checkpoint's root holds its own references.
 * @param out      receives the checkpoint; free it with cairn_checkpoint_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_create(cairn_context *ctx, const char *const *names,
                                                               cairn_object *const *objects, size_t n,
                                                               cairn_checkpoint **out);

/** METHOD. The checkpoint's root object, borrowed from `ckpt` (do not free it). Add more edges with
 * cairn_object_set. NULL for NULL. Since 1.0. */
CAIRN_API cairn_object *cairn_checkpoint_root(cairn_checkpoint *ckpt);

/** METHOD. Sets the checkpoint's options (copied). NULL restores the defaults. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_set_options(cairn_checkpoint *ckpt,
                                                                    const cairn_checkpoint_options *opts);

/** METHOD. The current value of save_counter (0 before the first save or restore).
 * @param out  receives the value.
 * Errors: INVALID_ARGUMENT for NULL arguments; the error of a background save still running. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_save_counter(cairn_checkpoint *ckpt, int64_t *out);

/** METHOD. Increments save_counter and writes "<prefix>-<save_counter>" atomically.
 * @param path_out  receives the path written (free with cairn_free), or NULL if not wanted. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_save(cairn_checkpoint *ckpt, const char *prefix,
                                                             char **path_out);

/** METHOD. Writes the checkpoint to exactly `path` (atomically), leaving save_counter alone. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_write(cairn_checkpoint *ckpt, const char *path);

/** METHOD. Waits for a background (async) save and returns its error, if any. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_sync(cairn_checkpoint *ckpt);

/** METHOD. Restores values from `path` by matching checkpoint objects to live ones along the same
 * edges. Values whose objects do not exist yet are applied the moment their edge is created (a
 * set, list append or dict insert), and optimizer slots the moment the optimizer creates them.
 * Such pending values wait on the live objects that will receive them (as TensorFlow's deferred
 * dependencies), not on the checkpoint or the status: freeing both right after this call loses
 * nothing (since 1.2). A newer restore through the same checkpoint replaces this one's pending values.
 * Since 1.1 `path` may also be a TensorFlow checkpoint (a prefix, its .index, or a directory with a
 * `checkpoint` state file): its object graph is matched with the same rules, after Keras' edge
 * names are mapped onto Cairn's layers and optimizers (docs/tf_checkpoints.md), and each value's
 * CRC32C is checked as it is loaded. A TF1 checkpoint (NOT_FOUND) or a safetensors file
 * (INVALID_ARGUMENT) has no object graph: the error says to load it by name instead
 * (cairn_object_load_weights).
 * @param path  NULL: nothing to restore (TF's restore(None)); the status's asserts then fail.
 * @param out   receives the restore status; free it with cairn_restore_status_free().
 * Errors: NOT_FOUND for a missing file, DATA_LOSS for a damaged one, INVALID_ARGUMENT for a dtype or
 * shape mismatch (the message names the key). A failed restore leaves the values it already
 * assigned, keeps no deferred restores and logs no "never restored" warning. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_restore(cairn_checkpoint *ckpt, const char *path,
                                                                cairn_restore_status **out);

/** METHOD. FAILED_PRECONDITION unless every checkpoint value was restored and every live object under
 * the root was matched; the message names every unmatched path. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_restore_status_assert_consumed(const cairn_restore_status *rs);

/** METHOD. FAILED_PRECONDITION unless every live variable under the root was matched. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_restore_status_assert_existing_objects_matched(
    const cairn_restore_status *rs);

/** METHOD. Silences the warning that lists the checkpoint values never restored, and nothing else:
 * pending values are still restored when their objects appear. That warning is logged when the
 * restore ends: once the status and the checkpoint are freed and no live object waits for a value
 * any more (for a model never built, when the model is freed). Since 1.0. */
CAIRN_API void cairn_restore_status_expect_partial(cairn_restore_status *rs);

/** DESTRUCTOR. Frees a restore status. Pending values still reach their objects when these appear:
 * they wait on the objects, not on the status or the checkpoint. Since 1.0. */
CAIRN_API void cairn_restore_status_free(cairn_restore_status *rs);

/** DESTRUCTOR. Frees a checkpoint, waiting for a background save (its error is logged). Since 1.0. */
CAIRN_API void cairn_checkpoint_free(cairn_checkpoint *ckpt);

/* ---- Checkpoint manager (tf.train.CheckpointManager) ---- */

/** Options of cairn_checkpoint_manager_create; start from CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_checkpoint_manager_options {
  uint32_t struct_size;                 /**< sizeof(cairn_checkpoint_manager_options) */
  const char *checkpoint_name;          /**< file name prefix; NULL = "ckpt" (default) */
  int64_t max_to_keep;                  /**< checkpoints kept; -1 keeps all; default 5; 0 is an error */
  double keep_checkpoint_every_n_hours; /**< also keep one per this many hours; 0 (default) = off */
} cairn_checkpoint_manager_options;

/** The defaults of cairn_checkpoint_manager_options (see cairn_checkpoint_manager_options_init). Since 1.0. */
#define CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT { (uint32_t)sizeof(cairn_checkpoint_manager_options), NULL, 5, 0.0 }

/** CONSTRUCTOR. A manager saving `ckpt` into `directory` (created if missing). It reads the
 * directory's state file, or rebuilds the list by scanning for intact checkpoints when the state is
 * missing or damaged, and removes temporary files an interrupted save left behind.
 * @param out  receives the manager (it holds its own reference on `ckpt`); free with
 *             cairn_checkpoint_manager_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_manager_create(cairn_checkpoint *ckpt, const char *directory,
                                                                       const cairn_checkpoint_manager_options *opts,
                                                                       cairn_checkpoint_manager **out);

/** METHOD. Increments save_counter (always, as TensorFlow does) and saves
 * "<directory>/<checkpoint_name>-<N>", where N is `checkpoint_number` when it is >= 0 and the new
 * save_counter otherwise; then applies max_to_keep. The state file changes only
 * after the new checkpoint is durable.
 * @param path_out  receives the path (free with cairn_free), or NULL if not wanted. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_manager_save(cairn_checkpoint_manager *m,
                                                                     int64_t checkpoint_number, char **path_out);

/** METHOD. The newest checkpoint's path, or NULL when there is none. Borrowed from `m`: valid until
 * the next save or free. Since 1.0. */
CAIRN_API const char *cairn_checkpoint_manager_latest(const cairn_checkpoint_manager *m);

/** METHOD. How many checkpoints the manager keeps track of. Since 1.0. */
CAIRN_API size_t cairn_checkpoint_manager_count(const cairn_checkpoint_manager *m);

/** METHOD. Path of checkpoint `i`, oldest first; NULL when out of range. Borrowed like _latest. Since 1.0. */
CAIRN_API const char *cairn_checkpoint_manager_path(const cairn_checkpoint_manager *m, size_t i);

/** DESTRUCTOR. Frees a manager (waiting for a background save). NULL is fine. Since 1.0. */
CAIRN_API void cairn_checkpoint_manager_free(cairn_checkpoint_manager *m);

/** METHOD. Shards every later save of `m` across the processes of `mpi` (NULL: one file per save
 * again). Every rank then calls cairn_checkpoint_manager_save with the same checkpoint_number, each
 * on its own manager over the same directory, which every rank must see (one machine's disk, or a
 * shared filesystem). The values are divided among the ranks by size; each rank writes its share as
 * a shard file beside the checkpoint ("<checkpoint>.shard-R-of-N-..."), and rank 0, once every
 * shard is durable, commits an index file at the checkpoint's path, then the state file. A failure
 * or a crash of any rank before that leaves the previous checkpoints listed and intact (the other
 * ranks fail with ABORTED, or DEADLINE_EXCEEDED for a rank that is gone); retention deletes a
 * checkpoint's shards with its index. Sharded saves are synchronous, whatever the checkpoint's async
 * option. The index is the checkpoint: cairn_checkpoint_restore and cairn_checkpoint_reader_open
 * take its path, in any number of processes, with or without MPI. The manager holds the
 * communicator until it is freed or sharded anew (MPI is finalized only after both are freed).
 * Errors: INVALID_ARGUMENT for a NULL manager. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_manager_shard(cairn_checkpoint_manager *m, cairn_mpi *mpi);

/* ---- Reading a checkpoint without the program that wrote it (list_variables / load_variable) ---- */

/** CONSTRUCTOR. Opens and verifies a checkpoint's header, footer and index. Since 1.1 it opens
 * TensorFlow checkpoints and safetensors too (see "Weights in other formats" below).
 * @param out  receives the reader; free with cairn_checkpoint_reader_free().
 * Errors: NOT_FOUND for a missing file, DATA_LOSS naming the damaged part. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_reader_open(const char *path, cairn_checkpoint_reader **out);

/** METHOD. Number of keys; keys are sorted in byte order, _CHECKPOINTABLE_OBJECT_GRAPH included
 * (a TF1 checkpoint or safetensors has none). Since 1.0. */
CAIRN_API size_t cairn_checkpoint_reader_count(const cairn_checkpoint_reader *r);

/** METHOD. Key `i`, borrowed from `r`; NULL when out of range. Since 1.0. */
CAIRN_API const char *cairn_checkpoint_reader_key(const cairn_checkpoint_reader *r, size_t i);

/** METHOD. Dtype of key `i` (CAIRN_STRING for the object graph and TensorFlow's string tensors);
 * CAIRN_INVALID_DTYPE out of range or for a dtype Cairn lacks (cairn_checkpoint_reader_type_name). Since 1.0. */
CAIRN_API cairn_dtype cairn_checkpoint_reader_dtype(const cairn_checkpoint_reader *r, size_t i);

/** METHOD. Rank of key `i`; 0 out of range. Since 1.0. */
CAIRN_API size_t cairn_checkpoint_reader_rank(const cairn_checkpoint_reader *r, size_t i);

/** METHOD. Dimension `axis` of key `i`; -1 out of range. Since 1.0. */
CAIRN_API int64_t cairn_checkpoint_reader_dim(const cairn_checkpoint_reader *r, size_t i, size_t axis);

/** CONSTRUCTOR. Loads the value of `key` (checksums verified) as a new tensor on the device of the
 * calling thread's innermost device scope of `ctx` (cairn_device_scope_enter), else the context's
 * default device. Errors: NOT_FOUND for an unknown key, DATA_LOSS for a damaged payload,
 * INVALID_ARGUMENT for the string entry (read it with cairn_checkpoint_reader_load_string). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_reader_load(const cairn_checkpoint_reader *r,
                                                                    cairn_context *ctx, const char *key,
                                                                    cairn_tensor **out);

/** METHOD. The bytes of a string entry (the serialized object graph; element 0 of a TensorFlow
 * string tensor, see cairn_checkpoint_reader_load_string_element).
 * @param out  receives a buffer (free with cairn_free); @param size receives its length. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_reader_load_string(const cairn_checkpoint_reader *r,
                                                                           const char *key, char **out,
                                                                           size_t *size);

/** DESTRUCTOR. Frees a reader. NULL is fine. Since 1.0. */
CAIRN_API void cairn_checkpoint_reader_free(cairn_checkpoint_reader *r);

/* ---------------------------------------------------------------------------------------------
 * Weights in other formats: TensorFlow checkpoints and safetensors
 *
 * Three formats hold weights, and every function here takes any of them:
 *  - Cairn checkpoint files (above);
 *  - TensorFlow checkpoints (tensor_bundle V2): a prefix ("<dir>/ckpt-5", with ckpt-5.index and
 *    ckpt-5.data-00000-of-00001 beside it), the .index file, or a directory whose `checkpoint`
 *    state file names the latest one. TF1 name-based checkpoints are read too;
 *  - safetensors: a .safetensors file, a sharded model's index .json, or a directory holding
 *    model.safetensors.index.json or model.safetensors.
 * The format is told from the file's bytes and the files beside it. docs/tf_checkpoints.md and
 * docs/safetensors.md give the rules each reader enforces and the Keras name mapping.
 *
 * Three ways in and out:
 *  - by key, like tf.train.list_variables / load_variable or safetensors' safe_open:
 *    cairn_checkpoint_reader_open accepts all three formats;
 *  - by object graph, like tf.train.Checkpoint: cairn_checkpoint_restore accepts TensorFlow
 *    checkpoints, and cairn_checkpoint_export writes one TensorFlow restores;
 *  - by name into one module, like Keras' load_weights / save_weights:
 *    cairn_object_load_weights and cairn_object_save_weights.
 * ------------------------------------------------------------------------------------------- */

/** A file format of weights. Since 1.1. */
typedef enum cairn_weights_format {
  CAIRN_WEIGHTS_AUTO = 0,        /**< reading: told from the bytes; not a format to write */
  CAIRN_WEIGHTS_CAIRN = 1,       /**< a Cairn checkpoint file */
  CAIRN_WEIGHTS_TF = 2,          /**< a TensorFlow checkpoint (tensor_bundle V2) */
  CAIRN_WEIGHTS_SAFETENSORS = 3  /**< safetensors */
} cairn_weights_format;

/** METHOD. The format of the file `r` reads; CAIRN_WEIGHTS_AUTO for NULL. Since 1.1. */
CAIRN_API cairn_weights_format cairn_checkpoint_reader_format(const cairn_checkpoint_reader *r);

/** METHOD. The dtype of key `i` as its file names it ("float32" for Cairn and TensorFlow, "F32",
 * "F8_E4M3" for safetensors). cairn_checkpoint_reader_dtype gives what a load returns: the F8 types
 * load as CAIRN_FLOAT32, and dtypes Cairn lacks (uint16, complex64, U32, ...) are CAIRN_INVALID_DTYPE,
 * whose loads fail with UNIMPLEMENTED naming the key. Borrowed from `r`; NULL when out of range. Since 1.1. */
CAIRN_API const char *cairn_checkpoint_reader_type_name(const cairn_checkpoint_reader *r, size_t i);

/** METHOD. Element `index` (row-major) of a string value: TensorFlow's string tensors, or a Cairn
 * file's object graph (one element). cairn_checkpoint_reader_load_string is element 0.
 * @param out   receives a buffer (free with cairn_free); @param size receives its length.
 * Errors: NOT_FOUND for an unknown key, INVALID_ARGUMENT for a value that is not a string or an
 * index past its elements, DATA_LOSS for a damaged value. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_reader_load_string_element(const cairn_checkpoint_reader *r,
                                                                                   const char *key, size_t index,
                                                                                   char **out, size_t *size);

/** METHOD. Checks the stored checksum of `key` without keeping its value (loads check it too).
 * @param checked  receives CAIRN_TRUE, or CAIRN_FALSE when the file keeps no checksum for the key
 *                 (a safetensors tensor written without Cairn's opt-in checksum); may be NULL.
 * Errors: NOT_FOUND for an unknown key, DATA_LOSS naming the key when the bytes do not match. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_reader_verify(const cairn_checkpoint_reader *r,
                                                                      const char *key, cairn_bool *checked);

/** METHOD. The number of metadata strings: a safetensors file's "__metadata__" (the first shard's
 * for a sharded model), Cairn's checksum keys included; 0 for the other formats. Since 1.1. */
CAIRN_API size_t cairn_checkpoint_reader_metadata_count(const cairn_checkpoint_reader *r);

/** METHOD. Metadata key `i`, in byte order. Borrowed from `r`; NULL when out of range. Since 1.1. */
CAIRN_API const char *cairn_checkpoint_reader_metadata_key(const cairn_checkpoint_reader *r, size_t i);

/** METHOD. Metadata value `i`. Borrowed from `r`; NULL when out of range. Since 1.1. */
CAIRN_API const char *cairn_checkpoint_reader_metadata_value(const cairn_checkpoint_reader *r, size_t i);

/** Options of cairn_checkpoint_export; start from CAIRN_EXPORT_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_export_options {
  uint32_t struct_size;   /**< sizeof(cairn_export_options) */
  cairn_bool keras_names; /**< TF: lay Cairn's layers and optimizers out as Keras 3 does, so
                             tf.train.Checkpoint(model=keras_model, ...) restores them;
                             0 keeps Cairn's edge names (what a tf.Module restores). Default 1. */
  cairn_bool save_counter; /**< TF: include save_counter (TensorFlow's restore expects it). Default 1. */
} cairn_export_options;

/** The defaults of cairn_export_options (see cairn_export_options_init). Since 1.1. */
#define CAIRN_EXPORT_OPTIONS_INIT { (uint32_t)sizeof(cairn_export_options), 1, 1 }

/** METHOD. Fills a cairn_export_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_export_options_init(cairn_export_options *opts, uint32_t struct_size);

/** METHOD. Writes the checkpoint to `path` in `format`, atomically (a failed export leaves an
 * earlier file at `path` as it was), leaving save_counter alone.
 *  - CAIRN_WEIGHTS_TF: the bundle "<path>.index" + "<path>.data-00000-of-00001" with TensorFlow's
 *    object graph; tf.train.load_checkpoint reads every value and tf.train.Checkpoint restores it.
 *  - CAIRN_WEIGHTS_CAIRN: what cairn_checkpoint_write writes.
 *  - CAIRN_WEIGHTS_SAFETENSORS: every value by its checkpoint key (as `cairn ckpt convert` does);
 *    there is no object graph. To save one module under short names use cairn_object_save_weights.
 * @param opts  NULL for the defaults.
 * Errors: INVALID_ARGUMENT for CAIRN_WEIGHTS_AUTO or an unknown format, the errors of writing
 * (PERMISSION_DENIED, RESOURCE_EXHAUSTED, ... naming the path). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_export(cairn_checkpoint *ckpt, const char *path,
                                                               cairn_weights_format format,
                                                               const cairn_export_options *opts);

/** Options of cairn_object_load_weights and cairn_object_save_weights; start from
 * CAIRN_WEIGHTS_OPTIONS_INIT.
 *
 * A variable's name is its path from the module (cairn_object_walk's: edge names joined by '/',
 * "layer-0/kernel"), with every '/' replaced by `separator` and `prefix` put in front. On load a
 * Cairn or TensorFlow key's "/.ATTRIBUTES/VARIABLE_VALUE" is dropped first, so the keys of a
 * checkpoint of {"model": module} match with prefix "model/". Keys outside the prefix, optimizer
 * slots (".OPTIMIZER_SLOT") and the object graph are not weights of the module and are passed
 * over. Since 1.1. */
typedef struct cairn_weights_options {
  uint32_t struct_size;      /**< sizeof(cairn_weights_options) */
  const char *prefix;        /**< what names start with before the path ("model/", "encoder."); NULL = "" */
  const char *separator;     /**< what joins path parts in names; NULL = "/"; "." for PyTorch-style names */
  cairn_bool allow_missing;  /**< load: variables the file lacks keep their values; default 0 (NOT_FOUND
                                naming them) */
  cairn_bool allow_unused;   /**< load: values under the prefix that match no variable are skipped;
                                default 0 (INVALID_ARGUMENT naming them) */
  cairn_bool checksums;      /**< save, safetensors: store each tensor's XXH3 in "__metadata__"
                                ("cairn.checksum.<name>"), checked by every Cairn load; default 1 */
  uint64_t max_shard_bytes;  /**< save, safetensors: 0 (default) writes one file at `path`; otherwise
                                `path` is a directory that gets shards of at most this many bytes
                                (one bigger tensor gets a shard of its own) and
                                model.safetensors.index.json, as Hugging Face's tools write them */
  const char *metadata_json; /**< save, safetensors: a JSON object of strings added to "__metadata__"
                                ({"format": "pt"}); NULL = none */
} cairn_weights_options;

/** The defaults of cairn_weights_options (see cairn_weights_options_init). Since 1.1. */
#define CAIRN_WEIGHTS_OPTIONS_INIT { (uint32_t)sizeof(cairn_weights_options), NULL, NULL, 0, 0, 1, 0, NULL }

/** METHOD. Fills a cairn_weights_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_weights_options_init(cairn_weights_options *opts, uint32_t struct_size);

/** METHOD. Loads the variables under `obj` (a module, layer, model or any object) by name from
 * `path`, in any of the three formats (Keras' load_weights by name). Every value is read and
 * checked (dtype, shape, checksum) before any variable changes, so a failed load leaves every
 * variable as it was. Values are copied to each variable's device.
 * @param opts    NULL for the defaults.
 * @param loaded  receives the number of variables assigned; may be NULL.
 * Errors: NOT_FOUND for a missing file or (without allow_missing) the variables the file lacks,
 * INVALID_ARGUMENT naming the variable and key for a dtype or shape mismatch and (without
 * allow_unused) the values no variable took, DATA_LOSS for a damaged file. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_load_weights(cairn_object *obj, const char *path,
                                                                 const cairn_weights_options *opts, size_t *loaded);

/** METHOD. Saves the variables under `obj` by name to `path` in `format` (Keras' save_weights),
 * atomically: a failed save leaves an earlier file at `path` as it was.
 *  - CAIRN_WEIGHTS_SAFETENSORS: a file the safetensors package reads, or shards (max_shard_bytes);
 *  - CAIRN_WEIGHTS_TF: a name-based bundle "<path>.index" + "<path>.data-00000-of-00001"
 *    (tf.train.load_checkpoint and TF1's Saver read it);
 *  - CAIRN_WEIGHTS_CAIRN: a Cairn file of the names, without an object graph.
 * cairn_object_load_weights reads each back. For a checkpoint TensorFlow restores by object graph,
 * use cairn_checkpoint_export.
 * @param opts  NULL for the defaults.
 * Errors: INVALID_ARGUMENT for CAIRN_WEIGHTS_AUTO, an object without variables, two variables
 * whose names collide, or metadata_json that is not an object of strings; the errors of writing. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_save_weights(cairn_object *obj, const char *path,
                                                                 cairn_weights_format format,
                                                                 const cairn_weights_options *opts);

/* ---------------------------------------------------------------------------------------------
 * Training: gradient tape, optimizers, layers, losses, metrics
 *
 * A tape records the ops its creating thread runs on watched tensors and on trainable variables
 * read while it is active, and computes gradients by running each recorded op's gradient (built
 * from registered ops, so nested tapes give higher-order gradients). Optimizers and layers are
 * tracked objects (kinds OPTIMIZER and LAYER): put them in a checkpoint like any other object.
 * An optimizer's step counter, hyperparameters and slot variables (m, v, momentum, ...) are saved
 * with it; a slot is saved only when its variable is saved too, under
 * "<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>". Layers create their variables on their
 * first call from the input's shape; a checkpoint restored before that is applied when they appear.
 * ------------------------------------------------------------------------------------------- */

/** A gradient tape (tf.GradientTape); free with cairn_tape_free(). Since 1.0. */
typedef struct cairn_tape cairn_tape;

/** Options of cairn_tape_create; start from CAIRN_TAPE_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_tape_options {
  uint32_t struct_size;             /**< sizeof(cairn_tape_options) */
  cairn_bool persistent;            /**< 1: allow several gradient calls; default 0 */
  cairn_bool watch_accessed_variables;/**< 1 (default): watch trainable variables when they are read */
} cairn_tape_options;

/** The defaults of cairn_tape_options (see cairn_tape_options_init). Since 1.0. */
#define CAIRN_TAPE_OPTIONS_INIT { (uint32_t)sizeof(cairn_tape_options), 0, 1 }

/** CONSTRUCTOR. Starts a tape on the calling thread; it records only that thread's ops (as
 * tf.GradientTape). Bindings whose threads can move (Go) pin the thread while a tape lives.
 * @param opts  borrowed; NULL means defaults.
 * @param out   receives the tape; free it with cairn_tape_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tape_create(cairn_context *ctx, const cairn_tape_options *opts,
                                                         cairn_tape **out);

/** METHOD. Watches a tensor (a floating dtype: INVALID_ARGUMENT otherwise). Borrowed for the call. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tape_watch(cairn_tape *tape, const cairn_tensor *t);

/** METHOD. Watches a variable (also a non-trainable one). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tape_watch_variable(cairn_tape *tape, const cairn_object *var);

/** METHOD. Pauses / resumes recording (tf.GradientTape.stop_recording). NULL is ignored. Since 1.0. */
CAIRN_API void cairn_tape_stop_recording(cairn_tape *tape);
/** METHOD. Resumes recording after cairn_tape_stop_recording. NULL is ignored. Since 1.0. */
CAIRN_API void cairn_tape_resume_recording(cairn_tape *tape);

/** How a gradient call answers for a source the target does not depend on. Since 1.0. */
typedef enum cairn_unconnected {
  CAIRN_UNCONNECTED_NONE = 0, /**< a NULL gradient (TensorFlow's None) */
  CAIRN_UNCONNECTED_ZERO = 1, /**< zeros of the source's shape */
  CAIRN_UNCONNECTED_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_unconnected;

/** METHOD. d(sum(target * output_gradient))/d(source) for each of `n` sources; output_gradient
 * NULL means ones (a non-scalar target is summed). A non-persistent tape allows one call.
 * @param sources  n tensors, borrowed.
 * @param grads    n slots; each receives a new tensor (free with cairn_tensor_free) or NULL for an
 *                 unconnected source under CAIRN_UNCONNECTED_NONE. Untouched on error.
 * Errors: FAILED_PRECONDITION for a second call on a non-persistent tape or a call from another
 * thread; UNIMPLEMENTED naming an op without a gradient; INVALID_ARGUMENT for bad arguments. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tape_gradient(cairn_tape *tape, const cairn_tensor *target,
                                                           const cairn_tensor *const *sources, size_t n,
                                                           const cairn_tensor *output_gradient,
                                                           cairn_unconnected unconnected, cairn_tensor **grads);

/** METHOD. Like cairn_tape_gradient for variables: the sum over every read of each variable. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tape_gradient_variables(cairn_tape *tape, const cairn_tensor *target,
                                                                     cairn_object *const *vars, size_t n,
                                                                     const cairn_tensor *output_gradient,
                                                                     cairn_unconnected unconnected,
                                                                     cairn_tensor **grads);

/** DESTRUCTOR. Stops recording and frees the tape. NULL is fine. Since 1.0. */
CAIRN_API void cairn_tape_free(cairn_tape *tape);

/* ---- Optimizers (tf.keras.optimizers) ---- */

/** The update rule of an optimizer. Since 1.0. */
typedef enum cairn_optimizer_kind {
  CAIRN_OPTIMIZER_SGD = 0,     /**< momentum, nesterov */
  CAIRN_OPTIMIZER_ADAM = 1,    /**< beta_1, beta_2, epsilon */
  CAIRN_OPTIMIZER_ADAMW = 2,   /**< Adam plus decoupled weight_decay */
  CAIRN_OPTIMIZER_RMSPROP = 3, /**< rho, momentum, epsilon, centered */
  CAIRN_OPTIMIZER_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_optimizer_kind;

/** Options of cairn_optimizer_create; start from CAIRN_OPTIMIZER_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_optimizer_options {
  uint32_t struct_size;         /**< sizeof(cairn_optimizer_options) */
  cairn_optimizer_kind kind;    /**< default SGD */
  double learning_rate;         /**< default 0.01; ignored when schedule is set */
  const cairn_object *schedule; /**< a learning-rate schedule or NULL (default); the optimizer keeps it */
  double momentum;              /**< SGD and RMSprop; default 0 */
  cairn_bool nesterov;          /**< SGD; default 0 */
  double beta_1;                /**< default 0.9 */
  double beta_2;                /**< default 0.999 */
  double epsilon;               /**< default 1e-7 */
  double weight_decay;          /**< AdamW; default 0.004 */
  double rho;                   /**< RMSprop; default 0.9 */
  cairn_bool centered;          /**< RMSprop; default 0 */
} cairn_optimizer_options;

/** The defaults of cairn_optimizer_options (see cairn_optimizer_options_init). Since 1.0. */
#define CAIRN_OPTIMIZER_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_optimizer_options), CAIRN_OPTIMIZER_SGD, 0.01, NULL, 0.0, 0, 0.9, 0.999, 1.0e-7, 0.004, 0.9, 0 }

/** CONSTRUCTOR. A new optimizer (kind OPTIMIZER).
 * @param out  receives it; free with cairn_object_free().
 * Errors: INVALID_ARGUMENT naming a bad option (negative learning rate, beta outside [0, 1), ...). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_create(cairn_context *ctx, const cairn_optimizer_options *opts,
                                                              cairn_object **out);

/** Options of cairn_schedule_exponential_decay (tf.keras.optimizers.schedules.ExponentialDecay). Since 1.0. */
typedef struct cairn_exponential_decay_options {
  uint32_t struct_size;         /**< sizeof(cairn_exponential_decay_options) */
  double initial_learning_rate; /**< default 0.01 */
  int64_t decay_steps;          /**< required, > 0 */
  double decay_rate;            /**< required, > 0 */
  cairn_bool staircase;         /**< floor step / decay_steps; default CAIRN_FALSE */
} cairn_exponential_decay_options;

/** The defaults of cairn_exponential_decay_options (see cairn_exponential_decay_options_init). Since 1.0. */
#define CAIRN_EXPONENTIAL_DECAY_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_exponential_decay_options), 0.01, 0, 0.0, CAIRN_FALSE }

/** Options of cairn_schedule_cosine_decay (tf.keras.optimizers.schedules.CosineDecay). Since 1.0. */
typedef struct cairn_cosine_decay_options {
  uint32_t struct_size;         /**< sizeof(cairn_cosine_decay_options) */
  double initial_learning_rate; /**< default 0.01 */
  int64_t decay_steps;          /**< required, > 0 */
  double alpha;                 /**< the floor, as a fraction of the initial rate; default 0 */
} cairn_cosine_decay_options;

/** The defaults of cairn_cosine_decay_options (see cairn_cosine_decay_options_init). Since 1.0. */
#define CAIRN_COSINE_DECAY_OPTIONS_INIT { (uint32_t)sizeof(cairn_cosine_decay_options), 0.01, 0, 0.0 }

/** CONSTRUCTOR. Learning-rate schedules (tracked objects; pass as cairn_optimizer_options.schedule).
 * Exponential: lr0 * rate^(step / decay_steps), floored exponent when staircase.
 * @param out  receives the schedule; free with cairn_object_free().
 * Errors: INVALID_ARGUMENT for NULL opts or a bad value, naming the field. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_schedule_exponential_decay(cairn_context *ctx,
                                                                        const cairn_exponential_decay_options *opts,
                                                                        cairn_object **out);

/** CONSTRUCTOR. Cosine: lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha).
 * Errors: as cairn_schedule_exponential_decay. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_schedule_cosine_decay(cairn_context *ctx,
                                                                   const cairn_cosine_decay_options *opts,
                                                                   cairn_object **out);

/** METHOD. One update for each (grads[i], vars[i]) pair, then the step counter goes up by one.
 * A NULL gradient skips its variable (as TensorFlow skips None).
 * Errors: INVALID_ARGUMENT naming the variable for a dtype or shape mismatch, a variable that is
 * not trainable or not floating, or a variable given twice; nothing is updated then. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_apply_gradients(cairn_object *optimizer,
                                                                       const cairn_tensor *const *grads,
                                                                       cairn_object *const *vars, size_t n);

/** METHOD. The number of apply_gradients calls so far (the checkpointed "iter"). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_iterations(cairn_object *optimizer, int64_t *out);

/** METHOD. The learning rate the next update uses (the schedule at the current step). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_learning_rate(cairn_object *optimizer, double *out);

/** METHOD. Replaces a constant learning rate. FAILED_PRECONDITION when a schedule is in use. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_set_learning_rate(cairn_object *optimizer, double value);

/** METHOD. The slot `name` ("m", "v", "momentum", "rms", "mg") the optimizer holds for `var`.
 * Errors: NOT_FOUND when it has not been created (before the variable's first update). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_get_slot(cairn_object *optimizer, const cairn_object *var,
                                                                const char *name, cairn_object **out);

/* ---- Layers (tf.keras.layers). Activations: "linear" (or NULL), "relu", "relu6", "sigmoid",
 * "tanh", "softmax", "softplus", "elu", "selu", "gelu". Initializers: "glorot_uniform",
 * "glorot_normal", "he_normal", "he_uniform", "zeros", "ones", "random_normal", "random_uniform".
 * Names: NULL gives a unique default ("dense", "dense_1", ...). ---- */

/** Options of cairn_dense_create; start from CAIRN_DENSE_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_dense_options {
  uint32_t struct_size;           /**< sizeof(cairn_dense_options) */
  int64_t units;                  /**< required, > 0 */
  const char *activation;         /**< default NULL (linear) */
  cairn_bool use_bias;            /**< default 1 */
  const char *kernel_initializer; /**< default NULL (glorot_uniform) */
  const char *bias_initializer;   /**< default NULL (zeros) */
  const char *name;               /**< default NULL */
} cairn_dense_options;

/** The defaults of cairn_dense_options (see cairn_dense_options_init). Since 1.0. */
#define CAIRN_DENSE_OPTIONS_INIT { (uint32_t)sizeof(cairn_dense_options), 0, NULL, 1, NULL, NULL, NULL }

/** CONSTRUCTOR. Dense: activation(x @ kernel + bias) over the last axis; weights "kernel", "bias". Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dense_create(cairn_context *ctx, const cairn_dense_options *opts,
                                                          cairn_object **out);

/** Options of cairn_conv2d_create; start from CAIRN_CONV2D_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_conv2d_options {
  uint32_t struct_size;           /**< sizeof(cairn_conv2d_options) */
  int64_t filters;                /**< required, > 0 */
  int64_t kernel_h;               /**< default 3 */
  int64_t kernel_w;               /**< default 3 */
  int64_t stride_h;               /**< default 1 */
  int64_t stride_w;               /**< default 1 */
  const char *padding;            /**< "VALID" (default, NULL) or "SAME" */
  const char *activation;         /**< default NULL (linear) */
  cairn_bool use_bias;            /**< default 1 */
  const char *kernel_initializer; /**< default NULL (glorot_uniform) */
  const char *bias_initializer;   /**< default NULL (zeros) */
  const char *name;               /**< default NULL */
} cairn_conv2d_options;

/** The defaults of cairn_conv2d_options (see cairn_conv2d_options_init). Since 1.0. */
#define CAIRN_CONV2D_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_conv2d_options), 0, 3, 3, 1, 1, NULL, NULL, 1, NULL, NULL, NULL }

/** CONSTRUCTOR. Conv2D over NHWC input; weights "kernel" [kh, kw, in, filters], "bias". Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_conv2d_create(cairn_context *ctx, const cairn_conv2d_options *opts,
                                                           cairn_object **out);

/** Options of the pooling layers; start from CAIRN_POOL2D_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_pool2d_options {
  uint32_t struct_size;       /**< sizeof(cairn_pool2d_options) */
  int64_t pool_h;             /**< default 2 */
  int64_t pool_w;             /**< default 2 */
  int64_t stride_h;           /**< default 0: pool_h */
  int64_t stride_w;           /**< default 0: pool_w */
  const char *padding;        /**< "VALID" (default, NULL) or "SAME" */
  const char *name;           /**< default NULL */
} cairn_pool2d_options;

/** The defaults of cairn_pool2d_options (see cairn_pool2d_options_init). Since 1.0. */
#define CAIRN_POOL2D_OPTIONS_INIT { (uint32_t)sizeof(cairn_pool2d_options), 2, 2, 0, 0, NULL, NULL }

/** CONSTRUCTOR. MaxPool2D / AvgPool2D over NHWC input. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_max_pool2d_create(cairn_context *ctx, const cairn_pool2d_options *opts,
                                                               cairn_object **out);
/** CONSTRUCTOR. AvgPool2D: as cairn_max_pool2d_create, averaging each window. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_avg_pool2d_create(cairn_context *ctx, const cairn_pool2d_options *opts,
                                                               cairn_object **out);

/** Options of cairn_flatten_create. Since 1.0. */
typedef struct cairn_flatten_options {
  uint32_t struct_size; /**< sizeof(cairn_flatten_options) */
  const char *name;     /**< default NULL */
} cairn_flatten_options;

/** The defaults of cairn_flatten_options (see cairn_flatten_options_init). Since 1.0. */
#define CAIRN_FLATTEN_OPTIONS_INIT { (uint32_t)sizeof(cairn_flatten_options), NULL }

/** CONSTRUCTOR. Flatten: [batch, ...] -> [batch, product of the rest]. `opts` may be NULL. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_flatten_create(cairn_context *ctx, const cairn_flatten_options *opts,
                                                            cairn_object **out);

/** Options of cairn_embedding_create. Since 1.0. */
typedef struct cairn_embedding_options {
  uint32_t struct_size; /**< sizeof(cairn_embedding_options) */
  int64_t input_dim;    /**< required, > 0: the number of distinct indices */
  int64_t output_dim;   /**< required, > 0: the length of each vector */
  const char *name;     /**< default NULL */
} cairn_embedding_options;

/** The defaults of cairn_embedding_options (see cairn_embedding_options_init). Since 1.0. */
#define CAIRN_EMBEDDING_OPTIONS_INIT { (uint32_t)sizeof(cairn_embedding_options), 0, 0, NULL }

/** CONSTRUCTOR. Embedding: int32/int64 indices in [0, input_dim) -> vectors of output_dim;
 * weight "embeddings" (random_uniform initializer).
 * Errors: INVALID_ARGUMENT for NULL opts or a dimension <= 0. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_embedding_create(cairn_context *ctx, const cairn_embedding_options *opts,
                                                              cairn_object **out);

/** Options of cairn_layer_norm_create and cairn_batch_norm_create; start from CAIRN_NORM_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_norm_options {
  uint32_t struct_size; /**< sizeof(cairn_norm_options) */
  int64_t axis;         /**< the normalised axis; default -1 */
  double epsilon;       /**< default 1e-3 */
  double momentum;      /**< BatchNorm's moving statistics; default 0.99 */
  cairn_bool center;     /**< learn "beta"; default 1 */
  cairn_bool scale;      /**< learn "gamma"; default 1 */
  const char *name;     /**< default NULL */
} cairn_norm_options;

/** The defaults of cairn_norm_options (see cairn_norm_options_init). Since 1.0. */
#define CAIRN_NORM_OPTIONS_INIT { (uint32_t)sizeof(cairn_norm_options), -1, 1.0e-3, 0.99, 1, 1, NULL }

/** CONSTRUCTOR. LayerNormalization / BatchNormalization (non-trainable "moving_mean" and
 * "moving_variance", updated by calls with training = 1). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_layer_norm_create(cairn_context *ctx, const cairn_norm_options *opts,
                                                               cairn_object **out);
/** CONSTRUCTOR. BatchNormalization, with the moving statistics described above. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_batch_norm_create(cairn_context *ctx, const cairn_norm_options *opts,
                                                               cairn_object **out);

/** Options of cairn_dropout_create. Since 1.0. */
typedef struct cairn_dropout_options {
  uint32_t struct_size; /**< sizeof(cairn_dropout_options) */
  double rate;          /**< the probability of dropping an element, in [0, 1); default 0 (keeps all) */
  int64_t seed;         /**< default -1: draw from the context's random stream */
  const char *name;     /**< default NULL */
} cairn_dropout_options;

/** The defaults of cairn_dropout_options (see cairn_dropout_options_init). Since 1.0. */
#define CAIRN_DROPOUT_OPTIONS_INIT { (uint32_t)sizeof(cairn_dropout_options), 0.0, -1, NULL }

/** CONSTRUCTOR. Dropout with probability `rate` when called with training = CAIRN_TRUE (the rest
 * scaled by 1 / (1 - rate)); identity otherwise. `opts` may be NULL.
 * Errors: INVALID_ARGUMENT for a rate outside [0, 1). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dropout_create(cairn_context *ctx, const cairn_dropout_options *opts,
                                                            cairn_object **out);

/** Options of cairn_activation_create. Since 1.0. */
typedef struct cairn_activation_options {
  uint32_t struct_size;   /**< sizeof(cairn_activation_options) */
  const char *activation; /**< default NULL (linear) */
  const char *name;       /**< default NULL */
} cairn_activation_options;

/** The defaults of cairn_activation_options (see cairn_activation_options_init). Since 1.0. */
#define CAIRN_ACTIVATION_OPTIONS_INIT { (uint32_t)sizeof(cairn_activation_options), NULL, NULL }

/** CONSTRUCTOR. A layer applying one activation. `opts` may be NULL (linear).
 * Errors: INVALID_ARGUMENT for an unknown activation. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_activation_create(cairn_context *ctx,
                                                               const cairn_activation_options *opts,
                                                               cairn_object **out);

/** Options of cairn_sequential_create. Since 1.0. */
typedef struct cairn_sequential_options {
  uint32_t struct_size; /**< sizeof(cairn_sequential_options) */
  const char *name;     /**< default NULL ("sequential", "sequential_1", ...) */
} cairn_sequential_options;

/** The defaults of cairn_sequential_options (see cairn_sequential_options_init). Since 1.0. */
#define CAIRN_SEQUENTIAL_OPTIONS_INIT { (uint32_t)sizeof(cairn_sequential_options), NULL }

/** CONSTRUCTOR. An empty Sequential model; its layers are its edges "layer-0", "layer-1", ...
 * `opts` may be NULL. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_sequential_create(cairn_context *ctx,
                                                               const cairn_sequential_options *opts,
                                                               cairn_object **out);

/** METHOD. Appends `layer` (borrowed; the model keeps it). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_sequential_add(cairn_object *model, cairn_object *layer);

/** METHOD. Calls a layer (building it on the first call). `training` = 1 switches Dropout and
 * BatchNorm to training behaviour.
 * @param out  receives a new tensor; free with cairn_tensor_free().
 * Errors: INVALID_ARGUMENT naming the layer for an input of the wrong rank, dtype or size. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_layer_call(cairn_object *layer, const cairn_tensor *x, cairn_bool training,
                                                        cairn_tensor **out);

/** METHOD. The layer's variables (nested layers' included) in creation order; only trainable ones
 * when trainable_only is 1. Empty before the first call. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_layer_weights(cairn_object *layer, cairn_bool trainable_only,
                                                           cairn_object_array **out);

/** METHOD. Keras' summary(): layers, output shapes, parameter counts and totals, as a table.
 * @param out  receives the text; free with cairn_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_layer_summary(cairn_object *layer, char **out);

/** METHOD. The number of scalars in the layer's variables (0 before the first call). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_layer_count_params(cairn_object *layer, int64_t *out);

/* ---- Losses and metrics ---- */

/** The losses of cairn_loss. Since 1.0. */
typedef enum cairn_loss_kind {
  CAIRN_LOSS_MEAN_SQUARED_ERROR = 0, /**< mean of (y_true - y_pred)^2 */
  CAIRN_LOSS_MEAN_ABSOLUTE_ERROR = 1, /**< mean of |y_true - y_pred| */
  CAIRN_LOSS_BINARY_CROSSENTROPY = 2,             /**< y_true in {0, 1}; y_pred probabilities or logits */
  CAIRN_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY = 3, /**< y_true int class ids; y_pred [..., classes] */
  CAIRN_LOSS_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_loss_kind;

/** FUNCTION. The mean loss over every element, as a scalar of y_pred's dtype, built from
 * registered ops (a tape differentiates it). `from_logits` applies to the cross-entropies.
 * @param out  receives a new tensor; free with cairn_tensor_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_loss(cairn_context *ctx, cairn_loss_kind kind, const cairn_tensor *y_true,
                                                  const cairn_tensor *y_pred, cairn_bool from_logits, cairn_tensor **out);

/** The metrics of cairn_metric_create. Since 1.0. */
typedef enum cairn_metric_kind {
  CAIRN_METRIC_MEAN = 0,     /**< update(values, NULL): the mean of every value seen */
  CAIRN_METRIC_ACCURACY = 1, /**< update(y_true, y_pred): int labels vs argmax of scores, or equality */
  CAIRN_METRIC_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_metric_kind;

/** CONSTRUCTOR. A streaming metric: a tracked object with float64 "total" and "count" variables.
 * @param name  NULL gives "mean" / "accuracy". Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_metric_create(cairn_context *ctx, cairn_metric_kind kind,
                                                           const char *name, cairn_object **out);

/** METHOD. Accumulates values (MEAN: `b` must be NULL) or predictions (ACCURACY). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_metric_update(cairn_object *metric, const cairn_tensor *a,
                                                           const cairn_tensor *b);

/** METHOD. The current value (0 when nothing was accumulated). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_metric_result(cairn_object *metric, double *out);

/** METHOD. Sets total and count to zero. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_metric_reset(cairn_object *metric);


/* ---------------------------------------------------------------------------------------------
 * Compiled functions (tf.function)
 *
 * A host callback is traced into a graph the first time it is called with a new input signature
 * (each input's dtype and shape). Inside the callback, the ordinary API records instead of
 * running: cairn_op_run, variable reads and assigns, layers, the tape and optimizers give symbolic
 * tensors (their values cannot be read there). Later calls with the same signature replay the graph
 * and never call back. Variables are captured by reference: a replay reads and writes their live
 * values. Eager tensors the callback uses are captured by value when it is traced. Side effects of
 * the callback itself (printing, counting) happen only while tracing.
 * An input signature with -1 dims traces on the first call's concrete shapes; the second distinct
 * shape is traced too, to check that the graph does not depend on those dims. When it does (code
 * that read a shape while tracing: a reshape to the batch size, the count of a mean's gradient),
 * the function traces once per concrete shape from then on, so results are always right.
 * ------------------------------------------------------------------------------------------- */

/** A compiled function (tf.function); free with cairn_function_free(). Since 1.0. */
typedef struct cairn_function cairn_function;

/** The traced body. `inputs` are symbolic tensors (borrowed for the call); set each of the
 * `n_outputs` outputs to a new tensor (an op result, an input shared with cairn_tensor_share, or
 * an eager tensor to return as a constant); the function takes them. Return NULL or an error
 * status, which cairn_function_call returns (nothing is cached then). Since 1.0. */
typedef cairn_status *(*cairn_function_fn)(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                           size_t n_inputs, cairn_tensor **outputs, size_t n_outputs);

/** One input of an input signature: a dtype and a shape whose dims may be -1 (any size). It may
 * grow: an array of specs takes its stride from the struct_size of element 0, and every element
 * must have the same struct_size. Since 1.0. */
typedef struct cairn_tensor_spec {
  uint32_t struct_size; /**< sizeof(cairn_tensor_spec) */
  cairn_dtype dtype;    /**< default CAIRN_INVALID_DTYPE: required */
  const int64_t *shape; /**< `rank` dims, borrowed for cairn_function_create; default NULL */
  size_t rank;          /**< default 0 (a scalar) */
} cairn_tensor_spec;

/** The defaults of cairn_tensor_spec (see cairn_tensor_spec_init). Since 1.0. */
#define CAIRN_TENSOR_SPEC_INIT { (uint32_t)sizeof(cairn_tensor_spec), CAIRN_INVALID_DTYPE, NULL, 0 }

/** Options of cairn_function_create; start from CAIRN_FUNCTION_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_function_options {
  uint32_t struct_size;                     /**< sizeof(cairn_function_options) */
  const cairn_tensor_spec *input_signature; /**< NULL (default): key on every call's own shapes */
  size_t n_input_signature;                 /**< inputs in input_signature */
  int32_t retrace_warning;                  /**< warn through the log when traces reach this; default 5, 0 = off */
  void (*release)(void *user_data);         /**< called once when the function is destroyed; default NULL */
  /** Static inputs (TF's rule for Python scalars): the indexes of inputs whose values, not only their
   * dtypes and shapes, are part of the cache key. The callback receives them as tensors with values
   * it may read (cairn_tensor_read) and the trace bakes them in: a new value retraces. Each is a
   * numeric or bool tensor of at most 1024 elements. Functions with static inputs cannot be
   * exported yet. Added after the first release: a struct_size that ends before these fields means
   * none. */
  const int64_t *static_inputs;             /**< default NULL */
  size_t n_static_inputs;                   /**< entries in static_inputs */
} cairn_function_options;

/** The defaults of cairn_function_options (see cairn_function_options_init). Since 1.0. */
#define CAIRN_FUNCTION_OPTIONS_INIT { (uint32_t)sizeof(cairn_function_options), NULL, 0, 5, NULL, NULL, 0 }

/** CONSTRUCTOR. A function named `name` (for messages and dumps) over `fn`.
 * @param user_data  passed to fn; released with opts->release when the function is freed.
 * @param out        receives the function; free with cairn_function_free().
 * Errors: INVALID_ARGUMENT for NULL ctx, name, fn or out, an empty name, or a bad signature. On
 * error release is not called: the caller still owns user_data. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_create(cairn_context *ctx, const char *name, cairn_function_fn fn,
                                                             void *user_data, const cairn_function_options *opts,
                                                             cairn_function **out);

/** METHOD. Calls the function: traces on a new signature, replays the cached graph otherwise.
 * @param inputs   `n_inputs` tensors, borrowed.
 * @param outputs  `n_outputs` slots, each receiving a new tensor; untouched on error.
 * Errors: the callback's own status; INVALID_ARGUMENT when inputs do not match the input
 * signature or n_outputs differs from what the trace returned; the ops' errors at replay. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_call(cairn_function *fn, cairn_tensor *const *inputs,
                                                           size_t n_inputs, cairn_tensor **outputs, size_t n_outputs);

/** METHOD. How many times the function has been traced (one per distinct signature). Since 1.0. */
CAIRN_API size_t cairn_function_num_traces(const cairn_function *fn);

/** METHOD. The graph of trace `index` (0 = the first) as text: one line per node with its op,
 * attributes, inputs and output dtypes and shapes, then the results.
 * @param out  receives the text; free with cairn_free().
 * Errors: OUT_OF_RANGE for an index >= cairn_function_num_traces. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_dump(const cairn_function *fn, size_t index, char **out);

/** METHOD. The input signature of trace `index`, as text ("float32[2,3], int32[]").
 * @param out  receives the text; free with cairn_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_signature(const cairn_function *fn, size_t index, char **out);

/** DESTRUCTOR. Frees the function (and releases user_data). NULL is fine. Since 1.0. */
CAIRN_API void cairn_function_free(cairn_function *fn);

/** METHOD. How many outputs trace `index` returns (what cairn_function_call's n_outputs must be;
 * useful for a loaded function).
 * Errors: OUT_OF_RANGE for an index >= cairn_function_num_traces; INVALID_ARGUMENT for NULL. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_num_outputs(const cairn_function *fn, size_t index, size_t *out);

/* ---------------------------------------------------------------------------------------------
 * Records: TFRecord files
 *
 * TensorFlow's record files (tf.io.TFRecordWriter, tf.data.TFRecordDataset), byte-compatible:
 * each record is its length (uint64, little-endian), the masked CRC32C of the length, the bytes,
 * and their masked CRC32C. ZLIB or GZIP compress the whole stream; nothing in the file says which,
 * so readers are told. docs/records.md has the details.
 * Reading a file that is still being written: a truncated last record is "not yet", not an error:
 * cairn_record_reader_next reports no record and stays where it was, and a later call resumes
 * there once the writer has written the rest (as TensorBoard reads event files).
 * An optional index sidecar `<path>.cairnidx` (never read by TensorFlow) holds each record's
 * offset: record counts in O(1), seeking to record i, sharding. A stale or corrupt index is ignored.
 * Threads: a writer or reader handle is used by one thread at a time; separate handles are
 * independent. Corrupt data is DATA_LOSS naming the file and the byte offset.
 * ------------------------------------------------------------------------------------------- */

/** Stream compression of a record file. Since 1.1. */
typedef enum cairn_compression {
  CAIRN_COMPRESSION_NONE = 0,            /**< plain records (TensorFlow's "") */
  CAIRN_COMPRESSION_ZLIB = 1,            /**< a zlib stream (TensorFlow's "ZLIB") */
  CAIRN_COMPRESSION_GZIP = 2,            /**< a gzip stream (TensorFlow's "GZIP") */
  CAIRN_COMPRESSION_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_compression;

/** A record file being written. Since 1.1. */
typedef struct cairn_record_writer cairn_record_writer;
/** A record file being read. Since 1.1. */
typedef struct cairn_record_reader cairn_record_reader;

/** Options of cairn_record_writer_open; start from CAIRN_RECORD_WRITER_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_record_writer_options {
  uint32_t struct_size;          /**< sizeof(cairn_record_writer_options) */
  cairn_compression compression; /**< default CAIRN_COMPRESSION_NONE */
  int32_t level;                 /**< zlib level 0..9; default -1 (zlib's default, 6, as TensorFlow) */
  cairn_bool write_index;        /**< write `<path>.cairnidx` on close; default 0 */
  cairn_bool append;             /**< append to an existing file instead of truncating it (no index
                                      then; an old sidecar is removed); default 0 */
} cairn_record_writer_options;

/** The defaults of cairn_record_writer_options (see cairn_record_writer_options_init). Since 1.1. */
#define CAIRN_RECORD_WRITER_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_record_writer_options), CAIRN_COMPRESSION_NONE, -1, 0, 0 }

/** Options of cairn_record_reader_open and the whole-file functions; start from
 * CAIRN_RECORD_READER_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_record_reader_options {
  uint32_t struct_size;          /**< sizeof(cairn_record_reader_options) */
  cairn_compression compression; /**< must match the file; default CAIRN_COMPRESSION_NONE */
  cairn_bool verify_checksums;   /**< check both CRCs of every record; default 1 */
  cairn_bool read_ahead;         /**< a background thread reads ahead in large uncompressed files, on
                                      machines with 4 or more CPUs; default 1 */
  uint64_t buffer_size;          /**< bytes per read; default 0 (1 MiB) */
} cairn_record_reader_options;

/** The defaults of cairn_record_reader_options (see cairn_record_reader_options_init). Since 1.1. */
#define CAIRN_RECORD_READER_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_record_reader_options), CAIRN_COMPRESSION_NONE, 1, 1, 0 }

/** METHOD. Fills a cairn_record_writer_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_writer_options_init(cairn_record_writer_options *opts,
                                                                        uint32_t struct_size);
/** METHOD. Fills a cairn_record_reader_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_reader_options_init(cairn_record_reader_options *opts,
                                                                        uint32_t struct_size);

/** CONSTRUCTOR. Creates (or truncates; with opts->append, appends to) the record file `path`.
 * @param opts  NULL for the defaults.
 * @param out   receives the writer; free with cairn_record_writer_free.
 * Errors: NOT_FOUND / PERMISSION_DENIED naming the path; INVALID_ARGUMENT for a bad compression
 * or level, or write_index with append. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_writer_open(const char *path, const cairn_record_writer_options *opts,
                                                                cairn_record_writer **out);

/** METHOD. Appends one record of `n` bytes (copied; `data` may be NULL when n is 0). Records are
 * buffered: readers see them after cairn_record_writer_flush or close.
 * Errors: FAILED_PRECONDITION after close; I/O errors (RESOURCE_EXHAUSTED for a full disk) naming
 * the path. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_writer_write(cairn_record_writer *w, const void *data, size_t n);

/** METHOD. Hands every record written so far to the operating system (a compressed stream gets a
 * zlib sync flush), so readers see them. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_writer_flush(cairn_record_writer *w);

/** METHOD. Flush, then fsync: the records survive a crash of the machine. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_writer_sync(cairn_record_writer *w);

/** METHOD. Flushes, ends the compressed stream, closes the file and writes the index sidecar when
 * asked. Calling it again does nothing. Its error is the last chance to see a failed write.
 * Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_writer_close(cairn_record_writer *w);

/** METHOD. Records written so far. 0 for NULL. Since 1.1. */
CAIRN_API int64_t cairn_record_writer_count(const cairn_record_writer *w);

/** DESTRUCTOR. Closes the writer if needed (errors are lost then: call close first) and frees it.
 * NULL is fine. Since 1.1. */
CAIRN_API void cairn_record_writer_free(cairn_record_writer *w);

/** CONSTRUCTOR. Opens the record file `path` for reading from its start.
 * @param opts  NULL for the defaults.
 * @param out   receives the reader; free with cairn_record_reader_free.
 * Errors: NOT_FOUND / PERMISSION_DENIED naming the path. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_reader_open(const char *path, const cairn_record_reader_options *opts,
                                                                cairn_record_reader **out);

/** METHOD. Reads the next record.
 * @param data  receives the record's bytes, borrowed from the reader until its next call.
 * @param n     receives their count.
 * @param got   receives CAIRN_TRUE for a record; CAIRN_FALSE (data NULL, n 0) at the end of the
 *              file or at a last record still being written: the reader stays at its offset and
 *              a later call retries from there.
 * Errors: DATA_LOSS "<path>: corrupt record at offset N: ..." for a CRC mismatch, an impossible
 * length or corrupt compressed data; the reader is then unusable. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_reader_next(cairn_record_reader *r, const void **data, size_t *n,
                                                                cairn_bool *got);

/** METHOD. Where the next record starts, in the uncompressed stream (the file offset without
 * compression). -1 for NULL. Since 1.1. */
CAIRN_API int64_t cairn_record_reader_offset(const cairn_record_reader *r);

/** METHOD. CAIRN_TRUE when the last cairn_record_reader_next found an incomplete record at the
 * offset (a file still being written, or one cut short). Since 1.1. */
CAIRN_API cairn_bool cairn_record_reader_partial(const cairn_record_reader *r);

/** METHOD. Moves to `offset`, a record's start as cairn_record_reader_offset gave it (a wrong one
 * shows as DATA_LOSS on the next read). Compressed streams get there by decompressing: O(offset).
 * Errors: INVALID_ARGUMENT for a negative offset; OUT_OF_RANGE past the end of a compressed
 * stream. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_reader_seek(cairn_record_reader *r, int64_t offset);

/** METHOD. Moves to record `index` (0-based; the record count moves to the end), through the
 * index sidecar.
 * Errors: FAILED_PRECONDITION saying why when there is no valid index (none, stale, corrupt;
 * build one with cairn_record_index_build); OUT_OF_RANGE past the end. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_reader_seek_record(cairn_record_reader *r, int64_t index);

/** DESTRUCTOR. Frees the reader. NULL is fine. Since 1.1. */
CAIRN_API void cairn_record_reader_free(cairn_record_reader *r);

/** METHOD. The number of complete records in `path`: from a valid index sidecar in O(1),
 * otherwise by reading the file (with checksums as opts say).
 * @param opts  NULL for the defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_file_count(const char *path, const cairn_record_reader_options *opts,
                                                               int64_t *out);

/** METHOD. Reads `path` and writes its index sidecar `<path>.cairnidx` (replacing a stale one).
 * @param opts       NULL for the defaults.
 * @param count_out  receives the number of records indexed; may be NULL. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_index_build(const char *path, const cairn_record_reader_options *opts,
                                                                int64_t *count_out);

/** METHOD. The records [begin, end) of shard `shard` of `num_shards` over `count` records:
 * [shard*count/num_shards, (shard+1)*count/num_shards); every record is in exactly one shard.
 * Use with cairn_record_reader_seek_record.
 * Errors: INVALID_ARGUMENT for a negative count or a shard outside [0, num_shards). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_record_shard_range(int64_t count, int64_t num_shards, int64_t shard,
                                                                int64_t *begin, int64_t *end);

/* ---------------------------------------------------------------------------------------------
 * tf.train.Example and SequenceExample
 *
 * Build, serialize and parse TensorFlow's Example and SequenceExample protobuf messages, and parse
 * batches of serialized records straight into tensors, as tf.io.parse_example and
 * tf.io.parse_sequence_example do. Serialization is deterministic (keys sorted bytewise) and gives
 * the bytes protobuf's deterministic serialization gives. docs/example.md has the details.
 * Threads: a cairn_example may be read from several threads at once; a write (set, append) needs
 * the example to itself. cairn_parse_examples may run on several threads at once.
 * ------------------------------------------------------------------------------------------- */

/** Which message a cairn_example is. Since 1.1. */
typedef enum cairn_example_kind {
  CAIRN_EXAMPLE = 1,          /**< tf.train.Example: features */
  CAIRN_SEQUENCE_EXAMPLE = 2, /**< tf.train.SequenceExample: context features and feature lists */
  CAIRN_EXAMPLE_KIND_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_example_kind;

/** Which list a feature holds (Feature's oneof field numbers). Since 1.1. */
typedef enum cairn_feature_kind {
  CAIRN_FEATURE_NONE = 0,  /**< a Feature with no list set: reads as an empty list of any dtype */
  CAIRN_FEATURE_BYTES = 1, /**< bytes_list */
  CAIRN_FEATURE_FLOAT = 2, /**< float_list */
  CAIRN_FEATURE_INT64 = 3, /**< int64_list */
  CAIRN_FEATURE_KIND_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_feature_kind;

/** An Example or SequenceExample being built or read. Since 1.1. */
typedef struct cairn_example cairn_example;

/** The `step` argument that addresses a feature (of an Example, or a context feature of a
 * SequenceExample) rather than a step of a feature list. Since 1.1. */
#define CAIRN_EXAMPLE_NO_STEP ((int64_t)-1)

/** CONSTRUCTOR. An empty Example or SequenceExample.
 * @param out  receives the example; free with cairn_example_free().
 * Errors: INVALID_ARGUMENT for an unknown kind or NULL out. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_create(cairn_example_kind kind, cairn_example **out);

/** CONSTRUCTOR. Parses one serialized message of `kind`. Packed and unpacked lists are accepted,
 * unknown fields skipped; a key given twice keeps its last entry (protobuf's rules).
 * @param data  `n` bytes, borrowed for the call (NULL allowed when n is 0).
 * @param out   receives the example; free with cairn_example_free().
 * Errors: DATA_LOSS for malformed bytes, naming the byte offset. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_parse(cairn_example_kind kind, const void *data, size_t n,
                                                           cairn_example **out);

/** DESTRUCTOR. Frees the example. NULL is fine. Since 1.1. */
CAIRN_API void cairn_example_free(cairn_example *ex);

/** METHOD. CAIRN_EXAMPLE or CAIRN_SEQUENCE_EXAMPLE; 0 for NULL. Since 1.1. */
CAIRN_API cairn_example_kind cairn_example_get_kind(const cairn_example *ex);

/** METHOD. Sets feature `key` (a context feature of a SequenceExample) to `n` int64s, replacing
 * what the key held. `values` is copied (NULL allowed when n is 0).
 * Errors: INVALID_ARGUMENT for NULL ex or key. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_set_int64s(cairn_example *ex, const char *key,
                                                                const int64_t *values, size_t n);

/** METHOD. Sets feature `key` to `n` floats, as cairn_example_set_int64s does. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_set_floats(cairn_example *ex, const char *key, const float *values,
                                                                size_t n);

/** METHOD. Sets feature `key` to `n` byte strings: string i is `lens[i]` bytes at `values[i]`
 * (copied; any bytes, NUL included). Errors: INVALID_ARGUMENT for NULL arrays when n > 0. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_set_bytes(cairn_example *ex, const char *key,
                                                               const void *const *values, const size_t *lens,
                                                               size_t n);

/** METHOD. Appends one step of `n` int64s to feature list `key` of a SequenceExample (creating the
 * list). Errors: INVALID_ARGUMENT for an Example (it has no feature lists). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_append_step_int64s(cairn_example *ex, const char *key,
                                                                        const int64_t *values, size_t n);

/** METHOD. Appends one step of `n` floats to feature list `key`, as cairn_example_append_step_int64s. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_append_step_floats(cairn_example *ex, const char *key,
                                                                        const float *values, size_t n);

/** METHOD. Appends one step of `n` byte strings to feature list `key` (as cairn_example_set_bytes
 * takes them). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_append_step_bytes(cairn_example *ex, const char *key,
                                                                       const void *const *values, const size_t *lens,
                                                                       size_t n);

/** METHOD. The protobuf encoding of the example: map entries sorted by key, lists packed, the same
 * bytes as protobuf's deterministic serialization.
 * @param out  receives `*n` bytes (plus a NUL not counted); free with cairn_free().
 * Errors: INVALID_ARGUMENT for NULL arguments. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_serialize(const cairn_example *ex, char **out, size_t *n);

/** METHOD. How many features the example has (context features for a SequenceExample); 0 for NULL. Since 1.1. */
CAIRN_API size_t cairn_example_feature_count(const cairn_example *ex);

/** METHOD. The key of feature `i` (keys sorted bytewise), NUL-terminated, borrowed from `ex` until it
 * is changed or freed; NULL when i is out of range. A key holding a NUL byte reads up to it. Since 1.1. */
CAIRN_API const char *cairn_example_feature_key(const cairn_example *ex, size_t i);

/** METHOD. How many feature lists a SequenceExample has; 0 for an Example or NULL. Since 1.1. */
CAIRN_API size_t cairn_example_feature_list_count(const cairn_example *ex);

/** METHOD. The key of feature list `i` (sorted), borrowed as cairn_example_feature_key's. Since 1.1. */
CAIRN_API const char *cairn_example_feature_list_key(const cairn_example *ex, size_t i);

/** METHOD. How many steps feature list `key` has.
 * Errors: NOT_FOUND naming the key when there is no such feature list. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_feature_list_steps(const cairn_example *ex, const char *key,
                                                                        size_t *out);

/** The values of one feature, filled by cairn_example_values. The library writes the fields that
 * struct_size covers. Pointers are borrowed from the example until it is changed or freed. Since 1.1. */
typedef struct cairn_feature_values {
  uint32_t struct_size;    /**< sizeof(cairn_feature_values), set by the caller */
  cairn_feature_kind kind; /**< which list the feature holds */
  size_t count;            /**< values in it (byte strings for CAIRN_FEATURE_BYTES) */
  const float *floats;     /**< CAIRN_FEATURE_FLOAT: `count` floats; otherwise NULL */
  const int64_t *int64s;   /**< CAIRN_FEATURE_INT64: `count` int64s; otherwise NULL */
} cairn_feature_values;

/** The defaults of cairn_feature_values (see cairn_feature_values_init). Since 1.1. */
#define CAIRN_FEATURE_VALUES_INIT { (uint32_t)sizeof(cairn_feature_values), CAIRN_FEATURE_NONE, 0, NULL, NULL }

/** METHOD. The values of feature `key` (step CAIRN_EXAMPLE_NO_STEP), or of step `step` of feature
 * list `key` of a SequenceExample. Byte strings are read one at a time with cairn_example_bytes.
 * @param out  a struct whose struct_size the caller set (CAIRN_FEATURE_VALUES_INIT).
 * Errors: NOT_FOUND naming the key; OUT_OF_RANGE for a step past the list's end. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_values(const cairn_example *ex, const char *key, int64_t step,
                                                            cairn_feature_values *out);

/** METHOD. Byte string `index` of a bytes feature addressed as in cairn_example_values.
 * @param data  receives a pointer borrowed from the example (valid until it is changed or freed).
 * @param n     receives the string's length.
 * Errors: NOT_FOUND; INVALID_ARGUMENT when the feature is not a bytes list; OUT_OF_RANGE. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_example_bytes(const cairn_example *ex, const char *key, int64_t step,
                                                           size_t index, const void **data, size_t *n);

/** How a spec turns a feature of each record into tensors (see cairn_feature_spec). Since 1.1. */
typedef enum cairn_feature_spec_kind {
  CAIRN_FIXED_LEN = 1,          /**< 1 output: values [batch, shape...] */
  CAIRN_VAR_LEN = 2,            /**< 2 outputs: values [total], row_lengths int64 [batch] */
  CAIRN_FIXED_LEN_SEQUENCE = 3, /**< 2 outputs: values [batch, max_steps, shape...], lengths int64 [batch] */
  CAIRN_VAR_LEN_SEQUENCE = 4,   /**< 3 outputs: values [total], step_lengths int64 [total_steps], steps int64 [batch] */
  CAIRN_FEATURE_SPEC_KIND_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_feature_spec_kind;

/** One feature to parse (tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature and a
 * ragged sequence feature). dtype CAIRN_FLOAT32 reads float lists, CAIRN_INT64 int64 lists and
 * CAIRN_UINT8 byte lists, whose values are the bytes of the feature's strings concatenated (the C
 * API has no string tensors): FixedLen uint8 of shape [784] reads one 784-byte string, VarLen uint8
 * gives each record's bytes and their count. An array of specs takes its stride from the
 * struct_size of element 0; every element must have the same struct_size. Since 1.1. */
typedef struct cairn_feature_spec {
  uint32_t struct_size;          /**< sizeof(cairn_feature_spec) */
  const char *key;               /**< the feature's key; required */
  cairn_feature_spec_kind kind;  /**< default CAIRN_FIXED_LEN */
  cairn_dtype dtype;             /**< CAIRN_FLOAT32 (default), CAIRN_INT64 or CAIRN_UINT8 */
  const int64_t *shape;          /**< FixedLen: per record; FixedLenSequence: per step; `rank` dims, default NULL */
  size_t rank;                   /**< default 0 (one value) */
  /** FixedLen: the value of a missing feature (NULL, the default: missing is INVALID_ARGUMENT).
   * FixedLenSequence: the padding after a record's last step (NULL: zeros). The spec's dtype, with
   * one element (repeated) or the shape's element count; borrowed for the call. */
  const cairn_tensor *default_value;
} cairn_feature_spec;

/** The defaults of cairn_feature_spec (see cairn_feature_spec_init). Since 1.1. */
#define CAIRN_FEATURE_SPEC_INIT \
  { (uint32_t)sizeof(cairn_feature_spec), NULL, CAIRN_FIXED_LEN, CAIRN_FLOAT32, NULL, 0, NULL }

/** METHOD. How many outputs cairn_parse_examples / cairn_parse_sequence_examples give for these specs:
 * the sum over specs of 1 (FIXED_LEN), 2 (VAR_LEN), 2 (FIXED_LEN_SEQUENCE), 3 (VAR_LEN_SEQUENCE).
 * Errors: INVALID_ARGUMENT for an unknown kind or a bad struct_size. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_parse_num_outputs(const cairn_feature_spec *specs, size_t n_specs,
                                                               size_t *out);

/** METHOD. Parses `n` serialized tf.train.Examples into CPU tensors, as tf.io.parse_example does,
 * on the context's thread pool in blocks of 64 records (results do not depend on the thread count).
 * @param records  `n` pointers to records of `lens[i]` bytes, borrowed for the call.
 * @param specs    `n_specs` FIXED_LEN or VAR_LEN specs with distinct keys.
 * @param outputs  `n_outputs` slots (cairn_parse_num_outputs), receiving each spec's outputs in spec
 *                 order (FIXED_LEN: values; VAR_LEN: values, row_lengths); new tensors the caller
 *                 frees; untouched on error.
 * Errors: DATA_LOSS for a malformed record; INVALID_ARGUMENT for a bad spec, a missing feature
 * without default, a wrong value count or a dtype mismatch. Messages name the record index and the
 * key. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_parse_examples(cairn_context *ctx, const void *const *records,
                                                            const size_t *lens, size_t n,
                                                            const cairn_feature_spec *specs, size_t n_specs,
                                                            cairn_tensor **outputs, size_t n_outputs);

/** METHOD. Parses `n` serialized tf.train.SequenceExamples, as tf.io.parse_sequence_example does:
 * FIXED_LEN and VAR_LEN specs read context features, FIXED_LEN_SEQUENCE and VAR_LEN_SEQUENCE specs
 * feature lists (a missing feature list has 0 steps). Keys are distinct within each group. Outputs
 * in spec order: FIXED_LEN_SEQUENCE gives values [n, max_steps, shape...] padded with the default
 * and lengths [n]; VAR_LEN_SEQUENCE gives values [total], step_lengths [total_steps] and steps [n].
 * Arguments and errors as cairn_parse_examples; messages also name the step. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_parse_sequence_examples(cairn_context *ctx, const void *const *records,
                                                                     const size_t *lens, size_t n,
                                                                     const cairn_feature_spec *specs, size_t n_specs,
                                                                     cairn_tensor **outputs, size_t n_outputs);

/** METHOD. Fills a cairn_feature_spec with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_feature_spec_init(cairn_feature_spec *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_feature_values with its defaults (for cairn_example_values). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_feature_values_init(cairn_feature_values *opts, uint32_t struct_size);

/* ---------------------------------------------------------------------------------------------
 * Summaries (tf.summary): TensorBoard event files
 *
 * A summary writer owns one event file in its log directory, named as TensorFlow 2 names them:
 * "<logdir>/events.out.tfevents.<unix seconds>.<hostname>.<pid>.<n><filename_suffix>". Summary calls
 * queue the event and return; a background thread writes it. Events reach the file on
 * cairn_summary_writer_flush, on close, and every flush_millis (default 1000 ms, so short runs show
 * their data). An error of the background thread (a full disk, a deleted log directory) is returned
 * by the next summary call, flush or close on that writer, once; the writer goes on in a new file.
 *
 * Values are written in TensorFlow 2's form: scalars as float32 scalars (plugin "scalars"),
 * histograms as [k, 3] float64 (left, right, count) with TF2's bucketing, images as PNGs, audio as
 * 16-bit WAV, text as strings. The tensor forms (scalar_tensor, histogram, image, audio) run as ops:
 * called inside a compiled function (cairn_function) they are recorded and write on every call of
 * the function, with the default step read when it runs.
 *
 * Writer and step: `w` NULL means the process-wide default writer (cairn_summary_writer_set_default)
 * at the time the summary runs; with none set, the call writes nothing and succeeds, as tf.summary
 * does. `step` CAIRN_SUMMARY_DEFAULT_STEP means the process-wide default step
 * (cairn_summary_set_step); with none set, INVALID_ARGUMENT naming the tag.
 *
 * Threads: a writer may be used from several threads at once; events of one thread keep their
 * order.
 * ------------------------------------------------------------------------------------------- */

/** A summary writer (tf.summary.create_file_writer); free with cairn_summary_writer_free(). Since 1.1. */
typedef struct cairn_summary_writer cairn_summary_writer;

/** "Use the default step": the `step` argument of the summary calls. Since 1.1. */
#define CAIRN_SUMMARY_DEFAULT_STEP INT64_MIN

/** Options of cairn_summary_writer_create; start from CAIRN_SUMMARY_WRITER_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_summary_writer_options {
  uint32_t struct_size;        /**< sizeof(cairn_summary_writer_options) */
  int64_t max_queue;           /**< events pending before the writer thread writes them; default 10, >= 1 (callers wait at max(1024, 4 x max_queue)) */
  int64_t flush_millis;        /**< flush timer in milliseconds; default 1000; 0 = only on flush and close */
  const char *filename_suffix; /**< appended to the file name (a "." is put before it when missing); NULL = ".v2" (default) */
} cairn_summary_writer_options;

/** The defaults of cairn_summary_writer_options (see cairn_summary_writer_options_init). Since 1.1. */
#define CAIRN_SUMMARY_WRITER_OPTIONS_INIT { (uint32_t)sizeof(cairn_summary_writer_options), 10, 1000, NULL }

/** METHOD. Fills a cairn_summary_writer_options with its defaults (for cairn_summary_writer_create). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_writer_options_init(cairn_summary_writer_options *opts,
                                                                         uint32_t struct_size);

/** CONSTRUCTOR. A writer for `logdir` (created with its parents when missing) with a new event file
 * whose first record is file_version "brain.Event:2".
 * @param opts  NULL for the defaults.
 * @param out   receives the writer; free with cairn_summary_writer_free().
 * Errors: INVALID_ARGUMENT for NULL or bad options; FAILED_PRECONDITION naming the directory when
 * it cannot be created; the file's own error (naming it) when it cannot be opened. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_writer_create(const char *logdir,
                                                                   const cairn_summary_writer_options *opts,
                                                                   cairn_summary_writer **out);

/** METHOD. Writes every queued event and pushes the file to the operating system; returns when done.
 * Errors: a pending error of the background thread; FAILED_PRECONDITION after close. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_writer_flush(cairn_summary_writer *w);

/** METHOD. Flushes, stops the writer thread and closes the file; later summary calls on `w` fail with
 * FAILED_PRECONDITION. Closing twice is fine. Errors: a pending error of the background thread. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_writer_close(cairn_summary_writer *w);

/** DESTRUCTOR. Frees the handle. The writer closes when no handle and no default-writer setting
 * refers to it any more (errors of that close are lost: call cairn_summary_writer_close to see
 * them). Compiled functions that recorded summaries to it then fail with FAILED_PRECONDITION. NULL is
 * fine. Since 1.1. */
CAIRN_API void cairn_summary_writer_free(cairn_summary_writer *w);

/** METHOD. The path of the event file being written (a new file after the old one was deleted).
 * @param out  receives the path; free with cairn_free(). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_writer_path(const cairn_summary_writer *w, char **out);

/** Makes `w` the process-wide default writer (tf.summary's `with writer.as_default()`); it holds a
 * reference until replaced. NULL clears it. Since 1.1. */
CAIRN_API void cairn_summary_writer_set_default(cairn_summary_writer *w);

/** Sets the process-wide default step (tf.summary.experimental.set_step);
 * CAIRN_SUMMARY_DEFAULT_STEP unsets it. Since 1.1. */
CAIRN_API void cairn_summary_set_step(int64_t step);

/** The process-wide default step; CAIRN_SUMMARY_DEFAULT_STEP when unset. Since 1.1. */
CAIRN_API int64_t cairn_summary_step(void);

/** METHOD. tf.summary.scalar from a host value: queues a float32 scalar. Costs well under a
 * microsecond on the calling thread. Not recorded inside compiled functions (use
 * cairn_summary_scalar_tensor there).
 * @param w     the writer, or NULL for the default writer.
 * @param step  the step, or CAIRN_SUMMARY_DEFAULT_STEP.
 * Errors: INVALID_ARGUMENT for a NULL tag or no step; a pending background error. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_scalar(cairn_summary_writer *w, const char *tag, double value,
                                                            int64_t step);

/** METHOD. tf.summary.text: a string (UTF-8, NUL-terminated) for the text plugin. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_text(cairn_summary_writer *w, const char *tag, const char *text,
                                                          int64_t step);

/** METHOD. tf.summary.scalar from a tensor: `t` is a rank-0 tensor of a real dtype or bool, written
 * as float32. Eager: writes now. Inside a compiled function: records an op that writes on every call.
 * Errors: INVALID_ARGUMENT naming the tag for another rank or dtype. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_scalar_tensor(cairn_context *ctx, cairn_summary_writer *w,
                                                                   const char *tag, const cairn_tensor *t,
                                                                   int64_t step);

/** METHOD. tf.summary.histogram: TF2's `buckets` equal-width buckets from the minimum to the maximum
 * of `t` (any real dtype and shape), written as a [buckets, 3] float64 tensor; buckets <= 0 gives 30
 * (TF2's default). All-equal values put their count in the last bucket; no values give zero rows.
 * Errors: INVALID_ARGUMENT naming the tag for a NaN or infinite value or a bad dtype. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_histogram(cairn_context *ctx, cairn_summary_writer *w,
                                                               const char *tag, const cairn_tensor *t, int64_t buckets,
                                                               int64_t step);

/** METHOD. tf.summary.image: `images` is a [k, height, width, channels] batch with 1 (gray), 3 (RGB)
 * or 4 (RGBA) channels, uint8 or float (clamped to [0, 1] and scaled to 0..255); the first
 * `max_outputs` images are written as PNGs (max_outputs < 0 gives 3, TF2's default).
 * Errors: INVALID_ARGUMENT naming the tag for a bad shape or dtype. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_image(cairn_context *ctx, cairn_summary_writer *w,
                                                           const char *tag, const cairn_tensor *images,
                                                           int64_t max_outputs, int64_t step);

/** METHOD. tf.summary.audio: `audio` is a [k, frames, channels] float batch in [-1, 1] (clamped);
 * the first `max_outputs` clips are written as 16-bit PCM WAV files at `sample_rate` Hz (a whole
 * number; max_outputs < 0 gives 3).
 * Errors: INVALID_ARGUMENT naming the tag for a bad shape, dtype or sample rate. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_audio(cairn_context *ctx, cairn_summary_writer *w,
                                                           const char *tag, const cairn_tensor *audio,
                                                           double sample_rate, int64_t max_outputs, int64_t step);

/** METHOD. tf.summary.graph: writes the graph of trace `index` of the compiled function `fn` (see
 * cairn_function_num_traces) as a binary tensorflow.GraphDef event, which TensorBoard's graph
 * dashboard draws. Inputs are Placeholders, variables VarHandleOps, and each cond or while loop an
 * If or While node whose branches are functions in the GraphDef's library (docs/graph_export.md).
 * @param w     the writer, or NULL for the default writer (none set: nothing is written).
 * @param step  the step, or CAIRN_SUMMARY_DEFAULT_STEP.
 * Errors: INVALID_ARGUMENT for a NULL fn or no step; OUT_OF_RANGE for an index past the traces; a
 * pending background error. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_summary_graph(cairn_summary_writer *w, const cairn_function *fn,
                                                           size_t index, int64_t step);

/* ---------------------------------------------------------------------------------------------
 * Profiler (tf.profiler, tf.summary.trace_on/trace_export)
 *
 * Process-wide: while on, each eager op, each node of a function replay (and each replay) and, on
 * Vulkan, each batch of GPU work (GPU timestamps mapped onto the host clock) records its name,
 * device, start and duration. Off, an op pays one predictable branch. Export as Chrome trace-event
 * JSON (Perfetto, chrome://tracing) or into a TensorBoard log directory. See docs/profiler.md.
 * ------------------------------------------------------------------------------------------- */

/** An opaque stopped profile (cairn_profiler_stop); freed by cairn_profile_free. Since 1.1. */
typedef struct cairn_profile cairn_profile;

/** Options of cairn_profiler_start; start from CAIRN_PROFILER_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_profiler_options {
  uint32_t struct_size;         /**< sizeof(cairn_profiler_options) */
  uint64_t max_events;          /**< events kept (later ones are counted as dropped); default 1000000, > 0 */
  cairn_bool vulkan_timestamps; /**< GPU timestamps on Vulkan devices that support them; default 1 */
} cairn_profiler_options;

/** The defaults of cairn_profiler_options (see cairn_profiler_options_init). Since 1.1. */
#define CAIRN_PROFILER_OPTIONS_INIT { (uint32_t)sizeof(cairn_profiler_options), 1000000, 1 }

/** METHOD. Fills a cairn_profiler_options with its defaults (for cairn_profiler_start). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profiler_options_init(cairn_profiler_options *opts, uint32_t struct_size);

/** FUNCTION. Turns the profiler on for the whole process (NULL opts: defaults), clearing what an
 * earlier profile left. Errors: FAILED_PRECONDITION when it is already on; INVALID_ARGUMENT for
 * max_events 0 or a bad struct_size. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profiler_start(const cairn_profiler_options *opts);

/** FUNCTION. Whether the profiler is on. Since 1.1. */
CAIRN_API cairn_bool cairn_profiler_active(void);

/** FUNCTION. Turns the profiler off and hands over what it recorded, events sorted by start.
 * Errors: FAILED_PRECONDITION when it is off; INVALID_ARGUMENT for NULL out. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profiler_stop(cairn_profile **out);

/** METHOD. How many events the profile holds. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profile_event_count(const cairn_profile *p, size_t *out);

/** METHOD. How many events were dropped because max_events were already kept. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profile_dropped(const cairn_profile *p, uint64_t *out);

/** METHOD. Event `index`: its name (op "Add", replayed node "MatMul_3", function, or GPU batch),
 * category ("eager", "graph", "function" or "gpu"), device ("cpu", "vulkan:0"), start in
 * nanoseconds from cairn_profiler_start and duration in nanoseconds. Strings live as long as the
 * profile; any out pointer may be NULL. Errors: OUT_OF_RANGE for index >= the event count. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profile_event(const cairn_profile *p, size_t index, const char **name,
                                                           const char **category, const char **device,
                                                           int64_t *start_ns, int64_t *duration_ns);

/** METHOD. The profile as Chrome trace-event JSON (malloc'd; free with cairn_free). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profile_chrome_trace(const cairn_profile *p, char **json_out);

/** METHOD. Writes the Chrome trace-event JSON to `path`. Errors: UNAVAILABLE naming the path. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profile_export_chrome_trace(const cairn_profile *p, const char *path);

/** METHOD. Writes the trace gzipped where TensorBoard's profile plugin looks:
 * `LOGDIR/plugins/profile/RUN_NAME/HOSTNAME.trace.json.gz` (directories made as needed). NULL or
 * "" run_name: the date and time. path_out (may be NULL) gets the file's path (malloc'd; free with
 * cairn_free). Errors: INVALID_ARGUMENT for a run_name with '/'; UNAVAILABLE naming the path. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_profile_export_to_logdir(const cairn_profile *p, const char *logdir,
                                                                      const char *run_name, char **path_out);

/** DESTRUCTOR. Frees the profile. NULL is fine. Since 1.1. */
CAIRN_API void cairn_profile_free(cairn_profile *p);

/* ---------------------------------------------------------------------------------------------
 * Datasets and iterators (tf.data)
 *
 * A cairn_dataset is an immutable description of a pipeline: a source (tensors, a range, text or
 * CSV files, TFRecord files, a host generator) and transformations (map, filter, batch, shuffle,
 * ...). Each transformation returns a new dataset and leaves its input untouched (the caller still
 * frees it); datasets may be shared and used from several threads. Elements are structures of
 * tensors: a fixed list of named components, each with a dtype and a shape whose dims may be -1
 * (unknown). Element specs are checked when a pipeline is built: a transformation that cannot
 * apply to its input's spec fails then, naming the transformation and the components. Cairn has
 * no string tensors: a byte string (a text line, a file name, a record, a CSV string field) is a
 * uint8 vector, shape [-1], holding its bytes.
 *
 * An iterator runs a dataset. It is a tracked object (CAIRN_OBJECT_ITERATOR): set it as an edge
 * of a checkpoint's root, beside the model and the optimizer, and it saves and restores with them
 * (under "<path>/.ATTRIBUTES/ITERATOR_STATE"). After a restore the elements continue exactly as an
 * uninterrupted run's would, bit for bit, whatever the parallelism. The state is small: for
 * pipelines over indexable sources (tensors, range, text and CSV files, uncompressed TFRecord
 * files) the position is a few integers and shuffle is a seeded permutation of indices, not a
 * buffer. Stages that must buffer a stream (shuffle after filter, a stream prefetch) save their
 * buffers explicitly; cairn_iterator_save reports the size. docs/data.md has the model.
 *
 * End of data is the status CAIRN_OUT_OF_RANGE from cairn_iterator_next (as TensorFlow's
 * OutOfRangeError); an OUT_OF_RANGE raised inside a map or filter function becomes
 * INVALID_ARGUMENT so it cannot end the data by accident. An error in a transformation names it and
 * the element ("map 'normalize' (element 17): ..."); that element is skipped and the iterator stays
 * usable: the next call continues with the element after it.
 *
 * Random ops inside map and filter functions are deterministic whatever the parallelism: each
 * element's random stream is keyed by (seed, epoch, element index) with the counter-based Philox
 * the random ops use. Ops with an explicit non-zero seed attribute keep it.
 *
 * Threads: datasets are immutable and may be used from any thread. An iterator may be called from
 * several threads at once (each element goes to exactly one caller). Host callbacks (map, filter,
 * generator and interleave functions) are called from Cairn's worker threads, possibly several at
 * once; a callback with compile = 1 runs only while tracing. Closing or freeing the last reference
 * to an iterator stops its threads before returning.
 * ------------------------------------------------------------------------------------------- */

/** num_parallel_calls, cycle_length or a buffer size chosen by Cairn (tf.data.AUTOTUNE). Since 1.1. */
#define CAIRN_AUTOTUNE (-1)
/** cairn_dataset_cardinality of a dataset that never ends (repeat forever). Since 1.1. */
#define CAIRN_INFINITE_CARDINALITY (-1)
/** cairn_dataset_cardinality when the count is not known without running it (filter). Since 1.1. */
#define CAIRN_UNKNOWN_CARDINALITY (-2)

/** An immutable input pipeline; free with cairn_dataset_free. Since 1.1. */
typedef struct cairn_dataset cairn_dataset;

/** DESTRUCTOR. Frees the handle; datasets built from it keep what they need. NULL is fine. Since 1.1. */
CAIRN_API void cairn_dataset_free(cairn_dataset *ds);

/** METHOD. The number of components of each element; 0 for NULL. Since 1.1. */
CAIRN_API size_t cairn_dataset_num_components(const cairn_dataset *ds);

/** METHOD. Component `index` of the element spec.
 * @param name   receives its name, borrowed from the dataset (NULL to skip).
 * @param dtype  receives its dtype (NULL to skip).
 * @param shape  receives its dims, -1 where unknown, borrowed from the dataset (NULL to skip).
 * @param rank   receives its rank (NULL to skip).
 * Errors: OUT_OF_RANGE for index >= cairn_dataset_num_components; INVALID_ARGUMENT for NULL ds. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_component(const cairn_dataset *ds, size_t index, const char **name,
                                                               cairn_dtype *dtype, const int64_t **shape, size_t *rank);

/** METHOD. The number of elements: CAIRN_INFINITE_CARDINALITY, CAIRN_UNKNOWN_CARDINALITY, or a count;
 * CAIRN_UNKNOWN_CARDINALITY for NULL. Since 1.1. */
CAIRN_API int64_t cairn_dataset_cardinality(const cairn_dataset *ds);

/** METHOD. The pipeline as text, as errors name it: "range(0, 10, 1).map('f', parallel=4).batch(32)".
 * @param out  receives the text; free with cairn_free. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_describe(const cairn_dataset *ds, char **out);

/* ---- Sources ---- */

/** CONSTRUCTOR. A dataset of one element: the tensors, as tf.data.Dataset.from_tensors.
 * @param names    `n` component names, or NULL for "0", "1", ...; names must be unique and non-empty.
 * @param tensors  `n` tensors (n >= 1), borrowed; the dataset keeps its own references.
 * Errors: INVALID_ARGUMENT for n 0, a NULL tensor or a bad or duplicate name. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_from_tensors(cairn_context *ctx, const char *const *names,
                                                                  cairn_tensor *const *tensors, size_t n,
                                                                  cairn_dataset **out);

/** CONSTRUCTOR. One element per row of the tensors' first dimension, as from_tensor_slices: every
 * tensor must have rank >= 1 and the same first dimension. Arguments as cairn_dataset_from_tensors.
 * Errors: INVALID_ARGUMENT naming both shapes when first dimensions differ, or for a scalar. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_from_tensor_slices(cairn_context *ctx, const char *const *names,
                                                                        cairn_tensor *const *tensors, size_t n,
                                                                        cairn_dataset **out);

/** CONSTRUCTOR. int64 scalars start, start + step, ... before stop (tf.data.Dataset.range); one
 * component "value". Errors: INVALID_ARGUMENT for step 0. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_range(cairn_context *ctx, int64_t start, int64_t stop, int64_t step,
                                                           cairn_dataset **out);

/** CONSTRUCTOR. The lines of text files in order, without their line ends (tf.data.TextLineDataset):
 * one component "line", the line's bytes as a uint8 vector. A file's line index is built the first time it is read, so
 * the position is an index. Errors (at the first read): NOT_FOUND naming the path. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_text_lines(cairn_context *ctx, const char *const *paths,
                                                                size_t n_paths, cairn_dataset **out);

/** Options of cairn_dataset_csv (tf.data.experimental.CsvDataset); start from CAIRN_CSV_OPTIONS_INIT.
 * Since 1.1. */
typedef struct cairn_csv_options {
  uint32_t struct_size;               /**< sizeof(cairn_csv_options) */
  const cairn_dtype *column_dtypes;   /**< required: one per output column, float32, float64, int32,
                                           int64, or CAIRN_STRING (the field's bytes as a uint8
                                           vector); borrowed for the call */
  size_t n_columns;                   /**< entries of column_dtypes */
  const char *const *column_defaults; /**< NULL (default) or one per output column: the text an empty
                                           or na_value field takes; a NULL entry makes the column required */
  const char *const *column_names;    /**< NULL (default): the header's names when header is set, else
                                           "0", "1", ...; or one per output column */
  const int64_t *select_columns;      /**< NULL (default): every column of the file; or n_columns
                                           increasing file column indexes */
  cairn_bool header;                  /**< skip each file's first line (and take names from it); default 0 */
  int32_t delimiter;                  /**< the field separator, one ASCII character; default ',' */
  const char *na_value;               /**< a field that counts as missing; default NULL (only empty fields) */
} cairn_csv_options;

/** The defaults of cairn_csv_options (see cairn_csv_options_init). Since 1.1. */
#define CAIRN_CSV_OPTIONS_INIT { (uint32_t)sizeof(cairn_csv_options), NULL, 0, NULL, NULL, NULL, 0, ',', NULL }

/** METHOD. Fills a cairn_csv_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_csv_options_init(cairn_csv_options *opts, uint32_t struct_size);

/** CONSTRUCTOR. Records of CSV files (RFC 4180 quoting), one component per column: a scalar, or a
 * uint8 vector for CAIRN_STRING columns. A file's record index is built the first time it is read.
 * Errors when built: INVALID_ARGUMENT for no columns, an unsupported dtype or a default that does
 * not parse; with header set and no column_names, the first file's header is read then (NOT_FOUND
 * naming a missing file). When read: INVALID_ARGUMENT "<path>:<line>: ..." for a field that does not parse, a
 * missing required field or a wrong number of fields. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_csv(cairn_context *ctx, const char *const *paths, size_t n_paths,
                                                         const cairn_csv_options *opts, cairn_dataset **out);

/** CONSTRUCTOR. The file names matching glob `patterns`, one component "filename" (a uint8 vector)
 * (tf.data.Dataset.list_files): sorted, then a seeded permutation when `shuffle` is set (each
 * iteration of a repeat reshuffles). Errors: NOT_FOUND naming the patterns when nothing matches. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_list_files(cairn_context *ctx, const char *const *patterns,
                                                                size_t n_patterns, cairn_bool shuffle, int64_t seed,
                                                                cairn_dataset **out);

/** Options of cairn_dataset_tfrecord; start from CAIRN_TFRECORD_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_tfrecord_options {
  uint32_t struct_size;          /**< sizeof(cairn_tfrecord_options) */
  cairn_compression compression; /**< default CAIRN_COMPRESSION_NONE */
  int32_t num_parallel_reads;    /**< files read at once, interleaved one record each in a fixed
                                      order; 0 (default): one after another; or CAIRN_AUTOTUNE */
  uint64_t buffer_size;          /**< bytes per read; default 0 (1 MiB) */
} cairn_tfrecord_options;

/** The defaults of cairn_tfrecord_options (see cairn_tfrecord_options_init). Since 1.1. */
#define CAIRN_TFRECORD_OPTIONS_INIT { (uint32_t)sizeof(cairn_tfrecord_options), CAIRN_COMPRESSION_NONE, 0, 0 }

/** METHOD. Fills a cairn_tfrecord_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tfrecord_options_init(cairn_tfrecord_options *opts, uint32_t struct_size);

/** CONSTRUCTOR. The records of TFRecord files (tf.data.TFRecordDataset): one component "record", the
 * record's bytes as a uint8 vector. Uncompressed files are indexable (their `.cairnidx` sidecar, or an index built on first
 * read), so the position is an index; compressed ones are read as streams.
 * Errors when read: NOT_FOUND naming the path; DATA_LOSS naming the path and offset. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_tfrecord(cairn_context *ctx, const char *const *paths,
                                                              size_t n_paths, const cairn_tfrecord_options *opts,
                                                              cairn_dataset **out);

/** A generator: set the `n_outputs` outputs to new tensors for element `index` (0, 1, ... within
 * one iteration) and *got to CAIRN_TRUE, or set *got to CAIRN_FALSE at the end. A generator that
 * returns the same element for the same index makes restores exact; one that ignores the index
 * still works, but resumes from wherever it is. Called from worker threads, one call at a time per
 * iteration. Return NULL or an error status. Since 1.1. */
typedef cairn_status *(*cairn_generator_fn)(void *user_data, cairn_context *ctx, int64_t index,
                                            cairn_tensor **outputs, size_t n_outputs, cairn_bool *got);

/** CONSTRUCTOR. Elements from a host generator with a declared element spec (from_generator).
 * @param names    `n` component names (NULL: "0", "1", ...).
 * @param specs    `n` specs (dtype and shape, -1 dims allowed); each element is checked against them.
 * @param release  called once with user_data when the last dataset using it is freed (NULL: none).
 * Errors when read: the callback's status; INVALID_ARGUMENT naming the component when an output
 * does not match its spec. When this call fails, release is not called: the caller still owns
 * user_data. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_from_generator(cairn_context *ctx, const char *const *names,
                                                                    const cairn_tensor_spec *specs, size_t n,
                                                                    cairn_generator_fn fn, void *user_data,
                                                                    void (*release)(void *user_data),
                                                                    cairn_dataset **out);

/* ---- Transformations (each returns a new dataset; `in` stays the caller's) ---- */

/** Options of cairn_dataset_map; start from CAIRN_MAP_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_map_options {
  uint32_t struct_size;                 /**< sizeof(cairn_map_options) */
  int32_t num_parallel_calls;           /**< 0 (default): one element at a time; 1 to 1024 threads, or
                                             CAIRN_AUTOTUNE */
  cairn_bool deterministic;             /**< deliver in input order; default 1 */
  cairn_bool compile;                   /**< 1 (default): trace fn once per element spec and replay the
                                             graph; 0: call fn eagerly for every element */
  const char *const *output_names;      /**< NULL (default): "0", "1", ...; or n_outputs names */
  const cairn_tensor_spec *output_specs;/**< the outputs' specs: required when compile is 0; with
                                             compile 1, NULL (default) takes them from the trace */
  size_t n_outputs;                     /**< outputs of fn; required (>= 1) */
  int64_t seed;                         /**< key of fn's random ops with seeds 0: default 0, the
                                             context's seed */
  void (*release)(void *user_data);     /**< called once when the last dataset using fn is freed; not called when the call fails (the caller keeps user_data) */
} cairn_map_options;

/** The defaults of cairn_map_options (see cairn_map_options_init). Since 1.1. */
#define CAIRN_MAP_OPTIONS_INIT { (uint32_t)sizeof(cairn_map_options), 0, 1, 1, NULL, NULL, 0, 0, NULL }

/** METHOD. Fills a cairn_map_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_map_options_init(cairn_map_options *opts, uint32_t struct_size);

/** CONSTRUCTOR. Applies `fn` to every element (Dataset.map): its inputs are the element's
 * components in order, its outputs the new element's. With compile = 1, fn is traced when the
 * pipeline is built (on symbolic tensors with the input's spec), so a wrong fn fails here.
 * @param name  names the map in errors and descriptions (NULL: "map").
 * Errors when built: INVALID_ARGUMENT for NULL fn, n_outputs 0, missing output_specs with compile 0,
 * bad names; the callback's status while tracing (release is not called when this call fails).
 * When read: "map '<name>' (element N): <error>". Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_map(const cairn_dataset *in, const char *name, cairn_function_fn fn,
                                                         void *user_data, const cairn_map_options *opts,
                                                         cairn_dataset **out);

/** Options of cairn_dataset_filter; start from CAIRN_FILTER_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_filter_options {
  uint32_t struct_size;             /**< sizeof(cairn_filter_options) */
  cairn_bool compile;               /**< as cairn_map_options.compile; default 1 */
  int64_t seed;                     /**< as cairn_map_options.seed; default 0 */
  void (*release)(void *user_data); /**< called once when the last dataset using fn is freed; not called when the call fails (the caller keeps user_data) */
} cairn_filter_options;

/** The defaults of cairn_filter_options (see cairn_filter_options_init). Since 1.1. */
#define CAIRN_FILTER_OPTIONS_INIT { (uint32_t)sizeof(cairn_filter_options), 1, 0, NULL }

/** METHOD. Fills a cairn_filter_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_filter_options_init(cairn_filter_options *opts, uint32_t struct_size);

/** CONSTRUCTOR. Keeps the elements for which `fn` (one output: a bool scalar) is true (Dataset.filter).
 * The result is a stream: its cardinality is unknown and a shuffle after it buffers.
 * @param name  names the filter in errors (NULL: "filter").
 * Errors: INVALID_ARGUMENT naming the filter when fn's output is not a bool scalar (release is not
 * called when this call fails). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_filter(const cairn_dataset *in, const char *name, cairn_function_fn fn,
                                                            void *user_data, const cairn_filter_options *opts,
                                                            cairn_dataset **out);

/** CONSTRUCTOR. Stacks `batch_size` consecutive elements into one (Dataset.batch): each component
 * gains a leading dimension. The last batch is smaller unless drop_remainder is set.
 * Errors when built: INVALID_ARGUMENT for batch_size < 1. When read: INVALID_ARGUMENT naming the
 * component, the element and both shapes when elements of one batch differ in shape. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_batch(const cairn_dataset *in, int64_t batch_size,
                                                           cairn_bool drop_remainder, cairn_dataset **out);

/** CONSTRUCTOR. Batches elements of different shapes by padding them (Dataset.padded_batch).
 * @param padded_shapes   NULL (pad every dim to the batch's largest), or one spec per component
 *                        (its dtype is ignored): a dim of -1 pads to the batch's largest, a fixed
 *                        dim pads to that size (a longer element is an error).
 * @param padding_values  NULL (zeros, "" for strings), or one per component: NULL or a scalar of
 *                        the component's dtype; borrowed for the call.
 * Errors: INVALID_ARGUMENT for batch_size < 1, a rank or dtype mismatch, an element larger than its
 * padded shape (naming component, element and shapes). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_padded_batch(const cairn_dataset *in, int64_t batch_size,
                                                                  cairn_bool drop_remainder,
                                                                  const cairn_tensor_spec *padded_shapes,
                                                                  cairn_tensor *const *padding_values,
                                                                  cairn_dataset **out);

/** CONSTRUCTOR. Splits each element along its first dimension (Dataset.unbatch). Errors:
 * INVALID_ARGUMENT for a scalar component or components whose first dims differ. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_unbatch(const cairn_dataset *in, cairn_dataset **out);

/** CONSTRUCTOR. Shuffles (Dataset.shuffle). Over an indexable input the order is a seeded
 * permutation of the whole input (better mixing than any buffer, and nothing to save); over a
 * stream, a buffer of buffer_size elements as TensorFlow's. With reshuffle_each_iteration each
 * iteration (each pass of an enclosing repeat, each new iterator) has its own order; otherwise all
 * share one. Errors: INVALID_ARGUMENT for buffer_size < 1. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_shuffle(const cairn_dataset *in, int64_t buffer_size, int64_t seed,
                                                             cairn_bool reshuffle_each_iteration, cairn_dataset **out);

/** CONSTRUCTOR. The input `count` times; -1 forever (Dataset.repeat). Errors: INVALID_ARGUMENT for
 * count < -1. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_repeat(const cairn_dataset *in, int64_t count, cairn_dataset **out);

/** CONSTRUCTOR. The first `count` elements; -1 all (Dataset.take). Errors: INVALID_ARGUMENT for
 * count < -1. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_take(const cairn_dataset *in, int64_t count, cairn_dataset **out);

/** CONSTRUCTOR. All but the first `count` elements; -1 skips all (Dataset.skip). Errors:
 * INVALID_ARGUMENT for count < -1. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_skip(const cairn_dataset *in, int64_t count, cairn_dataset **out);

/** CONSTRUCTOR. Every num_shards-th element starting at `index` (Dataset.shard). Errors:
 * INVALID_ARGUMENT for num_shards < 1 or index outside [0, num_shards). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_shard(const cairn_dataset *in, int64_t num_shards, int64_t index,
                                                           cairn_dataset **out);

/** Makes the dataset of one input element for cairn_dataset_interleave: set *out to a new dataset
 * (the interleave takes it) with the declared spec. Return NULL or an error status. Since 1.1. */
typedef cairn_status *(*cairn_dataset_fn)(void *user_data, cairn_context *ctx, cairn_tensor *const *element, size_t n,
                                          cairn_dataset **out);

/** Options of cairn_dataset_interleave; start from CAIRN_INTERLEAVE_OPTIONS_INIT. Since 1.1. */
typedef struct cairn_interleave_options {
  uint32_t struct_size;             /**< sizeof(cairn_interleave_options) */
  int32_t cycle_length;             /**< inner datasets open at once; default CAIRN_AUTOTUNE (the CPUs) */
  int32_t block_length;             /**< consecutive elements from each before moving on; default 1 */
  int32_t num_parallel_calls;       /**< inner datasets read ahead in parallel, at most 1024; default 0 (none) */
  cairn_bool deterministic;         /**< the fixed round-robin order; default 1 */
  void (*release)(void *user_data); /**< called once when the last dataset using fn is freed; not called when the call fails (the caller keeps user_data) */
} cairn_interleave_options;

/** The defaults of cairn_interleave_options (see cairn_interleave_options_init). Since 1.1. */
#define CAIRN_INTERLEAVE_OPTIONS_INIT { (uint32_t)sizeof(cairn_interleave_options), CAIRN_AUTOTUNE, 1, 0, 1, NULL }

/** METHOD. Fills a cairn_interleave_options with its defaults. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_interleave_options_init(cairn_interleave_options *opts,
                                                                     uint32_t struct_size);

/** CONSTRUCTOR. Maps each input element to a dataset with `fn` and interleaves their elements
 * (Dataset.interleave): cycle_length inner datasets at a time, block_length elements from each in
 * turn. Every inner dataset must have the declared spec (`names`, `specs`, `n`).
 * Errors when built: INVALID_ARGUMENT for NULL fn or a bad spec (release is not called then).
 * When read: INVALID_ARGUMENT naming the input element when fn's dataset has another spec. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_interleave(const cairn_dataset *in, cairn_dataset_fn fn, void *user_data,
                                                                const char *const *names, const cairn_tensor_spec *specs,
                                                                size_t n, const cairn_interleave_options *opts,
                                                                cairn_dataset **out);

/** CONSTRUCTOR. Computes up to `buffer_size` elements ahead on a background thread (Dataset.prefetch);
 * CAIRN_AUTOTUNE picks the size, and over an indexable pipeline also computes elements on every CPU
 * (so the functions of its maps must then tolerate concurrent calls; docs/data.md). Errors:
 * INVALID_ARGUMENT for buffer_size 0 or < -1. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_prefetch(const cairn_dataset *in, int64_t buffer_size,
                                                              cairn_dataset **out);

/** CONSTRUCTOR. Prefetches and copies every component to `device` ("cpu", "vulkan:0") ahead of
 * use, overlapping the copy with the caller's compute (tf.data.experimental.prefetch_to_device).
 * Errors: NOT_FOUND naming an unknown device; INVALID_ARGUMENT for a bad buffer_size. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_prefetch_to_device(const cairn_dataset *in, const char *device,
                                                                        int64_t buffer_size, cairn_dataset **out);

/** CONSTRUCTOR. Caches the elements (Dataset.cache): in memory when `filename` is NULL or "",
 * otherwise in the file `filename` (written during the first full pass, complete only when that
 * pass ends; later iterations read it). Errors when read: I/O errors naming the file. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_cache(const cairn_dataset *in, const char *filename,
                                                           cairn_dataset **out);

/** CONSTRUCTOR. Elements of `n` datasets side by side (Dataset.zip): the components of input 0,
 * then of input 1, ...; it ends with the shortest input. Errors: INVALID_ARGUMENT for n 0 or a
 * component name found in two inputs (rename with cairn_dataset_select). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_zip(const cairn_dataset *const *ins, size_t n, cairn_dataset **out);

/** CONSTRUCTOR. The elements of `a`, then those of `b` (Dataset.concatenate). The specs must have
 * the same names, dtypes and ranks; dims that differ become -1. Errors: INVALID_ARGUMENT naming
 * the component that differs. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_concatenate(const cairn_dataset *a, const cairn_dataset *b,
                                                                 cairn_dataset **out);

/** CONSTRUCTOR. Prepends an int64 scalar component "index" counting from `start` (Dataset.enumerate).
 * Errors: INVALID_ARGUMENT when the input already has a component "index". Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_enumerate(const cairn_dataset *in, int64_t start,
                                                               cairn_dataset **out);

/** CONSTRUCTOR. Keeps the components `names`, in that order, renamed to `new_names` (NULL: same).
 * Errors: NOT_FOUND naming a component that does not exist; INVALID_ARGUMENT for duplicates. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_select(const cairn_dataset *in, const char *const *names,
                                                            const char *const *new_names, size_t n,
                                                            cairn_dataset **out);

/** CONSTRUCTOR. Parses the serialized tf.train.Example in component `component` (a uint8 vector:
 * one record, as a TFRecord source gives) with `specs`, as cairn_parse_examples does for a batch of
 * one; the component is replaced by the parsed outputs without the batch dimension, named "<key>"
 * (FIXED_LEN) or "<key>/indices", "<key>/values" (VAR_LEN), in spec order. Batch after parsing.
 * Errors when built: NOT_FOUND for a missing component, INVALID_ARGUMENT for one that is not a
 * uint8 vector or for bad specs. When read: the parse error, naming the element. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_parse_example(const cairn_dataset *in, const char *component,
                                                                   const cairn_feature_spec *specs, size_t n_specs,
                                                                   cairn_dataset **out);

/* ---- Iterators ---- */

/** CONSTRUCTOR. An iterator over `ds` from its first element: a tracked object of kind
 * CAIRN_OBJECT_ITERATOR; free the handle with cairn_object_free (its threads stop when the last
 * reference, handle or checkpoint edge, goes). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dataset_iterate(const cairn_dataset *ds, cairn_object **out);

/** METHOD. The next element.
 * @param outputs    n_outputs slots (cairn_dataset_num_components), each receiving a new tensor;
 *                   untouched unless the result is NULL.
 * Returns NULL for an element; CAIRN_OUT_OF_RANGE "<pipeline>: end of data" at the end (again on
 * every later call); another error for a failed element (which is skipped).
 * Errors: INVALID_ARGUMENT for a wrong n_outputs or an object that is not an iterator;
 * FAILED_PRECONDITION after cairn_iterator_close. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_iterator_next(cairn_object *it, cairn_tensor **outputs, size_t n_outputs);

/** METHOD. Elements delivered since the start (restored with the state); -1 for NULL or another kind. Since 1.1. */
CAIRN_API int64_t cairn_iterator_position(const cairn_object *it);

/** METHOD. The iterator's state as bytes (what a checkpoint stores).
 * @param out  receives the bytes; free with cairn_free.
 * @param n    receives their count (the state's size). Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_iterator_save(cairn_object *it, void **out, size_t *n);

/** METHOD. Replaces the iterator's position with a saved state (of an iterator over the same
 * pipeline): the next element is the one the saved iterator would have returned next.
 * Errors: INVALID_ARGUMENT naming both pipelines when the state is for another one; DATA_LOSS for
 * corrupt bytes. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_iterator_restore(cairn_object *it, const void *state, size_t n);

/** METHOD. Stops the iterator's background threads and waits for them; later nexts are
 * FAILED_PRECONDITION. Calling it again does nothing. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_iterator_close(cairn_object *it);

/** METHOD. The dataset an iterator runs.
 * @param out  receives a new handle; free with cairn_dataset_free. Since 1.1. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_iterator_dataset(const cairn_object *it, cairn_dataset **out);

/* ---------------------------------------------------------------------------------------------
 * Models (tf.keras.Model): compile, fit, evaluate, predict, callbacks
 *
 * A model is a Sequential (every cairn_sequential_ and cairn_layer_ function works on it) that can
 * be compiled with an optimizer, a loss and metrics, then trained with cairn_model_fit. The
 * training step (forward pass under a tape, loss, gradients, optimizer update) runs as a compiled
 * function unless run_eagerly; the metrics are updated eagerly after each step. Compiling sets the
 * optimizer as the model's edge "optimizer" (as tf_keras does), so a checkpoint of the model
 * alone saves the optimizer and its slots.
 *
 * Data: a dataset whose elements are (x, y), more components ignored (predict uses x only), or
 * in-memory tensors x and y, batched by batch_size along the first dimension and, in fit, shuffled
 * each epoch (seeded).
 *
 * Logs: after each batch and epoch, callbacks see the named values "loss", then each compiled
 * metric, then after validation "val_loss", "val_...": the means so far in the epoch, the loss
 * weighted by batch size. Epochs and batches count from 0.
 *
 * Threads: one call of fit, evaluate, predict, train_on_batch or test_on_batch at a time per model;
 * a second concurrent call gets FAILED_PRECONDITION. Callback hooks run on the thread that called
 * fit. Since 1.2.
 * ------------------------------------------------------------------------------------------- */

/** Options of cairn_model_create; start from CAIRN_MODEL_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_model_options {
  uint32_t struct_size;                 /**< sizeof(cairn_model_options) */
  const char *name;                     /**< default NULL ("sequential", "sequential_1", ...) */
  const cairn_object *const *layers;    /**< default NULL: layers added in order, as cairn_sequential_add */
  size_t n_layers;                      /**< default 0 */
} cairn_model_options;

/** The defaults of cairn_model_options (see cairn_model_options_init). Since 1.2. */
#define CAIRN_MODEL_OPTIONS_INIT { (uint32_t)sizeof(cairn_model_options), NULL, NULL, 0 }

/** CONSTRUCTOR. A model: a Sequential that can be compiled and trained (keras.Sequential([...])).
 * @param opts  NULL for the defaults.
 * @param out   receives the model; free with cairn_object_free().
 * Errors: INVALID_ARGUMENT for a NULL layer or one that is not a layer. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_create(cairn_context *ctx, const cairn_model_options *opts,
                                                          cairn_object **out);

/** Options of cairn_model_compile; start from CAIRN_COMPILE_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_compile_options {
  uint32_t struct_size;                 /**< sizeof(cairn_compile_options) */
  cairn_object *optimizer;              /**< required: from cairn_optimizer_create; the model keeps a reference */
  const char *loss;                     /**< required: "sparse_categorical_crossentropy", "binary_crossentropy",
                                             "mean_squared_error" ("mse") or "mean_absolute_error" ("mae") */
  cairn_bool from_logits;               /**< default 1: the crossentropy losses take logits */
  const char *const *metrics;           /**< default NULL: "accuracy" (sparse or binary after the loss),
                                             "sparse_categorical_accuracy", "binary_accuracy", "mse", "mae" */
  size_t n_metrics;                     /**< default 0 */
  cairn_bool run_eagerly;               /**< default 0: the step runs as a compiled function */
} cairn_compile_options;

/** The defaults of cairn_compile_options (see cairn_compile_options_init). Since 1.2. */
#define CAIRN_COMPILE_OPTIONS_INIT { (uint32_t)sizeof(cairn_compile_options), NULL, NULL, 1, NULL, 0, 0 }

/** METHOD. Configures the model for training; compiling again replaces the configuration.
 * Errors: INVALID_ARGUMENT for a model that is not from cairn_model_create, a NULL or wrong-kind
 * optimizer, an unknown loss or metric, or a metric given twice. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_compile(cairn_object *model, const cairn_compile_options *opts);

/** The data of fit, evaluate and predict: a dataset, or tensors x and y. Start from
 * CAIRN_MODEL_DATA_INIT. Borrowed for the call. Since 1.2. */
typedef struct cairn_model_data {
  uint32_t struct_size;                 /**< sizeof(cairn_model_data) */
  const cairn_dataset *dataset;         /**< default NULL; when set, x and y must be NULL */
  const cairn_tensor *x;                /**< default NULL: inputs, the first dimension the samples */
  const cairn_tensor *y;                /**< default NULL: targets (not needed by predict) */
} cairn_model_data;

/** The defaults of cairn_model_data (see cairn_model_data_init). Since 1.2. */
#define CAIRN_MODEL_DATA_INIT { (uint32_t)sizeof(cairn_model_data), NULL, NULL, NULL }

/** A callback of fit and evaluate: built in (cairn_callback_model_checkpoint, ...) or made from
 * hooks with cairn_callback_create. A callback may be passed to several calls, one at a time.
 * Since 1.2. */
typedef struct cairn_callback cairn_callback;

/** Logs: named values, in order (see the section's introduction). Since 1.2. */
typedef struct cairn_logs cairn_logs;

/** The history fit returns: per log name, one value per epoch run. Since 1.2. */
typedef struct cairn_history cairn_history;

/** How fit reports progress. Since 1.2. */
typedef enum cairn_verbose {
  CAIRN_VERBOSE_SILENT = 0,       /**< nothing */
  CAIRN_VERBOSE_BAR = 1,          /**< Keras' progress bar with ETA, redrawn in place */
  CAIRN_VERBOSE_EPOCH_LINES = 2,  /**< "Epoch 1/10" then "45/45 - 1s - 5ms/step - loss: ..." */
  CAIRN_VERBOSE_AUTO = 3,         /**< a bar when stdout is a terminal, else one line per epoch */
  CAIRN_VERBOSE_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_verbose;

/** Options of cairn_model_fit; start from CAIRN_FIT_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_fit_options {
  uint32_t struct_size;                 /**< sizeof(cairn_fit_options) */
  int64_t epochs;                       /**< default 1 */
  int64_t batch_size;                   /**< default 32 (tensors only; a dataset is batched already) */
  int64_t initial_epoch;                /**< default 0: the epoch to start at (resuming) */
  int64_t steps_per_epoch;              /**< default 0: each epoch is one pass over the data. N > 0: N batches
                                             an epoch from one iterator that runs on across epochs (a repeated
                                             dataset); training stops if the data ends first */
  cairn_bool shuffle;                   /**< default 1 (tensors only): reshuffled each epoch */
  int64_t seed;                         /**< default 0: the shuffle's seed */
  const cairn_model_data *validation;   /**< default NULL: no validation */
  int64_t validation_batch_size;        /**< default 0: batch_size */
  int64_t validation_freq;              /**< default 1: validate after every N-th epoch */
  cairn_verbose verbose;                /**< default CAIRN_VERBOSE_AUTO */
  cairn_callback *const *callbacks;     /**< default NULL: called in order; borrowed for the call */
  size_t n_callbacks;                   /**< default 0 */
} cairn_fit_options;

/** The defaults of cairn_fit_options (see cairn_fit_options_init). Since 1.2. */
#define CAIRN_FIT_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_fit_options), 1, 32, 0, 0, 1, 0, NULL, 0, 1, CAIRN_VERBOSE_AUTO, NULL, 0 }

/** METHOD. Trains the model (keras Model.fit). Builds the model on the first batch if needed.
 * @param data  required.
 * @param opts  NULL for the defaults.
 * @param out   NULL, or receives the history; free with cairn_history_free().
 * Errors: FAILED_PRECONDITION for a model not compiled or busy; INVALID_ARGUMENT for bad options
 * (epochs below 1, initial_epoch not below epochs, batch_size below 1), data with both a dataset
 * and tensors, x and y with different sample counts, an infinite dataset without steps_per_epoch,
 * or a batch without two components; a step's error (a shape the model refuses) and a callback's
 * error as they were. On an error the weights keep the updates of the steps that ran. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_fit(cairn_object *model, const cairn_model_data *data,
                                                       const cairn_fit_options *opts, cairn_history **out);

/** Options of cairn_model_evaluate; start from CAIRN_EVALUATE_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_evaluate_options {
  uint32_t struct_size;                 /**< sizeof(cairn_evaluate_options) */
  int64_t batch_size;                   /**< default 32 (tensors only) */
  int64_t steps;                        /**< default 0: until the data ends */
  cairn_callback *const *callbacks;     /**< default NULL: their test hooks run */
  size_t n_callbacks;                   /**< default 0 */
} cairn_evaluate_options;

/** The defaults of cairn_evaluate_options (see cairn_evaluate_options_init). Since 1.2. */
#define CAIRN_EVALUATE_OPTIONS_INIT { (uint32_t)sizeof(cairn_evaluate_options), 32, 0, NULL, 0 }

/** METHOD. The loss and metrics over the data (keras Model.evaluate), in training=false mode.
 * @param out  receives the logs; free with cairn_logs_free().
 * Errors: as cairn_model_fit. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_evaluate(cairn_object *model, const cairn_model_data *data,
                                                            const cairn_evaluate_options *opts, cairn_logs **out);

/** Options of cairn_model_predict; start from CAIRN_PREDICT_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_predict_options {
  uint32_t struct_size;                 /**< sizeof(cairn_predict_options) */
  int64_t batch_size;                   /**< default 32 (tensors only) */
  int64_t steps;                        /**< default 0: until the data ends */
} cairn_predict_options;

/** The defaults of cairn_predict_options (see cairn_predict_options_init). Since 1.2. */
#define CAIRN_PREDICT_OPTIONS_INIT { (uint32_t)sizeof(cairn_predict_options), 32, 0 }

/** METHOD. The model's outputs for every batch, concatenated along the first dimension (keras
 * Model.predict). Needs no compile.
 * @param out  receives the tensor; free with cairn_tensor_free().
 * Errors: INVALID_ARGUMENT for data without batches or bad options; FAILED_PRECONDITION when busy.
 * Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_predict(cairn_object *model, const cairn_model_data *data,
                                                           const cairn_predict_options *opts, cairn_tensor **out);

/** METHOD. One training step on one batch; the logs are that batch's loss and metrics.
 * @param out  NULL, or receives the logs; free with cairn_logs_free().
 * Errors: as cairn_model_fit. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_train_on_batch(cairn_object *model, const cairn_tensor *x,
                                                                  const cairn_tensor *y, cairn_logs **out);

/** METHOD. The loss and metrics of one batch, without training.
 * @param out  receives the logs; free with cairn_logs_free().
 * Errors: as cairn_model_fit. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_test_on_batch(cairn_object *model, const cairn_tensor *x,
                                                                 const cairn_tensor *y, cairn_logs **out);

/** METHOD. Saves the whole model into `directory` (keras model.save): model.json (the layers'
 * configs and the compile configuration), weights.ckpt (a checkpoint of {"model": model}: weights,
 * optimizer, slots) and serving.cairnfn (the forward pass at the built input shape with any batch
 * size, loadable with cairn_function_load without the code that built the model). The new save is
 * written beside the directory and swapped in, so a failed save leaves an earlier one whole.
 * Errors: FAILED_PRECONDITION for a model never called (its input shape is unknown); UNIMPLEMENTED
 * for an optimizer with a learning-rate schedule; I/O errors naming the path. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_save(cairn_object *model, const char *directory);

/** CONSTRUCTOR. Loads a model cairn_model_save wrote (keras.models.load_model): built, compiled as
 * it was, with its weights, and the optimizer's step and slots for training on.
 * @param out  receives the model; free with cairn_object_free().
 * Errors: NOT_FOUND for a directory without a saved model; INVALID_ARGUMENT naming the file and
 * the field for a config it cannot read; the checkpoint's errors for damaged weights. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_load(cairn_context *ctx, const char *directory, cairn_object **out);

/** METHOD. Asks a running fit to stop after the current batch (keras model.stop_training = True);
 * for callbacks. Does nothing for NULL or an object that is not a model. Since 1.2. */
CAIRN_API void cairn_model_stop_training(cairn_object *model);

/** METHOD. The number of values in the logs; 0 for NULL. Since 1.2. */
CAIRN_API size_t cairn_logs_size(const cairn_logs *logs);
/** METHOD. The name of value `i`, borrowed from the logs; NULL when out of range. Since 1.2. */
CAIRN_API const char *cairn_logs_name(const cairn_logs *logs, size_t i);
/** METHOD. Value `i`; NaN when out of range. Since 1.2. */
CAIRN_API double cairn_logs_value(const cairn_logs *logs, size_t i);
/** METHOD. The value named `name`.
 * Errors: NOT_FOUND naming the value and listing those present. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_logs_get(const cairn_logs *logs, const char *name, double *out);
/** DESTRUCTOR. Frees logs a function returned; NULL is a no-op. Never pass the logs a hook was lent.
 * Since 1.2. */
CAIRN_API void cairn_logs_free(cairn_logs *logs);

/** METHOD. The number of epochs fit ran; 0 for NULL. Since 1.2. */
CAIRN_API size_t cairn_history_num_epochs(const cairn_history *h);
/** METHOD. The number of epoch `i` (initial_epoch + i unless a backup resumed it); -1 when out of range.
 * Since 1.2. */
CAIRN_API int64_t cairn_history_epoch(const cairn_history *h, size_t i);
/** METHOD. The number of log names; 0 for NULL. Since 1.2. */
CAIRN_API size_t cairn_history_num_names(const cairn_history *h);
/** METHOD. Log name `i`, borrowed from the history; NULL when out of range. Since 1.2. */
CAIRN_API const char *cairn_history_name(const cairn_history *h, size_t i);
/** METHOD. The values of `name`, one per epoch that had it (validation values only for validated
 * epochs), borrowed from the history; NULL (and *n = 0) for a name it does not have.
 * @param n  receives the count; required. Since 1.2. */
CAIRN_API const double *cairn_history_values(const cairn_history *h, const char *name, size_t *n);
/** DESTRUCTOR. NULL is a no-op. Since 1.2. */
CAIRN_API void cairn_history_free(cairn_history *h);

/** Hooks of a callback made by cairn_callback_create; start from CAIRN_CALLBACK_HOOKS_INIT and set
 * the hooks you need (NULL hooks are skipped). Each hook gets the model, lent for the call, and
 * returns NULL or an error, which ends the fit (or evaluate) with that error. Since 1.2. */
typedef struct cairn_callback_hooks {
  uint32_t struct_size;                 /**< sizeof(cairn_callback_hooks) */
  void *user_data;                      /**< passed to every hook */
  /** When fit starts (after the callbacks were told the epochs and steps). */
  cairn_status *(*on_train_begin)(void *user_data, cairn_object *model);
  /** When fit ends normally; `logs` are the last epoch's. Not called when fit fails. */
  cairn_status *(*on_train_end)(void *user_data, cairn_object *model, const cairn_logs *logs);
  /** Before each epoch's first batch. */
  cairn_status *(*on_epoch_begin)(void *user_data, cairn_object *model, int64_t epoch);
  /** After each epoch (and its validation); `logs` hold the epoch's means and the "val_" values. */
  cairn_status *(*on_epoch_end)(void *user_data, cairn_object *model, int64_t epoch, const cairn_logs *logs);
  /** Before each training batch; `batch` counts from 0 in each epoch. */
  cairn_status *(*on_train_batch_begin)(void *user_data, cairn_object *model, int64_t batch);
  /** After each training batch; `logs` are the epoch's means so far. */
  cairn_status *(*on_train_batch_end)(void *user_data, cairn_object *model, int64_t batch, const cairn_logs *logs);
  /** After an evaluation (cairn_model_evaluate, or fit's validation); `logs` are its results. */
  cairn_status *(*on_test_end)(void *user_data, cairn_object *model, const cairn_logs *logs);
  /** Called once, when the callback is freed (not when creation fails: the caller keeps user_data then). */
  void (*release)(void *user_data);
} cairn_callback_hooks;

/** The defaults of cairn_callback_hooks (see cairn_callback_hooks_init). Since 1.2. */
#define CAIRN_CALLBACK_HOOKS_INIT \
  { (uint32_t)sizeof(cairn_callback_hooks), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** CONSTRUCTOR. A callback written in the caller's language.
 * @param out  receives the callback; free with cairn_callback_free().
 * Errors: INVALID_ARGUMENT for NULL hooks or an unknown struct_size. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_create(const cairn_callback_hooks *hooks, cairn_callback **out);

/** DESTRUCTOR. Frees a callback; one that a running fit uses stays alive until that fit ends. NULL is
 * a no-op. Since 1.2. */
CAIRN_API void cairn_callback_free(cairn_callback *cb);

/** Which way a monitored value improves. Since 1.2. */
typedef enum cairn_monitor_mode {
  CAIRN_MONITOR_AUTO = 0,  /**< "max" when the name contains "acc", else "min" (Keras' rule) */
  CAIRN_MONITOR_MIN = 1,
  CAIRN_MONITOR_MAX = 2,
  CAIRN_MONITOR_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_monitor_mode;

/** Options of cairn_callback_model_checkpoint; start from CAIRN_MODEL_CHECKPOINT_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_model_checkpoint_options {
  uint32_t struct_size;                 /**< sizeof(cairn_model_checkpoint_options) */
  const char *directory;                /**< required: the checkpoint manager's directory */
  int64_t max_to_keep;                  /**< default 5; below 0 keeps all; 0 is an error */
  const char *monitor;                  /**< default NULL ("val_loss"): for save_best_only */
  cairn_monitor_mode mode;              /**< default CAIRN_MONITOR_AUTO */
  cairn_bool save_best_only;            /**< default 0 */
  int64_t save_freq;                    /**< default 0: at each epoch's end; N > 0: every N batches */
} cairn_model_checkpoint_options;

/** The defaults of cairn_model_checkpoint_options (see cairn_model_checkpoint_options_init). Since 1.2. */
#define CAIRN_MODEL_CHECKPOINT_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_model_checkpoint_options), NULL, 5, NULL, CAIRN_MONITOR_AUTO, 0, 0 }

/** CONSTRUCTOR. ModelCheckpoint: saves through a checkpoint manager, files "ckpt-N" with N the epoch
 * number from 1 (or the global step with save_freq). The checkpoint's root has one child, "model"
 * (with its optimizer): restore with a checkpoint of {"model": a fresh model}.
 * @param out  receives the callback; free with cairn_callback_free().
 * Errors: INVALID_ARGUMENT for a NULL or empty directory, max_to_keep 0, a negative save_freq;
 * the manager's errors (a directory it cannot create) come from the fit. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_model_checkpoint(cairn_context *ctx,
                                                                       const cairn_model_checkpoint_options *opts,
                                                                       cairn_callback **out);

/** Options of cairn_callback_tensorboard; start from CAIRN_TENSORBOARD_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_tensorboard_options {
  uint32_t struct_size;                 /**< sizeof(cairn_tensorboard_options) */
  const char *logdir;                   /**< required: event files go to logdir/train and logdir/validation */
  int64_t update_freq;                  /**< default 0: scalars per epoch only; N: also "batch_loss", ... every N batches */
  int64_t histogram_freq;               /**< default 0: none; N: a histogram of every weight every N epochs */
  cairn_bool write_graph;               /**< default 1: the graph of the compiled training step */
  int64_t profile_batch_begin;          /**< default -1: no profile; else the first batch profiled (first epoch) */
  int64_t profile_batch_end;            /**< default -1; the last batch profiled */
} cairn_tensorboard_options;

/** The defaults of cairn_tensorboard_options (see cairn_tensorboard_options_init). Since 1.2. */
#define CAIRN_TENSORBOARD_OPTIONS_INIT { (uint32_t)sizeof(cairn_tensorboard_options), NULL, 0, 0, 1, -1, -1 }

/** CONSTRUCTOR. TensorBoard: "epoch_loss", "epoch_accuracy", ... per epoch in logdir/train (and the
 * validation values, without "val_", in logdir/validation), "epoch_learning_rate", "batch_..."
 * values at the global step with update_freq, the training step's graph, weight histograms, and a
 * profile (the profiler's trace under logdir/plugins/profile/train).
 * Errors: INVALID_ARGUMENT for an empty logdir, negative frequencies, or an end batch before the
 * begin batch. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_tensorboard(const cairn_tensorboard_options *opts,
                                                                  cairn_callback **out);

/** Options of cairn_callback_early_stopping; start from CAIRN_EARLY_STOPPING_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_early_stopping_options {
  uint32_t struct_size;                 /**< sizeof(cairn_early_stopping_options) */
  const char *monitor;                  /**< default NULL ("val_loss") */
  double min_delta;                     /**< default 0: a smaller change is no improvement */
  int64_t patience;                     /**< default 0: epochs without improvement before stopping */
  cairn_monitor_mode mode;              /**< default CAIRN_MONITOR_AUTO */
  cairn_bool has_baseline;              /**< default 0 */
  double baseline;                      /**< default 0: with has_baseline, waiting restarts only past it */
  cairn_bool restore_best_weights;      /**< default 0: on stopping, the best epoch's weights come back */
  int64_t start_from_epoch;             /**< default 0: epochs before it are not monitored */
} cairn_early_stopping_options;

/** The defaults of cairn_early_stopping_options (see cairn_early_stopping_options_init). Since 1.2. */
#define CAIRN_EARLY_STOPPING_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_early_stopping_options), NULL, 0.0, 0, CAIRN_MONITOR_AUTO, 0, 0.0, 0, 0 }

/** CONSTRUCTOR. EarlyStopping.
 * Errors: INVALID_ARGUMENT for a negative patience. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_early_stopping(const cairn_early_stopping_options *opts,
                                                                     cairn_callback **out);

/** A learning-rate schedule by epoch: sets *out to the rate for `epoch` given the current `lr`.
 * Since 1.2. */
typedef cairn_status *(*cairn_lr_schedule_fn)(void *user_data, int64_t epoch, double lr, double *out);

/** CONSTRUCTOR. LearningRateScheduler: at each epoch's start sets the optimizer's learning rate to
 * schedule(epoch, current rate). `release` (may be NULL) is called once with user_data when the
 * callback is freed.
 * Errors: INVALID_ARGUMENT for a NULL schedule; from the fit, INVALID_ARGUMENT for a rate that is
 * negative or not finite, and FAILED_PRECONDITION for an optimizer with a schedule. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_learning_rate_scheduler(cairn_lr_schedule_fn schedule,
                                                                              void *user_data,
                                                                              void (*release)(void *user_data),
                                                                              cairn_callback **out);

/** Options of cairn_callback_reduce_lr_on_plateau; start from CAIRN_REDUCE_LR_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_reduce_lr_options {
  uint32_t struct_size;                 /**< sizeof(cairn_reduce_lr_options) */
  const char *monitor;                  /**< default NULL ("val_loss") */
  double factor;                        /**< default 0.1; in [0, 1) */
  int64_t patience;                     /**< default 10 */
  cairn_monitor_mode mode;              /**< default CAIRN_MONITOR_AUTO */
  double min_delta;                     /**< default 0.0001 */
  int64_t cooldown;                     /**< default 0: epochs to wait after a reduction */
  double min_lr;                        /**< default 0 */
} cairn_reduce_lr_options;

/** The defaults of cairn_reduce_lr_options (see cairn_reduce_lr_options_init). Since 1.2. */
#define CAIRN_REDUCE_LR_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_reduce_lr_options), NULL, 0.1, 10, CAIRN_MONITOR_AUTO, 0.0001, 0, 0.0 }

/** CONSTRUCTOR. ReduceLROnPlateau: multiplies the learning rate by factor after `patience` epochs
 * without improvement, not below min_lr.
 * Errors: INVALID_ARGUMENT for a factor outside [0, 1) or a negative patience, cooldown or min_lr.
 * Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_reduce_lr_on_plateau(const cairn_reduce_lr_options *opts,
                                                                           cairn_callback **out);

/** Options of cairn_callback_csv_logger; start from CAIRN_CSV_LOGGER_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_csv_logger_options {
  uint32_t struct_size;                 /**< sizeof(cairn_csv_logger_options) */
  const char *path;                     /**< required */
  char separator;                       /**< default ',' */
  cairn_bool append;                    /**< default 0: a new file; 1: rows appended (a header only to an empty file) */
} cairn_csv_logger_options;

/** The defaults of cairn_csv_logger_options (see cairn_csv_logger_options_init). Since 1.2. */
#define CAIRN_CSV_LOGGER_OPTIONS_INIT { (uint32_t)sizeof(cairn_csv_logger_options), NULL, ',', 0 }

/** CONSTRUCTOR. CSVLogger: a header "epoch,loss,..." and one row per epoch, values in the shortest
 * text that reads back as the same double.
 * Errors: INVALID_ARGUMENT for an empty path or a newline separator; from the fit, INVALID_ARGUMENT
 * naming a file it cannot open. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_csv_logger(const cairn_csv_logger_options *opts,
                                                                 cairn_callback **out);

/** Options of cairn_callback_backup_and_restore; start from CAIRN_BACKUP_OPTIONS_INIT. Since 1.2. */
typedef struct cairn_backup_options {
  uint32_t struct_size;                 /**< sizeof(cairn_backup_options) */
  const char *directory;                /**< required */
  int64_t save_freq;                    /**< default 0: at each epoch's end; N > 0: every N batches */
  cairn_bool delete_checkpoint;         /**< default 1: the backup is removed when fit ends normally */
} cairn_backup_options;

/** The defaults of cairn_backup_options (see cairn_backup_options_init). Since 1.2. */
#define CAIRN_BACKUP_OPTIONS_INIT { (uint32_t)sizeof(cairn_backup_options), NULL, 0, 1 }

/** CONSTRUCTOR. BackupAndRestore: fault-tolerant training. Backs up the model, the optimizer, fit's
 * position (epoch, batch, the iterator's state) and the metrics; when fit starts and a backup
 * exists (the process was killed), restores it and continues from the batch after the backup, so
 * the final weights equal an uninterrupted run's bit for bit (for models without random layers).
 * Only the backup's own files are deleted at the end.
 * Errors: INVALID_ARGUMENT for a NULL or empty directory or a negative save_freq. Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_backup_and_restore(cairn_context *ctx,
                                                                         const cairn_backup_options *opts,
                                                                         cairn_callback **out);


/* ---------------------------------------------------------------------------------------------
 * Devices (tf.config): physical and logical devices, visibility, memory, threads
 *
 * Configure a context right after creating it: its devices initialize at its first tensor, op,
 * device lookup or cairn_context_logical_device_count, and after that every setter below fails
 * with FAILED_PRECONDITION saying so. Physical devices are "cpu:0" and "vulkan:N" (the driver's
 * order). Logical devices are what tensors live on: "cpu" (or "cpu:0".."cpu:N-1" once the CPU is
 * split) and "vulkan:0".."vulkan:K-1", counting the visible Vulkan devices and their splits in
 * order. The environment variable CAIRN_VISIBLE_DEVICES ("cpu:0,vulkan:1") sets the visible
 * devices when a context is created. See docs/devices.md.
 * ------------------------------------------------------------------------------------------- */

/** What cairn_context_physical_device reports; start from CAIRN_PHYSICAL_DEVICE_INFO_INIT. Strings are
 * borrowed and valid for the process's life. Since 1.3. */
typedef struct cairn_physical_device_info {
  uint32_t struct_size;    /**< sizeof(cairn_physical_device_info) */
  const char *name;        /**< "cpu:0", "vulkan:0" */
  const char *type;        /**< "CPU" or "VULKAN" */
  const char *description; /**< "x86_64, 2 cores"; a Vulkan device's driver name */
  const char *device_type; /**< "cpu" for the host; for Vulkan "discrete", "integrated", "virtual", "cpu", "other" */
  uint64_t memory;         /**< bytes the device may hold: RAM, or the largest device-local heap's budget */
  uint32_t num_heaps;      /**< memory heaps (see cairn_context_physical_device_heap) */
  uint32_t queues;         /**< compute queues; logical devices of a split device take one each where there are several */
} cairn_physical_device_info;

/** The defaults of cairn_physical_device_info (see cairn_physical_device_info_init). Since 1.3. */
#define CAIRN_PHYSICAL_DEVICE_INFO_INIT \
  { (uint32_t)sizeof(cairn_physical_device_info), NULL, NULL, NULL, NULL, 0, 0, 0 }

/** One memory heap of a physical device; start from CAIRN_MEMORY_HEAP_INIT. Since 1.3. */
typedef struct cairn_memory_heap {
  uint32_t struct_size;    /**< sizeof(cairn_memory_heap) */
  uint64_t size;           /**< bytes */
  /** bytes the process may use now: the driver's VK_EXT_memory_budget figure where it reports a sane
   * one, else the size */
  uint64_t budget;
  uint64_t usage;          /**< bytes the process uses (0 where the driver does not say) */
  cairn_bool device_local; /**< 1 for device-local memory (always 1 for the CPU's heap) */
} cairn_memory_heap;

/** The defaults of cairn_memory_heap (see cairn_memory_heap_init). Since 1.3. */
#define CAIRN_MEMORY_HEAP_INIT { (uint32_t)sizeof(cairn_memory_heap), 0, 0, 0, 0 }

/** METHOD. The number of physical devices: the CPU and each Vulkan device (listing them loads the
 * Vulkan driver). Does not initialize the devices. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_physical_device_count(cairn_context *ctx, size_t *out);

/** METHOD. Describes physical device `index` (0 is always the CPU).
 * Errors: OUT_OF_RANGE for an index at or past the count. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_physical_device(cairn_context *ctx, size_t index,
                                                                     cairn_physical_device_info *out);

/** METHOD. Heap `heap` of physical device `index`, its budget and usage queried now.
 * Errors: OUT_OF_RANGE for either index. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_physical_device_heap(cairn_context *ctx, size_t index,
                                                                          size_t heap, cairn_memory_heap *out);

/** METHOD. Makes only these physical devices (and the CPU, always) visible: logical devices are made
 * from them. `names` holds `n` physical names such as "vulkan:1"; n == 0 hides every Vulkan device.
 * Errors: NOT_FOUND naming an unknown device, FAILED_PRECONDITION once the devices are initialized.
 * Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_set_visible_devices(cairn_context *ctx,
                                                                         const char *const *names, size_t n);

/** METHOD. The visible physical devices, separated by commas ("cpu:0,vulkan:0").
 * @param out  receives a NUL-terminated string; free it with cairn_free(). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_visible_devices(cairn_context *ctx, char **out);

/** METHOD. Memory growth of a Vulkan physical device: 1 (default) allocates as tensors need memory; 0
 * reserves each of its logical devices' memory limit (or most of the budget without one) when the
 * device is created. Errors: INVALID_ARGUMENT for the CPU, NOT_FOUND for an unknown device,
 * FAILED_PRECONDITION once the devices are initialized. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_set_memory_growth(cairn_context *ctx, const char *physical,
                                                                       cairn_bool grow);

/** METHOD. The memory growth setting of a physical device (1 for the CPU). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_memory_growth(cairn_context *ctx, const char *physical,
                                                                   cairn_bool *out);

/** One logical device of a split physical device; start from CAIRN_LOGICAL_DEVICE_CONFIG_INIT. Since 1.3. */
typedef struct cairn_logical_device_config {
  uint32_t struct_size;  /**< sizeof(cairn_logical_device_config) */
  uint64_t memory_limit; /**< bytes its tensors may hold; default 0: no limit */
} cairn_logical_device_config;

/** The defaults of cairn_logical_device_config (see cairn_logical_device_config_init). Since 1.3. */
#define CAIRN_LOGICAL_DEVICE_CONFIG_INIT { (uint32_t)sizeof(cairn_logical_device_config), 0 }

/** METHOD. Splits physical device `physical` ("cpu:0", "vulkan:0") into `n` logical devices (1 to 64),
 * to run multi-device code on one device; one config sets a memory limit for the whole device.
 * Each logical Vulkan device has its own VkDevice, queue and memory pool.
 * Errors: INVALID_ARGUMENT for n out of range or limits above the device's memory (alone or added
 * up), NOT_FOUND for an unknown device, FAILED_PRECONDITION when the device was configured already
 * or the devices are initialized. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_set_logical_devices(cairn_context *ctx, const char *physical,
                                                                         const cairn_logical_device_config *configs,
                                                                         size_t n);

/** What cairn_context_logical_device reports; start from CAIRN_LOGICAL_DEVICE_INFO_INIT. Since 1.3. */
typedef struct cairn_logical_device_info {
  uint32_t struct_size;  /**< sizeof(cairn_logical_device_info) */
  const char *name;      /**< "cpu", "cpu:1", "vulkan:0"; borrowed, valid for the process's life */
  const char *physical;  /**< the physical device it is made from; borrowed, valid for the process's life */
  uint64_t memory_limit; /**< bytes; 0: no limit */
} cairn_logical_device_info;

/** The defaults of cairn_logical_device_info (see cairn_logical_device_info_init). Since 1.3. */
#define CAIRN_LOGICAL_DEVICE_INFO_INIT { (uint32_t)sizeof(cairn_logical_device_info), NULL, NULL, 0 }

/** METHOD. The number of logical devices, the CPU's first. Initializes the devices. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_logical_device_count(cairn_context *ctx, size_t *out);

/** METHOD. Describes logical device `index`. Errors: OUT_OF_RANGE past the count. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_logical_device(cairn_context *ctx, size_t index,
                                                                    cairn_logical_device_info *out);

/** METHOD. Thread counts: intra-op (one op's work, counting the caller) and inter-op (independent work:
 * what AUTOTUNE means for input pipelines' parallel map, interleave and prefetch); 0 = all cores. A
 * mirrored strategy's replicas run on threads of their own, one each. Errors: INVALID_ARGUMENT outside 0..4096,
 * FAILED_PRECONDITION once the devices are initialized. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_set_threads(cairn_context *ctx, int32_t intra_op,
                                                                 int32_t inter_op);

/** METHOD. The thread counts set (0 = all cores); either pointer may be NULL. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_threads(cairn_context *ctx, int32_t *intra_op,
                                                             int32_t *inter_op);

/** A logical device's memory (tf.config.experimental.get_memory_info); start from CAIRN_MEMORY_INFO_INIT.
 * Since 1.3. */
typedef struct cairn_memory_info {
  uint32_t struct_size; /**< sizeof(cairn_memory_info) */
  uint64_t current;     /**< bytes held by its tensors now */
  uint64_t peak;        /**< the most held since creation or the last cairn_context_reset_memory_stats */
  uint64_t limit;       /**< its memory limit; 0: none */
  uint64_t budget;      /**< bytes it may use now: RAM on the CPU, the driver's live budget on Vulkan */
} cairn_memory_info;

/** The defaults of cairn_memory_info (see cairn_memory_info_init). Since 1.3. */
#define CAIRN_MEMORY_INFO_INIT { (uint32_t)sizeof(cairn_memory_info), 0, 0, 0, 0 }

/** METHOD. Memory of logical device `device` ("cpu", "vulkan:0"), creating it if needed.
 * Errors: NOT_FOUND for an unknown device. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_memory_info(cairn_context *ctx, const char *device,
                                                                 cairn_memory_info *out);

/** METHOD. Sets the device's peak to its current use. Errors: NOT_FOUND for an unknown device. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_reset_memory_stats(cairn_context *ctx, const char *device);

/** METHOD. 1 once the context's devices are initialized (configuration is then closed). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_devices_initialized(cairn_context *ctx, cairn_bool *out);

/* ---------------------------------------------------------------------------------------------
 * Device placement (tf.device, tf.config.set_soft_device_placement)
 *
 * A device scope, entered with cairn_device_scope_enter and left with cairn_device_scope_exit,
 * places work on one device of the context while it is open:
 *  - ops without inputs (cairn_op_run with no input tensors) and tensors made from host data
 *    (cairn_tensor_create) go to the scope's device instead of the default device;
 *  - variables created meanwhile (cairn_variable_create, layers' weights on their first call) live
 *    on the scope's device, their initial value copied there. An optimizer's slots live with their
 *    variable whatever the scope; its hyperparameters, metrics and checkpoint counters stay on the
 *    CPU.
 * Scopes are per thread and per context: a scope opened on one thread changes nothing on another
 * (Go's binding locks the goroutine to its OS thread while a scope is open), and one context's
 * scope leaves other contexts alone. They nest; the innermost scope of a context wins.
 *
 * Soft placement (off by default) decides what an op with inputs does. Off: it runs where its
 * inputs are, a scope does not move it, and inputs on different devices are INVALID_ARGUMENT
 * naming the op and both devices: no copy is ever implicit. On: it runs on the innermost scope's
 * device, else on its first input's device, and every input on another device is copied there.
 * Each such copy adds one to cairn_context_auto_copies, logs a debug line ("Add: copied input 1
 * from cpu to vulkan:0 (soft placement)") and, while the profiler records, is an event of category
 * "copy". Tensors of a function being traced are never copied. A gradient tape differentiates
 * through the copies. See docs/placement.md.
 * ------------------------------------------------------------------------------------------- */

/** METHOD. Opens a device scope of `ctx` on the calling thread: until the matching
 * cairn_device_scope_exit on this thread, work is placed on `device` ("cpu", "vulkan:0", any name
 * the context resolves) as this section describes. Scopes nest. The scope holds a reference on the
 * context until it is exited (or its thread ends).
 * Errors: INVALID_ARGUMENT for NULL arguments; NOT_FOUND for an unknown device name and
 * UNAVAILABLE for a device whose backend is missing, both naming the device. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_device_scope_enter(cairn_context *ctx, const char *device);

/** METHOD. Closes the innermost device scope of `ctx` that cairn_device_scope_enter opened on the
 * calling thread.
 * Errors: INVALID_ARGUMENT for NULL; FAILED_PRECONDITION when this thread has no open scope of
 * `ctx` (an exit without its enter, or on another thread). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_device_scope_exit(cairn_context *ctx);

/** METHOD. The device of the innermost scope of `ctx` open on the calling thread.
 * @param name  receives the device's name, borrowed from the context (it lives as long as the
 *              context), or NULL when no scope is open.
 * Errors: INVALID_ARGUMENT for NULL arguments. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_device_scope_current(const cairn_context *ctx, const char **name);

/** METHOD. Turns soft placement on or off for every thread using `ctx` (default: off).
 * Errors: INVALID_ARGUMENT for NULL or a value other than CAIRN_FALSE and CAIRN_TRUE. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_set_soft_placement(cairn_context *ctx, cairn_bool on);

/** METHOD. Whether soft placement is on.
 * Errors: INVALID_ARGUMENT for NULL arguments. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_soft_placement(const cairn_context *ctx, cairn_bool *out);

/** METHOD. The number of input copies soft placement has made in `ctx` so far, on every thread.
 * Errors: INVALID_ARGUMENT for NULL arguments. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_auto_copies(const cairn_context *ctx, uint64_t *out);

/* ---------------------------------------------------------------------------------------------
 * Distribution (tf.distribute.MirroredStrategy): data-parallel replicas in one process
 *
 * A mirrored strategy runs one replica per logical device ("cpu:0", "cpu:1" of a split CPU, or
 * "vulkan:0", "vulkan:1"). Variables made while its scope is entered on a thread (by
 * cairn_variable_create, layers, optimizers' slots, a model compiled there) are mirrored: one
 * component per device, equal values. cairn_strategy_run calls a function once per replica, in
 * parallel, each on its own thread with a device scope of its replica's device; inside it, a
 * mirrored variable reads and writes that replica's component, and cairn_replica_all_reduce sums
 * (or averages) a value across the replicas, in replica order whatever the arrival order, so the
 * result is deterministic. A model compiled in the scope trains with fit over every replica: each
 * global batch is split, the compiled step runs per replica with its gradients all-reduced inside
 * it, and every replica keeps identical weights. A checkpoint holds one copy of each mirrored
 * variable and restores into any number of replicas. See docs/distribute.md.
 * ------------------------------------------------------------------------------------------- */

/** A mirrored strategy. Thread-safe; one run at a time. Since 1.3. */
typedef struct cairn_strategy cairn_strategy;

/** What a replica's function sees during one cairn_strategy_run; valid only during that call. Since 1.3. */
typedef struct cairn_replica_context cairn_replica_context;

/** How values combine across replicas. Since 1.3. */
typedef enum cairn_reduction {
  CAIRN_REDUCE_SUM = 0,  /**< the sum, added in replica order */
  CAIRN_REDUCE_MEAN = 1, /**< the sum divided by the number of replicas */
  CAIRN_REDUCE_MIN = 2,  /**< the elementwise minimum */
  CAIRN_REDUCE_MAX = 3,  /**< the elementwise maximum */
  CAIRN_REDUCTION_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_reduction;

/** Options of cairn_mirrored_strategy_create; start from CAIRN_MIRRORED_OPTIONS_INIT. Since 1.3. */
typedef struct cairn_mirrored_options {
  uint32_t struct_size;          /**< sizeof(cairn_mirrored_options) */
  /** how long a replica waits in an all-reduce for the others before DEADLINE_EXCEEDED naming the
   * replicas that did not arrive; default 120000 */
  int64_t collective_timeout_ms;
} cairn_mirrored_options;

/** The defaults of cairn_mirrored_options (see cairn_mirrored_options_init). Since 1.3. */
#define CAIRN_MIRRORED_OPTIONS_INIT { (uint32_t)sizeof(cairn_mirrored_options), 120000 }

/** CONSTRUCTOR. A mirrored strategy over `n` logical devices (distinct, of one type); n == 0 means every
 * logical device of the default device's type. Split a device first (cairn_context_set_logical_devices)
 * to have several on one machine.
 * @param opts  NULL for the defaults.
 * @param out   receives the strategy; free it with cairn_strategy_free().
 * Errors: NOT_FOUND for an unknown device, INVALID_ARGUMENT for a duplicate, devices of mixed types or a
 * timeout below 1 ms. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mirrored_strategy_create(cairn_context *ctx, const char *const *devices,
                                                                      size_t n, const cairn_mirrored_options *opts,
                                                                      cairn_strategy **out);

/** DESTRUCTOR. Frees the strategy (its replica threads end); models compiled with it keep it alive. NULL is fine. Since 1.3. */
CAIRN_API void cairn_strategy_free(cairn_strategy *s);

/** METHOD. The number of replicas (0 for NULL). Since 1.3. */
CAIRN_API size_t cairn_strategy_num_replicas(const cairn_strategy *s);

/** METHOD. The logical device of replica `replica` ("cpu:1"), borrowed from `s`; NULL when out of range. Since 1.3. */
CAIRN_API const char *cairn_strategy_device(const cairn_strategy *s, size_t replica);

/** METHOD. Enters the strategy's scope on the calling thread: variables made on this thread until
 * the matching cairn_strategy_scope_exit are mirrored, and a model compiled meanwhile trains on every
 * replica. Scopes nest. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_strategy_scope_enter(cairn_strategy *s);

/** METHOD. Leaves the innermost scope of `s` that this thread entered.
 * Errors: FAILED_PRECONDITION when this thread has none open. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_strategy_scope_exit(cairn_strategy *s);

/** A replica's step. `replica` says which replica (cairn_replica_id) and all-reduces
 * (cairn_replica_all_reduce); ops without inputs run on the replica's device. Set each of the
 * `n_outputs` outputs to a new tensor (the run takes them) and return NULL, or return an error status:
 * the other replicas' all-reduces then end with ABORTED and cairn_strategy_run returns the error,
 * naming the replica. Called on the strategy's replica threads, all at once. Since 1.3. */
typedef cairn_status *(*cairn_replica_fn)(void *user_data, cairn_context *ctx, cairn_replica_context *replica,
                                          cairn_tensor **outputs, size_t n_outputs);

/** METHOD. Runs `fn` once per replica, in parallel, and waits for all of them.
 * @param outputs    n_outputs slots for every replica's outputs, replica-major: each replica's `fn`
 *                   gets n_outputs / num_replicas outputs to set (k of them), and replica r's output i
 *                   lands at r * k + i, each a new tensor; untouched on error.
 * @param n_outputs  a multiple of cairn_strategy_num_replicas (0: the replicas return nothing).
 * Errors: the first replica's error (its code, the message prefixed with the replica and device);
 * FAILED_PRECONDITION when called from inside a replica; INVALID_ARGUMENT for NULL fn or outputs,
 * or n_outputs not a multiple of the replicas. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_strategy_run(cairn_strategy *s, cairn_replica_fn fn, void *user_data,
                                                          cairn_tensor **outputs, size_t n_outputs);

/** METHOD. The replica's index, 0 .. num_replicas - 1 (-1 for NULL). Since 1.3. */
CAIRN_API int32_t cairn_replica_id(const cairn_replica_context *replica);

/** METHOD. The replica's logical device, e.g. "cpu:1"; borrowed. Since 1.3. */
CAIRN_API const char *cairn_replica_device(const cairn_replica_context *replica);

/** METHOD. All-reduces `n` tensors across the replicas: every replica calls it with tensors of the
 * same dtypes and shapes, in the same order; `outputs` (n slots) receive the results on this
 * replica's device. Tensors of one dtype travel as one buffer. Float16, bfloat16, float32, float64,
 * int32 and int64. Errors: INVALID_ARGUMENT for other dtypes or mismatched shapes across replicas,
 * DEADLINE_EXCEEDED when a replica does not arrive within the timeout, ABORTED when another replica
 * failed. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_replica_all_reduce(cairn_replica_context *replica,
                                                                cairn_reduction reduction,
                                                                cairn_tensor *const *values, size_t n,
                                                                cairn_tensor **outputs);

/** METHOD. Combines one tensor per replica (`values`, num_replicas of them, as cairn_strategy_run
 * returns them for one output) into one on replica 0's device, in replica order. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_strategy_reduce(cairn_strategy *s, cairn_reduction reduction,
                                                             cairn_tensor *const *values, size_t n,
                                                             cairn_tensor **out);

/** METHOD. Splits a global batch along dimension 0 into one part per replica (as even as possible,
 * the first replicas taking one more row), each on its replica's device.
 * @param parts    n_parts slots, each receiving a new tensor.
 * @param n_parts  must equal cairn_strategy_num_replicas.
 * Errors: INVALID_ARGUMENT for a scalar, fewer rows than replicas, or another n_parts. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_strategy_split_batch(cairn_strategy *s, const cairn_tensor *global,
                                                                  cairn_tensor **parts, size_t n_parts);

/** METHOD. The next element of iterator `it` (a global batch), each component split as
 * cairn_strategy_split_batch does (strategy.experimental_distribute_dataset). The iterator stays an
 * ordinary one: checkpoint it with the model to resume.
 * @param parts    n_parts slots, replica-major: replica r's component c at r * n_components + c.
 * @param n_parts  num_replicas times the dataset's number of components.
 * Returns CAIRN_OUT_OF_RANGE at the end of the data, as cairn_iterator_next.
 * Errors: INVALID_ARGUMENT for another n_parts. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_strategy_iterator_next(cairn_strategy *s, cairn_object *it,
                                                                    cairn_tensor **parts, size_t n_parts);

/** METHOD. sum(per_example_loss) / global_batch_size (tf.nn.compute_average_loss): a replica's loss
 * scaled so that the sum of the replicas' gradients is the gradient of the global batch's mean.
 * Errors: INVALID_ARGUMENT for global_batch_size below 1. Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_compute_average_loss(cairn_context *ctx,
                                                                  const cairn_tensor *per_example_loss,
                                                                  int64_t global_batch_size, cairn_tensor **out);

/* ---------------------------------------------------------------------------------------------
 * Collectives across processes over MPI (issue 17; see docs/mpi.md)
 *
 * One member per process, launched by mpirun: a cairn_mpi is this process's place in an MPI
 * communicator, and its collectives combine tensors across the processes. libcairn does not link
 * MPI: these functions load the plugin libcairn_mpi.so (from $CAIRN_MPI_PLUGIN, else beside
 * libcairn.so, else the loader's path) on first use; without it they fail with UNAVAILABLE naming
 * where they looked. Every process must issue the same collectives in the same order with the same
 * dtypes and shapes; ranks that disagree all get INVALID_ARGUMENT. A call that waits longer than the
 * timeout fails with DEADLINE_EXCEEDED naming the call and the rank, after which that cairn_mpi
 * refuses every call (FAILED_PRECONDITION): end the job. Calls on one cairn_mpi are serialized.
 * ------------------------------------------------------------------------------------------- */

/* cairn_mpi (this process's membership in an MPI communicator) is declared with the checkpoints,
 * whose manager can shard its saves over one (cairn_checkpoint_manager_shard). */

/** CONSTRUCTOR. Joins the job's communicator (a private copy of MPI_COMM_WORLD), initializing MPI
 * unless the process already has; MPI is finalized when the last cairn_mpi that relied on Cairn's
 * initialization is freed (it cannot start again in the same process).
 * @param timeout_ms  how long a collective waits for the other ranks; at least 1.
 * @param out         receives the handle; free it with cairn_mpi_free().
 * Errors: UNAVAILABLE without the plugin or MPI, FAILED_PRECONDITION when MPI cannot start,
 * INVALID_ARGUMENT for a timeout below 1. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mpi_init(cairn_context *ctx, int64_t timeout_ms, cairn_mpi **out);

/** CONSTRUCTOR. Uses a communicator of a host that already runs MPI (it initializes and finalizes
 * MPI; Cairn works on a private copy of the communicator).
 * @param mpi_comm    the host's MPI_Comm stored in a pointer (Open MPI's MPI_Comm is one).
 * @param timeout_ms  as for cairn_mpi_init.
 * @param out         receives the handle; free it with cairn_mpi_free().
 * Errors: as cairn_mpi_init; FAILED_PRECONDITION when MPI is not initialized. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mpi_adopt(cairn_context *ctx, void *mpi_comm, int64_t timeout_ms,
                                                       cairn_mpi **out);

/** DESTRUCTOR. Frees the handle (and finalizes MPI when it was the last user of Cairn's
 * initialization). NULL is fine. Since 1.4. */
CAIRN_API void cairn_mpi_free(cairn_mpi *mpi);

/** METHOD. This process's rank, 0 .. size - 1 (-1 for NULL). Since 1.4. */
CAIRN_API int32_t cairn_mpi_rank(const cairn_mpi *mpi);

/** METHOD. The number of processes (0 for NULL). Since 1.4. */
CAIRN_API int32_t cairn_mpi_size(const cairn_mpi *mpi);

/** METHOD. The reduction of `value` across the processes, on value's device (CPU, or Vulkan through
 * host staging). Float16 and bfloat16 reduce in float32; mean of integers divides with truncation.
 * @param out  receives a new tensor of value's dtype and shape, the same on every rank.
 * Errors: INVALID_ARGUMENT for other dtypes or ranks that disagree. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mpi_all_reduce(cairn_mpi *mpi, cairn_reduction reduction,
                                                            const cairn_tensor *value, cairn_tensor **out);

/** METHOD. Rank `root`'s `value` on every rank (each passes a tensor of the same dtype and shape).
 * @param out  receives a new tensor on value's device.
 * Errors: INVALID_ARGUMENT for a root outside 0 .. size - 1, a string tensor or ranks that
 * disagree. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mpi_broadcast(cairn_mpi *mpi, int32_t root, const cairn_tensor *value,
                                                           cairn_tensor **out);

/** METHOD. Every rank's `value` concatenated along dimension 0 in rank order (a scalar gives a vector
 * of size elements).
 * @param out  receives a new tensor on value's device.
 * Errors: INVALID_ARGUMENT for a string tensor or ranks that disagree. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mpi_all_gather(cairn_mpi *mpi, const cairn_tensor *value,
                                                            cairn_tensor **out);

/** METHOD. Returns once every rank has called it. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mpi_barrier(cairn_mpi *mpi);

/* ---------------------------------------------------------------------------------------------
 * Multi-worker training (tf.distribute.MultiWorkerMirroredStrategy; see docs/mpi.md)
 *
 * A multi-worker strategy spans the processes of a cairn_mpi: one replica per process (a worker),
 * on the context's CPU device, with every all-reduce across the processes. It is a cairn_strategy:
 * enter its scope, make and compile a model there, and cairn_model_fit runs unchanged under
 * mpirun. Every worker must run the same calls with the same data: each dataset element is a
 * global batch, and each worker trains on its own replica's rows of it. The weights are broadcast
 * from rank 0 before the first step (workers may initialize them differently), the gradients are
 * summed across the workers, and every worker ends each step with the same weights. Only rank 0
 * prints progress and runs the TensorBoard, model-checkpoint and CSV-logger callbacks. The
 * per-replica calls (cairn_strategy_run, cairn_strategy_num_replicas, cairn_strategy_device,
 * cairn_strategy_split, cairn_strategy_reduce) see this process's one replica; cairn_replica_id is
 * the rank, and cairn_strategy_reduce combines the workers' values. A rank that stops calling
 * makes the others fail with DEADLINE_EXCEEDED after the cairn_mpi's timeout.
 * ------------------------------------------------------------------------------------------- */

/** Options of cairn_multi_worker_strategy_create; start from CAIRN_MULTI_WORKER_OPTIONS_INIT. Since 1.4. */
typedef struct cairn_multi_worker_options {
  uint32_t struct_size; /**< sizeof(cairn_multi_worker_options) */
  /** a debug check: after every training step of a model compiled with the strategy, compare a
   * checksum of every weight across the workers and fail with INTERNAL naming the first variable
   * that differs (also on when the environment has CAIRN_CHECK_REPLICAS=1); default false */
  cairn_bool check_replicas;
} cairn_multi_worker_options;

/** The defaults of cairn_multi_worker_options (see cairn_multi_worker_options_init). Since 1.4. */
#define CAIRN_MULTI_WORKER_OPTIONS_INIT { (uint32_t)sizeof(cairn_multi_worker_options), 0 }

/** CONSTRUCTOR. A strategy whose replicas are the processes of `mpi`, this process's replica being
 * its rank, on ctx's CPU device. The strategy shares mpi's communicator and timeout (mpi may be
 * freed first); collectives of the strategy and cairn_mpi_* calls on mpi must come in the same
 * order on every rank.
 * @param opts  NULL for the defaults.
 * @param out   receives the strategy; free it with cairn_strategy_free().
 * Errors: INVALID_ARGUMENT for NULL arguments or a cairn_mpi of another context. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_multi_worker_strategy_create(cairn_context *ctx, cairn_mpi *mpi,
                                                                          const cairn_multi_worker_options *opts,
                                                                          cairn_strategy **out);


#if defined(CAIRN_EXPERIMENTAL)

/* Experimental: export and load (SavedModel-like). An exported file holds every concrete function traced so far
 * (graph, signature with -1 dims, captured constants) and the values of the variables they read or
 * write, in the checkpoint container (docs/graph_export.md): aligned payloads with checksums, a
 * verified index, written atomically. A loaded function runs without the callback, in any
 * language, and owns fresh variables initialised from the file. */

/** METHOD. Writes every trace of `fn` to `path` (replaced atomically).
 * Errors: INVALID_ARGUMENT for NULL fn or path, FAILED_PRECONDITION when fn has no traces yet,
 * UNIMPLEMENTED for a string constant, an I/O code when the file cannot be written. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_export(const cairn_function *fn, const char *path);

/** CONSTRUCTOR. Loads a function written by cairn_function_export into `ctx`. A call with a
 * signature the file has runs that graph (the first call per input shape re-traces the stored
 * graph; no host code runs); any other signature gives NOT_FOUND listing those it has.
 * @param out  receives the function; free with cairn_function_free().
 * Errors: NOT_FOUND for a missing file; DATA_LOSS for a truncated or damaged file and
 * INVALID_ARGUMENT for one that is not an exported function, names an unknown op or an attribute
 * the op refuses, each naming the file and the part (concrete function, node, key). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_load(cairn_context *ctx, const char *path, cairn_function **out);

/** METHOD. The graph of trace `index` as TensorFlow GraphDef text format (node { name op input
 * attr }), for TensorBoard's graph view.
 * @param out  receives the text; free with cairn_free().
 * Errors: OUT_OF_RANGE for an index >= cairn_function_num_traces. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_graphdef(const cairn_function *fn, size_t index, char **out);


/* ---------------------------------------------------------------------------------------------
 * Control flow (tf.cond, tf.while_loop, tf.TensorArray). Experimental.
 *
 * Eagerly these run the callbacks directly: cairn_cond reads the predicate and calls one branch,
 * cairn_while_loop calls cond and body until cond gives false. Inside a compiled function's
 * callback they are captured: each callback is traced once into a subgraph (both branches of a
 * cond, cond and body of a loop), and a replay evaluates the predicate on the device and runs the
 * chosen subgraph, so the number of iterations may depend on the data (an RNN over a length given
 * as a tensor). Callbacks have the cairn_function_fn type and receive symbolic tensors there.
 *
 * Rules (TensorFlow's graph mode): the predicate is a bool tensor of one element; both branches
 * return n_outputs tensors of equal dtypes and shapes; a loop variable keeps its dtype and shape.
 * Callbacks may use tensors of the enclosing callback and variables (captured). A gradient tape
 * recording inside the compiled function sees a traced cond or loop as one entry: a cond's gradient
 * is a cond of the branches' gradients; a loop's needs max_iterations (the size of the stacks of
 * loop variables it keeps), and without it a tape that watches the loop's inputs gets
 * UNIMPLEMENTED. Eager control flow, and calling a compiled function under a tape, are
 * differentiable too.
 * ------------------------------------------------------------------------------------------- */

/** FUNCTION. then_branch(operands) when `pred` is true, else else_branch(operands); both get
 * `user_data`.
 * @param operands  `n_operands` tensors, borrowed (the branches receive them as their inputs).
 * @param outputs   `n_outputs` slots, each receiving a new tensor; untouched on error.
 * Errors: INVALID_ARGUMENT for a non-bool predicate, mismatched branch results or NULLs; a
 * callback's own status. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_cond(cairn_context *ctx, const cairn_tensor *pred,
                                                  cairn_tensor *const *operands, size_t n_operands,
                                                  cairn_function_fn then_branch, cairn_function_fn else_branch,
                                                  void *user_data, cairn_tensor **outputs, size_t n_outputs);

/** FUNCTION. While cond(vars) gives true (cond sets one bool output), vars = body(vars) (body sets
 * n_loop_vars outputs); outputs receive the final vars. Both callbacks get `user_data`.
 * @param max_iterations  stop after this many iterations; -1 for no limit.
 * @param outputs         `n_loop_vars` slots, each receiving a new tensor; untouched on error.
 * Errors: INVALID_ARGUMENT for no loop variables, a body result whose dtype or shape differs from
 * its loop variable, a non-bool cond result, NULLs, or max_iterations < -1; a callback's own status. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_while_loop(cairn_context *ctx, cairn_function_fn cond,
                                                        cairn_function_fn body, void *user_data,
                                                        cairn_tensor *const *loop_vars, size_t n_loop_vars,
                                                        int64_t max_iterations, cairn_tensor **outputs);

/* A TensorArray is a fixed-size array of `size` elements of one dtype and shape, held as one tensor
 * of shape [size, element...], so it can be a loop variable; stacking it is the tensor itself.
 * Writes return a new array. Unwritten elements read as zeros. Eagerly an index outside [0, size)
 * is OUT_OF_RANGE; inside a compiled function it has no value yet, and an out-of-range write leaves
 * the array unchanged. */

/** CONSTRUCTOR. A new array of `size` zero elements of `element_shape` (`rank` dims).
 * @param out  receives the array tensor; free with cairn_tensor_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_array_create(cairn_context *ctx, cairn_dtype dtype, int64_t size,
                                                                 const int64_t *element_shape, size_t rank,
                                                                 cairn_tensor **out);

/** FUNCTION. `array` with element `index` (an int32 or int64 scalar tensor) set to `value`.
 * @param out  receives the new array; free with cairn_tensor_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_array_write(cairn_context *ctx, const cairn_tensor *array,
                                                                const cairn_tensor *index, const cairn_tensor *value,
                                                                cairn_tensor **out);

/** FUNCTION. Element `index` (an int32 or int64 scalar tensor) of `array`.
 * @param out  receives the element; free with cairn_tensor_free(). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_array_read(cairn_context *ctx, const cairn_tensor *array,
                                                               const cairn_tensor *index, cairn_tensor **out);

#endif /* CAIRN_EXPERIMENTAL */

/* ---------------------------------------------------------------------------------------------
 * Vulkan
 *
 * The Vulkan backend ("vulkan" picks the first discrete GPU, then integrated, virtual, then a CPU
 * implementation such as lavapipe; "vulkan:N" is device N of the list below). Without a loader or
 * driver, Vulkan contexts fail with UNAVAILABLE and the CPU keeps working.
 * ------------------------------------------------------------------------------------------- */

/** Physical device types; values are VkPhysicalDeviceType's. Since 1.0. */
typedef enum cairn_vulkan_device_type {
  CAIRN_VULKAN_DEVICE_OTHER = 0, /**< none of the kinds below */
  CAIRN_VULKAN_DEVICE_INTEGRATED = 1, /**< a GPU sharing memory with the CPU */
  CAIRN_VULKAN_DEVICE_DISCRETE = 2, /**< a GPU with its own memory */
  CAIRN_VULKAN_DEVICE_VIRTUAL = 3, /**< a GPU of a virtual machine */
  CAIRN_VULKAN_DEVICE_CPU = 4, /**< a CPU implementation such as lavapipe */
  CAIRN_VULKAN_DEVICE_TYPE_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_vulkan_device_type;

/** METHOD. 1 when a Vulkan loader and driver report at least one device, else 0. Never fails. Since 1.0. */
CAIRN_API cairn_bool cairn_vulkan_available(void);

/** METHOD. The number of Vulkan physical devices ("vulkan:0" .. "vulkan:N-1").
 * Errors: UNAVAILABLE without a Vulkan loader or driver. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_device_count(size_t *out);

/** What cairn_vulkan_device_describe reports; start from CAIRN_VULKAN_DEVICE_INFO_INIT. Since 1.0. */
typedef struct cairn_vulkan_device_info {
  uint32_t struct_size;            /**< sizeof(cairn_vulkan_device_info) */
  const char *name;                /**< the driver's device name; borrowed, valid for the process's life */
  cairn_vulkan_device_type type;   /**< discrete, integrated, virtual, CPU, ... */
  uint32_t api_version;            /**< VK_MAKE_API_VERSION encoding */
  uint64_t device_local_memory;    /**< bytes in device-local heaps */
  uint64_t total_memory;           /**< bytes in all heaps */
  uint32_t subgroup_size;          /**< lanes per subgroup */
  cairn_bool subgroup_arithmetic;   /**< 1: reductions use subgroup operations */
  cairn_bool float16;              /**< 1: float16 tensors have kernels (16-bit storage) */
  uint64_t max_storage_buffer_range; /**< the largest tensor in bytes */
  uint32_t max_shared_memory;      /**< bytes of workgroup shared memory */
} cairn_vulkan_device_info;

/** The defaults of cairn_vulkan_device_info (see cairn_vulkan_device_info_init). Since 1.0. */
#define CAIRN_VULKAN_DEVICE_INFO_INIT \
  { (uint32_t)sizeof(cairn_vulkan_device_info), NULL, CAIRN_VULKAN_DEVICE_OTHER, 0, 0, 0, 0, 0, 0, 0, 0 }

/** METHOD. Describes Vulkan device `index`.
 * @param out  set out->struct_size first (CAIRN_VULKAN_DEVICE_INFO_INIT); the fields are filled.
 * Errors: UNAVAILABLE without Vulkan, OUT_OF_RANGE for an index >= the device count,
 * INVALID_ARGUMENT for NULL or a bad struct_size. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_device_describe(size_t index, cairn_vulkan_device_info *out);

/** Vulkan settings of a context; start from CAIRN_VULKAN_OPTIONS_INIT. Since 1.0. */
typedef struct cairn_vulkan_options {
  uint32_t struct_size;   /**< sizeof(cairn_vulkan_options) */
  /** Experimental. External mode: an engine's own Vulkan objects (VkInstance, VkPhysicalDevice, VkDevice,
   * VkQueue cast to void*). Set all four or none (default NULL). Cairn uses them, destroys none of
   * them, and runs only 32-bit dtypes there (it cannot see which features the engine enabled)
   * unless the engine names them (cairn_vulkan_use_engine_features, experimental).
   * The engine must not use the queue from another thread while Cairn records work on it. */
  void *instance;
  void *physical_device; /**< experimental: the engine's VkPhysicalDevice */
  void *device;          /**< experimental: the engine's VkDevice */
  uint32_t queue_family;  /**< the family of `queue`; default 0 */
  void *queue;           /**< experimental: the engine's VkQueue, of family queue_family */
  /** Bytes of device memory each Vulkan device of the context may hold; 0 (default) = no limit.
   * Exceeding it gives RESOURCE_EXHAUSTED. */
  uint64_t memory_limit;
  /** 1: ops without a Vulkan kernel for a dtype run on the CPU (inputs and outputs copied; counted,
   * see cairn_vulkan_fallback_count). 0 (default): they fail with UNIMPLEMENTED. */
  cairn_bool cpu_fallback;
} cairn_vulkan_options;

/** The defaults of cairn_vulkan_options (see cairn_vulkan_options_init). Since 1.0. */
#define CAIRN_VULKAN_OPTIONS_INIT \
  { (uint32_t)sizeof(cairn_vulkan_options), NULL, NULL, NULL, 0, NULL, 0, 0 }

/** CONSTRUCTOR. Creates a context with Vulkan settings. `opts` as for cairn_context_create (may be
 * NULL); its `device` NULL means "vulkan" here. `vk` may be NULL (all defaults).
 * @param out  receives the new context; free it with cairn_context_free().
 * Errors: as cairn_context_create; INVALID_ARGUMENT for partial external handles or a bad
 * struct_size; UNAVAILABLE without a Vulkan driver. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_create_vulkan(const cairn_context_options *opts,
                                                                   const cairn_vulkan_options *vk,
                                                                   cairn_context **out);

#if defined(CAIRN_EXPERIMENTAL)

/* Experimental: engines (external mode, docs/vulkan.md "Engines"). A context made with an engine's
 * VkInstance, VkPhysicalDevice, VkDevice and VkQueue can share buffers with the engine without
 * copies and order its work against the engine's with timeline semaphores. Vulkan handles that
 * are not pointers (VkBuffer, VkSemaphore) cross as uint64_t. Cairn records its work on the
 * queue's family; the engine's own accesses to shared buffers use a queue of that family (the
 * buffers are VK_SHARING_MODE_EXCLUSIVE and Cairn records no ownership transfers).
 *
 * Synchronisation, what Cairn expects and guarantees:
 *  - Before its first access: the engine's writes to a wrapped buffer (GPU or mapped host writes)
 *    happen before a timeline value that Cairn's work waits for (cairn_vulkan_wait_semaphores), or
 *    before the work is submitted at all (host writes before the call that submits it).
 *  - After its last access: once the value of cairn_vulkan_signal_semaphore is reached, every
 *    command Cairn queued before that call has completed and its writes are available to the
 *    engine's later commands that wait for the value (the semaphore's memory dependency).
 *  - Cairn only reads wrapped buffers; it never writes them. The engine writes a wrapped buffer
 *    only while no Cairn work that reads it is pending: after the signal value of the last such
 *    work was reached, or before the value such work waits for. */

/** FUNCTION. Wraps `size` bytes of the engine's VkBuffer `buffer` at byte `offset` as a tensor of
 * `dtype` and `shape` on the context's Vulkan device, without copying (the engine's contents in
 * row-major order). The buffer needs VK_BUFFER_USAGE_STORAGE_BUFFER_BIT and
 * VK_BUFFER_USAGE_TRANSFER_SRC_BIT (Cairn cannot query usage; the validation layer reports a
 * missing bit). Ops take the tensor like any other, with bit-identical results; reading it on the
 * host copies through Cairn's memory. Lifetime: the engine keeps the VkBuffer (and its memory)
 * valid until this tensor and every tensor made from it are freed (ops such as Reshape or Identity
 * return tensors that share the range) and the work queued before the last of them was freed has
 * completed (cairn_context_synchronize returned, or the value of a later
 * cairn_vulkan_signal_semaphore was reached).
 * @param device  the VkDevice that created `buffer`, cast to void*: it must be the context's (a
 *                VkBuffer does not name its device, so this is the check; a wrong claim is not detected).
 * @param size    bytes of the range, at least cairn_dtype_size(dtype) times the element count rounded
 *                up to a multiple of 4 (shaders access 4-byte words).
 * @param offset  a multiple of the device's minStorageBufferOffsetAlignment (and of 4).
 * @param out     receives the tensor; free it with cairn_tensor_free().
 * Errors: FAILED_PRECONDITION when the context is not in external mode; INVALID_ARGUMENT for
 * another device, a null buffer, a misaligned offset, a range too small for dtype and shape, a bad
 * dtype or shape. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_tensor_wrap(cairn_context *ctx, void *device, uint64_t buffer,
                                                                uint64_t offset, uint64_t size, cairn_dtype dtype,
                                                                const int64_t *shape, size_t rank, cairn_tensor **out);

/** METHOD. Where a Vulkan tensor's bytes are, for the engine's shaders to read directly: its
 * VkBuffer, the byte offset of its first element and its size in bytes (cairn_tensor_nbytes). An
 * empty tensor gives 0, 0, 0. Valid while the tensor lives; the engine only reads the range (other
 * tensors share the VkBuffer), after the work that computes it is done (a value of
 * cairn_vulkan_signal_semaphore its commands wait for, or cairn_context_synchronize). Before it
 * frees the tensor, the engine's reads have completed, or Cairn's later work waits for a value
 * signalled after them (cairn_vulkan_wait_semaphores), since the memory is reused.
 * Errors: INVALID_ARGUMENT for a tensor not on a Vulkan device. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_tensor_buffer(const cairn_tensor *t, uint64_t *buffer,
                                                                  uint64_t *offset, uint64_t *size);

/** METHOD. Makes the Vulkan work that the context submits from now on (eager ops, function calls)
 * start only after each engine timeline semaphore `semaphores[i]` reaches `values[i]` (waits at the
 * compute and transfer stages). Work recorded before the call is submitted first, without the
 * waits. Never blocks. Until the values are reached, reading a tensor on the host
 * (cairn_tensor_read) or cairn_context_synchronize blocks, up to its 60 s timeout.
 * Needs timeline semaphores (Vulkan 1.2, or VK_KHR_timeline_semaphore) enabled on the engine's
 * device; Cairn sees whether the physical device has them, not whether the engine enabled them.
 * @param semaphores  `count` VkSemaphore handles of type timeline, of the engine's device.
 * @param values      `count` values. Both may be NULL when count is 0.
 * Errors: FAILED_PRECONDITION when the context is not in external mode or the device has no
 * timeline semaphores; INVALID_ARGUMENT for NULL arrays or a null semaphore. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_wait_semaphores(cairn_context *ctx, size_t count,
                                                                    const uint64_t *semaphores,
                                                                    const uint64_t *values);

/** METHOD. Submits the Vulkan work the context has queued (with any waits of
 * cairn_vulkan_wait_semaphores) and returns without waiting for it: the engine timeline semaphore
 * `semaphore` reaches `value` once that work and all work Cairn submitted before has completed.
 * Poll or wait on the semaphore (vkGetSemaphoreCounterValue, vkWaitSemaphores). With nothing
 * queued, the signal still follows every earlier submission. `value` must be greater than the
 * semaphore's current and pending values (Vulkan's rule). Blocks only when all three of Cairn's
 * command buffers are in flight. Errors: as cairn_vulkan_wait_semaphores. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_signal_semaphore(cairn_context *ctx, uint64_t semaphore,
                                                                     uint64_t value);

/** METHOD. Tells Cairn which features the engine enabled on its VkDevice, so external mode runs
 * what they allow: `features` points at the VkPhysicalDeviceFeatures2 chain the engine passed to
 * vkCreateDevice (read during the call, not kept). Cairn reads storageBuffer16BitAccess (float16
 * tensors), storageBuffer8BitAccess (bool and uint8 kernels, Vulkan 1.2 devices) and
 * timelineSemaphore, from VkPhysicalDevice16BitStorageFeatures, VkPhysicalDevice8BitStorageFeatures,
 * VkPhysicalDeviceTimelineSemaphoreFeatures, VkPhysicalDeviceVulkan11Features or
 * VkPhysicalDeviceVulkan12Features in the chain; a feature the physical device lacks stays off.
 * Without this call external mode runs 32-bit dtypes only. Call it before the first tensor or op
 * on the context's Vulkan device.
 * Errors: FAILED_PRECONDITION when the context is not in external mode or its Vulkan device has
 * already made a tensor or run an op; INVALID_ARGUMENT for NULL or a chain whose first struct is
 * not a VkPhysicalDeviceFeatures2. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_use_engine_features(cairn_context *ctx, const void *features);

/** A compiled function's Vulkan work (cairn_vulkan_recording_create) or a run of eager ops'
 * (cairn_vulkan_recording_capture), captured once so that an engine records it into its own command
 * buffers, frame after frame (experimental; docs/vulkan.md, "Engines"). Since 1.4. */
typedef struct cairn_vulkan_recording cairn_vulkan_recording;

/** METHOD. Runs compiled function `fn` once on `inputs` and captures its Vulkan work, followed by a
 * copy of each result into `outputs[i]`, instead of submitting it: nothing runs until the engine
 * records the recording (cairn_vulkan_recording_record) and submits its command buffer.
 * Inputs and outputs are tensors on the context's Vulkan device (wrapped engine buffers,
 * cairn_vulkan_tensor_wrap, or Cairn's own); each output has the dtype and shape of the function's
 * result, and no output is an input. The recording binds these buffers: every replay reads the
 * inputs' current contents and writes the outputs, so the engine rewrites an input buffer between
 * frames and the next replay uses the new values (and Cairn writes a wrapped range only when it is
 * a recording's output). It also binds the function's intermediates, kept for the recording alone,
 * and the variables' buffers as they are now. A function with side effects is refused: one that
 * writes a variable, draws random numbers or runs a stateful op (a replay would repeat them).
 * Work the context queued before is submitted first. Other threads' Cairn work on the device waits
 * while this call runs (it traces `fn` if needed). A function that needs the host in the middle is
 * refused, naming `fn`: a host read (a cond or while_loop on a device value), a CPU fallback or an
 * op that records its commands through a library (FFT ops).
 * Lifetimes: the recording keeps its tensors' memory, the device and its descriptor sets until
 * cairn_vulkan_recording_free; the caller's handles may be freed before.
 * Errors: FAILED_PRECONDITION when the context is not in external mode, `fn` needs the host or has
 * side effects;
 * INVALID_ARGUMENT for NULL arrays, a tensor on another device, an output of the wrong dtype or
 * shape, or an output that is an input; the function's own errors. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_recording_create(cairn_context *ctx, cairn_function *fn,
                                                                     cairn_tensor *const *inputs, size_t n_inputs,
                                                                     cairn_tensor *const *outputs, size_t n_outputs,
                                                                     cairn_vulkan_recording **out);

/** How many commands the recording holds (dispatches, copies, fills): the unit of a chunk of
 * cairn_vulkan_recording_record. Most ops record one command, some a few. 0 for NULL. Since 1.4. */
CAIRN_API size_t cairn_vulkan_recording_size(const cairn_vulkan_recording *rec);

/** METHOD. Records commands `first` .. `first` + `max_commands` - 1 of the recording (fewer at its
 * end) into `command_buffer`, a VkCommandBuffer of the engine's device (cast to void*) in the
 * recording state, outside a render pass. Cairn records only; the engine submits, on a queue of
 * the context's queue family. The whole function: first 0, max_commands SIZE_MAX. A frame budget:
 * one chunk per frame, from `first` 0, then each call's `next`; the commands' intermediate results
 * stay in Cairn's buffers between chunks, and the last chunk writes the outputs.
 * Synchronisation, stated for each call (each chunk):
 * - before its first command, Cairn records a barrier from every earlier command of the queue (all
 *   stages, memory writes) to its compute and transfer work: the engine's writes of the inputs,
 *   recorded or submitted earlier on the same queue, need no barrier of the engine's. Host writes
 *   of mapped input memory must be made before the submit (Vulkan's rule); writes on another queue
 *   need the engine's semaphore, and buffers it shares across queue families its ownership transfer;
 * - after its last command, Cairn records a barrier from its compute and transfer writes to every
 *   stage and to the host (memory reads and writes): the engine reads the outputs without a
 *   barrier of its own, and the host reads them once the submission completed.
 * Replays allocate nothing and take no lock: a render thread never waits here on Cairn's other
 * work, and several threads may record one recording into their own command buffers at once.
 * Two submissions that run one recording must not overlap on the GPU (they share its buffers):
 * the queue's order, with these barriers, keeps them apart.
 * Lifetimes: the command buffer uses the recording's objects until it completes; free the
 * recording only after that. Writing the outputs' buffers or the engine's inputs while a submission
 * that recorded this runs is a race the engine must avoid.
 * @param next  optional: where the next chunk starts, 0 after the last one.
 * Errors: INVALID_ARGUMENT for NULL or max_commands 0; OUT_OF_RANGE for `first` past the end.
 * Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_recording_record(const cairn_vulkan_recording *rec,
                                                                     void *command_buffer, size_t first,
                                                                     size_t max_commands, size_t *next);

/** Frees a recording: its descriptor sets and its hold on the tensors' memory. Every command buffer
 * that recorded it must have completed. NULL does nothing. Since 1.4. */
CAIRN_API void cairn_vulkan_recording_free(cairn_vulkan_recording *rec);

/** METHOD. The eager recording scope: calls `body(user_data, ctx, inputs, n_inputs, results,
 * n_outputs)` once, on this thread, and captures the Vulkan work of the eager ops it runs on the
 * context's Vulkan device (cairn_op_run and the like), followed by a copy of each result into
 * `outputs[i]`, instead of submitting it; replays, chunks and lifetimes are those of
 * cairn_vulkan_recording_create (cairn_vulkan_recording_record, _size, _free).
 * The body sets each of the `n_outputs` result slots to a new tensor on that device, with the
 * dtype and shape of `outputs[i]` (Cairn frees them after the copy), and returns NULL or an error.
 * Inputs and outputs are tensors on the context's Vulkan device, and no output is an input.
 * What is bound: every buffer a captured command reads or writes. The inputs, and the variables,
 * constants and other tensors made before the call that the body reads, are bound by buffer: every
 * replay reads their contents at that time, so the engine rewrites an input buffer between frames
 * and the next replay uses the new values. Tensors the body makes from host data are constants of
 * the recording. Intermediates (the body's ops' results, freed by the body or not) are kept for
 * the recording alone: later Cairn work never reuses their memory while the recording lives. Their
 * values exist only on the GPU, once a replay has run.
 * What is refused: work that needs the host in the middle, FAILED_PRECONDITION naming this
 * function and the op: a host read (cairn_tensor_read of a device tensor, an op whose shape depends
 * on values), a CPU fallback (cpu_fallback on and an op without a Vulkan kernel for its dtype),
 * waiting for the device (cairn_context_synchronize), a timeline semaphore wait or signal of
 * Cairn's (cairn_vulkan_wait_semaphores, cairn_vulkan_signal_semaphore) and ops that record through
 * a library (FFT ops). The capture fails even when the body ignores such an error; the context and
 * device stay usable and nothing is kept. Ops with side effects are not refused but are replayed as
 * recorded: a variable write writes again each replay and random ops repeat their numbers.
 * Thread: the calling thread runs `body`; other threads' Cairn work on the device waits until this
 * call returns, and the body must not wait for it. Work the context queued before is submitted
 * first.
 * Errors: FAILED_PRECONDITION when the context is not in external mode or for a refusal above;
 * INVALID_ARGUMENT for NULL ctx, body, out or arrays, a tensor on another device, an output that is
 * an input, a result left NULL or of the wrong dtype, shape or device; the body's own error,
 * unchanged after this function's name (nothing is recorded then). Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_recording_capture(cairn_context *ctx, cairn_function_fn body,
                                                                      void *user_data, cairn_tensor *const *inputs,
                                                                      size_t n_inputs, cairn_tensor *const *outputs,
                                                                      size_t n_outputs, cairn_vulkan_recording **out);

/* Frame budgets: a recording split into chunks of whole graph nodes, one chunk recorded per frame
 * (as Sentis runs a model a few layers per frame). A chunk starts at a node's first command;
 * cairn_vulkan_recording_chunk says how many commands it holds, and cairn_vulkan_recording_record
 * records it and gives where the next one starts:
 *     size_t n;  // each frame:
 *     cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, 2, first, &n);
 *     cairn_vulkan_recording_record(rec, cb, first, n, &first);  // first is 0 again after the last */

/** What a chunk of a frame budget may hold (cairn_vulkan_recording_chunk). Since 1.4. */
typedef enum cairn_vulkan_budget {
  CAIRN_VULKAN_BUDGET_NODES = 0, /**< at most `budget` whole nodes */
  CAIRN_VULKAN_BUDGET_MICROSECONDS = 1, /**< whole nodes whose measured GPU times sum to at most `budget` us */
  CAIRN_VULKAN_BUDGET_FORCE32 = 0x7fffffff /**< keeps the enum 32 bits wide; never a value */
} cairn_vulkan_budget;

/** How many nodes the recording holds: the compiled function's graph nodes that record commands (a
 * fused node is one), in order, then one for the copies into the outputs. In an eager recording
 * (cairn_vulkan_recording_capture) each eager op is a node named by its op ("MatMul"), and work
 * outside any op (an upload of host data, the copies out) forms nodes of its own. Together they
 * hold every command once. 0 for NULL. Since 1.4. */
CAIRN_API size_t cairn_vulkan_recording_node_count(const cairn_vulkan_recording *rec);

/** METHOD. Node `index` of the recording: its name as the profiler names replayed nodes ("MatMul_3",
 * "FusedElementwise_0"; the copies into the outputs are "(outside the graph's nodes)"), its first
 * command, its number of commands and its measured GPU time in nanoseconds (0 before
 * cairn_vulkan_recording_measure). The name lives as long as the recording; any out pointer may be
 * NULL. Errors: INVALID_ARGUMENT for NULL rec; OUT_OF_RANGE for index past the last node.
 * Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_recording_node(const cairn_vulkan_recording *rec, size_t index,
                                                                   const char **op, size_t *first_command,
                                                                   size_t *commands, uint64_t *gpu_ns);

/** METHOD. Measures each node's GPU time, for budgets of microseconds: records the whole recording
 * `runs` times into a command buffer of Cairn's, with a timestamp query before the first node and
 * after each, submits each run on the context's queue (the engine's, in external mode) and waits
 * for it, at most 60 s; a node's time is the median of its runs, and includes its barriers. Call it
 * once, outside the frame loop: it runs the recording's work (the outputs hold the function's
 * results after), Cairn's queued work first; the engine submits nothing to the queue from another
 * thread meanwhile, and records or submits nothing that uses the recording's buffers until it
 * returns. Not while another thread calls cairn_vulkan_recording_chunk on this recording.
 * @param runs  1 to 100 (5 is plenty: the median hides a slow first run).
 * Errors: INVALID_ARGUMENT for NULL or runs out of range; FAILED_PRECONDITION when the queue family
 * writes no timestamps (timestampValidBits 0): use a budget of nodes; DEADLINE_EXCEEDED when a run
 * does not finish. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_recording_measure(cairn_vulkan_recording *rec, uint32_t runs);

/** METHOD. How many commands (`*commands`) the chunk that starts at command `first` holds under a
 * frame budget: from the node that starts there, whole nodes while they fit `budget` (nodes, or
 * microseconds of their measured times); a chunk never splits a node. A node that alone exceeds a
 * time budget is a chunk of its own, over the budget (cairn_vulkan_recording_node gives its time).
 * Pass the result to cairn_vulkan_recording_record as max_commands. 0 for a recording with no
 * commands. Allocates nothing and takes no lock, like a replay.
 * Errors: INVALID_ARGUMENT for NULL, a budget of 0, an unknown kind, or `first` inside a node
 * (naming it); FAILED_PRECONDITION for CAIRN_VULKAN_BUDGET_MICROSECONDS before
 * cairn_vulkan_recording_measure (times are measured only when asked, since measuring submits
 * work on the queue); OUT_OF_RANGE for `first` past the end. Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_recording_chunk(const cairn_vulkan_recording *rec,
                                                                    cairn_vulkan_budget kind, uint64_t budget,
                                                                    size_t first, size_t *commands);

#endif /* CAIRN_EXPERIMENTAL */

/** METHOD. How many op calls on the context's Vulkan device `device` (NULL: the default device)
 * ran on the CPU through cpu_fallback.
 * Errors: INVALID_ARGUMENT when the device is not a Vulkan device; NOT_FOUND / UNAVAILABLE as for
 * device names elsewhere. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_fallback_count(cairn_context *ctx, const char *device,
                                                                   uint64_t *out);

/** METHOD. Waits until the work queued on every device of the context has finished (Vulkan
 * records eager ops and submits them in batches; reads of tensors wait by themselves).
 * Errors: DEADLINE_EXCEEDED when the device does not finish in time, INTERNAL for a lost device. Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_synchronize(cairn_context *ctx);

/* ---------------------------------------------------------------------------------------------
 * Initializers
 *
 * For languages that cannot expand the CAIRN_X_INIT macros (Go's cgo, JNI glue generated at run
 * time, FFI generators): cairn_X_init(opts, sizeof *opts) sets opts->struct_size and gives every
 * field that struct_size covers its documented default, exactly as CAIRN_X_INIT does. Bindings
 * start from these and set only what their caller set, so defaults live in this header alone.
 * Errors: INVALID_ARGUMENT for NULL or a struct_size this library does not know (see the
 * struct_size rule at the top); nothing is written then.
 * ------------------------------------------------------------------------------------------- */

/** METHOD. Fills a cairn_context_options with its defaults (for cairn_context_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_context_options_init(cairn_context_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_variable_options with its defaults (for cairn_variable_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_variable_options_init(cairn_variable_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_checkpoint_options with its defaults (for cairn_checkpoint_set_options). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_options_init(cairn_checkpoint_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_checkpoint_manager_options with its defaults (for cairn_checkpoint_manager_create).
 * Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_checkpoint_manager_options_init(cairn_checkpoint_manager_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_tape_options with its defaults (for cairn_tape_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tape_options_init(cairn_tape_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_optimizer_options with its defaults (for cairn_optimizer_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_optimizer_options_init(cairn_optimizer_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_exponential_decay_options with its defaults (for cairn_schedule_exponential_decay).
 * Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_exponential_decay_options_init(cairn_exponential_decay_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_cosine_decay_options with its defaults (for cairn_schedule_cosine_decay). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_cosine_decay_options_init(cairn_cosine_decay_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_dense_options with its defaults (for cairn_dense_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dense_options_init(cairn_dense_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_conv2d_options with its defaults (for cairn_conv2d_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_conv2d_options_init(cairn_conv2d_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_pool2d_options with its defaults (for cairn_max_pool2d_create and cairn_avg_pool2d_create).
 * Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_pool2d_options_init(cairn_pool2d_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_flatten_options with its defaults (for cairn_flatten_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_flatten_options_init(cairn_flatten_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_embedding_options with its defaults (for cairn_embedding_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_embedding_options_init(cairn_embedding_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_norm_options with its defaults (for cairn_layer_norm_create and cairn_batch_norm_create).
 * Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_norm_options_init(cairn_norm_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_dropout_options with its defaults (for cairn_dropout_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_dropout_options_init(cairn_dropout_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_activation_options with its defaults (for cairn_activation_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_activation_options_init(cairn_activation_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_sequential_options with its defaults (for cairn_sequential_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_sequential_options_init(cairn_sequential_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_function_options with its defaults (for cairn_function_create). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_function_options_init(cairn_function_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_tensor_spec with its defaults (for cairn_function_options.input_signature). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensor_spec_init(cairn_tensor_spec *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_vulkan_device_info with its defaults (for cairn_vulkan_device_describe). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_device_info_init(cairn_vulkan_device_info *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_vulkan_options with its defaults (for cairn_context_create_vulkan). Since 1.0. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_vulkan_options_init(cairn_vulkan_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_model_options with its defaults (for cairn_model_create). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_options_init(cairn_model_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_compile_options with its defaults (for cairn_model_compile). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_compile_options_init(cairn_compile_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_model_data with its defaults (for cairn_model_fit, cairn_model_evaluate and cairn_model_predict). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_data_init(cairn_model_data *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_fit_options with its defaults (for cairn_model_fit). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_fit_options_init(cairn_fit_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_evaluate_options with its defaults (for cairn_model_evaluate). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_evaluate_options_init(cairn_evaluate_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_predict_options with its defaults (for cairn_model_predict). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_predict_options_init(cairn_predict_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_callback_hooks with its defaults (for cairn_callback_create). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_callback_hooks_init(cairn_callback_hooks *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_model_checkpoint_options with its defaults (for cairn_callback_model_checkpoint). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_model_checkpoint_options_init(cairn_model_checkpoint_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_tensorboard_options with its defaults (for cairn_callback_tensorboard). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_tensorboard_options_init(cairn_tensorboard_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_early_stopping_options with its defaults (for cairn_callback_early_stopping). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_early_stopping_options_init(cairn_early_stopping_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_reduce_lr_options with its defaults (for cairn_callback_reduce_lr_on_plateau). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_reduce_lr_options_init(cairn_reduce_lr_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_csv_logger_options with its defaults (for cairn_callback_csv_logger). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_csv_logger_options_init(cairn_csv_logger_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_backup_options with its defaults (for cairn_callback_backup_and_restore). Since 1.2. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_backup_options_init(cairn_backup_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_physical_device_info with its defaults (for cairn_context_physical_device). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_physical_device_info_init(cairn_physical_device_info *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_memory_heap with its defaults (for cairn_context_physical_device_heap). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_memory_heap_init(cairn_memory_heap *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_logical_device_config with its defaults (for cairn_context_set_logical_devices). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_logical_device_config_init(cairn_logical_device_config *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_logical_device_info with its defaults (for cairn_context_logical_device). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_logical_device_info_init(cairn_logical_device_info *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_memory_info with its defaults (for cairn_context_memory_info). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_memory_info_init(cairn_memory_info *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_mirrored_options with its defaults (for cairn_mirrored_strategy_create). Since 1.3. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_mirrored_options_init(cairn_mirrored_options *opts, uint32_t struct_size);

/** METHOD. Fills a cairn_multi_worker_options with its defaults (for cairn_multi_worker_strategy_create). Since 1.4. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_multi_worker_options_init(cairn_multi_worker_options *opts, uint32_t struct_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAIRN_CAIRN_H_ */
