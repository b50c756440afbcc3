/* Hand-written JNI for the Distribution section (dev.cairn.DistributeNative): the calls whose
 * output count the generator cannot know (one slot per replica, or per replica and component). */
#include <stdint.h>
#include <stdlib.h>

#include "cairn_jni.h"

/* Runs `call` with `n` output slots and copies the new handles into `parts` (n elements). */
static void with_slots(JNIEnv *env, jlongArray parts, size_t n,
                       cairn_status *(*call)(void *args, cairn_tensor **out, size_t n), void *args) {
  if (cairn_jni_length(env, parts) != n) {
    cairn_jni_throw(env, "java/lang/IllegalArgumentException", "parts has the wrong number of slots");
    return;
  }
  cairn_tensor **out = calloc(n + 1, sizeof *out);
  jlong *raw = calloc(n + 1, sizeof *raw);
  if (!out || !raw) {
    free(out);
    free(raw);
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "cairn JNI: out of native memory");
    return;
  }
  if (!cairn_jni_check_status(env, call(args, out, n))) {
    for (size_t k = 0; k < n; ++k) raw[k] = (jlong)(intptr_t)out[k];
    if (n) (*env)->SetLongArrayRegion(env, parts, 0, (jsize)n, raw);
  }
  free(out);
  free(raw);
}

typedef struct distribute_args {
  cairn_strategy *s;
  intptr_t source; /* the global tensor or the iterator */
  size_t n_components;
} distribute_args;

static cairn_status *split_batch(void *args, cairn_tensor **out, size_t n) {
  distribute_args *a = args;
  return cairn_strategy_split_batch(a->s, (const cairn_tensor *)a->source, out, n);
}

static cairn_status *iterator_next(void *args, cairn_tensor **out, size_t n) {
  distribute_args *a = args;
  return cairn_strategy_iterator_next(a->s, (cairn_object *)a->source, out, n);
}

JNIEXPORT void JNICALL Java_dev_cairn_DistributeNative_splitBatch(JNIEnv *env, jclass cls, jlong s, jlong global,
                                                                  jlongArray parts) {
  (void)cls;
  distribute_args a = {(cairn_strategy *)(intptr_t)s, (intptr_t)global, 0};
  with_slots(env, parts, cairn_strategy_num_replicas(a.s), split_batch, &a);
}

JNIEXPORT void JNICALL Java_dev_cairn_DistributeNative_iteratorNext(JNIEnv *env, jclass cls, jlong s, jlong it,
                                                                    jlongArray parts, jint n_components) {
  (void)cls;
  if (n_components < 0) {
    cairn_jni_throw(env, "java/lang/IllegalArgumentException", "nComponents must be >= 0");
    return;
  }
  distribute_args a = {(cairn_strategy *)(intptr_t)s, (intptr_t)it, (size_t)n_components};
  with_slots(env, parts, cairn_strategy_num_replicas(a.s) * a.n_components, iterator_next, &a);
}
