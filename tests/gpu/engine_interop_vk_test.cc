// Issue 19, first slice: an engine that owns the Vulkan instance, device and queue shares buffers
// with Cairn (wrapped VkBuffer ranges, a tensor's VkBuffer read by the engine's commands) and
// orders Cairn's work against its own with a timeline semaphore. The engine here is the test: its
// instance runs the Khronos validation layer with synchronisation validation, and any error
// message fails the test.
#include "tests/gpu/engine_harness.h"

#include <chrono>
#include <thread>

namespace {

using namespace engine_test;

TEST_CASE("engine buffers: wrapped ranges, exposed results and timeline-semaphore ordering") {
  g_engine_errors = 0;
  {
    Engine e;
    cairn_context* ctx = engine_context(e);
    EngineBuffer shared = e.make_buffer(e.device, 4096);
    EngineBuffer readback = e.make_buffer(e.device, 4096);
    const std::vector<float> x0 = input_values(1);
    std::memcpy(shared.mapped + kOffset, x0.data(), x0.size() * 4);
    std::vector<float> wv(kCols * kOut), bv(kOut);
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.25f * static_cast<float>(static_cast<int>(i % 5) - 2);
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.1f * static_cast<float>(i);
    cairn_tensor* w = host_tensor(ctx, wv, {kCols, kOut});
    cairn_tensor* b = host_tensor(ctx, bv, {kOut});
    const int64_t xshape[] = {kRows, kCols};

    SUBCASE("ops on a wrapped range equal the same ops on an ordinary tensor, bit for bit") {
      cairn_tensor* wrapped = nullptr;
      ok(cairn_vulkan_tensor_wrap(ctx, e.device, bits(shared.buffer), kOffset, 4096 - kOffset, CAIRN_FLOAT32, xshape, 2,
                                  &wrapped));
      CHECK(std::string(cairn_tensor_device(wrapped)).rfind("vulkan:", 0) == 0);
      std::vector<char> read = bytes_of(wrapped);  // through Cairn's memory: it cannot map the engine's
      CHECK(std::memcmp(read.data(), x0.data(), read.size()) == 0);
      cairn_tensor* ordinary = host_tensor(ctx, x0, {kRows, kCols});
      std::vector<cairn_tensor*> got = model(ctx, wrapped, w, b);
      std::vector<cairn_tensor*> want = model(ctx, ordinary, w, b);
      for (size_t i = 0; i < got.size(); ++i) CHECK(bytes_of(got[i]) == bytes_of(want[i]));
      free_all(got);
      free_all(want);
      cairn_tensor_free(wrapped);
      cairn_tensor_free(ordinary);
    }

    SUBCASE("Cairn's work waits for the engine's value and signals its own; the engine reads the result") {
      VkSemaphore timeline = e.make_timeline();
      cairn_tensor* wrapped = wrap_input(ctx, e, shared);
      const uint64_t sem = bits(timeline), one = 1;
      ok(cairn_vulkan_wait_semaphores(ctx, 1, &sem, &one));
      std::vector<cairn_tensor*> got = model(ctx, wrapped, w, b);
      ok(cairn_vulkan_signal_semaphore(ctx, sem, 2));
      // Returned without blocking; nothing ran: the engine has not reached 1.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      CHECK(e.counter(timeline) == 0);
      // The engine writes its frame's input only now, then signals 1 from the host.
      const std::vector<float> x1 = input_values(-2);
      std::memcpy(shared.mapped + kOffset, x1.data(), x1.size() * 4);
      e.host_signal(timeline, 1);
      // The engine's own commands read Cairn's result once the value is 2.
      uint64_t buffer = 0, offset = 0, size = 0;
      ok(cairn_vulkan_tensor_buffer(got[0], &buffer, &offset, &size));
      CHECK(size == kRows * kOut * 4);
      e.copy_after(timeline, 2, reinterpret_cast<VkBuffer>(buffer), offset, size, readback);
      CHECK(e.counter(timeline) == 2);
      // The results are those of the input written after the call returned.
      cairn_tensor* ordinary = host_tensor(ctx, x1, {kRows, kCols});
      std::vector<cairn_tensor*> want = model(ctx, ordinary, w, b);
      std::vector<char> want0 = bytes_of(want[0]);
      CHECK(std::memcmp(readback.mapped, want0.data(), want0.size()) == 0);
      for (size_t i = 0; i < got.size(); ++i) CHECK(bytes_of(got[i]) == bytes_of(want[i]));
      free_all(got);
      free_all(want);
      cairn_tensor_free(wrapped);
      cairn_tensor_free(ordinary);
      ok(cairn_context_synchronize(ctx));
      e.destroy_semaphore(e.device, timeline, nullptr);
    }

    SUBCASE("a compiled function replayed each frame between the engine's values") {
      VkSemaphore timeline = e.make_timeline();
      const uint64_t sem = bits(timeline);
      cairn_tensor* wrapped = wrap_input(ctx, e, shared);
      cairn_function* f = nullptr;
      ok(cairn_function_create(ctx, "dense_relu", dense_relu, nullptr, nullptr, &f));
      cairn_tensor_free(call1(f, {wrapped, w, b}));  // traced before the frames
      for (uint64_t frame = 0; frame < 3; ++frame) {
        CAPTURE(frame);
        const uint64_t ready = 2 * frame + 1, done = 2 * frame + 2;
        ok(cairn_vulkan_wait_semaphores(ctx, 1, &sem, &ready));
        cairn_tensor* got = call1(f, {wrapped, w, b});
        ok(cairn_vulkan_signal_semaphore(ctx, sem, done));
        CHECK(e.counter(timeline) == 2 * frame);
        const std::vector<float> xk = input_values(static_cast<float>(frame) + 0.5f);
        std::memcpy(shared.mapped + kOffset, xk.data(), xk.size() * 4);
        e.host_signal(timeline, ready);
        e.host_wait(timeline, done);
        cairn_tensor* ordinary = host_tensor(ctx, xk, {kRows, kCols});
        cairn_tensor* want = call1(f, {ordinary, w, b});
        CHECK(bytes_of(got) == bytes_of(want));
        cairn_tensor_free(got);
        cairn_tensor_free(want);
        cairn_tensor_free(ordinary);
      }
      CHECK(cairn_function_num_traces(f) == 1);
      cairn_function_free(f);
      cairn_tensor_free(wrapped);
      ok(cairn_context_synchronize(ctx));
      e.destroy_semaphore(e.device, timeline, nullptr);
    }

    SUBCASE("a signal with nothing queued still follows earlier work") {
      VkSemaphore timeline = e.make_timeline();
      const uint64_t sem = bits(timeline);
      ok(cairn_vulkan_signal_semaphore(ctx, sem, 5));
      e.host_wait(timeline, 5);
      e.destroy_semaphore(e.device, timeline, nullptr);
    }

    SUBCASE("wrapping refuses ranges it cannot use") {
      cairn_tensor* t = nullptr;
      const char* fn = "cairn_vulkan_tensor_wrap";
      const uint64_t short_range = kRows * kCols * 4 - 4;
      refused(cairn_vulkan_tensor_wrap(ctx, e.device, bits(shared.buffer), kOffset, short_range, CAIRN_FLOAT32, xshape,
                                       2, &t),
              CAIRN_INVALID_ARGUMENT, std::string(fn) + ": the range holds 124 bytes, but the tensor needs 128");
      refused(cairn_vulkan_tensor_wrap(ctx, e.device, bits(shared.buffer), 2, 1024, CAIRN_FLOAT32, xshape, 2, &t),
              CAIRN_INVALID_ARGUMENT, std::string(fn) + ": offset 2 is not a multiple of");
      refused(cairn_vulkan_tensor_wrap(ctx, e.device, 0, 0, 1024, CAIRN_FLOAT32, xshape, 2, &t), CAIRN_INVALID_ARGUMENT,
              std::string(fn) + ": the VkBuffer is null");
      refused(cairn_vulkan_tensor_wrap(ctx, e.device, bits(shared.buffer), 0, 1024, CAIRN_STRING, xshape, 2, &t),
              CAIRN_INVALID_ARGUMENT, fn);
      // A buffer of another VkDevice (on the same physical device), as the engine says.
      VkDevice other = e.make_device();
      EngineBuffer foreign = e.make_buffer(other, 1024);
      refused(cairn_vulkan_tensor_wrap(ctx, other, bits(foreign.buffer), 0, 1024, CAIRN_FLOAT32, xshape, 2, &t),
              CAIRN_INVALID_ARGUMENT, std::string(fn) + ": the buffer's VkDevice is not the context's");
      Engine::free_buffer(other, foreign);
      vk::vkDestroyDevice(other, nullptr);
      CHECK(t == nullptr);
      // A CPU tensor has no VkBuffer.
      cairn_context* cpu = nullptr;
      ok(cairn_context_create(nullptr, &cpu));
      cairn_tensor* on_cpu = host_tensor(cpu, x0, {kRows, kCols});
      uint64_t buffer, offset, size;
      refused(cairn_vulkan_tensor_buffer(on_cpu, &buffer, &offset, &size), CAIRN_INVALID_ARGUMENT,
              "cairn_vulkan_tensor_buffer: the tensor is on cpu, not a Vulkan device");
      // Contexts not in external mode have no engine buffers or semaphores.
      refused(cairn_vulkan_tensor_wrap(cpu, e.device, bits(shared.buffer), 0, 1024, CAIRN_FLOAT32, xshape, 2, &t),
              CAIRN_FAILED_PRECONDITION, std::string(fn) + ": the context is not in external mode");
      refused(cairn_vulkan_signal_semaphore(cpu, 1, 1), CAIRN_FAILED_PRECONDITION,
              "cairn_vulkan_signal_semaphore: the context is not in external mode");
      refused(cairn_vulkan_wait_semaphores(ctx, 1, nullptr, nullptr), CAIRN_INVALID_ARGUMENT,
              "cairn_vulkan_wait_semaphores: semaphores is NULL");
      cairn_tensor_free(on_cpu);
      cairn_context_free(cpu);
    }

    cairn_tensor_free(w);
    cairn_tensor_free(b);
    ok(cairn_context_synchronize(ctx));
    cairn_context_free(ctx);  // Cairn's objects on the engine's device go before the device
    Engine::free_buffer(e.device, shared);
    Engine::free_buffer(e.device, readback);
  }  // the engine's device and instance go: leaks of Cairn's objects would be errors now
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);  // Cairn's own instance, where one was made
}

