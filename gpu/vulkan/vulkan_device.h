// The Vulkan device: memory (a caching sub-allocator over large blocks), batched command
// recording, and a lazily built pipeline cache. Kernels record dispatches; nothing waits for the
// GPU until the host reads a tensor, a batch reaches its size bound, or synchronize() is called.
#pragma once

#include "gpu/vulkan/loader.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/range_allocator.h"
#include "gpu/vulkan/recording.h"
#include "runtime/core/dtype.h"
#include "runtime/eager/context.h"
#include "runtime/tensor/device.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

struct Block;

// A tensor's memory: a range of one block. Buffer::data points at the VulkanBuffer itself.
struct VulkanBuffer : Buffer {
  Block* block = nullptr;  // null for empty tensors
  uint64_t offset = 0;
  uint64_t size = 0;       // bytes reserved (nbytes rounded up to 4)
  // An engine's VkBuffer range (VulkanDevice::wrap): `block` is this buffer's own, with no memory
  // of Cairn's behind it, and goes with the buffer.
  bool wrapped = false;
};

// A timeline semaphore value of an engine's device (external mode).
struct TimelinePoint {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
};

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t num_buffers = 0;
  uint32_t push_bytes = 0;
};

// State a kernel keeps per device (VkFFT plans), released before the device is destroyed.
struct DeviceCacheEntry {
  virtual ~DeviceCacheEntry() = default;
};

// Bytes a logical device with memory growth off reserves when it is created: its memory limit, or
// without one kReserveFraction of the heap's budget (TensorFlow's default takes nearly all of it).
constexpr double kReserveFraction = 0.9;
uint64_t reservation_bytes(uint64_t memory_limit, uint64_t heap_budget);

struct DeviceStats {
  uint64_t submits = 0;             // vkQueueSubmit calls
  uint64_t dispatches = 0;          // recorded dispatches
  uint64_t memory_allocations = 0;  // vkAllocateMemory calls
  uint64_t buffers = 0;             // tensor buffers allocated (sub-allocations included)
  uint64_t block_bytes = 0;         // device memory held in blocks
  uint64_t live_bytes = 0;          // bytes held by live tensors
  uint64_t pipelines = 0;           // pipelines built
  uint64_t descriptor_sets = 0;     // descriptor sets allocated for Cairn's batches
  uint64_t recordings = 0;          // recordings captured (each made one descriptor pool)
};

class VulkanDevice final : public Device {
 public:
  // One logical device (see LogicalDeviceSpec) with the context's GPU options. Throws Unavailable
  // without a driver.
  static Ref<Device> create(Context& ctx, const LogicalDeviceSpec& spec);
  ~VulkanDevice() override;

  Buffer* allocate(size_t nbytes) override;
  void read(const Buffer& buffer, void* dst, size_t nbytes) override;
  void write(Buffer& buffer, const void* src, size_t nbytes) override;
  void synchronize() override;
  // The driver's budget for the heap this device allocates from, queried now (VK_EXT_memory_budget
  // through sane_heap_budget; the heap's size without the extension). It counts every process's
  // use, this device's blocks included; memory_info() has the device's own.
  uint64_t memory_budget() const override;

  const PhysicalDeviceInfo& info() const { return info_; }
  bool external() const { return external_; }
  bool mapped_transfers() const { return direct_map_; }
  // The compute queue this device submits to (split_queue_index of its logical device).
  uint32_t queue_index() const { return queue_index_; }
  // Memory growth off: the bytes reserved at creation (never released); 0 with growth on.
  uint64_t reserved_bytes() const { return reserved_; }
  // Whether shaders exist for `dtype` on this device (float32, int32; float16 with 16-bit storage).
  bool supports(DType dtype) const;
  bool supports_int8_storage() const { return int8_storage_; }
  bool supports_subgroup_reduce() const { return info_.subgroup_arithmetic; }
  uint32_t matmul_bk() const { return matmul_bk_; }
  // MatMul without shared memory (matmul_direct.comp): on CPU implementations, where barriers
  // are costly; CAIRN_VULKAN_MATMUL=tiled or =direct overrides the choice (tests run both).
  bool matmul_direct() const { return matmul_direct_; }

