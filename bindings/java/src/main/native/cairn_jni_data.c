/* Hand-written JNI glue (class dev.cairn.DataNative) for the tf.data functions the generator
 * leaves unbound or binds in a way datasets cannot use: element spec accessors, CSV options (arrays
 * of dtypes and strings), padded_batch, the iterator's next (end of data is `false`, not an
 * exception) and save, and every function taking a host callback (map, filter, generator,
 * interleave).
 *
 * Callbacks: the C `user_data` is a JNI global reference to a dev.cairn.DatasetCallback, deleted
 * by the `release` hook the C library calls once the last dataset using it is gone. Cairn calls
 * them on its worker threads, several at once: cairn_jni_callback_enter attaches such a thread to
 * the JVM once, as a daemon, and it stays attached until it exits (see cairn_jni.c). Each call
 * runs inside its own JNI local frame, so a long-lived worker thread accumulates no local
 * references. An exception the Java side throws is cleared here and becomes the callback's error
 * status (its code when it is a CairnException, else UNKNOWN; its message), which the C library
 * reports for that element ("map 'f' (element 3): java.lang.IllegalStateException: boom"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_jni.h"

static jclass g_callback_class; /* dev.cairn.DatasetCallback */
static jmethodID g_function;    /* void function(long ctx, long[] inputs, long[] outputs) */
static jmethodID g_generate;    /* boolean generate(long ctx, long index, long[] outputs) */
static jmethodID g_dataset;     /* long dataset(long ctx, long[] element) */

int cairn_jni_data_on_load(JNIEnv *env) {
  jclass local = (*env)->FindClass(env, "dev/cairn/DatasetCallback");
  if (!local) return 0;
  g_callback_class = (jclass)(*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  if (!g_callback_class) return 0;
  g_function = (*env)->GetMethodID(env, g_callback_class, "function", "(J[J[J)V");
  g_generate = (*env)->GetMethodID(env, g_callback_class, "generate", "(JJ[J)Z");
  g_dataset = (*env)->GetMethodID(env, g_callback_class, "dataset", "(J[J)J");
  return g_function && g_generate && g_dataset;
}

/* ---- callbacks ---- */

/* Enters a callback: a JNIEnv for this thread and a local frame. NULL and an error status in
 * *st when the thread cannot reach the JVM. */
static JNIEnv *enter(cairn_status **st) {
  JNIEnv *env;
  int attached;
  *st = NULL;
  if (!cairn_jni_callback_enter(&env, &attached)) {
    *st = cairn_status_create(CAIRN_INTERNAL, "cannot attach this thread to the Java VM");
    return NULL;
  }
  if ((*env)->PushLocalFrame(env, 16) != 0) {
    (*env)->ExceptionClear(env);
    cairn_jni_callback_leave(env, attached, "dataset callback");
    *st = cairn_status_create(CAIRN_RESOURCE_EXHAUSTED, "no memory for JNI local references");
    return NULL;
  }
  return env;
}

/* Leaves a callback: the pending exception (if any) as a status, the frame popped. */
static cairn_status *leave(JNIEnv *env) {
  cairn_status *st = NULL;
  jthrowable error = (*env)->ExceptionOccurred(env);
  if (error) {
    (*env)->ExceptionClear(env);
    st = cairn_jni_exception_status(env, error);
  }
  (*env)->PopLocalFrame(env, NULL);
  return st;
}

static jlongArray handle_array(JNIEnv *env, cairn_tensor *const *tensors, size_t n) {
  jlongArray a = (*env)->NewLongArray(env, (jsize)n);
  for (size_t k = 0; a && k < n; ++k) {
    jlong h = (jlong)(intptr_t)tensors[k];
    (*env)->SetLongArrayRegion(env, a, (jsize)k, 1, &h);
  }
  return a;
}

/* Copies the handles Java put into `a` to `outputs` (the C library takes them). */
static void take_handles(JNIEnv *env, jlongArray a, cairn_tensor **outputs, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    jlong h = 0;
    (*env)->GetLongArrayRegion(env, a, (jsize)k, 1, &h);
    outputs[k] = (cairn_tensor *)(intptr_t)h;
  }
}

/* cairn_function_fn of map and filter. */
static cairn_status *function_trampoline(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                         size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  cairn_status *st;
  JNIEnv *env = enter(&st);
  if (!env) return st;
  jlongArray in = handle_array(env, inputs, n_inputs);
  jlongArray out = in ? (*env)->NewLongArray(env, (jsize)n_outputs) : NULL;
  if (out) (*env)->CallVoidMethod(env, (jobject)user_data, g_function, (jlong)(intptr_t)ctx, in, out);
  if (out && !(*env)->ExceptionCheck(env)) take_handles(env, out, outputs, n_outputs);
  return leave(env);
}

