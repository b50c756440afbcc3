#include "gpu/vulkan/vulkan_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "gpu/vulkan/shader_table.h"
#include "gpu/vulkan/vk_error.h"
#include "runtime/core/error.h"
#include "runtime/core/profile_events.h"

namespace cairn::gpu {

namespace {
constexpr uint64_t kBlockSize = 64ull << 20;       // one vkAllocateMemory serves many tensors
constexpr uint32_t kMaxDispatchesPerBatch = 256;   // the batch size bound (descriptor sets per pool)
constexpr uint32_t kMaxBindings = 32;  // fused shaders bind one buffer per input
constexpr size_t kNumBatches = 3;                  // batches in flight while the next records
constexpr uint64_t kFenceTimeoutNs = 60ull * 1000 * 1000 * 1000;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}
}  // namespace

struct Block {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  void* mapped = nullptr;
  RangeAllocator ranges;
  bool reserved = false;  // memory growth off: part of the reservation, never released
  explicit Block(uint64_t capacity) : ranges(capacity) {}
};

struct VulkanDevice::Pool {
  uint32_t memory_type = 0;
  bool mappable = false;
  bool counts_against_limit = true;
  std::vector<std::unique_ptr<Block>> blocks;
};

constexpr uint32_t kMaxTimestamps = 2 * kMaxDispatchesPerBatch;  // per batch (copies add to dispatches)

struct VulkanDevice::Batch {
  VkCommandBuffer cb = VK_NULL_HANDLE;
  // Profiling: timestamp 0 at the batch's start, then one after each command, labelled.
  VkQueryPool queries = VK_NULL_HANDLE;
  bool timed = false;
  uint32_t stamps = 0;
  std::vector<std::string> labels;  // labels[i]: the command ending at timestamp i + 1
  int64_t submit_ns = 0;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  uint32_t dispatches = 0;
  bool in_flight = false;
  std::vector<VulkanBuffer*> frees;  // memory returned once this batch has completed
};

uint64_t reservation_bytes(uint64_t memory_limit, uint64_t heap_budget) {
  if (memory_limit) return memory_limit;
  return static_cast<uint64_t>(static_cast<double>(heap_budget) * kReserveFraction) & ~uint64_t{255};
}

VulkanDevice::VulkanDevice(std::string name) : Device(DeviceKind::Vulkan, std::move(name)) {}

Ref<Device> VulkanDevice::create(Context& ctx, const LogicalDeviceSpec& spec) {
  const GpuOptions& o = ctx.gpu_options();
  bool external = o.vk_device != nullptr;
  if (external && (!o.vk_instance || !o.vk_physical_device || !o.vk_queue))
    raise(Code::InvalidArgument,
          "vulkan: external mode needs VkInstance, VkPhysicalDevice, VkDevice and VkQueue together");
  if (external && spec.split_count > 1)
    raise(Code::FailedPrecondition, "{}: an engine's own VkDevice cannot be split into logical devices", spec.name);
  std::string name = spec.name;
  if (external) {
    // The engine's device keeps the name of its physical device's index.
    Ref<Instance> borrowed = Instance::borrow(static_cast<VkInstance>(o.vk_instance));
    auto all = borrowed->physical_devices();
    auto it = std::find(all.begin(), all.end(), static_cast<VkPhysicalDevice>(o.vk_physical_device));
    name = "vulkan:" + std::to_string(it == all.end() ? 0 : it - all.begin());
  }
  Ref<VulkanDevice> d = Ref<VulkanDevice>::adopt(new VulkanDevice(name));
  if (external)
    d->init_external(o);
  else
    d->init_owned(ctx, spec.physical_index, spec.split_index);
  GpuOptions limited = o;
  if (spec.memory_limit) limited.memory_limit = spec.memory_limit;
  d->init_common(limited, ctx.cpu(), spec.memory_growth);
  return Ref<Device>(d);
}

void VulkanDevice::init_owned(Context&, uint32_t index, uint32_t split_index) {
  instance_ = Instance::shared();
  physical_ = instance_->physical_devices().at(index);
  info_ = describe(physical_, index);

  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  bool found = false;
  for (uint32_t i = 0; i < n && !found; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) queue_family_ = i, found = true;
  if (!found) raise(Code::Unavailable, "{}: {} has no compute queue", name(), info_.name);

  // Logical devices of a split device spread over the family's queues (each is its own VkDevice;
  // where the family has one queue, as lavapipe's, they all use queue 0 of their own device).
  queue_index_ = split_queue_index(split_index, families[queue_family_].queueCount);
  std::vector<float> priorities(queue_index_ + 1, 1.0f);
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = queue_family_;
  q.queueCount = queue_index_ + 1;
  q.pQueuePriorities = priorities.data();
  // Enable 16- and 8-bit storage where the device has them (float16 and bool/int8 tensors).
  VkPhysicalDevice16BitStorageFeatures f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  f16.storageBuffer16BitAccess = info_.float16_storage;
  VkPhysicalDevice8BitStorageFeatures f8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  f8.storageBuffer8BitAccess = info_.int8_storage && info_.api_version >= VK_API_VERSION_1_2;
  f16.pNext = &f8;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &f16;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &q;
  vk_check(vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family_, queue_index_, &queue_);
  float16_ = info_.float16_storage;
  int8_storage_ = f8.storageBuffer8BitAccess;
}

