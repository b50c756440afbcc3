// The Vulkan device: enumeration, selection, memory, batching, external handles, limits, fallback.
#include <vulkan/vulkan.h>

#include "gpu/vulkan/range_allocator.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("devices are listed with name, type, heaps, limits and subgroup size") {
  auto devices = gpu::list_devices();
  REQUIRE(!devices.empty());
  const auto& d = devices[0];
  CHECK(!d.name.empty());
  CHECK(d.type == "cpu");  // lavapipe
  CHECK(!d.heaps.empty());
  CHECK(d.subgroup_size >= 1);
  CHECK(d.max_storage_buffer_range >= (1u << 20));
  CHECK(gpu::preferred_device(devices) == 0);
  // The validation layer is on for every Vulkan test binary.
  CHECK(gpu::Instance::shared()->validation());
}

TEST_CASE("\"vulkan\" and \"vulkan:0\" name the same device; bad indices are errors") {
  Context& c = vk_ctx();
  CHECK(c.default_device().name() == "vulkan:0");
  CHECK(&c.device("vulkan:0") == &c.default_device());
  CHECK_THROWS_CODE(c.device("vulkan:7"), Code::NotFound, "vulkan:7");
  CHECK_THROWS_CODE(c.device("vulkan:x"), Code::InvalidArgument, "vulkan:N");
}

