// The context: devices, the default device, allocator hooks, the thread pool, the log sink, the
// RNG seed and the dispatch hooks. Everything is created from a context; a process may hold several.
// A context is refcounted: tensors keep its devices alive, and objects keep the context alive.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/core/allocator.h"
#include "runtime/core/logging.h"
#include "runtime/core/refcount.h"
#include "runtime/core/thread_pool.h"
#include "runtime/tensor/device.h"

namespace cairn {

class Context;
class Tensor;
class Variable;
struct OpCall;

// Settings that GPU backends (gpu/vulkan) read; runtime/ never interprets them.
struct GpuOptions {
  // An engine's own Vulkan objects, passed as opaque handles (VkInstance, VkPhysicalDevice,
  // VkDevice, VkQueue). Either all of instance/physical_device/device/queue are set or none.
  // Cairn uses them and destroys none of them.
  void* vk_instance = nullptr;
  void* vk_physical_device = nullptr;
  void* vk_device = nullptr;
  uint32_t vk_queue_family = 0;
  void* vk_queue = nullptr;
  uint64_t memory_limit = 0;  // bytes of device memory per device; 0 = no limit
  bool cpu_fallback = false;  // ops without a GPU kernel for a dtype run on the CPU (counted)
};

struct ContextOptions {
  std::string device = "cpu";  // "cpu", "vulkan", "vulkan:N"
  int num_threads = 0;         // intra-op threads including the caller; 0 = all cores
  AllocatorHooks allocator = default_allocator();
  LogSink log;
  uint64_t seed = 0;           // base of every random op's seed
  GpuOptions gpu;
};

// A backend other than the CPU (gpu/vulkan) registers a factory for its device names.
struct DeviceBackend {
  const char* prefix;  // "vulkan": serves "vulkan" and "vulkan:N"
  // Creates the device for `spec`, or throws (Unavailable when there is no driver).
  Ref<Device> (*create)(Context& ctx, std::string_view spec);
};
void register_device_backend(const DeviceBackend& backend);

// Intercepts eager ops: the gradient tape observes them, graph capture replaces them. Hooks see
// every thread's ops; a hook that cares about one thread (the tape) filters by thread itself.
class DispatchHook {
 public:
  virtual ~DispatchHook() = default;
  // Returns true when the hook produced the outputs itself (the kernel does not run).
  virtual bool before(Context&, OpCall&) { return false; }
  virtual void after(Context&, const OpCall&) {}
  // A variable's value was read (Variable::read): the tape watches trainable variables this way.
  virtual void variable_read(Context&, const Variable&, const Tensor&) {}
  // Graph capture replaces variable reads and writes with graph nodes: `read_variable` returns
  // true when it set *value (a symbolic read), `assign_variable` when it recorded the write.
  virtual bool read_variable(Context&, const Variable&, Tensor*) { return false; }
  virtual bool assign_variable(Context&, Variable&, const Tensor&) { return false; }
  // Whether a gradient this hook computes later would flow through `t` (the tape: `t` depends on
  // something it watches, on this thread). Traced control flow refuses what it cannot
  // differentiate yet instead of losing the gradient.
  virtual bool differentiates(const Tensor&) const { return false; }

 private:
  friend class Context;
  friend class HookSnapshot;
  // Snapshots (calls in flight on any thread) holding this hook; remove_hook waits for zero.
  std::atomic<int> in_use_{0};
};

// The hooks installed on a context at one moment. While the snapshot lives, each of its hooks
// stays valid: Context::remove_hook waits for the snapshots holding the hook to go away, so a tape
// destroyed on one thread is never called by an op still running on another.
class HookSnapshot {
 public:
  explicit HookSnapshot(std::vector<DispatchHook*> hooks) : hooks_(std::move(hooks)) {}
  ~HookSnapshot() {
    for (DispatchHook* h : hooks_) h->in_use_.fetch_sub(1, std::memory_order_release);
  }
  HookSnapshot(const HookSnapshot&) = delete;
  HookSnapshot& operator=(const HookSnapshot&) = delete;
  std::vector<DispatchHook*>::const_iterator begin() const { return hooks_.begin(); }
  std::vector<DispatchHook*>::const_iterator end() const { return hooks_.end(); }

