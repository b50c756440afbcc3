// Gradients of function calls: a tape records a call as one entry whose gradient is a traced
// function (runtime/graph/function_grad.h). Each gradient is checked against the eager gradient of
// the same host function.
#include "runtime/graph/function_grad.h"

#include <cmath>
#include <functional>
#include <string>
#include <thread>

#include "runtime/autodiff/gradient.h"
#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/nn/layer.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using graph::CallGradient;
using graph::Function;
using Body = std::function<std::vector<Tensor>(Context&, const std::vector<Tensor>&)>;

Tensor f64s(std::vector<double> v, Shape shape) { return make<double>(v, shape); }

// What one tape saw: gradients for each input and variable (empty for none) and its entries.
struct Seen {
  std::vector<std::vector<double>> inputs, variables;
  size_t recorded = 0;
};

// Runs `run` under a tape that watches the floating inputs (`recorded`: the entries that made),
// takes L = sum over `used` outputs of sum(y * y) (so dy = 2y, not ones), and differentiates L by
// the inputs and the variables.
Seen differentiate(Context& c, const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& run,
                   const std::vector<Tensor>& inputs, const std::vector<Ref<Variable>>& variables,
                   const std::vector<size_t>& used) {
  GradientTape tape(c, {.persistent = true});
  for (const Tensor& x : inputs)
    if (is_differentiable_dtype(x.dtype())) tape.watch(x);
  std::vector<Tensor> ys = run(inputs);
  Seen seen;
  seen.recorded = tape.num_recorded();
  std::vector<Tensor> terms;
  for (size_t k : used) terms.push_back(op::all_sum(c, op::mul(c, ys[k], ys[k])));
  Tensor loss = op::add_n(c, terms);
  for (const Tensor& g : tape.gradient(loss, inputs)) seen.inputs.push_back(g.valid() ? as_doubles(g) : std::vector<double>{});
  std::vector<const Variable*> vs;
  for (const Ref<Variable>& v : variables) vs.push_back(v.get());
  for (const Tensor& g : tape.gradient(loss, vs)) seen.variables.push_back(g.valid() ? as_doubles(g) : std::vector<double>{});
  return seen;
}

void check_same(const Seen& call, const Seen& eager) {
  REQUIRE(call.inputs.size() == eager.inputs.size());
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    CAPTURE(i);
    CHECK(call.inputs[i].empty() == eager.inputs[i].empty());
    if (!eager.inputs[i].empty()) check_close(call.inputs[i], eager.inputs[i], 1e-9);
  }
  REQUIRE(call.variables.size() == eager.variables.size());
  for (size_t i = 0; i < call.variables.size(); ++i) {
    CAPTURE(i);
    CHECK(call.variables[i].empty() == eager.variables[i].empty());
    if (!eager.variables[i].empty()) check_close(call.variables[i], eager.variables[i], 1e-9);
  }
}

// The gradients through f->call against those of the host function run eagerly; returns the call's.
Seen compare(Context& c, Function& f, const Body& body, const std::vector<Tensor>& inputs,
             const std::vector<Ref<Variable>>& variables, const std::vector<size_t>& used) {
  Seen eager = differentiate(c, [&](const std::vector<Tensor>& in) { return body(c, in); }, inputs, variables, used);
  Seen call = differentiate(c, [&](const std::vector<Tensor>& in) { return f.call(in); }, inputs, variables, used);
  check_same(call, eager);
  return call;
}

TEST_CASE("the gradient through a call equals the eager gradient, for inputs and variables") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({0.5, -1.5, 2.0}, Shape{3}), {.name = "w"});
  Ref<Variable> frozen = Variable::create(c, f64s({3.0}, Shape{}), {.name = "frozen", .trainable = false});
  Body body = [&](Context& cx, const std::vector<Tensor>& in) {
    Tensor h = op::tanh(cx, op::add(cx, op::mul(cx, in[0], w->read()), in[1]));
    return std::vector<Tensor>{op::mul(cx, op::exp(cx, h), frozen->read())};
  };
  auto f = make_ref<Function>(c, "affine_tanh", body);
  Tensor x = f64s({0.1, 0.2, -0.3}, Shape{3}), b = f64s({0.5}, Shape{});
  Seen call = compare(c, *f, body, {x, b}, {w, frozen}, {0});
  CHECK(call.recorded == 1);
  CHECK(call.variables[1].empty());  // not trainable: not watched, no gradient
  CHECK(f->num_traces() == 1);
}

