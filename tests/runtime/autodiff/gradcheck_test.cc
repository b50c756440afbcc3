// Every op's gradient against central finite differences in float64, and a coverage check: each
// op with a gradient has cases, and each differentiable op has a gradient.
#include <set>

#include "runtime/ops/registry.h"
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {

TEST_CASE("every gradient matches central finite differences") {
  REQUIRE(!grad_cases().empty());
  MESSAGE(grad_cases().size() << " finite-difference cases");
  for (const GradCase& c : grad_cases()) {
    CAPTURE(c.op);
    CAPTURE(c.label);
    GradReport r;
    try {
      r = check_gradient(ctx(), c);
    } catch (const Error& e) {
      FAIL_CHECK(c.op << " [" << c.label << "] threw: " << e.message());
      continue;
    }
    CHECK_MESSAGE(r.max_error <= c.tolerance, c.op << " [" << c.label << "]: " << r.worst);
  }
}

// Ops a tape cannot differentiate, with the reason. Everything else must have a gradient.
const std::set<std::string>& expected_without_gradient();

TEST_CASE("every differentiable op has a gradient and every gradient has cases") {
  std::set<std::string> covered;
  for (const GradCase& c : grad_cases()) covered.insert(c.op);
  for (const OpDef* def : OpRegistry::global().list()) {
    CAPTURE(def->name);
    if (def->gradient) {
      CHECK_MESSAGE(covered.count(def->name), "no finite-difference case for " << def->name);
    } else if (def->differentiable) {
      CHECK_MESSAGE(expected_without_gradient().count(def->name), def->name << " has no gradient");
    }
  }
}

// Ops whose outputs are never floating (comparisons, logic, indices) or that take no floating
// input (random draws, Range): the tape never records them, so they need no gradient function.
const std::set<std::string>& expected_without_gradient() {
  static const std::set<std::string> names = {};
  return names;
}

}  // namespace cairn::test