  // CPU fallback (a context option) and its counter.
  bool cpu_fallback() const { return cpu_fallback_; }
  Device& cpu() { return *cpu_; }
  void count_fallback() { fallbacks_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t fallbacks() const { return fallbacks_.load(std::memory_order_relaxed); }
  DeviceStats stats();

  // The pipeline for `shader` (an embedded variant) with these specialization constants (ids 0..n-1).
  Pipeline& pipeline(const char* shader, uint32_t num_buffers, uint32_t push_bytes,
                     std::initializer_list<uint32_t> spec = {});
  // A pipeline built from SPIR-V made at run time (fused shaders), cached under `key`: `find`
  // returns it or null; `add` builds it (once per key and device).
  Pipeline* find_pipeline(const std::string& key);
  Pipeline& add_pipeline(const std::string& key, const std::vector<uint32_t>& spirv, uint32_t num_buffers,
                         uint32_t push_bytes);
  // The most buffers one dispatch binds: the device's per-stage limit, at most 32.
  uint32_t max_bindings() const;
  // Records one dispatch; buffers bind to bindings 0..n-1. A barrier orders it after all earlier work.
  void dispatch(Pipeline& p, std::initializer_list<const Buffer*> buffers, const void* push, uint32_t groups_x,
                uint32_t groups_y = 1, uint32_t groups_z = 1);
  void dispatch(Pipeline& p, const Buffer* const* buffers, size_t num_buffers, const void* push, uint32_t groups_x,
                uint32_t groups_y = 1, uint32_t groups_z = 1);
  // Records a buffer-to-buffer copy.
  void copy(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset, uint64_t bytes);
  // Records a fill of the whole buffer with a 32-bit pattern (0 zeroes any dtype).
  void fill(const Buffer& dst, uint32_t word);

  // For libraries that record their own commands (VkFFT): the raw handles, a tensor's VkBuffer
  // and byte offset, and recording into the current batch (a barrier orders it after earlier
  // work). `fn` runs with the device locked.
  VkDevice vk_device() const { return device_; }
  VkPhysicalDevice vk_physical_device() const { return physical_; }
  VkQueue vk_queue() const { return queue_; }
  VkCommandPool vk_command_pool() const { return command_pool_; }
  VkBuffer vk_buffer(const Buffer& b, uint64_t* offset) const;
  void record(const std::function<void(VkCommandBuffer)>& fn);

  // External mode (docs/vulkan.md, "Engines"). A tensor of `dtype` and `shape` over the engine's
  // `buffer` at `offset` (its range holds `range` bytes): no copy, no memory counted; Cairn only
  // reads it. Refuses an owned device, a misaligned offset and a range too small, naming `fn`.
  Tensor wrap(VkBuffer buffer, uint64_t offset, uint64_t range, DType dtype, const Shape& shape, const char* fn);
  // Whether timeline semaphores are there: the physical device has them (Vulkan 1.2 or
  // VK_KHR_timeline_semaphore), or, once use_engine_features ran, the engine enabled them.
  bool supports_timeline() const { return timeline_; }
  // The features the engine enabled on its VkDevice: `features2` is the VkPhysicalDeviceFeatures2
  // chain of its VkDeviceCreateInfo. 16-bit storage turns float16 kernels on, 8-bit storage
  // bool/uint8 ones (Vulkan 1.2, as for owned devices). Before the device's first allocation or
  // command only (FailedPrecondition naming `fn` after); InvalidArgument for a chain that does not
  // start with a VkPhysicalDeviceFeatures2.
  void use_engine_features(const void* features2, const char* fn);
  // Work submitted from now on first waits for each point (at its compute and transfer stages);
  // work recorded before is submitted now, without them. Never blocks.
  void wait_semaphores(const std::vector<TimelinePoint>& points, const char* fn);
  // Submits the work recorded so far, with a signal of `point` once it and everything submitted
  // before it has completed. Never blocks (unless all batches are in flight).
  void signal_semaphore(TimelinePoint point, const char* fn);
  // Runs `body` and captures the commands it records on this thread into a Recording (see
  // recording.h) instead of submitting them; other threads' work waits until it returns (the
  // device is locked). Work queued before is submitted first. Work that needs the host in the
  // middle is refused, naming `fn`: a host read of a device tensor (a CPU fallback, a value-dependent
  // shape) and commands recorded by a library (VkFFT). Throws what `body` throws.
  std::unique_ptr<Recording> capture(const std::function<void()>& body, const char* fn);
  // Refuses `what` while this thread captures (FailedPrecondition naming the capture's caller): it
  // needs the host or a command a recording cannot keep. Also for kernels (a CPU fallback): it
  // locks the device, so another thread's capture is waited for, not mistaken for this thread's.
  void refuse_in_capture(const char* what);
  // Runs `fn` with the device locked and idle (nothing queued or in flight).
  void with_idle_device(const std::function<void()>& fn);
  // The cache entry for `key`, made by `make` on first use (device locked).
  DeviceCacheEntry& cached(const std::string& key, const std::function<std::unique_ptr<DeviceCacheEntry>()>& make);

 protected:
  void deallocate(Buffer* buffer) override;

 private:
  friend class Recording;
  // A staging buffer a recording owned (its recording is being destroyed).
  void free_owned(VulkanBuffer* b);
  struct Pool;
  struct Batch;
  VulkanDevice(std::string name);
  void init_owned(Context& ctx, uint32_t index, uint32_t split_index);
  void init_external(const GpuOptions& o);
  // `grow` false: reserve the limit (or reservation_bytes of the budget) before anything else.
  void init_common(const GpuOptions& o, Device& cpu, bool grow);

  // Memory (device_mu_ held): the up-front reservation, and the error past the limit or it.
  void reserve(uint64_t bytes);
  [[noreturn]] void refuse(uint64_t size);

  // Memory (device_mu_ held).
  void allocate_range(Pool& pool, VulkanBuffer& b, uint64_t size);
  void free_range(VulkanBuffer& b);
  void defer_free(VulkanBuffer* b);
  Block* new_block(Pool& pool, uint64_t size);
  void release_empty_blocks(Pool& pool);
  // Pipelines (mu_ held): builds one from SPIR-V words.
  Pipeline& build_pipeline(const std::string& key, const uint32_t* words, size_t bytes, uint32_t num_buffers,
                           uint32_t push_bytes, const std::vector<uint32_t>& spec);

  // Batches (device_mu_ held).
  Batch& recording();
  void barrier(VkCommandBuffer cb);
  void submit(const TimelinePoint* signal = nullptr);
  // Refuses semaphore work on an owned device or without timeline semaphores, naming `fn`.
  void check_timeline(const char* fn) const;
  void wait_batch(Batch& b);
  void wait_all();
  void retire(Batch& b);
  // GPU timestamps (device_mu_ held): see "timestamps" in vulkan_device.cc.
  void init_timestamps();
  void start_timing(Batch& b);
  void stamp(Batch& b, const char* what);
  void collect_timing(Batch& b, int64_t done_ns);

  std::recursive_mutex mu_;
  Ref<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t queue_index_ = 0;
  uint32_t heap_index_ = 0;  // the heap device_pool_'s memory type is in
  uint64_t reserved_ = 0;
  bool external_ = false;
  bool timeline_ = false;
  std::vector<TimelinePoint> pending_waits_;  // for the next submit (device_mu_ held)
  // The recording being captured (mu_ held, so only the capturing thread sees it set).
  Recording* capture_ = nullptr;
  const char* capture_fn_ = "";
  // The capture's first refusal, kept so that the capture fails even when the body caught it.
  std::string capture_refusal_;
  PhysicalDeviceInfo info_;
  bool float16_ = false;
  bool int8_storage_ = false;
  bool direct_map_ = false;
  uint32_t matmul_bk_ = 16;
  bool matmul_direct_ = false;
  uint64_t memory_limit_ = 0;
  bool cpu_fallback_ = false;
  Ref<Device> cpu_;
  std::atomic<uint64_t> fallbacks_{0};

  std::unique_ptr<Pool> device_pool_;
  std::unique_ptr<Pool> staging_pool_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Batch>> batches_;
  size_t next_batch_ = 0;
  Batch* current_ = nullptr;       // the batch being recorded, if any
  Batch* last_submitted_ = nullptr;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  VulkanBuffer dummy_;  // bound in place of empty tensors
  std::unordered_map<std::string, std::unique_ptr<DeviceCacheEntry>> caches_;
  DeviceStats stats_;
  // Timestamps: whether the queue has them, ns per tick, the valid bits, and the calibration of
  // GPU time onto the host clock (host = gpu + offset; bounds from submit and fence times).
  bool timestamps_ = false;
  double timestamp_period_ = 1;
  uint64_t timestamp_mask_ = ~0ull;
  int64_t offset_lo_ = INT64_MIN, offset_hi_ = INT64_MAX;
};

// `device` as a VulkanDevice (the kernel's device).
inline VulkanDevice& vulkan(Device& device) { return static_cast<VulkanDevice&>(device); }

}  // namespace cairn::gpu
