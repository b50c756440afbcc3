// Vulkan figures on this machine's driver (lavapipe here):
//  - per-op cost of 1,000 small eager Adds, batched, against a floor of 1,000 dispatches of the
//    same pipeline recorded straight into the device's batch (no dispatch, validation or
//    allocation), and against submit-and-wait per op;
//  - MatMul float32 at 512 and 1024, Vulkan and CPU, in GFLOP/s, with the tile configuration.
#include <chrono>
#include <cstdio>
#include <vector>

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

void small_ops(Context& ctx, gpu::VulkanDevice& dev) {
  const int n = 1000;
  Tensor x = filled(dev, Shape{16}, 1.0f);
  // Warm up pipelines.
  run_op(ctx, "Add", {x, x});
  dev.synchronize();

  // Floor: the same pipeline, 1,000 dispatches recorded directly, one flush.
  gpu::Pipeline& pl = dev.pipeline("binary_f32", 3, sizeof(gpu::BinaryPush), {BOP_ADD});
  Tensor y = Tensor::allocate(dev, DType::Float32, Shape{16});
  gpu::BinaryPush p{};
  p.n = 16;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) dev.dispatch(pl, {x.buffer(), y.buffer(), y.buffer()}, &p, 1);
  dev.synchronize();
  double floor_us = seconds_since(t0) / n * 1e6;

  t0 = Clock::now();
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
  std::printf("small Add x1000: batched %.1f us/op, floor %.1f us/dispatch (ratio %.2fx), submit-and-wait %.1f us/op\n",
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
