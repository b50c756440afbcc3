#include "gpu/vulkan/recording.h"

#include <algorithm>
#include <cstring>

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

void Recording::finish() {
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

}  // namespace cairn::gpu
