// The example's engine: a headless Vulkan renderer that owns its instance (with the validation
// layer and synchronisation validation when installed), device (timeline semaphores on), one
// queue and the buffers it shares with Cairn. Each frame:
//   render(frame, noise, value) draws the animated scene, with per-pixel noise of this amplitude,
//                               into an offscreen RGBA32F image and copies it into raw_buffer()
//                               ([height, width, 4] float); signals `value`
//   composite(filtered, ...)    after `wait_value`, draws raw | filtered side by side into an RGBA8
//                               frame (a compute pass reading the filtered result from its own
//                               VkBuffer); signals `signal_value`
//   wait(value)                 the host waits for a timeline value (10 s at most)
// or, with the model recorded into the engine's own command buffer (--sync record):
//   render_frame(frame, noise, model, value)  one command buffer: render + copy into raw_buffer(),
//                               model(cb) records the model (reading raw_buffer(), writing
//                               filtered_buffer()), composite from filtered_buffer(); one submit,
//                               signals `value`
// Errors throw std::runtime_error naming the Vulkan call.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

class Renderer {
 public:
  Renderer(uint32_t width, uint32_t height);
  ~Renderer();
  Renderer(const Renderer &) = delete;
  Renderer &operator=(const Renderer &) = delete;

  void render(uint32_t frame, float noise, uint64_t signal_value);
  void composite(VkBuffer filtered, uint64_t offset, uint64_t size, uint64_t wait_value, uint64_t signal_value);
  void wait(uint64_t value) const;

  // Records the model's commands into the frame's command buffer, between the copy into
  // raw_buffer() and the composite (outside a render pass). The engine records no barrier around
  // them: the recorder's own barriers order them after the copy and before the composite.
  using RecordModel = void (*)(void *context, VkCommandBuffer cb);
  void render_frame(uint32_t frame, float noise, RecordModel model, void *context, uint64_t signal_value);

  // The GPU's timestamps of the last frame (read after wait() for it): the render and copy, the
  // gap from their end to the composite's start (Cairn's model runs there: its own submission on
  // the queue, or its commands inside the frame's command buffer), and the composite. False when the queue has no timestamps.
  struct GpuTimes {
    double render_ms, until_composite_ms, composite_ms;
  };
  bool gpu_times(GpuTimes &out) const;

  // What Cairn's external mode needs (cairn_vulkan_options, cairn_vulkan_use_engine_features).
  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return family_; }
  const VkPhysicalDeviceFeatures2 *features() const { return &features_; }
  VkSemaphore timeline() const { return timeline_; }

  // The rendered image, [height, width, 4] float: the model's input (host-visible; read it after
  // wait() for the frame).
  VkBuffer raw_buffer() const { return raw_.buffer; }
  uint64_t raw_bytes() const { return raw_.size; }
  const float *raw_pixels() const { return static_cast<const float *>(raw_.mapped); }
  // The engine's buffer for the model's output, [height, width, 3] float (host-visible): what the
  // recorded model writes and the composite reads with --sync record.
  VkBuffer filtered_buffer() const { return filtered_.buffer; }
  uint64_t filtered_bytes() const { return filtered_.size; }
  const float *filtered_pixels() const { return static_cast<const float *>(filtered_.mapped); }
  // The composited frame, [height, 2 * width] RGBA8 (after wait() for the frame).
  const uint8_t *frame_pixels() const { return static_cast<const uint8_t *>(frame_.mapped); }

  bool validation() const { return validation_; }
  // Errors the validation layer reported since the last Renderer was created, its teardown
  // included (so this is read after the Renderer is gone).
  static int validation_errors();

 private:
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t size = 0;
    void *mapped = nullptr;
  };

  void create_instance();
  void create_device();
  void create_target();
  void create_scene_pipeline();
  void create_composite_pipeline();
  uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want) const;
  Buffer make_buffer(uint64_t size, VkBufferUsageFlags usage);
  void free_buffer(Buffer &b);
  VkShaderModule shader(const uint32_t *code, size_t bytes);
  void begin(VkCommandBuffer cb);
  void record_render(VkCommandBuffer cb, uint32_t frame, float noise);
  void record_composite(VkCommandBuffer cb);
  void bind_filtered(VkBuffer filtered, uint64_t offset, uint64_t size);
  void submit(VkCommandBuffer cb, const uint64_t *wait_value, VkPipelineStageFlags wait_stage, uint64_t signal_value);

  uint32_t width_, height_;
  bool validation_ = false;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceFeatures2 features_{};
  VkPhysicalDeviceVulkan12Features features12_{};
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkDeviceSize storage_alignment_ = 4;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer render_cb_ = VK_NULL_HANDLE, composite_cb_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;  // 4 timestamps: render start, end; composite start, end
  double timestamp_ns_ = 0;                // 0: no timestamps

  VkImage image_ = VK_NULL_HANDLE;
  VkDeviceMemory image_memory_ = VK_NULL_HANDLE;
  VkImageView view_ = VK_NULL_HANDLE;
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
  VkPipelineLayout scene_layout_ = VK_NULL_HANDLE;
  VkPipeline scene_pipeline_ = VK_NULL_HANDLE;

  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  VkPipelineLayout composite_layout_ = VK_NULL_HANDLE;
  VkPipeline composite_pipeline_ = VK_NULL_HANDLE;
  VkDescriptorBufferInfo bound_filtered_{};  // what set_ binds as the filtered result
  uint32_t filtered_word_ = 0;               // its first float past the bound (aligned) offset

  Buffer raw_, filtered_, frame_;
};