void VulkanDevice::init_external(const GpuOptions& o) {
  external_ = true;
  instance_ = Instance::borrow(static_cast<VkInstance>(o.vk_instance));
  physical_ = static_cast<VkPhysicalDevice>(o.vk_physical_device);
  device_ = static_cast<VkDevice>(o.vk_device);
  queue_ = static_cast<VkQueue>(o.vk_queue);
  queue_family_ = o.vk_queue_family;
  info_ = describe(physical_, 0);
  // Cairn cannot see which features the engine enabled: stay on 32-bit storage until the engine
  // says (use_engine_features).
  float16_ = false;
  int8_storage_ = false;
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &timeline;
  vkGetPhysicalDeviceFeatures2(physical_, &features);
  timeline_ = timeline.timelineSemaphore == VK_TRUE;
}

void VulkanDevice::init_common(const GpuOptions& o, Device& cpu, bool grow) {
  memory_limit_ = o.memory_limit;
  cpu_fallback_ = o.cpu_fallback;
  cpu_ = Ref<Device>::share(&cpu);
  // BK: the K slice of the matmul tile; two BK x 65 float tiles must fit in shared memory.
  matmul_bk_ = info_.max_shared_memory >= 2 * 32 * 65 * 4 ? 32 : 16;
  const char* mm = std::getenv("CAIRN_VULKAN_MATMUL");
  matmul_direct_ = mm && *mm ? std::strcmp(mm, "direct") == 0 : info_.type == "cpu";

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  auto find_type = [&](VkMemoryPropertyFlags want) -> int {
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
      if ((mem.memoryTypes[i].propertyFlags & want) == want) return static_cast<int>(i);
    return -1;
  };
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int both = find_type(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
  int local = find_type(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  int staging = find_type(host);
  if (staging < 0) raise(Code::Unavailable, "{}: no host-visible coherent memory type", name());
  device_pool_ = std::make_unique<Pool>();
  staging_pool_ = std::make_unique<Pool>();
  // Host-visible device memory (lavapipe, integrated GPUs): map it and skip staging.
  // CAIRN_VULKAN_FORCE_STAGING=1 takes the discrete-GPU path anyway (tests use it).
  direct_map_ = both >= 0 && !env_flag("CAIRN_VULKAN_FORCE_STAGING");
  device_pool_->memory_type = static_cast<uint32_t>(direct_map_ ? both : (local >= 0 ? local : staging));
  device_pool_->mappable = direct_map_;
  staging_pool_->memory_type = static_cast<uint32_t>(staging);
  staging_pool_->mappable = true;
  staging_pool_->counts_against_limit = false;
  heap_index_ = mem.memoryTypes[device_pool_->memory_type].heapIndex;

  VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cp.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cp.queueFamilyIndex = queue_family_;
  vk_check(vkCreateCommandPool(device_, &cp, nullptr, &command_pool_), "vkCreateCommandPool");
  for (size_t i = 0; i < kNumBatches; ++i) {
    auto b = std::make_unique<Batch>();
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(device_, &ai, &b->cb), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_check(vkCreateFence(device_, &fi, nullptr, &b->fence), "vkCreateFence");
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxDispatchesPerBatch * kMaxBindings};
    VkDescriptorPoolCreateInfo dp{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = kMaxDispatchesPerBatch;
    dp.poolSizeCount = 1;
    dp.pPoolSizes = &size;
    vk_check(vkCreateDescriptorPool(device_, &dp, nullptr, &b->descriptors), "vkCreateDescriptorPool");
    batches_.push_back(std::move(b));
  }
  init_timestamps();
  VkPipelineCacheCreateInfo pc{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  vk_check(vkCreatePipelineCache(device_, &pc, nullptr, &pipeline_cache_), "vkCreatePipelineCache");

  // A small buffer bound where a kernel's tensor is empty (bindings cannot have range 0).
  dummy_.device = this;
  dummy_.nbytes = 16;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!grow) reserve(reservation_bytes(memory_limit_, memory_budget()));
  // memory_info() reports the limit; the pool enforces it (allocate_range) before the base counts.
  set_memory_limit(reserved_ ? reserved_ : memory_limit_);
  allocate_range(*device_pool_, dummy_, 16);
}

VulkanDevice::~VulkanDevice() {
  if (!device_) return;
  prof::remove_flush_hook(this);
  try {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    wait_all();
  } catch (...) {
    // A lost device cannot finish its work; destroy what we own anyway.
  }
  vkDeviceWaitIdle(device_);
  caches_.clear();  // VkFFT plans hold pipelines and buffers of this device
  for (auto& [key, p] : pipelines_) {
    vkDestroyPipeline(device_, p->pipeline, nullptr);
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
  }
  if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  for (auto& b : batches_) {
    vkDestroyFence(device_, b->fence, nullptr);
    if (b->queries) vkDestroyQueryPool(device_, b->queries, nullptr);
    vkDestroyDescriptorPool(device_, b->descriptors, nullptr);
  }
  if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
  for (Pool* pool : {device_pool_.get(), staging_pool_.get()}) {
    if (!pool) continue;
    for (auto& blk : pool->blocks) {
      vkDestroyBuffer(device_, blk->buffer, nullptr);
      vkFreeMemory(device_, blk->memory, nullptr);
    }
  }
  if (!external_) vkDestroyDevice(device_, nullptr);
}

bool VulkanDevice::supports(DType dtype) const {
  return dtype == DType::Float32 || dtype == DType::Int32 || (dtype == DType::Float16 && float16_);
}

uint64_t VulkanDevice::memory_budget() const {
  std::vector<HeapInfo> heaps = query_heaps(physical_, info_.memory_budget);
  return heap_index_ < heaps.size() ? heaps[heap_index_].budget : 0;
}

DeviceStats VulkanDevice::stats() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return stats_;
}

// ---- memory --------------------------------------------------------------------------------

Block* VulkanDevice::new_block(Pool& pool, uint64_t size) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  auto blk = std::make_unique<Block>(size);
  vk_check(vkCreateBuffer(device_, &bi, nullptr, &blk->buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, blk->buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = pool.memory_type;
  VkResult r = vkAllocateMemory(device_, &ai, nullptr, &blk->memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, blk->buffer, nullptr);
    raise(vk_result_code(r), "{}: vkAllocateMemory of {} bytes failed: {}", name(), req.size, vk_result_name(r));
  }
  vk_check(vkBindBufferMemory(device_, blk->buffer, blk->memory, 0), "vkBindBufferMemory");
  if (pool.mappable) vk_check(vkMapMemory(device_, blk->memory, 0, VK_WHOLE_SIZE, 0, &blk->mapped), "vkMapMemory");
  ++stats_.memory_allocations;
  if (pool.counts_against_limit) stats_.block_bytes += size;
  pool.blocks.push_back(std::move(blk));
  return pool.blocks.back().get();
}

void VulkanDevice::reserve(uint64_t bytes) {
  // Blocks as large as one allocation may be (a tensor must fit in one block).
  uint64_t chunk = std::max(kBlockSize, info_.max_storage_buffer_range);
  if (info_.max_allocation) chunk = std::min(chunk, info_.max_allocation);
  try {
    for (uint64_t left = bytes; left > 0;) {
      const uint64_t n = std::min(left, chunk);
      new_block(*device_pool_, n)->reserved = true;
      left -= n;
    }
  } catch (const Error& e) {
    // The blocks made so far go with the device (its destructor frees them).
    raise(Code::ResourceExhausted,
          "{}: memory growth is off, and reserving {} bytes up front failed ({}); lower the logical device's "
          "memory_limit or turn memory growth on",
          name(), bytes, e.message());
  }
  reserved_ = bytes;
}

void VulkanDevice::refuse(uint64_t size) {
  const uint64_t cap = reserved_ ? reserved_ : memory_limit_;
  const uint64_t live = stats_.live_bytes;
  // Tensors' bytes fit, the blocks' free ranges do not: alignment and holes between tensors.
  std::string fragmented = live + size <= cap ? ", the free memory being in pieces too small" : "";
  if (reserved_)
    raise(Code::ResourceExhausted,
          "{}: allocating {} bytes does not fit in the {} bytes reserved when the device was created (memory growth "
          "is off; {} bytes held by tensors{}); free tensors, raise the logical device's memory_limit, or turn "
          "memory growth on",
          name(), size, cap, live, fragmented);
  raise(Code::ResourceExhausted,
        "{}: allocating {} bytes exceeds the memory limit of {} bytes ({} bytes held by tensors{}); "
        "raise the logical device's memory_limit or free tensors",
        name(), size, cap, live, fragmented);
}

void VulkanDevice::release_empty_blocks(Pool& pool) {
  auto& blocks = pool.blocks;
  for (auto it = blocks.begin(); it != blocks.end();) {
    Block* blk = it->get();
    if (!blk->ranges.empty() || blk == dummy_.block || blk->reserved) {
      ++it;
      continue;
    }
    vkDestroyBuffer(device_, blk->buffer, nullptr);
    vkFreeMemory(device_, blk->memory, nullptr);
    if (pool.counts_against_limit) stats_.block_bytes -= blk->ranges.capacity();
    it = blocks.erase(it);
  }
}

void VulkanDevice::allocate_range(Pool& pool, VulkanBuffer& b, uint64_t size) {
  uint64_t align = std::max<uint64_t>(info_.min_storage_offset_alignment, 64);
  if (size > info_.max_storage_buffer_range)
    raise(Code::ResourceExhausted, "{}: a tensor of {} bytes exceeds the device's maxStorageBufferRange ({} bytes)",
          name(), size, info_.max_storage_buffer_range);
  auto place = [&]() -> bool {
    for (auto& blk : pool.blocks)
      if (auto off = blk->ranges.allocate(size, align)) {
        b.block = blk.get();
        b.offset = *off;
        b.size = size;
        return true;
      }
    return false;
  };
  if (place()) return;
  if (reserved_ && pool.counts_against_limit) {
    // Memory growth off: the reservation is all there is. Frees waiting on finished work first.
    wait_all();
    if (place()) return;
    refuse(size);
  }
  uint64_t block_size = std::max(size, kBlockSize);
  if (memory_limit_ && pool.counts_against_limit) {
    if (stats_.block_bytes + block_size > memory_limit_) block_size = std::max(size, memory_limit_ - std::min(memory_limit_, stats_.block_bytes));
    if (stats_.block_bytes + block_size > memory_limit_) {
      // Memory freed by finished work may be waiting: take it back, drop empty blocks, retry.
      wait_all();
      if (place()) return;
      release_empty_blocks(pool);
      block_size = std::max(size, memory_limit_ - std::min(memory_limit_, stats_.block_bytes));
      if (stats_.block_bytes + block_size > memory_limit_) refuse(size);
    }
  }
  Block* blk = new_block(pool, block_size);
  auto off = blk->ranges.allocate(size, align);
  b.block = blk;
  b.offset = *off;
  b.size = size;
}

Buffer* VulkanDevice::allocate(size_t nbytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto* b = new VulkanBuffer();
  b->device = this;
  b->nbytes = nbytes;
  b->data = b;
  ++stats_.buffers;
  if (nbytes > 0) {
    try {
      allocate_range(*device_pool_, *b, (nbytes + 3) & ~size_t{3});
      // The base's limit is the pool's: tensors' bytes never pass the blocks' bytes, which the
      // pool kept within it, so this cannot refuse what the pool allowed (one error, the pool's).
      try {
        count_allocation(b->size);
      } catch (...) {
        free_range(*b);
        throw;
      }
    } catch (...) {
      delete b;
      throw;
    }
    stats_.live_bytes += b->size;
  }
  retain();  // the buffer keeps its device alive
  return b;
}

void VulkanDevice::free_range(VulkanBuffer& b) {
  if (b.wrapped)
    delete b.block;  // the engine's VkBuffer stays; only Cairn's record of it goes
  else if (b.block)
    b.block->ranges.free(b.offset, b.size);
  b.block = nullptr;
}

void VulkanDevice::defer_free(VulkanBuffer* b) {
  // Queued work may still read the memory: return it when the newest batch has completed.
  Batch* owner = current_ ? current_ : (last_submitted_ && last_submitted_->in_flight ? last_submitted_ : nullptr);
  if (owner) {
    owner->frees.push_back(b);
  } else {
    free_range(*b);
    delete b;
  }
}

void VulkanDevice::deallocate(Buffer* buffer) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto* b = static_cast<VulkanBuffer*>(buffer);
  if (b->block && !b->wrapped) {
    stats_.live_bytes -= b->size;
    count_free(b->size);
  }
  defer_free(b);
}

