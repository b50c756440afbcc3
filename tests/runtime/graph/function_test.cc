// Graph capture: trace once per signature, replay without the host function, variables captured by
// reference, retracing rules, errors, and a whole training step captured.
#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/losses.h"
#include "runtime/optim/optimizer.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using graph::Function;
using graph::FunctionOptions;

Tensor f32s(std::vector<float> v) { return make<float>(v, Shape{static_cast<int64_t>(v.size())}); }

// The seed material's quiz: what runs at trace time and what at replay.
TEST_CASE("the host function runs once per signature; replays run the graph") {
  Context& c = ctx();
  int host_calls = 0;
  Ref<Variable> v = Variable::create(c, f32s({10, 20}), {.name = "v"});
  auto f = make_ref<Function>(c, "f", [&](Context& cx, const std::vector<Tensor>& in) {
    ++host_calls;  // a side effect of the host function: happens only while tracing
    return std::vector<Tensor>{op::add(cx, op::mul(cx, in[0], in[0]), v->read())};
  });
  CHECK(values<float>(f->call({f32s({1, 2})})[0]) == std::vector<float>{11, 24});
  CHECK(values<float>(f->call({f32s({3, 4})})[0]) == std::vector<float>{19, 36});
  CHECK(host_calls == 1);
  CHECK(f->num_traces() == 1);

  // The variable is captured by reference: a replay reads its live value.
  v->assign(f32s({0, 0}));
  CHECK(values<float>(f->call({f32s({3, 4})})[0]) == std::vector<float>{9, 16});
  CHECK(host_calls == 1);

  // A new shape or dtype retraces.
  f->call({make<float>({1, 2}, Shape{1, 2})});
  CHECK(host_calls == 2);
  CHECK_THROWS_CODE(f->call({make<double>({1, 2}, Shape{2})}), Code::InvalidArgument, "Add");  // float64 + float32 v
  CHECK(f->num_traces() == 2);  // a failed trace is not cached
}

TEST_CASE("variable writes inside a function happen on every call, in program order") {
  Context& c = ctx();
  Ref<Variable> counter = Variable::create(c, make<int64_t>({0}, Shape{}), {.name = "counter", .trainable = false});
  auto step = make_ref<Function>(c, "step", [&](Context& cx, const std::vector<Tensor>& in) {
    counter->assign_add(make<int64_t>({1}, Shape{}));
    Tensor seen = counter->read();  // after the increment
    return std::vector<Tensor>{op::add(cx, seen, in[0])};
  });
  Tensor hundred = make<int64_t>({100}, Shape{});
  CHECK(values<int64_t>(step->call({hundred})[0]) == std::vector<int64_t>{101});
  CHECK(values<int64_t>(step->call({hundred})[0]) == std::vector<int64_t>{102});
  CHECK(values<int64_t>(counter->read()) == std::vector<int64_t>{2});
  REQUIRE(step->num_traces() == 1);
  std::string dump = step->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("AssignVariable 'counter:0'") != std::string::npos, dump);
  CHECK(dump.find("ReadVariable 'counter:0'") != std::string::npos);
}

TEST_CASE("an input signature with unknown dimensions traces once for many shapes") {
  Context& c = ctx();
  FunctionOptions o;
  Shape any_batch{0, 2};
  any_batch.set_dim(0, -1);
  o.input_signature = {{DType::Float32, any_batch}};
  o.has_input_signature = true;
  auto f = make_ref<Function>(
      c, "relu2", [](Context& cx, const std::vector<Tensor>& in) { return std::vector<Tensor>{op::relu(cx, in[0])}; }, o);
  CHECK(values<float>(f->call({make<float>({-1, 2}, Shape{1, 2})})[0]) == std::vector<float>{0, 2});
  CHECK(values<float>(f->call({make<float>({3, -4, 5, 6}, Shape{2, 2})})[0]) == std::vector<float>{3, 0, 5, 6});
  CHECK(f->num_traces() == 1);
  CHECK_THROWS_CODE(f->call({make<float>({1, 2, 3}, Shape{1, 3})}), Code::InvalidArgument, "input signature");
}

TEST_CASE("frequent retracing is logged once the count reaches the threshold") {
  std::vector<std::string> messages;
  ContextOptions co;
  co.log.callback = [](void* user, LogLevel, const char* m) { static_cast<std::vector<std::string>*>(user)->push_back(m); };
  co.log.user_data = &messages;
  Ref<Context> c = make_ref<Context>(co);
  FunctionOptions o;
  o.retrace_warning = 3;
  auto f = make_ref<Function>(
      *c, "g", [](Context& cx, const std::vector<Tensor>& in) { return std::vector<Tensor>{op::neg(cx, in[0])}; }, o);
  for (int n = 1; n <= 4; ++n) f->call({Tensor::allocate(c->cpu(), DType::Float32, Shape{n})});
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].find("function 'g' has been traced 3 times") != std::string::npos);
}

