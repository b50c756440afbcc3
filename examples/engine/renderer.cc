// The example's headless renderer (see renderer.h).
#include "renderer.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// SPIR-V compiled by glslc at build time (-mfmt=c: a braced list of words).
const uint32_t kSceneVert[] =
#include "scene.vert.inc"
    ;
const uint32_t kSceneFrag[] =
#include "scene.frag.inc"
    ;
const uint32_t kCompositeComp[] =
#include "composite.comp.inc"
    ;

constexpr VkFormat kFormat = VK_FORMAT_R32G32B32A32_SFLOAT;
constexpr uint64_t kTimeoutNs = 10'000'000'000ull;

struct ScenePush {
  float time;
  uint32_t frame;
  float noise;
};

struct CompositePush {
  uint32_t width, height, filtered_word;
};

std::atomic<int> g_validation_errors{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT *data, void *) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_validation_errors.fetch_add(1);
    std::fprintf(stderr, "engine: validation error: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

void check(VkResult r, const char *call) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(call) + " failed: VkResult " + std::to_string(r));
}
#define VK_CHECK(call) check((call), #call)

bool has_layer(const char *name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto &l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

template <class Fn>
Fn instance_proc(VkInstance instance, const char *name) {
  auto f = reinterpret_cast<Fn>(vkGetInstanceProcAddr(instance, name));
  if (!f) throw std::runtime_error(std::string("vkGetInstanceProcAddr: no ") + name);
  return f;
}

}  // namespace

