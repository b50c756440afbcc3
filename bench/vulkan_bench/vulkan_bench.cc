// Vulkan figures on this machine's driver (lavapipe here):
//  - per-op cost of 1,000 small eager Adds, batched, against issue 4's floor: 1,000
//    back-to-back dispatches of the same shader in ONE command buffer recorded before the timed
//    region, submitted and waited once (a barrier between dispatches, as the eager chain has);
//    and submit-and-wait per op for contrast;
//  - MatMul float32 at 512 and 1024, Vulkan and CPU, in GFLOP/s, with the tile configuration;
//  - FFT 4096 x 256 (complex64) on both devices.
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/vulkan_bench/binary_set.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "gpu/vulkan/vulkan_device.h"
#include "gpu/shaders/op_codes.h"
#include "runtime/eager/dispatch.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Tensor filled(Device& d, Shape s, float v) {
  std::vector<float> host(static_cast<size_t>(s.num_elements()), v);
  Tensor t = Tensor::allocate(d, DType::Float32, s);
  d.write(*t.buffer(), host.data(), host.size() * 4);
  return t;
}

// Checks a raw Vulkan call of the floor's own recording.
void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) raise(Code::Internal, "vulkan_bench: {} failed ({})", what, static_cast<int>(r));
}

// The floor: `n` dispatches of binary_f32 (y = x + y, 16 elements) with a barrier between them,
// recorded into one command buffer outside the timed region; the timed region is one submit and
// one fence wait. Returns microseconds per dispatch.
double recorded_floor_us(gpu::VulkanDevice& dev, const Tensor& x, const Tensor& y, int n) {
  using namespace cairn::gpu;
  VkDevice d = dev.vk_device();
  bench::BinarySet bs = bench::make_binary_set(dev, x, y);
  const Pipeline& pl = *bs.pipeline;

  double us = 0;
  // The command pool and queue are the device's: use them while it is locked and idle.
  dev.with_idle_device([&] {
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = dev.vk_command_pool();
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cb;
    check(vkAllocateCommandBuffers(d, &cai, &cb), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0, 1, &bs.set, 0, nullptr);
    vkCmdPushConstants(cb, pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof bs.push, &bs.push);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    for (int i = 0; i < n; ++i) {
      if (i > 0)
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                             nullptr, 0, nullptr);
      vkCmdDispatch(cb, 1, 1, 1);
    }
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    check(vkCreateFence(d, &fi, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    auto t0 = Clock::now();  // the timed region: one submit, one wait
    check(vkQueueSubmit(dev.vk_queue(), 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(d, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    us = seconds_since(t0) / n * 1e6;
    vkDestroyFence(d, fence, nullptr);
    vkFreeCommandBuffers(d, dev.vk_command_pool(), 1, &cb);
  });
  bench::free_binary_set(dev, bs);
  return us;
}

void small_ops(Context& ctx, gpu::VulkanDevice& dev) {
  const int n = 1000;
  Tensor x = filled(dev, Shape{16}, 1.0f);
  // Warm up pipelines.
  run_op(ctx, "Add", {x, x});
  dev.synchronize();

  Tensor y = filled(dev, Shape{16}, 0.0f);
  recorded_floor_us(dev, x, y, n);  // warm-up
  double floor_us = recorded_floor_us(dev, x, y, n);

  auto t0 = Clock::now();
  Tensor acc = x;
  for (int i = 0; i < n; ++i) acc = run_op(ctx, "Add", {acc, x})[0];
  dev.synchronize();
  double batched_us = seconds_since(t0) / n * 1e6;

  t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    acc = run_op(ctx, "Add", {acc, x})[0];
    dev.synchronize();
  }
  double wait_us = seconds_since(t0) / n * 1e6;
  std::printf("small Add (16 floats) x1000: eager batched %.1f us/op; floor (1,000 dispatches pre-recorded in one "
              "command buffer, one submit and wait) %.1f us/dispatch; ratio %.2fx; submit-and-wait per op %.1f us/op\n",
              batched_us, floor_us, batched_us / floor_us, wait_us);
}

void matmul(Context& ctx, gpu::VulkanDevice& dev, int64_t size) {
  Tensor a = filled(dev, Shape{size, size}, 0.5f), b = filled(dev, Shape{size, size}, 0.25f);
  Tensor ac = filled(ctx.cpu(), Shape{size, size}, 0.5f), bc = filled(ctx.cpu(), Shape{size, size}, 0.25f);
  double flops = 2.0 * size * size * size;
  run_op(ctx, "MatMul", {a, b});
  dev.synchronize();
  int reps = size <= 512 ? 5 : 2;
  auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) run_op(ctx, "MatMul", {a, b});
  dev.synchronize();
  double vk = flops * reps / seconds_since(t0) / 1e9;
  run_op(ctx, "MatMul", {ac, bc});
  t0 = Clock::now();
  for (int i = 0; i < reps; ++i) run_op(ctx, "MatMul", {ac, bc});
  double cpu = flops * reps / seconds_since(t0) / 1e9;
  char config[128];
  if (dev.matmul_direct())
    std::snprintf(config, sizeof config, "direct: 64 threads, 16x8 per thread, no shared memory");
  else
    std::snprintf(config, sizeof config, "tiled: 64x64 tile, BK=%u, 16x16 threads, 4x4 per thread", dev.matmul_bk());
  std::printf("MatMul f32 %lldx%lld: vulkan %.2f GFLOP/s (%s), cpu %.2f GFLOP/s\n", static_cast<long long>(size),
              static_cast<long long>(size), vk, config, cpu);
}

// FFT of 256 signals of 4096 points (complex64): kissfft on the CPU; on Vulkan when it has a kernel.
void fft(Context& ctx, gpu::VulkanDevice& dev) {
  Tensor xc = Tensor::allocate(ctx.cpu(), DType::Complex64, Shape{256, 4096});
  auto* p = xc.mutable_data<complex64>();
  for (int64_t i = 0; i < xc.num_elements(); ++i) p[i] = complex64(static_cast<float>(i % 7), static_cast<float>(i % 3));
  run_op(ctx, "FFT", {xc});
  int reps = 5;
  auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) run_op(ctx, "FFT", {xc});
  double cpu_ms = seconds_since(t0) / reps * 1e3;
  std::printf("FFT 4096 x 256 batch (complex64): cpu %.2f ms", cpu_ms);
  try {
    Tensor xv = tensor_on_device(xc, dev);
    run_op(ctx, "FFT", {xv});
    dev.synchronize();
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) run_op(ctx, "FFT", {xv});
    dev.synchronize();
    std::printf(", vulkan %.2f ms\n", seconds_since(t0) / reps * 1e3);
  } catch (const Error& e) {
    std::printf(", vulkan: %s\n", e.what());
  }
}

}  // namespace

int main() {
  ContextOptions o;
  o.device = "vulkan";
  Context ctx(o);
  auto& dev = static_cast<gpu::VulkanDevice&>(ctx.default_device());
  std::printf("device: %s (%s), subgroup %u, mapped transfers: %s\n", dev.info().name.c_str(), dev.info().type.c_str(),
              dev.info().subgroup_size, dev.mapped_transfers() ? "yes" : "no");
  small_ops(ctx, dev);
  matmul(ctx, dev, 512);
  matmul(ctx, dev, 1024);
  fft(ctx, dev);
  return 0;
}
