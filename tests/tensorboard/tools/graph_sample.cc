#include "tests/tensorboard/tools/graph_sample.h"

#include "runtime/eager/ops.h"
#include "runtime/graph/control_flow.h"

namespace cairn::test {

namespace {
using Ts = std::vector<Tensor>;
Tensor i32(Context& c, int32_t v) { return op::scalar(c, c.cpu(), DType::Int32, v); }
}  // namespace

Ref<graph::Function> graph_sample(Context& c) {
  Ref<Variable> calls = Variable::create(c, i32(c, 0), {.name = "sample/calls"});
  auto f = make_ref<graph::Function>(c, "collatz", [calls](Context& cx, const Ts& in) {
    Tensor two = i32(cx, 2);
    Tensor offset = in[1];  // used inside the cond inside the body
    graph::BranchFn cond = [](Context& y, const Ts& v) { return Ts{op::greater(y, v[0], i32(y, 1))}; };
    graph::BranchFn body = [=](Context& y, const Ts& v) {
      Tensor even = op::equal(y, op::run1(y, "FloorMod", {v[0], two}), op::sub(y, offset, offset));
      Ts next = graph::cond(
          y, even, {v[0]}, [=](Context& z, const Ts& w) { return Ts{op::run1(z, "FloorDiv", {w[0], two})}; },
          [](Context& z, const Ts& w) { return Ts{op::add(z, op::mul(z, w[0], i32(z, 3)), i32(z, 1))}; });
      return Ts{next[0], op::add(y, v[1], i32(y, 1))};
    };
    graph::WhileOptions options;
    options.max_iterations = 1000;
    Ts r = graph::while_loop(cx, cond, body, {in[0], i32(cx, 0)}, options);
    calls->assign(op::add(cx, calls->read(), i32(cx, 1)));
    return r;
  });
  f->call({i32(c, 6), i32(c, 0)});
  return f;
}

}  // namespace cairn::test
