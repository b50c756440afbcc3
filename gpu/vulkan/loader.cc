#include "gpu/vulkan/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "runtime/core/error.h"

namespace cairn::gpu {

#define CAIRN_VK_DEFINE(name) PFN_##name name = nullptr;
PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
CAIRN_VK_GLOBAL_FUNCTIONS(CAIRN_VK_DEFINE)
CAIRN_VK_INSTANCE_FUNCTIONS(CAIRN_VK_DEFINE)
#undef CAIRN_VK_DEFINE

namespace {

// The outcome of the one attempt to open the loader: empty on success.
std::string g_load_error;
std::once_flag g_load_once;

template <typename Fn>
void resolve(Fn& slot, VkInstance instance, const char* name, std::string& missing) {
  slot = reinterpret_cast<Fn>(vkGetInstanceProcAddr(instance, name));
  if (!slot) missing += std::string(missing.empty() ? "" : ", ") + name;
}

void open_loader() {
  const char* name = loader_name();
  // Kept open for the process: devices and their pointers may outlive everything else.
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    g_load_error = std::string("Vulkan loader ") + name + " not found" + (why ? std::string(": ") + why : "");
    return;
  }
  vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!vkGetInstanceProcAddr) {
    g_load_error = std::string("Vulkan loader ") + name + " has no vkGetInstanceProcAddr";
    return;
  }
  std::string missing;
#define CAIRN_VK_RESOLVE(fn) resolve(fn, VK_NULL_HANDLE, #fn, missing);
  CAIRN_VK_GLOBAL_FUNCTIONS(CAIRN_VK_RESOLVE)
#undef CAIRN_VK_RESOLVE
  if (!missing.empty()) g_load_error = std::string("Vulkan loader ") + name + " lacks " + missing;
}

}  // namespace

const char* loader_name() {
  const char* env = std::getenv("CAIRN_VULKAN_LOADER");
  return env && *env ? env : "libvulkan.so.1";
}

void load_vulkan() {
  std::call_once(g_load_once, open_loader);
  if (!g_load_error.empty()) raise(Code::Unavailable, "{}", g_load_error);
}

void load_instance_functions(VkInstance instance) {
  static std::mutex mu;
  static bool loaded = false;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded) return;
  load_vulkan();
  std::string missing;
#define CAIRN_VK_RESOLVE(fn) resolve(fn, instance, #fn, missing);
  CAIRN_VK_INSTANCE_FUNCTIONS(CAIRN_VK_RESOLVE)
#undef CAIRN_VK_RESOLVE
  if (!missing.empty()) raise(Code::Unavailable, "vulkan: the loader lacks {}", missing);
  loaded = true;
}

}  // namespace cairn::gpu
