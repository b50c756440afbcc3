/* The Vulkan section of the C API on lavapipe: availability, device listing, contexts with Vulkan
 * settings (external handles, memory limit, CPU fallback and its counter), and one small program
 * run on "cpu" and on "vulkan" with the same results.
 * With the argument --no-driver, the loader is pointed at an ICD list that does not exist first:
 * Vulkan is then unavailable, with clear errors, and the CPU still works. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "check.h"

static cairn_tensor *tensor_f32(cairn_context *ctx, const float *v, const int64_t *shape, size_t rank) {
  size_t n = 1;
  size_t i;
  cairn_tensor *t = NULL;
  for (i = 0; i < rank; ++i) n *= (size_t)shape[i];
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, rank, v, n * sizeof(float), &t));
  return t;
}

static cairn_tensor *run1(cairn_context *ctx, const char *op, cairn_tensor *a, cairn_tensor *b, const cairn_attr *attrs,
                          size_t n_attrs) {
  cairn_tensor *ins[2];
  cairn_tensor *out = NULL;
  ins[0] = a;
  ins[1] = b;
  CHECK_OK(cairn_op_run(ctx, op, ins, b ? 2 : 1, attrs, n_attrs, &out, 1));
  return out;
}

/* ---- devices ---- */

static void test_devices(void) {
  size_t n = 0;
  cairn_vulkan_device_info info = CAIRN_VULKAN_DEVICE_INFO_INIT;
  cairn_vulkan_device_info bad = CAIRN_VULKAN_DEVICE_INFO_INIT;
  CHECK(cairn_vulkan_available() == 1);
  CHECK_OK(cairn_vulkan_device_count(&n));
  CHECK(n >= 1);
  CHECK_OK(cairn_vulkan_device_describe(0, &info));
  CHECK(strlen(info.name) > 0);
  CHECK(info.type == CAIRN_VULKAN_DEVICE_CPU); /* lavapipe */
  CHECK(info.total_memory > 0);
  CHECK(info.device_local_memory <= info.total_memory);
  CHECK(info.subgroup_size >= 1);
  CHECK(info.max_storage_buffer_range >= (1u << 20));
  CHECK(info.max_shared_memory >= 16384);
  CHECK(info.api_version >= VK_API_VERSION_1_1);
  CHECK_ERR(cairn_vulkan_device_describe(n, &info), CAIRN_OUT_OF_RANGE, "Vulkan device(s)");
  bad.struct_size = 4;
  CHECK_ERR(cairn_vulkan_device_describe(0, &bad), CAIRN_INVALID_ARGUMENT, "struct_size");
  CHECK_ERR(cairn_vulkan_device_describe(0, NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
  CHECK_ERR(cairn_vulkan_device_count(NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
}

/* ---- contexts ---- */

static void test_context_defaults_and_errors(void) {
  cairn_context *ctx = NULL;
  cairn_vulkan_options vk = CAIRN_VULKAN_OPTIONS_INIT;
  cairn_context_options co = CAIRN_CONTEXT_OPTIONS_INIT;
  uint64_t count = 7;

  CHECK_OK(cairn_context_create_vulkan(NULL, NULL, &ctx));
  CHECK(strcmp(cairn_context_device(ctx), "vulkan:0") == 0);
  CHECK_OK(cairn_vulkan_fallback_count(ctx, NULL, &count));
  CHECK(count == 0);
  CHECK_ERR(cairn_vulkan_fallback_count(ctx, "cpu", &count), CAIRN_INVALID_ARGUMENT, "not a Vulkan device");
  CHECK_ERR(cairn_vulkan_fallback_count(ctx, "vulkan:9", &count), CAIRN_NOT_FOUND, "vulkan:9");
  CHECK_OK(cairn_context_synchronize(ctx));
  cairn_context_free(ctx);

  /* The plain constructor reaches Vulkan too; the Vulkan one may make "cpu" the default. */
  co.device = "vulkan:0";
  CHECK_OK(cairn_context_create(&co, &ctx));
  CHECK(strcmp(cairn_context_device(ctx), "vulkan:0") == 0);
  cairn_context_free(ctx);
  co.device = "cpu";
  CHECK_OK(cairn_context_create_vulkan(&co, &vk, &ctx));
  CHECK(strcmp(cairn_context_device(ctx), "cpu") == 0);
  cairn_context_free(ctx);

  ctx = NULL;
  vk.device = (void *)1;
  CHECK_ERR(cairn_context_create_vulkan(NULL, &vk, &ctx), CAIRN_INVALID_ARGUMENT, "1 of 4 set");
  CHECK(ctx == NULL);
  vk.device = NULL;
  vk.struct_size = 8;
  CHECK_ERR(cairn_context_create_vulkan(NULL, &vk, &ctx), CAIRN_INVALID_ARGUMENT, "struct_size");
  vk.struct_size = (uint32_t)sizeof vk;
  vk.cpu_fallback = 2;
  CHECK_ERR(cairn_context_create_vulkan(NULL, &vk, &ctx), CAIRN_INVALID_ARGUMENT, "cpu_fallback");
  co.device = "vulkan:5";
  CHECK_ERR(cairn_context_create_vulkan(&co, NULL, &ctx), CAIRN_NOT_FOUND, "vulkan:5");
  CHECK_ERR(cairn_context_create_vulkan(NULL, NULL, NULL), CAIRN_INVALID_ARGUMENT, "out is NULL");
}

static void test_memory_limit(void) {
  cairn_context *ctx = NULL;
  cairn_vulkan_options vk = CAIRN_VULKAN_OPTIONS_INIT;
  static float big[300000];
  int64_t shape[1] = {300000};
  cairn_tensor *a = NULL;
  cairn_tensor *b = NULL;
  vk.memory_limit = 2u << 20; /* 2 MiB; each tensor is 1.2 MB */
  CHECK_OK(cairn_context_create_vulkan(NULL, &vk, &ctx));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, big, sizeof big, &a));
  /* The device's error, with the entry point that asked in front. */
  CHECK_ERR(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, big, sizeof big, &b), CAIRN_RESOURCE_EXHAUSTED,
            "cairn_tensor_create: vulkan:0: allocating 1200000 bytes exceeds the memory limit");
  CHECK(b == NULL);
  {
    cairn_context *cpu = NULL;
    cairn_tensor *h = NULL;
    CHECK_OK(cairn_context_create(NULL, &cpu));
    CHECK_OK(cairn_tensor_create(cpu, CAIRN_FLOAT32, shape, 1, big, sizeof big, &h));
    CHECK_ERR(cairn_tensor_copy_to_device(ctx, h, "vulkan", &b), CAIRN_RESOURCE_EXHAUSTED,
              "cairn_tensor_copy_to_device: vulkan:0: allocating 1200000 bytes exceeds the memory limit");
    CHECK(b == NULL);
    cairn_tensor_free(h);
    cairn_context_free(cpu);
  }
  cairn_tensor_free(a);
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, big, sizeof big, &b));
  cairn_tensor_free(b);
  cairn_context_free(ctx);
}

