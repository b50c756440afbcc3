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

  // The GPU's timestamps of the last frame (read after wait() for it): the render and copy, the
  // gap from their end to the composite's start (Cairn's model runs there: its own submission
  // on the queue), and the composite. False when the queue has no timestamps.
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

  Buffer raw_, frame_;
};
