// Graph capture: trace once per signature, replay without the host function, variables captured by
// reference, retracing rules, errors, and a whole training step captured.
#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/executor.h"
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

TEST_CASE("a trace that bakes in an unknown dimension traces per shape; one that does not, once") {
  Context& c = ctx();
  FunctionOptions o;
  Shape any{0};
  any.set_dim(0, -1);
  o.input_signature = {{DType::Float32, any}};
  o.has_input_signature = true;
  int generic_calls = 0, baked_calls = 0;
  auto generic = make_ref<Function>(
      c, "neg", [&](Context& cx, const std::vector<Tensor>& in) {
        ++generic_calls;
        return std::vector<Tensor>{op::neg(cx, in[0])};
      }, o);
  // Reads the shape while tracing: the graph holds a Reshape to [n, 1] for the tracing call's n.
  auto baked = make_ref<Function>(
      c, "column", [&](Context& cx, const std::vector<Tensor>& in) {
        ++baked_calls;
        return std::vector<Tensor>{op::reshape(cx, in[0], Shape{in[0].shape()[0], 1})};
      }, o);
  for (int n : {3, 2, 5, 2, 3}) {
    std::vector<float> v(static_cast<size_t>(n), 1.5f);
    Tensor x = make<float>(v, Shape{n});
    CHECK(generic->call({x})[0].shape() == Shape{n});
    Tensor col = baked->call({x})[0];
    CHECK(col.shape() == (Shape{n, 1}));
    CHECK(values<float>(col) == v);
  }
  CHECK(generic->num_traces() == 1);
  CHECK(generic_calls == 2);  // the first trace and the check on the second shape
  CHECK(baked->num_traces() == 3);
  CHECK(baked_calls == 3);
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
    opt->apply_gradients(tape.gradient(loss, weights), weights);
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

// ---- The replay executor: memory plan, values that escape a replay, errors, concurrency ----

namespace cairn::test {
namespace {

using graph::Function;
using graph::FunctionOptions;

Tensor f32v(std::vector<float> v) { return make<float>(v, Shape{static_cast<int64_t>(v.size())}); }

// Each slot's producer and last reader, computed here independently of the executor.
struct Lifetime {
  int first = 0, last = 0;
};
std::vector<Lifetime> lifetimes(const graph::Graph& g, const graph::Program& p) {
  std::vector<Lifetime> life(p.slots().size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t k = 0; k < g.nodes[i].outputs.size(); ++k) {
      int s = p.slot({static_cast<int>(i), static_cast<int>(k)});
      life[static_cast<size_t>(s)] = {static_cast<int>(i), static_cast<int>(i)};
    }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (graph::Port in : g.nodes[i].inputs) life[static_cast<size_t>(p.slot(in))].last = static_cast<int>(i);
  return life;
}

// No two slots of one register are alive at once, and a node never writes a register it reads.
void check_registers_disjoint(const graph::Graph& g, const graph::Program& p) {
  std::vector<Lifetime> life = lifetimes(g, p);
  for (const graph::Register& reg : p.registers()) {
    for (size_t a = 0; a < reg.slots.size(); ++a) {
      const graph::SlotInfo& info = p.slots()[static_cast<size_t>(reg.slots[a])];
      CHECK(info.spec.dtype == reg.dtype);
      CHECK(info.spec.shape.num_elements() == reg.elements);
      for (size_t b = a + 1; b < reg.slots.size(); ++b) {
        Lifetime x = life[static_cast<size_t>(reg.slots[a])], y = life[static_cast<size_t>(reg.slots[b])];
        CHECK_MESSAGE((x.last < y.first || y.last < x.first), "slots ", reg.slots[a], " and ", reg.slots[b]);
      }
    }
  }
}

TEST_CASE("the memory plan: a chain takes turns in two buffers; results and inputs are not planned") {
  Context& c = ctx();
  Tensor a = f32v({0.5f, 2}), b = f32v({1, -1});
  auto f = make_ref<Function>(c, "chain", [&](Context& cx, const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 5; ++i) x = op::add(cx, op::mul(cx, x, a), b);
    return std::vector<Tensor>{x};
  });
  Tensor x = f32v({1, 2});
  std::vector<float> expected = values<float>(x);
  for (int i = 0; i < 5; ++i) expected = {expected[0] * 0.5f + 1, expected[1] * 2 - 1};
  for (int call = 0; call < 3; ++call) CHECK(values<float>(f->call({x})[0]) == expected);
  CHECK(values<float>(x) == std::vector<float>{1, 2});  // the caller's tensor is never written

  const graph::Graph& g = f->concretes()[0]->graph();
  graph::Program p(g, true);
  CHECK(p.registers().size() == 2);  // nine intermediates, at most two alive at once
  int planned = 0;
  for (const graph::SlotInfo& s : p.slots()) planned += s.kind == graph::SlotKind::Planned;
  CHECK(planned == 9);
  CHECK(p.slots()[static_cast<size_t>(p.result_slots()[0])].kind == graph::SlotKind::Fresh);
  check_registers_disjoint(g, p);

  // Without exact shapes nothing is planned.
  graph::Program unplanned(g, false);
  CHECK(unplanned.registers().empty());
}

TEST_CASE("the memory plan of a captured training step keeps live values apart") {
  Context& c = ctx();
  Ref<nn::Sequential> model = nn::Sequential::create(c, "mlp");
  model->add(nn::dense(c, {.units = 8, .activation = nn::Activation::Relu}));
  model->add(nn::dense(c, {.units = 3}));
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::Adam;
  Ref<optim::Optimizer> opt = optim::Optimizer::create(c, oo);
  auto step = make_ref<Function>(c, "step", [&](Context& cx, const std::vector<Tensor>& in) {
    GradientTape tape(cx);
    Tensor loss = nn::mean_squared_error(cx, in[1], (*model)(in[0], true));
    std::vector<Ref<Variable>> weights = model->trainable_weights();
    opt->apply_gradients(tape.gradient(loss, weights), weights);
    return std::vector<Tensor>{loss};
  });
  Tensor x = make<float>({0, 1, 2, 3, 4, 5, 6, 7}, Shape{2, 4}), y = make<float>({1, 0, 0, 0, 1, 0}, Shape{2, 3});
  step->call({x, y});
  for (const auto& concrete : step->concretes()) {
    for (const graph::Graph* g : {&concrete->graph(), &concrete->fused_graph()}) {
      graph::Program p(*g, true);
      CHECK(!p.registers().empty());
      check_registers_disjoint(*g, p);
    }
  }
}

TEST_CASE("values that leave a replay are never overwritten by a later one") {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, f32v({0, 0, 0}), {.name = "v", .trainable = false});
  auto f = make_ref<Function>(c, "escape", [&](Context& cx, const std::vector<Tensor>& in) {
    Tensor t = op::mul(cx, in[0], op::scalar(cx, cx.cpu(), DType::Float32, 2));
    v->assign(t);  // the variable keeps an intermediate's buffer
    // Later intermediates of the same size would reuse t's buffer if nothing guarded it.
    Tensor u = op::mul(cx, op::add(cx, in[0], op::scalar(cx, cx.cpu(), DType::Float32, 1)),
                       op::scalar(cx, cx.cpu(), DType::Float32, 3));
    return std::vector<Tensor>{op::neg(cx, u), op::add(cx, t, u)};
  });
  std::vector<std::vector<Tensor>> kept;
  std::vector<Tensor> snapshots;
  for (int call = 0; call < 6; ++call) {
    float k = static_cast<float>(call);
    Tensor x = f32v({k, k + 1, k + 2});
    kept.push_back(f->call({x}));
    snapshots.push_back(v->read());  // the variable's value, still referenced by the test
    CHECK(values<float>(v->read()) == std::vector<float>{2 * k, 2 * k + 2, 2 * k + 4});
    CHECK(values<float>(x) == std::vector<float>{k, k + 1, k + 2});
  }
  CHECK(f->num_traces() == 1);
  for (int call = 0; call < 6; ++call) {
    float k = static_cast<float>(call);
    CAPTURE(call);
    CHECK(values<float>(kept[static_cast<size_t>(call)][0]) == std::vector<float>{-3 * (k + 1), -3 * (k + 2), -3 * (k + 3)});
    CHECK(values<float>(kept[static_cast<size_t>(call)][1]) ==
          std::vector<float>{5 * k + 3, 5 * k + 8, 5 * k + 13});
    CHECK(values<float>(snapshots[static_cast<size_t>(call)]) == std::vector<float>{2 * k, 2 * k + 2, 2 * k + 4});
  }
}

// Counts host allocations through the context's allocator hooks.
struct AllocationCounter {
  int64_t allocations = 0;
};

Ref<Context> counting_context(AllocationCounter& counter) {
  ContextOptions o;
  o.num_threads = 1;
  o.allocator.user_data = &counter;
  o.allocator.allocate = [](void* user, size_t size, size_t alignment) -> void* {
    ++static_cast<AllocationCounter*>(user)->allocations;
    return default_allocator().allocate(nullptr, size, alignment);
  };
  o.allocator.deallocate = [](void*, void* p, size_t size) { default_allocator().deallocate(nullptr, p, size); };
  return make_ref<Context>(o);
}

TEST_CASE("a variable's replaced value becomes a buffer of the plan: updates allocate nothing") {
  AllocationCounter counter;
  Ref<Context> c = counting_context(counter);
  Ref<Variable> v = Variable::create(*c, op::filled(*c, c->cpu(), DType::Float32, Shape{16}, 1), {.name = "v"});
  auto f = make_ref<Function>(*c, "update", [&](Context& cx, const std::vector<Tensor>& in) {
    v->assign(op::add(cx, v->read(), in[0]));
    // Same size as the update: these reuse its register in the same replay, after the write.
    Tensor sq = op::mul(cx, op::neg(cx, in[0]), op::neg(cx, op::sqrt(cx, in[0])));
    return std::vector<Tensor>{op::all_sum(cx, sq)};
  });
  Tensor x = op::filled(*c, c->cpu(), DType::Float32, Shape{16}, 4);
  for (int i = 0; i < 3; ++i) f->call({x});
  int64_t before = counter.allocations;
  Tensor last;
  for (int i = 0; i < 50; ++i) last = f->call({x})[0];
  CHECK(counter.allocations - before == 50);  // only the returned sums
  CHECK(values<float>(last) == std::vector<float>{16 * 4 * 2});
  CHECK(values<float>(v->read()) == std::vector<float>(16, 1 + 53 * 4));
}

TEST_CASE("a replay that throws leaves the function usable") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "pick", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::neg(cx, op::gather(cx, op::mul(cx, in[0], in[0]), in[1]))};
  });
  Tensor x = f32v({1, 2, 3});
  CHECK(values<float>(f->call({x, make<int32_t>({2, 0}, Shape{2})})[0]) == std::vector<float>{-9, -1});
  CHECK_THROWS_CODE(f->call({x, make<int32_t>({1, 7}, Shape{2})}), Code::InvalidArgument, "not in [0, 3)");
  CHECK(values<float>(f->call({f32v({4, 5, 6}), make<int32_t>({1, 1}, Shape{2})})[0]) == std::vector<float>{-25, -25});
  CHECK(f->num_traces() == 1);
}

