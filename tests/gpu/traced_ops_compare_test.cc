// For every op in the registry, a traced function gives the same result as eager execution on
// Vulkan (lavapipe here, validation layer on): the cases of tests/runtime/graph/op_cases.h with
// their float64 inputs converted to float32 and int32 (the dtypes the Vulkan kernels have), inputs
// on the Vulkan device, and each one checked bitwise in every way a replay runs (traced_check.h).
//
// Random ops: with explicit seeds the draws are compared bitwise; with seeds 0,0 the k-th call of
// a traced function must draw exactly the k-th eager draw of a Vulkan context with the same seed.
//
// Coverage: the test fails when a registered op has no case that ran eagerly on Vulkan and was
// compared, unless untraceable_ops() lists it (and tracing on Vulkan still refuses it).
#include <set>

#include "runtime/ops/registry.h"
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

OpCase on_vulkan(const OpCase& c) {
  OpCase v = c;
  for (Tensor& t : v.inputs) t = to_vk(t);
  return v;
}

struct Results {
  int variants = 0, compared = 0, errors_compared = 0;
  std::set<std::string> ran, in_graph;
};

const Results& results() {
  static const Results r = [] {
    Results out;
    for (const OpCase& base : op_cases()) {
      if (untraceable_ops().count(base.op)) continue;
      for (const OpCase& variant : variants(base, /*float64_kernels=*/false)) {
        OpCase c = on_vulkan(variant);
        ++out.variants;
        TracedReport rep = c.fresh_draws ? check_fresh_draws(seeded_vk_context, c) : check_traced(vk_ctx(), c);
        for (const std::string& p : rep.problems) FAIL_CHECK(c.op << " [" << c.label << "] " << p);
        if (!rep.eager_ok) {
          ++out.errors_compared;
          continue;
        }
        ++out.compared;
        out.ran.insert(c.op);
        if (rep.op_in_graph) out.in_graph.insert(c.op);
      }
    }
    return out;
  }();
  return r;
}

TEST_CASE("every op's traced function matches eager execution bitwise on Vulkan") {
  const Results& r = results();
  MESSAGE(r.variants << " variants on Vulkan: " << r.compared << " compared bitwise, " << r.errors_compared
                     << " raising the same error code");
  CHECK(r.compared > 500);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("every registered op has a case compared on Vulkan unless it is listed as untraceable") {
  const Results& r = results();
  std::string missing, not_in_graph;
  for (const OpDef* def : OpRegistry::global().list()) {
    if (untraceable_ops().count(def->name)) continue;
    if (!r.ran.count(def->name)) missing += " " + def->name;
    else if (!r.in_graph.count(def->name)) not_in_graph += " " + def->name;
  }
  INFO("ops without a case that ran eagerly on Vulkan:" << missing);
  CHECK(missing.empty());
  INFO("ops never seen as a node of their traced graph:" << not_in_graph);
  CHECK(not_in_graph.empty());
}

TEST_CASE("a function with unknown dimensions matches eager execution on Vulkan for every shape it serves") {
  std::vector<OpCase> all;
  for (const OpCase& base : op_cases())
    for (const OpCase& c : variants(base, /*float64_kernels=*/false)) all.push_back(on_vulkan(c));
  int groups = 0, served = 0;
  for (const std::vector<OpCase>& members : shape_families(all)) {
    ++groups;
    served += static_cast<int>(members.size());
    TracedReport rep = check_shape_family(vk_ctx(), members);
    for (const std::string& p : rep.problems) FAIL_CHECK(members[0].family << ": " << p);
  }
  MESSAGE(groups << " families, " << served << " cases served by one trace each");
  CHECK(groups > 50);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("untraceable ops run eagerly on Vulkan and are still refused by tracing") {
  for (const auto& [op, reason] : untraceable_ops()) {
    CAPTURE(op);
    CAPTURE(reason);
    int compared = 0;
    for (const OpCase& base : op_cases()) {
      if (base.op != op) continue;
      for (const OpCase& variant : variants(base, /*float64_kernels=*/false)) {
        TracedReport rep = check_untraceable(vk_ctx(), on_vulkan(variant));
        for (const std::string& p : rep.problems) FAIL_CHECK(variant.op << " [" << variant.label << "] " << p);
        compared += rep.eager_ok;
      }
    }
    CHECK_MESSAGE(compared > 0, "no case of untraceable op " << op << " ran eagerly on Vulkan");
  }
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