Renderer::Renderer(uint32_t width, uint32_t height) : width_(width), height_(height) {
  g_validation_errors = 0;
  create_instance();
  create_device();
  create_target();
  create_scene_pipeline();
  create_composite_pipeline();
  raw_ = make_buffer(uint64_t(width_) * height_ * 4 * sizeof(float),
                     VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                         VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  filtered_ = make_buffer(uint64_t(width_) * height_ * 3 * sizeof(float), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                                                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  frame_ = make_buffer(uint64_t(width_) * 2 * height_ * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
}

Renderer::~Renderer() {
  if (device_) vkDeviceWaitIdle(device_);
  free_buffer(frame_);
  free_buffer(filtered_);
  free_buffer(raw_);
  vkDestroyPipeline(device_, composite_pipeline_, nullptr);
  vkDestroyPipelineLayout(device_, composite_layout_, nullptr);
  vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
  vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  vkDestroyPipeline(device_, scene_pipeline_, nullptr);
  vkDestroyPipelineLayout(device_, scene_layout_, nullptr);
  vkDestroyFramebuffer(device_, framebuffer_, nullptr);
  vkDestroyRenderPass(device_, render_pass_, nullptr);
  vkDestroyImageView(device_, view_, nullptr);
  vkDestroyImage(device_, image_, nullptr);
  vkFreeMemory(device_, image_memory_, nullptr);
  vkDestroySemaphore(device_, timeline_, nullptr);
  vkDestroyQueryPool(device_, queries_, nullptr);
  vkDestroyCommandPool(device_, pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
  if (messenger_)
    instance_proc<PFN_vkDestroyDebugUtilsMessengerEXT>(instance_, "vkDestroyDebugUtilsMessengerEXT")(instance_, messenger_,
                                                                                                  nullptr);
  vkDestroyInstance(instance_, nullptr);
}

int Renderer::validation_errors() { return g_validation_errors.load(); }

// Vulkan 1.2; the validation layer with synchronisation validation and an error-counting
// messenger when the layer is installed.
void Renderer::create_instance() {
  validation_ = has_layer("VK_LAYER_KHRONOS_validation");
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "cairn-engine-example";
  app.apiVersion = VK_API_VERSION_1_2;
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ii.pApplicationInfo = &app;
  if (validation_) {
    ii.pNext = &features;
    ii.enabledLayerCount = 1;
    ii.ppEnabledLayerNames = &layer;
    ii.enabledExtensionCount = 1;
    ii.ppEnabledExtensionNames = &extension;
  }
  VK_CHECK(vkCreateInstance(&ii, nullptr, &instance_));
  if (!validation_) return;
  VkDebugUtilsMessengerCreateInfoEXT m{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  m.pfnUserCallback = on_message;
  VK_CHECK(instance_proc<PFN_vkCreateDebugUtilsMessengerEXT>(instance_, "vkCreateDebugUtilsMessengerEXT")(
      instance_, &m, nullptr, &messenger_));
}

// The first physical device with a graphics+compute queue family; timeline semaphores on.
void Renderer::create_device() {
  uint32_t n = 0;
  VK_CHECK(vkEnumeratePhysicalDevices(instance_, &n, nullptr));
  std::vector<VkPhysicalDevice> devices(n);
  VK_CHECK(vkEnumeratePhysicalDevices(instance_, &n, devices.data()));
  const VkQueueFlags need = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
  for (VkPhysicalDevice d : devices) {
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &families, props.data());
    for (uint32_t f = 0; f < families && !physical_; ++f)
      if ((props[f].queueFlags & need) == need) {
        physical_ = d;
        family_ = f;
      }
    if (physical_) break;
  }
  if (!physical_) throw std::runtime_error("no Vulkan device with a graphics and compute queue");
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  storage_alignment_ = props.limits.minStorageBufferOffsetAlignment;
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
  std::vector<VkQueueFamilyProperties> family_props(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, family_props.data());
  if (family_props[family_].timestampValidBits > 0) timestamp_ns_ = props.limits.timestampPeriod;

  features_ = VkPhysicalDeviceFeatures2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features12_ = VkPhysicalDeviceVulkan12Features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features_.pNext = &features12_;
  features12_.timelineSemaphore = VK_TRUE;
  float priority = 1;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &features_;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &q;
  VK_CHECK(vkCreateDevice(physical_, &di, nullptr, &device_));
  vkGetDeviceQueue(device_, family_, 0, &queue_);

  VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cp.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cp.queueFamilyIndex = family_;
  VK_CHECK(vkCreateCommandPool(device_, &cp, nullptr, &pool_));
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VK_CHECK(vkAllocateCommandBuffers(device_, &ai, &render_cb_));
  VK_CHECK(vkAllocateCommandBuffers(device_, &ai, &composite_cb_));

  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  si.pNext = &type;
  VK_CHECK(vkCreateSemaphore(device_, &si, nullptr, &timeline_));
  if (timestamp_ns_ > 0) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 4;
    VK_CHECK(vkCreateQueryPool(device_, &qi, nullptr, &queries_));
  }
}

uint32_t Renderer::memory_type(uint32_t bits, VkMemoryPropertyFlags want) const {
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) return i;
  throw std::runtime_error("no Vulkan memory type with the properties needed");
}

// A host-visible, coherent, mapped buffer (the model's input is read back by --check, the frame
// by the PNG writer).
Renderer::Buffer Renderer::make_buffer(uint64_t size, VkBufferUsageFlags usage) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = usage;
  VK_CHECK(vkCreateBuffer(device_, &bi, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex =
      memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  VK_CHECK(vkAllocateMemory(device_, &ai, nullptr, &b.memory));
  VK_CHECK(vkBindBufferMemory(device_, b.buffer, b.memory, 0));
  VK_CHECK(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void Renderer::free_buffer(Buffer &b) {
  vkDestroyBuffer(device_, b.buffer, nullptr);
  vkFreeMemory(device_, b.memory, nullptr);
  b = Buffer{};
}

// The offscreen colour target and a render pass whose dependencies order the previous frame's
// copy before this frame's drawing, and the drawing before the copy.
void Renderer::create_target() {
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = kFormat;
  ii.extent = {width_, height_, 1};
  ii.mipLevels = 1;
  ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  VK_CHECK(vkCreateImage(device_, &ii, nullptr, &image_));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(device_, image_, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type(req.memoryTypeBits, 0);
  VK_CHECK(vkAllocateMemory(device_, &ai, nullptr, &image_memory_));
  VK_CHECK(vkBindImageMemory(device_, image_, image_memory_, 0));
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = image_;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = kFormat;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VK_CHECK(vkCreateImageView(device_, &vi, nullptr, &view_));

  VkAttachmentDescription color{};
  color.format = kFormat;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  color.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass{};
  subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  subpass.colorAttachmentCount = 1;
  subpass.pColorAttachments = &ref;
  VkSubpassDependency deps[2] = {};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[0].srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rp.attachmentCount = 1;
  rp.pAttachments = &color;
  rp.subpassCount = 1;
  rp.pSubpasses = &subpass;
  rp.dependencyCount = 2;
  rp.pDependencies = deps;
  VK_CHECK(vkCreateRenderPass(device_, &rp, nullptr, &render_pass_));
  VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fb.renderPass = render_pass_;
  fb.attachmentCount = 1;
  fb.pAttachments = &view_;
  fb.width = width_;
  fb.height = height_;
  fb.layers = 1;
  VK_CHECK(vkCreateFramebuffer(device_, &fb, nullptr, &framebuffer_));
}

VkShaderModule Renderer::shader(const uint32_t *code, size_t bytes) {
  VkShaderModuleCreateInfo si{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  si.codeSize = bytes;
  si.pCode = code;
  VkShaderModule m = VK_NULL_HANDLE;
  VK_CHECK(vkCreateShaderModule(device_, &si, nullptr, &m));
  return m;
}

void Renderer::create_scene_pipeline() {
  VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(ScenePush)};
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &push;
  VK_CHECK(vkCreatePipelineLayout(device_, &li, nullptr, &scene_layout_));

  VkShaderModule vert = shader(kSceneVert, sizeof kSceneVert), frag = shader(kSceneFrag, sizeof kSceneFrag);
  VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                               {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vert;
  stages[0].pName = "main";
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = frag;
  stages[1].pName = "main";
  VkPipelineVertexInputStateCreateInfo input{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo assembly{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkViewport viewport{0, 0, float(width_), float(height_), 0, 1};
  VkRect2D scissor{{0, 0}, {width_, height_}};
  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.pViewports = &viewport;
  vp.scissorCount = 1;
  vp.pScissors = &scissor;
  VkPipelineRasterizationStateCreateInfo raster{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;
  raster.lineWidth = 1;
  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState blend{};
  blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT |
                         VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = 1;
  cb.pAttachments = &blend;
  VkGraphicsPipelineCreateInfo pi{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  pi.stageCount = 2;
  pi.pStages = stages;
  pi.pVertexInputState = &input;
  pi.pInputAssemblyState = &assembly;
  pi.pViewportState = &vp;
  pi.pRasterizationState = &raster;
  pi.pMultisampleState = &ms;
  pi.pColorBlendState = &cb;
  pi.layout = scene_layout_;
  pi.renderPass = render_pass_;
  VkResult r = vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &pi, nullptr, &scene_pipeline_);
  vkDestroyShaderModule(device_, vert, nullptr);
  vkDestroyShaderModule(device_, frag, nullptr);
  VK_CHECK(r);
}

// Three storage buffers (raw, filtered, frame); one descriptor set, rewritten only when the
// filtered range changes (every frame with Cairn's result tensors, once with filtered_).
void Renderer::create_composite_pipeline() {
  VkDescriptorSetLayoutBinding bindings[3] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo si{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  si.bindingCount = 3;
  si.pBindings = bindings;
  VK_CHECK(vkCreateDescriptorSetLayout(device_, &si, nullptr, &set_layout_));
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = 1;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VK_CHECK(vkCreateDescriptorPool(device_, &pi, nullptr, &descriptor_pool_));
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = descriptor_pool_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &set_layout_;
  VK_CHECK(vkAllocateDescriptorSets(device_, &ai, &set_));

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(CompositePush)};
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.setLayoutCount = 1;
  li.pSetLayouts = &set_layout_;
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &push;
  VK_CHECK(vkCreatePipelineLayout(device_, &li, nullptr, &composite_layout_));
  VkShaderModule comp = shader(kCompositeComp, sizeof kCompositeComp);
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = comp;
  ci.stage.pName = "main";
  ci.layout = composite_layout_;
  VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &composite_pipeline_);
  vkDestroyShaderModule(device_, comp, nullptr);
  VK_CHECK(r);
}

void Renderer::submit(VkCommandBuffer cb, const uint64_t *wait_value, VkPipelineStageFlags wait_stage,
                      uint64_t signal_value) {
  VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ts.waitSemaphoreValueCount = wait_value ? 1 : 0;
  ts.pWaitSemaphoreValues = wait_value;
  ts.signalSemaphoreValueCount = 1;
  ts.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ts;
  si.waitSemaphoreCount = wait_value ? 1 : 0;
  si.pWaitSemaphores = &timeline_;
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline_;
  VK_CHECK(vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE));
}

void Renderer::begin(VkCommandBuffer cb) {
  VK_CHECK(vkResetCommandBuffer(cb, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VK_CHECK(vkBeginCommandBuffer(cb, &bi));
}

// The scene's draw and the copy into raw_ (timestamps 0 and 1).
void Renderer::record_render(VkCommandBuffer cb, uint32_t frame, float noise) {
  if (queries_) {
    vkCmdResetQueryPool(cb, queries_, 0, 4);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
  }
  VkClearValue clear{};
  VkRenderPassBeginInfo rb{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  rb.renderPass = render_pass_;
  rb.framebuffer = framebuffer_;
  rb.renderArea = {{0, 0}, {width_, height_}};
  rb.clearValueCount = 1;
  rb.pClearValues = &clear;
  vkCmdBeginRenderPass(cb, &rb, VK_SUBPASS_CONTENTS_INLINE);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, scene_pipeline_);
  const ScenePush push{0.15f * float(frame), frame, noise};
  vkCmdPushConstants(cb, scene_layout_, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof push,
                     &push);
  vkCmdDraw(cb, 3, 1 + 5, 0, 0);  // the background and five triangles
  vkCmdEndRenderPass(cb);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {width_, height_, 1};
  vkCmdCopyImageToBuffer(cb, image_, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, raw_.buffer, 1, &region);
  // The copy is visible to the host (--check reads the model's input); Cairn's access is ordered
  // by the timeline value, or inside one command buffer by the barrier Cairn records first.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  if (queries_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
}

// Points set_'s filtered binding at this range, only when it changed: the previous frame is done
// (the host waited for it), so no command buffer in flight uses the set.
void Renderer::bind_filtered(VkBuffer filtered, uint64_t offset, uint64_t size) {
  // Storage-buffer offsets must be aligned: bind from the aligned offset below and let the shader
  // skip the remainder (Cairn's offsets are multiples of 4 bytes).
  const uint64_t bound = offset / storage_alignment_ * storage_alignment_;
  const VkDescriptorBufferInfo info{filtered, bound, offset - bound + size};
  filtered_word_ = uint32_t((offset - bound) / 4);
  if (info.buffer == bound_filtered_.buffer && info.offset == bound_filtered_.offset &&
      info.range == bound_filtered_.range)
    return;
  bound_filtered_ = info;
  VkDescriptorBufferInfo infos[3] = {{raw_.buffer, 0, raw_.size}, info, {frame_.buffer, 0, frame_.size}};
  VkWriteDescriptorSet writes[3] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set_;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_, 3, writes, 0, nullptr);
}

// The composite pass from the bound filtered range into frame_ (timestamps 2 and 3).
void Renderer::record_composite(VkCommandBuffer cb) {
  if (queries_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 2);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, composite_pipeline_);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, composite_layout_, 0, 1, &set_, 0, nullptr);
  const CompositePush push{width_, height_, filtered_word_};
  vkCmdPushConstants(cb, composite_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
  vkCmdDispatch(cb, (2 * width_ + 7) / 8, (height_ + 7) / 8, 1);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  if (queries_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 3);
}

void Renderer::render(uint32_t frame, float noise, uint64_t signal_value) {
  begin(render_cb_);
  record_render(render_cb_, frame, noise);
  VK_CHECK(vkEndCommandBuffer(render_cb_));
  submit(render_cb_, nullptr, 0, signal_value);
}

void Renderer::composite(VkBuffer filtered, uint64_t offset, uint64_t size, uint64_t wait_value,
                         uint64_t signal_value) {
  bind_filtered(filtered, offset, size);
  begin(composite_cb_);
  record_composite(composite_cb_);
  VK_CHECK(vkEndCommandBuffer(composite_cb_));
  submit(composite_cb_, &wait_value, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, signal_value);
}

// The whole frame in render_cb_: the model's commands come with their own barriers (Cairn's
// recording: after every earlier command, before every later one), so the engine adds none.
void Renderer::render_frame(uint32_t frame, float noise, RecordModel model, void *context, uint64_t signal_value) {
  bind_filtered(filtered_.buffer, 0, filtered_.size);  // written once: the engine's own buffer
  begin(render_cb_);
  record_render(render_cb_, frame, noise);
  model(context, render_cb_);
  record_composite(render_cb_);
  VK_CHECK(vkEndCommandBuffer(render_cb_));
  submit(render_cb_, nullptr, 0, signal_value);
}

void Renderer::wait(uint64_t value) const {
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline_;
  wi.pValues = &value;
  VkResult r = vkWaitSemaphores(device_, &wi, kTimeoutNs);
  if (r == VK_TIMEOUT) throw std::runtime_error("vkWaitSemaphores: timeline value " + std::to_string(value) +
                                                " not reached in 10 s");
  check(r, "vkWaitSemaphores");
}

bool Renderer::gpu_times(GpuTimes &out) const {
  if (!queries_) return false;
  uint64_t ticks[4];
  VK_CHECK(vkGetQueryPoolResults(device_, queries_, 0, 4, sizeof ticks, ticks, sizeof ticks[0],
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const double ms = timestamp_ns_ / 1e6;
  out = {double(ticks[1] - ticks[0]) * ms, double(ticks[2] - ticks[1]) * ms, double(ticks[3] - ticks[2]) * ms};
  return true;
}
