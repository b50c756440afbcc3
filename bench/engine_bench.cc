// An engine's frame with a Cairn model in it (issue 19): figures, never pass/fail. Run with -c opt.
//
// The "engine" borrows the VkInstance, device and queue of a Cairn context of its own and makes a
// context in external mode over them. The model is an MLP (kLayers x MatMul + Add + Relu, batch
// kBatch, width kWidth), a compiled function captured once (cairn_vulkan_recording_create).
//  1. CPU cost per frame of recording the model into the engine's command buffer
//     (cairn_vulkan_recording_record) against re-recording as many dispatches by hand: a raw loop
//     of bind pipeline, bind descriptor set, push constants, dispatch and a barrier per command,
//     with its descriptor set made beforehand (what an engine's hand-written pass records).
//  2. GPU time of the model inside the engine's frame (timestamp queries around it) against the
//     standalone path (cairn_function_call + cairn_context_synchronize, host wall time, and the
//     in-frame submit-and-wait wall time for comparison).
//  3. Frame budgets (cairn_vulkan_recording_chunk): the nodes' measured GPU times
//     (cairn_vulkan_recording_measure), then for a budget of nodes and one of microseconds, the
//     chunks (one per frame) and each chunk's GPU time in its frame (timestamps around it, median
//     of kChunkCycles) against the budget and against the sum of its nodes' measured times; a
//     third budget, half the largest node's time, shows nodes over the budget alone in their chunks.
#define CAIRN_EXPERIMENTAL
#include "cairn/cairn.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "bench/vulkan_bench/binary_set.h"
#include "capi/internal/handles.h"
#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/vulkan_device.h"

using Clock = std::chrono::steady_clock;
using namespace cairn;
using namespace cairn::gpu;  // the Vulkan functions of the loader

