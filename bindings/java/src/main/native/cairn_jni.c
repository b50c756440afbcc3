/* Hand-written JNI support; see cairn_jni.h. */
#include "cairn_jni.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JavaVM *g_vm;
static jclass g_exception_class; /* dev.cairn.CairnException */
static jmethodID g_exception_ctor; /* CairnException(int code, String message) */
static jclass g_string_class;
static jmethodID g_string_from_bytes; /* String(byte[], String charsetName) */
static jstring g_utf8_name;
static jclass g_array_classes[3]; /* byte[], long[], double[]: indexed by cairn_jni_array_kind */

static jclass global_class(JNIEnv *env, const char *name) {
  jclass local = (*env)->FindClass(env, name);
  if (!local) return NULL;
  jclass global = (jclass)(*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  return global;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
  (void)reserved;
  JNIEnv *env;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  g_vm = vm;
  if (!(g_exception_class = global_class(env, "dev/cairn/CairnException"))) return JNI_ERR;
  g_exception_ctor = (*env)->GetMethodID(env, g_exception_class, "<init>", "(ILjava/lang/String;)V");
  if (!g_exception_ctor) return JNI_ERR;
  if (!(g_string_class = global_class(env, "java/lang/String"))) return JNI_ERR;
  g_string_from_bytes = (*env)->GetMethodID(env, g_string_class, "<init>", "([BLjava/lang/String;)V");
  if (!g_string_from_bytes) return JNI_ERR;
  jstring utf8 = (*env)->NewStringUTF(env, "UTF-8");
  if (!utf8) return JNI_ERR;
  g_utf8_name = (jstring)(*env)->NewGlobalRef(env, utf8);
  (*env)->DeleteLocalRef(env, utf8);
  static const char *const array_class_names[3] = {"[B", "[J", "[D"};
  for (int k = 0; k < 3; ++k)
    if (!(g_array_classes[k] = global_class(env, array_class_names[k]))) return JNI_ERR;
  if (!cairn_jni_generated_on_load(env)) return JNI_ERR;
  if (!cairn_jni_data_on_load(env)) return JNI_ERR;
  return JNI_VERSION_1_8;
}

void cairn_jni_throw(JNIEnv *env, const char *class_name, const char *message) {
  jclass cls = (*env)->FindClass(env, class_name);
  if (cls) (*env)->ThrowNew(env, cls, message);
}

jstring cairn_jni_new_string(JNIEnv *env, const char *utf8) {
  if (!utf8) return NULL;
  size_t n = strlen(utf8);
  int ascii = 1;
  for (size_t i = 0; i < n && ascii; ++i) ascii = (unsigned char)utf8[i] < 0x80;
  /* For ASCII, modified UTF-8 and UTF-8 agree. */
  if (ascii) return (*env)->NewStringUTF(env, utf8);
  if (n > (size_t)INT32_MAX) {
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "string too long for Java");
    return NULL;
  }
  jbyteArray bytes = (*env)->NewByteArray(env, (jsize)n);
  if (!bytes) return NULL;
  (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)n, (const jbyte *)utf8);
  jstring s = (jstring)(*env)->NewObject(env, g_string_class, g_string_from_bytes, bytes, g_utf8_name);
  (*env)->DeleteLocalRef(env, bytes);
  return s;
}

jbyteArray cairn_jni_new_bytes(JNIEnv *env, const char *data, size_t n) {
  if (!data) return NULL;
  if (n > (size_t)INT32_MAX) {
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "buffer too long for a Java array");
    return NULL;
  }
  jbyteArray bytes = (*env)->NewByteArray(env, (jsize)n);
  if (bytes && n) (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)n, (const jbyte *)data);
  return bytes;
}

int cairn_jni_check_status(JNIEnv *env, cairn_status *status) {
  if (!status) return 0;
  jint code = (jint)cairn_status_code(status);
  jstring message = cairn_jni_new_string(env, cairn_status_message(status));
  cairn_status_free(status);
  if (!message) return 1; /* OutOfMemoryError is pending */
  jobject exception = (*env)->NewObject(env, g_exception_class, g_exception_ctor, code, message);
  (*env)->DeleteLocalRef(env, message);
  if (exception) {
    (*env)->Throw(env, (jthrowable)exception);
    (*env)->DeleteLocalRef(env, exception);
  }
  return 1;
}

