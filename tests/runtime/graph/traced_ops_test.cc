// For every op in the registry, a traced function gives the same result as eager execution on the
// CPU: bitwise, in every way a replay runs (trace, fast-path replay, fusion on and off, no passes,
// constant folding, pooled intermediates; see traced_check.h), over the cases of op_cases.h as
// written (mostly float64) and converted to float32 and int32.
//
// Random ops: with explicit seeds the draws are compared bitwise like any op; with seeds 0,0 the
// k-th call of a traced function must draw exactly the k-th eager draw of a context with the same
// seed, and consecutive draws must differ.
//
// Coverage: the test fails when a registered op has no case that ran eagerly and was compared,
// unless untraceable_ops() lists it with a reason (and tracing still refuses it).
#include <map>
#include <set>

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

struct Results {
  int variants = 0, compared = 0, errors_compared = 0;
  std::set<std::string> ran, in_graph, absorbed;
};

// Every case once per variant; problems are reported as they are found.
const Results& results() {
  static const Results r = [] {
    Results out;
    for (const OpCase& base : op_cases()) {
      if (untraceable_ops().count(base.op)) continue;
      for (const OpCase& c : variants(base, /*float64_kernels=*/true)) {
        ++out.variants;
        TracedReport rep = c.fresh_draws ? check_fresh_draws(seeded_cpu_context, c) : check_traced(ctx(), c);
        for (const std::string& p : rep.problems) FAIL_CHECK(c.op << " [" << c.label << "] " << p);
        if (!rep.eager_ok) {
          ++out.errors_compared;
          continue;
        }
        ++out.compared;
        out.ran.insert(c.op);
        if (rep.op_in_graph) out.in_graph.insert(c.op);
        if (rep.absorbed_by_fusion) out.absorbed.insert(c.op);
      }
    }
    return out;
  }();
  return r;
}

TEST_CASE("every op's traced function matches eager execution bitwise on the CPU") {
  const Results& r = results();
  MESSAGE(op_cases().size() << " cases, " << r.variants << " variants: " << r.compared
                            << " compared bitwise, " << r.errors_compared << " raising the same error code");
  CHECK(r.compared > 1000);
}

TEST_CASE("every registered op has a compared case unless it is listed as untraceable") {
  const Results& r = results();
  std::string missing, not_in_graph, unknown;
  for (const OpDef* def : OpRegistry::global().list()) {
    if (untraceable_ops().count(def->name)) continue;
    if (!r.ran.count(def->name)) missing += " " + def->name;
    else if (!r.in_graph.count(def->name)) not_in_graph += " " + def->name;
  }
  for (const auto& [op, reason] : untraceable_ops())
    if (!OpRegistry::global().find(op)) unknown += " " + op;
  INFO("ops without a case that ran eagerly:" << missing);
  CHECK(missing.empty());
  INFO("ops never seen as a node of their traced graph:" << not_in_graph);
  CHECK(not_in_graph.empty());
  INFO("untraceable_ops() names ops that are not registered:" << unknown);
  CHECK(unknown.empty());
}

// One trace with -1 dimensions serves every shape of a family (the ops_compare shapes: scalars,
// empty, odd, large, broadcasting) through the generic replay.
TEST_CASE("a function with unknown dimensions matches eager execution for every shape it serves") {
  std::vector<OpCase> all;
  for (const OpCase& base : op_cases())
    for (OpCase& c : variants(base, /*float64_kernels=*/true)) all.push_back(std::move(c));
  int groups = 0, served = 0;
  for (const std::vector<OpCase>& members : shape_families(all)) {
    ++groups;
    served += static_cast<int>(members.size());
    TracedReport rep = check_shape_family(ctx(), members);
    for (const std::string& p : rep.problems) FAIL_CHECK(members[0].family << ": " << p);
  }
  MESSAGE(groups << " families, " << served << " cases served by one trace each");
  CHECK(groups > 50);
}

TEST_CASE("untraceable ops run eagerly and are still refused by tracing") {
  for (const auto& [op, reason] : untraceable_ops()) {
    CAPTURE(op);
    CAPTURE(reason);
    int cases = 0;
    for (const OpCase& c : op_cases()) {
      if (c.op != op) continue;
      ++cases;
      TracedReport rep = check_untraceable(ctx(), c);
      CHECK_MESSAGE(rep.eager_ok, c.label << ": " << rep.eager_error);
      for (const std::string& p : rep.problems) FAIL_CHECK(c.op << " [" << c.label << "] " << p);
    }
    CHECK_MESSAGE(cases > 0, "no case for untraceable op " << op);
  }
}

// The pooled chain puts each elementwise op before a Neg; fusion must have absorbed every op it
// knows in some case, so the fused kernels' steps are all compared with the eager kernels.
TEST_CASE("every fusible op was fused in some case and still matched eager execution") {
  const Results& r = results();
  std::string never;
  for (const OpDef* def : OpRegistry::global().list())
    if (graph::fusible_op(*def) && !r.absorbed.count(def->name)) never += " " + def->name;
  INFO("fusible ops never absorbed into a FusedElementwise node:" << never);
  CHECK(never.empty());
  CHECK(!r.absorbed.empty());
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
