// Device configuration (tf.config): physical and logical devices, visibility, splits, limits, and
// the rule that configuration ends when the devices are initialized.
#include <cstdlib>

#include "runtime/cpu/cpu_device.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {
Ref<Context> fresh() { return make_ref<Context>(ContextOptions{}); }
}  // namespace

TEST_CASE("the CPU is physical device cpu:0 and, unsplit, the one logical device \"cpu\"") {
  Ref<Context> ctx = fresh();
  auto physical = ctx->physical_devices();
  REQUIRE(!physical.empty());
  CHECK(physical[0].name == "cpu:0");
  CHECK(physical[0].type == "CPU");
  CHECK(physical[0].memory == host_memory_bytes());
  CHECK(physical[0].memory > 0);
  CHECK(!ctx->devices_initialized());
  auto logical = ctx->logical_devices();
  CHECK(ctx->devices_initialized());
  REQUIRE(!logical.empty());
  CHECK(logical[0].name == "cpu");
  CHECK(&ctx->device("cpu:0") == &ctx->cpu());
  CHECK(&ctx->device("cpu") == &ctx->cpu());
}

TEST_CASE("a split CPU gives cpu:0..cpu:N-1, each with its own limit and memory counts") {
  Ref<Context> ctx = fresh();
  ctx->set_logical_devices("cpu:0", {{0}, {1 << 20}, {0}});
  Device& d0 = ctx->device("cpu:0");
  Device& d1 = ctx->device("cpu:1");
  CHECK(d0.name() == "cpu:0");
  CHECK(d1.name() == "cpu:1");
  CHECK(&ctx->cpu() == &d0);
  CHECK(&ctx->device("cpu") == &d0);
  CHECK(ctx->device("cpu:2").name() == "cpu:2");
  CHECK_THROWS_CODE(ctx->device("cpu:3"), Code::NotFound, "cpu:0, cpu:1, cpu:2");

  CHECK(d1.memory_info().limit == (1u << 20));
  CHECK(d1.memory_info().current == 0);
  {
    Tensor a = Tensor::allocate(d1, DType::Float32, Shape{1024});
    CHECK(d1.memory_info().current == 4096);
    {
      Tensor b = Tensor::allocate(d1, DType::Float32, Shape{2048});
      CHECK(d1.memory_info().current == 4096 + 8192);
    }
    CHECK(d1.memory_info().current == 4096);
    CHECK(d1.memory_info().peak == 4096 + 8192);
    d1.reset_peak_memory();
    CHECK(d1.memory_info().peak == 4096);
    // The limit: 1 MiB.
    CHECK_THROWS_CODE(Tensor::allocate(d1, DType::Float32, Shape{1 << 18}), Code::ResourceExhausted,
                      "cpu:1: allocating 1048576 bytes would pass the device's memory limit of 1048576");
    CHECK(d1.memory_info().current == 4096);  // the refused allocation is not counted
  }
  CHECK(d1.memory_info().current == 0);
  CHECK(d0.memory_info().current == 0);  // devices count their own tensors only
  // An op runs on its inputs' device and allocates there.
  Tensor x = tensor_on_device(make<float>({1, 2, 3}, Shape{3}), d1);
  Tensor y = run_op(*ctx, "Add", {x, x})[0];
  CHECK(y.device() == &d1);
  CHECK(values<float>(y) == std::vector<float>{2, 4, 6});
  CHECK_THROWS_CODE(run_op(*ctx, "Add", {x, tensor_on_device(x, d0)}), Code::InvalidArgument,
                    "different devices (cpu:1 and cpu:0)");
}

TEST_CASE("configuration is refused once the devices are initialized, saying why") {
  Ref<Context> ctx = fresh();
  ctx->set_threads(1, 2);
  CHECK(ctx->intra_op_threads() == 1);
  CHECK(ctx->inter_op_threads() == 2);
  Tensor t = Tensor::allocate(ctx->cpu(), DType::Float32, Shape{2});  // first use
  for (auto* fn : {+[](Context& c) { c.set_logical_devices("cpu:0", {{}, {}}); },
                   +[](Context& c) { c.set_visible_devices({}); }, +[](Context& c) { c.set_threads(1, 1); }}) {
    try {
      fn(*ctx);
      FAIL("configuration after initialization was accepted");
    } catch (const Error& e) {
      CHECK(e.code() == Code::FailedPrecondition);
      CHECK(e.message().find("cannot be modified after") != std::string::npos);
      CHECK(e.message().find("already initialized") != std::string::npos);
    }
  }
}

TEST_CASE("bad configuration: unknown devices, limits above memory, a device configured twice") {
  Ref<Context> ctx = fresh();
  CHECK_THROWS_CODE(ctx->set_logical_devices("tpu:0", {{}}), Code::NotFound, "tpu:0");
  CHECK_THROWS_CODE(ctx->set_logical_devices("cpu:1", {{}}), Code::NotFound, "cpu:1");
  CHECK_THROWS_CODE(ctx->set_logical_devices("cpu", {{}}), Code::InvalidArgument, "not a physical device name");
  CHECK_THROWS_CODE(ctx->set_logical_devices("cpu:0", {}), Code::InvalidArgument, "give 1 to 64");
  const uint64_t ram = host_memory_bytes();
  CHECK_THROWS_CODE(ctx->set_logical_devices("cpu:0", {{ram + 1}}), Code::InvalidArgument,
                    "memory_limit " + std::to_string(ram + 1));
  CHECK_THROWS_CODE(ctx->set_logical_devices("cpu:0", {{ram / 2 + 1}, {ram / 2 + 1}}), Code::InvalidArgument,
                    "add up to");
  CHECK_THROWS_CODE(ctx->set_memory_growth("cpu:0", false), Code::InvalidArgument,
                    "memory growth applies to Vulkan devices");
  CHECK_THROWS_CODE(ctx->set_threads(-1, 0), Code::InvalidArgument, "thread counts");
  CHECK_THROWS_CODE(ctx->set_visible_devices({"vulkan:99"}), Code::NotFound, "vulkan:99");
  ctx->set_logical_devices("cpu:0", {{}, {}});
  CHECK_THROWS_CODE(ctx->set_logical_devices("cpu:0", {{}, {}, {}}), Code::FailedPrecondition,
                    "already configured as 2 logical device(s)");
  CHECK(ctx->logical_device_configs("cpu:0").size() == 2);
  CHECK(!ctx->devices_initialized());  // none of this initialized the devices
}

TEST_CASE("a context's default device must exist when it is created") {
  ContextOptions o;
  o.device = "cpu:1";
  CHECK_THROWS_CODE(make_ref<Context>(o), Code::NotFound, "one CPU device");
  o.device = "gpu";
  CHECK_THROWS_CODE(make_ref<Context>(o), Code::NotFound, "unknown device");
}

TEST_CASE("CAIRN_VISIBLE_DEVICES sets the visible devices; a bad name fails the context's creation") {
  setenv("CAIRN_VISIBLE_DEVICES", "cpu:0", 1);
  Ref<Context> ctx = fresh();
  CHECK(ctx->visible_devices() == std::vector<std::string>{"cpu:0"});
  setenv("CAIRN_VISIBLE_DEVICES", "cpu:0,accelerator:3", 1);
  CHECK_THROWS_CODE(fresh(), Code::NotFound, "CAIRN_VISIBLE_DEVICES=\"cpu:0,accelerator:3\"");
  unsetenv("CAIRN_VISIBLE_DEVICES");
}

}  // namespace cairn
