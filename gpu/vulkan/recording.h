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
#include <string>
#include <vector>

#include "runtime/graph/executor.h"
#include "runtime/tensor/device.h"

namespace cairn::gpu {

struct Pipeline;
struct VulkanBuffer;
class VulkanDevice;

// What a chunk of a frame budget may hold (Recording::chunk).
enum class Budget : uint8_t {
  Nodes,         // at most this many whole nodes
  Microseconds,  // whole nodes whose measured GPU times sum to at most this
};

// Capturing, the recording learns where each graph node's commands start (graph::NodeObserver), so
// that a frame budget's chunks hold whole nodes.
class Recording final : public graph::NodeObserver {
 public:
  // One node's commands: a graph node (a fused node is one), or commands recorded outside any node
  // (the copies into a recording's outputs), named kOutsideNodes. Nodes that record nothing are
  // left out.
  struct Node {
    std::string op;       // as the profiler names nodes: "MatMul_3", "FusedElementwise_0"
    size_t first = 0;     // its first command
    size_t commands = 0;
    uint64_t gpu_ns = 0;  // its measured GPU time (measure()); 0 before
  };
  static constexpr const char* kOutsideNodes = "(outside the graph's nodes)";

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
  void node_begins(const std::string& label) override;
  void node_ends() override;
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

  // The nodes, in command order; together they cover every command once.
  const std::vector<Node>& nodes() const { return nodes_; }
  bool measured() const { return measured_; }
  // Measures each node's GPU time: records the whole recording `runs` times, with a timestamp
  // before the first node and after each, submits each run on the device's queue (Cairn's work
  // queued before goes first) and waits for it (at most 60 s); a node's time is the median of its
  // runs. Runs the recording's work: its outputs hold the function's results after. Refuses, naming
  // `fn`, a queue without timestamps (FailedPrecondition) and a run that does not finish
  // (DeadlineExceeded). Not while another thread calls chunk().
  void measure(uint32_t runs, const char* fn);
  // How many commands the chunk that starts at command `first` (a node's first) holds: whole nodes
  // within `budget` (a node alone over the budget is a chunk of its own). 0 for an empty recording.
  // Refuses, naming `fn`, `first` inside a node or past the end, and Microseconds before measure().
  // No allocation, no lock.
  size_t chunk(Budget kind, uint64_t budget, size_t first, const char* fn) const;

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
  // Capturing: the commands since the last node's end (none, or some outside any node) become a node.
  void close_outside_run();

  VulkanDevice& device_;  // referenced: the recording keeps it alive
  std::vector<Command> commands_;
  std::vector<VkDescriptorBufferInfo> bindings_;
  std::vector<uint8_t> push_;
  std::vector<Buffer*> held_;          // one reference each
  std::vector<VulkanBuffer*> owned_;   // staging buffers
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::vector<Node> nodes_;
  size_t covered_ = 0;     // capturing: commands before this belong to nodes_
  std::string open_node_;  // capturing: the node whose commands are being recorded
  bool measured_ = false;
};

}  // namespace cairn::gpu
