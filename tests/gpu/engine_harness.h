// The engine of the engine tests (issue 19): a test that plays a game engine owning the Vulkan
// instance, device and queue, and uses Cairn through the C API in external mode. Its instance runs
// the Khronos validation layer with synchronisation validation, and the debug messenger counts
// every error message (g_engine_errors). Also: the C API checks, and a small model and compiled
// function with their inputs. Test-only.
#pragma once

#define CAIRN_EXPERIMENTAL
#include "cairn/cairn.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/loader.h"
#include "capi/internal/handles.h"
#include "gpu/vulkan/vulkan_device.h"

namespace engine_test {

namespace vk = cairn::gpu;

inline std::atomic<int> g_engine_errors{0};

inline VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_engine_errors.fetch_add(1);
    std::fprintf(stderr, "engine validation error: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

inline bool has_validation_layer() {
  uint32_t n = 0;
  vk::vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vk::vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0) return true;
  return false;
}

template <class Fn>
Fn proc(VkInstance instance, const char* name) {
  auto f = reinterpret_cast<Fn>(vk::vkGetInstanceProcAddr(instance, name));
  REQUIRE_MESSAGE(static_cast<bool>(f), name);
  return f;
}

// A host-visible buffer of the engine's, mapped.
struct EngineBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  char* mapped = nullptr;
};

// What a game engine brings: its instance (validation and synchronisation validation on), a
// device with timeline semaphores, a compute queue, a timeline semaphore and buffers.
struct Engine {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  PFN_vkCreateSemaphore create_semaphore = nullptr;
  PFN_vkDestroySemaphore destroy_semaphore = nullptr;
  PFN_vkSignalSemaphore signal_semaphore = nullptr;
  PFN_vkWaitSemaphores wait_semaphores = nullptr;
  PFN_vkGetSemaphoreCounterValue counter_value = nullptr;

