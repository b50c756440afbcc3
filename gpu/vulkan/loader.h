// The Vulkan loader, opened at run time: Cairn never links libvulkan, so a binary starts (and
// runs CPU ops) on a machine without it. load_vulkan() dlopens "libvulkan.so.1" (or the name in
// CAIRN_VULKAN_LOADER, which tests point at a missing library) and resolves every entry point
// Cairn or VkFFT calls through vkGetInstanceProcAddr. The entry points are function pointers in
// namespace cairn::gpu with the Vulkan names, so code in that namespace calls them as usual;
// code elsewhere qualifies them (gpu::vkCreateInstance). Keeping them out of the global
// namespace means an engine that links libvulkan itself in the same process is unaffected.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

namespace cairn::gpu {

// Resolved with a null instance.
#define CAIRN_VK_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)                \
  X(vkEnumerateInstanceLayerProperties)

// Resolved with the first instance (instance- and device-level alike: the loader's
// trampolines dispatch to whichever instance or device a call names, so one table serves every
// device, Cairn's and an engine's).
#define CAIRN_VK_INSTANCE_FUNCTIONS(X)       \
  X(vkDestroyInstance)                       \
  X(vkEnumeratePhysicalDevices)              \
  X(vkGetPhysicalDeviceProperties)           \
  X(vkGetPhysicalDeviceProperties2)          \
  X(vkGetPhysicalDeviceFeatures2)            \
  X(vkGetPhysicalDeviceMemoryProperties)     \
  X(vkGetPhysicalDeviceMemoryProperties2)    \
  X(vkEnumerateDeviceExtensionProperties)    \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkCreateDevice)                          \
  X(vkDestroyDevice)                         \
  X(vkGetDeviceQueue)                        \
  X(vkDeviceWaitIdle)                        \
  X(vkAllocateMemory)                        \
  X(vkFreeMemory)                            \
  X(vkMapMemory)                             \
  X(vkUnmapMemory)                           \
  X(vkCreateBuffer)                          \
  X(vkDestroyBuffer)                         \
  X(vkGetBufferMemoryRequirements)           \
  X(vkBindBufferMemory)                      \
  X(vkCreateFence)                           \
  X(vkDestroyFence)                          \
  X(vkResetFences)                           \
  X(vkWaitForFences)                         \
  X(vkCreateCommandPool)                     \
  X(vkDestroyCommandPool)                    \
  X(vkAllocateCommandBuffers)                \
  X(vkFreeCommandBuffers)                    \
  X(vkBeginCommandBuffer)                    \
  X(vkEndCommandBuffer)                      \
  X(vkQueueSubmit)                           \
  X(vkCreateShaderModule)                    \
  X(vkDestroyShaderModule)                   \
  X(vkCreatePipelineCache)                   \
  X(vkDestroyPipelineCache)                  \
  X(vkCreateComputePipelines)                \
  X(vkDestroyPipeline)                       \
  X(vkCreatePipelineLayout)                  \
  X(vkDestroyPipelineLayout)                 \
  X(vkCreateDescriptorSetLayout)             \
  X(vkDestroyDescriptorSetLayout)            \
  X(vkCreateDescriptorPool)                  \
  X(vkDestroyDescriptorPool)                 \
  X(vkResetDescriptorPool)                   \
  X(vkAllocateDescriptorSets)                \
  X(vkUpdateDescriptorSets)                  \
  X(vkCmdBindPipeline)                       \
  X(vkCmdBindDescriptorSets)                 \
  X(vkCmdPushConstants)                      \
  X(vkCmdDispatch)                           \
  X(vkCmdPipelineBarrier)                    \
  X(vkCmdCopyBuffer)                         \
  X(vkCmdFillBuffer)                         \
  X(vkCreateQueryPool)                       \
  X(vkDestroyQueryPool)                      \
  X(vkCmdResetQueryPool)                     \
  X(vkCmdWriteTimestamp)                     \
  X(vkGetQueryPoolResults)

#define CAIRN_VK_DECLARE(name) extern PFN_##name name;
extern PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
CAIRN_VK_GLOBAL_FUNCTIONS(CAIRN_VK_DECLARE)
CAIRN_VK_INSTANCE_FUNCTIONS(CAIRN_VK_DECLARE)
#undef CAIRN_VK_DECLARE

// The loader's file name: CAIRN_VULKAN_LOADER, else "libvulkan.so.1".
const char* loader_name();
// Opens the loader and resolves the global functions, once per process. Throws Unavailable
// ("Vulkan loader libvulkan.so.1 not found: <dlerror>") when it cannot be opened.
void load_vulkan();
// Resolves the instance table from `instance` (the first call wins). Throws Unavailable naming
// any function the loader does not provide.
void load_instance_functions(VkInstance instance);

}  // namespace cairn::gpu
