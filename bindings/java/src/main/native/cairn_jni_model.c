/* Hand-written JNI glue (class dev.cairn.ModelNative) for the model functions the generator leaves
 * unbound: cairn_model_create (an array of layers), compile (an array of metric names), fit and
 * evaluate (nested data structs, arrays of callbacks), cairn_history_values, the CSV logger (a char
 * field), and the two functions taking host code: cairn_callback_create and
 * cairn_callback_learning_rate_scheduler.
 *
 * Host callbacks: the C `user_data` is a JNI global reference to a dev.cairn.CallbackAdapter (or a
 * dev.cairn.CallbackAdapter.Schedule), deleted by the `release` hook the C library calls when the
 * callback is freed (after the fit that uses it ends). Only the hooks the Java callback overrides
 * are set (`mask`, bit i for hook i in the order of cairn_callback_hooks). Hooks run on the thread
 * that called fit, which is a Java thread, inside their own local frame. The Java side catches
 * everything the user's code throws and returns it; a returned Throwable becomes the hook's error
 * status (cairn_jni_exception_status: a CairnException's code, else UNKNOWN, and its message), so
 * no Java exception ever crosses the C library. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_jni.h"

static jclass g_adapter_class;  /* dev.cairn.CallbackAdapter */
static jmethodID g_hook;        /* Throwable hook(int which, long model, long index, String[] names, double[] values) */
static jmethodID g_release;     /* void released() */
static jclass g_schedule_class; /* dev.cairn.CallbackAdapter$Schedule */
static jmethodID g_schedule;    /* double[] schedule(long epoch, double lr): {rate} or null after a throw */
static jmethodID g_schedule_error; /* Throwable lastError() */
static jclass g_string_class;

static int cache(JNIEnv *env) {
  if (g_adapter_class) return 1;
  jclass a = (*env)->FindClass(env, "dev/cairn/CallbackAdapter");
  jclass s = a ? (*env)->FindClass(env, "dev/cairn/CallbackAdapter$Schedule") : NULL;
  jclass str = s ? (*env)->FindClass(env, "java/lang/String") : NULL;
  if (!str) return 0;
  g_hook = (*env)->GetMethodID(env, a, "hook", "(IJJ[Ljava/lang/String;[D)Ljava/lang/Throwable;");
  g_release = g_hook ? (*env)->GetMethodID(env, a, "released", "()V") : NULL;
  g_schedule = g_release ? (*env)->GetMethodID(env, s, "schedule", "(JD)[D") : NULL;
  g_schedule_error = g_schedule ? (*env)->GetMethodID(env, s, "lastError", "()Ljava/lang/Throwable;") : NULL;
  if (!g_schedule_error) return 0;
  g_string_class = (jclass)(*env)->NewGlobalRef(env, str);
  g_schedule_class = (jclass)(*env)->NewGlobalRef(env, s);
  g_adapter_class = (jclass)(*env)->NewGlobalRef(env, a);
  return g_adapter_class != NULL;
}

/* ---- marshalling ---- */

/* Handles from a long[] (null gives NULL and 0). */
static int handles_of(JNIEnv *env, cairn_jni_arena *a, jlongArray array, void ***out, size_t *n) {
  const int64_t *h;
  *out = NULL;
  if (!cairn_jni_longs(env, a, array, &h, n)) return 0;
  if (!array) return 1;
  void **p = cairn_jni_arena_alloc(env, a, (*n + 1) * sizeof *p);
  if (!p) return 0;
  for (size_t k = 0; k < *n; ++k) p[k] = (void *)(intptr_t)h[k];
  *out = p;
  return 1;
}

static void data_of(cairn_model_data *d, jlong dataset, jlong x, jlong y) {
  *d = (cairn_model_data)CAIRN_MODEL_DATA_INIT;
  d->dataset = (const cairn_dataset *)(intptr_t)dataset;
  d->x = (const cairn_tensor *)(intptr_t)x;
  d->y = (const cairn_tensor *)(intptr_t)y;
}

/* ---- models ---- */

