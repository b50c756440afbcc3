// For benchmarks that record dispatches by hand as their floor or peer (vulkan_bench,
// engine_bench): binary_f32 (y = x + y over 16 floats) with one descriptor set over x and y, made
// from a pool of its own.
#pragma once

#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/kernels/push.h"
#include "gpu/vulkan/vk_error.h"
#include "gpu/vulkan/vulkan_device.h"

namespace cairn::bench {

struct BinarySet {
  gpu::Pipeline* pipeline = nullptr;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  gpu::BinaryPush push{};  // n = 16
};

inline BinarySet make_binary_set(gpu::VulkanDevice& dev, const Tensor& x, const Tensor& y) {
  using namespace cairn::gpu;
  BinarySet s;
  VkDevice d = dev.vk_device();
  s.pipeline = &dev.pipeline("binary_f32", 3, sizeof(BinaryPush), {BOP_ADD});
  s.push.n = 16;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  vk_check(vkCreateDescriptorPool(d, &dpi, nullptr, &s.pool), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dsi{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsi.descriptorPool = s.pool;
  dsi.descriptorSetCount = 1;
  dsi.pSetLayouts = &s.pipeline->set_layout;
  vk_check(vkAllocateDescriptorSets(d, &dsi, &s.set), "vkAllocateDescriptorSets");
  VkDescriptorBufferInfo infos[3];
  VkWriteDescriptorSet writes[3];
  const Buffer* bufs[3] = {x.buffer(), y.buffer(), y.buffer()};
  for (uint32_t i = 0; i < 3; ++i) {
    uint64_t offset = 0;
    infos[i] = {dev.vk_buffer(*bufs[i], &offset), 0, 64};
    infos[i].offset = offset;
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = s.set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(d, 3, writes, 0, nullptr);
  return s;
}

inline void free_binary_set(gpu::VulkanDevice& dev, BinarySet& s) {
  gpu::vkDestroyDescriptorPool(dev.vk_device(), s.pool, nullptr);
  s = BinarySet{};
}

}  // namespace cairn::bench
