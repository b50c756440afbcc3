/* The Devices section of the C API (tf.config): physical and logical devices, splits, visibility,
 * memory counts and limits, thread counts, and configuration closing at the first use. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static cairn_context *fresh(void) {
  cairn_context *ctx = NULL;
  CHECK_OK(cairn_context_create(NULL, &ctx));
  return ctx;
}

static void test_physical(void) {
  cairn_context *ctx = fresh();
  size_t n = 0, i;
  cairn_physical_device_info info = CAIRN_PHYSICAL_DEVICE_INFO_INIT;
  cairn_memory_heap heap = CAIRN_MEMORY_HEAP_INIT;
  cairn_bool initialized = 1;
  CHECK_OK(cairn_context_physical_device_count(ctx, &n));
  CHECK(n >= 1);
  CHECK_OK(cairn_context_physical_device(ctx, 0, &info));
  CHECK(strcmp(info.name, "cpu:0") == 0);
  CHECK(strcmp(info.type, "CPU") == 0);
  CHECK(info.memory > 0 && info.num_heaps == 1 && info.queues == 1);
  CHECK_OK(cairn_context_physical_device_heap(ctx, 0, 0, &heap));
  CHECK(heap.size == info.memory && heap.budget == heap.size && heap.device_local == 1);
  for (i = 1; i < n; ++i) { /* Vulkan devices (lavapipe here) */
    CHECK_OK(cairn_context_physical_device(ctx, i, &info));
    CHECK(strcmp(info.type, "VULKAN") == 0);
    CHECK(strncmp(info.name, "vulkan:", 7) == 0);
    CHECK(info.num_heaps >= 1 && info.queues >= 1);
  }
  CHECK_ERR(cairn_context_physical_device(ctx, n, &info), CAIRN_OUT_OF_RANGE, "physical device index");
  CHECK_ERR(cairn_context_physical_device_heap(ctx, 0, 7, &heap), CAIRN_OUT_OF_RANGE, "heap 7");
  /* listing physical devices does not initialize the logical ones */
  CHECK_OK(cairn_context_devices_initialized(ctx, &initialized));
  CHECK(initialized == 0);
  cairn_context_free(ctx);
}

static void test_split_cpu(void) {
  cairn_context *ctx = fresh();
  cairn_logical_device_config cfg[2] = {CAIRN_LOGICAL_DEVICE_CONFIG_INIT, CAIRN_LOGICAL_DEVICE_CONFIG_INIT};
  cairn_logical_device_info li = CAIRN_LOGICAL_DEVICE_INFO_INIT;
  cairn_memory_info mi = CAIRN_MEMORY_INFO_INIT;
  cairn_tensor *a = NULL, *b = NULL, *sum = NULL;
  const int64_t shape[1] = {256};
  float data[256] = {0};
  size_t n = 0;
  cfg[1].memory_limit = 4096;
  CHECK_OK(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, 2));
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, 2), CAIRN_FAILED_PRECONDITION,
            "cairn_context_set_logical_devices: \"cpu:0\" is already configured as 2 logical device(s)");
  CHECK_OK(cairn_context_logical_device_count(ctx, &n)); /* initializes */
  CHECK(n >= 2);
  CHECK_OK(cairn_context_logical_device(ctx, 1, &li));
  CHECK(strcmp(li.name, "cpu:1") == 0 && strcmp(li.physical, "cpu:0") == 0 && li.memory_limit == 4096);
  CHECK_ERR(cairn_context_logical_device(ctx, n, &li), CAIRN_OUT_OF_RANGE, "logical device index");

  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, data, sizeof data, &a));
  CHECK(strcmp(cairn_tensor_device(a), "cpu:0") == 0);
  CHECK_OK(cairn_tensor_copy_to_device(ctx, a, "cpu:1", &b));
  CHECK(strcmp(cairn_tensor_device(b), "cpu:1") == 0);
  CHECK_OK(cairn_context_memory_info(ctx, "cpu:1", &mi));
  CHECK(mi.current == 1024 && mi.peak == 1024 && mi.limit == 4096 && mi.budget > 0);
  {
    cairn_tensor *ins[2];
    cairn_tensor *out = NULL;
    ins[0] = b;
    ins[1] = b;
    CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out, 1));
    CHECK(strcmp(cairn_tensor_device(out), "cpu:1") == 0);
    CHECK_OK(cairn_context_memory_info(ctx, "cpu:1", &mi));
    CHECK(mi.current == 2048);
    /* a third and fourth KiB fit; a fifth would pass the 4 KiB limit */
    {
      cairn_tensor *o2 = NULL, *o3 = NULL;
      CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &o2, 1));
      CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &o3, 1));
      CHECK_ERR(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &sum, 1), CAIRN_RESOURCE_EXHAUSTED,
                "Add: cpu:1: allocating 1024 bytes would pass the device's memory limit of 4096");
      cairn_tensor_free(o2);
      cairn_tensor_free(o3);
    }
    cairn_tensor_free(out);
  }
  CHECK_OK(cairn_context_memory_info(ctx, "cpu:1", &mi));
  CHECK(mi.current == 1024 && mi.peak == 4096);
  CHECK_OK(cairn_context_reset_memory_stats(ctx, "cpu:1"));
  CHECK_OK(cairn_context_memory_info(ctx, "cpu:1", &mi));
  CHECK(mi.peak == 1024);
  CHECK_ERR(cairn_context_memory_info(ctx, "cpu:2", &mi), CAIRN_NOT_FOUND, "cpu:0, cpu:1");
  CHECK_ERR(cairn_context_reset_memory_stats(ctx, "tpu"), CAIRN_NOT_FOUND, "tpu");
  cairn_tensor_free(a);
  cairn_tensor_free(b);
  cairn_context_free(ctx);
}

