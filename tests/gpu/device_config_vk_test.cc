// Device configuration on Vulkan (lavapipe here): the driver's memory budget and the fallbacks for
// nonsense figures, physical devices, a split "vulkan:0", memory counts and limits per logical
// device, memory growth off (reserved up front), visible devices and CAIRN_VISIBLE_DEVICES.
#include <cstdlib>
#include <thread>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

Ref<Context> fresh() { return make_ref<Context>(ContextOptions{}); }

// Sets an environment variable for one scope (unset after, even when a check fails).
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name); }
  const char* name;
};

void check_budget(const gpu::HeapBudget& got, uint64_t budget, uint64_t usage, bool fallback) {
  CHECK(got.budget == budget);
  CHECK(got.usage == usage);
  CHECK(got.fallback == fallback);
}

TEST_CASE("budget rules: sane figures pass, nonsense falls back to the heap's size") {
  using gpu::sane_heap_budget;
  const uint64_t size = 8 * kGiB;
  check_budget(sane_heap_budget(size, true, 6 * kGiB, kGiB), 6 * kGiB, kGiB, false);
  check_budget(sane_heap_budget(size, true, 2 * kGiB, 2 * kGiB), 2 * kGiB, 2 * kGiB, false);  // at the budget
  check_budget(sane_heap_budget(size, true, size, 0), size, 0, false);
  // No VK_EXT_memory_budget: whatever the (unfilled) struct held is ignored.
  check_budget(sane_heap_budget(size, false, 123, 456), size, 0, true);
  // A budget of 0.
  check_budget(sane_heap_budget(size, true, 0, kGiB), size, kGiB, true);
  // Intel on Windows (llama.cpp#29277): a 46.76 GiB budget on a 36.20 GiB heap.
  check_budget(sane_heap_budget(38868971888ull, true, 50206003200ull, 4096), 38868971888ull, 4096, true);
  // RADV's 16 MiB heap: the budget underflowed to nearly 2^64.
  check_budget(sane_heap_budget(16 * kMiB, true, 0xffffffffe5dd3000ull, 0), 16 * kMiB, 0, true);
  // Usage above the heap: clamped (the budget is sane and stays).
  check_budget(sane_heap_budget(size, true, 6 * kGiB, 2 * size), size, size, true);
  // Usage above the budget: the budget is not believed either.
  check_budget(sane_heap_budget(size, true, 2 * kGiB, 3 * kGiB), size, 3 * kGiB, true);
  // Everything all ones; an empty heap.
  check_budget(sane_heap_budget(size, true, ~0ull, ~0ull), size, size, true);
  check_budget(sane_heap_budget(0, true, 5, 5), 0, 0, true);
}

TEST_CASE("the main heap is the largest device-local one; reservations; queues of split devices") {
  using gpu::HeapInfo;
  // An AMD iGPU's layout (a 256 MiB device-local window after the big heaps).
  std::vector<HeapInfo> amd{{4 * kGiB, true, 0, 0}, {14 * kGiB, false, 0, 0}, {256 * kMiB, true, 0, 0}};
  CHECK(gpu::main_heap(amd) == 0);
  std::vector<HeapInfo> bar{{256 * kMiB, true, 0, 0}, {16 * kGiB, false, 0, 0}, {8 * kGiB, true, 0, 0}};
  CHECK(gpu::main_heap(bar) == 2);
  CHECK(gpu::main_heap({{kGiB, false, 0, 0}, {2 * kGiB, false, 0, 0}}) == 1);
  CHECK(gpu::main_heap({}) == -1);

  CHECK(gpu::reservation_bytes(4 * kMiB, 100 * kGiB) == 4 * kMiB);
  CHECK(gpu::reservation_bytes(0, 1000 * kMiB) == 900 * kMiB);
  CHECK(gpu::reservation_bytes(0, 0) == 0);

  CHECK(gpu::split_queue_index(0, 4) == 0);
  CHECK(gpu::split_queue_index(3, 2) == 1);
  CHECK(gpu::split_queue_index(5, 1) == 0);
  CHECK(gpu::split_queue_index(2, 0) == 0);
}

