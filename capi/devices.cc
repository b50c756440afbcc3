// The Devices section of the C API (tf.config): physical and logical devices, visibility, memory
// growth, splits, thread counts and memory statistics. The runtime side is Context's
// configuration (runtime/eager/context.h).
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "capi/internal/handles.h"
#include "capi/internal/options.h"

using namespace cairn;
using cairn::capi::require;

namespace cairn::capi {

const char* interned(const std::string& value) {
  static std::mutex mu;
  static std::set<std::string>* values = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mu);
  return values->insert(value).first->c_str();
}

}  // namespace cairn::capi

namespace {

PhysicalDevice physical_at(Context& ctx, size_t index, const char* fn) {
  std::vector<PhysicalDevice> all = ctx.physical_devices();
  if (index >= all.size())
    raise(Code::OutOfRange, "{}: physical device index {} but there are {} physical device(s)", fn, index,
          all.size());
  return all[index];
}

cairn_bool as_bool(bool b) { return b ? CAIRN_TRUE : CAIRN_FALSE; }

// Runs a Context setter, whose errors name it ("set_threads: ..."), under the C function's name
// ("cairn_context_set_threads: ...").
template <class F>
void as_c_setter(F&& set) {
  try {
    set();
  } catch (const Error& e) {
    raise(e.code(), "cairn_context_{}", e.message());
  }
}

bool read_bool(cairn_bool b, const char* fn, const char* what) {
  if (b != 0 && b != 1) raise(Code::InvalidArgument, "{}: {} must be 0 or 1, got {}", fn, what, b);
  return b == 1;
}

}  // namespace

extern "C" {

cairn_status* cairn_context_physical_device_count(cairn_context* ctx, size_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_physical_device_count";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  *out = ctx->ctx->physical_devices().size();
  CAIRN_API_END
}

cairn_status* cairn_context_physical_device(cairn_context* ctx, size_t index, cairn_physical_device_info* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_physical_device";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  capi::check_struct_size<cairn_physical_device_info>(out->struct_size, fn);
  PhysicalDevice p = physical_at(*ctx->ctx, index, fn);
  cairn_physical_device_info info = capi::StructInfo<cairn_physical_device_info>::defaults();
  info.name = capi::interned(p.name);
  info.type = capi::interned(p.type);
  info.description = capi::interned(p.description);
  info.device_type = capi::interned(p.device_type);
  info.memory = p.memory;
  info.num_heaps = static_cast<uint32_t>(p.heaps.size());
  info.queues = p.queues;
  capi::write_struct(out, info, fn);
  CAIRN_API_END
}

cairn_status* cairn_context_physical_device_heap(cairn_context* ctx, size_t index, size_t heap,
                                                 cairn_memory_heap* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_physical_device_heap";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  capi::check_struct_size<cairn_memory_heap>(out->struct_size, fn);
  PhysicalDevice p = physical_at(*ctx->ctx, index, fn);
  if (heap >= p.heaps.size())
    raise(Code::OutOfRange, "{}: heap {} but \"{}\" has {} heap(s)", fn, heap, p.name, p.heaps.size());
  const MemoryHeap& h = p.heaps[heap];
  cairn_memory_heap info = capi::StructInfo<cairn_memory_heap>::defaults();
  info.size = h.size;
  info.budget = h.budget;
  info.usage = h.usage;
  info.device_local = as_bool(h.device_local);
  capi::write_struct(out, info, fn);
  CAIRN_API_END
}

cairn_status* cairn_context_set_visible_devices(cairn_context* ctx, const char* const* names, size_t n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_set_visible_devices";
  require(ctx, fn, "ctx");
  if (n > 0) require(names, fn, "names");
  std::vector<std::string> list;
  for (size_t i = 0; i < n; ++i) {
    if (!names[i]) raise(Code::InvalidArgument, "{}: names[{}] is NULL", fn, i);
    list.emplace_back(names[i]);
  }
  as_c_setter([&] { ctx->ctx->set_visible_devices(list); });
  CAIRN_API_END
}

cairn_status* cairn_context_visible_devices(cairn_context* ctx, char** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_visible_devices";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  std::string joined;
  for (const auto& name : ctx->ctx->visible_devices()) joined += (joined.empty() ? "" : ",") + name;
  *out = capi::malloc_string(joined, fn);
  CAIRN_API_END
}

cairn_status* cairn_context_set_memory_growth(cairn_context* ctx, const char* physical, cairn_bool grow) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_set_memory_growth";
  require(ctx, fn, "ctx");
  require(physical, fn, "physical");
  const bool g = read_bool(grow, fn, "grow");
  as_c_setter([&] { ctx->ctx->set_memory_growth(physical, g); });
  CAIRN_API_END
}

