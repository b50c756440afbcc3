/* Hand-written JNI glue (class dev.cairn.IoNative) for the 1.1 functions whose parameters the
 * generator has no Java mapping for (CairnNative.java lists them as "not bound"): borrowed record
 * bytes, float arrays, arrays of byte strings, the feature-values struct, feature spec arrays with
 * tensor fields, and the profile's borrowed event strings. Conventions as in cairn_jni.h: a failure
 * leaves a Java exception pending and returns 0 / NULL. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_jni.h"

/* ---- helpers ---- */

/* Copies of a float[] (null gives NULL and 0). */
static int floats_of(JNIEnv *env, cairn_jni_arena *a, jfloatArray array, const float **out, size_t *n) {
  *out = NULL;
  *n = cairn_jni_length(env, array);
  if (!*n) return 1;
  float *buf = cairn_jni_arena_alloc(env, a, *n * sizeof(float));
  if (!buf) return 0;
  (*env)->GetFloatArrayRegion(env, array, 0, (jsize)*n, buf);
  *out = buf;
  return 1;
}

/* The byte strings of a byte[][] as pointer and length arrays in the arena (a null element is an
 * empty string). */
static int strings_of(JNIEnv *env, cairn_jni_arena *a, jobjectArray array, const void ***ptrs, size_t **lens,
                      size_t *n) {
  *ptrs = NULL;
  *lens = NULL;
  *n = cairn_jni_length(env, array);
  if (!*n) return 1;
  const void **p = cairn_jni_arena_alloc(env, a, *n * sizeof(void *));
  size_t *l = cairn_jni_arena_alloc(env, a, *n * sizeof(size_t));
  if (!p || !l) return 0;
  for (size_t k = 0; k < *n; ++k) {
    jobject e;
    if (!cairn_jni_element(env, array, k, CAIRN_JNI_BYTES, &e)) return 0;
    l[k] = e ? (size_t)(*env)->GetArrayLength(env, (jarray)e) : 0;
    p[k] = NULL;
    if (l[k]) {
      void *buf = cairn_jni_arena_alloc(env, a, l[k]);
      if (!buf) {
        (*env)->DeleteLocalRef(env, e);
        return 0;
      }
      (*env)->GetByteArrayRegion(env, (jbyteArray)e, 0, (jsize)l[k], buf);
      p[k] = buf;
    }
    if (e) (*env)->DeleteLocalRef(env, e);
  }
  *ptrs = p;
  *lens = l;
  return 1;
}

/* A new byte[][] of `n` null elements. */
static jobjectArray new_byte_arrays(JNIEnv *env, size_t n) {
  jclass cls = (*env)->FindClass(env, "[B");
  if (!cls) return NULL;
  jobjectArray out = (*env)->NewObjectArray(env, (jsize)n, cls, NULL);
  (*env)->DeleteLocalRef(env, cls);
  return out;
}

/* ---- records ---- */

/* The next record's bytes, or null (end of file, or a partial record: see recordReaderPartial). */
JNIEXPORT jbyteArray JNICALL Java_dev_cairn_IoNative_recordReaderNext(JNIEnv *env, jclass cls, jlong r) {
  (void)cls;
  const void *data = NULL;
  size_t n = 0;
  cairn_bool got = CAIRN_FALSE;
  if (cairn_jni_check_status(env, cairn_record_reader_next((cairn_record_reader *)(intptr_t)r, &data, &n, &got))) {
    return NULL;
  }
  if (!got) return NULL;
  if (n == 0) return (*env)->NewByteArray(env, 0);
  return cairn_jni_new_bytes(env, (const char *)data, n);
}

/* {begin, end} of a shard. */
JNIEXPORT jlongArray JNICALL Java_dev_cairn_IoNative_recordShardRange(JNIEnv *env, jclass cls, jlong count,
                                                                      jlong num_shards, jlong shard) {
  (void)cls;
  int64_t range[2] = {0, 0};
  if (cairn_jni_check_status(env, cairn_record_shard_range(count, num_shards, shard, &range[0], &range[1]))) {
    return NULL;
  }
  jlongArray out = (*env)->NewLongArray(env, 2);
  if (out) (*env)->SetLongArrayRegion(env, out, 0, 2, (const jlong *)range);
  return out;
}