namespace {

constexpr int64_t kBatch = 16, kWidth = 128;
constexpr int kLayers = 4;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void ok(cairn_status* st) {
  if (!st) return;
  std::fprintf(stderr, "engine_bench: %s\n", cairn_status_message(st));
  std::exit(1);
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) {
    std::fprintf(stderr, "engine_bench: %s failed (%d)\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

cairn_tensor* op(cairn_context* ctx, const char* name, std::vector<cairn_tensor*> in, cairn_status** st) {
  cairn_tensor* out = nullptr;
  *st = cairn_op_run(ctx, name, in.data(), in.size(), nullptr, 0, &out, 1);
  return out;
}

// The model: inputs x, then (w, b) per layer; relu(x @ w + b) per layer.
cairn_status* mlp(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_status* st = nullptr;
  cairn_tensor* h = in[0];
  for (int l = 0; l < kLayers; ++l) {
    cairn_tensor* mm = op(ctx, "MatMul", {h, in[1 + 2 * l]}, &st);
    if (st) return st;
    cairn_tensor* biased = op(ctx, "Add", {mm, in[2 + 2 * l]}, &st);
    cairn_tensor_free(mm);
    if (st) return st;
    cairn_tensor* next = op(ctx, "Relu", {biased}, &st);
    cairn_tensor_free(biased);
    if (st) return st;
    if (h != in[0]) cairn_tensor_free(h);
    h = next;
  }
  *out = h;
  return nullptr;
}

cairn_tensor* filled(cairn_context* ctx, std::vector<int64_t> shape, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
  cairn_tensor* t = nullptr;
  ok(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape.data(), shape.size(), v.data(), v.size() * 4, &t));
  return t;
}

struct Frame {
  VkDevice device;
  VkQueue queue;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  double tick_ns = 1;

  explicit Frame(gpu::VulkanDevice& d) : device(d.vk_device()), queue(d.vk_queue()) {
    VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cp.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    check(vkCreateCommandPool(device, &cp, nullptr, &pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(device, &ai, &cb), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device, &fi, nullptr, &fence), "vkCreateFence");
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    check(vkCreateQueryPool(device, &qi, nullptr, &queries), "vkCreateQueryPool");
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(d.vk_physical_device(), &props);
    tick_ns = props.limits.timestampPeriod;
  }
  ~Frame() {
    vkDestroyQueryPool(device, queries, nullptr);
    vkDestroyFence(device, fence, nullptr);
    vkDestroyCommandPool(device, pool, nullptr);
  }
  void begin() {
    // Begin resets it (the pool has VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT).
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  }
  void submit_and_wait() {
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check(vkResetFences(device, 1, &fence), "vkResetFences");
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(device, 1, &fence, VK_TRUE, 60'000'000'000ull), "vkWaitForFences");
  }
};

// The peer of section 1: `n` dispatches recorded by hand, each with its bind, push and barrier
// (binary_f32 on 16 floats, one descriptor set made beforehand). Returns the seconds of `frames`
// frames of recording (reset, begin, the commands, end).
double hand_recording_s(gpu::VulkanDevice& dev, Frame& frame, const Tensor& x, const Tensor& y, size_t n, int frames) {
  bench::BinarySet bs = bench::make_binary_set(dev, x, y);
  const Pipeline& pl = *bs.pipeline;
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  auto t0 = Clock::now();
  for (int f = 0; f < frames; ++f) {
    frame.begin();
    for (size_t i = 0; i < n; ++i) {
      vkCmdPipelineBarrier(frame.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                           &mb, 0, nullptr, 0, nullptr);
      vkCmdBindPipeline(frame.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline);
      vkCmdBindDescriptorSets(frame.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0, 1, &bs.set, 0, nullptr);
      vkCmdPushConstants(frame.cb, pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof bs.push, &bs.push);
      vkCmdDispatch(frame.cb, 1, 1, 1);
    }
    check(vkEndCommandBuffer(frame.cb), "vkEndCommandBuffer");
  }
  const double s = seconds_since(t0);
  bench::free_binary_set(dev, bs);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A chunk's GPU time in its own frame: timestamps around cairn_vulkan_recording_record.
double chunk_gpu_us(Frame& frame, const cairn_vulkan_recording* rec, size_t first, size_t commands) {
  frame.begin();
  vkCmdResetQueryPool(frame.cb, frame.queries, 0, 2);
  vkCmdWriteTimestamp(frame.cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, frame.queries, 0);
  ok(cairn_vulkan_recording_record(rec, frame.cb, first, commands, nullptr));
  vkCmdWriteTimestamp(frame.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, frame.queries, 1);
  frame.submit_and_wait();
  uint64_t ticks[2] = {0, 0};
  check(vkGetQueryPoolResults(frame.device, frame.queries, 0, 2, sizeof ticks, ticks, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return static_cast<double>(ticks[1] - ticks[0]) * frame.tick_ns / 1000;
}

// Section 3 for one budget: the chunks, one per frame, each with its nodes, the sum of their
// measured times and its GPU time in its frame.
void report_budget(Frame& frame, const cairn_vulkan_recording* rec, cairn_vulkan_budget kind, uint64_t budget) {
  constexpr int kChunkCycles = 20;
  struct Chunk {
    size_t first = 0, commands = 0, nodes = 0;
    double measured_us = 0;
    std::vector<double> frame_us;
  };
  std::vector<Chunk> chunks;
  size_t first = 0, node = 0;
  do {
    Chunk c;
    c.first = first;
    ok(cairn_vulkan_recording_chunk(rec, kind, budget, first, &c.commands));
    for (size_t covered = 0; covered < c.commands; ++node, ++c.nodes) {
      size_t commands = 0;
      uint64_t ns = 0;
      ok(cairn_vulkan_recording_node(rec, node, nullptr, nullptr, &commands, &ns));
      covered += commands;
      c.measured_us += static_cast<double>(ns) / 1000;
    }
    first = first + c.commands == cairn_vulkan_recording_size(rec) ? 0 : first + c.commands;
    chunks.push_back(std::move(c));
  } while (first != 0);
  for (int i = 0; i < kChunkCycles; ++i)
    for (Chunk& c : chunks) c.frame_us.push_back(chunk_gpu_us(frame, rec, c.first, c.commands));
  const bool nodes = kind == CAIRN_VULKAN_BUDGET_NODES;
  std::printf("   budget %llu %s: %zu chunks (one per frame); per chunk: nodes, measured sum, GPU time in its frame "
              "(median of %d)\n",
              static_cast<unsigned long long>(budget), nodes ? "nodes" : "us", chunks.size(), kChunkCycles);
  for (size_t k = 0; k < chunks.size(); ++k) {
    const Chunk& c = chunks[k];
    const bool over = !nodes && c.measured_us > static_cast<double>(budget);
    std::printf("     chunk %zu: %zu nodes, %.1f us measured, %.1f us in frame%s\n", k, c.nodes, c.measured_us,
                median(c.frame_us), over ? " (one node over the budget: a chunk of its own)" : "");
  }
}

}  // namespace

int main() {
  if (!cairn_vulkan_available()) {
    std::printf("engine_bench: no Vulkan device; skipped\n");
    return 0;
  }
  // The engine: a Vulkan device (Cairn's own context made it), borrowed in external mode.
  cairn_context* own = nullptr;
  ok(cairn_context_create_vulkan(nullptr, nullptr, &own));
  auto& owned = gpu::vulkan(own->ctx->device("vulkan"));
  cairn_vulkan_options vo = CAIRN_VULKAN_OPTIONS_INIT;
  vo.instance = gpu::Instance::shared()->handle();
  vo.physical_device = owned.vk_physical_device();
  vo.device = owned.vk_device();
  vo.queue = owned.vk_queue();
  cairn_context* ctx = nullptr;
  ok(cairn_context_create_vulkan(nullptr, &vo, &ctx));
  auto& dev = gpu::vulkan(ctx->ctx->device("vulkan"));

  std::vector<cairn_tensor*> in{filled(ctx, {kBatch, kWidth}, 0.1f)};
  for (int l = 0; l < kLayers; ++l) {
    in.push_back(filled(ctx, {kWidth, kWidth}, 0.01f));
    in.push_back(filled(ctx, {kWidth}, 0.05f));
  }
  cairn_tensor* y = filled(ctx, {kBatch, kWidth}, 0);
  cairn_function* f = nullptr;
  ok(cairn_function_create(ctx, "mlp", mlp, nullptr, nullptr, &f));
  cairn_tensor* warm = nullptr;
  ok(cairn_function_call(f, in.data(), in.size(), &warm, 1));
  cairn_tensor_free(warm);
  cairn_vulkan_recording* rec = nullptr;
  ok(cairn_vulkan_recording_create(ctx, f, in.data(), in.size(), &y, 1, &rec));
  ok(cairn_context_synchronize(ctx));
  const size_t n = cairn_vulkan_recording_size(rec);

  auto frame_objects = std::make_unique<Frame>(dev);  // destroyed before the device (below)
  Frame& frame = *frame_objects;
  constexpr int kFrames = 2000, kRuns = 5;
  // 1. CPU cost of recording.
  std::vector<double> ours_us, hand_us;
  Tensor hx = Tensor::allocate(dev, DType::Float32, Shape{16}), hy = Tensor::allocate(dev, DType::Float32, Shape{16});
  for (int r = 0; r < kRuns; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < kFrames; ++i) {
      frame.begin();
      ok(cairn_vulkan_recording_record(rec, frame.cb, 0, SIZE_MAX, nullptr));
      check(vkEndCommandBuffer(frame.cb), "vkEndCommandBuffer");
    }
    ours_us.push_back(seconds_since(t0) / kFrames * 1e6);
    hand_us.push_back(hand_recording_s(dev, frame, hx, hy, n, kFrames) / kFrames * 1e6);
  }
  std::printf("engine_bench: MLP %d x (MatMul %lldx%lld + Add + Relu), %zu commands\n", kLayers,
              static_cast<long long>(kBatch), static_cast<long long>(kWidth), n);
  std::printf("1. CPU per frame of recording into the engine's command buffer (begin, commands, end; median of "
              "%d runs of %d frames): Cairn %.2f us, by hand (%zu dispatches) %.2f us, ratio %.2fx (runs: Cairn %.2f..%.2f, "
              "hand %.2f..%.2f)\n",
              kRuns, kFrames, median(ours_us), n, median(hand_us), median(ours_us) / median(hand_us),
              *std::min_element(ours_us.begin(), ours_us.end()), *std::max_element(ours_us.begin(), ours_us.end()),
              *std::min_element(hand_us.begin(), hand_us.end()), *std::max_element(hand_us.begin(), hand_us.end()));

  // 2. GPU time inside the frame against standalone.
  constexpr int kGpuFrames = 200;
  std::vector<double> gpu_us, frame_us, standalone_us;
  for (int i = 0; i < kGpuFrames; ++i) {
    frame.begin();
    vkCmdResetQueryPool(frame.cb, frame.queries, 0, 2);
    vkCmdWriteTimestamp(frame.cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, frame.queries, 0);
    ok(cairn_vulkan_recording_record(rec, frame.cb, 0, SIZE_MAX, nullptr));
    vkCmdWriteTimestamp(frame.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, frame.queries, 1);
    auto t0 = Clock::now();
    frame.submit_and_wait();
    frame_us.push_back(seconds_since(t0) * 1e6);
    uint64_t ticks[2] = {0, 0};
    check(vkGetQueryPoolResults(frame.device, frame.queries, 0, 2, sizeof ticks, ticks, sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    gpu_us.push_back(static_cast<double>(ticks[1] - ticks[0]) * frame.tick_ns / 1000);
    t0 = Clock::now();
    cairn_tensor* out = nullptr;
    ok(cairn_function_call(f, in.data(), in.size(), &out, 1));
    ok(cairn_context_synchronize(ctx));
    standalone_us.push_back(seconds_since(t0) * 1e6);
    cairn_tensor_free(out);
  }
  std::printf("2. The model's time (median of %d frames): inside the engine's frame %.1f us GPU (timestamps), %.1f us "
              "submit-and-wait; standalone (cairn_function_call + synchronize) %.1f us; frame/standalone %.2fx\n",
              kGpuFrames, median(gpu_us), median(frame_us), median(standalone_us),
              median(frame_us) / median(standalone_us));

  // 3. Frame budgets.
  ok(cairn_vulkan_recording_measure(rec, 5));
  const size_t num_nodes = cairn_vulkan_recording_node_count(rec);
  double total_us = 0, largest_us = 0;
  std::printf("3. Frame budgets: %zu nodes, measured GPU time (median of 5 runs):", num_nodes);
  for (size_t i = 0; i < num_nodes; ++i) {
    const char* name = nullptr;
    uint64_t ns = 0;
    ok(cairn_vulkan_recording_node(rec, i, &name, nullptr, nullptr, &ns));
    total_us += static_cast<double>(ns) / 1000;
    largest_us = std::max(largest_us, static_cast<double>(ns) / 1000);
    std::printf(" %s %.1f us%s", name, static_cast<double>(ns) / 1000, i + 1 < num_nodes ? "," : "\n");
  }
  report_budget(frame, rec, CAIRN_VULKAN_BUDGET_NODES, 3);
  report_budget(frame, rec, CAIRN_VULKAN_BUDGET_MICROSECONDS, static_cast<uint64_t>(total_us / 3) + 1);
  report_budget(frame, rec, CAIRN_VULKAN_BUDGET_MICROSECONDS, static_cast<uint64_t>(largest_us / 2) + 1);

  cairn_vulkan_recording_free(rec);
  cairn_function_free(f);
  for (cairn_tensor* t : in) cairn_tensor_free(t);
  cairn_tensor_free(y);
  hx = Tensor();
  hy = Tensor();
  ok(cairn_context_synchronize(ctx));
  frame_objects.reset();
  cairn_context_free(ctx);
  cairn_context_free(own);
  return 0;
}
