// Control flow: cond, while_loop and TensorArray, eagerly and captured in functions (subgraphs,
// captures, data-dependent trip counts, nesting, an RNN over a data-dependent length), and errors.
#include "runtime/graph/control_flow.h"

#include <cmath>
#include <cstdlib>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/export.h"
#include "runtime/graph/function.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using graph::BranchFn;
using graph::Function;

Tensor f32s(std::vector<float> v) { return make<float>(v, Shape{static_cast<int64_t>(v.size())}); }
Tensor i32(int32_t v) { return make<int32_t>({v}, Shape{}); }
Tensor boolean(bool v) { return make<bool>({v}, Shape{}); }
Tensor one_i32(Context& c) { return op::scalar(c, c.cpu(), DType::Int32, 1); }

using Ts = std::vector<Tensor>;

// sum of i for i in [0, n): loop variables (i, acc).
Ts triangle(Context& c, const Tensor& n) {
  BranchFn cond = [n](Context& cx, const Ts& v) { return Ts{op::less(cx, v[0], n)}; };
  BranchFn body = [](Context& cx, const Ts& v) {
    return Ts{op::add(cx, v[0], one_i32(cx)), op::add(cx, v[1], v[0])};
  };
  return graph::while_loop(c, cond, body, {i32(0), i32(0)});
}

TEST_CASE("eager cond and while_loop run the host functions directly") {
  Context& c = ctx();
  int then_calls = 0, else_calls = 0;
  BranchFn then_b = [&](Context& cx, const Ts& v) { ++then_calls; return Ts{op::add(cx, v[0], v[0])}; };
  BranchFn else_b = [&](Context& cx, const Ts& v) { ++else_calls; return Ts{op::neg(cx, v[0])}; };
  CHECK(values<float>(graph::cond(c, boolean(true), {f32s({1, 2})}, then_b, else_b)[0]) == std::vector<float>{2, 4});
  CHECK(values<float>(graph::cond(c, boolean(false), {f32s({1, 2})}, then_b, else_b)[0]) ==
        std::vector<float>{-1, -2});
  CHECK(then_calls == 1);
  CHECK(else_calls == 1);
  Ts r = triangle(c, i32(5));
  CHECK(values<int32_t>(r[0]) == std::vector<int32_t>{5});
  CHECK(values<int32_t>(r[1]) == std::vector<int32_t>{10});
}

TEST_CASE("a traced cond traces both branches once and picks one per call from the data") {
  Context& c = ctx();
  int host_calls = 0;
  auto f = make_ref<Function>(c, "abs_or_double", [&](Context& cx, const Ts& in) {
    ++host_calls;
    Tensor positive = op::greater(cx, op::all_sum(cx, in[0]), op::scalar(cx, cx.cpu(), DType::Float32, 0));
    return graph::cond(
        cx, positive, {in[0]}, [](Context& x, const Ts& v) { return Ts{op::add(x, v[0], v[0])}; },
        [](Context& x, const Ts& v) { return Ts{op::neg(x, v[0])}; });
  });
  CHECK(values<float>(f->call({f32s({1, 2})})[0]) == std::vector<float>{2, 4});
  CHECK(values<float>(f->call({f32s({-1, -2})})[0]) == std::vector<float>{1, 2});
  CHECK(values<float>(f->call({f32s({3, -1})})[0]) == std::vector<float>{6, -2});
  CHECK(host_calls == 1);
  CHECK(f->num_traces() == 1);
  std::string dump = f->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("= Cond(") != std::string::npos, dump);
  CHECK_MESSAGE(dump.find("  then:\n") != std::string::npos, dump);
  CHECK_MESSAGE(dump.find("  else:\n") != std::string::npos, dump);
}

TEST_CASE("a traced while_loop runs a data-dependent number of iterations") {
  Context& c = ctx();
  int host_calls = 0;
  auto f = make_ref<Function>(c, "triangle", [&](Context& cx, const Ts& in) {
    ++host_calls;
    return Ts{triangle(cx, in[0])[1]};
  });
  for (int n : {0, 1, 5, 100}) CHECK(values<int32_t>(f->call({i32(n)})[0]) == std::vector<int32_t>{n * (n - 1) / 2});
  CHECK(host_calls == 1);
  std::string dump = f->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("= While(") != std::string::npos, dump);
  CHECK_MESSAGE(dump.find("  body:\n") != std::string::npos, dump);
}