TEST_CASE("fast replays, replays under a tape and fast replays again agree") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "poly", [](Context& cx, const std::vector<Tensor>& in) {
    Tensor x = in[0];
    return std::vector<Tensor>{op::add(cx, op::mul(cx, op::square(cx, x), x), op::mul(cx, x, x))};  // x^3 + x^2
  });
  Tensor x = make<double>({2, -1}, Shape{2});
  std::vector<double> y = {12, 0};
  CHECK(as_doubles(f->call({x})[0]) == y);
  for (int i = 0; i < 2; ++i) {
    GradientTape tape(c);
    tape.watch(x);
    Tensor out = f->call({x})[0];
    CHECK(as_doubles(out) == y);
    check_close(as_doubles(tape.gradient(out, {x})[0]), {16, 1});  // 3x^2 + 2x
    CHECK(as_doubles(f->call({x})[0]) == y);
  }
}

TEST_CASE("random ops draw new numbers on every replay") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "noise", [](Context& cx, const std::vector<Tensor>& in) {
    Tensor r = run_op(cx, "RandomUniform", {}, {attr_ints("shape", {4})})[0];
    return std::vector<Tensor>{op::add(cx, r, in[0])};
  });
  Tensor zero = f32v({0, 0, 0, 0});
  std::vector<float> a = values<float>(f->call({zero})[0]), b = values<float>(f->call({zero})[0]);
  CHECK(a != b);
  for (float v : a) CHECK((v >= 0 && v < 1));
}

