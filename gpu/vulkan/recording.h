// A recording: GPU work captured once (VulkanDevice::capture) and recorded afterwards into command
// buffers that someone else owns and submits (an engine's frame, docs/vulkan.md "Engines").
//
// Capturing runs the work as usual, but each command a kernel records becomes an entry here
// instead of going to Cairn's batch: its pipeline, its bound buffers, its push constants and its
// group counts. finish() then writes one descriptor set per dispatch, from a pool of its own, once.
// So recording the work again (encode) binds what is already there and allocates nothing, takes no
// lock and changes nothing: several threads may encode one recording at once.
//
// The recording holds a reference to every buffer its commands bind (the function's intermediates
// included), so their memory is neither freed nor handed to other work while it lives; a function
// replayed elsewhere meanwhile gets buffers of its own (a ReplayState does not overwrite a buffer
// someone else references).
#pragma once

#include "gpu/vulkan/loader.h"

#include <cstdint>
#include <vector>

#include "runtime/tensor/device.h"

namespace cairn::gpu {

struct Pipeline;
struct VulkanBuffer;
class VulkanDevice;

class Recording {
 public:
  explicit Recording(VulkanDevice& device);
  // Frees the descriptor sets and drops the buffers: every command buffer that recorded this must
  // have completed (the caller's word; Cairn cannot see the engine's submissions).
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // While capturing (the device locked): one command each.
  void add_dispatch(const Pipeline& p, const Buffer* const* buffers, size_t num_buffers, const VulkanBuffer& dummy,
                    const void* push, uint32_t gx, uint32_t gy, uint32_t gz);
  // `hold_src` false: `src` is no tensor's buffer (a staging buffer the recording owns).
  void add_copy(const VulkanBuffer& src, uint64_t src_offset, const VulkanBuffer& dst, uint64_t dst_offset,
                uint64_t bytes, bool hold_src = true);
  void add_fill(const VulkanBuffer& dst, uint32_t word);
  // A buffer that is no tensor's (a staging buffer), freed with the recording.
  void own(VulkanBuffer* buffer) { owned_.push_back(buffer); }
  // After capturing: the descriptor pool and sets. Nothing is added after.
  void finish();

  size_t size() const { return commands_.size(); }
  // Records commands [first, first + count) into `cb`: a barrier before (every earlier write of the
  // queue, of any stage, made visible to the commands' compute and transfer accesses), one between
  // commands (as Cairn's batches have), and one after (the commands' writes made visible to every
  // stage and to the host). No allocation, no lock.
  void encode(VkCommandBuffer cb, size_t first, size_t count) const;

 private:
  enum class Kind : uint8_t { Dispatch, Copy, Fill };
  struct Command {
    Kind kind = Kind::Dispatch;
    // Dispatch.
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    uint32_t push_offset = 0, push_bytes = 0;  // in push_
    uint32_t binding_offset = 0, num_bindings = 0;  // in bindings_
    uint32_t groups[3] = {1, 1, 1};
    VkDescriptorSet set = VK_NULL_HANDLE;
    // Copy (src, dst) and Fill (dst).
    VkBuffer src = VK_NULL_HANDLE, dst = VK_NULL_HANDLE;
    VkBufferCopy region{};
    uint32_t word = 0;
  };
  // Keeps `b`'s memory for the recording's lifetime.
  void hold(const VulkanBuffer& b);

  VulkanDevice& device_;  // referenced: the recording keeps it alive
  std::vector<Command> commands_;
  std::vector<VkDescriptorBufferInfo> bindings_;
  std::vector<uint8_t> push_;
  std::vector<Buffer*> held_;          // one reference each
  std::vector<VulkanBuffer*> owned_;   // staging buffers
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

}  // namespace cairn::gpu
