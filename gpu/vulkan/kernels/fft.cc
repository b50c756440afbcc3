// FFT, IFFT, FFT2D and IFFT2D (complex64) with VkFFT, recorded into the device's batches. Each
// plan owns a buffer of its exact size: the input is copied in, transformed in place, and copied
// to the output. (VkFFT binds its buffers when the plan is built; pointing it at tensors inside
// shared blocks would rewrite descriptor sets that pending commands still use.) Plans (VkFFT compiles its kernels with glslang, ~150 ms) are cached per
// device by (rank, sizes, batch, direction). The real transforms (RFFT, IRFFT and their 2-D forms)
// run the complex ones between passes of fft_real.comp (pack, crop, Hermitian extension, real
// part), so they share the plans.
// VkFFT calls Vulkan functions by their global names; Cairn resolves them at run time (loader.h),
// so the names VkFFT uses are mapped onto Cairn's table before its header is read. Nothing links
// libvulkan, and FFTs work wherever the loader opens.
#include "gpu/vulkan/loader.h"
#define vkAllocateCommandBuffers ::cairn::gpu::vkAllocateCommandBuffers
#define vkAllocateDescriptorSets ::cairn::gpu::vkAllocateDescriptorSets
#define vkAllocateMemory ::cairn::gpu::vkAllocateMemory
#define vkBeginCommandBuffer ::cairn::gpu::vkBeginCommandBuffer
#define vkBindBufferMemory ::cairn::gpu::vkBindBufferMemory
#define vkCmdBindDescriptorSets ::cairn::gpu::vkCmdBindDescriptorSets
#define vkCmdBindPipeline ::cairn::gpu::vkCmdBindPipeline
#define vkCmdCopyBuffer ::cairn::gpu::vkCmdCopyBuffer
#define vkCmdDispatch ::cairn::gpu::vkCmdDispatch
#define vkCmdPipelineBarrier ::cairn::gpu::vkCmdPipelineBarrier
#define vkCmdPushConstants ::cairn::gpu::vkCmdPushConstants
#define vkCreateBuffer ::cairn::gpu::vkCreateBuffer
#define vkCreateComputePipelines ::cairn::gpu::vkCreateComputePipelines
#define vkCreateDescriptorPool ::cairn::gpu::vkCreateDescriptorPool
#define vkCreateDescriptorSetLayout ::cairn::gpu::vkCreateDescriptorSetLayout
#define vkCreatePipelineLayout ::cairn::gpu::vkCreatePipelineLayout
#define vkCreateShaderModule ::cairn::gpu::vkCreateShaderModule
#define vkDestroyBuffer ::cairn::gpu::vkDestroyBuffer
#define vkDestroyDescriptorPool ::cairn::gpu::vkDestroyDescriptorPool
#define vkDestroyDescriptorSetLayout ::cairn::gpu::vkDestroyDescriptorSetLayout
#define vkDestroyPipeline ::cairn::gpu::vkDestroyPipeline
#define vkDestroyPipelineLayout ::cairn::gpu::vkDestroyPipelineLayout
#define vkDestroyShaderModule ::cairn::gpu::vkDestroyShaderModule
#define vkEndCommandBuffer ::cairn::gpu::vkEndCommandBuffer
#define vkFreeCommandBuffers ::cairn::gpu::vkFreeCommandBuffers
#define vkFreeMemory ::cairn::gpu::vkFreeMemory
#define vkGetBufferMemoryRequirements ::cairn::gpu::vkGetBufferMemoryRequirements
#define vkGetPhysicalDeviceMemoryProperties ::cairn::gpu::vkGetPhysicalDeviceMemoryProperties
#define vkGetPhysicalDeviceProperties ::cairn::gpu::vkGetPhysicalDeviceProperties
#define vkMapMemory ::cairn::gpu::vkMapMemory
#define vkQueueSubmit ::cairn::gpu::vkQueueSubmit
#define vkResetFences ::cairn::gpu::vkResetFences
#define vkUnmapMemory ::cairn::gpu::vkUnmapMemory
#define vkUpdateDescriptorSets ::cairn::gpu::vkUpdateDescriptorSets
#define vkWaitForFences ::cairn::gpu::vkWaitForFences
#define VKFFT_BACKEND 0
// Debian's vkFFT.h warns about its own unused variables and a local's address it stores; those are
// not this file's, and a first build should not print them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
#include "gpu/vulkan/vkfft/vkFFT.h"
#pragma GCC diagnostic pop

