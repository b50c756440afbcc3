// The Vulkan section of the C API: availability, device listing, contexts with Vulkan settings
// (external handles, memory limit, CPU fallback), the fallback counter, and synchronisation;
// for engines (external mode), wrapped buffers, timeline-semaphore submission and recordings of
// compiled functions into the engine's command buffers.
#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "capi/internal/function_handle.h"
#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/vulkan_device.h"
#include "runtime/eager/dispatch.h"
#include "runtime/graph/executor.h"

using namespace cairn;
using cairn::capi::require;

struct cairn_vulkan_recording {
  std::unique_ptr<gpu::Recording> rec;
};

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

// Non-dispatchable Vulkan handles cross the C API as uint64_t: a pointer on 64-bit platforms,
// uint64_t itself on 32-bit ones.
template <class Handle>
Handle handle_from(uint64_t bits) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<Handle>(static_cast<uintptr_t>(bits));
  else
    return static_cast<Handle>(bits);
}

template <class Handle>
uint64_t handle_bits(Handle h) {
  if constexpr (std::is_pointer_v<Handle>)
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
  else
    return static_cast<uint64_t>(h);
}

// The context's Vulkan device on the engine's VkDevice; FAILED_PRECONDITION naming `fn` when the
// context was not created in external mode (without making a device of Cairn's on the way).
gpu::VulkanDevice& engine_device(cairn_context* ctx, const char* fn) {
  require(ctx, fn, "ctx");
  if (!ctx->ctx->gpu_options().vk_device)
    raise(Code::FailedPrecondition,
          "{}: the context is not in external mode (create it with cairn_context_create_vulkan and the engine's "
          "instance, physical_device, device and queue)",
          fn);
  return gpu::vulkan(ctx->ctx->device("vulkan"));
}

// Checks that `t` is on `d` (a recording binds device buffers only), naming `fn` and `role`.
void require_on_device(const cairn_tensor* t, gpu::VulkanDevice& d, const char* fn, const char* role, size_t i) {
  require(t, fn, role);
  if (t->t.device() != &d)
    raise(Code::InvalidArgument, "{}: {} {} is on {}, not on the context's Vulkan device {}", fn, role, i,
          t->t.device() ? t->t.device()->name() : "no device", d.name());
}

// Checks a recording's bindings: tensors on `d`, and outputs with buffers of their own.
void check_bindings(cairn_tensor* const* inputs, size_t n_inputs, cairn_tensor* const* outputs, size_t n_outputs,
                    gpu::VulkanDevice& d, const char* what) {
  if (n_inputs) require(inputs, what, "inputs");
  if (n_outputs) require(outputs, what, "outputs");
  for (size_t i = 0; i < n_inputs; ++i) require_on_device(inputs[i], d, what, "input", i);
  for (size_t i = 0; i < n_outputs; ++i) {
    require_on_device(outputs[i], d, what, "output", i);
    for (size_t j = 0; j < n_inputs; ++j)
      if (outputs[i]->t.buffer() == inputs[j]->t.buffer())
        raise(Code::InvalidArgument, "{}: output {} is input {}; a recording's outputs need buffers of their own", what,
              i, j);
  }
}

// A recording replays the same commands every frame, so its function must be a pure function of
// its inputs and the variables it reads: a variable write would be replayed on the values bound at
// capture, random numbers would repeat, and a stateful op (a summary) would not run. Traces `fn`
// for these inputs (outside the capture: tracing records nothing) and refuses such a graph.
void refuse_side_effects(cairn_function* fn, cairn_tensor* const* inputs, size_t n_inputs, size_t n_outputs,
                         const char* what) {
  std::vector<Tensor> ins;
  ins.reserve(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) ins.push_back(inputs[i]->t);
  if (capi::concrete_of(fn, ins, n_outputs)->graph().has_side_effects())
    raise(Code::FailedPrecondition,
          "{}: function '{}' writes a variable, draws random numbers or runs a stateful op; a recording replays "
          "the same commands every frame, so it records only functions of their inputs and the variables they read",
          what, fn->fn->name());
}

// Makes the recording's results: fills `n_outputs` slots with new tensors, or returns an error.
using ResultsFn = std::function<cairn_status*(cairn_tensor** results, size_t n_outputs)>;