/* ---- arena ---- */

struct cairn_jni_block {
  cairn_jni_block *next;
  _Alignas(16) char data[];
};

void cairn_jni_arena_init(cairn_jni_arena *a) {
  a->cur = a->inline_buf;
  a->end = a->inline_buf + sizeof a->inline_buf;
  a->blocks = NULL;
}

void *cairn_jni_arena_alloc(JNIEnv *env, cairn_jni_arena *a, size_t n) {
  size_t rounded = (n + 15) & ~(size_t)15;
  if (rounded < n) rounded = SIZE_MAX; /* overflow: the malloc below fails */
  if (rounded <= (size_t)(a->end - a->cur)) {
    void *p = a->cur;
    a->cur += rounded;
    return p;
  }
  cairn_jni_block *b = rounded < SIZE_MAX - sizeof *b ? malloc(sizeof *b + rounded) : NULL;
  if (!b) {
    cairn_jni_throw(env, "java/lang/OutOfMemoryError", "cairn JNI: out of native memory");
    return NULL;
  }
  b->next = a->blocks;
  a->blocks = b;
  return b->data;
}

void cairn_jni_arena_release(cairn_jni_arena *a) {
  while (a->blocks) {
    cairn_jni_block *next = a->blocks->next;
    free(a->blocks);
    a->blocks = next;
  }
}

/* ---- arrays and strings ---- */

size_t cairn_jni_length(JNIEnv *env, jarray array) {
  return array ? (size_t)(*env)->GetArrayLength(env, array) : 0;
}


int cairn_jni_require_length(JNIEnv *env, jarray array, size_t n, const char *what) {
  size_t length = cairn_jni_length(env, array);
  if (length == n) return 1;
  char message[160];
  snprintf(message, sizeof message, "%s has %zu elements, expected %zu", what, length, n);
  cairn_jni_throw(env, "java/lang/IllegalArgumentException", message);
  return 0;
}

int cairn_jni_check_length(JNIEnv *env, jarray array, size_t n, const char *what) {
  return !array || cairn_jni_require_length(env, array, n, what);
}

int cairn_jni_cstring(JNIEnv *env, cairn_jni_arena *a, jbyteArray bytes, const char **out) {
  *out = NULL;
  if (!bytes) return 1;
  jsize n = (*env)->GetArrayLength(env, bytes);
  char *s = cairn_jni_arena_alloc(env, a, (size_t)n + 1);
  if (!s) return 0;
  (*env)->GetByteArrayRegion(env, bytes, 0, n, (jbyte *)s);
  s[n] = '\0';
  *out = s;
  return 1;
}

int cairn_jni_longs(JNIEnv *env, cairn_jni_arena *a, jlongArray array, const int64_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!array) return 1;
  jsize len = (*env)->GetArrayLength(env, array);
  int64_t *p = cairn_jni_arena_alloc(env, a, (size_t)len * sizeof *p);
  if (!p) return 0;
  (*env)->GetLongArrayRegion(env, array, 0, len, (jlong *)p);
  *out = p;
  *n = (size_t)len;
  return 1;
}

int cairn_jni_doubles(JNIEnv *env, cairn_jni_arena *a, jdoubleArray array, const double **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!array) return 1;
  jsize len = (*env)->GetArrayLength(env, array);
  double *p = cairn_jni_arena_alloc(env, a, (size_t)len * sizeof *p);
  if (!p) return 0;
  (*env)->GetDoubleArrayRegion(env, array, 0, len, (jdouble *)p);
  *out = p;
  *n = (size_t)len;
  return 1;
}