static void test_closed_after_first_use(void) {
  cairn_context *ctx = fresh();
  cairn_logical_device_config cfg = CAIRN_LOGICAL_DEVICE_CONFIG_INIT;
  cairn_tensor *t = NULL;
  const int64_t shape[1] = {1};
  float v = 1;
  int32_t intra = -1, inter = -1;
  cairn_bool initialized = 0, grow = 0;
  char *visible = NULL;
  CHECK_OK(cairn_context_set_threads(ctx, 1, 3));
  CHECK_OK(cairn_context_threads(ctx, &intra, &inter));
  CHECK(intra == 1 && inter == 3);
  CHECK_OK(cairn_context_set_visible_devices(ctx, NULL, 0)); /* the CPU only */
  CHECK_OK(cairn_context_visible_devices(ctx, &visible));
  CHECK(strcmp(visible, "cpu:0") == 0);
  cairn_free(visible);
  CHECK_OK(cairn_context_memory_growth(ctx, "cpu:0", &grow));
  CHECK(grow == 1);
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, &v, sizeof v, &t));
  CHECK_OK(cairn_context_devices_initialized(ctx, &initialized));
  CHECK(initialized == 1);
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "cpu:0", &cfg, 1), CAIRN_FAILED_PRECONDITION,
            "cannot be modified after");
  CHECK_ERR(cairn_context_set_visible_devices(ctx, NULL, 0), CAIRN_FAILED_PRECONDITION, "already initialized");
  CHECK_ERR(cairn_context_set_threads(ctx, 2, 2), CAIRN_FAILED_PRECONDITION, "cairn_context_set_threads");
  cairn_tensor_free(t);
  cairn_context_free(ctx);
}

static void test_bad_input(void) {
  cairn_context *ctx = fresh();
  cairn_logical_device_config cfg[2] = {CAIRN_LOGICAL_DEVICE_CONFIG_INIT, CAIRN_LOGICAL_DEVICE_CONFIG_INIT};
  const char *names[2] = {"cpu:0", "npu:0"};
  cfg[0].memory_limit = (uint64_t)1 << 62;
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, 1), CAIRN_INVALID_ARGUMENT, "is more than");
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, 0), CAIRN_INVALID_ARGUMENT, "give 1 to 64");
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "cpu:0", NULL, 2), CAIRN_INVALID_ARGUMENT, "configs");
  cfg[0].memory_limit = 0;
  cfg[1].struct_size = 4;
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "cpu:0", cfg, 2), CAIRN_INVALID_ARGUMENT, "struct_size");
  cfg[1].struct_size = cfg[0].struct_size;
  CHECK_ERR(cairn_context_set_logical_devices(ctx, "gpu:0", cfg, 2), CAIRN_NOT_FOUND, "gpu:0");
  CHECK_ERR(cairn_context_set_visible_devices(ctx, names, 2), CAIRN_NOT_FOUND, "npu:0");
  CHECK_ERR(cairn_context_set_memory_growth(ctx, "cpu:0", 0), CAIRN_INVALID_ARGUMENT, "applies to Vulkan devices");
  CHECK_ERR(cairn_context_set_memory_growth(ctx, "cpu:0", 7), CAIRN_INVALID_ARGUMENT, "grow must be 0 or 1");
  CHECK_ERR(cairn_context_set_threads(ctx, -2, 0), CAIRN_INVALID_ARGUMENT, "thread counts");
  CHECK_ERR(cairn_context_physical_device_count(NULL, NULL), CAIRN_INVALID_ARGUMENT, "ctx");
  cairn_context_free(ctx);
}

int main(void) {
  test_physical();
  test_split_cpu();
  test_closed_after_first_use();
  test_bad_input();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures != 0;
}