static void test_cpu_fallback(void) {
  cairn_context *strict = NULL;
  cairn_context *lenient = NULL;
  cairn_vulkan_options vk = CAIRN_VULKAN_OPTIONS_INIT;
  double v[2] = {1.5, -2.5};
  double r[2] = {0, 0};
  int64_t shape[1] = {2};
  cairn_tensor *x = NULL;
  cairn_tensor *y = NULL;
  uint64_t count = 0;

  CHECK_OK(cairn_context_create_vulkan(NULL, NULL, &strict));
  CHECK_OK(cairn_tensor_create(strict, CAIRN_FLOAT64, shape, 1, v, sizeof v, &x));
  CHECK_ERR(cairn_op_run(strict, "Neg", &x, 1, NULL, 0, &y, 1), CAIRN_UNIMPLEMENTED,
            "Neg: no Vulkan kernel for dtype float64 on device vulkan:0");
  cairn_tensor_free(x);
  x = NULL;

  vk.cpu_fallback = 1;
  CHECK_OK(cairn_context_create_vulkan(NULL, &vk, &lenient));
  CHECK_OK(cairn_tensor_create(lenient, CAIRN_FLOAT64, shape, 1, v, sizeof v, &x));
  CHECK_OK(cairn_op_run(lenient, "Neg", &x, 1, NULL, 0, &y, 1));
  CHECK(strcmp(cairn_tensor_device(y), "vulkan:0") == 0);
  CHECK_OK(cairn_tensor_read(y, r, sizeof r));
  CHECK(r[0] == -1.5 && r[1] == 2.5);
  CHECK_OK(cairn_vulkan_fallback_count(lenient, "vulkan", &count));
  CHECK(count == 1);
  CHECK_OK(cairn_vulkan_fallback_count(strict, NULL, &count));
  CHECK(count == 0);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_context_free(strict);
  cairn_context_free(lenient);
}