TEST_CASE("a dense layer called through a function: gradients for the input, kernel and bias") {
  Context& c = ctx();
  Ref<nn::Layer> dense = nn::dense(c, {.units = 3, .activation = nn::Activation::Relu});
  Tensor x = make_as(DType::Float64, {0.3, -1.2, 0.8, 2.0, 0.5, -0.7, 1.1, 0.4}, Shape{2, 4});
  Body body = [&](Context&, const std::vector<Tensor>& in) { return std::vector<Tensor>{(*dense)(in[0])}; };
  // The layer's weights take the input's dtype: build them before the trace.
  (*dense)(x);
  auto f = make_ref<Function>(c, "dense", body);
  std::vector<Ref<Variable>> weights = dense->trainable_weights();
  REQUIRE(weights.size() == 2);
  Seen call = compare(c, *f, body, {x}, weights, {0});
  CHECK(call.recorded == 1);
}

TEST_CASE("several outputs, one unused; integer inputs get no gradient") {
  Context& c = ctx();
  Body body = [](Context& cx, const std::vector<Tensor>& in) {
    Tensor picked = op::gather(cx, in[0], in[1]);  // in[1]: int32 indices
    return std::vector<Tensor>{op::mul(cx, picked, picked), op::sigmoid(cx, in[0]), op::argmax(cx, in[0], 0)};
  };
  auto f = make_ref<Function>(c, "pick", body);
  Tensor params = f64s({1.5, -2.0, 0.25, 3.0}, Shape{4});
  Tensor indices = make<int32_t>({3, 0, 3}, Shape{3});
  Seen only_first = compare(c, *f, body, {params, indices}, {}, {0});
  CHECK(only_first.inputs[1].empty());
  Seen only_second = compare(c, *f, body, {params, indices}, {}, {1});
  Seen both = compare(c, *f, body, {params, indices}, {}, {0, 1});
  for (size_t e = 0; e < 4; ++e) CHECK(both.inputs[0][e] == doctest::Approx(only_first.inputs[0][e] + only_second.inputs[0][e]));
  CHECK(f->num_traces() == 1);
  // One backward function per set of outputs the loss used, each traced once.
  std::vector<Ref<Function>> backwards = CallGradient::of(c, f->concretes()[0])->backwards();
  CHECK(backwards.size() == 3);
  for (const Ref<Function>& b : backwards) CHECK(b->num_traces() == 1);
}

TEST_CASE("one tensor passed twice; an input returned as it is; a constant output") {
  Context& c = ctx();
  Body body = [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, in[0], op::exp(cx, in[1])), in[1],
                               op::scalar(cx, cx.cpu(), DType::Float64, 4)};
  };
  auto f = make_ref<Function>(c, "mixed", body);
  Tensor x = f64s({0.5, -1}, Shape{2});
  Seen twice = compare(c, *f, body, {x, x}, {}, {0, 1, 2});
  CHECK(twice.recorded == 1);
  Seen apart = compare(c, *f, body, {x, f64s({2, 3}, Shape{2})}, {}, {1});
  check_close(apart.inputs[1], {4, 6});  // d(y1^2)/d(in1) = 2 in1, through the pass-through output
  CHECK(apart.inputs[0].empty());  // only the unused output depends on it: no gradient, as eagerly
}

TEST_CASE("an input the outputs do not depend on gets no gradient, as eagerly") {
  Context& c = ctx();
  Body body = [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, in[0], in[0]), op::stop_gradient(cx, in[1])};
  };
  auto f = make_ref<Function>(c, "partly", body);
  Seen call = compare(c, *f, body, {f64s({2, 3}, Shape{2}), f64s({4}, Shape{1})}, {}, {0, 1});
  CHECK(call.inputs[1].empty());
}