static cairn_status *generator_trampoline(void *user_data, cairn_context *ctx, int64_t index, cairn_tensor **outputs,
                                          size_t n_outputs, cairn_bool *got) {
  cairn_status *st;
  JNIEnv *env = enter(&st);
  if (!env) return st;
  *got = CAIRN_FALSE;
  jlongArray out = (*env)->NewLongArray(env, (jsize)n_outputs);
  jboolean more = JNI_FALSE;
  if (out) {
    more = (*env)->CallBooleanMethod(env, (jobject)user_data, g_generate, (jlong)(intptr_t)ctx, (jlong)index, out);
  }
  if (out && more && !(*env)->ExceptionCheck(env)) {
    take_handles(env, out, outputs, n_outputs);
    *got = CAIRN_TRUE;
  }
  return leave(env);
}

static cairn_status *dataset_trampoline(void *user_data, cairn_context *ctx, cairn_tensor *const *element, size_t n,
                                        cairn_dataset **out) {
  cairn_status *st;
  JNIEnv *env = enter(&st);
  if (!env) return st;
  jlongArray in = handle_array(env, element, n);
  jlong ds = 0;
  if (in) ds = (*env)->CallLongMethod(env, (jobject)user_data, g_dataset, (jlong)(intptr_t)ctx, in);
  if (!(*env)->ExceptionCheck(env)) *out = (cairn_dataset *)(intptr_t)ds;
  return leave(env);
}

/* The release hook: deletes the global reference to the DatasetCallback. */
static void release_callback(void *user_data) {
  JNIEnv *env;
  int attached;
  if (!cairn_jni_callback_enter(&env, &attached)) return;
  (*env)->DeleteGlobalRef(env, (jobject)user_data);
  cairn_jni_callback_leave(env, attached, "dataset callback release");
}

/* The result of a constructor given `ref` as user_data: the new dataset, or 0 with the exception
 * pending. On failure the library never took the reference (it calls no release): deleted here. */
static jlong took_callback(JNIEnv *env, cairn_status *st, jobject ref, cairn_dataset *const *out) {
  if (st) (*env)->DeleteGlobalRef(env, ref);
  if (cairn_jni_check_status(env, st)) return 0;
  return (jlong)(intptr_t)*out;
}

/* ---- marshalling ---- */

/* Tensor specs from parallel arrays: dtypes (int[]) and shapes (long[][]); null dtypes gives NULL. */
static int specs_of(JNIEnv *env, cairn_jni_arena *a, jintArray dtypes, jobjectArray shapes, cairn_tensor_spec **out,
                    size_t *n) {
  *out = NULL;
  *n = cairn_jni_length(env, dtypes);
  if (!dtypes) return 1;
  if (!cairn_jni_require_length(env, shapes, *n, "shapes")) return 0;
  cairn_tensor_spec *specs = cairn_jni_arena_alloc(env, a, (*n + 1) * sizeof *specs);
  if (!specs) return 0;
  for (size_t k = 0; k < *n; ++k) {
    if (cairn_jni_check_status(env, cairn_tensor_spec_init(&specs[k], (uint32_t)sizeof specs[k]))) return 0;
    jint dtype;
    (*env)->GetIntArrayRegion(env, dtypes, (jsize)k, 1, &dtype);
    specs[k].dtype = (cairn_dtype)dtype;
    jobject shape;
    if (!cairn_jni_element(env, shapes, k, CAIRN_JNI_LONGS, &shape)) return 0;
    int ok = cairn_jni_longs(env, a, (jlongArray)shape, &specs[k].shape, &specs[k].rank);
    if (shape) (*env)->DeleteLocalRef(env, shape);
    if (!ok) return 0;
  }
  *out = specs;
  return 1;
}

/* ---- element specs ---- */

JNIEXPORT jstring JNICALL Java_dev_cairn_DataNative_componentName(JNIEnv *env, jclass cls, jlong ds, jlong index) {
  (void)cls;
  const char *name = NULL;
  if (cairn_jni_check_status(env, cairn_dataset_component((const cairn_dataset *)(intptr_t)ds, (size_t)index, &name,
                                                          NULL, NULL, NULL))) {
    return NULL;
  }
  return cairn_jni_new_string(env, name);
}

