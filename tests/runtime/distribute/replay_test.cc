// A compiled training step replays the same on every logical CPU device, with and without a
// strategy. Regression: with its inputs on "cpu:1" (not the default device), an op whose first
// input lived on "cpu:0" (a host constant) got a fresh output in a slot of the memory plan, after
// which the register's reference count no longer proved its buffer private, and a later replay
// overwrote a buffer a variable still held (weights off by 0.57 after 4 steps). Fixed in
// graph/executor.cc (prepare_mixed_outputs invalidates the register).
#include <cmath>
#include <optional>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/distribute/distribute_test_util.h"

namespace cairn::test {
namespace {

using distribute::MirroredStrategy;
using distribute::Reduction;
using distribute::ReplicaContext;

// Trains a small MLP for 4 compiled steps on `device`, under a 1-replica strategy on that device
// when `strategy`; the gradients go through a concat / slice round trip (what the fused
// all-reduce of a list does) or through the all-reduce itself.
std::vector<double> train(const std::string& device, bool strategy) {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, {device});
  Device& dev = c->device(device);
  Ref<nn::Sequential> model = nn::Sequential::create(*c);
  Ref<optim::Optimizer> opt;
  {
    std::optional<MirroredStrategy::Scope> scope;
    if (strategy) scope.emplace(*s);
    add_two_dense(*c, *model, 6, nn::Activation::Tanh, 2, 3, &dev);
    optim::OptimizerOptions o;
    o.learning_rate = 0.1;
    o.momentum = 0.5;
    opt = optim::Optimizer::create(*c, o);
  }
  std::vector<Ref<Variable>> vars = model->trainable_weights();
  std::vector<float> xv(32), yv(16);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(static_cast<float>(i) * 0.7f);
  for (size_t i = 0; i < yv.size(); ++i) yv[i] = std::cos(static_cast<float>(i) * 0.3f);
  Tensor x = tensor_on_device(make<float>(xv, Shape{8, 4}), dev);
  Tensor y = tensor_on_device(make<float>(yv, Shape{8, 2}), dev);
  Ref<graph::Function> f = make_ref<graph::Function>(*c, "step", [&](Context& ctx, const std::vector<Tensor>& in) {
    GradientTape tape(ctx);
    Tensor err = op::square(ctx, op::sub(ctx, (*model)(in[0], true), in[1]));
    Tensor loss = MirroredStrategy::compute_average_loss(ctx, op::mean(ctx, err, {-1}), 8);
    std::vector<Tensor> g = tape.gradient(loss, vars);
    if (ReplicaContext* rc = ReplicaContext::current()) {
      g = rc->all_reduce(Reduction::Sum, g);
    } else {
      std::vector<Tensor> flat;
      for (const Tensor& t : g) flat.push_back(op::reshape(ctx, t, Shape{t.num_elements()}));
      Tensor all = run_op(ctx, "ConcatV2", flat, {attr_int("axis", 0)})[0];
      int64_t offset = 0;
      for (Tensor& t : g) {
        std::vector<int64_t> begin{offset}, size{t.num_elements()};
        Tensor part = run_op(ctx, "Slice", {all}, {attr_ints("begin", begin), attr_ints("size", size)})[0];
        offset += t.num_elements();
        t = op::reshape(ctx, part, t.shape());
      }
    }
    opt->apply_gradients(g, vars);
    return std::vector<Tensor>{loss};
  });
  for (int i = 0; i < 4; ++i) {
    if (strategy) {
      s->run([&](ReplicaContext&) { return f->call({x, y})[0]; });
    } else {
      f->call({x, y});
    }
  }
  std::vector<double> out;
  for (const Ref<Variable>& v : vars)
    for (double d : as_doubles(v->read())) out.push_back(d);
  return out;
}

TEST_CASE("a compiled step replays identically on cpu:0 and cpu:1, with and without a strategy") {
  const std::vector<double> base = train("cpu:0", false);
  CHECK(train("cpu:1", false) == base);
  CHECK(train("cpu:0", true) == base);
  CHECK(train("cpu:1", true) == base);
}

TEST_CASE("a replay runs nodes without inputs in the caller's scope and a cpu:1 trace's constants on cpu:1") {
  Ref<Context> c = split_cpu(2);
  Device& cpu1 = c->device("cpu:1");
  Ref<graph::Function> f = make_ref<graph::Function>(*c, "noise", [&](Context& ctx, const std::vector<Tensor>& in) {
    Tensor r = run_op(ctx, "RandomUniform", {}, {attr_ints("shape", {3})})[0];
    // The scalar is a host constant of the trace.
    return std::vector<Tensor>{op::add(ctx, r, op::scalar_like(ctx, r, 1.0)), op::mul(ctx, in[0], op::scalar_like(ctx, in[0], 2.0))};
  });
  Tensor x = tensor_on_device(make<float>({1, 2, 3}, Shape{3}), cpu1);
  std::vector<Tensor> eager_like;
  {
    DeviceScope scope(*c, cpu1);
    for (int call = 0; call < 2; ++call) {  // the trace, then a replay
      std::vector<Tensor> out = f->call({x});
      CHECK(out[0].device() == &cpu1);
      CHECK(out[1].device() == &cpu1);
      CHECK(as_doubles(out[1]) == std::vector<double>{2, 4, 6});
    }
  }
  std::vector<Tensor> out = f->call({x});  // no scope: the default device
  CHECK(out[0].device() == &c->cpu());
}

}  // namespace
}  // namespace cairn::test
