#include "runtime/eager/context.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/cpu/cpu_device.h"

namespace cairn {

namespace {
std::mutex& backends_mu() {
  static std::mutex mu;
  return mu;
}
std::vector<DeviceBackend>& backends() {
  static std::vector<DeviceBackend>* list = new std::vector<DeviceBackend>();
  return *list;
}
}  // namespace

void register_device_backend(const DeviceBackend& backend) {
  std::lock_guard<std::mutex> lock(backends_mu());
  backends().push_back(backend);
}

Context::Context(ContextOptions options) : options_(std::move(options)) {
  if (!options_.allocator.allocate || !options_.allocator.deallocate)
    raise(Code::InvalidArgument, "cairn_context_create: allocator hooks need both allocate and deallocate");
  auto* cpu = new CpuDevice(options_.allocator);
  cpu_ = Ref<Device>::adopt(cpu);
  try {
    default_device_ = &device(options_.device.empty() ? "cpu" : options_.device);
  } catch (...) {
    cpu->disarm_release();  // a failed creation calls no release hook (see cairn.h)
    throw;
  }
  options_.log.log(LogLevel::Info, fmt::format("context created: default device {}, {} intra-op threads",
                                               default_device_->name(),
                                               options_.num_threads > 0 ? options_.num_threads
                                                                        : static_cast<int>(std::thread::hardware_concurrency())));
}

Context::~Context() {
  if (options_.log.release) options_.log.release(options_.log.user_data);
}

Device& Context::device(std::string_view spec) {
  if (spec == "cpu" || spec == "cpu:0") return *cpu_;
  std::lock_guard<std::mutex> lock(devices_mu_);
  for (auto& d : devices_)
    if (d->name() == spec || (spec.find(':') == std::string_view::npos && d->name().rfind(spec, 0) == 0)) return *d;
  std::string_view prefix = spec.substr(0, spec.find(':'));
  DeviceBackend found{nullptr, nullptr};
  {
    std::lock_guard<std::mutex> blk(backends_mu());
    for (const auto& b : backends())
      if (prefix == b.prefix) found = b;
  }
  if (!found.create) {
    if (prefix == "vulkan") raise(Code::Unavailable, "device \"{}\": this build has no Vulkan backend", spec);
    raise(Code::NotFound, "device \"{}\": unknown device (expected \"cpu\", \"vulkan\" or \"vulkan:N\")", spec);
  }
  devices_.push_back(found.create(*this, spec));
  return *devices_.back();
}

std::vector<Ref<Device>> Context::backend_devices() {
  std::lock_guard<std::mutex> lock(devices_mu_);
  return devices_;
}

ThreadPool& Context::pool() {
  if (ThreadPool* p = pool_ready_.load(std::memory_order_acquire)) return *p;
  std::call_once(pool_once_, [this] {
    pool_ = std::make_unique<ThreadPool>(options_.num_threads);
    pool_ready_.store(pool_.get(), std::memory_order_release);
  });
  return *pool_;
}

namespace {
// splitmix64 of (base, n): distinct, well-mixed seeds for consecutive n.
uint64_t mix_seed(uint64_t base, uint64_t n) {
  uint64_t z = base + 0x9e3779b97f4a7c15ull * (n + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

thread_local RandomStreamScope* t_random_scope = nullptr;
}  // namespace

RandomStreamScope::RandomStreamScope(uint64_t key) : key_(key), outer_(t_random_scope) { t_random_scope = this; }
RandomStreamScope::~RandomStreamScope() { t_random_scope = outer_; }
RandomStreamScope* RandomStreamScope::current() { return t_random_scope; }
uint64_t RandomStreamScope::next_seed() { return mix_seed(key_, calls_++); }

uint64_t Context::next_random_seed() {
  if (RandomStreamScope* scope = t_random_scope) return scope->next_seed();
  return mix_seed(options_.seed, random_calls_.fetch_add(1, std::memory_order_relaxed));
}

void Context::add_hook(DispatchHook* hook) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  hooks_.push_back(hook);
  num_hooks_.store(static_cast<int>(hooks_.size()), std::memory_order_release);
}

void Context::remove_hook(DispatchHook* hook) {
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    hooks_.erase(std::remove(hooks_.begin(), hooks_.end(), hook), hooks_.end());
    num_hooks_.store(static_cast<int>(hooks_.size()), std::memory_order_release);
  }
  // New snapshots no longer see the hook; wait for the ones that do (ops in flight elsewhere).
  while (hook->in_use_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
}

HookSnapshot Context::hooks() const {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  for (DispatchHook* h : hooks_) h->in_use_.fetch_add(1, std::memory_order_relaxed);
  return HookSnapshot(hooks_);
}

std::string Context::unique_name(std::string_view base) {
  std::lock_guard<std::mutex> lock(names_mu_);
  int n = name_counts_[std::string(base)]++;
  return n == 0 ? std::string(base) : std::string(base) + "_" + std::to_string(n);
}

}  // namespace cairn
