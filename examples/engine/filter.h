// The Cairn side of the example: the trained denoiser (filter_model.h) as a compiled function, in
// a context of its own (the CPU reference) or in external mode on the engine's device.
#pragma once

#define CAIRN_EXPERIMENTAL  // the engine API (cairn_vulkan_tensor_wrap, ..._semaphore, ..._recording)
#include <cairn/cairn.h>
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

class Renderer;

// Throws std::runtime_error with "what: message" when `s` is an error (and frees it).
void cairn_check(cairn_status *s, const std::string &what);

class Filter {
 public:
  // On Cairn's CPU device (the reference of --check).
  explicit Filter(const std::string &weights);
  // In external mode on the renderer's instance, device and queue; wraps its raw buffer
  // ([1, height, width, 4] float) as the model's input, without a copy.
  Filter(const std::string &weights, const Renderer &engine, uint32_t width, uint32_t height);
  ~Filter();
  Filter(const Filter &) = delete;
  Filter &operator=(const Filter &) = delete;

  // Runs the model on this frame's render: Cairn's work waits for `ready` on the engine's
  // timeline and signals `done` after it; returns without waiting, with the result tensor
  // ([1, height, width, 3] float) whose VkBuffer the engine reads once `done` is reached. The
  // caller frees the tensor after those reads finished. The one place the example runs the model
  // in a frame.
  cairn_tensor *filter_frame(VkSemaphore timeline, uint64_t ready, uint64_t done);

  // --sync record: captures the model once as a recording that reads the wrapped raw buffer and
  // writes `output`, an engine buffer ([1, height, width, 3] float, wrapped as the recording's
  // preallocated output). Call once, before record_frame.
  void prepare_recording(VkBuffer output, uint64_t bytes);
  // Records the model's commands into the engine's command buffer `cb` (recording state, outside a
  // render pass), with Cairn's barriers before and after them; Cairn submits nothing. The one
  // place the example runs the model in a frame with --sync record.
  void record_frame(VkCommandBuffer cb) const;

  // The model on host values ([1, height, width, 4] float) on this filter's device, read back.
  void run_on_host(const float *input, uint32_t width, uint32_t height, float *output);

  cairn_context *context() const { return ctx_; }

 private:
  void load_model(const std::string &weights);
  void release();
  cairn_tensor *call(cairn_tensor *x);

  cairn_context *ctx_ = nullptr;
  cairn_object *model_ = nullptr;
  cairn_function *function_ = nullptr;
  cairn_tensor *input_ = nullptr;  // the wrapped raw buffer (engine mode)
  cairn_tensor *output_ = nullptr;  // the wrapped filtered buffer (--sync record)
  cairn_vulkan_recording *recording_ = nullptr;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t width_ = 0, height_ = 0;
};