#include <string>
#include <vector>

#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "gpu/vulkan/vk_error.h"
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

// The code of a VkFFT failure: out of memory is ResourceExhausted, a length VkFFT cannot plan is
// Unimplemented; anything else is a bug (Internal).
Code vkfft_code(VkFFTResult r) {
  switch (r) {
    case VKFFT_ERROR_MALLOC_FAILED:
    case VKFFT_ERROR_FAILED_TO_ALLOCATE:
    case VKFFT_ERROR_FAILED_TO_ALLOCATE_COMMAND_BUFFERS:
    case VKFFT_ERROR_FAILED_TO_CREATE_DESCRIPTOR_POOL:
    case VKFFT_ERROR_FAILED_TO_ALLOCATE_DESCRIPTOR_SETS:
    case VKFFT_ERROR_FAILED_TO_CREATE_BUFFER:
    case VKFFT_ERROR_FAILED_TO_ALLOCATE_MEMORY:
      return Code::ResourceExhausted;
    case VKFFT_ERROR_UNSUPPORTED_RADIX:
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH:
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C:
    case VKFFT_ERROR_UNSUPPORTED_FFT_OMIT:
      return Code::Unimplemented;
    default:
      return Code::Internal;
  }
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
  VkResult fr = vkCreateFence(plan->device, &fi, nullptr, &plan->fence);
  if (fr != VK_SUCCESS) raise(vk_result_code(fr), "{}: vkCreateFence for a VkFFT plan failed: {}", op, vk_result_name(fr));
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
  if (r != VKFFT_SUCCESS)
    raise(vkfft_code(r), "{}: VkFFT plan creation for {} x {} points ({} transforms) failed (VkFFTResult {})", op, rows,
          n0, lines, static_cast<int>(r));
  plan->ready = true;
  return plan;
}

// Records the complex transform of `x` into `y` (complex64, same shape, inner `Rank` dims).
void record_fft(KernelContext& kc, const Tensor& x, const Tensor& y, int rank, bool inverse) {
  VulkanDevice& dev = vulkan(kc.device);
  const Shape& s = x.shape();
  uint64_t n0 = static_cast<uint64_t>(s[s.rank() - 1]);
  uint64_t rows = rank == 2 ? static_cast<uint64_t>(s[s.rank() - 2]) : 1;
  uint64_t lines = static_cast<uint64_t>(product(s, 0, s.rank() - rank));
  if (rank == 2 && (rows == 1 || n0 == 1)) {
    // A transformed dimension of 1 is the identity along it (VkFFT cannot plan one): the 2-D
    // transforms are 1-D ones over the other dimension, which is contiguous in either case, and
    // the inverse's 1 / (rows * n0) is the 1-D one's.
    n0 *= rows;
    rows = 1;
    rank = 1;
  }
  if (n0 * rows <= 1) {  // a 1-point transform is the identity
    if (x.buffer() != y.buffer()) dev.copy(*x.buffer(), 0, *y.buffer(), 0, x.nbytes());
    return;
  }
  std::string key = "vkfft:" + std::to_string(rank) + ":" + std::to_string(n0) + "x" + std::to_string(rows) + ":" +
                    std::to_string(lines) + (inverse ? ":inv" : ":fwd");
  auto& plan = static_cast<FftPlan&>(
      dev.cached(key, [&] { return make_plan(dev, rank, n0, rows, lines, inverse, kc.op()); }));
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
    r = VkFFTAppend(&plan.app, inverse ? 1 : -1, &lp);
  });
  dev.record([&](VkCommandBuffer cb) {
    VkBufferCopy region{0, out_offset, plan.bytes};
    vkCmdCopyBuffer(cb, plan.buffer, out, 1, &region);
  });
  if (r != VKFFT_SUCCESS) raise(vkfft_code(r), "{}: VkFFTAppend failed (VkFFTResult {})", kc.op(), static_cast<int>(r));
}

// VkFFT records on devices Cairn created only; false after falling back (or throwing).
bool vkfft_usable(KernelContext& kc, DType dtype) {
  if (!vulkan(kc.device).external()) return true;
  fallback_or_unimplemented(kc, dtype, "VkFFT needs a device Cairn created");
  return false;
}