JNIEXPORT jint JNICALL Java_dev_cairn_DataNative_componentDtype(JNIEnv *env, jclass cls, jlong ds, jlong index) {
  (void)cls;
  cairn_dtype dtype = CAIRN_FLOAT32;
  cairn_jni_check_status(env, cairn_dataset_component((const cairn_dataset *)(intptr_t)ds, (size_t)index, NULL,
                                                      &dtype, NULL, NULL));
  return (jint)dtype;
}

JNIEXPORT jlongArray JNICALL Java_dev_cairn_DataNative_componentShape(JNIEnv *env, jclass cls, jlong ds, jlong index) {
  (void)cls;
  const int64_t *shape = NULL;
  size_t rank = 0;
  if (cairn_jni_check_status(env, cairn_dataset_component((const cairn_dataset *)(intptr_t)ds, (size_t)index, NULL,
                                                          NULL, &shape, &rank))) {
    return NULL;
  }
  jlongArray out = (*env)->NewLongArray(env, (jsize)rank);
  if (out && rank) (*env)->SetLongArrayRegion(env, out, 0, (jsize)rank, (const jlong *)shape);
  return out;
}

/* ---- sources ---- */

/* cairn_dataset_csv. `set` bit 0: header, bit 1: delimiter; null arrays and naValue keep the defaults. */
JNIEXPORT jlong JNICALL Java_dev_cairn_DataNative_csv(JNIEnv *env, jclass cls, jlong ctx, jobjectArray paths,
                                                      jintArray dtypes, jobjectArray defaults, jobjectArray names,
                                                      jlongArray select, jlong set, jint header, jint delimiter,
                                                      jbyteArray na_value) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_csv_options opts;
  const char **c_paths, **c_defaults, **c_names;
  size_t n_paths, n_defaults, n_names, n_select;
  if (cairn_jni_check_status(env, cairn_csv_options_init(&opts, (uint32_t)sizeof opts))) goto done;
  if (!cairn_jni_cstrings(env, &arena, paths, &c_paths, &n_paths)) goto done;
  size_t n_columns = cairn_jni_length(env, dtypes);
  cairn_dtype *c_dtypes = cairn_jni_arena_alloc(env, &arena, (n_columns + 1) * sizeof *c_dtypes);
  if (!c_dtypes) goto done;
  for (size_t k = 0; k < n_columns; ++k) {
    jint d;
    (*env)->GetIntArrayRegion(env, dtypes, (jsize)k, 1, &d);
    c_dtypes[k] = (cairn_dtype)d;
  }
  opts.column_dtypes = c_dtypes;
  opts.n_columns = n_columns;
  if (!cairn_jni_cstrings(env, &arena, defaults, &c_defaults, &n_defaults)) goto done;
  if (!cairn_jni_cstrings(env, &arena, names, &c_names, &n_names)) goto done;
  if (!cairn_jni_check_length(env, defaults, n_columns, "column defaults") ||
      !cairn_jni_check_length(env, names, n_columns, "column names") ||
      !cairn_jni_check_length(env, select, n_columns, "select columns")) {
    goto done;
  }
  opts.column_defaults = c_defaults;
  opts.column_names = c_names;
  if (!cairn_jni_longs(env, &arena, select, &opts.select_columns, &n_select)) goto done;
  if (set & 1) opts.header = (cairn_bool)header;
  if (set & 2) opts.delimiter = (int32_t)delimiter;
  if (!cairn_jni_cstring(env, &arena, na_value, &opts.na_value)) goto done;
  cairn_dataset *out = NULL;
  if (cairn_jni_check_status(env, cairn_dataset_csv((cairn_context *)(intptr_t)ctx, c_paths, n_paths, &opts, &out))) {
    goto done;
  }
  result = (jlong)(intptr_t)out;
done:
  cairn_jni_arena_release(&arena);
  return result;
}

JNIEXPORT jlong JNICALL Java_dev_cairn_DataNative_fromGenerator(JNIEnv *env, jclass cls, jlong ctx, jobjectArray names,
                                                                jintArray dtypes, jobjectArray shapes,
                                                                jobject callback) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  const char **c_names;
  size_t n_names, n;
  cairn_tensor_spec *specs;
  if (!cairn_jni_cstrings(env, &arena, names, &c_names, &n_names)) goto done;
  if (!specs_of(env, &arena, dtypes, shapes, &specs, &n)) goto done;
  if (!cairn_jni_check_length(env, names, n, "names")) goto done;
  jobject ref = cairn_jni_global_ref(env, callback);
  if (!ref) goto done;
  cairn_dataset *out = NULL;
  result = took_callback(env,
                         cairn_dataset_from_generator((cairn_context *)(intptr_t)ctx, c_names, specs, n,
                                                      generator_trampoline, ref, release_callback, &out),
                         ref, &out);
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* ---- transformations with callbacks ---- */