// Calls `produce` (a compiled function's call, or an eager body, named `source` in messages) while
// `d` captures, then copies each result into the caller's output (same dtype and shape), so that a
// recording writes where the engine reads.
void call_into_outputs(const ResultsFn& produce, const std::string& source, cairn_tensor* const* outputs,
                       size_t n_outputs, gpu::VulkanDevice& d, const char* what) {
  std::vector<cairn_tensor*> results(n_outputs, nullptr);
  auto free_results = [&] {
    for (cairn_tensor* r : results) cairn_tensor_free(r);
  };
  try {
    if (cairn_status* st = produce(results.data(), n_outputs))
      capi::raise_user_status(st);  // CAIRN_API_END puts `what` in front
    for (size_t i = 0; i < n_outputs; ++i) {
      if (!results[i]) raise(Code::InvalidArgument, "{}: {} left output {} unset", what, source, i);
      const Tensor& r = results[i]->t;
      const Tensor& o = outputs[i]->t;
      if (r.dtype() != o.dtype() || r.shape() != o.shape())
        raise(Code::InvalidArgument, "{}: output {} is {}, but {} returns {} there", what, i, o.debug_string(), source,
              r.debug_string());
      if (r.device() != &d)
        raise(Code::InvalidArgument, "{}: {} returns output {} on {}, not on {}", what, source, i,
              r.device() ? r.device()->name() : "no device", d.name());
      if (r.nbytes() > 0) d.copy(*r.buffer(), 0, *o.buffer(), 0, r.nbytes());
    }
  } catch (...) {
    free_results();
    throw;
  }
  free_results();
}

// Captures `produce` (named `source`) and the copies into `outputs` as a new recording in `out`.
// `refusals_name` is what a refusal during the capture names (the C function, and the compiled
// function when there is one).
void capture_recording(gpu::VulkanDevice& d, const ResultsFn& produce, const std::string& source,
                       cairn_tensor* const* outputs, size_t n_outputs, const char* what,
                       const std::string& refusals_name, cairn_vulkan_recording** out) {
  auto handle = std::make_unique<cairn_vulkan_recording>();
  handle->rec = d.capture([&] { call_into_outputs(produce, source, outputs, n_outputs, d, what); },
                          refusals_name.c_str());
  *out = handle.release();
}

// An eager capture's nodes, a frame budget's unit: each eager op the body runs on the capturing
// thread is one node of the recording, named by its op. Compiled functions the body calls through
// cairn_function_call report their own nodes; a replay inside an eager op (a call op) belongs to
// that op's node. Installed from inside the capture, where this thread's node observer is the
// recording.
class EagerNodes final : public DispatchHook {
 public:
  explicit EagerNodes(Context& ctx)
      : ctx_(ctx), observer_(graph::exchange_node_observer(nullptr)), thread_(std::this_thread::get_id()) {
    graph::exchange_node_observer(observer_);
    ctx_.add_hook(this);
  }
  ~EagerNodes() override { ctx_.remove_hook(this); }
  EagerNodes(const EagerNodes&) = delete;
  EagerNodes& operator=(const EagerNodes&) = delete;

  bool before(Context&, OpCall& call) override {
    if (!mine() || depth_++ > 0) return false;
    observer_->node_begins(call.def.name);
    graph::exchange_node_observer(nullptr);  // nested replays are this node's work
    return false;
  }
  // An op that threw sees no after(): its node stays open and the capture's later commands join it
  // (still covered once; a failed op fails the capture unless the body handles it).
  void after(Context&, const OpCall&) override {
    if (!mine() || depth_ == 0 || --depth_ > 0) return;
    graph::exchange_node_observer(observer_);
    observer_->node_ends();
  }

 private:
  bool mine() const { return observer_ != nullptr && std::this_thread::get_id() == thread_; }
  Context& ctx_;
  graph::NodeObserver* const observer_;
  const std::thread::id thread_;
  int depth_ = 0;
};

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