/* ---- external mode: the engine's instance, device and queue ---- */

static void test_external_handles(void) {
  VkApplicationInfo app;
  VkInstanceCreateInfo ii;
  VkInstance instance;
  VkPhysicalDevice phys;
  uint32_t n = 1;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q;
  VkDeviceCreateInfo di;
  VkDevice device;
  VkQueue queue;
  cairn_vulkan_options vk = CAIRN_VULKAN_OPTIONS_INIT;
  cairn_context *ctx = NULL;
  float v[3] = {1, 2, 3};
  float r[3] = {0, 0, 0};
  int64_t shape[1] = {3};
  cairn_tensor *x;
  cairn_tensor *y;

  memset(&app, 0, sizeof app);
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_2;
  memset(&ii, 0, sizeof ii);
  ii.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ii.pApplicationInfo = &app;
  CHECK(vkCreateInstance(&ii, NULL, &instance) == VK_SUCCESS);
  vkEnumeratePhysicalDevices(instance, &n, &phys);
  memset(&q, 0, sizeof q);
  q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  q.queueFamilyIndex = 0;
  q.queueCount = 1;
  q.pQueuePriorities = &prio;
  memset(&di, 0, sizeof di);
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &q;
  CHECK(vkCreateDevice(phys, &di, NULL, &device) == VK_SUCCESS);
  vkGetDeviceQueue(device, 0, 0, &queue);

  vk.instance = instance;
  vk.physical_device = phys;
  vk.device = device;
  vk.queue_family = 0;
  vk.queue = queue;
  CHECK_OK(cairn_context_create_vulkan(NULL, &vk, &ctx));
  x = tensor_f32(ctx, v, shape, 1);
  y = run1(ctx, "Mul", x, x, NULL, 0);
  CHECK_OK(cairn_tensor_read(y, r, sizeof r));
  CHECK(r[0] == 1 && r[1] == 4 && r[2] == 9);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_context_free(ctx);

  /* Cairn destroyed none of it: the engine's device still works and is the engine's to destroy. */
  CHECK(vkDeviceWaitIdle(device) == VK_SUCCESS);
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(instance, NULL);
}

/* ---- one program, two devices ---- */

/* A two-layer network with a softmax head and a mean-squared loss, through the C API on
 * `device`. Writes the probabilities (4x3), the predicted classes (4) and the loss. */
