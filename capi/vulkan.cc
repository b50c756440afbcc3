// The Vulkan section of the C API: availability, device listing, contexts with Vulkan settings
// (external handles, memory limit, CPU fallback), the fallback counter, and synchronisation.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/vulkan_device.h"

using namespace cairn;
using cairn::capi::require;

namespace {


void apply_vulkan_options(const cairn_vulkan_options* user_vk, GpuOptions& g, const char* fn) {
  const cairn_vulkan_options opts = capi::read_options(user_vk, fn);
  const cairn_vulkan_options* vk = &opts;
  int handles = (vk->instance != nullptr) + (vk->physical_device != nullptr) + (vk->device != nullptr) +
                (vk->queue != nullptr);
  if (handles != 0 && handles != 4)
    raise(Code::InvalidArgument,
          "{}: external mode needs instance, physical_device, device and queue together ({} of 4 set)", fn, handles);
  if (vk->cpu_fallback != 0 && vk->cpu_fallback != 1)
    raise(Code::InvalidArgument, "{}: cpu_fallback must be 0 or 1, got {}", fn, vk->cpu_fallback);
  g.vk_instance = vk->instance;
  g.vk_physical_device = vk->physical_device;
  g.vk_device = vk->device;
  g.vk_queue_family = vk->queue_family;
  g.vk_queue = vk->queue;
  g.memory_limit = vk->memory_limit;
  g.cpu_fallback = vk->cpu_fallback != 0;
}

cairn_vulkan_device_type device_type(const std::string& t) {
  if (t == "discrete") return CAIRN_VULKAN_DEVICE_DISCRETE;
  if (t == "integrated") return CAIRN_VULKAN_DEVICE_INTEGRATED;
  if (t == "virtual") return CAIRN_VULKAN_DEVICE_VIRTUAL;
  if (t == "cpu") return CAIRN_VULKAN_DEVICE_CPU;
  return CAIRN_VULKAN_DEVICE_OTHER;
}

}  // namespace

extern "C" {

cairn_bool cairn_vulkan_available(void) {
  try {
    return gpu::list_devices().empty() ? 0 : 1;
  } catch (...) {
    return 0;
  }
}

cairn_status* cairn_vulkan_device_count(size_t* out) {
  CAIRN_API_BEGIN
  require(out, "cairn_vulkan_device_count", "out");
  *out = gpu::list_devices().size();
  CAIRN_API_END
}

cairn_status* cairn_vulkan_device_describe(size_t index, cairn_vulkan_device_info* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_device_describe";
  require(out, fn, "out");
  capi::check_struct_size<cairn_vulkan_device_info>(out->struct_size, fn);
  auto devices = gpu::list_devices();
  if (index >= devices.size())
    raise(Code::OutOfRange, "{}: device index {} but there are {} Vulkan device(s)", fn, index, devices.size());
  const gpu::PhysicalDeviceInfo& d = devices[index];
  cairn_vulkan_device_info info = capi::StructInfo<cairn_vulkan_device_info>::defaults();
  info.name = capi::interned(d.name);
  info.type = device_type(d.type);
  info.api_version = d.api_version;
  for (const auto& h : d.heaps) {
    info.total_memory += h.size;
    if (h.device_local) info.device_local_memory += h.size;
  }
  info.subgroup_size = d.subgroup_size;
  info.subgroup_arithmetic = d.subgroup_arithmetic ? CAIRN_TRUE : CAIRN_FALSE;
  info.float16 = d.float16_storage ? CAIRN_TRUE : CAIRN_FALSE;
  info.max_storage_buffer_range = d.max_storage_buffer_range;
  info.max_shared_memory = d.max_shared_memory;
  capi::write_struct(out, info, fn);
  CAIRN_API_END
}

cairn_status* cairn_context_create_vulkan(const cairn_context_options* opts, const cairn_vulkan_options* vk,
                                          cairn_context** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_create_vulkan";
  require(out, fn, "out");
  *out = nullptr;
  ContextOptions o = capi::context_options(opts, fn);
  if (!opts || !opts->device) o.device = "vulkan";  // this constructor defaults to Vulkan
  apply_vulkan_options(vk, o.gpu, fn);
  Ref<Context> ctx = make_ref<Context>(std::move(o));
  *out = new cairn_context{std::move(ctx)};
  CAIRN_API_END
}

cairn_status* cairn_vulkan_fallback_count(cairn_context* ctx, const char* device, uint64_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_fallback_count";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  Device& d = device ? ctx->ctx->device(device) : ctx->ctx->default_device();
  if (d.kind() != DeviceKind::Vulkan) raise(Code::InvalidArgument, "{}: device {} is not a Vulkan device", fn, d.name());
  *out = gpu::vulkan(d).fallbacks();
  CAIRN_API_END
}

cairn_status* cairn_context_synchronize(cairn_context* ctx) {
  CAIRN_API_BEGIN
  require(ctx, "cairn_context_synchronize", "ctx");
  for (const Ref<Device>& d : ctx->ctx->backend_devices()) d->synchronize();
  CAIRN_API_END
}

}  // extern "C"
