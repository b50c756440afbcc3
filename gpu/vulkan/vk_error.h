// Vulkan results as Cairn errors: out of memory -> ResourceExhausted, device lost -> Internal,
// timeouts -> DeadlineExceeded, a missing driver -> Unavailable.
#pragma once

#include "gpu/vulkan/loader.h"

#include "runtime/core/error.h"

namespace cairn::gpu {

const char* vk_result_name(VkResult r);
Code vk_result_code(VkResult r);

// Throws unless `r` is VK_SUCCESS; `what` names the call ("vkAllocateMemory").
inline void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) raise(vk_result_code(r), "vulkan: {} failed: {}", what, vk_result_name(r));
}

}  // namespace cairn::gpu