TEST_CASE("concurrent callers of one function each get their own replay state") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "affine", [](Context& cx, const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 10; ++i) x = op::add(cx, op::mul(cx, x, in[1]), in[1]);
    return std::vector<Tensor>{x};
  });
  auto expected = [](float x0, float k) {
    for (int i = 0; i < 10; ++i) x0 = x0 * k + k;
    return x0;
  };
  f->call({f32v({0, 0}), f32v({1, 1})});
  constexpr int kThreads = 4;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      float k = 0.5f + 0.125f * static_cast<float>(t);
      Tensor x = f32v({static_cast<float>(t), 1}), kk = f32v({k, k});
      for (int i = 0; i < 200; ++i) {
        std::vector<float> got = values<float>(f->call({x, kk})[0]);
        if (got != std::vector<float>{expected(static_cast<float>(t), k), expected(1, k)}) ++wrong[static_cast<size_t>(t)];
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(wrong == std::vector<int>(kThreads, 0));
  CHECK(f->num_traces() == 1);
}

TEST_CASE("one concrete function replays on two contexts") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "twice", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::add(cx, op::neg(cx, in[0]), op::mul(cx, in[0], in[0]))};
  });
  Tensor x = f32v({1, 2, 3});
  std::shared_ptr<const graph::ConcreteFunction> concrete = f->concrete({x});
  Ref<Context> other = make_ref<Context>(ContextOptions{});
  Tensor y = Tensor::allocate(other->cpu(), DType::Float32, Shape{3});
  std::memcpy(y.raw_mutable_data(), x.raw_data(), x.nbytes());
  for (int i = 0; i < 3; ++i) {
    CHECK(values<float>(concrete->run(c, {x})[0]) == std::vector<float>{0, 2, 6});
    std::vector<Tensor> out = concrete->run(*other, {y});
    CHECK(out[0].device() == &other->cpu());
    CHECK(values<float>(out[0]) == std::vector<float>{0, 2, 6});
  }
}

}  // namespace
}  // namespace cairn::test