void VulkanDevice::write(Buffer& buffer, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto& b = static_cast<VulkanBuffer&>(buffer);
  if (nbytes > b.nbytes) raise(Code::Internal, "{}: write of {} bytes into a {}-byte buffer", name(), nbytes, b.nbytes);
  if (b.block->mapped) {
    // Fresh memory is never in use by queued work (frees wait for their batch), so copy now.
    std::memcpy(static_cast<char*>(b.block->mapped) + b.offset, src, nbytes);
    return;
  }
  auto* staging = new VulkanBuffer();
  staging->device = this;
  staging->nbytes = nbytes;
  allocate_range(*staging_pool_, *staging, (nbytes + 3) & ~size_t{3});
  std::memcpy(static_cast<char*>(staging->block->mapped) + staging->offset, src, nbytes);
  if (capture_) {  // the upload is part of the recording, which keeps its source
    capture_->own(staging);
    return capture_->add_copy(*staging, 0, b, 0, staging->size, /*hold_src=*/false);
  }
  copy(*staging, 0, b, 0, staging->size);
  current_->frees.push_back(staging);
}

void VulkanDevice::read(const Buffer& buffer, void* dst, size_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const auto& b = static_cast<const VulkanBuffer&>(buffer);
  if (nbytes > b.nbytes) raise(Code::Internal, "{}: read of {} bytes from a {}-byte buffer", name(), nbytes, b.nbytes);
  refuse_in_capture("reading a tensor's values on the host (a CPU fallback or a shape that depends on values)");
  if (b.block->mapped) {  // not an engine's buffer (wrapped), which Cairn cannot map
    wait_all();
    std::memcpy(dst, static_cast<const char*>(b.block->mapped) + b.offset, nbytes);
    return;
  }
  VulkanBuffer staging;
  staging.device = this;
  staging.nbytes = nbytes;
  allocate_range(*staging_pool_, staging, (nbytes + 3) & ~size_t{3});
  copy(b, 0, staging, 0, staging.size);
  try {
    wait_all();
  } catch (...) {
    free_range(staging);
    throw;
  }
  std::memcpy(dst, static_cast<const char*>(staging.block->mapped) + staging.offset, nbytes);
  free_range(staging);
}

