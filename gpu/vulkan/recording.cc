#include "gpu/vulkan/recording.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "gpu/vulkan/vk_error.h"
#include "gpu/vulkan/vulkan_device.h"

namespace cairn::gpu {

namespace {
constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWorkAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

void memory_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stages, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stages, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, src_stages, dst_stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}
}  // namespace

Recording::Recording(VulkanDevice& device) : device_(device) { device_.retain(); }

Recording::~Recording() {
  if (pool_) vkDestroyDescriptorPool(device_.vk_device(), pool_, nullptr);
  for (Buffer* b : held_) b->release();
  for (VulkanBuffer* b : owned_) device_.free_owned(b);
  device_.release();
}

void Recording::hold(const VulkanBuffer& b) {
  auto& buffer = const_cast<VulkanBuffer&>(b);  // a reference count, not the contents
  buffer.retain();
  held_.push_back(&buffer);
}

void Recording::add_dispatch(const Pipeline& p, const Buffer* const* buffers, size_t num_buffers,
                             const VulkanBuffer& dummy, const void* push, uint32_t gx, uint32_t gy, uint32_t gz) {
  Command c;
  c.kind = Kind::Dispatch;
  c.pipeline = p.pipeline;
  c.layout = p.layout;
  c.set_layout = p.set_layout;
  c.push_offset = static_cast<uint32_t>(push_.size());
  c.push_bytes = p.push_bytes;
  const auto* bytes = static_cast<const uint8_t*>(push);
  if (p.push_bytes) push_.insert(push_.end(), bytes, bytes + p.push_bytes);
  c.binding_offset = static_cast<uint32_t>(bindings_.size());
  c.num_bindings = static_cast<uint32_t>(num_buffers);
  for (size_t k = 0; k < num_buffers; ++k) {
    const auto* vb = static_cast<const VulkanBuffer*>(buffers[k]);
    if (!vb->block) vb = &dummy;  // the device's own, alive as long as the device
    else hold(*vb);
    uint64_t offset = 0;
    const VkBuffer buffer = device_.vk_buffer(*vb, &offset);
    bindings_.push_back({buffer, offset, vb->size});
  }
  c.groups[0] = gx, c.groups[1] = gy, c.groups[2] = gz;
  commands_.push_back(c);
}

void Recording::add_copy(const VulkanBuffer& src, uint64_t src_offset, const VulkanBuffer& dst, uint64_t dst_offset,
                         uint64_t bytes, bool hold_src) {
  Command c;
  c.kind = Kind::Copy;
  uint64_t src_base = 0, dst_base = 0;
  c.src = device_.vk_buffer(src, &src_base);
  c.dst = device_.vk_buffer(dst, &dst_base);
  c.region = {src_base + src_offset, dst_base + dst_offset, bytes};
  if (hold_src) hold(src);
  hold(dst);
  commands_.push_back(c);
}

void Recording::add_fill(const VulkanBuffer& dst, uint32_t word) {
  Command c;
  c.kind = Kind::Fill;
  uint64_t offset = 0;
  c.dst = device_.vk_buffer(dst, &offset);
  c.region = {0, offset, dst.size};
  c.word = word;
  hold(dst);
  commands_.push_back(c);
}

void Recording::close_outside_run() {
  if (commands_.size() > covered_) nodes_.push_back({kOutsideNodes, covered_, commands_.size() - covered_});
  covered_ = commands_.size();
}

void Recording::node_begins(const std::string& label) {
  close_outside_run();
  open_node_ = label;
}

void Recording::node_ends() {
  if (commands_.size() > covered_) nodes_.push_back({open_node_, covered_, commands_.size() - covered_});
  covered_ = commands_.size();
}