TEST_CASE("branches capture tensors of the enclosing trace and variables by reference") {
  Context& c = ctx();
  Ref<Variable> scale = Variable::create(c, make<float>({2}, Shape{}), {.name = "scale"});
  auto f = make_ref<Function>(c, "scaled_powers", [&](Context& cx, const Ts& in) {
    const Tensor& x = in[0];  // captured by the body
    const Tensor& n = in[1];  // captured by cond
    BranchFn cond = [n](Context& y, const Ts& v) { return Ts{op::less(y, v[0], n)}; };
    BranchFn body = [&, x](Context& y, const Ts& v) {
      return Ts{op::add(y, v[0], one_i32(y)), op::mul(y, op::mul(y, v[1], x), scale->read())};
    };
    return Ts{graph::while_loop(cx, cond, body, {i32(0), op::ones_like(cx, x)})[1]};
  });
  // (x * scale)^n
  CHECK(values<float>(f->call({f32s({1, 3}), i32(2)})[0]) == std::vector<float>{4, 36});
  scale->assign(make<float>({1}, Shape{}));
  CHECK(values<float>(f->call({f32s({1, 3}), i32(3)})[0]) == std::vector<float>{1, 27});
  CHECK(f->num_traces() == 1);
}

TEST_CASE("control flow nests: a cond inside a while body, capturing from two levels up") {
  Context& c = ctx();
  // Collatz steps until 1, capped by max_iterations.
  auto f = make_ref<Function>(c, "collatz", [&](Context& cx, const Ts& in) {
    Tensor two = op::scalar(cx, cx.cpu(), DType::Int32, 2);
    Tensor three = op::scalar(cx, cx.cpu(), DType::Int32, 3);
    Tensor offset = in[1];  // used inside the cond inside the body
    BranchFn cond = [](Context& y, const Ts& v) { return Ts{op::greater(y, v[0], one_i32(y))}; };
    BranchFn body = [=](Context& y, const Ts& v) {
      Tensor even = op::equal(y, op::run1(y, "FloorMod", {v[0], two}), op::sub(y, offset, offset));
      Ts next = graph::cond(
          y, even, {v[0]}, [=](Context& z, const Ts& w) { return Ts{op::run1(z, "FloorDiv", {w[0], two})}; },
          [=](Context& z, const Ts& w) { return Ts{op::add(z, op::mul(z, w[0], three), one_i32(z))}; });
      return Ts{next[0], op::add(y, v[1], one_i32(y))};
    };
    graph::WhileOptions options;
    options.max_iterations = 100;
    return graph::while_loop(cx, cond, body, {in[0], i32(0)}, options);
  });
  Ts r = f->call({i32(6), i32(0)});
  CHECK(values<int32_t>(r[0]) == std::vector<int32_t>{1});
  CHECK(values<int32_t>(r[1]) == std::vector<int32_t>{8});  // 6 3 10 5 16 8 4 2 1
  r = f->call({i32(27), i32(0)});
  CHECK(values<int32_t>(r[1]) == std::vector<int32_t>{100});  // 27 needs 111 steps: capped
  CHECK(f->num_traces() == 1);
}

// f(step * i) for i < n: deterministic RNN inputs.
std::vector<float> wave(int64_t n, float (*f)(float), float step) {
  std::vector<float> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(f(step * static_cast<float>(i)));
  return out;
}

// scale * (i % period) - shift for i < n: small deterministic RNN weights.
std::vector<float> sawtooth(int64_t n, float scale, int period, float shift) {
  std::vector<float> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(scale * static_cast<float>(i % period) - shift);
  return out;
}

// h_{t+1} = tanh(x_t W + h_t U), over the first `length` steps of x [T, batch, features]; the
// outputs go into a TensorArray.
Ts rnn(Context& c, const Tensor& x, const Tensor& length, const Tensor& w, const Tensor& u) {
  const int64_t steps = x.shape().dim(0), batch = x.shape().dim(1), units = w.shape().dim(1);
  Tensor h0 = op::filled(c, c.cpu(), DType::Float32, Shape{batch, units}, 0);
  Tensor outputs = graph::tensor_array(c, DType::Float32, steps, Shape{batch, units});
  BranchFn cond = [length](Context& y, const Ts& v) { return Ts{op::less(y, v[0], length)}; };
  BranchFn body = [=](Context& y, const Ts& v) {
    Tensor xt = graph::tensor_array_read(y, x, v[0]);
    Tensor h = op::tanh(y, op::add(y, op::matmul(y, xt, w), op::matmul(y, v[1], u)));
    return Ts{op::add(y, v[0], one_i32(y)), h, graph::tensor_array_write(y, v[2], v[0], h)};
  };
  Ts r = graph::while_loop(c, cond, body, {i32(0), h0, outputs});
  return {r[1], r[2]};
}