TEST_CASE("tensors round-trip through device memory") {
  Tensor h = make<float>({1, 2, 3, 4, 5}, Shape{5});
  Tensor d = to_vk(h);
  CHECK(d.device()->name() == "vulkan:0");
  CHECK(values<float>(to_cpu(d)) == std::vector<float>{1, 2, 3, 4, 5});
  Tensor empty = to_vk(make<float>({}, Shape{0, 3}));
  CHECK(to_cpu(empty).num_elements() == 0);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("the sub-allocator reuses memory instead of allocating per tensor") {
  auto& dev = vk_device();
  to_cpu(to_vk(make<float>({1}, Shape{1})));
  uint64_t before = dev.stats().memory_allocations;
  for (int i = 0; i < 200; ++i) {
    Tensor t = to_vk(make<float>(std::vector<float>(1000, 1.0f), Shape{1000}));
    (void)t;
  }
  dev.synchronize();
  CHECK(dev.stats().memory_allocations == before);
}

TEST_CASE("eager ops are batched: many ops, few submits, results correct") {
  auto& dev = vk_device();
  dev.synchronize();
  Tensor x = to_vk(make<float>({1, 2, 3}, Shape{3}));
  uint64_t submits = dev.stats().submits;
  Tensor acc = x;
  for (int i = 0; i < 100; ++i) acc = run_op(vk_ctx(), "Add", {acc, x})[0];
  CHECK(dev.stats().submits == submits);  // nothing submitted until the host reads
  CHECK(values<float>(to_cpu(acc)) == std::vector<float>{101, 202, 303});
  CHECK(dev.stats().submits == submits + 1);
  // The size bound flushes long chains without a read.
  for (int i = 0; i < 600; ++i) acc = run_op(vk_ctx(), "Add", {acc, x})[0];
  CHECK(dev.stats().submits >= submits + 3);
  CHECK(values<float>(to_cpu(acc)) == std::vector<float>{701, 1402, 2103});
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("pipelines are built once per op and dtype variant") {
  auto& dev = vk_device();
  Tensor x = to_vk(make<float>({1, 2}, Shape{2}));
  run_op(vk_ctx(), "Mul", {x, x});
  uint64_t built = dev.stats().pipelines;
  for (int i = 0; i < 10; ++i) run_op(vk_ctx(), "Mul", {x, x});
  CHECK(dev.stats().pipelines == built);
}

TEST_CASE("the memory limit gives ResourceExhausted, and freed memory is usable again") {
  ContextOptions o;
  o.device = "vulkan";
  o.gpu.memory_limit = 1 << 20;
  Context c(o);
  Device& d = c.default_device();
  Tensor a = Tensor::allocate(d, DType::Float32, Shape{200000});  // 800 KB
  CHECK_THROWS_CODE(Tensor::allocate(d, DType::Float32, Shape{100000}), Code::ResourceExhausted, "memory limit");
  a = Tensor();
  Tensor b = Tensor::allocate(d, DType::Float32, Shape{200000});
  CHECK(b.valid());
}

TEST_CASE("ops without a Vulkan kernel name op, dtype and device, or fall back to the CPU when allowed") {
  Tensor x = to_vk(make<double>({1.5, -2.5}, Shape{2}));
  CHECK_THROWS_CODE(run_op(vk_ctx(), "Neg", {x}), Code::Unimplemented, "Neg: no Vulkan kernel for dtype float64 on device vulkan:0");
  Tensor s = to_vk(make<double>({3, 1, 2}, Shape{3}));
  CHECK_THROWS_CODE(run_op(vk_ctx(), "Sort", {s}), Code::Unimplemented, "Sort: no Vulkan kernel for dtype float64");

  ContextOptions o;
  o.device = "vulkan";
  o.gpu.cpu_fallback = true;
  Context c(o);
  auto& dev = static_cast<gpu::VulkanDevice&>(c.default_device());
  Tensor y = tensor_on_device(make<double>({1.5, -2.5}, Shape{2}), dev);
  Tensor n = run_op(c, "Neg", {y})[0];
  CHECK(n.device() == &dev);
  CHECK(values<double>(tensor_on_device(n, c.cpu())) == std::vector<double>{-1.5, 2.5});
  CHECK(dev.fallbacks() == 1);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("external mode uses the engine's instance and device and destroys none of them") {
  // The "engine" calls Vulkan through Cairn's run-time loader table (Cairn links no libvulkan).
  gpu::Instance::shared();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ii.pApplicationInfo = &app;
  VkInstance instance;
  REQUIRE(gpu::vkCreateInstance(&ii, nullptr, &instance) == VK_SUCCESS);
  uint32_t n = 1;
  VkPhysicalDevice phys;
  gpu::vkEnumeratePhysicalDevices(instance, &n, &phys);
  float prio = 1;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = 0;
  q.queueCount = 1;
  q.pQueuePriorities = &prio;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &q;
  VkDevice device;
  REQUIRE(gpu::vkCreateDevice(phys, &di, nullptr, &device) == VK_SUCCESS);
  VkQueue queue;
  gpu::vkGetDeviceQueue(device, 0, 0, &queue);
  {
    ContextOptions o;
    o.device = "vulkan";
    o.gpu.vk_instance = instance;
    o.gpu.vk_physical_device = phys;
    o.gpu.vk_device = device;
    o.gpu.vk_queue = queue;
    Ref<Context> c = make_ref<Context>(o);
    auto& dev = static_cast<gpu::VulkanDevice&>(c->default_device());
    CHECK(dev.external());
    Tensor x = tensor_on_device(make<float>({1, 2}, Shape{2}), dev);
    Tensor y = run_op(*c, "Add", {x, x})[0];
    CHECK(values<float>(tensor_on_device(y, c->cpu())) == std::vector<float>{2, 4});
  }
  // Still alive: our handles work after Cairn let go.
  CHECK(gpu::vkDeviceWaitIdle(device) == VK_SUCCESS);
  gpu::vkDestroyDevice(device, nullptr);
  gpu::vkDestroyInstance(instance, nullptr);
}

TEST_CASE("external mode needs all handles") {
  ContextOptions o;
  o.device = "vulkan";
  o.gpu.vk_device = reinterpret_cast<void*>(1);
  CHECK_THROWS_CODE(Context(o), Code::InvalidArgument, "external mode");
}

TEST_CASE("range allocator: first fit, alignment, coalescing, double free") {
  gpu::RangeAllocator r(1024);
  auto a = r.allocate(100, 64);
  auto b = r.allocate(100, 64);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a == 0);
  CHECK(*b == 128);
  CHECK(!r.allocate(1000, 64));
  r.free(*a, 100);
  r.free(*b, 100);
  CHECK(r.empty());
  CHECK(r.num_free_ranges() == 1);
  CHECK(r.allocate(1024, 64) == std::optional<uint64_t>(0));
  r.free(0, 1024);
  CHECK_THROWS_CODE(r.free(0, 16), Code::Internal, "outside");
}

}  // namespace
}  // namespace cairn::test