void VulkanDevice::synchronize() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  refuse_in_capture("waiting for the device");
  wait_all();
}

// ---- batches --------------------------------------------------------------------------------

VulkanDevice::Batch& VulkanDevice::recording() {
  if (current_) {
    if (current_->dispatches < kMaxDispatchesPerBatch) return *current_;
    submit();  // the size bound
  }
  Batch& b = *batches_[next_batch_];
  next_batch_ = (next_batch_ + 1) % batches_.size();
  if (b.in_flight) wait_batch(b);
  vk_check(vkResetDescriptorPool(device_, b.descriptors, 0), "vkResetDescriptorPool");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(b.cb, &bi), "vkBeginCommandBuffer");
  b.dispatches = 0;
  b.timed = false;
  if (prof::on()) start_timing(b);
  current_ = &b;
  return b;
}

void VulkanDevice::barrier(VkCommandBuffer cb) {
  // Every command reads what earlier commands (in this or earlier batches) wrote: one global
  // memory barrier between compute and transfer work keeps the order without tracking buffers.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cb, stages | VK_PIPELINE_STAGE_HOST_BIT, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void VulkanDevice::submit(const TimelinePoint* signal) {
  if (!current_) return;
  Batch& b = *current_;
  current_ = nullptr;
  // After the last command: make device writes visible to the host for mapped reads.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(b.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  vk_check(vkEndCommandBuffer(b.cb), "vkEndCommandBuffer");
  vk_check(vkResetFences(device_, 1, &b.fence), "vkResetFences");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &b.cb;
  // An engine's semaphores (external mode): waits before this batch (and, by the barrier before
  // every command, everything after it), a signal after it and everything before it.
  std::vector<VkSemaphore> wait_sems;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const TimelinePoint& p : pending_waits_) {
    wait_sems.push_back(p.semaphore);
    wait_values.push_back(p.value);
    wait_stages.push_back(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT);
  }
  pending_waits_.clear();
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  if (!wait_sems.empty() || signal) {
    timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
    timeline.pWaitSemaphoreValues = wait_values.data();
    timeline.signalSemaphoreValueCount = signal ? 1 : 0;
    timeline.pSignalSemaphoreValues = signal ? &signal->value : nullptr;
    si.pNext = &timeline;
    si.waitSemaphoreCount = static_cast<uint32_t>(wait_sems.size());
    si.pWaitSemaphores = wait_sems.data();
    si.pWaitDstStageMask = wait_stages.data();
    si.signalSemaphoreCount = signal ? 1 : 0;
    si.pSignalSemaphores = signal ? &signal->semaphore : nullptr;
  }
  if (b.timed) b.submit_ns = prof::now_ns();
  vk_check(vkQueueSubmit(queue_, 1, &si, b.fence), "vkQueueSubmit");
  b.in_flight = true;
  last_submitted_ = &b;
  ++stats_.submits;
}