TEST_CASE("an RNN over a data-dependent length is captured and matches eager execution") {
  Context& c = ctx();
  const int64_t T = 6, B = 2, F = 3, U = 4;
  const std::vector<float> xs = wave(T * B * F, [](float v) { return std::sin(v); }, 0.37f);
  const std::vector<float> ws = sawtooth(F * U, 0.1f, 7, 0.3f), us = sawtooth(U * U, 0.05f, 5, 0.1f);
  Tensor x = make<float>(xs, Shape{T, B, F});
  Ref<Variable> w = Variable::create(c, make<float>(ws, Shape{F, U}), {.name = "w"});
  Ref<Variable> u = Variable::create(c, make<float>(us, Shape{U, U}), {.name = "u"});
  int traces = 0;
  auto f = make_ref<Function>(c, "rnn", [&](Context& cx, const Ts& in) {
    ++traces;
    return rnn(cx, in[0], in[1], w->read(), u->read());
  });
  for (int len : {0, 1, 4, 6}) {
    Ts traced = f->call({x, i32(len)});
    Ts eager = rnn(c, x, i32(len), w->read(), u->read());
    CHECK(values<float>(traced[0]) == values<float>(eager[0]));
    CHECK(values<float>(traced[1]) == values<float>(eager[1]));
    // Steps past the length stay zero in the TensorArray.
    std::vector<float> stacked = values<float>(traced[1]);
    for (int64_t k = len * B * U; k < T * B * U; ++k) CHECK(stacked[static_cast<size_t>(k)] == 0.0f);
  }
  CHECK(traces == 1);
}

TEST_CASE("a function with nested control flow exports, loads and replays with the same results") {
  Context& c = ctx();
  const int64_t T = 5, B = 2, F = 3, U = 4;
  const std::vector<float> xs = wave(T * B * F, [](float v) { return std::cos(v); }, 0.21f);
  const std::vector<float> ws = sawtooth(F * U, 0.07f, 9, 0.2f), us = sawtooth(U * U, 0.03f, 6, 0.05f);
  Tensor x = make<float>(xs, Shape{T, B, F});
  Ref<Variable> w = Variable::create(c, make<float>(ws, Shape{F, U}), {.name = "w"});
  Ref<Variable> u = Variable::create(c, make<float>(us, Shape{U, U}), {.name = "u"});
  // The RNN, then a cond on the final state's sum (a second control-flow node).
  auto f = make_ref<Function>(c, "rnn_then_cond", [&](Context& cx, const Ts& in) {
    Ts r = rnn(cx, in[0], in[1], w->read(), u->read());
    Tensor positive = op::greater(cx, op::all_sum(cx, r[0]), op::scalar(cx, cx.cpu(), DType::Float32, 0));
    Ts h = graph::cond(
        cx, positive, {r[0]}, [](Context& y, const Ts& v) { return Ts{op::add(y, v[0], v[0])}; },
        [](Context& y, const Ts& v) { return Ts{op::neg(y, v[0])}; });
    return Ts{h[0], r[1]};
  });
  f->call({x, i32(2)});
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/rnn_then_cond.cairnfn";
  graph::export_function(*f, path);
  graph::LoadedFunction loaded = graph::load_function(c, path);
  for (int len : {0, 3, 5}) {
    Ts want = f->call({x, i32(len)});
    Ts got = loaded.function->call({x, i32(len)});
    REQUIRE(got.size() == 2);
    CHECK(values<float>(got[0]) == values<float>(want[0]));
    CHECK(values<float>(got[1]) == values<float>(want[1]));
  }
  std::string dump = loaded.function->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("= While(") != std::string::npos, dump);
  CHECK_MESSAGE(dump.find("= Cond(") != std::string::npos, dump);
}

