// The context: devices, the default device, allocator hooks, the thread pool, the log sink, the
// RNG seed and the dispatch hooks. Everything is created from a context; a process may hold several.
// A context is refcounted: tensors keep its devices alive, and objects keep the context alive.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
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
  std::string device = "cpu";  // "cpu", "cpu:N" (a split CPU), "vulkan", "vulkan:N"
  int num_threads = 0;         // intra-op threads including the caller; 0 = all cores
  int inter_op_threads = 0;    // threads running independent work (replicas); 0 = all cores
  AllocatorHooks allocator = default_allocator();
  LogSink log;
  uint64_t seed = 0;           // base of every random op's seed
  GpuOptions gpu;
};

// One memory heap of a physical device. `budget` and `usage` come from the driver's memory budget
// (VK_EXT_memory_budget) where it has one and reports sane values; otherwise budget == size and
// usage == 0.
struct MemoryHeap {
  uint64_t size = 0;
  uint64_t budget = 0;
  uint64_t usage = 0;
  bool device_local = false;
};

// A device the machine has (tf.config.list_physical_devices): the CPU, each Vulkan device.
struct PhysicalDevice {
  std::string name;         // "cpu:0", "vulkan:0" (the driver's order)
  std::string type;         // "CPU", "VULKAN"
  std::string description;  // "x86_64, 2 cores", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string device_type;  // "cpu" for the host; Vulkan's "discrete", "integrated", "virtual", "cpu", "other"
  uint64_t memory = 0;      // bytes a device may hold: RAM for the CPU, the largest device-local heap's budget
  std::vector<MemoryHeap> heaps;
  uint32_t queues = 1;      // compute queues (logical devices on one physical device take one each)
};

// How much a Vulkan application prefers a device of this type ("discrete", "integrated", "virtual",
// "cpu", "other"): lower is preferred; unknown types last. The bare name "vulkan" picks this way.
int device_type_rank(std::string_view device_type);

// One logical device of a split physical device (tf.config.LogicalDeviceConfiguration).
struct LogicalDeviceConfig {
  uint64_t memory_limit = 0;  // bytes its tensors may hold; 0 = no limit
};

// What a backend gets to create one logical device.
struct LogicalDeviceSpec {
  std::string name;            // "vulkan:1": logical names count the visible logical devices of a type
  std::string physical;        // "vulkan:0": the physical device it is made from
  uint32_t physical_index = 0; // index among the backend's physical devices
  uint32_t split_index = 0;    // which of the physical device's logical devices (0 when it is not split)
  uint32_t split_count = 1;    // how many logical devices share the physical device
  uint64_t memory_limit = 0;   // 0 = none
  bool memory_growth = true;   // false: reserve the limit (or the budget) when the device is created
};

// A backend other than the CPU (gpu/vulkan) registers its physical devices and a factory.
struct DeviceBackend {
  const char* prefix;  // "vulkan": serves "vulkan" and "vulkan:N"
  // The backend's physical devices, named "<prefix>:<index>". Throws Unavailable, saying why, when
  // there is no loader or driver (the context then lists none and names the reason on use).
  std::vector<PhysicalDevice> (*list)(Context& ctx);
  // Creates one logical device, or throws (Unavailable when there is no driver).
  Ref<Device> (*create)(Context& ctx, const LogicalDeviceSpec& spec);
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

// Devices as tf.config sees them. A context's device configuration (visible devices, logical
// devices, memory growth, thread counts) may change until the context initializes its devices: the
// first tensor, op, device lookup or list_logical_devices(). After that a change is a
// FailedPrecondition that says so, as TensorFlow's "cannot be modified after being initialized".
// Physical devices are "cpu:0" and "vulkan:N" in the driver's order. Logical devices are what
// tensors live on: "cpu" (or "cpu:0".."cpu:N-1" when the CPU is split) and "vulkan:0".."vulkan:K-1",
// counting the visible Vulkan devices and their splits in order; without splits or hidden devices
// "vulkan:N" is physical device N, as before.
class Context : public RefCounted {
 public:
  explicit Context(ContextOptions options);
  ~Context() override;