JNIEXPORT jlong JNICALL Java_dev_cairn_ModelNative_create(JNIEnv *env, jclass cls, jlong ctx, jbyteArray name,
                                                         jlongArray layers) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_model_options opts = CAIRN_MODEL_OPTIONS_INIT;
  void **c_layers;
  if (!cairn_jni_cstring(env, &arena, name, &opts.name)) goto done;
  if (!handles_of(env, &arena, layers, &c_layers, &opts.n_layers)) goto done;
  opts.layers = (const cairn_object *const *)c_layers;
  cairn_object *out = NULL;
  if (cairn_jni_check_status(env, cairn_model_create((cairn_context *)(intptr_t)ctx, &opts, &out))) goto done;
  result = (jlong)(intptr_t)out;
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* `set` bits: 0 fromLogits, 1 runEagerly; metrics null keeps the default. */
JNIEXPORT void JNICALL Java_dev_cairn_ModelNative_compile(JNIEnv *env, jclass cls, jlong model, jlong optimizer,
                                                         jbyteArray loss, jobjectArray metrics, jlong set,
                                                         jboolean from_logits, jboolean run_eagerly) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_compile_options opts = CAIRN_COMPILE_OPTIONS_INIT;
  opts.optimizer = (cairn_object *)(intptr_t)optimizer;
  if (!cairn_jni_cstring(env, &arena, loss, &opts.loss)) goto done;
  const char **c_metrics;
  if (!cairn_jni_cstrings(env, &arena, metrics, &c_metrics, &opts.n_metrics)) goto done;
  opts.metrics = c_metrics;
  if (set & 1) opts.from_logits = from_logits ? CAIRN_TRUE : CAIRN_FALSE;
  if (set & 2) opts.run_eagerly = run_eagerly ? CAIRN_TRUE : CAIRN_FALSE;
  cairn_jni_check_status(env, cairn_model_compile((cairn_object *)(intptr_t)model, &opts));
done:
  cairn_jni_arena_release(&arena);
}

/* cairn_model_fit. `data` = {dataset, x, y}; `validation` null or {dataset, x, y}; `ints` the
 * int64 options {epochs, batchSize, initialEpoch, stepsPerEpoch, seed, validationBatchSize,
 * validationFreq}, each used when its bit in `set` is set (bit 7 shuffle, bit 8 verbose). Returns the
 * history. */