void VulkanDevice::wait_batch(Batch& b) {
  if (!b.in_flight) return;
  VkResult r = vkWaitForFences(device_, 1, &b.fence, VK_TRUE, kFenceTimeoutNs);
  if (r == VK_TIMEOUT)
    raise(Code::DeadlineExceeded, "{}: queued work did not finish within {} s", name(), kFenceTimeoutNs / 1000000000);
  if (r == VK_ERROR_DEVICE_LOST) raise(Code::Internal, "{}: the Vulkan device was lost", name());
  vk_check(r, "vkWaitForFences");
  b.in_flight = false;
  if (b.timed) collect_timing(b, prof::now_ns());
  retire(b);
}

void VulkanDevice::retire(Batch& b) {
  for (VulkanBuffer* f : b.frees) {
    free_range(*f);
    delete f;
  }
  b.frees.clear();
}

void VulkanDevice::wait_all() {
  submit();
  // Wait in submission order: the oldest batch follows the one being recorded next.
  for (size_t i = 0; i < batches_.size(); ++i) wait_batch(*batches_[(next_batch_ + i) % batches_.size()]);
}

// ---- pipelines and recording ---------------------------------------------------------------

Pipeline& VulkanDevice::pipeline(const char* shader, uint32_t num_buffers, uint32_t push_bytes,
                                 std::initializer_list<uint32_t> spec) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::string key(shader);
  for (uint32_t v : spec) key += ":" + std::to_string(v);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;

  const ShaderBinary* bin = find_shader(shader);
  if (!bin) raise(Code::Internal, "{}: no embedded shader named {}", name(), shader);
  return build_pipeline(key, bin->words, bin->bytes, num_buffers, push_bytes, std::vector<uint32_t>(spec));
}

Pipeline* VulkanDevice::find_pipeline(const std::string& key) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = pipelines_.find(key);
  return it == pipelines_.end() ? nullptr : it->second.get();
}

Pipeline& VulkanDevice::add_pipeline(const std::string& key, const std::vector<uint32_t>& spirv,
                                     uint32_t num_buffers, uint32_t push_bytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (Pipeline* p = find_pipeline(key)) return *p;
  return build_pipeline(key, spirv.data(), spirv.size() * 4, num_buffers, push_bytes, {});
}

uint32_t VulkanDevice::max_bindings() const { return std::min(kMaxBindings, info_.max_storage_buffers); }

