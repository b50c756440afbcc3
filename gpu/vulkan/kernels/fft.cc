// FFT, IFFT, FFT2D and IFFT2D (complex64) with VkFFT, recorded into the device's batches. Each
// plan owns a buffer of its exact size: the input is copied in, transformed in place, and copied
// to the output. (VkFFT binds its buffers when the plan is built; pointing it at tensors inside
// shared blocks would rewrite descriptor sets that pending commands still use.) Plans (VkFFT compiles its kernels with glslang, ~150 ms) are cached per
// device by (rank, sizes, batch, direction). The real transforms (RFFT, IRFFT and their 2-D forms)
// have no Vulkan kernel yet: they fall back to the CPU when the context allows it.
#define VKFFT_BACKEND 0
#include "gpu/vulkan/vkfft/vkFFT.h"

#include <string>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "runtime/cpu/axis.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

// One VkFFT application. VkFFT keeps pointers to the handles and the size, so they live here.
struct FftPlan final : DeviceCacheEntry {
  VkFFTApplication app{};
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t bytes = 0;
  bool ready = false;
  ~FftPlan() override {
    if (ready) deleteVkFFT(&app);
    if (buffer) vkDestroyBuffer(device, buffer, nullptr);
    if (memory) vkFreeMemory(device, memory, nullptr);
    if (fence) vkDestroyFence(device, fence, nullptr);
  }
};

// The plan's working buffer: device-local memory of exactly `plan.bytes`.
void allocate_buffer(FftPlan& plan, const char* op) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = plan.bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (vkCreateBuffer(plan.device, &bi, nullptr, &plan.buffer) != VK_SUCCESS)
    raise(Code::ResourceExhausted, "{}: cannot create a {}-byte VkFFT buffer", op, plan.bytes);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(plan.device, plan.buffer, &req);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(plan.physical, &mem);
  int type = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount && type < 0; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type = static_cast<int>(i);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = static_cast<uint32_t>(type < 0 ? 0 : type);
  if (vkAllocateMemory(plan.device, &ai, nullptr, &plan.memory) != VK_SUCCESS)
    raise(Code::ResourceExhausted, "{}: cannot allocate {} bytes for a VkFFT plan", op, req.size);
  vkBindBufferMemory(plan.device, plan.buffer, plan.memory, 0);
}

// `lines` transforms of `n0` points (1-D), or `lines` 2-D transforms of rows x n0 points.
std::unique_ptr<DeviceCacheEntry> make_plan(VulkanDevice& dev, int rank, uint64_t n0, uint64_t rows, uint64_t lines,
                                            bool inverse, const char* op) {
  auto plan = std::make_unique<FftPlan>();
  plan->physical = dev.vk_physical_device();
  plan->device = dev.vk_device();
  plan->queue = dev.vk_queue();
  plan->pool = dev.vk_command_pool();
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (vkCreateFence(plan->device, &fi, nullptr, &plan->fence) != VK_SUCCESS)
    raise(Code::Internal, "{}: vkCreateFence for a VkFFT plan failed", op);
  plan->bytes = n0 * rows * lines * sizeof(complex64);
  allocate_buffer(*plan, op);
  VkFFTConfiguration c{};
  c.FFTdim = static_cast<uint64_t>(rank);
  c.size[0] = n0;
  c.size[1] = rank == 2 ? rows : 1;
  c.numberBatches = lines;
  c.physicalDevice = &plan->physical;
  c.device = &plan->device;
  c.queue = &plan->queue;
  c.commandPool = &plan->pool;
  c.fence = &plan->fence;
  c.bufferSize = &plan->bytes;
  c.buffer = &plan->buffer;
  c.normalize = inverse ? 1 : 0; // IFFT divides by the number of points
  c.makeInversePlanOnly = inverse ? 1 : 0;
  c.makeForwardPlanOnly = inverse ? 0 : 1;
  // VkFFT may upload lookup tables through the queue while it initialises: run it on an idle,
  // locked device.
  VkFFTResult r = VKFFT_SUCCESS;
  dev.with_idle_device([&] { r = initializeVkFFT(&plan->app, c); });
  if (r != VKFFT_SUCCESS) raise(Code::Internal, "{}: VkFFT plan creation failed (VkFFTResult {})", op, static_cast<int>(r));
  plan->ready = true;
  return plan;
}

template <int Rank, bool Inverse>
void fft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0) return;
  VulkanDevice& dev = vulkan(kc.device);
  if (dev.external()) return fallback_or_unimplemented(kc, x.dtype(), "VkFFT needs a device Cairn created");
  const Shape& s = x.shape();
  uint64_t n0 = static_cast<uint64_t>(s[s.rank() - 1]);
  uint64_t rows = Rank == 2 ? static_cast<uint64_t>(s[s.rank() - 2]) : 1;
  uint64_t lines = static_cast<uint64_t>(product(s, 0, s.rank() - Rank));
  if (n0 * rows <= 1) {  // a 1-point transform is the identity
    dev.copy(*x.buffer(), 0, *y.buffer(), 0, x.nbytes());
    return;
  }
  std::string key = "vkfft:" + std::to_string(Rank) + ":" + std::to_string(n0) + "x" + std::to_string(rows) + ":" +
                    std::to_string(lines) + (Inverse ? ":inv" : ":fwd");
  auto& plan = static_cast<FftPlan&>(
      dev.cached(key, [&] { return make_plan(dev, Rank, n0, rows, lines, Inverse, kc.op()); }));
  uint64_t in_offset = 0, out_offset = 0;
  VkBuffer in = dev.vk_buffer(*x.buffer(), &in_offset), out = dev.vk_buffer(*y.buffer(), &out_offset);
  VkFFTResult r = VKFFT_SUCCESS;
  // Three commands, each after the device's barrier: copy in, transform, copy out.
  dev.record([&](VkCommandBuffer cb) {
    VkBufferCopy region{in_offset, 0, plan.bytes};
    vkCmdCopyBuffer(cb, in, plan.buffer, 1, &region);
  });
  dev.record([&](VkCommandBuffer cb) {
    VkFFTLaunchParams lp{};
    lp.commandBuffer = &cb;
    r = VkFFTAppend(&plan.app, Inverse ? 1 : -1, &lp);
  });
  dev.record([&](VkCommandBuffer cb) {
    VkBufferCopy region{0, out_offset, plan.bytes};
    vkCmdCopyBuffer(cb, plan.buffer, out, 1, &region);
  });
  if (r != VKFFT_SUCCESS) raise(Code::Internal, "{}: VkFFTAppend failed (VkFFTResult {})", kc.op(), static_cast<int>(r));
}

}  // namespace

CAIRN_REGISTER_KERNEL("FFT", DeviceKind::Vulkan, (fft_kernel<1, false>));
CAIRN_REGISTER_KERNEL("IFFT", DeviceKind::Vulkan, (fft_kernel<1, true>));
CAIRN_REGISTER_KERNEL("FFT2D", DeviceKind::Vulkan, (fft_kernel<2, false>));
CAIRN_REGISTER_KERNEL("IFFT2D", DeviceKind::Vulkan, (fft_kernel<2, true>));

}  // namespace cairn::gpu
