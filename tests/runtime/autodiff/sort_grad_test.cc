// Sort's gradient where finite differences cannot look (NaN, ties). Kept out of the gradcheck case
// library, which other test packages link.
#include <cmath>

#include "runtime/autodiff/tape.h"
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

// Finite differences cannot see through NaN: check where Sort sends each dy element directly.
TEST_CASE("Sort's gradient follows the sorted order with NaNs and ties") {
  auto sort_grad = [](const Tensor& x, bool descending, const Tensor& dy) {
    GradientTape tape(ctx());
    tape.watch(x);
    Tensor y = run_op(ctx(), "Sort", {x}, {attr_bool("descending", descending)})[0];
    return as_doubles(tape.gradient(y, {x}, &dy)[0]);
  };
  const double nan = NAN;
  Tensor x = f64({nan, 3, 1, 2, 1}, {5});
  Tensor dy = f64({10, 20, 30, 40, 50}, {5});
  // ascending: [1 (index 2), 1 (index 4), 2, 3, NaN]: ties keep their order, NaN last
  CHECK(sort_grad(x, false, dy) == std::vector<double>{50, 40, 10, 30, 20});
  // descending: [NaN, 3, 2, 1 (index 2), 1 (index 4)]
  CHECK(sort_grad(x, true, dy) == std::vector<double>{10, 20, 40, 30, 50});
}

}  // namespace
}  // namespace cairn::test