void Recording::finish() {
  close_outside_run();
  uint32_t sets = 0;
  for (const Command& c : commands_) sets += c.kind == Kind::Dispatch;
  if (sets == 0) return;
  VkDevice device = device_.vk_device();
  // Storage buffers only; a pool size must not be 0 even when no dispatch binds a buffer.
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            std::max<uint32_t>(1, static_cast<uint32_t>(bindings_.size()))};
  VkDescriptorPoolCreateInfo dp{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dp.maxSets = sets;
  dp.poolSizeCount = 1;
  dp.pPoolSizes = &size;
  vk_check(vkCreateDescriptorPool(device, &dp, nullptr, &pool_), "vkCreateDescriptorPool");
  std::vector<VkWriteDescriptorSet> writes;
  for (Command& c : commands_) {
    if (c.kind != Kind::Dispatch) continue;
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &c.set_layout;
    vk_check(vkAllocateDescriptorSets(device, &ai, &c.set), "vkAllocateDescriptorSets");
    for (uint32_t i = 0; i < c.num_bindings; ++i) {
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = c.set;
      w.dstBinding = i;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &bindings_[c.binding_offset + i];
      writes.push_back(w);
    }
  }
  if (!writes.empty()) vkUpdateDescriptorSets(device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
}

void Recording::encode(VkCommandBuffer cb, size_t first, size_t count) const {
  const size_t end = std::min(commands_.size(), first + count);
  if (first >= end) return;
  // Before: whatever the queue wrote earlier, in any stage (the engine's inputs, or a previous
  // frame's use of these buffers), is visible to this work, and earlier reads of the buffers this
  // work writes have finished.
  memory_barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, kWorkStages, kWorkAccess);
  VkPipeline bound = VK_NULL_HANDLE;
  for (size_t i = first; i < end; ++i) {
    const Command& c = commands_[i];
    if (i > first)
      memory_barrier(cb, kWorkStages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, kWorkStages,
                     kWorkAccess);
    switch (c.kind) {
      case Kind::Dispatch:
        if (c.pipeline != bound) vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bound = c.pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c.layout, 0, 1, &c.set, 0, nullptr);
        if (c.push_bytes)
          vkCmdPushConstants(cb, c.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, c.push_bytes, push_.data() + c.push_offset);
        vkCmdDispatch(cb, c.groups[0], c.groups[1], c.groups[2]);
        break;
      case Kind::Copy:
        vkCmdCopyBuffer(cb, c.src, c.dst, 1, &c.region);
        break;
      case Kind::Fill:
        vkCmdFillBuffer(cb, c.dst, c.region.dstOffset, c.region.size, c.word);
        break;
    }
  }
  // After: the writes are visible to any later stage of the queue and, past a fence, the host.
  memory_barrier(cb, kWorkStages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
}

// ---- frame budgets ----------------------------------------------------------------------------

namespace {
constexpr uint64_t kMeasureTimeoutNs = 60ull * 1000 * 1000 * 1000;

// What measure() submits with: a command buffer of its own on the device's queue family, a
// timestamp per node boundary and a fence. Left alive when a run did not finish, since the GPU may
// still use them.
struct TimingRun {
  VkDevice device;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool abandoned = false;

  explicit TimingRun(VkDevice d) : device(d) {}
  TimingRun(const TimingRun&) = delete;
  TimingRun& operator=(const TimingRun&) = delete;
  ~TimingRun() {
    if (abandoned) return;
    if (fence) vkDestroyFence(device, fence, nullptr);
    if (queries) vkDestroyQueryPool(device, queries, nullptr);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);  // frees cb
  }
  void create(uint32_t queue_family, uint32_t num_stamps) {
    VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cp.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cp.queueFamilyIndex = queue_family;
    vk_check(vkCreateCommandPool(device, &cp, nullptr, &pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(device, &ai, &cb), "vkAllocateCommandBuffers");
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = num_stamps;
    vk_check(vkCreateQueryPool(device, &qi, nullptr, &queries), "vkCreateQueryPool");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_check(vkCreateFence(device, &fi, nullptr, &fence), "vkCreateFence");
  }
};

// Runs `rec` once on `queue`, a timestamp before its first node and after each, and reads the
// timestamps into `ticks` (one more than the nodes).
void run_timed(const Recording& rec, TimingRun& t, VkQueue queue, std::vector<uint64_t>& ticks, const char* fn) {
  const auto stamps = static_cast<uint32_t>(ticks.size());
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(t.cb, &bi), "vkBeginCommandBuffer");
  vkCmdResetQueryPool(t.cb, t.queries, 0, stamps);
  vkCmdWriteTimestamp(t.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t.queries, 0);
  uint32_t stamp = 1;
  for (const Recording::Node& n : rec.nodes()) {
    rec.encode(t.cb, n.first, n.commands);
    vkCmdWriteTimestamp(t.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t.queries, stamp++);
  }
  vk_check(vkEndCommandBuffer(t.cb), "vkEndCommandBuffer");
  vk_check(vkResetFences(t.device, 1, &t.fence), "vkResetFences");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &t.cb;
  vk_check(vkQueueSubmit(queue, 1, &si, t.fence), "vkQueueSubmit");
  const VkResult r = vkWaitForFences(t.device, 1, &t.fence, VK_TRUE, kMeasureTimeoutNs);
  if (r == VK_TIMEOUT) {
    t.abandoned = true;
    raise(Code::DeadlineExceeded, "{}: a timed run of the recording did not finish within {} s", fn,
          kMeasureTimeoutNs / 1000000000);
  }
  vk_check(r, "vkWaitForFences");
  vk_check(vkGetQueryPoolResults(t.device, t.queries, 0, stamps, ticks.size() * sizeof(uint64_t), ticks.data(),
                                 sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
           "vkGetQueryPoolResults");
}
}  // namespace

