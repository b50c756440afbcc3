// Device scopes (tf.device) and soft placement: which device ops and variables land on, per thread,
// and the copies soft placement makes (counted, logged, profiled).
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/autodiff/tape.h"
#include "runtime/core/profile_events.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "runtime/track/variable.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

Tensor range3(Context& c) {
  return run_op(c, "Range", {}, {attr_float("start", 0), attr_float("limit", 3)})[0];
}

// Debug log lines of one context.
struct LogLines {
  std::mutex mu;
  std::vector<std::string> lines;
  static void collect(void* self, LogLevel, const char* message) {
    auto* l = static_cast<LogLines*>(self);
    std::lock_guard<std::mutex> lock(l->mu);
    l->lines.emplace_back(message);
  }
};

ContextOptions one_thread() {
  ContextOptions o;
  o.num_threads = 1;
  return o;
}

ContextOptions logging_options(LogLines& log) {
  ContextOptions o = one_thread();
  o.log.callback = &LogLines::collect;
  o.log.user_data = &log;
  o.log.min_level = LogLevel::Debug;
  return o;
}

// "vulkan:0", or null without a driver (the Vulkan cases are skipped then).
Device* vulkan_or_null(Context& c) {
  try {
    return &c.device("vulkan:0");
  } catch (const Error& e) {
    if (e.code() == Code::Unavailable || e.code() == Code::NotFound) return nullptr;
    throw;
  }
}

// The shared test context with soft placement on for the test's life, and a second context whose
// CPU stands in for another device.
struct SoftPlacement {
  Context& c = ctx();
  Context other{one_thread()};
  SoftPlacement() { c.set_soft_placement(true); }
  ~SoftPlacement() { c.set_soft_placement(false); }
};

}  // namespace

TEST_CASE("an op without inputs runs on the scope's device; scopes nest and end") {
  Context& c = ctx();
  CHECK(DeviceScope::current(c) == nullptr);
  {
    DeviceScope outer(c, "cpu");
    CHECK(DeviceScope::current(c) == &c.cpu());
    CHECK(range3(c).device() == &c.cpu());
    {
      DeviceScope inner(c, "cpu:0");
      CHECK(DeviceScope::current(c) == &c.cpu());
    }
    CHECK(DeviceScope::current(c) == &c.cpu());
  }
  CHECK(DeviceScope::current(c) == nullptr);
}

TEST_CASE("an unknown device name is NotFound naming the device scope and the name") {
  Context& c = ctx();
  CHECK_THROWS_CODE(DeviceScope(c, "tpu:3"), Code::NotFound, "device scope: device \"tpu:3\"");
  CHECK(DeviceScope::current(c) == nullptr);
}

TEST_CASE("a scope belongs to one thread and one context") {
  Context& c = ctx();
  Context other(one_thread());
  DeviceScope here(c, "cpu");
  CHECK(DeviceScope::current(other) == nullptr);  // another context's ops are not affected
  Device* seen_elsewhere = &c.cpu();
  std::thread t([&] { seen_elsewhere = DeviceScope::current(c); });
  t.join();
  CHECK(seen_elsewhere == nullptr);
}

TEST_CASE("enter and exit without an owning object: per thread, unbalanced exit fails") {
  Context& c = ctx();
  DeviceScope::enter(c, "cpu");
  DeviceScope::enter(c, "cpu");
  CHECK(DeviceScope::current(c) == &c.cpu());
  std::thread t([&] {
    CHECK(DeviceScope::current(c) == nullptr);
    CHECK_THROWS_CODE(DeviceScope::exit(c, "test_exit"), Code::FailedPrecondition, "test_exit: no device scope");
    DeviceScope::enter(c, "cpu");  // left open: removed when the thread ends
  });
  t.join();
  DeviceScope::exit(c, "test_exit");
  DeviceScope::exit(c, "test_exit");
  CHECK(DeviceScope::current(c) == nullptr);
  CHECK_THROWS_CODE(DeviceScope::exit(c, "test_exit"), Code::FailedPrecondition, "test_exit: no device scope");
}

TEST_CASE("soft placement off: inputs on different devices stay an error, the scope moves nothing") {
  Context& c = ctx();
  Context other(one_thread());
  Tensor a = make<float>({1, 2}, {2});
  Tensor b = tensor_on_device(a, other.cpu());  // another context's CPU is another device
  CHECK_FALSE(c.soft_placement());
  CHECK_THROWS_CODE(run1("Add", {a, b}), Code::InvalidArgument, "Add: inputs are on different devices");
}

TEST_CASE("soft placement copies inputs to the first input's device, counted and logged") {
  LogLines log;
  Context c(logging_options(log));
  Context other(one_thread());
  c.set_soft_placement(true);
  CHECK(c.soft_placement());
  Tensor a = make<float>({1, 2}, {2});
  a = tensor_on_device(a, c.cpu());
  Tensor b = tensor_on_device(make<float>({10, 20}, {2}), other.cpu());
  uint64_t before = c.auto_copies();
  Tensor sum = run_op(c, "Add", {a, b})[0];
  CHECK(sum.device() == &c.cpu());
  CHECK(values<float>(sum) == std::vector<float>{11, 22});
  CHECK(c.auto_copies() == before + 1);
  // Inputs already together: nothing copied.
  run_op(c, "Add", {a, a});
  CHECK(c.auto_copies() == before + 1);
  bool logged = false;
  for (const std::string& line : log.lines)
    logged |= line == "Add: copied input 1 from cpu to cpu (soft placement)";
  CHECK_MESSAGE(logged, "no debug line for the copy");
  c.set_soft_placement(false);
  CHECK_THROWS_CODE(run_op(c, "Add", {a, b}), Code::InvalidArgument, "different devices");
}