// float16 values 0.5 * (i % 9 - 4) as raw bits (exact in half precision).
std::vector<uint16_t> half_values(size_t n) {
  static const uint16_t kHalf[9] = {0xC000, 0xBE00, 0xBC00, 0xB800, 0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000};
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kHalf[i % 9];
  return v;
}

cairn_tensor* half_tensor(cairn_context* ctx, const std::vector<uint16_t>& v, std::vector<int64_t> shape) {
  cairn_tensor* t = nullptr;
  ok(cairn_tensor_create(ctx, CAIRN_FLOAT16, shape.data(), shape.size(), v.data(), v.size() * 2, &t));
  return t;
}

// MatMul then Add of float16 matrices on `ctx`'s default device; the result's bytes.
std::vector<char> half_model(cairn_context* ctx) {
  cairn_tensor* a = half_tensor(ctx, half_values(6 * 8), {6, 8});
  cairn_tensor* b = half_tensor(ctx, half_values(8 * 3), {8, 3});
  cairn_tensor* mm = run1(ctx, "MatMul", {a, b});
  cairn_tensor* sum = run1(ctx, "Add", {mm, mm});
  std::vector<char> out = bytes_of(sum);
  for (cairn_tensor* t : {a, b, mm, sum}) cairn_tensor_free(t);
  return out;
}

