#define _POSIX_C_SOURCE 199309L /* clock_gettime */
/* Hand-written fast path of the generated op wrappers (dev.cairn.OpNative): an op with one
 * output, up to three inputs and no attributes runs in one JNI call that takes the handles as
 * jlongs and returns the output's handle, with no Java array to copy in or out and the op's name
 * as a C string made once (OpNative.name). Also the C-only loop the Java benchmark compares with. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "cairn_jni.h"

/* A NUL-terminated copy of `name`, kept for the life of the process (one per op constant). */
JNIEXPORT jlong JNICALL Java_dev_cairn_OpNative_name(JNIEnv *env, jclass cls, jbyteArray name) {
  (void)cls;
  jsize n = (*env)->GetArrayLength(env, name);
  char *s = malloc((size_t)n + 1);
  if (!s) {
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "OpNative.name");
    return 0;
  }
  (*env)->GetByteArrayRegion(env, name, 0, n, (jbyte *)s);
  s[n] = '\0';
  return (jlong)(intptr_t)s;
}

JNIEXPORT jlong JNICALL Java_dev_cairn_OpNative_run(JNIEnv *env, jclass cls, jlong ctx, jlong op, jint n, jlong a,
                                                    jlong b, jlong c) {
  (void)cls;
  cairn_tensor *in[3] = {(cairn_tensor *)(intptr_t)a, (cairn_tensor *)(intptr_t)b, (cairn_tensor *)(intptr_t)c};
  cairn_tensor *out = NULL;
  cairn_status *status =
      cairn_op_run((cairn_context *)(intptr_t)ctx, (const char *)(intptr_t)op, in, (size_t)n, NULL, 0, &out, 1);
  if (cairn_jni_check_status(env, status)) return 0;
  return (jlong)(intptr_t)out;
}

/* Runs the op `iterations` times from C (cairn_op_run then cairn_tensor_free, as the Java loop
 * does) and returns the wall-clock nanoseconds it took: the benchmark's "C" figure. */
JNIEXPORT jlong JNICALL Java_dev_cairn_OpNative_benchLoop(JNIEnv *env, jclass cls, jlong ctx, jlong op, jint n,
                                                          jlong a, jlong b, jlong c, jint iterations) {
  (void)cls;
  cairn_tensor *in[3] = {(cairn_tensor *)(intptr_t)a, (cairn_tensor *)(intptr_t)b, (cairn_tensor *)(intptr_t)c};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (jint i = 0; i < iterations; ++i) {
    cairn_tensor *out = NULL;
    cairn_status *status =
        cairn_op_run((cairn_context *)(intptr_t)ctx, (const char *)(intptr_t)op, in, (size_t)n, NULL, 0, &out, 1);
    if (cairn_jni_check_status(env, status)) return 0;
    cairn_tensor_free(out);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (jlong)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
}