 private:
  std::vector<DispatchHook*> hooks_;
};

// tf.init_scope: while one lives on a thread, that thread's ops run eagerly even inside a function
// trace. Layers and optimizers create their variables (and initial values) under one.
class EagerScope {
 public:
  EagerScope() { ++depth(); }
  ~EagerScope() { --depth(); }
  EagerScope(const EagerScope&) = delete;
  EagerScope& operator=(const EagerScope&) = delete;
  static bool active() { return depth() > 0; }

 private:
  static int& depth() {
    static thread_local int d = 0;
    return d;
  }
};

// tf.data's per-element random streams (runtime/data): while a scope lives on a thread, each random
// op call with seeds 0,0 on that thread takes its seed from (key, n), n counting the calls inside
// the scope, instead of from the context's call counter. An element's random numbers then depend
// only on its key, whatever thread computes it and whatever else runs at the same time. Graph
// replays run their nodes on the calling thread, so compiled functions draw from the scope too.
// Scopes nest (the innermost wins).
class RandomStreamScope {
 public:
  explicit RandomStreamScope(uint64_t key);
  ~RandomStreamScope();
  RandomStreamScope(const RandomStreamScope&) = delete;
  RandomStreamScope& operator=(const RandomStreamScope&) = delete;
  // The innermost scope on this thread, or null.
  static RandomStreamScope* current();
  // The seed of the next random op call in this scope.
  uint64_t next_seed();

 private:
  uint64_t key_;
  uint64_t calls_ = 0;
  RandomStreamScope* outer_;
};

class Context : public RefCounted {
 public:
  explicit Context(ContextOptions options);
  ~Context() override;

  Device& cpu() { return *cpu_; }
  Device& default_device() { return *default_device_; }
  // "cpu", "vulkan", "vulkan:N": creates backend devices on first use. Throws NotFound/Unavailable.
  Device& device(std::string_view spec);

  ThreadPool& pool();
  const LogSink& log() const { return options_.log; }
  uint64_t seed() const { return options_.seed; }
  const GpuOptions& gpu_options() const { return options_.gpu; }
  // The backend devices created so far (not the CPU).
  std::vector<Ref<Device>> backend_devices();
  // A fresh seed for one random op call: mixes the context seed with a call counter, so a
  // context replays the same sequence for the same seed; inside a RandomStreamScope, the scope's.
  uint64_t next_random_seed();

  // "dense", then "dense_1", "dense_2", ...: default names for layers and other objects, unique
  // within this context (Keras' backend.unique_object_name).
  std::string unique_name(std::string_view base);

  void add_hook(DispatchHook* hook);
  // Removes `hook`, waiting until no call on another thread still uses it (see HookSnapshot).
  // Never call it from inside one of the hook's own callbacks.
  void remove_hook(DispatchHook* hook);
  bool has_hooks() const { return num_hooks_.load(std::memory_order_acquire) != 0; }
  // The installed hooks, kept valid for the snapshot's life.
  HookSnapshot hooks() const;

 private:
  ContextOptions options_;
  Ref<Device> cpu_;
  Device* default_device_ = nullptr;
  std::mutex devices_mu_;
  std::vector<Ref<Device>> devices_;  // backend devices created so far
  std::once_flag pool_once_;
  std::unique_ptr<ThreadPool> pool_;
  std::atomic<ThreadPool*> pool_ready_{nullptr};  // fast path once the pool exists
  std::atomic<uint64_t> random_calls_{0};
  mutable std::mutex hooks_mu_;
  std::vector<DispatchHook*> hooks_;
  std::atomic<int> num_hooks_{0};
  std::mutex names_mu_;
  std::unordered_map<std::string, int> name_counts_;

  // ---- Placement (device scopes and soft placement: runtime/eager/device_scope.h) ----
 public:
  // Soft placement (tf.config.set_soft_device_placement), off by default. On: an op with inputs
  // runs on the innermost device scope's device, else on its first input's, and every input on
  // another device is copied there (counted, logged at debug level, a "copy" profiler event). Off:
  // an op runs where its inputs are, and inputs on different devices are an error.
  void set_soft_placement(bool on) { soft_placement_.store(on, std::memory_order_relaxed); }
  bool soft_placement() const { return soft_placement_.load(std::memory_order_relaxed); }
  // The inputs soft placement has copied to another device so far.
  uint64_t auto_copies() const { return auto_copies_.load(std::memory_order_relaxed); }
  void count_auto_copy() { auto_copies_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<bool> soft_placement_{false};
  std::atomic<uint64_t> auto_copies_{0};
};

}  // namespace cairn