template <int Rank, bool Inverse>
void fft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0 || !vkfft_usable(kc, x.dtype())) return;
  record_fft(kc, x, y, Rank, Inverse);
}

// One fft_real.comp pass (see the shader for the modes); shapes are [lines, rows, cols].
void record_real_pass(KernelContext& kc, uint32_t mode, const Tensor& x, const Tensor& y, int64_t rows, int64_t cols,
                      int64_t in_rows, int64_t in_cols) {
  check_indexable(kc, 2 * y.num_elements());
  check_indexable(kc, 2 * x.num_elements());
  FftRealPush p{static_cast<uint32_t>(y.num_elements()), static_cast<uint32_t>(rows), static_cast<uint32_t>(cols),
                static_cast<uint32_t>(in_rows), static_cast<uint32_t>(in_cols)};
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline("fft_real", 2, sizeof(FftRealPush), {mode});
  dev.dispatch(pl, {x.buffer(), y.buffer()}, &p, groups_for(p.total));
}

// The signal's inner dimensions (rows is 1 for 1-D transforms).
void inner_dims(const Shape& s, int rank, int64_t* rows, int64_t* cols) {
  *cols = s[s.rank() - 1];
  *rows = rank == 2 ? s[s.rank() - 2] : 1;
}

// The full-size complex shape for fft_length: the outer dims of `s`, then rows and cols.
Shape full_shape(const Shape& s, int rank, int64_t rows, int64_t cols) {
  Shape out = s;
  if (rank == 2) out.set_dim(s.rank() - 2, rows);
  out.set_dim(s.rank() - 1, cols);
  return out;
}

// RFFT: pack the real signal (cropped or padded) as complex, transform, keep cols / 2 + 1.
template <int Rank>
void rfft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0 || !vkfft_usable(kc, x.dtype())) return;
  std::vector<int64_t> len = kc.attrs.ints("fft_length");
  int64_t rows = Rank == 2 ? len[0] : 1, cols = len[Rank - 1], in_rows, in_cols;
  inner_dims(x.shape(), Rank, &in_rows, &in_cols);
  Tensor full = Tensor::allocate(kc.device, DType::Complex64, full_shape(y.shape(), Rank, rows, cols));
  record_real_pass(kc, FFT_REAL_PACK, x, full, rows, cols, in_rows, in_cols);
  record_fft(kc, full, full, Rank, false);
  record_real_pass(kc, FFT_REAL_CROP, full, y, rows, cols / 2 + 1, rows, cols);
}

// IRFFT: the Hermitian extension of the (cropped or padded) half spectrum, inverse transform,
// real part.
template <int Rank>
void irfft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0 || !vkfft_usable(kc, x.dtype())) return;
  std::vector<int64_t> len = kc.attrs.ints("fft_length");
  int64_t rows = Rank == 2 ? len[0] : 1, cols = len[Rank - 1], in_rows, in_cols;
  inner_dims(x.shape(), Rank, &in_rows, &in_cols);
  Tensor full = Tensor::allocate(kc.device, DType::Complex64, y.shape());
  record_real_pass(kc, FFT_REAL_HERMITIAN, x, full, rows, cols, in_rows, in_cols);
  record_fft(kc, full, full, Rank, true);
  record_real_pass(kc, FFT_REAL_REAL, full, y, rows, cols, rows, cols);
}

}  // namespace

CAIRN_REGISTER_KERNEL("FFT", DeviceKind::Vulkan, (fft_kernel<1, false>));
CAIRN_REGISTER_KERNEL("IFFT", DeviceKind::Vulkan, (fft_kernel<1, true>));
CAIRN_REGISTER_KERNEL("FFT2D", DeviceKind::Vulkan, (fft_kernel<2, false>));
CAIRN_REGISTER_KERNEL("IFFT2D", DeviceKind::Vulkan, (fft_kernel<2, true>));
CAIRN_REGISTER_KERNEL("RFFT", DeviceKind::Vulkan, rfft_kernel<1>);
CAIRN_REGISTER_KERNEL("IRFFT", DeviceKind::Vulkan, irfft_kernel<1>);
CAIRN_REGISTER_KERNEL("RFFT2D", DeviceKind::Vulkan, rfft_kernel<2>);
CAIRN_REGISTER_KERNEL("IRFFT2D", DeviceKind::Vulkan, irfft_kernel<2>);

}  // namespace cairn::gpu