/* ---- examples ---- */

/* Sets a float feature, or appends a step of floats to a feature list (append != 0). */
JNIEXPORT void JNICALL Java_dev_cairn_IoNative_exampleFloats(JNIEnv *env, jclass cls, jlong ex, jbyteArray key,
                                                             jfloatArray values, jboolean append) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  const char *c_key;
  const float *v;
  size_t n;
  if (cairn_jni_cstring(env, &arena, key, &c_key) && floats_of(env, &arena, values, &v, &n)) {
    cairn_example *e = (cairn_example *)(intptr_t)ex;
    cairn_jni_check_status(env, append ? cairn_example_append_step_floats(e, c_key, v, n)
                                       : cairn_example_set_floats(e, c_key, v, n));
  }
  cairn_jni_arena_release(&arena);
}

/* Sets or appends a bytes feature. */
JNIEXPORT void JNICALL Java_dev_cairn_IoNative_exampleBytes(JNIEnv *env, jclass cls, jlong ex, jbyteArray key,
                                                            jobjectArray values, jboolean append) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  const char *c_key;
  const void **p;
  size_t *l;
  size_t n;
  if (cairn_jni_cstring(env, &arena, key, &c_key) && strings_of(env, &arena, values, &p, &l, &n)) {
    cairn_example *e = (cairn_example *)(intptr_t)ex;
    cairn_jni_check_status(env, append ? cairn_example_append_step_bytes(e, c_key, (const void *const *)p, l, n)
                                       : cairn_example_set_bytes(e, c_key, (const void *const *)p, l, n));
  }
  cairn_jni_arena_release(&arena);
}

/* The values of a feature (step -1) or of a step of a feature list: long[] (int64), float[]
 * (float), byte[][] (bytes) or an empty Object[] (a feature with no list set). */
JNIEXPORT jobject JNICALL Java_dev_cairn_IoNative_exampleValues(JNIEnv *env, jclass cls, jlong ex, jbyteArray key,
                                                                jlong step) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  jobject result = NULL;
  const char *c_key;
  cairn_feature_values v = CAIRN_FEATURE_VALUES_INIT;
  const cairn_example *e = (const cairn_example *)(intptr_t)ex;
  if (!cairn_jni_cstring(env, &arena, key, &c_key)) goto done;
  if (cairn_jni_check_status(env, cairn_example_values(e, c_key, step, &v))) goto done;
  if (v.count > (size_t)INT32_MAX) {
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "feature too long for a Java array");
    goto done;
  }
  switch (v.kind) {
    case CAIRN_FEATURE_INT64: {
      jlongArray a = (*env)->NewLongArray(env, (jsize)v.count);
      if (a && v.count) (*env)->SetLongArrayRegion(env, a, 0, (jsize)v.count, (const jlong *)v.int64s);
      result = a;
      break;
    }
    case CAIRN_FEATURE_FLOAT: {
      jfloatArray a = (*env)->NewFloatArray(env, (jsize)v.count);
      if (a && v.count) (*env)->SetFloatArrayRegion(env, a, 0, (jsize)v.count, v.floats);
      result = a;
      break;
    }
    case CAIRN_FEATURE_BYTES: {
      jobjectArray a = new_byte_arrays(env, v.count);
      if (!a) goto done;
      for (size_t k = 0; k < v.count; ++k) {
        const void *data = NULL;
        size_t n = 0;
        if (cairn_jni_check_status(env, cairn_example_bytes(e, c_key, step, k, &data, &n))) goto done;
        jbyteArray b = n ? cairn_jni_new_bytes(env, (const char *)data, n) : (*env)->NewByteArray(env, 0);
        if (!b) goto done;
        (*env)->SetObjectArrayElement(env, a, (jsize)k, b);
        (*env)->DeleteLocalRef(env, b);
      }
      result = a;
      break;
    }
    default: {
      jclass object = (*env)->FindClass(env, "java/lang/Object");
      if (!object) goto done;
      result = (*env)->NewObjectArray(env, 0, object, NULL);
      (*env)->DeleteLocalRef(env, object);
      break;
    }
  }
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* The specs as a cairn_feature_spec array: keys (byte[][]), kinds, dtypes, shapes (long[][], null
 * elements for rank 0) and default tensors (0 for none). */