JNIEXPORT jlong JNICALL Java_dev_cairn_ModelNative_fit(JNIEnv *env, jclass cls, jlong model, jlongArray data,
                                                      jlongArray validation, jlong set, jlongArray ints,
                                                      jboolean shuffle, jint verbose, jlongArray callbacks) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_fit_options opts = CAIRN_FIT_OPTIONS_INIT;
  cairn_model_data train, val;
  const int64_t *d, *v, *n;
  size_t nd, nv, nn;
  void **cbs;
  if (!cairn_jni_longs(env, &arena, data, &d, &nd) || !cairn_jni_require_length(env, data, 3, "data")) goto done;
  if (!cairn_jni_longs(env, &arena, validation, &v, &nv)) goto done;
  if (validation && !cairn_jni_require_length(env, validation, 3, "validation")) goto done;
  if (!cairn_jni_longs(env, &arena, ints, &n, &nn) || !cairn_jni_require_length(env, ints, 7, "ints")) goto done;
  if (!handles_of(env, &arena, callbacks, &cbs, &opts.n_callbacks)) goto done;
  data_of(&train, d[0], d[1], d[2]);
  if (validation) {
    data_of(&val, v[0], v[1], v[2]);
    opts.validation = &val;
  }
  if (set & 1) opts.epochs = n[0];
  if (set & 2) opts.batch_size = n[1];
  if (set & 4) opts.initial_epoch = n[2];
  if (set & 8) opts.steps_per_epoch = n[3];
  if (set & 16) opts.seed = n[4];
  if (set & 32) opts.validation_batch_size = n[5];
  if (set & 64) opts.validation_freq = n[6];
  if (set & 128) opts.shuffle = shuffle ? CAIRN_TRUE : CAIRN_FALSE;
  if (set & 256) opts.verbose = (cairn_verbose)verbose;
  opts.callbacks = (cairn_callback *const *)cbs;
  cairn_history *out = NULL;
  if (cairn_jni_check_status(env, cairn_model_fit((cairn_object *)(intptr_t)model, &train, &opts, &out))) goto done;
  result = (jlong)(intptr_t)out;
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* cairn_model_evaluate. `set` bits: 0 batchSize, 1 steps. Returns the logs. */
JNIEXPORT jlong JNICALL Java_dev_cairn_ModelNative_evaluate(JNIEnv *env, jclass cls, jlong model, jlong dataset,
                                                           jlong x, jlong y, jlong set, jlong batch_size, jlong steps,
                                                           jlongArray callbacks) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_evaluate_options opts = CAIRN_EVALUATE_OPTIONS_INIT;
  cairn_model_data data;
  void **cbs;
  if (!handles_of(env, &arena, callbacks, &cbs, &opts.n_callbacks)) goto done;
  opts.callbacks = (cairn_callback *const *)cbs;
  data_of(&data, dataset, x, y);
  if (set & 1) opts.batch_size = batch_size;
  if (set & 2) opts.steps = steps;
  cairn_logs *out = NULL;
  if (cairn_jni_check_status(env, cairn_model_evaluate((cairn_object *)(intptr_t)model, &data, &opts, &out))) {
    goto done;
  }
  result = (jlong)(intptr_t)out;
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* cairn_history_values: a copy (null for a name the history does not have). */
JNIEXPORT jdoubleArray JNICALL Java_dev_cairn_ModelNative_historyValues(JNIEnv *env, jclass cls, jlong h,
                                                                       jbyteArray name) {
  (void)cls;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  jdoubleArray result = NULL;
  const char *c_name;
  if (!cairn_jni_cstring(env, &arena, name, &c_name)) goto done;
  size_t n = 0;
  const double *values = cairn_history_values((const cairn_history *)(intptr_t)h, c_name, &n);
  if (!values) goto done;
  result = (*env)->NewDoubleArray(env, (jsize)n);
  if (result) (*env)->SetDoubleArrayRegion(env, result, 0, (jsize)n, values);
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* cairn_callback_csv_logger. `set` bits: 0 separator, 1 append. */
JNIEXPORT jlong JNICALL Java_dev_cairn_ModelNative_csvLogger(JNIEnv *env, jclass cls, jbyteArray path, jlong set,
                                                            jbyte separator, jboolean append) {
  (void)cls;
  jlong result = 0;
  cairn_jni_arena arena;
  cairn_jni_arena_init(&arena);
  cairn_csv_logger_options opts = CAIRN_CSV_LOGGER_OPTIONS_INIT;
  if (!cairn_jni_cstring(env, &arena, path, &opts.path)) goto done;
  if (set & 1) opts.separator = (char)separator;
  if (set & 2) opts.append = append ? CAIRN_TRUE : CAIRN_FALSE;
  cairn_callback *out = NULL;
  if (cairn_jni_check_status(env, cairn_callback_csv_logger(&opts, &out))) goto done;
  result = (jlong)(intptr_t)out;
done:
  cairn_jni_arena_release(&arena);
  return result;
}

/* ---- host callbacks ---- */

enum { TRAIN_BEGIN, TRAIN_END, EPOCH_BEGIN, EPOCH_END, BATCH_BEGIN, BATCH_END, TEST_END };

/* Calls hook `which` of the adapter; the logs are copied into String[] and double[]. */
static cairn_status *call_hook(void *user_data, int which, cairn_object *model, int64_t index,
                               const cairn_logs *logs) {
  JNIEnv *env;
  int attached;
  if (!cairn_jni_callback_enter(&env, &attached)) {
    return cairn_status_create(CAIRN_INTERNAL, "cannot attach this thread to the Java VM");
  }
  if ((*env)->PushLocalFrame(env, 32) != 0) {
    (*env)->ExceptionClear(env);
    cairn_jni_callback_leave(env, attached, "model callback");
    return cairn_status_create(CAIRN_RESOURCE_EXHAUSTED, "no memory for JNI local references");
  }
  cairn_status *st = NULL;
  jobjectArray names = NULL;
  jdoubleArray values = NULL;
  if (logs) {
    size_t n = cairn_logs_size(logs);
    names = (*env)->NewObjectArray(env, (jsize)n, g_string_class, NULL);
    values = names ? (*env)->NewDoubleArray(env, (jsize)n) : NULL;
    for (size_t k = 0; values && k < n; ++k) {
      jstring s = cairn_jni_new_string(env, cairn_logs_name(logs, k));
      if (!s) break;
      (*env)->SetObjectArrayElement(env, names, (jsize)k, s);
      (*env)->DeleteLocalRef(env, s);
      double value = cairn_logs_value(logs, k);
      (*env)->SetDoubleArrayRegion(env, values, (jsize)k, 1, &value);
    }
  }
  jthrowable error = NULL;
  if (!(*env)->ExceptionCheck(env)) {
    error = (jthrowable)(*env)->CallObjectMethod(env, (jobject)user_data, g_hook, (jint)which,
                                                 (jlong)(intptr_t)model, (jlong)index, names, values);
  }
  jthrowable pending = (*env)->ExceptionOccurred(env);
  if (pending) {
    (*env)->ExceptionClear(env);
    error = pending;
  }
  if (error) st = cairn_jni_exception_status(env, error);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
  (*env)->PopLocalFrame(env, NULL);
  cairn_jni_callback_leave(env, attached, "model callback");
  return st;
}

static cairn_status *on_train_begin(void *u, cairn_object *m) { return call_hook(u, TRAIN_BEGIN, m, 0, NULL); }
static cairn_status *on_train_end(void *u, cairn_object *m, const cairn_logs *l) {
  return call_hook(u, TRAIN_END, m, 0, l);
}
static cairn_status *on_epoch_begin(void *u, cairn_object *m, int64_t e) { return call_hook(u, EPOCH_BEGIN, m, e, NULL); }
static cairn_status *on_epoch_end(void *u, cairn_object *m, int64_t e, const cairn_logs *l) {
  return call_hook(u, EPOCH_END, m, e, l);
}
static cairn_status *on_batch_begin(void *u, cairn_object *m, int64_t b) { return call_hook(u, BATCH_BEGIN, m, b, NULL); }
static cairn_status *on_batch_end(void *u, cairn_object *m, int64_t b, const cairn_logs *l) {
  return call_hook(u, BATCH_END, m, b, l);
}
static cairn_status *on_test_end(void *u, cairn_object *m, const cairn_logs *l) {
  return call_hook(u, TEST_END, m, 0, l);
}

/* The release hook of both kinds: tells the adapter, then deletes the global reference. */
static void release_adapter(void *user_data) {
  JNIEnv *env;
  int attached;
  if (!cairn_jni_callback_enter(&env, &attached)) return;
  if ((*env)->IsInstanceOf(env, (jobject)user_data, g_adapter_class)) {
    (*env)->CallVoidMethod(env, (jobject)user_data, g_release);
  }
  (*env)->DeleteGlobalRef(env, (jobject)user_data);
  cairn_jni_callback_leave(env, attached, "model callback release");
}

/* cairn_callback_create with the hooks in `mask` (bit i: hook i, TRAIN_BEGIN ... TEST_END). */
JNIEXPORT jlong JNICALL Java_dev_cairn_ModelNative_callbackCreate(JNIEnv *env, jclass cls, jobject adapter,
                                                                 jint mask) {
  (void)cls;
  if (!cache(env)) return 0;
  jobject ref = cairn_jni_global_ref(env, adapter);
  if (!ref) return 0;
  cairn_callback_hooks hooks = CAIRN_CALLBACK_HOOKS_INIT;
  hooks.user_data = ref;
  if (mask & (1 << TRAIN_BEGIN)) hooks.on_train_begin = on_train_begin;
  if (mask & (1 << TRAIN_END)) hooks.on_train_end = on_train_end;
  if (mask & (1 << EPOCH_BEGIN)) hooks.on_epoch_begin = on_epoch_begin;
  if (mask & (1 << EPOCH_END)) hooks.on_epoch_end = on_epoch_end;
  if (mask & (1 << BATCH_BEGIN)) hooks.on_train_batch_begin = on_batch_begin;
  if (mask & (1 << BATCH_END)) hooks.on_train_batch_end = on_batch_end;
  if (mask & (1 << TEST_END)) hooks.on_test_end = on_test_end;
  hooks.release = release_adapter;
  cairn_callback *out = NULL;
  cairn_status *st = cairn_callback_create(&hooks, &out);
  if (st) (*env)->DeleteGlobalRef(env, ref); /* no release on failure: the reference is still ours */
  if (cairn_jni_check_status(env, st)) return 0;
  return (jlong)(intptr_t)out;
}

static cairn_status *schedule_trampoline(void *user_data, int64_t epoch, double lr, double *out) {
  JNIEnv *env;
  int attached;
  if (!cairn_jni_callback_enter(&env, &attached)) {
    return cairn_status_create(CAIRN_INTERNAL, "cannot attach this thread to the Java VM");
  }
  if ((*env)->PushLocalFrame(env, 8) != 0) {
    (*env)->ExceptionClear(env);
    cairn_jni_callback_leave(env, attached, "learning rate schedule");
    return cairn_status_create(CAIRN_RESOURCE_EXHAUSTED, "no memory for JNI local references");
  }
  cairn_status *st = NULL;
  jdoubleArray rate = (jdoubleArray)(*env)->CallObjectMethod(env, (jobject)user_data, g_schedule, (jlong)epoch, lr);
  jthrowable error = (*env)->ExceptionOccurred(env);
  if (error) {
    (*env)->ExceptionClear(env);
  } else if (!rate) {
    error = (jthrowable)(*env)->CallObjectMethod(env, (jobject)user_data, g_schedule_error);
  } else {
    (*env)->GetDoubleArrayRegion(env, rate, 0, 1, out);
  }
  if (!error) error = (*env)->ExceptionOccurred(env);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
  if (error) st = cairn_jni_exception_status(env, error);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
  (*env)->PopLocalFrame(env, NULL);
  cairn_jni_callback_leave(env, attached, "learning rate schedule");
  return st;
}

/* cairn_callback_learning_rate_scheduler with a CallbackAdapter.Schedule. */
JNIEXPORT jlong JNICALL Java_dev_cairn_ModelNative_learningRateScheduler(JNIEnv *env, jclass cls, jobject schedule) {
  (void)cls;
  if (!cache(env)) return 0;
  jobject ref = cairn_jni_global_ref(env, schedule);
  if (!ref) return 0;
  cairn_callback *out = NULL;
  cairn_status *st = cairn_callback_learning_rate_scheduler(schedule_trampoline, ref, release_adapter, &out);
  if (st) (*env)->DeleteGlobalRef(env, ref);
  if (cairn_jni_check_status(env, st)) return 0;
  return (jlong)(intptr_t)out;
}