void Recording::measure(uint32_t runs, const char* fn) {
  VulkanDevice& d = device_;
  std::lock_guard<std::recursive_mutex> lock(d.mu_);  // Cairn's own submissions to the queue wait
  if (!d.timestamps_)
    raise(Code::FailedPrecondition,
          "{}: {} ({}) writes no timestamps on its queue family {} (timestampValidBits 0, or no "
          "timestampComputeAndGraphics), so node times cannot be measured; a budget of nodes needs none",
          fn, d.name(), d.info_.name, d.queue_family_);
  d.wait_all();  // Cairn's queued work is not timed with the first node
  if (nodes_.empty()) {
    measured_ = true;
    return;
  }
  TimingRun t(d.vk_device());
  t.create(d.queue_family_, static_cast<uint32_t>(nodes_.size() + 1));
  std::vector<uint64_t> ticks(nodes_.size() + 1);
  std::vector<std::vector<uint64_t>> times(nodes_.size());  // per node, per run
  for (uint32_t r = 0; r < runs; ++r) {
    run_timed(*this, t, d.vk_queue(), ticks, fn);
    for (size_t i = 0; i < nodes_.size(); ++i) times[i].push_back((ticks[i + 1] - ticks[i]) & d.timestamp_mask_);
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::vector<uint64_t>& v = times[i];
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    const double ns = static_cast<double>(v[v.size() / 2]) * d.timestamp_period_;
    nodes_[i].gpu_ns = std::max<uint64_t>(1, static_cast<uint64_t>(ns));  // a node below the clock's tick still costs
  }
  measured_ = true;
}

size_t Recording::chunk(Budget kind, uint64_t budget, size_t first, const char* fn) const {
  if (nodes_.empty()) return 0;
  if (first >= commands_.size())
    raise(Code::OutOfRange, "{}: first is {}, but the recording has {} commands", fn, first, commands_.size());
  auto node = std::partition_point(nodes_.begin(), nodes_.end(),
                                   [&](const Node& n) { return n.first + n.commands <= first; });
  if (node->first != first)
    raise(Code::InvalidArgument,
          "{}: command {} is inside node {} (commands {} to {}); a chunk starts at a node's first command", fn, first,
          node->op, node->first, node->first + node->commands - 1);
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = kind == Budget::Nodes ? budget : budget > kMax / 1000 ? kMax : budget * 1000;
  uint64_t used = 0;
  size_t commands = 0;
  for (; node != nodes_.end(); ++node) {
    const uint64_t cost = kind == Budget::Nodes ? 1 : node->gpu_ns;
    if (commands > 0 && (used >= limit || cost > limit - used)) break;  // the first goes in even when over
    used = cost > kMax - used ? kMax : used + cost;
    commands += node->commands;
  }
  return commands;
}

}  // namespace cairn::gpu