namespace cairn::test {
namespace {

TEST_CASE("replay slots: multi-output ops, scalars, empty tensors, repeated results and inputs returned") {
  Context& c = ctx();
  auto f = make_ref<graph::Function>(c, "odd_shapes", [](Context& cx, const std::vector<Tensor>& in) {
    std::vector<Tensor> parts = run_op(cx, "Split", {in[0]}, {attr_int("axis", 0), attr_int("num_split", 2)});
    std::vector<Tensor> top = run_op(cx, "TopKV2", {op::neg(cx, in[0])}, {attr_int("k", 3)});
    Tensor a = op::neg(cx, parts[0]);                 // a result that later nodes also read
    Tensor b = op::mul(cx, parts[1], a);
    Tensor s = op::all_sum(cx, op::square(cx, b));    // a scalar
    Tensor empty = op::neg(cx, op::reshape(cx, in[1], Shape{0, 2}));  // zero elements
    return std::vector<Tensor>{a, s, in[0], a, b, top[0], top[1], empty};
  });
  for (int call = 0; call < 4; ++call) {
    CAPTURE(call);
    float k = static_cast<float>(call);
    Tensor x = make<float>({k, 1, 2, k + 3}, Shape{4});
    Tensor none = Tensor::allocate(c.cpu(), DType::Float32, Shape{0});
    std::vector<Tensor> out = f->call({x, none});
    REQUIRE(out.size() == 8);
    CHECK(values<float>(out[0]) == std::vector<float>{-k, -1});
    CHECK(out[1].shape() == Shape{});
    float b0 = -2 * k, b1 = -(k + 3);
    CHECK(values<float>(out[1]) == std::vector<float>{b0 * b0 + b1 * b1});
    CHECK(out[2].buffer() == x.buffer());  // an input returned as it is
    CHECK(values<float>(out[3]) == std::vector<float>{-k, -1});
    CHECK(values<float>(out[4]) == std::vector<float>{b0, b1});
    // The top 3 of -x are -k, -1 and -2 (-(k + 3) is the smallest), in descending order.
    std::vector<float> top = {-k, -1, -2};
    std::sort(top.begin(), top.end(), std::greater<float>());
    CHECK(values<float>(out[5]) == top);
    CHECK(out[6].dtype() == DType::Int32);
    CHECK(out[7].shape() == Shape{0, 2});
  }
  CHECK(f->num_traces() == 1);
}

}  // namespace
}  // namespace cairn::test