cairn_status* cairn_context_memory_growth(cairn_context* ctx, const char* physical, cairn_bool* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_memory_growth";
  require(ctx, fn, "ctx");
  require(physical, fn, "physical");
  require(out, fn, "out");
  *out = as_bool(ctx->ctx->memory_growth(physical));
  CAIRN_API_END
}

cairn_status* cairn_context_set_logical_devices(cairn_context* ctx, const char* physical,
                                                const cairn_logical_device_config* configs, size_t n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_set_logical_devices";
  require(ctx, fn, "ctx");
  require(physical, fn, "physical");
  if (n > 0) require(configs, fn, "configs");
  std::vector<LogicalDeviceConfig> list;
  for (size_t i = 0; i < n && i <= 64; ++i) {
    const cairn_logical_device_config c = capi::read_array_element(configs, i, fn);
    list.push_back({c.memory_limit});
  }
  if (n > 64) list.resize(65);  // the runtime names the bound
  as_c_setter([&] { ctx->ctx->set_logical_devices(physical, list); });
  CAIRN_API_END
}

cairn_status* cairn_context_logical_device_count(cairn_context* ctx, size_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_logical_device_count";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  *out = ctx->ctx->logical_devices().size();
  CAIRN_API_END
}

cairn_status* cairn_context_logical_device(cairn_context* ctx, size_t index, cairn_logical_device_info* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_logical_device";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  capi::check_struct_size<cairn_logical_device_info>(out->struct_size, fn);
  std::vector<LogicalDeviceSpec> all = ctx->ctx->logical_devices();
  if (index >= all.size())
    raise(Code::OutOfRange, "{}: logical device index {} but there are {} logical device(s)", fn, index,
          all.size());
  const LogicalDeviceSpec& d = all[index];
  cairn_logical_device_info info = capi::StructInfo<cairn_logical_device_info>::defaults();
  info.name = capi::interned(d.name);
  info.physical = capi::interned(d.physical);
  info.memory_limit = d.memory_limit;
  capi::write_struct(out, info, fn);
  CAIRN_API_END
}

cairn_status* cairn_context_set_threads(cairn_context* ctx, int32_t intra_op, int32_t inter_op) {
  CAIRN_API_BEGIN
  require(ctx, "cairn_context_set_threads", "ctx");
  as_c_setter([&] { ctx->ctx->set_threads(intra_op, inter_op); });
  CAIRN_API_END
}

cairn_status* cairn_context_threads(cairn_context* ctx, int32_t* intra_op, int32_t* inter_op) {
  CAIRN_API_BEGIN
  require(ctx, "cairn_context_threads", "ctx");
  if (intra_op) *intra_op = ctx->ctx->intra_op_threads();
  if (inter_op) *inter_op = ctx->ctx->inter_op_threads();
  CAIRN_API_END
}

cairn_status* cairn_context_memory_info(cairn_context* ctx, const char* device, cairn_memory_info* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_memory_info";
  require(ctx, fn, "ctx");
  require(device, fn, "device");
  require(out, fn, "out");
  capi::check_struct_size<cairn_memory_info>(out->struct_size, fn);
  Device& d = ctx->ctx->device(device);
  MemoryInfo m = d.memory_info();
  cairn_memory_info info = capi::StructInfo<cairn_memory_info>::defaults();
  info.current = m.current;
  info.peak = m.peak;
  info.limit = m.limit;
  info.budget = d.memory_budget();
  capi::write_struct(out, info, fn);
  CAIRN_API_END
}

cairn_status* cairn_context_reset_memory_stats(cairn_context* ctx, const char* device) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_reset_memory_stats";
  require(ctx, fn, "ctx");
  require(device, fn, "device");
  ctx->ctx->device(device).reset_peak_memory();
  CAIRN_API_END
}

cairn_status* cairn_context_devices_initialized(cairn_context* ctx, cairn_bool* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_context_devices_initialized";
  require(ctx, fn, "ctx");
  require(out, fn, "out");
  *out = as_bool(ctx->ctx->devices_initialized());
  CAIRN_API_END
}

}  // extern "C"