TEST_CASE("the tape records one entry per call, and the call's ops never reach it") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "chain", [](Context& cx, const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 10; ++i) x = op::tanh(cx, op::add(cx, x, in[0]));
    return std::vector<Tensor>{x};
  });
  Tensor x = f64s({0.1, 0.2}, Shape{2});
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = f->call({x})[0];
  CHECK(tape.num_recorded() == 1);
  Tensor y2 = f->call({y})[0];
  CHECK(tape.num_recorded() == 2);
  // An unwatched input: nothing to record.
  f->call({f64s({5, 6}, Shape{2})});
  CHECK(tape.num_recorded() == 2);
  CHECK(tape.gradient(y2, {x})[0].valid());
}

TEST_CASE("the backward function is traced once and replayed on later steps") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({1, 2, 3, 4, 5, 6}, Shape{3, 2}), {.name = "w"});
  int forward_traces = 0;
  Body body = [&](Context& cx, const std::vector<Tensor>& in) {
    ++forward_traces;
    return std::vector<Tensor>{op::sigmoid(cx, op::matmul(cx, in[0], w->read()))};
  };
  auto f = make_ref<Function>(c, "layer", body);
  Tensor x = f64s({0.1, 0.2, 0.3}, Shape{1, 3});
  std::vector<std::vector<double>> steps;
  for (int step = 0; step < 4; ++step) {
    CAPTURE(step);
    Seen call = compare(c, *f, body, {x}, {w}, {0});  // the eager run counts as a "trace" too
    steps.push_back(call.variables[0]);
    std::vector<Tensor> g{f64s(call.variables[0], Shape{3, 2})};
    w->assign_sub(op::mul(c, g[0], op::scalar_like(c, g[0], 0.5)));
  }
  CHECK(forward_traces == 1 + 4);  // one trace, plus the eager runs of the host function
  CHECK(f->num_traces() == 1);
  std::shared_ptr<const CallGradient> grad = CallGradient::of(c, f->concretes()[0]);
  REQUIRE(grad);
  // compare() asks for d/dx, then d/dw: one backward function each, each traced once.
  REQUIRE(grad->backwards().size() == 2);
  for (const Ref<Function>& b : grad->backwards()) CHECK(b->num_traces() == 1);
  CHECK(steps[0] != steps[3]);  // the replays read the updated variable
}

TEST_CASE("second derivatives through nested tapes: the backward call is itself recorded") {
  Context& c = ctx();
  Ref<Variable> a = Variable::create(c, f64s({1.5, -0.5}, Shape{2}), {.name = "a"});
  auto f = make_ref<Function>(c, "cubic", [&](Context& cx, const std::vector<Tensor>& in) {
    // y = a * x^3: dy/dx = 3 a x^2, d2y/dx2 = 6 a x, d(dy/dx)/da = 3 x^2.
    return std::vector<Tensor>{op::mul(cx, a->read(), op::mul(cx, op::square(cx, in[0]), in[0]))};
  });
  Tensor x = f64s({2, -1}, Shape{2});
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    GradientTape outer(c);
    outer.watch(x);
    Tensor dx;
    {
      GradientTape inner(c);
      inner.watch(x);
      Tensor y = f->call({x})[0];
      CHECK(inner.num_recorded() == 1);
      dx = inner.gradient(y, {x})[0];
    }
    check_close(as_doubles(dx), {3 * 1.5 * 4, 3 * -0.5 * 1});
    std::vector<Tensor> second = outer.gradient(dx, {x});
    check_close(as_doubles(second[0]), {6 * 1.5 * 2, 6 * -0.5 * -1});
  }
  // And a variable's mixed derivative, from a persistent outer tape.
  GradientTape outer(c, {.persistent = true});
  GradientTape inner(c);
  inner.watch(x);
  Tensor dx = inner.gradient(f->call({x})[0], {x})[0];
  check_close(as_doubles(outer.gradient(dx, std::vector<const Variable*>{a.get()})[0]), {3 * 4, 3 * 1});
  std::shared_ptr<const CallGradient> grad = CallGradient::of(c, f->concretes()[0]);
  REQUIRE(grad);
  REQUIRE(grad->backwards().size() == 1);  // d/dx only: the inner tape never wants d/da
  REQUIRE(grad->backwards()[0]->num_traces() == 1);
  CHECK(grad->backwards()[0]->name() == "cubic_grad_recompute");  // an outer tape records it
  // The backward of the backward: one for d/dx (both rounds), one for d/da, each traced once.
  std::shared_ptr<const CallGradient> grad2 = CallGradient::of(c, grad->backwards()[0]->concretes()[0]);
  REQUIRE(grad2);
  CHECK(grad2->backwards().size() == 2);
  for (const Ref<Function>& b : grad2->backwards()) CHECK(b->num_traces() == 1);
}

