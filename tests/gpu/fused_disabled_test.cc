// With fused shaders off (CAIRN_VULKAN_FUSED_SHADERS=0): Vulkan replays of fusible graphs run the
// unfused plan, with correct results, and the context's log says why, once. A separate binary
// because the setting is read once per process.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/vulkan/fused_shader.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/graph/fusion.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

struct FusedShadersOff {
  FusedShadersOff() { setenv("CAIRN_VULKAN_FUSED_SHADERS", "0", 1); }
} fused_shaders_off;

std::vector<std::string>& messages() {
  static std::vector<std::string> m;
  return m;
}

TEST_CASE("fused shaders off: Vulkan replays run unfused, results equal the CPU's, one log line says so") {
  ContextOptions o;
  o.device = "vulkan";
  o.log.callback = [](void*, LogLevel, const char* message) { messages().push_back(message); };
  o.log.min_level = LogLevel::Debug;
  Ref<Context> c = make_ref<Context>(o);

  auto chain = [](Context& cx, const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    // Eager constants on the default device: the trace captures them there (see fused_compare_test).
    auto k = [&](double v) {
      EagerScope eager;
      return op::scalar(cx, cx.default_device(), DType::Float32, v);
    };
    Tensor t = op::run1(cx, "Mul", {x, k(0.5)});
    t = op::run1(cx, "Add", {t, k(0.25)});
    return std::vector<Tensor>{op::run1(cx, "Sigmoid", {op::run1(cx, "Maximum", {t, k(-1)})})};
  };
  auto f = make_ref<graph::Function>(*c, "fused_off", chain);
  Tensor host = random_tensor(DType::Float32, Shape{7, 3}, -4, 4, 1);
  Tensor x = tensor_on_device(host, c->default_device());
  std::vector<float> want = values<float>(chain(ctx(), {host})[0]);  // eager on the CPU
  uint64_t d0 = 0;
  for (int i = 0; i < 3; ++i) {
    c->default_device().synchronize();
    d0 = static_cast<gpu::VulkanDevice&>(c->default_device()).stats().dispatches;
    Tensor got = f->call({x})[0];
    CHECK(got.device()->name() == "vulkan:0");
    std::vector<float> g = values<float>(tensor_on_device(got, ctx().cpu()));
    REQUIRE(g.size() == want.size());
    for (size_t j = 0; j < g.size(); ++j) CHECK(g[j] == doctest::Approx(want[j]).epsilon(1e-5));
  }
  // The graph did fuse (one FusedElementwise node), yet the unfused plan ran: one dispatch per op
  // (4), not one fused shader.
  size_t fused_nodes = 0;
  for (const graph::Node& n : f->concretes().at(0)->fused_graph().nodes)
    fused_nodes += n.kind == graph::NodeKind::Op && n.def == &graph::fused_elementwise_def();
  CHECK(fused_nodes == 1);
  c->default_device().synchronize();
  CHECK(static_cast<gpu::VulkanDevice&>(c->default_device()).stats().dispatches - d0 == 4);
  CHECK(gpu::fused_shader_compiles() == 0);
  int lines = 0;
  for (const std::string& m : messages())
    lines += m.find("CAIRN_VULKAN_FUSED_SHADERS=0") != std::string::npos;
  CHECK(lines == 1);
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
