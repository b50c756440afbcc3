#include "runtime/eager/context.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
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

struct Context::Backend {
  DeviceBackend api;
  bool listed = false;
  std::vector<PhysicalDevice> physical;
  std::string unavailable;  // why the list is empty ("Vulkan loader ... not found")
};

namespace {

constexpr const char* kCpuPhysical = "cpu:0";

// "vulkan:12" -> 12; "vulkan" -> nullopt; throws InvalidArgument for "vulkan:x".
std::optional<uint32_t> parse_index(std::string_view spec, const char* fn) {
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string digits(spec.substr(colon + 1));
  char* end = nullptr;
  long n = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || n < 0 || n > 1 << 20)
    raise(Code::InvalidArgument, "{}: device \"{}\": expected \"{}:N\" with N a device index", fn, spec,
          spec.substr(0, colon));
  return static_cast<uint32_t>(n);
}

PhysicalDevice describe_cpu() {
  PhysicalDevice p;
  p.name = kCpuPhysical;
  p.type = "CPU";
  p.device_type = "cpu";
  struct utsname u {};
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  p.description = fmt::format("{}, {} core{}", uname(&u) == 0 ? u.machine : "host", cores, cores == 1 ? "" : "s");
  p.memory = host_memory_bytes();
  p.heaps.push_back({p.memory, p.memory, 0, true});
  return p;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::string human_bytes(uint64_t n) {
  if (n >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(n) / (1ull << 30));
  return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1ull << 20));
}

}  // namespace

int device_type_rank(std::string_view device_type) {
  constexpr std::string_view kOrder[] = {"discrete", "integrated", "virtual", "cpu", "other"};
  for (size_t i = 0; i < std::size(kOrder); ++i)
    if (device_type == kOrder[i]) return static_cast<int>(i);
  return static_cast<int>(std::size(kOrder));
}

Context::Context(ContextOptions options) : options_(std::move(options)) {
  if (!options_.allocator.allocate || !options_.allocator.deallocate)
    raise(Code::InvalidArgument, "cairn_context_create: allocator hooks need both allocate and deallocate");
  if (options_.device.empty()) options_.device = "cpu";
  {
    std::lock_guard<std::mutex> lock(backends_mu());
    for (const auto& b : backends()) backends_.push_back(std::make_unique<Backend>(Backend{b, false, {}, {}}));
  }
  const GpuOptions& gpu = options_.gpu;
  if (gpu.vk_device && (!gpu.vk_instance || !gpu.vk_physical_device || !gpu.vk_queue))
    raise(Code::InvalidArgument,
          "vulkan: external mode needs VkInstance, VkPhysicalDevice, VkDevice and VkQueue together");
  // Check the default device's name now (its backend and driver exist); make it on first use, so
  // that the configuration may still change.
  std::string_view spec = options_.device;
  std::string_view prefix = spec.substr(0, spec.find(':'));
  // The default device must exist as the machine is now: devices that a later split makes are
  // reached with device scopes and copies.
  std::optional<uint32_t> index = parse_index(spec, "cairn_context_create");
  if (prefix == "cpu" && index.value_or(0) != 0)
    raise(Code::NotFound, "device \"{}\": a new context has one CPU device, \"cpu\"", spec);
  if (prefix != "cpu") {
    std::lock_guard<std::mutex> lock(config_mu_);
    Backend* b = backend(prefix);
    if (!b) {
      if (prefix == "vulkan") raise(Code::Unavailable, "device \"{}\": this build has no Vulkan backend", spec);
      raise(Code::NotFound, "device \"{}\": unknown device (expected \"cpu\", \"vulkan\" or \"vulkan:N\")", spec);
    }
    if (b->physical.empty()) raise(Code::Unavailable, "device \"{}\": {}", spec, b->unavailable);
    if (index && *index >= b->physical.size())
      raise(Code::NotFound, "device \"{}\": there are {} {} device(s)", spec, b->physical.size(), prefix);
  }
  if (const char* env = std::getenv("CAIRN_VISIBLE_DEVICES")) {
    std::vector<std::string> names;
    std::string_view rest = env;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      if (!name.empty()) names.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    try {
      set_visible_devices(names);
    } catch (const Error& e) {
      raise(e.code(), "CAIRN_VISIBLE_DEVICES=\"{}\": {}", env, e.message());
    }
  }
  options_.log.log(LogLevel::Info, fmt::format("context created: default device {}, {} intra-op threads",
                                               options_.device,
                                               options_.num_threads > 0 ? options_.num_threads
                                                                        : static_cast<int>(std::thread::hardware_concurrency())));
}