Pipeline& VulkanDevice::build_pipeline(const std::string& key, const uint32_t* words, size_t bytes,
                                       uint32_t num_buffers, uint32_t push_bytes, const std::vector<uint32_t>& spec) {
  if (num_buffers > max_bindings())
    raise(Code::Internal, "{}: a pipeline with {} buffers exceeds the {} bindings of a dispatch", name(), num_buffers,
          max_bindings());
  auto p = std::make_unique<Pipeline>();
  p->num_buffers = num_buffers;
  p->push_bytes = push_bytes;
  std::vector<VkDescriptorSetLayoutBinding> bindings(num_buffers);
  for (uint32_t i = 0; i < num_buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.bindingCount = num_buffers;
  dl.pBindings = bindings.data();
  vk_check(vkCreateDescriptorSetLayout(device_, &dl, nullptr, &p->set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p->set_layout;
  pl.pushConstantRangeCount = push_bytes ? 1 : 0;
  pl.pPushConstantRanges = &range;
  vk_check(vkCreatePipelineLayout(device_, &pl, nullptr, &p->layout), "vkCreatePipelineLayout");

  VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sm.codeSize = bytes;
  sm.pCode = words;
  VkShaderModule module;
  vk_check(vkCreateShaderModule(device_, &sm, nullptr, &module), "vkCreateShaderModule");
  const std::vector<uint32_t>& values = spec;
  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < values.size(); ++i) entries.push_back({i, i * 4, 4});
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), values.size() * 4, values.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = values.empty() ? nullptr : &si;
  ci.layout = p->layout;
  VkResult r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &p->pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  vk_check(r, "vkCreateComputePipelines");
  ++stats_.pipelines;
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

void VulkanDevice::dispatch(Pipeline& p, std::initializer_list<const Buffer*> buffers, const void* push,
                            uint32_t gx, uint32_t gy, uint32_t gz) {
  dispatch(p, buffers.begin(), buffers.size(), push, gx, gy, gz);
}

void VulkanDevice::dispatch(Pipeline& p, const Buffer* const* buffers, size_t num_buffers, const void* push,
                            uint32_t gx, uint32_t gy, uint32_t gz) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (num_buffers != p.num_buffers)
    raise(Code::Internal, "{}: dispatch binds {} buffers, the pipeline has {}", name(), num_buffers, p.num_buffers);
  ++stats_.dispatches;
  if (capture_) return capture_->add_dispatch(p, buffers, num_buffers, dummy_, push, gx, gy, gz);
  Batch& b = recording();
  ++stats_.descriptor_sets;
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = b.descriptors;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set;
  vk_check(vkAllocateDescriptorSets(device_, &ai, &set), "vkAllocateDescriptorSets");
  VkDescriptorBufferInfo infos[kMaxBindings];
  VkWriteDescriptorSet writes[kMaxBindings];
  uint32_t i = 0;
  for (size_t k = 0; k < num_buffers; ++k) {
    const auto* vb = static_cast<const VulkanBuffer*>(buffers[k]);
    if (!vb->block) vb = &dummy_;
    infos[i] = {vb->block->buffer, vb->offset, vb->size};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    ++i;
  }
  vkUpdateDescriptorSets(device_, i, writes, 0, nullptr);
  barrier(b.cb);
  vkCmdBindPipeline(b.cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(b.cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (p.push_bytes) vkCmdPushConstants(b.cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes, push);
  vkCmdDispatch(b.cb, gx, gy, gz);
  if (b.timed) stamp(b, "dispatch");
  ++b.dispatches;
}

void VulkanDevice::copy(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset,
                        uint64_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const auto& s = static_cast<const VulkanBuffer&>(src);
  const auto& d = static_cast<const VulkanBuffer&>(dst);
  if (capture_) return capture_->add_copy(s, src_offset, d, dst_offset, bytes);
  Batch& b = recording();
  barrier(b.cb);
  VkBufferCopy region{s.offset + src_offset, d.offset + dst_offset, bytes};
  vkCmdCopyBuffer(b.cb, s.block->buffer, d.block->buffer, 1, &region);
  if (b.timed) stamp(b, "copy");
  ++b.dispatches;
}

void VulkanDevice::fill(const Buffer& dst, uint32_t word) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const auto& d = static_cast<const VulkanBuffer&>(dst);
  if (!d.block) return;
  if (capture_) return capture_->add_fill(d, word);
  Batch& b = recording();
  barrier(b.cb);
  vkCmdFillBuffer(b.cb, d.block->buffer, d.offset, d.size, word);
  if (b.timed) stamp(b, "fill");
  ++b.dispatches;
}

// ---- timestamps -----------------------------------------------------------------------------
//
// While the profiler is on (and asked for GPU timestamps), a batch writes a timestamp when it
// starts and one after each command; when its fence is waited for, each command becomes a "gpu"
// event labelled with the op (or replayed node) that recorded it, timed from the previous
// timestamp (so a command's time includes waiting on its barrier). GPU ticks (timestampPeriod ns
// each) are mapped onto the host clock by an offset bounded by every timed batch: its first
// timestamp came after its submit (offset >= submit - start) and its last before the fence wait
// returned (offset <= done - end). The lower bound is used (tight whenever the queue was idle at a
// submit); where the bounds cross, the upper one. Devices without timestamps on their compute
// queue (timestampValidBits 0, or timestampComputeAndGraphics false) record no GPU events and say
// so in the profile's notes.

namespace {
void flush_timed_work(const void* device) {
  auto* d = const_cast<VulkanDevice*>(static_cast<const VulkanDevice*>(device));
  try {
    d->with_idle_device([] {});
  } catch (...) {
    // A failing device reports its error on its next use, not from the profiler.
  }
}
}  // namespace

void VulkanDevice::init_timestamps() {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  const uint32_t bits = queue_family_ < n ? families[queue_family_].timestampValidBits : 0;
  timestamps_ = bits > 0 && props.limits.timestampComputeAndGraphics && props.limits.timestampPeriod > 0;
  if (!timestamps_) return;
  timestamp_period_ = props.limits.timestampPeriod;
  timestamp_mask_ = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  for (auto& b : batches_) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = kMaxTimestamps;
    vk_check(vkCreateQueryPool(device_, &qi, nullptr, &b->queries), "vkCreateQueryPool");
  }
  prof::add_flush_hook(this, flush_timed_work);
}

void VulkanDevice::start_timing(Batch& b) {
  if (!prof::gpu_timestamps()) return;
  if (!timestamps_) {
    prof::note(fmt::format("{} ({}): no timestamps on its compute queue; GPU work is not timed "
                           "(its ops' host times are)", name(), info_.name));
    return;
  }
  vkCmdResetQueryPool(b.cb, b.queries, 0, kMaxTimestamps);
  vkCmdWriteTimestamp(b.cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, b.queries, 0);
  b.timed = true;
  b.stamps = 1;
  b.labels.clear();
}

void VulkanDevice::stamp(Batch& b, const char* what) {
  if (b.stamps >= kMaxTimestamps) return;  // copies beyond the bound share the last command's time
  vkCmdWriteTimestamp(b.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b.queries, b.stamps++);
  const std::string& label = prof::current_label();
  b.labels.push_back(label.empty() ? what : label);
}

void VulkanDevice::collect_timing(Batch& b, int64_t done_ns) {
  b.timed = false;
  if (b.stamps < 2) return;
  std::vector<uint64_t> ticks(b.stamps);
  VkResult r = vkGetQueryPoolResults(device_, b.queries, 0, b.stamps, ticks.size() * sizeof(uint64_t), ticks.data(),
                                     sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) {
    prof::note(fmt::format("{}: reading timestamps failed ({})", name(), static_cast<int>(r)));
    return;
  }
  auto ns = [&](uint64_t t) { return static_cast<int64_t>(static_cast<double>(t & timestamp_mask_) * timestamp_period_); };
  offset_lo_ = std::max(offset_lo_, b.submit_ns - ns(ticks.front()));
  offset_hi_ = std::min(offset_hi_, done_ns - ns(ticks.back()));
  const int64_t offset = offset_lo_ <= offset_hi_ ? offset_lo_ : offset_hi_;
  for (uint32_t i = 1; i < b.stamps; ++i) {
    prof::Event e;
    e.category = "gpu";
    e.name = b.labels[i - 1];
    e.device = name();
    e.start_ns = ns(ticks[i - 1]) + offset;
    e.duration_ns = std::max<int64_t>(0, ns(ticks[i]) - ns(ticks[i - 1]));
    e.thread = 1;  // the queue
    prof::record(std::move(e));
  }
}

// ---- engines (external mode) ----------------------------------------------------------------

Tensor VulkanDevice::wrap(VkBuffer buffer, uint64_t offset, uint64_t range, DType dtype, const Shape& shape,
                          const char* fn) {
  if (!external_)
    raise(Code::FailedPrecondition,
          "{}: device {} is Cairn's own; wrapping a VkBuffer needs a context in external mode (the engine's VkDevice)",
          fn, name());
  if (buffer == VK_NULL_HANDLE) raise(Code::InvalidArgument, "{}: the VkBuffer is null", fn);
  // Shaders bind the range as a storage buffer and access it in 4-byte words.
  const uint64_t align = std::max<uint64_t>(info_.min_storage_offset_alignment, 4);
  if (offset % align != 0)
    raise(Code::InvalidArgument, "{}: offset {} is not a multiple of {} (minStorageBufferOffsetAlignment of {})", fn,
          offset, align, info_.name);
  const size_t elem = dtype_size(dtype);
  if (elem == 0) raise(Code::InvalidArgument, "{}: dtype {} has no fixed element size", fn, dtype_name(dtype));
  const uint64_t elements = static_cast<uint64_t>(shape.num_elements());
  if (elements > info_.max_storage_buffer_range / elem)
    raise(Code::InvalidArgument, "{}: a tensor of {} elements of {} exceeds the device's maxStorageBufferRange ({} bytes)",
          fn, elements, dtype_name(dtype), info_.max_storage_buffer_range);
  const size_t bytes = static_cast<size_t>(elements * elem);
  const uint64_t bound = (static_cast<uint64_t>(bytes) + 3) & ~uint64_t{3};
  if (range < bound)
    raise(Code::InvalidArgument, "{}: the range holds {} bytes, but the tensor needs {} ({} bytes rounded up to 4)", fn,
          range, bound, bytes);
  if (bound > info_.max_storage_buffer_range)
    raise(Code::InvalidArgument, "{}: a tensor of {} bytes exceeds the device's maxStorageBufferRange ({} bytes)", fn,
          bound, info_.max_storage_buffer_range);
  auto* b = new VulkanBuffer();
  b->device = this;
  b->nbytes = bytes;
  b->data = b;
  if (bytes > 0) {
    b->block = new Block(0);
    b->block->buffer = buffer;
    b->offset = offset;
    b->size = bound;
    b->wrapped = true;
  }
  retain();  // the buffer keeps its device alive
  return Tensor::adopt(dtype, shape, b);
}

namespace {
// The features of an engine's VkPhysicalDeviceFeatures2 chain that Cairn's kernels use.
struct EngineFeatures {
  bool storage16 = false;
  bool storage8 = false;
  bool timeline = false;
};

EngineFeatures read_feature_chain(const VkPhysicalDeviceFeatures2& head) {
  constexpr int kMaxChain = 64;  // a chain longer than every struct Vulkan has is a cycle
  EngineFeatures f;
  int n = 0;
  for (auto* s = static_cast<const VkBaseInStructure*>(head.pNext); s && n < kMaxChain; s = s->pNext, ++n) {
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
        f.storage16 |= reinterpret_cast<const VkPhysicalDevice16BitStorageFeatures*>(s)->storageBuffer16BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
        f.storage16 |= reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
        f.storage8 |= reinterpret_cast<const VkPhysicalDevice8BitStorageFeatures*>(s)->storageBuffer8BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
        f.timeline |= reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(s)->timelineSemaphore;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
        const auto* v12 = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        f.storage8 |= v12->storageBuffer8BitAccess;
        f.timeline |= v12->timelineSemaphore;
        break;
      }
      default:
        break;
    }
  }
  return f;
}
}  // namespace

