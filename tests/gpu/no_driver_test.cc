// Without a Vulkan driver (the loader pointed at an ICD list that does not exist), Vulkan
// contexts fail with Unavailable and the CPU still works.
#include <cstdlib>

#include "gpu/vulkan/instance.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("no driver: vulkan is Unavailable, cpu works") {
  setenv("VK_ICD_FILENAMES", "/nonexistent/cairn_no_icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/cairn_no_icd.json", 1);
  ContextOptions o;
  o.device = "vulkan";
  CHECK_THROWS_CODE(Context(o), Code::Unavailable, "vulkan");
  CHECK_THROWS_CODE(gpu::list_devices(), Code::Unavailable, "driver");
  Context cpu{ContextOptions{}};
  Tensor x = make<float>({1, 2}, Shape{2});
  CHECK(values<float>(run_op(cpu, "Add", {x, x})[0]) == std::vector<float>{2, 4});
}

}  // namespace
}  // namespace cairn::test