Context::~Context() {
  // Without devices, no CPU device will call the allocator's release hook: call it here.
  if (cpus_.empty() && options_.allocator.release) options_.allocator.release(options_.allocator.user_data);
  if (options_.log.release) options_.log.release(options_.log.user_data);
}

Context::Backend* Context::backend(std::string_view prefix) {
  for (auto& b : backends_) {
    if (prefix != b->api.prefix) continue;
    if (!b->listed) {
      try {
        b->physical = b->api.list(*this);
      } catch (const Error& e) {
        b->unavailable = e.message();
      }
      if (b->physical.empty() && b->unavailable.empty())
        b->unavailable = fmt::format("the {} driver reports no devices", b->api.prefix);
      b->listed = true;
    }
    return b.get();
  }
  return nullptr;
}

std::pair<Context::Backend*, uint32_t> Context::find_physical(std::string_view name, const char* fn) {
  std::string_view prefix = name.substr(0, name.find(':'));
  std::optional<uint32_t> index = parse_index(name, fn);
  if (!index)
    raise(Code::InvalidArgument, "{}: \"{}\" is not a physical device name; expected \"{}:N\" (for example \"{}:0\")",
          fn, name, prefix, prefix);
  if (prefix == "cpu") {
    if (*index != 0) raise(Code::NotFound, "{}: there is one physical CPU device, \"cpu:0\"; got \"{}\"", fn, name);
    return {nullptr, 0};
  }
  Backend* b = backend(prefix);
  if (!b) raise(Code::NotFound, "{}: unknown device \"{}\" (physical devices are \"cpu:0\" and \"vulkan:N\")", fn, name);
  if (*index >= b->physical.size())
    raise(Code::NotFound, "{}: no physical device \"{}\": there are {} {} device(s)", fn, name, b->physical.size(),
          prefix);
  return {b, *index};
}

void Context::check_configurable(const char* fn) const {
  if (initialized_.load(std::memory_order_acquire))
    raise(Code::FailedPrecondition,
          "{}: the context's devices are already initialized (by its first tensor, op or device lookup), and "
          "device configuration cannot be modified after that; configure the context right after creating it",
          fn);
}

std::vector<PhysicalDevice> Context::physical_devices() {
  std::lock_guard<std::mutex> lock(config_mu_);
  std::vector<PhysicalDevice> out{describe_cpu()};
  for (auto& b : backends_) {
    Backend* listed = backend(b->api.prefix);
    out.insert(out.end(), listed->physical.begin(), listed->physical.end());
  }
  return out;
}

void Context::set_visible_devices(const std::vector<std::string>& physical) {
  constexpr const char* fn = "set_visible_devices";
  std::lock_guard<std::mutex> lock(config_mu_);
  check_configurable(fn);
  std::vector<std::string> names{kCpuPhysical};
  for (const auto& name : physical) {
    find_physical(name, fn);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  visible_ = std::move(names);
}

std::vector<std::string> Context::visible_devices() {
  std::lock_guard<std::mutex> lock(config_mu_);
  if (visible_) return *visible_;
  std::vector<std::string> names{kCpuPhysical};
  for (auto& b : backends_)
    for (const auto& p : backend(b->api.prefix)->physical) names.push_back(p.name);
  return names;
}

void Context::set_memory_growth(std::string_view physical, bool grow) {
  constexpr const char* fn = "set_memory_growth";
  std::lock_guard<std::mutex> lock(config_mu_);
  check_configurable(fn);
  auto [b, index] = find_physical(physical, fn);
  if (!b)
    raise(Code::InvalidArgument,
          "{}: \"{}\" is the CPU; memory growth applies to Vulkan devices (the CPU allocates as it goes)", fn,
          physical);
  growth_[b->physical[index].name] = grow;
}

bool Context::memory_growth(std::string_view physical) {
  std::lock_guard<std::mutex> lock(config_mu_);
  auto [b, index] = find_physical(physical, "memory_growth");
  if (!b) return true;
  auto it = growth_.find(b->physical[index].name);
  return it == growth_.end() || it->second;
}

void Context::set_logical_devices(std::string_view physical, const std::vector<LogicalDeviceConfig>& configs) {
  constexpr const char* fn = "set_logical_devices";
  std::lock_guard<std::mutex> lock(config_mu_);
  check_configurable(fn);
  auto [b, index] = find_physical(physical, fn);
  const PhysicalDevice& p = b ? b->physical[index] : describe_cpu();
  if (configs.empty() || configs.size() > 64)
    raise(Code::InvalidArgument, "{}: {} logical devices for \"{}\"; give 1 to 64", fn, configs.size(), p.name);
  const size_t already = b ? (splits_.count(p.name) ? splits_[p.name].size() : 0) : cpu_split_.size();
  if (already)
    raise(Code::FailedPrecondition,
          "{}: \"{}\" is already configured as {} logical device(s); configure each physical device once", fn,
          p.name, already);
  uint64_t total = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    const uint64_t limit = configs[i].memory_limit;
    if (p.memory && limit > p.memory)
      raise(Code::InvalidArgument, "{}: memory_limit {} ({}) of logical device {} is more than \"{}\" has ({})", fn,
            limit, human_bytes(limit), i, p.name, human_bytes(p.memory));
    total += limit;
  }
  if (p.memory && total > p.memory)
    raise(Code::InvalidArgument, "{}: the memory limits of \"{}\"'s logical devices add up to {}, more than its {}", fn,
          p.name, human_bytes(total), human_bytes(p.memory));
  if (b)
    splits_[p.name] = configs;
  else
    cpu_split_ = configs;
}