TEST_CASE("the backward differentiates only the inputs the tape wants") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({1, -1, 0.5, 2}, Shape{2, 2}), {.name = "w"});
  auto f = make_ref<Function>(c, "linear", [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::matmul(cx, in[0], w->read())};
  });
  Tensor x = f64s({1, 2}, Shape{1, 2});
  auto step = [&](bool watch_x) {
    GradientTape tape(c, {.persistent = true});
    if (watch_x) tape.watch(x);
    Tensor loss = op::all_sum(c, f->call({x})[0]);
    check_close(as_doubles(tape.gradient(loss, std::vector<const Variable*>{w.get()})[0]), {1, 1, 2, 2});
    if (watch_x) check_close(as_doubles(tape.gradient(loss, {x})[0]), {0, 2.5});
  };
  step(false);
  std::shared_ptr<const CallGradient> grad = CallGradient::of(c, f->concretes()[0]);
  REQUIRE(grad);
  CHECK(grad->gradient_inputs() == std::vector<size_t>{0, 1});  // x, then w's value
  REQUIRE(grad->backwards().size() == 1);
  std::string dump = grad->backwards()[0]->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("MatMul") != std::string::npos, dump);
  // The forward's MatMul is dead code here: d/dw = x^T dy needs only one MatMul.
  CHECK_MESSAGE(dump.find("MatMul") == dump.rfind("MatMul"), dump);
  step(true);
  step(true);
  std::vector<Ref<Function>> backwards = grad->backwards();
  CHECK(backwards.size() == 2);
  for (const Ref<Function>& b : backwards) CHECK(b->num_traces() == 1);
}

TEST_CASE("a first-order gradient reads the saved intermediates; one an outer tape records recomputes") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "exp2", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::exp(cx, op::exp(cx, in[0]))};
  });
  Tensor x = f64s({0.5, -1}, Shape{2});
  auto want = [](double v) { return std::exp(v) * std::exp(std::exp(v)); };
  {
    GradientTape tape(c);
    tape.watch(x);
    check_close(as_doubles(tape.gradient(f->call({x})[0], {x})[0]), {want(0.5), want(-1)});
  }
  std::shared_ptr<const CallGradient> grad = CallGradient::of(c, f->concretes()[0]);
  REQUIRE(grad);
  REQUIRE(grad->backwards().size() == 1);
  Ref<Function> saved = grad->backwards()[0];
  CHECK(saved->name() == "exp2_grad");
  // d/dx = dy * y * e: both exps come from the forward; the backward runs none.
  std::string dump = saved->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("Exp") == std::string::npos, dump);

  GradientTape outer(c);
  outer.watch(x);
  Tensor dx;
  {
    GradientTape inner(c);
    inner.watch(x);
    dx = inner.gradient(f->call({x})[0], {x})[0];
  }
  check_close(as_doubles(dx), {want(0.5), want(-1)});
  REQUIRE(grad->backwards().size() == 2);
  Ref<Function> recomputing = grad->backwards()[0] == saved ? grad->backwards()[1] : grad->backwards()[0];
  CHECK(recomputing->name() == "exp2_grad_recompute");
  dump = recomputing->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("Exp") != std::string::npos, dump);
  // d2/dx2 of exp(exp(x)) = e^x e^(e^x) (1 + e^x).
  auto second = [&](double v) { return want(v) * (1 + std::exp(v)); };
  check_close(as_doubles(outer.gradient(dx, {x})[0]), {second(0.5), second(-1)});
}