/* cairn_dataset_map. `set` bits: 0 numParallelCalls, 1 deterministic, 2 compile, 3 seed; null
 * outputNames / outputDtypes keep the defaults. */
JNIEXPORT jlong JNICALL Java_dev_cairn_DataNative_map(JNIEnv *env, jclass cls, jlong in, jbyteArray name,
                                                      jobject callback, jlong set, jint num_parallel_calls,
                                                      jboolean deterministic, jboolean compile,
                                                      jobjectArray output_names, jintArray output_dtypes,
                                                      jobjectArray output_shapes, jlong n_outputs, jlong seed) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_map_options opts;
  const char *c_name;
  const char **c_names;
  size_t n_names, n_specs;
  cairn_tensor_spec *specs;
  if (cairn_jni_check_status(env, cairn_map_options_init(&opts, (uint32_t)sizeof opts))) goto done;
  if (!cairn_jni_cstring(env, &arena, name, &c_name)) goto done;
  if (!cairn_jni_cstrings(env, &arena, output_names, &c_names, &n_names)) goto done;
  if (!specs_of(env, &arena, output_dtypes, output_shapes, &specs, &n_specs)) goto done;
  if (!cairn_jni_check_length(env, output_names, (size_t)n_outputs, "output names") ||
      !cairn_jni_check_length(env, output_dtypes, (size_t)n_outputs, "output specs")) {
    goto done;
  }
  if (set & 1) opts.num_parallel_calls = (int32_t)num_parallel_calls;
  if (set & 2) opts.deterministic = deterministic ? CAIRN_TRUE : CAIRN_FALSE;
  if (set & 4) opts.compile = compile ? CAIRN_TRUE : CAIRN_FALSE;
  if (set & 8) opts.seed = (int64_t)seed;
  opts.output_names = c_names;
  opts.output_specs = specs;
  opts.n_outputs = (size_t)n_outputs;
  opts.release = release_callback;
  jobject ref = cairn_jni_global_ref(env, callback);
  if (!ref) goto done;
  cairn_dataset *out = NULL;
  result = took_callback(
      env, cairn_dataset_map((const cairn_dataset *)(intptr_t)in, c_name, function_trampoline, ref, &opts, &out),
      ref, &out);
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* cairn_dataset_filter. `set` bits: 0 compile, 1 seed. */
JNIEXPORT jlong JNICALL Java_dev_cairn_DataNative_filter(JNIEnv *env, jclass cls, jlong in, jbyteArray name,
                                                         jobject callback, jlong set, jboolean compile, jlong seed) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_filter_options opts;
  const char *c_name;
  if (cairn_jni_check_status(env, cairn_filter_options_init(&opts, (uint32_t)sizeof opts))) goto done;
  if (!cairn_jni_cstring(env, &arena, name, &c_name)) goto done;
  if (set & 1) opts.compile = compile ? CAIRN_TRUE : CAIRN_FALSE;
  if (set & 2) opts.seed = (int64_t)seed;
  opts.release = release_callback;
  jobject ref = cairn_jni_global_ref(env, callback);
  if (!ref) goto done;
  cairn_dataset *out = NULL;
  result = took_callback(
      env, cairn_dataset_filter((const cairn_dataset *)(intptr_t)in, c_name, function_trampoline, ref, &opts, &out),
      ref, &out);
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* cairn_dataset_interleave. `set` bits: 0 cycleLength, 1 blockLength, 2 numParallelCalls, 3 deterministic. */
JNIEXPORT jlong JNICALL Java_dev_cairn_DataNative_interleave(JNIEnv *env, jclass cls, jlong in, jobject callback,
                                                             jobjectArray names, jintArray dtypes, jobjectArray shapes,
                                                             jlong set, jint cycle_length, jint block_length,
                                                             jint num_parallel_calls, jboolean deterministic) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_interleave_options opts;
  const char **c_names;
  size_t n_names, n;
  cairn_tensor_spec *specs;
  if (cairn_jni_check_status(env, cairn_interleave_options_init(&opts, (uint32_t)sizeof opts))) goto done;
  if (!cairn_jni_cstrings(env, &arena, names, &c_names, &n_names)) goto done;
  if (!specs_of(env, &arena, dtypes, shapes, &specs, &n)) goto done;
  if (!cairn_jni_check_length(env, names, n, "names")) goto done;
  if (set & 1) opts.cycle_length = (int32_t)cycle_length;
  if (set & 2) opts.block_length = (int32_t)block_length;
  if (set & 4) opts.num_parallel_calls = (int32_t)num_parallel_calls;
  if (set & 8) opts.deterministic = deterministic ? CAIRN_TRUE : CAIRN_FALSE;
  opts.release = release_callback;
  jobject ref = cairn_jni_global_ref(env, callback);
  if (!ref) goto done;
  cairn_dataset *out = NULL;
  result = took_callback(env,
                         cairn_dataset_interleave((const cairn_dataset *)(intptr_t)in, dataset_trampoline, ref,
                                                  c_names, specs, n, &opts, &out),
                         ref, &out);
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* ---- other transformations ---- */