void VulkanDevice::use_engine_features(const void* features2, const char* fn) {
  if (!external_)
    raise(Code::FailedPrecondition, "{}: device {} is Cairn's own; it enabled its features itself", fn, name());
  if (!features2) raise(Code::InvalidArgument, "{}: features is NULL", fn);
  const auto* head = static_cast<const VkPhysicalDeviceFeatures2*>(features2);
  if (head->sType != VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
    raise(Code::InvalidArgument, "{}: features must point at a VkPhysicalDeviceFeatures2 (sType {}), got sType {}", fn,
          static_cast<int>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2), static_cast<int>(head->sType));
  std::lock_guard<std::recursive_mutex> lock(mu_);
  // Kernels choose by these flags: changing them under ops already recorded would mix choices.
  if (stats_.buffers > 0 || stats_.dispatches > 0)
    raise(Code::FailedPrecondition, "{}: device {} has already run work; pass the engine's features before the first op",
          fn, name());
  const EngineFeatures f = read_feature_chain(*head);
  float16_ = f.storage16 && info_.float16_storage;
  int8_storage_ = f.storage8 && info_.int8_storage && info_.api_version >= VK_API_VERSION_1_2;
  timeline_ = f.timeline;
}

void VulkanDevice::check_timeline(const char* fn) const {
  if (!external_)
    raise(Code::FailedPrecondition,
          "{}: device {} is Cairn's own; engine semaphores need a context in external mode (the engine's VkDevice)", fn,
          name());
  if (!timeline_)
    raise(Code::FailedPrecondition,
          "{}: {} has no timeline semaphores (Vulkan 1.2 or VK_KHR_timeline_semaphore with timelineSemaphore)", fn,
          info_.name);
}