cairn_status* cairn_vulkan_tensor_wrap(cairn_context* ctx, void* device, uint64_t buffer, uint64_t offset,
                                       uint64_t size, cairn_dtype dtype, const int64_t* shape, size_t rank,
                                       cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_tensor_wrap";
  require(out, fn, "out");
  *out = nullptr;
  gpu::VulkanDevice& d = engine_device(ctx, fn);
  // A VkBuffer does not say which VkDevice made it: the caller does, and it must be the context's.
  if (device != ctx->ctx->gpu_options().vk_device)
    raise(Code::InvalidArgument, "{}: the buffer's VkDevice is not the context's (the engine's device of external mode)",
          fn);
  DType t = static_cast<DType>(capi::enum_bits(dtype));
  if (!dtype_is_valid(t)) raise(Code::InvalidArgument, "{}: unknown dtype {}", fn, capi::enum_bits(dtype));
  Shape s = Shape::from(shape, rank, fn);
  *out = capi::new_tensor(d.wrap(handle_from<VkBuffer>(buffer), offset, size, t, s, fn));
  CAIRN_API_END
}

cairn_status* cairn_vulkan_tensor_buffer(const cairn_tensor* t, uint64_t* buffer, uint64_t* offset, uint64_t* size) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_tensor_buffer";
  require(t, fn, "t");
  require(buffer, fn, "buffer");
  require(offset, fn, "offset");
  require(size, fn, "size");
  Device* d = t->t.device();
  if (!d || d->kind() != DeviceKind::Vulkan)
    raise(Code::InvalidArgument, "{}: the tensor is on {}, not a Vulkan device", fn, d ? d->name() : "no device");
  *buffer = *offset = *size = 0;
  if (t->t.nbytes() == 0) return nullptr;  // no memory behind an empty tensor
  *buffer = handle_bits(gpu::vulkan(*d).vk_buffer(*t->t.buffer(), offset));
  *size = t->t.nbytes();
  CAIRN_API_END
}

cairn_status* cairn_vulkan_wait_semaphores(cairn_context* ctx, size_t count, const uint64_t* semaphores,
                                           const uint64_t* values) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_wait_semaphores";
  gpu::VulkanDevice& d = engine_device(ctx, fn);
  if (count > 0) {
    require(semaphores, fn, "semaphores");
    require(values, fn, "values");
  }
  std::vector<gpu::TimelinePoint> points(count);
  for (size_t i = 0; i < count; ++i) points[i] = {handle_from<VkSemaphore>(semaphores[i]), values[i]};
  d.wait_semaphores(points, fn);
  CAIRN_API_END
}

cairn_status* cairn_vulkan_signal_semaphore(cairn_context* ctx, uint64_t semaphore, uint64_t value) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_signal_semaphore";
  engine_device(ctx, fn).signal_semaphore({handle_from<VkSemaphore>(semaphore), value}, fn);
  CAIRN_API_END
}

cairn_status* cairn_vulkan_use_engine_features(cairn_context* ctx, const void* features) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_vulkan_use_engine_features";
  engine_device(ctx, fn).use_engine_features(features, fn);
  CAIRN_API_END
}

cairn_status* cairn_vulkan_recording_create(cairn_context* ctx, cairn_function* fn, cairn_tensor* const* inputs,
                                            size_t n_inputs, cairn_tensor* const* outputs, size_t n_outputs,
                                            cairn_vulkan_recording** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_vulkan_recording_create";
  require(out, what, "out");
  *out = nullptr;
  gpu::VulkanDevice& d = engine_device(ctx, what);
  require(fn, what, "fn");
  check_bindings(inputs, n_inputs, outputs, n_outputs, d, what);
  refuse_side_effects(fn, inputs, n_inputs, n_outputs, what);
  auto call = [&](cairn_tensor** results, size_t n) { return cairn_function_call(fn, inputs, n_inputs, results, n); };
  const std::string source = "function '" + fn->fn->name() + "'";
  capture_recording(d, call, source, outputs, n_outputs, what, std::string(what) + " of " + source, out);
  CAIRN_API_END
}

size_t cairn_vulkan_recording_size(const cairn_vulkan_recording* rec) { return rec ? rec->rec->size() : 0; }