static void small_program(const char *device, float *probs, int64_t *classes, float *loss) {
  cairn_context *ctx = NULL;
  cairn_context_options co = CAIRN_CONTEXT_OPTIONS_INIT;
  static const float xv[4 * 5] = {0.1f, -0.2f, 0.3f, 0.5f,  -1.0f, 1.2f,  0.7f, -0.3f, 0.2f, 0.0f,
                                  -0.4f, 0.9f, 0.8f, -0.6f, 0.25f, 0.05f, 0.3f, -0.9f, 1.1f, -0.2f};
  static const float w1v[5 * 6] = {0.2f,  -0.1f, 0.4f,  0.3f,  -0.5f, 0.1f,  0.7f,  0.2f,  -0.3f, 0.05f,
                                   0.6f,  -0.4f, -0.2f, 0.3f,  0.1f,  0.8f,  -0.6f, 0.25f, 0.15f, -0.7f,
                                   0.45f, -0.1f, 0.3f,  0.2f,  0.5f,  0.35f, -0.25f, 0.1f, 0.9f,  -0.3f};
  static const float b1v[6] = {0.01f, -0.02f, 0.03f, 0.0f, 0.05f, -0.01f};
  static const float w2v[6 * 3] = {0.3f, -0.2f, 0.1f, 0.5f, 0.4f, -0.6f, -0.1f, 0.2f, 0.7f,
                                   0.25f, -0.35f, 0.15f, 0.6f, 0.1f, -0.2f, -0.4f, 0.3f, 0.05f};
  static const float targetv[4 * 3] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0};
  int64_t sx[2] = {4, 5};
  int64_t sw1[2] = {5, 6};
  int64_t sb1[1] = {6};
  int64_t sw2[2] = {6, 3};
  int64_t st[2] = {4, 3};
  cairn_tensor *x, *w1, *b1, *w2, *target, *h, *hb, *hr, *logits, *p, *cls, *d, *sq, *l;
  cairn_attr argmax_axis;
  cairn_tensor *cls64 = NULL;
  cairn_attr cast_to;
  cairn_tensor *host = NULL;
  int32_t cls32[4];

  co.device = device;
  co.seed = 1;
  CHECK_OK(cairn_context_create(&co, &ctx));
  CHECK(strncmp(cairn_context_device(ctx), device, strlen(device)) == 0);
  x = tensor_f32(ctx, xv, sx, 2);
  w1 = tensor_f32(ctx, w1v, sw1, 2);
  b1 = tensor_f32(ctx, b1v, sb1, 1);
  w2 = tensor_f32(ctx, w2v, sw2, 2);
  target = tensor_f32(ctx, targetv, st, 2);
  h = run1(ctx, "MatMul", x, w1, NULL, 0);
  hb = run1(ctx, "Add", h, b1, NULL, 0);
  hr = run1(ctx, "Relu", hb, NULL, NULL, 0);
  logits = run1(ctx, "MatMul", hr, w2, NULL, 0);
  p = run1(ctx, "Softmax", logits, NULL, NULL, 0);
  memset(&argmax_axis, 0, sizeof argmax_axis);
  argmax_axis.name = "axis";
  argmax_axis.kind = CAIRN_ATTR_INT;
  argmax_axis.i = 1;
  cls = run1(ctx, "ArgMax", p, NULL, &argmax_axis, 1);
  d = run1(ctx, "Sub", p, target, NULL, 0);
  sq = run1(ctx, "Square", d, NULL, NULL, 0);
  l = run1(ctx, "Mean", sq, NULL, NULL, 0);
  CHECK(strcmp(cairn_tensor_device(l), cairn_context_device(ctx)) == 0);

  CHECK_OK(cairn_tensor_read(p, probs, 12 * sizeof(float)));
  CHECK_OK(cairn_tensor_read(l, loss, sizeof(float)));
  /* ArgMax gives int64 (its default output_type); narrow it to int32 through Cast. */
  memset(&cast_to, 0, sizeof cast_to);
  cast_to.name = "DstT";
  cast_to.kind = CAIRN_ATTR_DTYPE;
  cast_to.dtype = CAIRN_INT32;
  cls64 = run1(ctx, "Cast", cls, NULL, &cast_to, 1);
  CHECK_OK(cairn_tensor_copy_to_device(ctx, cls64, "cpu", &host));
  CHECK_OK(cairn_tensor_read(host, cls32, sizeof cls32));
  {
    int i;
    for (i = 0; i < 4; ++i) classes[i] = cls32[i];
  }
  cairn_tensor_free(host);
  cairn_tensor_free(cls64);
  cairn_tensor_free(x);
  cairn_tensor_free(w1);
  cairn_tensor_free(b1);
  cairn_tensor_free(w2);
  cairn_tensor_free(target);
  cairn_tensor_free(h);
  cairn_tensor_free(hb);
  cairn_tensor_free(hr);
  cairn_tensor_free(logits);
  cairn_tensor_free(p);
  cairn_tensor_free(cls);
  cairn_tensor_free(d);
  cairn_tensor_free(sq);
  cairn_tensor_free(l);
  cairn_context_free(ctx);
}

