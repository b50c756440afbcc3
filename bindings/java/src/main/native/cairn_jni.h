/* Hand-written JNI support shared by the generated glue (dev_cairn_CairnNative.c):
 * the one status-to-exception helper, string and array marshalling into a per-call arena, and
 * thread attachment for callbacks. Every helper that can fail leaves a Java exception pending and
 * returns 0; the caller then releases what it holds and returns to Java. */
#ifndef CAIRN_JNI_H_
#define CAIRN_JNI_H_

#include <jni.h>
#include <stddef.h>
#include <stdint.h>

#include "cairn/cairn.h"

/* Throws dev.cairn.CairnException carrying the status's code and message when `status` is not
 * NULL, and frees the status either way. Returns 1 when it threw. */
int cairn_jni_check_status(JNIEnv *env, cairn_status *status);

/* Throws `class_name` (e.g. "java/lang/IllegalArgumentException") with `message`. */
void cairn_jni_throw(JNIEnv *env, const char *class_name, const char *message);

/* A Java String from a NUL-terminated UTF-8 string (NULL gives null). Unlike NewStringUTF it
 * accepts standard UTF-8 (supplementary characters, embedded invalid bytes become U+FFFD). */
jstring cairn_jni_new_string(JNIEnv *env, const char *utf8);

/* A Java byte[] holding `n` bytes at `data` (NULL gives null). */
jbyteArray cairn_jni_new_bytes(JNIEnv *env, const char *data, size_t n);

/* Per-call scratch memory: a small inline buffer, then malloc'd blocks, all freed at once. Keeps
 * the common call (a few handles, an op name) free of malloc. */
typedef struct cairn_jni_block cairn_jni_block;
typedef struct cairn_jni_arena {
  char *cur;
  char *end;
  cairn_jni_block *blocks;
  _Alignas(16) char inline_buf[512];
} cairn_jni_arena;

void cairn_jni_arena_init(cairn_jni_arena *a);
/* `n` bytes aligned to 16; throws OutOfMemoryError and returns NULL on failure. */
void *cairn_jni_arena_alloc(JNIEnv *env, cairn_jni_arena *a, size_t n);
void cairn_jni_arena_release(cairn_jni_arena *a);

/* A NUL-terminated copy of the UTF-8 bytes in `bytes` (null gives NULL). */
int cairn_jni_cstring(JNIEnv *env, cairn_jni_arena *a, jbyteArray bytes, const char **out);
/* Copies of Java arrays (null gives NULL and 0). */
int cairn_jni_longs(JNIEnv *env, cairn_jni_arena *a, jlongArray array, const int64_t **out, size_t *n);
int cairn_jni_doubles(JNIEnv *env, cairn_jni_arena *a, jdoubleArray array, const double **out, size_t *n);
/* The length of an optional array (0 for null). */
size_t cairn_jni_length(JNIEnv *env, jarray array);
/* Checks that an optional parallel array has `n` elements. */
int cairn_jni_check_length(JNIEnv *env, jarray array, size_t n, const char *what);

/* NUL-terminated copies of a byte[][] (null gives NULL and 0; a null element gives a NULL entry). */
int cairn_jni_cstrings(JNIEnv *env, cairn_jni_arena *a, jobjectArray array, const char ***out, size_t *n);

/* A global reference to a host callback object for a C user_data; NULL (with NullPointerException
 * or OutOfMemoryError pending) on failure. */
jobject cairn_jni_global_ref(JNIEnv *env, jobject callback);

/* Checks that an array has exactly `n` elements (null counts as none). */
int cairn_jni_require_length(JNIEnv *env, jarray array, size_t n, const char *what);

/* What a parallel Object[] holds per element (a struct field that is itself an array). */
typedef enum cairn_jni_array_kind { CAIRN_JNI_BYTES, CAIRN_JNI_LONGS, CAIRN_JNI_DOUBLES } cairn_jni_array_kind;

/* Element `k` of `array` as a local reference (NULL for a null element), checked to be a byte[],
 * long[] or double[]; throws IllegalArgumentException for anything else. */
int cairn_jni_element(JNIEnv *env, jobjectArray array, size_t k, cairn_jni_array_kind kind, jobject *out);

/* The address and size of a direct ByteBuffer; throws IllegalArgumentException for a heap buffer. */
int cairn_jni_direct_buffer(JNIEnv *env, jobject buffer, void **data, size_t *nbytes);

/* Gets a JNIEnv for a callback on any thread, attaching a foreign thread as a daemon; it stays
 * attached until it exits (*attached is then 0), so leave() detaches nothing. */
int cairn_jni_callback_enter(JNIEnv **env, int *attached);
/* Clears (and reports on stderr) an exception the Java callback threw, then detaches if needed:
 * Java exceptions never propagate into the C library. */
void cairn_jni_callback_leave(JNIEnv *env, int attached, const char *callback_name);

/* The error status for a status-returning callback whose Java side threw: the exception's code
 * (a CairnException's, else UNKNOWN) and message. The exception itself waits in
 * dev.cairn.Callbacks.takeHostError(). */
cairn_status *cairn_jni_host_error_status(void);

/* A status with `error`'s code (UNKNOWN unless it is a CairnException) and its message (a
 * CairnException's detail(), else its toString()). Calls Java: no exception may be pending. */
cairn_status *cairn_jni_exception_status(JNIEnv *env, jthrowable error);

/* Implemented by cairn_jni_data.c: caches dev.cairn.DatasetCallback's method IDs. */
int cairn_jni_data_on_load(JNIEnv *env);

/* Implemented by the generated glue: caches its classes and method IDs. Returns 0 on failure. */
int cairn_jni_generated_on_load(JNIEnv *env);

#endif /* CAIRN_JNI_H_ */