cairn_status* cairn_vulkan_recording_record(const cairn_vulkan_recording* rec, void* command_buffer, size_t first,
                                            size_t max_commands, size_t* next) {
  CAIRN_API_BEGIN
  const char* what = "cairn_vulkan_recording_record";
  require(rec, what, "rec");
  require(command_buffer, what, "command_buffer");
  const size_t n = rec->rec->size();
  if (first > n) raise(Code::OutOfRange, "{}: first is {}, but the recording has {} commands", what, first, n);
  if (max_commands == 0) raise(Code::InvalidArgument, "{}: max_commands is 0", what);
  const size_t count = std::min(max_commands, n - first);
  rec->rec->encode(static_cast<VkCommandBuffer>(command_buffer), first, count);
  if (next) *next = first + count == n ? 0 : first + count;
  CAIRN_API_END
}

void cairn_vulkan_recording_free(cairn_vulkan_recording* rec) { delete rec; }

// ---- eager recording scope ------------------------------------------------------------------

cairn_status* cairn_vulkan_recording_capture(cairn_context* ctx, cairn_function_fn body, void* user_data,
                                             cairn_tensor* const* inputs, size_t n_inputs,
                                             cairn_tensor* const* outputs, size_t n_outputs,
                                             cairn_vulkan_recording** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_vulkan_recording_capture";
  require(out, what, "out");
  *out = nullptr;
  gpu::VulkanDevice& d = engine_device(ctx, what);
  require(body, what, "body");
  check_bindings(inputs, n_inputs, outputs, n_outputs, d, what);
  auto run_body = [&](cairn_tensor** results, size_t n) {
    EagerNodes nodes(*ctx->ctx);
    return body(user_data, ctx, inputs, n_inputs, results, n);
  };
  capture_recording(d, run_body, "the body", outputs, n_outputs, what, what, out);
  CAIRN_API_END
}

// ---- frame budgets ----------------------------------------------------------------------------

size_t cairn_vulkan_recording_node_count(const cairn_vulkan_recording* rec) {
  return rec ? rec->rec->nodes().size() : 0;
}

cairn_status* cairn_vulkan_recording_node(const cairn_vulkan_recording* rec, size_t index, const char** op,
                                          size_t* first_command, size_t* commands, uint64_t* gpu_ns) {
  CAIRN_API_BEGIN
  const char* what = "cairn_vulkan_recording_node";
  require(rec, what, "rec");
  const auto& nodes = rec->rec->nodes();
  if (index >= nodes.size())
    raise(Code::OutOfRange, "{}: index is {}, but the recording has {} nodes", what, index, nodes.size());
  const gpu::Recording::Node& n = nodes[index];
  if (op) *op = n.op.c_str();
  if (first_command) *first_command = n.first;
  if (commands) *commands = n.commands;
  if (gpu_ns) *gpu_ns = n.gpu_ns;
  CAIRN_API_END
}

cairn_status* cairn_vulkan_recording_measure(cairn_vulkan_recording* rec, uint32_t runs) {
  CAIRN_API_BEGIN
  const char* what = "cairn_vulkan_recording_measure";
  require(rec, what, "rec");
  if (runs == 0 || runs > 100) raise(Code::InvalidArgument, "{}: runs is {}, expected 1 to 100", what, runs);
  rec->rec->measure(runs, what);
  CAIRN_API_END
}

cairn_status* cairn_vulkan_recording_chunk(const cairn_vulkan_recording* rec, cairn_vulkan_budget kind,
                                           uint64_t budget, size_t first, size_t* commands) {
  CAIRN_API_BEGIN
  const char* what = "cairn_vulkan_recording_chunk";
  require(rec, what, "rec");
  require(commands, what, "commands");
  if (budget == 0) raise(Code::InvalidArgument, "{}: the budget is 0", what);
  gpu::Budget k;
  switch (kind) {
    case CAIRN_VULKAN_BUDGET_NODES:
      k = gpu::Budget::Nodes;
      break;
    case CAIRN_VULKAN_BUDGET_MICROSECONDS:
      k = gpu::Budget::Microseconds;
      if (!rec->rec->measured())
        raise(Code::FailedPrecondition,
              "{}: a budget of microseconds needs the nodes' GPU times: call cairn_vulkan_recording_measure first",
              what);
      break;
    default:
      raise(Code::InvalidArgument, "{}: unknown budget kind {}", what, capi::enum_bits(kind));
  }
  *commands = rec->rec->chunk(k, budget, first, what);
  CAIRN_API_END
}

}  // extern "C"