TEST_CASE("a replay under a tape differentiates through a while_loop") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, make<float>({0.5f}, Shape{}), {.name = "w"});
  auto power = [&](Context& cx, const Tensor& n) {
    BranchFn cond = [n](Context& y, const Ts& v) { return Ts{op::less(y, v[0], n)}; };
    BranchFn body = [&](Context& y, const Ts& v) { return Ts{op::add(y, v[0], one_i32(y)), op::mul(y, v[1], w->read())}; };
    return graph::while_loop(cx, cond, body, {i32(0), make<float>({1}, Shape{})})[1];
  };
  auto f = make_ref<Function>(c, "power", [&](Context& cx, const Ts& in) { return Ts{power(cx, in[0])}; });
  f->call({i32(3)});  // traced outside the tape
  GradientTape tape(c);
  Tensor y = f->call({i32(3)})[0];  // w^3
  std::vector<Tensor> g = tape.gradient(y, std::vector<const Variable*>{w.get()});
  REQUIRE(g[0].valid());
  CHECK(values<float>(g[0])[0] == doctest::Approx(3 * 0.5f * 0.5f));
}

TEST_CASE("control flow errors name what was wrong") {
  Context& c = ctx();
  BranchFn same = [](Context&, const Ts& v) { return v; };
  CHECK_THROWS_CODE(graph::cond(c, i32(1), {f32s({1})}, same, same), Code::InvalidArgument, "bool");
  CHECK_THROWS_CODE(graph::while_loop(c, same, same, {}), Code::InvalidArgument, "at least one loop variable");

  auto mismatch = make_ref<Function>(c, "mismatch", [](Context& cx, const Ts& in) {
    return graph::cond(
        cx, op::greater(cx, in[0], in[0]), {in[0]}, [](Context&, const Ts& v) { return v; },
        [](Context& x, const Ts& v) { return Ts{op::cast(x, v[0], DType::Float64)}; });
  });
  CHECK_THROWS_CODE(mismatch->call({make<float>({1}, Shape{})}), Code::InvalidArgument, "else branch");

  auto grows = make_ref<Function>(c, "grows", [](Context& cx, const Ts& in) {
    return graph::while_loop(
        cx, [](Context& y, const Ts& v) { return Ts{op::less(y, op::all_sum(y, v[0]), op::all_sum(y, v[0]))}; },
        [](Context& y, const Ts& v) { return Ts{op::run1(y, "ConcatV2", {v[0], v[0]}, {attr_int("axis", 0)})}; },
        {in[0]});
  });
  CHECK_THROWS_CODE(grows->call({f32s({1})}), Code::InvalidArgument, "keeps its dtype and shape");

  Tensor leaked;
  auto leak = make_ref<Function>(c, "leak", [&](Context& cx, const Ts& in) {
    graph::cond(
        cx, op::greater(cx, in[0], in[0]), {in[0]},
        [&](Context& x, const Ts& v) {
          leaked = op::neg(x, v[0]);
          return v;
        },
        [](Context&, const Ts& v) { return v; });
    return Ts{op::add(cx, leaked, in[0])};
  });
  CHECK_THROWS_CODE(leak->call({make<float>({1}, Shape{})}), Code::InvalidArgument, "finished cond/while_loop branch");
  leaked = Tensor();

  // A tape recording inside the trace differentiates a loop only with max_iterations (the stacks'
  // size): refused, not lost.
  Ref<Variable> w = Variable::create(c, make<float>({2}, Shape{}), {.name = "w"});
  auto taped = make_ref<Function>(c, "taped", [&](Context& cx, const Ts& in) {
    GradientTape tape(cx);
    Ts r = graph::while_loop(
        cx, [&](Context& y, const Ts& v) { return Ts{op::less(y, v[0], in[0])}; },
        [&](Context& y, const Ts& v) { return Ts{op::add(y, v[0], one_i32(y)), op::mul(y, v[1], w->read())}; },
        {i32(0), make<float>({1}, Shape{})});
    return tape.gradient(r[1], std::vector<const Variable*>{w.get()});
  });
  CHECK_THROWS_CODE(taped->call({i32(2)}), Code::Unimplemented, "needs max_iterations");
}