void VulkanDevice::wait_semaphores(const std::vector<TimelinePoint>& points, const char* fn) {
  check_timeline(fn);
  for (const TimelinePoint& p : points)
    if (p.semaphore == VK_NULL_HANDLE) raise(Code::InvalidArgument, "{}: a VkSemaphore is null", fn);
  std::lock_guard<std::recursive_mutex> lock(mu_);
  refuse_in_capture("a wait on a timeline semaphore (the engine orders its own submission)");
  submit();  // work recorded before does not wait
  pending_waits_.insert(pending_waits_.end(), points.begin(), points.end());
}

void VulkanDevice::signal_semaphore(TimelinePoint point, const char* fn) {
  check_timeline(fn);
  if (point.semaphore == VK_NULL_HANDLE) raise(Code::InvalidArgument, "{}: the VkSemaphore is null", fn);
  std::lock_guard<std::recursive_mutex> lock(mu_);
  refuse_in_capture("a timeline semaphore signal (the engine orders its own submission)");
  recording();  // an empty batch when nothing is pending: the signal (and waits) still go out
  submit(&point);
}

VkBuffer VulkanDevice::vk_buffer(const Buffer& b, uint64_t* offset) const {
  const auto& vb = static_cast<const VulkanBuffer&>(b);
  const VulkanBuffer& real = vb.block ? vb : dummy_;
  *offset = real.offset;
  return real.block->buffer;
}

void VulkanDevice::record(const std::function<void(VkCommandBuffer)>& fn) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  refuse_in_capture("an op that records its commands through a library (VkFFT)");
  Batch& b = recording();
  barrier(b.cb);
  fn(b.cb);
  if (b.timed) stamp(b, "commands");
  ++b.dispatches;
  ++stats_.dispatches;
}

std::unique_ptr<Recording> VulkanDevice::capture(const std::function<void()>& body, const char* fn) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (capture_) raise(Code::FailedPrecondition, "{}: device {} is already capturing work for {}", fn, name(), capture_fn_);
  submit();  // earlier work goes out as it is, in order before anything recorded later
  auto rec = std::make_unique<Recording>(*this);
  capture_ = rec.get();
  capture_fn_ = fn;
  capture_refusal_.clear();
  try {
    graph::ObserveNodes observe(*rec);  // the recording learns its nodes (a frame budget's unit)
    body();
    // A refusal the body caught (a C callback that ignored a status) still fails the capture:
    // the recording would lack the refused work.
    if (!capture_refusal_.empty()) raise(Code::FailedPrecondition, "{}", capture_refusal_);
  } catch (...) {
    capture_ = nullptr;
    throw;
  }
  capture_ = nullptr;
  rec->finish();
  ++stats_.recordings;
  return rec;
}

void VulkanDevice::refuse_in_capture(const char* what) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!capture_) return;
  capture_refusal_ = fmt::format(
      "{}: the work being recorded for an engine's command buffer needs {}, which a recording cannot replay",
      capture_fn_, what);
  raise(Code::FailedPrecondition, "{}", capture_refusal_);
}

void VulkanDevice::free_owned(VulkanBuffer* b) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  free_range(*b);
  delete b;
}

void VulkanDevice::with_idle_device(const std::function<void()>& fn) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  refuse_in_capture("waiting for the device");
  wait_all();
  fn();
}

DeviceCacheEntry& VulkanDevice::cached(const std::string& key,
                                       const std::function<std::unique_ptr<DeviceCacheEntry>()>& make) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = caches_.find(key);
  if (it == caches_.end()) it = caches_.emplace(key, make()).first;
  return *it->second;
}

}  // namespace cairn::gpu