/* cairn_dataset_padded_batch: paddedShapes null (all to the batch's largest) or one long[] per
 * component; paddingValues null or one tensor handle per component (0: zeros). */
JNIEXPORT jlong JNICALL Java_dev_cairn_DataNative_paddedBatch(JNIEnv *env, jclass cls, jlong in, jlong batch_size,
                                                              jboolean drop_remainder, jintArray shape_dtypes,
                                                              jobjectArray padded_shapes, jlongArray padding_values) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_tensor_spec *specs;
  size_t n_specs, n_values;
  const int64_t *values;
  if (!specs_of(env, &arena, shape_dtypes, padded_shapes, &specs, &n_specs)) goto done;
  if (!cairn_jni_longs(env, &arena, padding_values, &values, &n_values)) goto done;
  cairn_tensor **c_values = NULL;
  if (padding_values) {
    c_values = cairn_jni_arena_alloc(env, &arena, (n_values + 1) * sizeof *c_values);
    if (!c_values) goto done;
    for (size_t k = 0; k < n_values; ++k) c_values[k] = (cairn_tensor *)(intptr_t)values[k];
  }
  cairn_dataset *out = NULL;
  if (cairn_jni_check_status(env, cairn_dataset_padded_batch((const cairn_dataset *)(intptr_t)in, (int64_t)batch_size,
                                                             drop_remainder ? CAIRN_TRUE : CAIRN_FALSE, specs,
                                                             c_values, &out))) {
    goto done;
  }
  result = (jlong)(intptr_t)out;
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* ---- iterators ---- */

/* cairn_iterator_next: true with new handles in `outputs`, false at the end of data; any other
 * error throws (the failed element is skipped, the iterator stays usable). */
JNIEXPORT jboolean JNICALL Java_dev_cairn_DataNative_iteratorNext(JNIEnv *env, jclass cls, jlong it,
                                                                  jlongArray outputs) {
  (void)cls;
  size_t n = cairn_jni_length(env, outputs);
  cairn_tensor *inline_buf[16];
  cairn_tensor **tensors = n <= 16 ? inline_buf : malloc(n * sizeof *tensors);
  if (!tensors) {
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "cairn JNI: out of native memory");
    return JNI_FALSE;
  }
  jboolean got = JNI_FALSE;
  cairn_status *st = cairn_iterator_next((cairn_object *)(intptr_t)it, tensors, n);
  if (st && cairn_status_code(st) == CAIRN_OUT_OF_RANGE) {
    cairn_status_free(st);
  } else if (!cairn_jni_check_status(env, st)) {
    for (size_t k = 0; k < n; ++k) {
      jlong h = (jlong)(intptr_t)tensors[k];
      (*env)->SetLongArrayRegion(env, outputs, (jsize)k, 1, &h);
    }
    got = JNI_TRUE;
  }
  if (tensors != inline_buf) free(tensors);
  return got;
}

/* cairn_iterator_save: the state's bytes. */
JNIEXPORT jbyteArray JNICALL Java_dev_cairn_DataNative_iteratorSave(JNIEnv *env, jclass cls, jlong it) {
  (void)cls;
  void *data = NULL;
  size_t n = 0;
  if (cairn_jni_check_status(env, cairn_iterator_save((cairn_object *)(intptr_t)it, &data, &n))) return NULL;
  jbyteArray out = data ? cairn_jni_new_bytes(env, (const char *)data, n) : (*env)->NewByteArray(env, 0);
  cairn_free(data);
  return out;
}