// Runs `step` eagerly under a tape and traced (the tape inside the function) and checks that the
// gradients agree.
void check_traced_gradients(Context& c, const char* name, const std::function<Ts(Context&, const Ts&)>& step,
                            const Ts& inputs) {
  Ts eager = step(c, inputs);
  bool nonzero_gradient = false;  // the comparison below must not be between two zero gradients
  for (size_t k = 1; k < eager.size(); ++k)
    for (float v : values<float>(eager[k])) nonzero_gradient = nonzero_gradient || v != 0;
  CHECK(nonzero_gradient);
  auto f = make_ref<Function>(c, name, step);
  for (int call = 0; call < 2; ++call) {  // the trace, then a replay
    Ts traced = f->call(inputs);
    REQUIRE(traced.size() == eager.size());
    for (size_t k = 0; k < eager.size(); ++k) {
      CAPTURE(k);
      std::vector<float> want = values<float>(eager[k]), got = values<float>(traced[k]);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
    }
  }
  CHECK(f->num_traces() == 1);
}

TEST_CASE("a tape inside a trace differentiates a cond: inputs, captures and variables read in a branch") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, make<float>({1.5f, -2}, Shape{2}), {.name = "w"});
  auto one_call = [&](Context& cx, const Ts& in) {
    GradientTape tape(cx, {.persistent = true});
    tape.watch(in[0]);
    tape.watch(in[1]);
    Tensor positive = op::greater(cx, op::all_sum(cx, in[0]), op::scalar(cx, cx.cpu(), DType::Float32, 0));
    Ts y = graph::cond(
        cx, positive, {in[0]},
        [&](Context& z, const Ts& v) {
          return Ts{op::mul(z, op::mul(z, v[0], v[0]), op::mul(z, in[1], w->read()))};
        },
        [&](Context& z, const Ts& v) { return Ts{op::mul(z, v[0], w->read())}; });
    Tensor loss = op::all_sum(cx, y[0]);
    Ts g = tape.gradient(std::vector<Tensor>{loss}, {in[0], in[1]}, {}, Unconnected::Zero);
    // The variable's gradient, through its reads in the branches.
    Ts gw = tape.gradient(loss, std::vector<const Variable*>{w.get()}, nullptr, Unconnected::Zero);
    return Ts{loss, g[0], g[1], gw[0]};
  };
  check_traced_gradients(c, "cond_then", one_call, {make<float>({1, 2}, Shape{2}), make<float>({3}, Shape{})});
  check_traced_gradients(c, "cond_else", one_call, {make<float>({-1, -2}, Shape{2}), make<float>({3}, Shape{})});
}

TEST_CASE("a tape inside a trace differentiates a while_loop with max_iterations, variables included") {
  Context& c = ctx();
  Ref<Variable> w = Variable::create(c, make<float>({0.9f}, Shape{}), {.name = "w"});
  // acc = x * w^n for n = the data-dependent trip count; d/dx and d/dw.
  auto step = [&](Context& cx, const Ts& in) {
    GradientTape tape(cx);
    tape.watch(in[0]);
    graph::WhileOptions options;
    options.max_iterations = 10;
    const Tensor& n = in[1];
    Ts r = graph::while_loop(
        cx, [&](Context& y, const Ts& v) { return Ts{op::less(y, v[0], n)}; },
        [&](Context& y, const Ts& v) { return Ts{op::add(y, v[0], one_i32(y)), op::mul(y, v[1], w->read())}; },
        {i32(0), in[0]}, options);
    Tensor loss = op::all_sum(cx, r[1]);
    Ts g = tape.gradient(std::vector<Tensor>{loss}, {in[0]});
    return Ts{loss, g[0]};
  };
  for (int n : {0, 1, 4}) check_traced_gradients(c, "power", step, {make<float>({2, -1}, Shape{2}), i32(n)});
}