static int specs_of(JNIEnv *env, cairn_jni_arena *a, jobjectArray keys, jintArray kinds, jintArray dtypes,
                    jobjectArray shapes, jlongArray defaults, cairn_feature_spec **out, size_t *n) {
  const void **key_ptrs;
  size_t *key_lens;
  if (!strings_of(env, a, keys, &key_ptrs, &key_lens, n)) return 0;
  if (!cairn_jni_require_length(env, kinds, *n, "kinds") || !cairn_jni_require_length(env, dtypes, *n, "dtypes") ||
      !cairn_jni_require_length(env, shapes, *n, "shapes") || !cairn_jni_require_length(env, defaults, *n, "defaults")) {
    return 0;
  }
  cairn_feature_spec *specs = cairn_jni_arena_alloc(env, a, (*n ? *n : 1) * sizeof(cairn_feature_spec));
  if (!specs) return 0;
  for (size_t k = 0; k < *n; ++k) {
    cairn_feature_spec s = CAIRN_FEATURE_SPEC_INIT;
    char *key = cairn_jni_arena_alloc(env, a, key_lens[k] + 1);
    if (!key) return 0;
    if (key_lens[k]) memcpy(key, key_ptrs[k], key_lens[k]);
    key[key_lens[k]] = '\0';
    s.key = key;
    jint kind, dtype;
    jlong def;
    (*env)->GetIntArrayRegion(env, kinds, (jsize)k, 1, &kind);
    (*env)->GetIntArrayRegion(env, dtypes, (jsize)k, 1, &dtype);
    (*env)->GetLongArrayRegion(env, defaults, (jsize)k, 1, &def);
    s.kind = (cairn_feature_spec_kind)kind;
    s.dtype = (cairn_dtype)dtype;
    s.default_value = (const cairn_tensor *)(intptr_t)def;
    jobject shape;
    if (!cairn_jni_element(env, shapes, k, CAIRN_JNI_LONGS, &shape)) return 0;
    const int64_t *dims = NULL;
    size_t rank = 0;
    int ok = cairn_jni_longs(env, a, (jlongArray)shape, &dims, &rank);
    if (shape) (*env)->DeleteLocalRef(env, shape);
    if (!ok) return 0;
    s.shape = dims;
    s.rank = rank;
    specs[k] = s;
  }
  *out = specs;
  return 1;
}

/* How many tensors parseExamples gives for these specs. */
JNIEXPORT jlong JNICALL Java_dev_cairn_IoNative_parseNumOutputs(JNIEnv *env, jclass cls, jobjectArray keys,
                                                                jintArray kinds, jintArray dtypes, jobjectArray shapes,
                                                                jlongArray defaults) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_feature_spec *specs;
  size_t n, out = 0;
  if (specs_of(env, &arena, keys, kinds, dtypes, shapes, defaults, &specs, &n)) {
    cairn_jni_check_status(env, cairn_parse_num_outputs(specs, n, &out));
  }
  cairn_jni_arena_release(&arena);
  return (jlong)out;
}

