// Control flow on Vulkan: a traced cond and while_loop whose predicates are computed on the GPU
// (each branch decision reads one bool back), and an RNN with a TensorArray over a data-dependent
// length, compared with eager Vulkan and the CPU. Validation layer on.
#include <cmath>

#include "runtime/eager/ops.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/function.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

using graph::BranchFn;
using graph::Function;
using Ts = std::vector<Tensor>;

Tensor one(Context& c, DType dt) { return op::scalar(c, c.default_device(), dt, 1); }

// h_{t+1} = tanh(x_t W + h_t U) for t < length; outputs in a TensorArray. Runs on `c`'s default device.
Ts rnn(Context& c, const Tensor& x, const Tensor& length, const Tensor& w, const Tensor& u) {
  const int64_t steps = x.shape().dim(0), batch = x.shape().dim(1), units = w.shape().dim(1);
  Tensor h0 = op::filled(c, c.default_device(), DType::Float32, Shape{batch, units}, 0);
  Tensor outputs = graph::tensor_array(c, DType::Float32, steps, Shape{batch, units});
  Tensor start = op::scalar(c, c.default_device(), DType::Int32, 0);
  BranchFn cond = [length](Context& y, const Ts& v) { return Ts{op::less(y, v[0], length)}; };
  BranchFn body = [=](Context& y, const Ts& v) {
    Tensor h = op::tanh(y, op::add(y, op::matmul(y, graph::tensor_array_read(y, x, v[0]), w), op::matmul(y, v[1], u)));
    return Ts{op::add(y, v[0], one(y, DType::Int32)), h, graph::tensor_array_write(y, v[2], v[0], h)};
  };
  Ts r = graph::while_loop(c, cond, body, {start, h0, outputs});
  return {r[1], r[2]};
}

void check_near(const Tensor& got, const Tensor& want) {
  std::vector<float> g = values<float>(to_cpu(got)), e = values<float>(to_cpu(want));
  REQUIRE(g.size() == e.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == doctest::Approx(e[i]).epsilon(1e-4));
}

TEST_CASE("an RNN over a data-dependent length, traced on Vulkan, matches eager Vulkan and the CPU") {
  Context& vc = vk_ctx();
  const int64_t T = 6, B = 2, F = 3, U = 4;
  Tensor x = random_tensor(DType::Float32, Shape{T, B, F}, -1, 1, 11);
  Tensor w = random_tensor(DType::Float32, Shape{F, U}, -0.5, 0.5, 12);
  Tensor u = random_tensor(DType::Float32, Shape{U, U}, -0.5, 0.5, 13);
  Ref<Variable> wv = Variable::create(vc, to_vk(w), {.name = "w"});
  Ref<Variable> uv = Variable::create(vc, to_vk(u), {.name = "u"});
  int traces = 0;
  auto f = make_ref<Function>(vc, "rnn", [&](Context& cx, const Ts& in) {
    ++traces;
    return rnn(cx, in[0], in[1], wv->read(), uv->read());
  });
  for (int len : {0, 2, 6}) {
    Tensor length = to_vk(make<int32_t>({len}, Shape{}));
    MESSAGE("eager");
    Ts eager = rnn(vc, to_vk(x), length, wv->read(), uv->read());
    MESSAGE("traced");
    Ts traced = f->call({to_vk(x), length});
    CHECK(traced[0].device()->kind() == DeviceKind::Vulkan);
    check_near(traced[0], eager[0]);
    check_near(traced[1], eager[1]);
    Ts cpu = rnn(ctx(), x, make<int32_t>({len}, Shape{}), w, u);
    check_near(traced[0], cpu[0]);
    check_near(traced[1], cpu[1]);
  }
  CHECK(traces == 1);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("a function traced on CPU inputs retraces for Vulkan inputs, with its constants there") {
  Context& vc = vk_ctx();
  auto f = make_ref<Function>(vc, "plus_half", [](Context& cx, const Ts& in) {
    return Ts{op::add(cx, in[0], op::scalar(cx, cx.cpu(), DType::Float32, 0.5))};  // a host constant
  });
  Tensor x = make<float>({1, 2}, Shape{2});
  CHECK(values<float>(f->call({x})[0]) == std::vector<float>{1.5f, 2.5f});
  Tensor y = f->call({to_vk(x)})[0];
  CHECK(y.device()->kind() == DeviceKind::Vulkan);
  CHECK(values<float>(to_cpu(y)) == std::vector<float>{1.5f, 2.5f});
  CHECK(f->num_traces() == 2);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("a traced cond on Vulkan picks the branch from a GPU predicate") {
  Context& vc = vk_ctx();
  auto f = make_ref<Function>(vc, "abs_or_double", [](Context& cx, const Ts& in) {
    Tensor positive = op::greater(cx, op::all_sum(cx, in[0]), op::scalar(cx, cx.default_device(), DType::Float32, 0));
    return graph::cond(
        cx, positive, {in[0]}, [](Context& y, const Ts& v) { return Ts{op::add(y, v[0], v[0])}; },
        [](Context& y, const Ts& v) { return Ts{op::neg(y, v[0])}; });
  });
  CHECK(values<float>(to_cpu(f->call({to_vk(make<float>({1, 2}, Shape{2}))})[0])) == std::vector<float>{2, 4});
  CHECK(values<float>(to_cpu(f->call({to_vk(make<float>({-1, -2}, Shape{2}))})[0])) == std::vector<float>{1, 2});
  CHECK(f->num_traces() == 1);
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
