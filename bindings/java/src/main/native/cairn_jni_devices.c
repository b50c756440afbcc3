/* Hand-written JNI glue (class dev.cairn.DeviceConfig) for the one function of the Devices section
 * the generator leaves unbound: cairn_context_threads, whose two int32_t out-parameters come back
 * as an int[2] {intra_op, inter_op}. */
#include <stdint.h>

#include "cairn_jni.h"

JNIEXPORT jintArray JNICALL Java_dev_cairn_DeviceConfig_threads(JNIEnv *env, jclass cls, jlong ctx) {
  (void)cls;
  int32_t intra = 0, inter = 0;
  if (cairn_jni_check_status(env, cairn_context_threads((cairn_context *)(intptr_t)ctx, &intra, &inter))) return NULL;
  jintArray out = (*env)->NewIntArray(env, 2);
  if (!out) return NULL; /* OutOfMemoryError is pending */
  const jint values[2] = {(jint)intra, (jint)inter};
  (*env)->SetIntArrayRegion(env, out, 0, 2, values);
  return out;
}