TEST_CASE("symbolic tensors have no value outside the trace") {
  Context& c = ctx();
  Tensor leaked;
  auto f = make_ref<Function>(c, "leak", [&](Context& cx, const std::vector<Tensor>& in) {
    leaked = op::neg(cx, in[0]);
    float value = 0;
    CHECK_THROWS_CODE(leaked.device()->read(*leaked.buffer(), &value, sizeof value), Code::FailedPrecondition,
                      "no value yet");
    return std::vector<Tensor>{leaked};
  });
  f->call({f32s({1})});
  CHECK_THROWS_CODE(op::neg(c, leaked), Code::FailedPrecondition, "symbolic tensor from a function trace");
}

TEST_CASE("a tape sees the ops of a function call, so gradients flow through it") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "cube", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, op::square(cx, in[0]), in[0])};
  });
  Tensor x = make<double>({2, -1}, Shape{2});
  f->call({x});  // traced
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = f->call({x})[0];  // replayed under the tape
  check_close(as_doubles(tape.gradient(y, {x})[0]), {12, 3});
}

TEST_CASE("a whole training step is captured: forward, gradient and apply_gradients") {
  Context& c = ctx();
  Ref<nn::Sequential> model = nn::Sequential::create(c, "model");
  model->add(nn::dense(c, {.units = 1, .kernel_initializer = {nn::Initializer::Kind::Zeros}}));
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::SGD;
  oo.learning_rate = 0.1;
  Ref<optim::Optimizer> opt = optim::Optimizer::create(c, oo);
  int traces = 0;
  auto train_step = make_ref<Function>(c, "train_step", [&](Context& cx, const std::vector<Tensor>& in) {
    ++traces;
    GradientTape tape(cx);
    Tensor loss = nn::mean_squared_error(cx, in[1], (*model)(in[0], true));
    std::vector<Ref<Variable>> weights = model->trainable_weights();
    std::vector<const Variable*> vars;
    for (auto& w : weights) vars.push_back(w.get());
    std::vector<Tensor> grads = tape.gradient(loss, vars);
    std::vector<std::pair<Tensor, Variable*>> pairs;
    for (size_t i = 0; i < grads.size(); ++i) pairs.emplace_back(grads[i], weights[i].get());
    opt->apply_gradients(pairs);
    return std::vector<Tensor>{loss};
  });
  // y = 2x + 1
  Tensor x = make<float>({0, 1, 2, 3}, Shape{4, 1}), y = make<float>({1, 3, 5, 7}, Shape{4, 1});
  float first = values<float>(train_step->call({x, y})[0])[0];
  float last = first;
  for (int i = 0; i < 300; ++i) last = values<float>(train_step->call({x, y})[0])[0];
  CHECK(traces == 1);
  CHECK(opt->iterations_value() == 301);
  CHECK(last < first * 1e-3f);
  std::vector<Ref<Variable>> w = model->weights();
  check_close(as_doubles(w[0]->read()), {2.0}, 1e-2);
  check_close(as_doubles(w[1]->read()), {1.0}, 1e-2);
}

}  // namespace
}  // namespace cairn::test

namespace cairn::test {
namespace {

TEST_CASE("losses trace; metrics, which read values, say so inside a trace") {
  Context& c = ctx();
  auto loss = make_ref<graph::Function>(c, "xent", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{nn::sparse_categorical_crossentropy(cx, in[0], in[1], true),
                               nn::binary_crossentropy(cx, in[2], in[3], false)};
  });
  Tensor labels = make<int32_t>({0, 2}, Shape{2});
  Tensor logits = make<float>({2, 0, 0, 0, 0, 3}, Shape{2, 3});
  Tensor y = make<float>({1, 0}, Shape{2}), p = make<float>({0.9f, 0.2f}, Shape{2});
  std::vector<Tensor> traced = loss->call({labels, logits, y, p});
  CHECK(values<float>(traced[0]) == values<float>(nn::sparse_categorical_crossentropy(c, labels, logits, true)));
  CHECK(values<float>(traced[1]) == values<float>(nn::binary_crossentropy(c, y, p, false)));

  Ref<nn::Mean> mean = nn::Mean::create(c);
  auto metric = make_ref<graph::Function>(c, "metric", [&](Context& cx, const std::vector<Tensor>& in) {
    mean->update(in[0]);
    return std::vector<Tensor>{op::identity(cx, in[0])};
  });
  CHECK_THROWS_CODE(metric->call({y}), Code::FailedPrecondition, "Metric::update: needs tensor values");
}

}  // namespace
}  // namespace cairn::test
