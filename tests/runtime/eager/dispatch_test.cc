#include <thread>

#include "runtime/ops/registry.h"
#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {
// Records every op it sees (what the gradient tape does).
struct Recorder : DispatchHook {
  std::vector<std::string> ops;
  std::vector<Shape> output_shapes;
  void after(Context&, const OpCall& call) override {
    ops.push_back(call.def.name);
    output_shapes.push_back(call.outputs[0].shape());
  }
};

// Replaces Mul with a constant result (what graph capture does: the kernel never runs).
struct Interceptor : DispatchHook {
  int handled = 0;
  bool before(Context& ctx, OpCall& call) override {
    if (call.def.name != "Mul") return false;
    ++handled;
    call.outputs[0] = make<float>({42.0f}, Shape{1});
    (void)ctx;
    return true;
  }
};
}  // namespace

TEST_CASE("dispatch hooks see every op and can replace its execution") {
  Context& c = ctx();
  Recorder rec;
  Interceptor icp;
  c.add_hook(&rec);
  Tensor a = make<float>({1, 2}, {2});
  run1("Add", {a, a});
  run1("Relu", {a});
  c.add_hook(&icp);
  Tensor m = run1("Mul", {a, a});
  CHECK(values<float>(m) == std::vector<float>{42.0f});
  CHECK(icp.handled == 1);
  CHECK(values<float>(run1("Sub", {a, a})) == std::vector<float>{0, 0});
  c.remove_hook(&icp);
  c.remove_hook(&rec);
  CHECK_FALSE(c.has_hooks());
  run1("Add", {a, a});
  // Mul was intercepted before the kernel; `after` hooks still see it (a tape inside a traced
  // function records the symbolic op).
  CHECK(rec.ops == std::vector<std::string>{"Add", "Relu", "Mul", "Sub"});
  CHECK(rec.output_shapes[0] == Shape{2});
}

TEST_CASE("ops on mixed devices and ops without inputs") {
  // No inputs: the op runs on the context's default device.
  Tensor r = run1("Range", {}, {attr_float("start", 0), attr_float("limit", 3)});
  CHECK(r.device()->name() == "cpu");
  CHECK(values<float>(r) == std::vector<float>{0, 1, 2});
  // A tensor from another context's CPU device is a different device: an error, not a silent copy.
  ContextOptions o;
  Context other(o);
  Tensor b = Tensor::allocate(other.cpu(), DType::Float32, Shape{3});
  CHECK_THROWS_CODE(run1("Add", {r, b}), Code::InvalidArgument, "Add: inputs are on different devices");
}

TEST_CASE("a repeated call without attributes gives the same results and the same errors (the dispatch memo)") {
  const OpDef& add = OpRegistry::global().get("Add");
  Tensor a = make<float>({1, 2}, {2});
  Tensor b = make<float>({10, 20, 30, 40, 50, 60}, {3, 2});
  for (int round = 0; round < 3; ++round) {  // the first call fills the memo, the others hit it
    CAPTURE(round);
    CHECK(values<float>(run1("Add", {a, a})) == std::vector<float>{2, 4});
    // Same op, other shapes: a miss that replaces the entry, then the first shapes again.
    Tensor sum = run1("Add", {b, a});
    CHECK(sum.shape() == Shape{3, 2});
    CHECK(values<float>(sum) == std::vector<float>{11, 22, 31, 42, 51, 62});
    // Other dtypes are other calls.
    CHECK(values<int32_t>(run1("Add", {make<int32_t>({1, 2}, {2}), make<int32_t>({3, 4}, {2})})) ==
          std::vector<int32_t>{4, 6});
    CHECK_THROWS_CODE(run1("Add", {a, make<float>({1, 2, 3}, {3})}), Code::InvalidArgument, "Add: ");
    CHECK_THROWS_CODE(run1("Add", {a, make<int32_t>({1, 2}, {2})}), Code::InvalidArgument,
                      "Add: input 'y' has dtype int32 but 'x' has float32");
    // Room for the wrong number of outputs: the same message whether the call was remembered or not.
    const Tensor* ins[2] = {&a, &a};
    Tensor outs[2];
    CHECK_THROWS_CODE(run_op(ctx(), add, ins, 2, nullptr, 0, outs, 2), Code::InvalidArgument,
                      "Add: expected 1 output, got room for 2");
    const Tensor* empty[2] = {&a, &outs[0]};
    CHECK_THROWS_CODE(run_op(ctx(), add, empty, 2, nullptr, 0, outs, 1), Code::InvalidArgument,
                      "Add: input 1 is an empty tensor handle");
  }
  // An op with attributes given is never remembered; with its defaults (axis {}: every axis) it is.
  Tensor m = make<float>({1, 5, 3, 2}, {2, 2});
  std::vector<int64_t> axis1{1};
  for (int round = 0; round < 2; ++round) {
    CHECK(values<float>(run1("Sum", {m}, {attr_ints("axis", axis1), attr_bool("keep_dims", true)})) ==
          std::vector<float>{6, 5});
    Tensor all = run1("Sum", {m});
    CHECK(all.shape() == Shape{});
    CHECK(values<float>(all) == std::vector<float>{11});
  }
}

namespace {
// Runs an Add of other shapes inside every Add on float32[2] (what a hook or kernel running ops of
// its own does) and notes the outer call's output shape afterwards.
struct NestedAdd : DispatchHook {
  std::vector<Shape> outer_shapes;
  void after(Context& ctx, const OpCall& call) override {
    if (call.def.name != "Add" || call.output_specs[0].shape != Shape{2}) return;
    Tensor b = make<float>({1, 2, 3}, {3});
    const Tensor* ins[2] = {&b, &b};
    Tensor out;
    run_op(ctx, call.def, ins, 2, nullptr, 0, &out, 1);
    outer_shapes.push_back(call.output_specs[0].shape);
  }
};
}  // namespace

TEST_CASE("an op run inside a remembered call leaves that call's specs alone") {
  Context& c = ctx();
  Tensor a = make<float>({1, 2}, {2});
  run1("Add", {a, a});  // remembered
  NestedAdd nested;
  c.add_hook(&nested);
  for (int round = 0; round < 3; ++round) CHECK(values<float>(run1("Add", {a, a})) == std::vector<float>{2, 4});
  c.remove_hook(&nested);
  CHECK(nested.outer_shapes == std::vector<Shape>(3, Shape{2}));
  CHECK(values<float>(run1("Add", {a, a})) == std::vector<float>{2, 4});
}

TEST_CASE("threads remember calls separately") {
  Tensor a = make<float>({1, 2}, {2});
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Tensor x = make<float>({float(t), 1}, {2});
      for (int i = 0; i < 50; ++i) ok[t] += values<float>(run1("Mul", {x, a})) == std::vector<float>{float(t), 2};
    });
  for (auto& th : threads) th.join();
  CHECK(ok == std::vector<int>(4, 50));
}

}  // namespace cairn
