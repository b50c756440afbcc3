// Concurrent replays of every op's traced function (four threads, each on its own replay state and
// buffer pool) match eager execution bitwise. Runs under ThreadSanitizer in CI (tag "tsan"), on the
// small cases of op_cases.h (up to 5000 input elements) in every CPU variant.
#include "tests/runtime/graph/traced_check.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("concurrent replays of every op's traced function match eager execution") {
  int checked = 0;
  for (const OpCase& base : op_cases()) {
    if (untraceable_ops().count(base.op) || base.fresh_draws) continue;  // fresh draws differ per call
    int64_t elements = 0;
    for (const Tensor& t : base.inputs) elements += t.num_elements();
    if (elements > 5000) continue;
    for (const OpCase& c : variants(base, /*float64_kernels=*/true)) {
      TracedReport rep = check_concurrent_replays(ctx(), c, /*threads=*/4, /*calls=*/3);
      for (const std::string& p : rep.problems) FAIL_CHECK(c.op << " [" << c.label << "] " << p);
      checked += rep.eager_ok;
    }
  }
  MESSAGE(checked << " cases replayed concurrently");
  CHECK(checked > 1000);
}

}  // namespace
}  // namespace cairn::test
