// Replays on Vulkan reuse their intermediate buffers: after a warm-up, each replay allocates only
// the result it hands back, as on the CPU (executor.h). Validation layer on.
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("steady-state replays on Vulkan allocate only their results") {
  Context& vc = vk_ctx();
  graph::FunctionOptions options;
  options.passes.fuse_elementwise = false;  // keep ten nodes, ten intermediates
  auto f = make_ref<graph::Function>(
      vc, "chain",
      [](Context& c, const std::vector<Tensor>& in) {
        Tensor x = in[0];
        for (int i = 0; i < 5; ++i) x = op::tanh(c, op::mul(c, x, in[1]));
        return std::vector<Tensor>{x};
      },
      options);
  Tensor x = to_vk(random_tensor(DType::Float32, Shape{256}, -1, 1, 3));
  Tensor a = to_vk(random_tensor(DType::Float32, Shape{256}, 0.5, 1.5, 4));
  std::vector<float> first = values<float>(to_cpu(f->call({x, a})[0]));
  f->call({x, a});  // warm-up: the registers exist now
  const uint64_t before = vk_device().stats().buffers;
  constexpr int kReplays = 50;
  for (int i = 0; i < kReplays; ++i) {
    Tensor y = f->call({x, a})[0];
    if (i == kReplays - 1) CHECK(values<float>(to_cpu(y)) == first);
  }
  // The last check's read-back copy adds one host-visible staging buffer at most.
  const uint64_t allocated = vk_device().stats().buffers - before;
  CHECK(allocated >= kReplays);
  CHECK(allocated <= kReplays + 1);
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