TEST_CASE("float16 in external mode once the engine names its features") {
  g_engine_errors = 0;
  {
    Engine e(/*float16=*/true);
    // Told, before any work: float16 runs, with the bits of Cairn's own Vulkan device.
    cairn_context* ctx = engine_context(e);
    ok(cairn_vulkan_use_engine_features(ctx, &e.features));
    std::vector<char> got = half_model(ctx);
    cairn_context* own = nullptr;
    ok(cairn_context_create_vulkan(nullptr, nullptr, &own));
    CHECK(got == half_model(own));
    cairn_context_free(own);
    ok(cairn_context_synchronize(ctx));
    cairn_context_free(ctx);

    // Not told: 32-bit only; telling after work is refused.
    ctx = engine_context(e);
    cairn_tensor* a = half_tensor(ctx, half_values(4), {4});
    cairn_tensor* out = nullptr;
    cairn_tensor* in[] = {a, a};
    refused(cairn_op_run(ctx, "Add", in, 2, nullptr, 0, &out, 1), CAIRN_UNIMPLEMENTED, "float16");
    refused(cairn_vulkan_use_engine_features(ctx, &e.features), CAIRN_FAILED_PRECONDITION,
            "cairn_vulkan_use_engine_features: device vulkan:0 has already run work");
    VkPhysicalDeviceVulkan12Features not_head{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    refused(cairn_vulkan_use_engine_features(ctx, &not_head), CAIRN_INVALID_ARGUMENT,
            "cairn_vulkan_use_engine_features: features must point at a VkPhysicalDeviceFeatures2");
    cairn_tensor_free(a);
    ok(cairn_context_synchronize(ctx));
    cairn_context_free(ctx);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

}  // namespace