static void test_same_program_on_cpu_and_vulkan(void) {
  float p_cpu[12], p_vk[12], loss_cpu = 0, loss_vk = 1;
  int64_t c_cpu[4], c_vk[4];
  int i;
  float row;
  small_program("cpu", p_cpu, c_cpu, &loss_cpu);
  small_program("vulkan", p_vk, c_vk, &loss_vk);
  for (i = 0; i < 12; ++i) CHECK(fabsf(p_cpu[i] - p_vk[i]) <= 1e-5f * (1.0f + fabsf(p_cpu[i])));
  for (i = 0; i < 4; ++i) {
    CHECK(c_cpu[i] == c_vk[i]);
    row = p_vk[3 * i] + p_vk[3 * i + 1] + p_vk[3 * i + 2];
    CHECK(fabsf(row - 1.0f) < 1e-5f);
  }
  CHECK(fabsf(loss_cpu - loss_vk) <= 1e-6f);
  CHECK(loss_cpu > 0.0f);
}

/* ---- no driver ---- */

static void test_no_driver(void) {
  size_t n = 0;
  cairn_context *ctx = NULL;
  cairn_vulkan_device_info info = CAIRN_VULKAN_DEVICE_INFO_INIT;
  cairn_context_options co = CAIRN_CONTEXT_OPTIONS_INIT;
  float v[2] = {1, 2};
  float r[2] = {0, 0};
  int64_t shape[1] = {2};
  cairn_tensor *x;
  cairn_tensor *y;
  CHECK(cairn_vulkan_available() == 0);
  CHECK_ERR(cairn_vulkan_device_count(&n), CAIRN_UNAVAILABLE, "driver");
  CHECK_ERR(cairn_vulkan_device_describe(0, &info), CAIRN_UNAVAILABLE, "driver");
  CHECK_ERR(cairn_context_create_vulkan(NULL, NULL, &ctx), CAIRN_UNAVAILABLE, "vulkan");
  co.device = "vulkan";
  CHECK_ERR(cairn_context_create(&co, &ctx), CAIRN_UNAVAILABLE, "vulkan");
  CHECK(ctx == NULL);
  CHECK_OK(cairn_context_create(NULL, &ctx));
  x = tensor_f32(ctx, v, shape, 1);
  y = run1(ctx, "Add", x, x, NULL, 0);
  CHECK_OK(cairn_tensor_read(y, r, sizeof r));
  CHECK(r[0] == 2 && r[1] == 4);
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_context_free(ctx);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--no-driver") == 0) {
    setenv("VK_ICD_FILENAMES", "/nonexistent/cairn_no_icd.json", 1);
    setenv("VK_DRIVER_FILES", "/nonexistent/cairn_no_icd.json", 1);
    test_no_driver();
    TEST_MAIN_END();
  }
  test_devices();
  test_context_defaults_and_errors();
  test_memory_limit();
  test_cpu_fallback();
  test_external_handles();
  test_same_program_on_cpu_and_vulkan();
  TEST_MAIN_END();
}