TEST_CASE("physical_devices() lists lavapipe as a VULKAN device with heaps, budgets and queues") {
  Ref<Context> ctx = fresh();
  auto physical = ctx->physical_devices();
  const PhysicalDevice* vk = nullptr;
  for (const auto& p : physical)
    if (p.name == "vulkan:0") vk = &p;
  REQUIRE(vk != nullptr);
  CHECK(vk->type == "VULKAN");
  CHECK(vk->device_type == "cpu");  // lavapipe
  CHECK(!vk->description.empty());
  CHECK(vk->queues >= 1);
  REQUIRE(!vk->heaps.empty());
  std::vector<gpu::HeapInfo> heaps;
  for (const MemoryHeap& h : vk->heaps) {
    CHECK(h.size > 0);
    CHECK(h.budget > 0);
    CHECK(h.budget <= h.size);
    CHECK(h.usage <= h.budget);
    heaps.push_back({h.size, h.device_local, h.budget, h.usage});
  }
  const int main = gpu::main_heap(heaps);
  REQUIRE(main >= 0);
  CHECK(vk->heaps[main].device_local);
  CHECK(vk->memory == vk->heaps[main].budget);
  const gpu::PhysicalDeviceInfo info = gpu::list_devices().at(0);
  MESSAGE("vulkan:0 " << vk->description << ": VK_EXT_memory_budget " << std::string(info.memory_budget ? "yes" : "no")
                      << ", heap " << main << " size " << vk->heaps[main].size << " budget "
                      << vk->heaps[main].budget << " usage " << vk->heaps[main].usage << ", " << vk->queues
                      << " compute queue(s)");
  CHECK(!ctx->devices_initialized());  // listing does not initialize

  // A created device re-queries its heap's budget.
  Device& d = ctx->device("vulkan:0");
  const uint64_t live = d.memory_budget();
  CHECK(live > 0);
  CHECK(live <= vk->heaps[main].size);
}