TEST_CASE("soft placement copies are profiler events of category copy") {
  SoftPlacement soft;
  Tensor a = make<float>({1, 2}, {2});
  Tensor b = tensor_on_device(a, soft.other.cpu());
  REQUIRE(prof::begin(1000, false));
  run1("Mul", {a, b});
  prof::Collected got;
  REQUIRE(prof::end(got));
  int copies = 0;
  for (const prof::Event& e : got.events)
    if (std::string(e.category) == "copy") {
      ++copies;
      CHECK(e.name == "Mul");
      CHECK(e.args.find("\"input\":1") != std::string::npos);
    }
  CHECK(copies == 1);
}

TEST_CASE("a gradient flows through a soft placement copy") {
  SoftPlacement soft;
  Tensor x = make<float>({3}, {1});
  Tensor w = tensor_on_device(make<float>({2}, {1}), soft.other.cpu());
  GradientTape tape(soft.c);
  tape.watch(x);
  Tensor y = op::mul(soft.c, w, x);  // runs on w's device; x is copied there
  std::vector<Tensor> g = tape.gradient(y, {x});
  REQUIRE(g[0].valid());
  CHECK(values<float>(tensor_on_device(g[0], soft.c.cpu())) == std::vector<float>{2});
}

TEST_CASE("variables created in a scope live on its device; options.device wins") {
  Context& c = ctx();
  DeviceScope scope(c, "cpu");
  Ref<Variable> v = Variable::create(c, make<float>({1}, {1}));
  CHECK(&v->device() == &c.cpu());
}

TEST_CASE("threads: a scope on one thread does not affect another's ops") {
  Context& c = ctx();
  std::atomic<int> on_default{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      if (i % 2 == 0) {
        DeviceScope s(c, "cpu");
        if (range3(c).device() == &c.cpu()) ++on_default;
      } else {
        if (DeviceScope::current(c) == nullptr && range3(c).device() == &c.default_device()) ++on_default;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(on_default == 4);
}

// ---- Vulkan (lavapipe in CI): skipped without a driver ----

TEST_CASE("vulkan: ops, variables, layers and slots inside a vulkan:0 scope") {
  Context c(one_thread());
  Device* vk = vulkan_or_null(c);
  if (!vk) {
    MESSAGE("no Vulkan driver: skipped");
    return;
  }
  Tensor host = tensor_on_device(make<float>({1, 2, 3, 4}, {2, 2}), c.cpu());
  {
    DeviceScope scope(c, "vulkan:0");
    CHECK(range3(c).device() == vk);
    // Soft placement off: the op runs where its inputs are, however the scope says.
    CHECK(run_op(c, "Relu", {host})[0].device() == &c.cpu());
    Ref<Variable> v = Variable::create(c, host);
    CHECK(&v->device() == vk);
    CHECK(values<float>(tensor_on_device(v->read(), c.cpu())) == std::vector<float>{1, 2, 3, 4});
    // Mixing a CPU and a Vulkan tensor is an error naming both devices.
    CHECK_THROWS_CODE(run_op(c, "Add", {host, v->read()}), Code::InvalidArgument, "(cpu and vulkan:0)");

    // A layer built in the scope puts its weights there even for a CPU input.
    nn::DenseOptions d;
    d.units = 3;
    Ref<nn::Layer> dense = nn::dense(c, d);
    Tensor x = tensor_on_device(make<float>({1, 2}, {1, 2}), *vk);
    Tensor y = (*dense)(x);
    CHECK(y.device() == vk);
    for (const Ref<Variable>& w : dense->weights()) CHECK(&w->device() == vk);
  }
  // Optimizer slots live with their variable, even inside a scope of another device.
  Ref<Variable> on_vk;
  {
    DeviceScope scope(c, "vulkan:0");
    on_vk = Variable::create(c, host);
  }
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::Adam;
  Ref<optim::Optimizer> adam = optim::Optimizer::create(c, oo);
  {
    DeviceScope scope(c, "cpu");
    adam->apply_gradients({{tensor_on_device(make<float>({1, 1, 1, 1}, {2, 2}), *vk), on_vk.get()}});
  }
  auto slots = adam->slots_for(*on_vk);
  REQUIRE(slots.size() == 2);
  for (auto& [name, slot] : slots) CHECK_MESSAGE(&slot->device() == vk, name);
}

TEST_CASE("vulkan: soft placement runs the op on the scope's device and counts each copy") {
  LogLines log;
  Context c(logging_options(log));
  Device* vk = vulkan_or_null(c);
  if (!vk) {
    MESSAGE("no Vulkan driver: skipped");
    return;
  }
  c.set_soft_placement(true);
  Tensor a = tensor_on_device(make<float>({1, 2}, {2}), c.cpu());
  Tensor b = tensor_on_device(make<float>({3, 4}, {2}), c.cpu());
  {
    DeviceScope scope(c, "vulkan:0");
    Tensor s = run_op(c, "Add", {a, b})[0];
    CHECK(s.device() == vk);
    CHECK(values<float>(tensor_on_device(s, c.cpu())) == std::vector<float>{4, 6});
    CHECK(c.auto_copies() == 2);
  }
  // No scope: the first input's device wins, the CPU input is copied to Vulkan.
  Tensor on_vk = tensor_on_device(b, *vk);
  Tensor s = run_op(c, "Mul", {on_vk, a})[0];
  CHECK(s.device() == vk);
  CHECK(c.auto_copies() == 3);
  bool logged = false;
  for (const std::string& line : log.lines) logged |= line == "Mul: copied input 1 from cpu to vulkan:0 (soft placement)";
  CHECK(logged);
}

}  // namespace cairn