TEST_CASE("an RNN training step over a data-dependent length is captured whole, gradients included") {
  Context& c = ctx();
  const int64_t T = 5, B = 2, F = 3, U = 4;
  const std::vector<float> xs = wave(T * B * F, [](float v) { return std::sin(v); }, 0.3f);
  const std::vector<float> ws = sawtooth(F * U, 0.1f, 7, 0.3f), us = sawtooth(U * U, 0.05f, 5, 0.1f);
  Ref<Variable> w = Variable::create(c, make<float>(ws, Shape{F, U}), {.name = "w"});
  Ref<Variable> u = Variable::create(c, make<float>(us, Shape{U, U}), {.name = "u"});
  // The loss and d(loss)/d(w), d(loss)/d(u), with the recurrence as a while_loop of at most T steps.
  auto step = [&](Context& cx, const Ts& in) {
    GradientTape tape(cx);
    const Tensor& x = in[0];
    const Tensor& length = in[1];
    Tensor h0 = op::filled(cx, cx.cpu(), DType::Float32, Shape{B, U}, 0);
    graph::WhileOptions options;
    options.max_iterations = T;
    Ts r = graph::while_loop(
        cx, [&](Context& y, const Ts& v) { return Ts{op::less(y, v[0], length)}; },
        [&](Context& y, const Ts& v) {
          Tensor xt = graph::tensor_array_read(y, x, v[0]);
          Tensor h = op::tanh(y, op::add(y, op::matmul(y, xt, w->read()), op::matmul(y, v[1], u->read())));
          return Ts{op::add(y, v[0], one_i32(y)), h};
        },
        {i32(0), h0}, options);
    Tensor loss = op::all_mean(cx, op::square(cx, r[1]));
    Ts g = tape.gradient(loss, std::vector<const Variable*>{w.get(), u.get()});
    return Ts{loss, g[0], g[1]};
  };
  for (int len : {1, 3, 5}) check_traced_gradients(c, "rnn_step", step, {make<float>(xs, Shape{T, B, F}), i32(len)});
}

TEST_CASE("a used non-persistent tape no longer claims tensors, so later traced control flow is not refused") {
  Context& c = ctx();
  Tensor x = make<float>({3}, Shape{});
  GradientTape tape(c);
  tape.watch(x);
  Tensor y = op::mul(c, x, x);
  CHECK(tape.differentiates(x));
  CHECK(values<float>(tape.gradient(y, {x})[0]) == std::vector<float>{6});
  CHECK_FALSE(tape.differentiates(x));
  CHECK_FALSE(tape.differentiates(y));
  auto f = make_ref<Function>(c, "after_tape", [&](Context& cx, const Ts& in) {
    return graph::cond(
        cx, op::greater(cx, in[0], x), {in[0]}, [](Context&, const Ts& v) { return v; },
        [](Context& z, const Ts& v) { return Ts{op::neg(z, v[0])}; });
  });
  CHECK(values<float>(f->call({make<float>({5}, Shape{})})[0]) == std::vector<float>{5});
}

TEST_CASE("TensorArray: writes are functional, unwritten elements are zero, bad indices fail") {
  Context& c = ctx();
  Tensor a = graph::tensor_array(c, DType::Float32, 3, Shape{2});
  Tensor b = graph::tensor_array_write(c, a, i32(1), f32s({5, 6}));
  CHECK(values<float>(a) == std::vector<float>{0, 0, 0, 0, 0, 0});
  CHECK(values<float>(b) == std::vector<float>{0, 0, 5, 6, 0, 0});
  CHECK(values<float>(graph::tensor_array_read(c, b, make<int64_t>({1}, Shape{}))) == std::vector<float>{5, 6});
  CHECK_THROWS_CODE(graph::tensor_array_write(c, b, i32(3), f32s({1, 2})), Code::OutOfRange, "index 3");
  CHECK_THROWS_CODE(graph::tensor_array_read(c, b, i32(-1)), Code::OutOfRange, "index -1");
  CHECK_THROWS_CODE(graph::tensor_array_write(c, b, i32(0), f32s({1, 2, 3})), Code::InvalidArgument, "elements are");
  CHECK_THROWS_CODE(graph::tensor_array_write(c, b, f32s({0}), f32s({1, 2})), Code::InvalidArgument, "int32 or int64");
}

TEST_CASE("passes keep a cond whose branch writes a variable even when its results are unused") {
  Context& c = ctx();
  Ref<Variable> hits = Variable::create(c, make<int32_t>({0}, Shape{}), {.name = "hits", .trainable = false});
  auto f = make_ref<Function>(c, "count_positive", [&](Context& cx, const Ts& in) {
    graph::cond(
        cx, op::greater(cx, in[0], op::scalar(cx, cx.cpu(), DType::Float32, 0)), {},
        [&](Context& x, const Ts&) {
          hits->assign_add(one_i32(x));
          return Ts{};
        },
        [](Context&, const Ts&) { return Ts{}; });
    return Ts{op::identity(cx, in[0])};
  });
  for (float v : {1.0f, -1.0f, 2.0f}) f->call({make<float>({v}, Shape{})});
  CHECK(values<int32_t>(hits->read()) == std::vector<int32_t>{2});
}

}  // namespace
}  // namespace cairn::test
