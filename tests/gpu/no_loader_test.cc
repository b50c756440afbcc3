// Without the Vulkan loader at all (CAIRN_VULKAN_LOADER names a library that does not exist):
// the binary starts, CPU ops run, and Vulkan contexts fail with Unavailable naming the loader.
// Cairn links no libvulkan, so none is mapped into the process.
#include <cstdlib>
#include <fstream>
#include <string>

#include "gpu/vulkan/instance.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

// Whether the system loader (libvulkan.so.1) is mapped into this process.
bool libvulkan_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("/libvulkan.so.1") != std::string::npos) return true;  // not Bazel's gpu/vulkan/libvulkan.so (ours)
  return false;
}

TEST_CASE("no loader: cpu works, vulkan is Unavailable naming the loader, libvulkan never mapped") {
  setenv("CAIRN_VULKAN_LOADER", "libcairn_no_such_vulkan.so.1", 1);
  CHECK_FALSE(libvulkan_mapped());
  Context cpu{ContextOptions{}};
  Tensor x = make<float>({1, 2}, Shape{2});
  CHECK(values<float>(run_op(cpu, "Add", {x, x})[0]) == std::vector<float>{2, 4});
  ContextOptions o;
  o.device = "vulkan";
  CHECK_THROWS_CODE(Context(o), Code::Unavailable, "Vulkan loader libcairn_no_such_vulkan.so.1 not found");
  CHECK_THROWS_CODE(gpu::list_devices(), Code::Unavailable, "Vulkan loader libcairn_no_such_vulkan.so.1 not found");
  // Asking again gives the same answer (the attempt is made once).
  CHECK_THROWS_CODE(Context(o), Code::Unavailable, "not found");
  CHECK(values<float>(run_op(cpu, "Mul", {x, x})[0]) == std::vector<float>{1, 4});
  CHECK_FALSE(libvulkan_mapped());
}

TEST_CASE("the default loader name is libvulkan.so.1") {
  const char* saved = std::getenv("CAIRN_VULKAN_LOADER");
  std::string keep = saved ? saved : "";
  unsetenv("CAIRN_VULKAN_LOADER");
  CHECK(std::string(gpu::loader_name()) == "libvulkan.so.1");
  setenv("CAIRN_VULKAN_LOADER", keep.c_str(), 1);
}

}  // namespace
}  // namespace cairn::test