TEST_CASE("a persistent tape computes gradients through a call twice") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({0.5, 2}, Shape{2}), {.name = "w"});
  auto f = make_ref<Function>(c, "scaled", [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, op::exp(cx, in[0]), w->read())};
  });
  Tensor x = f64s({0, 1}, Shape{2});
  GradientTape tape(c, {.persistent = true});
  tape.watch(x);
  Tensor y = op::all_sum(c, f->call({x})[0]);
  std::vector<double> gx = as_doubles(tape.gradient(y, {x})[0]);
  check_close(gx, {0.5, 2 * std::exp(1.0)});
  check_close(as_doubles(tape.gradient(y, {x})[0]), gx);
  check_close(as_doubles(tape.gradient(y, std::vector<const Variable*>{w.get()})[0]), {1, std::exp(1.0)});
}

TEST_CASE("the gradient uses the variable values the call read, not later ones") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({3}, Shape{}), {.name = "w"});
  Body body = [&](Context& cx, const std::vector<Tensor>& in) { return std::vector<Tensor>{op::mul(cx, in[0], w->read())}; };
  auto f = make_ref<Function>(c, "times_w", body);
  Tensor x = f64s({1, 2}, Shape{2});
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = f->call({x})[0];
  w->assign(f64s({-7}, Shape{}));  // after the call, before the gradient: eagerly the Mul kept 3
  check_close(as_doubles(tape.gradient(y, {x})[0]), {3, 3});
}

TEST_CASE("a call inside another function's trace still inlines; the outer call is one entry") {
  Context& c = ctx();
  auto inner = make_ref<Function>(c, "inner", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::tanh(cx, in[0])};
  });
  Body body = [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, inner->call({in[0]})[0], in[0])};
  };
  auto outer = make_ref<Function>(c, "outer", body);
  Tensor x = f64s({0.5, -0.25}, Shape{2});
  outer->call({x});
  CHECK(inner->num_traces() == 0);  // inlined into the outer trace, never traced on its own
  std::string dump = outer->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("Tanh") != std::string::npos, dump);
  Seen call = compare(c, *outer, body, {x}, {}, {0});  // the eager run calls `inner` eagerly: traced
  CHECK(call.recorded == 1);
  CHECK(inner->num_traces() == 1);
}

TEST_CASE("a call with Assign nodes keeps the node-by-node replay: the tape sees each op") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({2}, Shape{}), {.name = "w"});
  Ref<Variable> calls = Variable::create(c, make<int64_t>({0}, Shape{}), {.name = "calls", .trainable = false});
  Body body = [&](Context& cx, const std::vector<Tensor>& in) {
    calls->assign_add(make<int64_t>({1}, Shape{}));
    return std::vector<Tensor>{op::mul(cx, op::square(cx, in[0]), w->read())};
  };
  auto f = make_ref<Function>(c, "counted", body);
  Tensor x = f64s({1, 3}, Shape{2});
  Seen call = compare(c, *f, body, {x}, {w}, {0});
  CHECK(call.recorded == 2);  // Square and Mul
  CHECK_FALSE(CallGradient::of(c, f->concretes()[0]));
  CHECK(values<int64_t>(calls->read()) == std::vector<int64_t>{2});  // one eager run, one call
}

TEST_CASE("a call with a random op keeps the node-by-node replay: one mask for forward and gradient") {
  Context& c = ctx();
  Ref<nn::Layer> drop = nn::dropout(c, 0.5);
  auto f = make_ref<Function>(c, "dropout", [&](Context&, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(*drop)(in[0], true)};
  });
  std::vector<double> ones(64, 1.0);
  Tensor x = f64s(ones, Shape{64});
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = f->call({x})[0];
  CHECK_FALSE(CallGradient::of(c, f->concretes()[0]));
  // dy/dx is the mask times 1/(1 - rate), which is y itself for x = 1.
  check_close(as_doubles(tape.gradient(y, {x})[0]), as_doubles(y));
}