int cairn_jni_element(JNIEnv *env, jobjectArray array, size_t k, cairn_jni_array_kind kind, jobject *out) {
  *out = (*env)->GetObjectArrayElement(env, array, (jsize)k);
  if ((*env)->ExceptionCheck(env)) return 0;
  if (!*out || (*env)->IsInstanceOf(env, *out, g_array_classes[kind])) return 1;
  (*env)->DeleteLocalRef(env, *out);
  *out = NULL;
  static const char *const expected[3] = {"byte[]", "long[]", "double[]"};
  char message[96];
  snprintf(message, sizeof message, "element %zu is not a %s", k, expected[kind]);
  cairn_jni_throw(env, "java/lang/IllegalArgumentException", message);
  return 0;
}

int cairn_jni_direct_buffer(JNIEnv *env, jobject buffer, void **data, size_t *nbytes) {
  if (!buffer) {
    cairn_jni_throw(env, "java/lang/NullPointerException", "buffer is null");
    return 0;
  }
  jlong capacity = (*env)->GetDirectBufferCapacity(env, buffer);
  void *address = (*env)->GetDirectBufferAddress(env, buffer);
  if (capacity < 0 || (!address && capacity > 0)) {
    cairn_jni_throw(env, "java/lang/IllegalArgumentException", "the ByteBuffer must be direct");
    return 0;
  }
  *data = address;
  *nbytes = (size_t)capacity;
  return 1;
}

/* ---- callbacks ---- */

/* A thread of the C library that calls Java is attached once, as a daemon (it never keeps the
 * JVM from exiting), and stays attached: Cairn's worker threads call dataset callbacks for every
 * element, and attaching per call would create a java.lang.Thread each time. A thread-specific
 * key's destructor detaches the thread when it exits (HotSpot allows DetachCurrentThread there). */
static pthread_key_t g_detach_key;
static pthread_once_t g_detach_once = PTHREAD_ONCE_INIT;
static int g_detach_key_ok;

static void detach_at_exit(void *value) {
  (void)value;
  if (g_vm) (*g_vm)->DetachCurrentThread(g_vm);
}

static void make_detach_key(void) {
  g_detach_key_ok = pthread_key_create(&g_detach_key, detach_at_exit) == 0;
}

int cairn_jni_callback_enter(JNIEnv **env, int *attached) {
  *attached = 0;
  if (!g_vm) return 0;
  jint rc = (*g_vm)->GetEnv(g_vm, (void **)env, JNI_VERSION_1_8);
  if (rc == JNI_OK) return 1;
  if (rc != JNI_EDETACHED) return 0;
  JavaVMAttachArgs args = {JNI_VERSION_1_8, (char *)"cairn worker", NULL}; /* its name in thread dumps */
  if ((*g_vm)->AttachCurrentThreadAsDaemon(g_vm, (void **)env, &args) != JNI_OK) return 0;
  pthread_once(&g_detach_once, make_detach_key);
  if (g_detach_key_ok && pthread_setspecific(g_detach_key, (void *)1) == 0) return 1;
  *attached = 1; /* no key: detach again when the callback returns */
  return 1;
}

void cairn_jni_callback_leave(JNIEnv *env, int attached, const char *callback_name) {
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    fprintf(stderr, "cairn: an exception thrown by the Java %s was ignored\n", callback_name);
  }
  if (attached) (*g_vm)->DetachCurrentThread(g_vm);
}

/* The exception the Java callback left in Callbacks.HOST_ERROR on this thread (a local ref), or
 * NULL. The field is private to the generated class; JNI reads it without going through Java so
 * that it stays there for the Java classes' Callbacks.takeHostError(). */
static jthrowable pending_host_error(JNIEnv *env) {
  jclass callbacks = (*env)->FindClass(env, "dev/cairn/Callbacks");
  if (!callbacks) return NULL;
  jfieldID field = (*env)->GetStaticFieldID(env, callbacks, "HOST_ERROR", "Ljava/lang/ThreadLocal;");
  jobject local = field ? (*env)->GetStaticObjectField(env, callbacks, field) : NULL;
  jthrowable error = NULL;
  if (local) {
    jclass tl = (*env)->GetObjectClass(env, local);
    jmethodID get = (*env)->GetMethodID(env, tl, "get", "()Ljava/lang/Object;");
    if (get) error = (jthrowable)(*env)->CallObjectMethod(env, local, get);
    (*env)->DeleteLocalRef(env, tl);
    (*env)->DeleteLocalRef(env, local);
  }
  (*env)->DeleteLocalRef(env, callbacks);
  return error;
}

