// Every row of the elementwise table (runtime/cpu/elementwise_table.h) gives its op a CPU kernel, a
// fused step (CPU fused loop and graph pass) and a Vulkan kernel and fused-shader code; the steps
// are numbered in row order. No Vulkan device is needed: kernels register statically.
#include <iterator>
#include <string>

#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/fused_shader.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "runtime/graph/fusion.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

struct Row {
  const char* op;
  int64_t step;
  bool binary;
  uint32_t vk_code;
  const char* vk_name;
};

const Row kRows[] = {
#define CAIRN_UNARY_ROW(name, step, F, code) {name, graph::step, false, code, #code},
#define CAIRN_BINARY_ROW(name, step, F, code, float_only) {name, graph::step, true, code, #code},
    CAIRN_FUSIBLE_UNARY_OPS(CAIRN_UNARY_ROW) CAIRN_FUSIBLE_BINARY_OPS(CAIRN_BINARY_ROW)
#undef CAIRN_UNARY_ROW
#undef CAIRN_BINARY_ROW
};

bool has_kernel(const OpDef& def, DeviceKind kind) {
  KernelFn fn = def.kernels[static_cast<int>(kind)];
  return fn != nullptr && fn != gpu::no_vulkan_kernel;
}

TEST_CASE("every row of the elementwise table has a CPU kernel, a fused step and a Vulkan code") {
  CHECK(static_cast<int64_t>(std::size(kRows)) == graph::kNumFusedSteps);
  for (size_t i = 0; i < std::size(kRows); ++i) {
    const Row& r = kRows[i];
    CAPTURE(r.op);
    const OpDef* def = OpRegistry::global().find(r.op);
    REQUIRE(def != nullptr);
    CHECK(has_kernel(*def, DeviceKind::CPU));
    CHECK(has_kernel(*def, DeviceKind::Vulkan));
    CHECK(graph::fusible_op(*def));
    CHECK(r.step == static_cast<int64_t>(i));
    CHECK((r.step >= graph::kFirstBinaryStep) == r.binary);
    REQUIRE(graph::fused_step_op(r.step) != nullptr);
    CHECK(std::string(graph::fused_step_op(r.step)) == r.op);
    const gpu::StepCode* code = gpu::step_code(r.step);
    REQUIRE(code != nullptr);
    CHECK(code->binary == r.binary);
    CHECK(code->code == r.vk_code);
    // The fused shader names the code in its GLSL: the op_codes.h name, not its value.
    CHECK(std::string(code->name) == r.vk_name);
    CHECK(std::string(code->name).rfind(r.binary ? "BOP_" : "UOP_", 0) == 0);
  }
  CHECK(gpu::step_code(graph::kNumFusedSteps) == nullptr);
  CHECK(graph::fused_step_op(graph::kNumFusedSteps) == nullptr);
}

}  // namespace
}  // namespace cairn::test