TEST_CASE("a watched tensor the function captured as a constant still gets its gradient") {
  Context& c = ctx();
  Tensor k = f64s({2, 5}, Shape{2});
  auto f = make_ref<Function>(c, "captures", [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, in[0], k)};
  });
  Tensor x = f64s({3, 4}, Shape{2});
  f->call({x});
  GradientTape tape(c);
  tape.watch(k);
  tape.watch(x);
  Tensor y = f->call({x})[0];
  CHECK(tape.num_recorded() == 1);  // the Mul, recorded node by node: the call could not pass k on
  std::vector<Tensor> g = tape.gradient(y, {x, k});
  check_close(as_doubles(g[0]), {2, 5});
  check_close(as_doubles(g[1]), {3, 4});
}

TEST_CASE("an input signature with unknown dimensions: one forward trace, one backward trace per shape") {
  Context& c = ctx();
  graph::FunctionOptions o;
  Shape any{0};
  any.set_dim(0, -1);
  o.input_signature = {{DType::Float64, any}};
  o.has_input_signature = true;
  Body body = [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::mul(cx, op::sigmoid(cx, in[0]), in[0])};
  };
  auto f = make_ref<Function>(c, "swish", body, o);
  compare(c, *f, body, {f64s({0.5, -1}, Shape{2})}, {}, {0});
  Seen call = compare(c, *f, body, {f64s({1, 2, 3}, Shape{3})}, {}, {0});
  CHECK(call.recorded == 1);
  CHECK(f->num_traces() == 1);
  std::vector<Ref<Function>> backwards = CallGradient::of(c, f->concretes()[0])->backwards();
  REQUIRE(backwards.size() == 1);
  CHECK(backwards[0]->num_traces() == 2);
}

TEST_CASE("threads with tapes of their own call one function at once") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, f64s({0.5, -2}, Shape{2}), {.name = "w"});
  auto f = make_ref<Function>(c, "shared", [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::tanh(cx, op::mul(cx, in[0], w->read()))};
  });
  constexpr int kThreads = 4, kSteps = 25;
  std::vector<Tensor> xs;
  for (int t = 0; t < kThreads; ++t) xs.push_back(f64s({0.1 * (t + 1), -0.2 * t}, Shape{2}));
  std::vector<std::vector<double>> dx(kThreads), dw(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int step = 0; step < kSteps; ++step) {
          GradientTape tape(c, {.persistent = true});
          tape.watch(xs[t]);
          Tensor loss = op::all_sum(c, f->call({xs[t]})[0]);
          dx[t] = as_doubles(tape.gradient(loss, {xs[t]})[0]);
          dw[t] = as_doubles(tape.gradient(loss, std::vector<const Variable*>{w.get()})[0]);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(errors[t].empty());
    std::vector<double> x = as_doubles(xs[t]), wv = {0.5, -2};
    std::vector<double> want_dx, want_dw;
    for (size_t i = 0; i < 2; ++i) {
      double d = 1 - std::tanh(x[i] * wv[i]) * std::tanh(x[i] * wv[i]);
      want_dx.push_back(d * wv[i]);
      want_dw.push_back(d * x[i]);
    }
    check_close(dx[t], want_dx, 1e-12);
    check_close(dw[t], want_dw, 1e-12);
  }
  CHECK(f->num_traces() == 1);
  for (const Ref<Function>& b : CallGradient::of(c, f->concretes()[0])->backwards()) CHECK(b->num_traces() == 1);
}

TEST_CASE("a paused tape does not see a call") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "neg", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::neg(cx, in[0])};
  });
  Tensor x = f64s({1}, Shape{1});
  GradientTape paused(c);
  paused.watch(x);
  paused.stop_recording();
  CHECK(values<double>(f->call({x})[0]) == std::vector<double>{-1});
  CHECK(paused.num_recorded() == 0);
}

}  // namespace
}  // namespace cairn::test