  Device& cpu() {
    if (!initialized_.load(std::memory_order_acquire)) initialize_devices();
    return *cpu_;
  }
  Device& default_device() {
    if (!initialized_.load(std::memory_order_acquire)) initialize_devices();
    if (Device* d = default_device_.load(std::memory_order_acquire)) return *d;
    return resolve_default_device();
  }
  // A logical device by name: "cpu", "cpu:N", "vulkan" (the preferred one), "vulkan:N". Creates
  // backend devices on first use. Throws NotFound (naming the devices there are) / Unavailable.
  Device& device(std::string_view spec);

  // --- configuration (tf.config) ---
  // Every physical device: the CPU first, then each backend's. Lists the Vulkan driver's devices,
  // which loads the driver on first call.
  std::vector<PhysicalDevice> physical_devices();
  // The physical devices logical devices are made from; the CPU is always visible. Each name must
  // be a physical device ("cpu:0", "vulkan:1"). The environment variable CAIRN_VISIBLE_DEVICES
  // (names separated by commas) sets it when the context is created.
  void set_visible_devices(const std::vector<std::string>& physical);
  std::vector<std::string> visible_devices();
  // Grow memory on demand (the default) or reserve the logical devices' limits up front: Vulkan
  // only (the CPU allocates from the host's allocator).
  void set_memory_growth(std::string_view physical, bool grow);
  bool memory_growth(std::string_view physical);
  // Splits a physical device into configs.size() logical devices (one config: a memory limit for
  // the whole device). Once per physical device; the limits together must fit its memory.
  void set_logical_devices(std::string_view physical, const std::vector<LogicalDeviceConfig>& configs);
  std::vector<LogicalDeviceConfig> logical_device_configs(std::string_view physical);
  // Intra-op threads (one op's work, counting the caller) and inter-op threads (independent work:
  // what AUTOTUNE means for datasets' parallel map, interleave and prefetch); 0 = all cores.
  void set_threads(int intra_op, int inter_op);
  int intra_op_threads() const { return options_.num_threads; }
  int inter_op_threads() const { return options_.inter_op_threads; }
  // The logical devices, CPU first (initializes the devices).
  std::vector<LogicalDeviceSpec> logical_devices();
  bool devices_initialized() const { return initialized_.load(std::memory_order_acquire); }

  ThreadPool& pool();
  const LogSink& log() const { return options_.log; }
  uint64_t seed() const { return options_.seed; }
  const GpuOptions& gpu_options() const { return options_.gpu; }
  // The backend devices created so far (not the CPU).
  std::vector<Ref<Device>> backend_devices();
  // Every logical device created so far, the CPU's first.
  std::vector<Ref<Device>> created_devices();
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
  struct Backend;
  // Freezes the configuration and makes the CPU's logical devices (first use of any device).
  void initialize_devices();
  Device& resolve_default_device();
  // Throws FailedPrecondition naming `fn` once the devices are initialized (config_mu_ held).
  void check_configurable(const char* fn) const;
  // The backend serving `prefix`, its physical devices listed (config_mu_ held); null if none.
  Backend* backend(std::string_view prefix);
  // The index of physical device `name` ("vulkan:1") in its backend, or throws NotFound naming `fn`.
  std::pair<Backend*, uint32_t> find_physical(std::string_view name, const char* fn);
  // The logical devices of one backend (config_mu_ held, devices initialized).
  std::vector<LogicalDeviceSpec> backend_logical(Backend& b);

  ContextOptions options_;
  std::atomic<bool> initialized_{false};
  mutable std::mutex config_mu_;  // the configuration below and initialization
  std::vector<std::unique_ptr<Backend>> backends_;
  std::optional<std::vector<std::string>> visible_;  // physical names; nullopt = all
  std::vector<LogicalDeviceConfig> cpu_split_;       // empty: one "cpu" device
  std::unordered_map<std::string, std::vector<LogicalDeviceConfig>> splits_;  // physical -> configs
  std::unordered_map<std::string, bool> growth_;     // physical -> memory growth
  std::vector<Ref<Device>> cpus_;                    // the CPU's logical devices
  Device* cpu_ = nullptr;                            // cpus_[0]
  std::atomic<Device*> default_device_{nullptr};
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