/* cairn_dataset_parse_example: the specs as for parseExamples. */
JNIEXPORT jlong JNICALL Java_dev_cairn_IoNative_datasetParseExample(JNIEnv *env, jclass cls, jlong in,
                                                                    jbyteArray component, jobjectArray keys,
                                                                    jintArray kinds, jintArray dtypes,
                                                                    jobjectArray shapes, jlongArray defaults) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_feature_spec *specs;
  size_t n;
  const char *c_component;
  cairn_dataset *out = NULL;
  if (cairn_jni_cstring(env, &arena, component, &c_component) &&
      specs_of(env, &arena, keys, kinds, dtypes, shapes, defaults, &specs, &n)) {
    cairn_jni_check_status(env, cairn_dataset_parse_example((const cairn_dataset *)(intptr_t)in, c_component, specs,
                                                            n, &out));
  }
  cairn_jni_arena_release(&arena);
  return (jlong)(intptr_t)out;
}

/* Parses the records (byte[][]) as Examples or SequenceExamples into `n_outputs` new tensor handles. */
JNIEXPORT jlongArray JNICALL Java_dev_cairn_IoNative_parseExamples(JNIEnv *env, jclass cls, jlong ctx,
                                                                   jboolean sequence, jobjectArray records,
                                                                   jobjectArray keys, jintArray kinds,
                                                                   jintArray dtypes, jobjectArray shapes,
                                                                   jlongArray defaults, jint n_outputs) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  jlongArray result = NULL;
  const void **recs;
  size_t *lens, n, n_specs;
  cairn_feature_spec *specs;
  cairn_tensor **outs = NULL;
  if (!strings_of(env, &arena, records, &recs, &lens, &n)) goto done;
  if (!specs_of(env, &arena, keys, kinds, dtypes, shapes, defaults, &specs, &n_specs)) goto done;
  outs = cairn_jni_arena_alloc(env, &arena, ((size_t)n_outputs + 1) * sizeof(cairn_tensor *));
  if (!outs) goto done;
  memset(outs, 0, ((size_t)n_outputs + 1) * sizeof(cairn_tensor *));
  cairn_context *c = (cairn_context *)(intptr_t)ctx;
  cairn_status *status =
      sequence ? cairn_parse_sequence_examples(c, (const void *const *)recs, lens, n, specs, n_specs, outs,
                                               (size_t)n_outputs)
               : cairn_parse_examples(c, (const void *const *)recs, lens, n, specs, n_specs, outs, (size_t)n_outputs);
  if (cairn_jni_check_status(env, status)) goto done;
  result = (*env)->NewLongArray(env, n_outputs);
  if (!result) {
    for (jint k = 0; k < n_outputs; ++k) cairn_tensor_free(outs[k]);
    goto done;
  }
  for (jint k = 0; k < n_outputs; ++k) {
    jlong h = (jlong)(intptr_t)outs[k];
    (*env)->SetLongArrayRegion(env, result, k, 1, &h);
  }
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* ---- profiler ---- */

/* Event `index`: its name, category and device in `strings` (a String[3]); returns {start_ns,
 * duration_ns}. */
JNIEXPORT jlongArray JNICALL Java_dev_cairn_IoNative_profileEvent(JNIEnv *env, jclass cls, jlong p, jlong index,
                                                                  jobjectArray strings) {
  (void)cls;
  const char *s[3] = {NULL, NULL, NULL};
  int64_t times[2] = {0, 0};
  if (index < 0) {
    cairn_jni_throw(env, "java/lang/IndexOutOfBoundsException", "negative event index");
    return NULL;
  }
  if (cairn_jni_check_status(env, cairn_profile_event((const cairn_profile *)(intptr_t)p, (size_t)index, &s[0],
                                                      &s[1], &s[2], &times[0], &times[1]))) {
    return NULL;
  }
  for (jsize k = 0; k < 3; ++k) {
    jstring str = cairn_jni_new_string(env, s[k] ? s[k] : "");
    if (!str) return NULL;
    (*env)->SetObjectArrayElement(env, strings, k, str);
    (*env)->DeleteLocalRef(env, str);
  }
  jlongArray out = (*env)->NewLongArray(env, 2);
  if (out) (*env)->SetLongArrayRegion(env, out, 0, 2, (const jlong *)times);
  return out;
}