  // The chain the device was created with: 16-bit storage (when asked for and supported) and
  // timeline semaphores.
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};

  // `with_layer` false: no validation layer (it allocates while commands are recorded, so a test
  // counting Cairn's allocations runs without it).
  explicit Engine(bool float16 = false, bool with_layer = true) {
    vk::load_vulkan();
    const bool validation = with_layer && has_validation_layer();
    if (!validation) std::fprintf(stderr, "note: no validation layer installed; running without it\n");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    validation_features.enabledValidationFeatureCount = 1;
    validation_features.pEnabledValidationFeatures = enables;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ii.pApplicationInfo = &app;
    if (validation) {
      ii.pNext = &validation_features;
      ii.enabledLayerCount = 1;
      ii.ppEnabledLayerNames = &layer;
      ii.enabledExtensionCount = 1;
      ii.ppEnabledExtensionNames = &ext;
    }
    REQUIRE(vk::vkCreateInstance(&ii, nullptr, &instance) == VK_SUCCESS);
    vk::load_instance_functions(instance);
    if (validation) {
      VkDebugUtilsMessengerCreateInfoEXT m{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
      m.pfnUserCallback = on_message;
      auto create = proc<PFN_vkCreateDebugUtilsMessengerEXT>(instance, "vkCreateDebugUtilsMessengerEXT");
      REQUIRE(create(instance, &m, nullptr, &messenger) == VK_SUCCESS);
    }
    uint32_t n = 1;
    VkResult r = vk::vkEnumeratePhysicalDevices(instance, &n, &physical);
    REQUIRE((r == VK_SUCCESS || r == VK_INCOMPLETE));
    REQUIRE(n >= 1);
    features.pNext = &features11;
    features11.pNext = &features12;
    features12.timelineSemaphore = VK_TRUE;
    if (float16) {
      VkPhysicalDeviceVulkan11Features supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
      VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
      query.pNext = &supported;
      vk::vkGetPhysicalDeviceFeatures2(physical, &query);
      REQUIRE(supported.storageBuffer16BitAccess == VK_TRUE);
      features11.storageBuffer16BitAccess = VK_TRUE;
    }
    device = make_device();
    vk::vkGetDeviceQueue(device, 0, 0, &queue);
    VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cp.queueFamilyIndex = 0;
    REQUIRE(vk::vkCreateCommandPool(device, &cp, nullptr, &pool) == VK_SUCCESS);
    create_semaphore = proc<PFN_vkCreateSemaphore>(instance, "vkCreateSemaphore");
    destroy_semaphore = proc<PFN_vkDestroySemaphore>(instance, "vkDestroySemaphore");
    signal_semaphore = proc<PFN_vkSignalSemaphore>(instance, "vkSignalSemaphore");
    wait_semaphores = proc<PFN_vkWaitSemaphores>(instance, "vkWaitSemaphores");
    counter_value = proc<PFN_vkGetSemaphoreCounterValue>(instance, "vkGetSemaphoreCounterValue");
  }

  // A device on queue family 0 (lavapipe's one family does compute) with `features`.
  VkDevice make_device() const {
    float priority = 1;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = 0;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.pNext = &features;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &q;
    VkDevice d = VK_NULL_HANDLE;
    REQUIRE(vk::vkCreateDevice(physical, &di, nullptr, &d) == VK_SUCCESS);
    return d;
  }

  ~Engine() {
    vk::vkDestroyCommandPool(device, pool, nullptr);
    vk::vkDestroyDevice(device, nullptr);
    if (messenger)
      proc<PFN_vkDestroyDebugUtilsMessengerEXT>(instance, "vkDestroyDebugUtilsMessengerEXT")(instance, messenger,
                                                                                            nullptr);
    vk::vkDestroyInstance(instance, nullptr);
  }

  EngineBuffer make_buffer(VkDevice on, uint64_t size) const {
    EngineBuffer b;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    REQUIRE(vk::vkCreateBuffer(on, &bi, nullptr, &b.buffer) == VK_SUCCESS);
    VkMemoryRequirements req;
    vk::vkGetBufferMemoryRequirements(on, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mem;
    vk::vkGetPhysicalDeviceMemoryProperties(physical, &mem);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < mem.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) type = i;
    REQUIRE(type != UINT32_MAX);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    REQUIRE(vk::vkAllocateMemory(on, &ai, nullptr, &b.memory) == VK_SUCCESS);
    REQUIRE(vk::vkBindBufferMemory(on, b.buffer, b.memory, 0) == VK_SUCCESS);
    void* p = nullptr;
    REQUIRE(vk::vkMapMemory(on, b.memory, 0, VK_WHOLE_SIZE, 0, &p) == VK_SUCCESS);
    b.mapped = static_cast<char*>(p);
    return b;
  }

  static void free_buffer(VkDevice on, EngineBuffer& b) {
    vk::vkDestroyBuffer(on, b.buffer, nullptr);
    vk::vkFreeMemory(on, b.memory, nullptr);
  }

  VkSemaphore make_timeline() const {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 0;
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    si.pNext = &type;
    VkSemaphore s = VK_NULL_HANDLE;
    REQUIRE(create_semaphore(device, &si, nullptr, &s) == VK_SUCCESS);
    return s;
  }

  // The engine's host side of a timeline: signal a value, wait for one (10 s at most).
  void host_signal(VkSemaphore s, uint64_t value) const {
    VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = s;
    signal.value = value;
    REQUIRE(signal_semaphore(device, &signal) == VK_SUCCESS);
  }

  void host_wait(VkSemaphore s, uint64_t value) const {
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &s;
    wait.pValues = &value;
    REQUIRE(wait_semaphores(device, &wait, 10'000'000'000ull) == VK_SUCCESS);
  }

  uint64_t counter(VkSemaphore s) const {
    uint64_t v = 0;
    REQUIRE(counter_value(device, s, &v) == VK_SUCCESS);
    return v;
  }

  // Copies `bytes` at `offset` of `src` (a buffer of Cairn's) into `dst` on the engine's queue,
  // after `semaphore` reaches `value`; waits for the copy (10 s at most).
  void copy_after(VkSemaphore semaphore, uint64_t value, VkBuffer src, uint64_t offset, uint64_t bytes,
                  const EngineBuffer& dst) const {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    REQUIRE(vk::vkAllocateCommandBuffers(device, &ai, &cb) == VK_SUCCESS);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    REQUIRE(vk::vkBeginCommandBuffer(cb, &bi) == VK_SUCCESS);
    VkBufferCopy region{offset, 0, bytes};
    vk::vkCmdCopyBuffer(cb, src, dst.buffer, 1, &region);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vk::vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                             nullptr);
    REQUIRE(vk::vkEndCommandBuffer(cb) == VK_SUCCESS);
    VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    ts.waitSemaphoreValueCount = 1;
    ts.pWaitSemaphoreValues = &value;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &ts;
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &semaphore;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    REQUIRE(vk::vkCreateFence(device, &fi, nullptr, &fence) == VK_SUCCESS);
    REQUIRE(vk::vkQueueSubmit(queue, 1, &si, fence) == VK_SUCCESS);
    CHECK(vk::vkWaitForFences(device, 1, &fence, VK_TRUE, 10'000'000'000ull) == VK_SUCCESS);
    vk::vkDestroyFence(device, fence, nullptr);
    vk::vkFreeCommandBuffers(device, pool, 1, &cb);
  }
};

inline uint64_t bits(VkBuffer b) { return (uint64_t)b; }
inline uint64_t bits(VkSemaphore s) { return (uint64_t)s; }

// Frees `st`, failing the test with its message when it is an error.
inline void ok(cairn_status* st) {
  if (!st) return;
  std::string message = cairn_status_message(st);
  cairn_status_free(st);
  FAIL(message);
}

// Expects an error with `code` whose message has `fragment`.
inline void refused(cairn_status* st, cairn_code code, const std::string& fragment) {
  REQUIRE(st != nullptr);
  std::string message = cairn_status_message(st);
  CAPTURE(message);
  CHECK(cairn_status_code(st) == code);
  CHECK(message.find(fragment) != std::string::npos);
  cairn_status_free(st);
}

inline cairn_context* engine_context(const Engine& e, bool cpu_fallback = false) {
  cairn_vulkan_options vo = CAIRN_VULKAN_OPTIONS_INIT;
  vo.cpu_fallback = cpu_fallback ? CAIRN_TRUE : CAIRN_FALSE;
  vo.instance = e.instance;
  vo.physical_device = e.physical;
  vo.device = e.device;
  vo.queue_family = 0;
  vo.queue = e.queue;
  cairn_context* ctx = nullptr;
  ok(cairn_context_create_vulkan(nullptr, &vo, &ctx));
  return ctx;
}

inline cairn_tensor* run1(cairn_context* ctx, const char* op, std::vector<cairn_tensor*> in) {
  cairn_tensor* out = nullptr;
  ok(cairn_op_run(ctx, op, in.data(), in.size(), nullptr, 0, &out, 1));
  return out;
}

// A small model: relu(x @ w + b), its softmax, and x reshaped (which shares x's memory).
inline std::vector<cairn_tensor*> model(cairn_context* ctx, cairn_tensor* x, cairn_tensor* w, cairn_tensor* b) {
  cairn_tensor* mm = run1(ctx, "MatMul", {x, w});
  cairn_tensor* biased = run1(ctx, "Add", {mm, b});
  cairn_tensor* relu = run1(ctx, "Relu", {biased});
  cairn_tensor* soft = run1(ctx, "Softmax", {biased});
  cairn_tensor* sum = run1(ctx, "Add", {x, x});
  cairn_tensor_free(mm);
  cairn_tensor_free(biased);
  return {relu, soft, sum};
}

inline std::vector<char> bytes_of(const cairn_tensor* t) {
  std::vector<char> out(cairn_tensor_nbytes(t));
  ok(cairn_tensor_read(t, out.data(), out.size()));
  return out;
}

inline void free_all(std::vector<cairn_tensor*>& ts) {
  for (cairn_tensor* t : ts) cairn_tensor_free(t);
  ts.clear();
}

// A compiled function's body: relu(x @ w + b).
inline cairn_status* dense_relu(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_tensor *mm = nullptr, *biased = nullptr;
  cairn_tensor* mm_in[] = {in[0], in[1]};
  if (cairn_status* st = cairn_op_run(ctx, "MatMul", mm_in, 2, nullptr, 0, &mm, 1)) return st;
  cairn_tensor* add_in[] = {mm, in[2]};
  cairn_status* st = cairn_op_run(ctx, "Add", add_in, 2, nullptr, 0, &biased, 1);
  cairn_tensor_free(mm);
  if (st) return st;
  st = cairn_op_run(ctx, "Relu", &biased, 1, nullptr, 0, &out[0], 1);
  cairn_tensor_free(biased);
  return st;
}

inline cairn_tensor* call1(cairn_function* f, std::vector<cairn_tensor*> in) {
  cairn_tensor* out = nullptr;
  ok(cairn_function_call(f, in.data(), in.size(), &out, 1));
  return out;
}

constexpr int64_t kRows = 4, kCols = 8, kOut = 5;
constexpr uint64_t kOffset = 256;  // a multiple of any minStorageBufferOffsetAlignment (at most 256)

inline std::vector<float> input_values(float scale) {
  std::vector<float> v(kRows * kCols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (static_cast<float>(i % 7) - 3.1f) / 3;
  return v;
}

// The engine's input range (kRows x kCols float32 at kOffset of `shared`) as a tensor.
inline cairn_tensor* wrap_input(cairn_context* ctx, const Engine& e, const EngineBuffer& shared) {
  const int64_t shape[] = {kRows, kCols};
  cairn_tensor* t = nullptr;
  ok(cairn_vulkan_tensor_wrap(ctx, e.device, bits(shared.buffer), kOffset, kRows * kCols * 4, CAIRN_FLOAT32, shape, 2,
                              &t));
  return t;
}

inline cairn_tensor* host_tensor(cairn_context* ctx, const std::vector<float>& v, std::vector<int64_t> shape) {
  cairn_tensor* t = nullptr;
  ok(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape.data(), shape.size(), v.data(), v.size() * 4, &t));
  return t;
}

// The engine's frames, without what runs in them: x is the engine's input range and y its output
// range (both wrapped, kRows x kCols and kRows x kOut float32), w and b Cairn's own weights, on an
// engine context (`with_layer`: the validation layer; `cpu_fallback` as asked).
struct EngineScene {
  Engine e;
  cairn_context* ctx = nullptr;
  EngineBuffer in_buffer, out_buffer;
  cairn_tensor *x = nullptr, *w = nullptr, *b = nullptr, *y = nullptr;

  explicit EngineScene(bool with_layer = true, bool cpu_fallback = false) : e(/*float16=*/false, with_layer) {
    ctx = engine_context(e, cpu_fallback);
    in_buffer = e.make_buffer(e.device, 4096);
    out_buffer = e.make_buffer(e.device, 4096);
    set_input(1);
    x = wrap_input(ctx, e, in_buffer);
    std::vector<float> wv(kCols * kOut), bv(kOut);
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.25f * static_cast<float>(static_cast<int>(i % 5) - 2);
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.1f * static_cast<float>(i);
    w = host_tensor(ctx, wv, {kCols, kOut});
    b = host_tensor(ctx, bv, {kOut});
    const int64_t yshape[] = {kRows, kOut};
    ok(cairn_vulkan_tensor_wrap(ctx, e.device, bits(out_buffer.buffer), kOffset, kRows * kOut * 4, CAIRN_FLOAT32,
                                yshape, 2, &y));
  }
  ~EngineScene() {
    for (cairn_tensor* t : {x, w, b, y}) cairn_tensor_free(t);
    ok(cairn_context_synchronize(ctx));
    cairn_context_free(ctx);  // Cairn's objects on the engine's device go before the device
    Engine::free_buffer(e.device, in_buffer);
    Engine::free_buffer(e.device, out_buffer);
  }
  EngineScene(const EngineScene&) = delete;
  EngineScene& operator=(const EngineScene&) = delete;

  void set_input(float scale) {
    const std::vector<float> v = input_values(scale);
    std::memcpy(in_buffer.mapped + kOffset, v.data(), v.size() * 4);
  }
  std::vector<char> output() const {
    return std::vector<char>(out_buffer.mapped + kOffset, out_buffer.mapped + kOffset + kRows * kOut * 4);
  }
  void clear_output() { std::memset(out_buffer.mapped + kOffset, 0, kRows * kOut * 4); }
  cairn::gpu::DeviceStats stats() const { return cairn::gpu::vulkan(ctx->ctx->device("vulkan")).stats(); }
};

inline constexpr uint64_t kFenceNs = 10'000'000'000ull;

// The engine's frame: a resettable command buffer and a fence.
struct FrameLoop {
  const Engine& e;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  explicit FrameLoop(const Engine& engine) : e(engine) {
    VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cp.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    REQUIRE(vk::vkCreateCommandPool(e.device, &cp, nullptr, &pool) == VK_SUCCESS);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    REQUIRE(vk::vkAllocateCommandBuffers(e.device, &ai, &cb) == VK_SUCCESS);
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    REQUIRE(vk::vkCreateFence(e.device, &fi, nullptr, &fence) == VK_SUCCESS);
  }
  ~FrameLoop() {
    vk::vkDestroyFence(e.device, fence, nullptr);
    vk::vkDestroyCommandPool(e.device, pool, nullptr);
  }

  void begin() {
    // Begin resets it (the pool has VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT).
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    REQUIRE(vk::vkBeginCommandBuffer(cb, &bi) == VK_SUCCESS);
  }
  // Ends the command buffer, submits it on the engine's queue and waits for it.
  void submit_and_wait() {
    REQUIRE(vk::vkEndCommandBuffer(cb) == VK_SUCCESS);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    REQUIRE(vk::vkResetFences(e.device, 1, &fence) == VK_SUCCESS);
    REQUIRE(vk::vkQueueSubmit(e.queue, 1, &si, fence) == VK_SUCCESS);
    REQUIRE(vk::vkWaitForFences(e.device, 1, &fence, VK_TRUE, kFenceNs) == VK_SUCCESS);
  }
};

inline void record_all(const cairn_vulkan_recording* rec, VkCommandBuffer cb) {
  ok(cairn_vulkan_recording_record(rec, cb, 0, SIZE_MAX, nullptr));
}

// The Vulkan objects and memory a device has made, and its submissions.
inline bool same_objects(const cairn::gpu::DeviceStats& a, const cairn::gpu::DeviceStats& b) {
  return a.memory_allocations == b.memory_allocations && a.buffers == b.buffers && a.pipelines == b.pipelines &&
         a.descriptor_sets == b.descriptor_sets && a.recordings == b.recordings && a.submits == b.submits;
}

}  // namespace engine_test
