// For every op in the registry, a traced function gives the same result as eager execution on the
// CPU: bitwise, in every way a replay runs (trace, fast-path replay, fusion on and off, no passes,
// constant folding, unknown dimensions, under a tape, exported and loaded, pooled intermediates;
// see traced_check.h), over the cases of op_cases.h as written (mostly float64) and converted to
// float32 and int32.
//
// Random ops: with explicit seeds the draws are compared bitwise like any op. With seeds 0,0 a
// traced function drawing twice per call must give, call after call, exactly the draws that eager
// calls give one by one on a context with the same seed; consecutive draws must differ.
//
// Coverage: the test fails when a registered op has no case that ran eagerly and was compared,
// unless untraceable_ops() lists it with a reason (and tracing still refuses it).
#include "runtime/graph/fusion.h"
#include "runtime/ops/registry.h"
#include "tests/runtime/graph/traced_check.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

Ref<Context> seeded_cpu_context() {
  ContextOptions o;
  o.num_threads = 2;
  o.seed = 42;
  return make_ref<Context>(o);
}

Tensor on_cpu(const Tensor& t) { return t; }

const DeviceRun& cpu_run() {
  static const DeviceRun run = run_all_cases(ctx(), /*float64_kernels=*/true, on_cpu, seeded_cpu_context);
  return run;
}

TEST_CASE("every op's traced function matches eager execution bitwise on the CPU") {
  const DeviceRun& r = cpu_run();
  for (const std::string& p : r.problems) FAIL_CHECK(p);
  MESSAGE(op_cases().size() << " cases, " << r.variants << " variants: " << r.compared
                            << " compared bitwise, " << r.errors_compared << " raising the same error code");
  CHECK(r.compared > 1000);
}

TEST_CASE("every registered op has a compared case unless it is listed as untraceable") {
  INFO("ops without a case that ran eagerly:" << uncovered_ops(cpu_run()));
  CHECK(uncovered_ops(cpu_run()).empty());
  INFO("ops never seen as a node of their traced graph:" << ops_missing_from_graphs(cpu_run()));
  CHECK(ops_missing_from_graphs(cpu_run()).empty());
}

// One trace with -1 dimensions serves every shape of a family (the ops_compare shapes: scalars,
// empty, odd, large, broadcasting) through the generic replay.
TEST_CASE("a function with unknown dimensions matches eager execution for every shape it serves") {
  FamilyRun r = run_all_families(ctx(), /*float64_kernels=*/true, on_cpu);
  for (const std::string& p : r.problems) FAIL_CHECK(p);
  MESSAGE(r.groups << " families, " << r.served << " cases served by one trace each");
  CHECK(r.groups > 50);
}

TEST_CASE("untraceable ops run eagerly and are still refused by tracing") {
  for (const std::string& p : check_all_untraceable(ctx(), /*float64_kernels=*/true, on_cpu)) FAIL_CHECK(p);
}

// The pooled chain puts each elementwise op before a Neg; fusion must have absorbed every op it
// knows in some case, so the fused kernels' steps are all compared with the eager kernels.
TEST_CASE("every fusible op was fused in some case and still matched eager execution") {
  std::string never;
  for (const OpDef* def : OpRegistry::global().list())
    if (graph::fusible_op(*def) && !cpu_run().absorbed.count(def->name)) never += " " + def->name;
  INFO("fusible ops never absorbed into a FusedElementwise node:" << never);
  CHECK(never.empty());
  CHECK(!cpu_run().absorbed.empty());
}

// The harness itself: a function whose traced graph differs from its eager run (it adds 1 when its
// input is symbolic), one that raises only eagerly, and one whose op vanishes from the trace, are
// all caught.
TEST_CASE("the traced == eager harness reports differences it is shown") {
  auto symbolic = [](const Tensor& t) { return t.device()->kind() == DeviceKind::Symbolic; };
  OpCase diverges{"Neg", "adds 1 when traced", {f64({1, -2, 3}, {3})}, [&](Context& c, const std::vector<Tensor>& in) {
                    Tensor y = run_op(c, "Neg", in)[0];
                    return std::vector<Tensor>{symbolic(in[0]) ? run_op(c, "Add", {y, f64({1}, {})})[0] : y};
                  }};
  TracedReport r = check_traced(ctx(), diverges);
  CHECK(r.eager_ok);
  // Trace and replay with fusion off, on, unknown dims and under a tape, the exported function's
  // call and replay, the unoptimized trace, and the pooled chain; the constants mode traces with
  // eager inputs, so it does not diverge.
  std::string all;
  for (const std::string& p : r.problems) all += p + "\n";
  CHECK_MESSAGE(r.problems.size() == 12, all);
  REQUIRE(!r.problems.empty());
  CHECK_MESSAGE(r.problems[0].find("3 of 3 elements differ; first at 0: 0 vs eager -1") != std::string::npos,
                r.problems[0]);

  OpCase raises{"RealDiv", "divides by zero only eagerly",
                {make<int32_t>({4, 6}, {2}), make<int32_t>({0, 2}, {2})}, [&](Context& c, const std::vector<Tensor>& in) {
                  return run_op(c, symbolic(in[0]) ? "Add" : "RealDiv", in);
                }};
  r = check_traced(ctx(), raises);
  CHECK(!r.eager_ok);
  REQUIRE(!r.problems.empty());
  CHECK_MESSAGE(r.problems[0].find("succeeded where eager raised INVALID_ARGUMENT") != std::string::npos, r.problems[0]);
  CHECK(!r.op_in_graph);
}

}  // namespace
}  // namespace cairn::test