/* A status with `error`'s code (UNKNOWN unless it is a CairnException) and its message (a
 * CairnException's detail(), else its toString(): class name and message). */
cairn_status *cairn_jni_exception_status(JNIEnv *env, jthrowable error) {
  cairn_code code = CAIRN_UNKNOWN;
  jstring text = NULL;
  jclass cls = (*env)->GetObjectClass(env, error);
  if ((*env)->IsInstanceOf(env, error, g_exception_class)) {
    jmethodID raw_code = (*env)->GetMethodID(env, g_exception_class, "rawCode", "()I");
    jmethodID message = (*env)->GetMethodID(env, g_exception_class, "detail", "()Ljava/lang/String;");
    if (raw_code) code = (cairn_code)(*env)->CallIntMethod(env, error, raw_code);
    if (message && !(*env)->ExceptionCheck(env)) text = (jstring)(*env)->CallObjectMethod(env, error, message);
  } else {
    jmethodID to_string = (*env)->GetMethodID(env, cls, "toString", "()Ljava/lang/String;");
    if (to_string) text = (jstring)(*env)->CallObjectMethod(env, error, to_string);
  }
  (*env)->DeleteLocalRef(env, cls);
  const char *utf = text && !(*env)->ExceptionCheck(env) ? (*env)->GetStringUTFChars(env, text, NULL) : NULL;
  if (code == CAIRN_OK) code = CAIRN_UNKNOWN; /* the callback failed, whatever the exception says */
  cairn_status *st = cairn_status_create(code, utf ? utf : "the Java callback threw an exception");
  if (utf) (*env)->ReleaseStringUTFChars(env, text, utf);
  if (text) (*env)->DeleteLocalRef(env, text);
  return st;
}

cairn_status *cairn_jni_host_error_status(void) {
  /* The callback's exception, as a status, so that callers of the raw layer see the real failure;
   * the Java classes still rethrow the exception itself (Callbacks.takeHostError()). A thread the
   * trampoline attached is detached again by now: it gets the generic message. */
  JNIEnv *env = NULL;
  cairn_status *st = NULL;
  if (g_vm && (*g_vm)->GetEnv(g_vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK) {
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending) (*env)->ExceptionClear(env); /* restored below: this must not disturb it */
    jthrowable error = pending_host_error(env);
    if (error && !(*env)->ExceptionCheck(env)) st = cairn_jni_exception_status(env, error);
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    if (error) (*env)->DeleteLocalRef(env, error);
    if (pending) {
      (*env)->Throw(env, pending);
      (*env)->DeleteLocalRef(env, pending);
    }
  }
  return st ? st : cairn_status_create(CAIRN_UNKNOWN, "the Java callback failed");
}

int cairn_jni_cstrings(JNIEnv *env, cairn_jni_arena *a, jobjectArray array, const char ***out, size_t *n) {
  *out = NULL;
  *n = cairn_jni_length(env, array);
  if (!array) return 1;
  const char **p = cairn_jni_arena_alloc(env, a, (*n + 1) * sizeof *p);
  if (!p) return 0;
  for (size_t k = 0; k < *n; ++k) {
    jobject e;
    if (!cairn_jni_element(env, array, k, CAIRN_JNI_BYTES, &e)) return 0;
    int ok = cairn_jni_cstring(env, a, (jbyteArray)e, &p[k]);
    if (e) (*env)->DeleteLocalRef(env, e);
    if (!ok) return 0;
  }
  *out = p;
  return 1;
}

jobject cairn_jni_global_ref(JNIEnv *env, jobject callback) {
  if (!callback) {
    cairn_jni_throw(env, "java/lang/NullPointerException", "callback is null");
    return NULL;
  }
  jobject ref = (*env)->NewGlobalRef(env, callback);
  if (!ref) cairn_jni_throw(env, "java/lang/OutOfMemoryError", "no JNI global reference left");
  return ref;
}
