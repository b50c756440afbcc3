#include "gpu/vulkan/instance.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "gpu/vulkan/vk_error.h"
#include "runtime/core/error.h"

namespace cairn::gpu {

namespace {

std::atomic<uint64_t> g_validation_errors{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_validation_errors.fetch_add(1, std::memory_order_relaxed);
    std::fprintf(stderr, "vulkan validation error: %s\n", data->pMessage);
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    std::fprintf(stderr, "vulkan validation warning: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

bool has_device_extension(VkPhysicalDevice device, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(device, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (vkEnumerateDeviceExtensionProperties(device, nullptr, &n, exts.data()) != VK_SUCCESS) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (std::strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

}  // namespace

HeapBudget sane_heap_budget(uint64_t size, bool reported, uint64_t budget, uint64_t usage) {
  if (!reported) return {size, 0, true};
  HeapBudget h{budget, usage, false};
  if (h.budget == 0 || h.budget > size) h = {size, h.usage, true};
  if (h.usage > size) h = {h.budget, size, true};
  if (h.usage > h.budget) h = {size, h.usage, true};
  return h;
}

std::vector<HeapInfo> query_heaps(VkPhysicalDevice device, bool with_budget) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (with_budget) {
    mem2.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(device, &mem2);
  } else {
    vkGetPhysicalDeviceMemoryProperties(device, &mem2.memoryProperties);  // Vulkan 1.0 suffices
  }
  const VkPhysicalDeviceMemoryProperties& mem = mem2.memoryProperties;
  std::vector<HeapInfo> heaps;
  for (uint32_t i = 0; i < mem.memoryHeapCount && i < VK_MAX_MEMORY_HEAPS; ++i) {
    HeapInfo h;
    h.size = mem.memoryHeaps[i].size;
    h.device_local = (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    HeapBudget b = sane_heap_budget(h.size, with_budget, budget.heapBudget[i], budget.heapUsage[i]);
    h.budget = b.budget;
    h.usage = b.usage;
    heaps.push_back(h);
  }
  return heaps;
}

int main_heap(const std::vector<HeapInfo>& heaps) {
  int best = -1;
  for (bool local : {true, false}) {
    for (size_t i = 0; i < heaps.size(); ++i)
      if (heaps[i].device_local == local && (best < 0 || heaps[i].size > heaps[best].size)) best = static_cast<int>(i);
    if (best >= 0) return best;
  }
  return best;
}

bool validation_requested() {
  const char* v = std::getenv("CAIRN_VULKAN_VALIDATION");
  return v && std::strcmp(v, "0") != 0 && *v != '\0';
}

uint64_t validation_error_count() { return g_validation_errors.load(std::memory_order_relaxed); }

Ref<Instance> Instance::shared() {
  static std::mutex mu;
  static Instance* instance = nullptr;  // lives for the process (devices may outlive everything)
  std::lock_guard<std::mutex> lock(mu);
  if (instance) return Ref<Instance>::share(instance);

  load_vulkan();  // Unavailable: "Vulkan loader libvulkan.so.1 not found"
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "cairn";
  app.pEngineName = "cairn";
  app.apiVersion = VK_API_VERSION_1_2;  // 8-bit storage is core from 1.2
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  bool validation = validation_requested() && has_layer(layer);
  if (validation_requested() && !validation)
    std::fprintf(stderr, "cairn: CAIRN_VULKAN_VALIDATION is set but the validation layer is not installed\n");
  if (validation) {
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &ext;
  }
  VkInstance handle = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&info, nullptr, &handle);
  if (r != VK_SUCCESS)
    raise(Code::Unavailable, "vulkan: no usable Vulkan loader or driver (vkCreateInstance: {})", vk_result_name(r));
  try {
    load_instance_functions(handle);
  } catch (...) {
    reinterpret_cast<PFN_vkDestroyInstance>(vkGetInstanceProcAddr(handle, "vkDestroyInstance"))(handle, nullptr);
    throw;
  }
  auto* created = new Instance();
  created->instance_ = handle;
  created->owned_ = true;
  created->validation_ = validation;
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT m{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    m.pfnUserCallback = on_validation_message;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(handle, "vkCreateDebugUtilsMessengerEXT"));
    if (create) create(handle, &m, nullptr, &created->messenger_);
  }
  instance = created;
  instance->retain();  // the process keeps one reference
  return Ref<Instance>::adopt(instance);
}

Ref<Instance> Instance::borrow(VkInstance handle) {
  if (handle == VK_NULL_HANDLE) raise(Code::InvalidArgument, "vulkan: the external VkInstance is null");
  load_instance_functions(handle);
  auto* i = new Instance();
  i->instance_ = handle;
  return Ref<Instance>::adopt(i);
}

Instance::~Instance() {
  if (!owned_) return;
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t n = 0;
  vk_check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> out(n);
  vk_check(vkEnumeratePhysicalDevices(instance_, &n, out.data()), "vkEnumeratePhysicalDevices");
  out.resize(n);
  return out;
}

PhysicalDeviceInfo describe(VkPhysicalDevice device, uint32_t index) {
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = &m3;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(device, &props);
  VkPhysicalDevice16BitStorageFeatures f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures f8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  f16.pNext = &f8;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f16;
  vkGetPhysicalDeviceFeatures2(device, &features);

  const VkPhysicalDeviceLimits& l = props.properties.limits;
  PhysicalDeviceInfo info;
  info.index = index;
  info.name = props.properties.deviceName;
  info.type = type_name(props.properties.deviceType);
  info.api_version = props.properties.apiVersion;
  // The budget query is vkGetPhysicalDeviceMemoryProperties2 (Vulkan 1.1; Cairn's instance asks for
  // 1.2, and describe() already needs vkGetPhysicalDeviceProperties2 of an engine's).
  info.memory_budget = props.properties.apiVersion >= VK_API_VERSION_1_1 &&
                       has_device_extension(device, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  info.heaps = query_heaps(device, info.memory_budget);
  info.max_allocation = m3.maxMemoryAllocationSize;
  info.subgroup_size = subgroup.subgroupSize;
  info.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                             (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                             (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_VOTE_BIT);
  info.max_storage_buffer_range = l.maxStorageBufferRange;
  info.max_workgroup_invocations = l.maxComputeWorkGroupInvocations;
  info.max_shared_memory = l.maxComputeSharedMemorySize;
  info.min_storage_offset_alignment = l.minStorageBufferOffsetAlignment;
  info.max_storage_buffers = l.maxPerStageDescriptorStorageBuffers;
  info.float16_storage = f16.storageBuffer16BitAccess;
  info.int8_storage = f8.storageBuffer8BitAccess;
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &n, families.data());
  for (const auto& f : families)
    if (info.compute_queues == 0 && (f.queueFlags & VK_QUEUE_COMPUTE_BIT)) info.compute_queues = f.queueCount;
  return info;
}

std::vector<PhysicalDeviceInfo> list_devices() {
  Ref<Instance> instance = Instance::shared();
  std::vector<PhysicalDeviceInfo> out;
  auto devices = instance->physical_devices();
  for (uint32_t i = 0; i < devices.size(); ++i) out.push_back(describe(devices[i], i));
  return out;
}

uint32_t preferred_device(const std::vector<PhysicalDeviceInfo>& devices) {
  const PhysicalDeviceInfo* best = nullptr;
  for (const auto& d : devices)
    if (!best || device_type_rank(d.type) < device_type_rank(best->type)) best = &d;
  if (!best) raise(Code::Unavailable, "vulkan: the driver reports no physical devices");
  return best->index;
}

PhysicalDevice physical_device(const PhysicalDeviceInfo& info) {
  PhysicalDevice p;
  p.name = "vulkan:" + std::to_string(info.index);
  p.type = "VULKAN";
  p.description = info.name;
  p.device_type = info.type;
  p.queues = std::max(1u, info.compute_queues);
  for (const HeapInfo& h : info.heaps) p.heaps.push_back({h.size, h.budget, h.usage, h.device_local});
  int main = main_heap(info.heaps);
  if (main >= 0) p.memory = info.heaps[main].budget;
  return p;
}

}  // namespace cairn::gpu