TEST_CASE("memory_info counts a Vulkan device's tensors: current, peak, reset, ops' outputs") {
  Ref<Context> ctx = fresh();
  Device& d = ctx->device("vulkan:0");
  CHECK(d.memory_info().current == 0);
  CHECK(d.memory_info().limit == 0);
  {
    Tensor a = Tensor::allocate(d, DType::Float32, Shape{1000});
    CHECK(d.memory_info().current == 4000);
    {
      Tensor b = Tensor::allocate(d, DType::Int32, Shape{2000});
      CHECK(d.memory_info().current == 12000);
    }
    CHECK(d.memory_info().current == 4000);
    CHECK(d.memory_info().peak == 12000);
    d.reset_peak_memory();
    CHECK(d.memory_info().peak == 4000);
    Tensor x = tensor_on_device(make<float>({1, 2, 3, 4}, Shape{4}), d);
    Tensor y = run_op(*ctx, "Add", {x, x})[0];
    CHECK(d.memory_info().current == 4000 + 16 + 16);
    CHECK(values<float>(tensor_on_device(y, ctx->cpu())) == std::vector<float>{2, 4, 6, 8});
  }
  CHECK(d.memory_info().current == 0);
  CHECK(d.memory_info().peak == 4032);
  CHECK(ctx->cpu().memory_info().current == 0);  // the host copies went away
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("a split vulkan:0: two logical devices, each its own VkDevice and limit, used at once") {
  Ref<Context> ctx = fresh();
  ctx->set_logical_devices("vulkan:0", {{64 * kMiB}, {32 * kMiB}});
  auto logical = ctx->logical_devices();
  std::vector<std::string> names;
  for (const auto& s : logical) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"cpu", "vulkan:0", "vulkan:1"});
  auto& v0 = gpu::vulkan(ctx->device("vulkan:0"));
  auto& v1 = gpu::vulkan(ctx->device("vulkan:1"));
  CHECK(&v0 != &v1);
  CHECK(v0.vk_device() != v1.vk_device());
  CHECK(v0.vk_physical_device() == v1.vk_physical_device());
  CHECK(v0.memory_info().limit == 64 * kMiB);
  CHECK(v1.memory_info().limit == 32 * kMiB);
  const uint32_t queues = ctx->physical_devices().at(1).queues;
  CHECK(v0.queue_index() == gpu::split_queue_index(0, queues));
  CHECK(v1.queue_index() == gpu::split_queue_index(1, queues));
  CHECK(&ctx->device("vulkan") == &v0);
  CHECK_THROWS_CODE(ctx->device("vulkan:2"), Code::NotFound, "vulkan:0, vulkan:1");

  const Tensor a = random_tensor(DType::Float32, Shape{8, 16}, -1, 1, 11);
  const Tensor b = random_tensor(DType::Float32, Shape{16, 4}, -1, 1, 12);
  const Tensor want = run_op(*ctx, "MatMul", {a, b})[0];
  // Both devices work at the same time, each on its own thread.
  Tensor r0, r1;
  auto work = [&](gpu::VulkanDevice& dev, Tensor* out) {
    Tensor x = tensor_on_device(a, dev), y = tensor_on_device(b, dev);
    Tensor r = run_op(*ctx, "MatMul", {x, y})[0];
    const Tensor zero = tensor_on_device(scalar(0.0f), dev);
    for (int i = 0; i < 10; ++i) r = run_op(*ctx, "Add", {r, run_op(*ctx, "Mul", {r, zero})[0]})[0];
    dev.synchronize();
    *out = r;
  };
  std::thread t0(work, std::ref(v0), &r0), t1(work, std::ref(v1), &r1);
  t0.join();
  t1.join();
  REQUIRE(r0.valid());
  REQUIRE(r1.valid());
  CHECK(r0.device() == &v0);
  CHECK(r1.device() == &v1);
  check_close(as_doubles(tensor_on_device(r0, ctx->cpu())), as_doubles(want), 1e-5);
  // A copy from one logical device to the other, then an op there.
  Tensor moved = tensor_on_device(r0, v1);
  CHECK(moved.device() == &v1);
  Tensor sum = run_op(*ctx, "Add", {moved, r1})[0];
  CHECK(sum.device() == &v1);
  Tensor want2 = run_op(*ctx, "Add", {want, want})[0];
  check_close(as_doubles(tensor_on_device(sum, ctx->cpu())), as_doubles(want2), 1e-5);
  CHECK_THROWS_CODE(run_op(*ctx, "Add", {r0, r1}), Code::InvalidArgument, "different devices (vulkan:0 and vulkan:1)");
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("each logical device enforces its own limit, with one error naming device, limit and use") {
  Ref<Context> ctx = fresh();
  ctx->set_logical_devices("vulkan:0", {{kMiB}, {kMiB}});
  Device& d0 = ctx->device("vulkan:0");
  Device& d1 = ctx->device("vulkan:1");
  Tensor a = Tensor::allocate(d0, DType::Float32, Shape{200000});  // 800000 bytes
  CHECK_THROWS_CODE(Tensor::allocate(d0, DType::Float32, Shape{100000}), Code::ResourceExhausted,
                    "vulkan:0: allocating 400000 bytes exceeds the memory limit of 1048576 bytes "
                    "(800000 bytes held by tensors)");
  CHECK(d0.memory_info().current == 800000);  // the refused tensor is not counted
  Tensor b = Tensor::allocate(d1, DType::Float32, Shape{200000});  // the other device has its own
  CHECK(d1.memory_info().current == 800000);
  CHECK_THROWS_CODE(Tensor::allocate(d1, DType::Float32, Shape{100000}), Code::ResourceExhausted, "vulkan:1:");
  a = Tensor();
  Tensor c = Tensor::allocate(d0, DType::Float32, Shape{250000});  // freed memory is usable again
  CHECK(d0.memory_info().current == 1000000);
  CHECK(d0.memory_info().peak == 1000000);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("memory growth off reserves each logical device's limit up front and never grows past it") {
  Ref<Context> ctx = fresh();
  ctx->set_memory_growth("vulkan:0", false);
  ctx->set_logical_devices("vulkan:0", {{4 * kMiB}, {2 * kMiB}});
  CHECK(!ctx->memory_growth("vulkan:0"));
  for (const auto& s : ctx->logical_devices())
    if (s.name != "cpu") CHECK(!s.memory_growth);
  auto& d = gpu::vulkan(ctx->device("vulkan:0"));
  auto& d1 = gpu::vulkan(ctx->device("vulkan:1"));
  CHECK(d.reserved_bytes() == 4 * kMiB);
  CHECK(d1.reserved_bytes() == 2 * kMiB);
  CHECK(d.stats().block_bytes == 4 * kMiB);
  CHECK(d1.stats().block_bytes == 2 * kMiB);
  CHECK(d.memory_info().limit == 4 * kMiB);
  CHECK(d.memory_info().current == 0);
  const uint64_t allocations = d.stats().memory_allocations;
  {
    // Tensors count their own bytes; the blocks stay the reservation.
    Tensor x = tensor_on_device(make<float>({1, 2, 3}, Shape{3}), d);
    Tensor y = run_op(*ctx, "Add", {x, x})[0];
    CHECK(values<float>(tensor_on_device(y, ctx->cpu())) == std::vector<float>{2, 4, 6});
    CHECK(d.memory_info().current == 24);
    CHECK(d.stats().block_bytes == 4 * kMiB);
  }
  Tensor big = Tensor::allocate(d, DType::Float32, Shape{3 * 256 * 1024});  // 3 MiB
  CHECK_THROWS_CODE(Tensor::allocate(d, DType::Float32, Shape{512 * 1024}), Code::ResourceExhausted,
                    "vulkan:0: allocating 2097152 bytes does not fit in the 4194304 bytes reserved when the device "
                    "was created (memory growth is off");
  CHECK(d.memory_info().current == 3 * kMiB);
  big = Tensor();
  d.synchronize();
  CHECK(d.stats().block_bytes == 4 * kMiB);  // freed memory stays reserved
  Tensor again = Tensor::allocate(d, DType::Float32, Shape{3 * 256 * 1024});
  CHECK(d.stats().memory_allocations == allocations);  // never a new vkAllocateMemory
  CHECK(d.memory_info().peak == 3 * kMiB);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("a reservation with room for the tensor's bytes but no range long enough says it is fragmented") {
  Ref<Context> ctx = fresh();
  ctx->set_memory_growth("vulkan:0", false);
  ctx->set_logical_devices("vulkan:0", {{kMiB}});
  Device& d = ctx->device("vulkan:0");
  Tensor a = Tensor::allocate(d, DType::Float32, Shape{65536});  // 256 KiB each
  Tensor b = Tensor::allocate(d, DType::Float32, Shape{65536});
  Tensor c = Tensor::allocate(d, DType::Float32, Shape{65536});
  Tensor e = Tensor::allocate(d, DType::Float32, Shape{50000});
  a = Tensor();
  c = Tensor();
  d.synchronize();
  CHECK(d.memory_info().current == 262144 + 200000);
  // 400000 bytes fit in what the tensors leave (1 MiB - 462144) but in none of the holes.
  CHECK_THROWS_CODE(Tensor::allocate(d, DType::Float32, Shape{100000}), Code::ResourceExhausted,
                    "462144 bytes held by tensors, the free memory being in pieces too small)");
  Tensor f = Tensor::allocate(d, DType::Float32, Shape{60000});  // a hole takes this one
  CHECK(d.memory_info().current == 262144 + 200000 + 240000);
}

TEST_CASE("memory growth off without a limit reserves a fraction of the budget") {
  Ref<Context> ctx = fresh();
  const uint64_t budget = ctx->physical_devices().at(1).memory;
  // Lavapipe's heap is host memory that vkAllocateMemory does not touch; elsewhere skip rather
  // than hold most of a real GPU's memory in a test.
  if (budget > 4 * kGiB) return;
  ctx->set_memory_growth("vulkan:0", false);
  gpu::VulkanDevice* made = nullptr;
  try {
    made = &gpu::vulkan(ctx->device("vulkan:0"));
  } catch (const Error& e) {
    // A machine that refuses the address space (strict overcommit): the one error it may give.
    CHECK(e.code() == Code::ResourceExhausted);
    CHECK_MESSAGE(e.message().find("vulkan:0: memory growth is off, and reserving") != std::string::npos, e.message());
    return;
  }
  gpu::VulkanDevice& d = *made;
  const uint64_t reserved = d.reserved_bytes();
  MESSAGE("reserved " << reserved << " of a budget of " << d.memory_budget());
  CHECK(reserved == gpu::reservation_bytes(0, d.memory_budget()));
  CHECK(d.stats().block_bytes == reserved);
  CHECK(d.memory_info().limit == reserved);
  Tensor x = tensor_on_device(make<float>({1, 2}, Shape{2}), d);
  CHECK(values<float>(tensor_on_device(run_op(*ctx, "Add", {x, x})[0], ctx->cpu())) == std::vector<float>{2, 4});
  CHECK(d.memory_info().current == 8);  // x; the sum was a temporary
}

TEST_CASE("hidden Vulkan devices are NOT_FOUND, naming what is visible; physical devices still list them") {
  Ref<Context> ctx = fresh();
  ctx->set_visible_devices({"cpu:0"});
  CHECK(ctx->visible_devices() == std::vector<std::string>{"cpu:0"});
  bool listed = false;
  for (const auto& p : ctx->physical_devices()) listed |= p.name == "vulkan:0";
  CHECK(listed);
  for (const auto& s : ctx->logical_devices()) CHECK(s.name.rfind("vulkan", 0) != 0);
  CHECK_THROWS_CODE(ctx->device("vulkan:0"), Code::NotFound,
                    "device \"vulkan:0\": no such logical device; the visible vulkan devices are none");
  CHECK_THROWS_CODE(ctx->device("vulkan"), Code::NotFound, "the visible vulkan devices are none");
  CHECK(ctx->backend_devices().empty());  // no VkDevice was made
}

TEST_CASE("CAIRN_VISIBLE_DEVICES hides or shows vulkan:0 for contexts created while it is set") {
  {
    ScopedEnv env("CAIRN_VISIBLE_DEVICES", "cpu:0");
    ContextOptions o;
    o.device = "vulkan";
    Ref<Context> c = make_ref<Context>(o);
    CHECK(c->visible_devices() == std::vector<std::string>{"cpu:0"});
    CHECK_THROWS_CODE(c->default_device(), Code::NotFound, "the visible vulkan devices are none");
  }
  {
    ScopedEnv env("CAIRN_VISIBLE_DEVICES", "vulkan:0");
    Ref<Context> c = fresh();
    CHECK(c->visible_devices() == std::vector<std::string>{"cpu:0", "vulkan:0"});
    CHECK(c->device("vulkan:0").name() == "vulkan:0");
  }
  {
    ScopedEnv env("CAIRN_VISIBLE_DEVICES", "vulkan:5");
    CHECK_THROWS_CODE(fresh(), Code::NotFound, "CAIRN_VISIBLE_DEVICES=\"vulkan:5\"");
  }
}

}  // namespace
}  // namespace cairn::test
