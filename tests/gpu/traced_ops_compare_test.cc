// For every op in the registry, a traced function gives the same result as eager execution on
// Vulkan (lavapipe here, validation layer on): the cases of tests/runtime/graph/op_cases.h with
// their float64 inputs converted to float32 and int32 (the dtypes the Vulkan kernels have), inputs
// on the Vulkan device, and each one checked bitwise in every way a replay runs (traced_check.h).
//
// Random ops: with explicit seeds the draws are compared bitwise. With seeds 0,0 a traced function
// drawing twice per call must give, call after call, exactly the draws that eager calls give one by
// one on a Vulkan context with the same seed.
//
// Coverage: the test fails when a registered op has no case that ran eagerly on Vulkan and was
// compared, unless untraceable_ops() lists it (and tracing on Vulkan still refuses it).
#include "tests/gpu/vk_test_util.h"
#include "tests/runtime/graph/traced_check.h"

namespace cairn::test {
namespace {

Ref<Context> seeded_vk_context() {
  ContextOptions o;
  o.device = "vulkan";
  o.num_threads = 2;
  o.seed = 42;
  return make_ref<Context>(o);
}

Tensor on_vulkan(const Tensor& t) { return to_vk(t); }

const DeviceRun& vk_run() {
  static const DeviceRun run = run_all_cases(vk_ctx(), /*float64_kernels=*/false, on_vulkan, seeded_vk_context);
  return run;
}

TEST_CASE("every op's traced function matches eager execution bitwise on Vulkan") {
  const DeviceRun& r = vk_run();
  for (const std::string& p : r.problems) FAIL_CHECK(p);
  MESSAGE(r.variants << " variants on Vulkan: " << r.compared << " compared bitwise, " << r.errors_compared
                     << " raising the same error code");
  CHECK(r.compared > 500);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("every registered op has a case compared on Vulkan unless it is listed as untraceable") {
  INFO("ops without a case that ran eagerly on Vulkan:" << uncovered_ops(vk_run()));
  CHECK(uncovered_ops(vk_run()).empty());
  INFO("ops never seen as a node of their traced graph:" << ops_missing_from_graphs(vk_run()));
  CHECK(ops_missing_from_graphs(vk_run()).empty());
}

TEST_CASE("a function with unknown dimensions matches eager execution on Vulkan for every shape it serves") {
  FamilyRun r = run_all_families(vk_ctx(), /*float64_kernels=*/false, on_vulkan);
  for (const std::string& p : r.problems) FAIL_CHECK(p);
  MESSAGE(r.groups << " families, " << r.served << " cases served by one trace each");
  CHECK(r.groups > 50);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("untraceable ops run eagerly on Vulkan and are still refused by tracing") {
  for (const std::string& p : check_all_untraceable(vk_ctx(), /*float64_kernels=*/false, on_vulkan)) FAIL_CHECK(p);
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
