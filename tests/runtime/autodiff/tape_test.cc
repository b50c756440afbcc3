// GradientTape semantics: watching, variables, persistence, stop_gradient, nesting, threads, errors.
#include <thread>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/track/variable.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

Tensor f64s(std::vector<double> v) { return make<double>(v, Shape{static_cast<int64_t>(v.size())}); }

TEST_CASE("gradient of a watched tensor; unwatched tensors are not recorded") {
  Context& c = ctx();
  Tensor x = f64s({1, 2, 3}), k = f64s({4, 5, 6});
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = op::all_sum(c, op::mul(c, op::square(c, x), k));  // sum(k x^2)
  size_t recorded = tape.num_recorded();
  Tensor unrelated = op::add(c, k, k);
  CHECK(tape.num_recorded() == recorded);  // touches nothing watched
  std::vector<Tensor> g = tape.gradient(y, {x, k});
  check_close(as_doubles(g[0]), {8, 20, 36});  // 2 k x
  CHECK_FALSE(g[1].valid());                   // k was never watched: unconnected
}

TEST_CASE("a non-scalar target is summed; output_gradient weights it") {
  Context& c = ctx();
  Tensor x = f64s({1, 2});
  GradientTape tape(c, {.persistent = true});
  tape.watch(x);
  Tensor y = op::mul(c, x, x);
  check_close(as_doubles(tape.gradient(y, {x})[0]), {2, 4});
  Tensor w = f64s({10, -1});
  check_close(as_doubles(tape.gradient(y, {x}, &w)[0]), {20, -4});
}

TEST_CASE("trainable variables are watched when read; non-trainable ones only when asked") {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, f64s({3}), {.name = "v"});
  Ref<Variable> frozen = Variable::create(c, f64s({5}), {.name = "frozen", .trainable = false});
  GradientTape tape(c, {.persistent = true});
  Tensor y = op::mul(c, v->read(), frozen->read());
  std::vector<Tensor> g = tape.gradient(y, std::vector<const Variable*>{v.get(), frozen.get()});
  check_close(as_doubles(g[0]), {5});
  CHECK_FALSE(g[1].valid());
  REQUIRE(tape.watched_variables().size() == 1);
  CHECK(tape.watched_variables()[0].get() == v.get());

  GradientTape explicit_tape(c, {.watch_accessed_variables = false});
  explicit_tape.watch(*frozen);
  Tensor z = op::mul(c, v->read(), frozen->read());
  std::vector<Tensor> gz = explicit_tape.gradient(z, std::vector<const Variable*>{v.get(), frozen.get()},
                                                  nullptr, Unconnected::Zero);
  check_close(as_doubles(gz[0]), {0});  // not watched: zeros on request
  check_close(as_doubles(gz[1]), {3});
}

TEST_CASE("every read of a variable contributes, including values assigned under the tape") {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, f64s({2}), {.name = "v"});
  GradientTape tape(c);
  Tensor a = op::square(c, v->read());  // d/dv = 2v = 4
  v->assign(f64s({3}));
  Tensor b = op::mul(c, v->read(), f64s({10}));  // d/dv = 10
  Tensor y = op::add(c, a, b);
  check_close(as_doubles(tape.gradient(y, std::vector<const Variable*>{v.get()})[0]), {14});
}

TEST_CASE("a non-persistent tape allows one gradient call") {
  Context& c = ctx();
  Tensor x = f64s({1});
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = op::square(c, x);
  tape.gradient(y, {x});
  CHECK_THROWS_CODE(tape.gradient(y, {x}), Code::FailedPrecondition, "non-persistent");
}

TEST_CASE("stop_gradient and stop_recording cut the path") {
  Context& c = ctx();
  Tensor x = f64s({2});
  GradientTape tape(c, {.persistent = true});
  tape.watch(x);
  Tensor y = op::mul(c, x, op::stop_gradient(c, x));  // treated as x * const
  check_close(as_doubles(tape.gradient(y, {x})[0]), {2});
  tape.stop_recording();
  Tensor z = op::square(c, x);
  tape.resume_recording();
  CHECK_FALSE(tape.gradient(z, {x})[0].valid());
}

TEST_CASE("nested tapes give second derivatives") {
  Context& c = ctx();
  Tensor x = f64s({1.5, -2});
  GradientTape outer(c);
  outer.watch(x);
  Tensor dy;
  {
    GradientTape inner(c);
    inner.watch(x);
    Tensor y = op::mul(c, op::square(c, x), x);  // x^3
    dy = inner.gradient(y, {x})[0];              // 3x^2
  }
  check_close(as_doubles(dy), {6.75, 12});
  check_close(as_doubles(outer.gradient(dy, {x})[0]), {9, -12});  // 6x
}

TEST_CASE("a tape records only its own thread") {
  Context& c = ctx();
  Tensor x = f64s({1});
  GradientTape tape(c);
  tape.watch(x);
  std::thread other([&] { op::square(c, x); });
  other.join();
  CHECK(tape.num_recorded() == 0);
}

TEST_CASE("errors name what was wrong") {
  Context& c = ctx();
  GradientTape tape(c, {.persistent = true});
  CHECK_THROWS_CODE(tape.watch(make<int32_t>({1}, Shape{1})), Code::InvalidArgument, "cannot watch a int32");
  CHECK_THROWS_CODE(tape.gradient(Tensor(), std::vector<Tensor>{}), Code::InvalidArgument, "target is an empty tensor");
  Tensor x = f64s({1, 2});
  tape.watch(x);
  Tensor y = op::square(c, x);
  Tensor bad = f64s({1});
  CHECK_THROWS_CODE(tape.gradient(y, {x}, &bad), Code::InvalidArgument, "output_gradient");
}

TEST_CASE("reset forgets the recording") {
  Context& c = ctx();
  Tensor x = f64s({1});
  GradientTape tape(c, {.persistent = true});
  tape.watch(x);
  Tensor y = op::square(c, x);
  tape.reset();
  CHECK(tape.num_recorded() == 0);
  CHECK_FALSE(tape.gradient(y, {x})[0].valid());
}

}  // namespace
}  // namespace cairn::test