std::vector<LogicalDeviceConfig> Context::logical_device_configs(std::string_view physical) {
  std::lock_guard<std::mutex> lock(config_mu_);
  auto [b, index] = find_physical(physical, "logical_device_configs");
  if (!b) return cpu_split_;
  auto it = splits_.find(b->physical[index].name);
  return it == splits_.end() ? std::vector<LogicalDeviceConfig>{} : it->second;
}

void Context::set_threads(int intra_op, int inter_op) {
  constexpr const char* fn = "set_threads";
  std::lock_guard<std::mutex> lock(config_mu_);
  check_configurable(fn);
  if (intra_op < 0 || inter_op < 0 || intra_op > 4096 || inter_op > 4096)
    raise(Code::InvalidArgument, "{}: thread counts must be 0 (all cores) to 4096, got intra-op {} and inter-op {}",
          fn, intra_op, inter_op);
  if (pool_ready_.load(std::memory_order_acquire))
    raise(Code::FailedPrecondition, "{}: the intra-op thread pool already runs; set threads before the first op", fn);
  options_.num_threads = intra_op;
  options_.inter_op_threads = inter_op;
}

void Context::initialize_devices() {
  std::lock_guard<std::mutex> lock(config_mu_);
  if (initialized_.load(std::memory_order_acquire)) return;
  if (cpu_split_.size() <= 1) {
    const uint64_t limit = cpu_split_.empty() ? 0 : cpu_split_[0].memory_limit;
    cpus_.push_back(Ref<Device>::adopt(new CpuDevice(options_.allocator, "cpu", limit)));
  } else {
    // The first CPU device owns the allocator hooks (and calls their release hook); the others
    // keep it alive.
    Ref<Device> first = Ref<Device>::adopt(new CpuDevice(options_.allocator, "cpu:0", cpu_split_[0].memory_limit));
    cpus_.push_back(first);
    for (size_t i = 1; i < cpu_split_.size(); ++i)
      cpus_.push_back(Ref<Device>::adopt(
          new CpuDevice(options_.allocator, fmt::format("cpu:{}", i), cpu_split_[i].memory_limit, first)));
  }
  cpu_ = cpus_.front().get();
  initialized_.store(true, std::memory_order_release);
}

std::vector<LogicalDeviceSpec> Context::backend_logical(Backend& b) {
  std::vector<LogicalDeviceSpec> out;
  for (uint32_t i = 0; i < b.physical.size(); ++i) {
    const std::string& pname = b.physical[i].name;
    if (visible_ && std::find(visible_->begin(), visible_->end(), pname) == visible_->end()) continue;
    auto split = splits_.find(pname);
    std::vector<LogicalDeviceConfig> configs =
        split == splits_.end() ? std::vector<LogicalDeviceConfig>{LogicalDeviceConfig{}} : split->second;
    auto growth = growth_.find(pname);
    // Without splits or hidden devices, logical "vulkan:N" is physical device N.
    for (uint32_t j = 0; j < configs.size(); ++j) {
      LogicalDeviceSpec spec;
      spec.name = fmt::format("{}:{}", b.api.prefix, out.size());
      spec.physical = pname;
      spec.physical_index = i;
      spec.split_index = j;
      spec.split_count = static_cast<uint32_t>(configs.size());
      spec.memory_limit = configs[j].memory_limit;
      spec.memory_growth = growth == growth_.end() || growth->second;
      out.push_back(spec);
    }
  }
  return out;
}

