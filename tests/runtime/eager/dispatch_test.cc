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

}  // namespace cairn