std::vector<LogicalDeviceSpec> Context::logical_devices() {
  cpu();  // initializes
  std::vector<LogicalDeviceSpec> out;
  for (uint32_t i = 0; i < cpus_.size(); ++i) {
    LogicalDeviceSpec spec;
    spec.name = cpus_[i]->name();
    spec.physical = kCpuPhysical;
    spec.split_index = i;
    spec.split_count = static_cast<uint32_t>(cpus_.size());
    spec.memory_limit = cpus_[i]->memory_info().limit;
    out.push_back(spec);
  }
  std::lock_guard<std::mutex> lock(config_mu_);
  for (auto& b : backends_) {
    auto specs = backend_logical(*backend(b->api.prefix));
    out.insert(out.end(), specs.begin(), specs.end());
  }
  return out;
}

Device& Context::resolve_default_device() {
  Device& d = device(options_.device);
  default_device_.store(&d, std::memory_order_release);
  return d;
}

Device& Context::device(std::string_view spec) {
  cpu();  // initializes
  std::string_view prefix = spec.substr(0, spec.find(':'));
  if (prefix == "cpu") {
    std::optional<uint32_t> index = parse_index(spec, "device");
    if (!index || (*index == 0 && cpus_.size() == 1)) return *cpus_[0];
    if (*index < cpus_.size() && cpus_.size() > 1) return *cpus_[*index];
    std::vector<std::string> names;
    for (const auto& c : cpus_) names.push_back(c->name());
    raise(Code::NotFound, "device \"{}\": no such CPU device; the context has {} (split the CPU with "
          "set_logical_devices before the first op)", spec, join_names(names));
  }
  std::lock_guard<std::mutex> lock(devices_mu_);
  const bool bare = spec.find(':') == std::string_view::npos;
  for (auto& d : devices_)
    if (d->name() == spec || (bare && d->name().rfind(spec, 0) == 0)) return *d;
  std::lock_guard<std::mutex> config_lock(config_mu_);
  Backend* b = backend(prefix);
  if (!b) {
    if (prefix == "vulkan") raise(Code::Unavailable, "device \"{}\": this build has no Vulkan backend", spec);
    raise(Code::NotFound, "device \"{}\": unknown device (expected \"cpu\", \"vulkan\" or \"vulkan:N\")", spec);
  }
  if (b->physical.empty()) raise(Code::Unavailable, "device \"{}\": {}", spec, b->unavailable);
  std::vector<LogicalDeviceSpec> specs = backend_logical(*b);
  const LogicalDeviceSpec* chosen = nullptr;
  if (bare) {
    // The preferred kind of device; the first of equals.
    for (const auto& s : specs)
      if (!chosen || device_type_rank(b->physical[s.physical_index].device_type) <
                         device_type_rank(b->physical[chosen->physical_index].device_type))
        chosen = &s;
  } else {
    parse_index(spec, "device");
    for (const auto& s : specs)
      if (s.name == spec) chosen = &s;
  }
  if (!chosen) {
    std::vector<std::string> names;
    for (const auto& s : specs) names.push_back(s.name);
    raise(Code::NotFound,
          "device \"{}\": no such logical device; the visible {} devices are {} (visible physical devices: {}; "
          "see set_visible_devices and CAIRN_VISIBLE_DEVICES)",
          spec, prefix, join_names(names), join_names(visible_ ? *visible_ : std::vector<std::string>{"all"}));
  }
  devices_.push_back(b->api.create(*this, *chosen));
  return *devices_.back();
}

std::vector<Ref<Device>> Context::backend_devices() {
  std::lock_guard<std::mutex> lock(devices_mu_);
  return devices_;
}

std::vector<Ref<Device>> Context::created_devices() {
  cpu();
  std::vector<Ref<Device>> out = cpus_;
  std::lock_guard<std::mutex> lock(devices_mu_);
  out.insert(out.end(), devices_.begin(), devices_.end());
  return out;
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
