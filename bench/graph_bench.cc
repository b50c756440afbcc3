// Graph replay against eager execution, in one run (figures in docs/graph.md):
//  1. per-node replay overhead against eager dispatch of the same tiny ops (16 floats each): the
//     kernels' own time (called directly) is measured too and subtracted from both sides;
//  2. a chain of 20 elementwise ops on 1M floats, fused against unfused, on the CPU;
//  3. one training step of the digits MLP (64-64-10, Adam, batch 32), captured against eager;
//  4. the same step with only the forward pass and loss in a function, called under the tape (one
//     tape entry whose gradient is a traced function), against eager and against the node-by-node
//     replay that a call gets when the tape must see every op;
//  5. the chain of 2. on Vulkan (lavapipe here): one generated shader against 20 dispatches;
//  6. an RNN (tanh cell, batch 32, 64 units) over 50 steps as a while_loop: traced against eager,
//     and a training step through it (loss, tape gradient inside the trace) against eager.
//
//   bazel run -c opt //bench:graph_bench [section...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/function.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "runtime/ops/registry.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {

// The median of `reps` timings of `fn`, in seconds.
// The median and the fastest of `reps` runs: on a loaded machine the fastest is the steadier figure.
struct Times {
  double median, best;
};

Times run_times(int reps, const std::function<void()>& fn) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

double median_seconds(int reps, const std::function<void()>& fn) { return run_times(reps, fn).median; }

Tensor filled(Context& ctx, const Shape& shape, float base) {
  Tensor t = Tensor::allocate(ctx.cpu(), DType::Float32, shape);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = base + static_cast<float>(i % 97) / 97.0f;
  return t;
}

// ---- 1. Per-node overhead ----

constexpr int kTinyOps = 1000;

// x <- x * a + b, repeated: kTinyOps ops on 16 floats, none fusible (fusion is off here).
std::vector<Tensor> tiny_chain(Context& ctx, const Tensor& x0, const Tensor& a, const Tensor& b) {
  Tensor x = x0;
  for (int i = 0; i < kTinyOps / 2; ++i) x = op::add(ctx, op::mul(ctx, x, a), b);
  return {x};
}

void bench_per_node(Context& ctx) {
  Tensor x = filled(ctx, Shape{16}, 0.5f), a = filled(ctx, Shape{16}, 0.9f), b = filled(ctx, Shape{16}, 0.01f);
  graph::FunctionOptions fo;
  fo.passes.fuse_elementwise = false;
  auto f = make_ref<graph::Function>(
      ctx, "tiny_chain", [&](Context& cx, const std::vector<Tensor>& in) { return tiny_chain(cx, in[0], a, b); }, fo);
  f->call({x});

  // The kernels alone: the same ops called directly on preallocated outputs.
  const OpDef& add = OpRegistry::global().get("Add");
  const OpDef& mul = OpRegistry::global().get("Mul");
  Attrs add_attrs(add), mul_attrs(mul);
  add_attrs.at(0).kind = mul_attrs.at(0).kind = AttrKind::DType;
  add_attrs.at(0).dtype = mul_attrs.at(0).dtype = DType::Float32;
  Tensor t1 = Tensor::allocate(ctx.cpu(), DType::Float32, Shape{16}), t2 = Tensor::allocate(ctx.cpu(), DType::Float32, Shape{16});
  auto kernels_only = [&] {
    for (int i = 0; i < kTinyOps / 2; ++i) {
      const Tensor* mi[2] = {i == 0 ? &x : &t2, &a};
      KernelContext km{mul, mul_attrs, ctx.cpu(), ctx.pool(), mi, 2, &t1, 1};
      mul.kernels[0](km);
      const Tensor* ai[2] = {&t1, &b};
      KernelContext ka{add, add_attrs, ctx.cpu(), ctx.pool(), ai, 2, &t2, 1};
      add.kernels[0](ka);
    }
  };
  const int reps = 301;
  double kernel = median_seconds(reps, kernels_only) / kTinyOps;
  double eager = median_seconds(reps, [&] { tiny_chain(ctx, x, a, b); }) / kTinyOps;
  double replay = median_seconds(reps, [&] { f->call({x}); }) / kTinyOps;
  std::printf("1. per node, %d ops on float32[16]:\n", kTinyOps);
  std::printf("   eager dispatch %.1f ns/op, replay %.1f ns/node, kernel alone %.1f ns: replay/eager %.2fx\n",
              eager * 1e9, replay * 1e9, kernel * 1e9, replay / eager);
  std::printf("   overhead beyond the kernel: eager %.1f ns, replay %.1f ns: %.2fx (target <= 0.2x)\n",
              (eager - kernel) * 1e9, (replay - kernel) * 1e9, (replay - kernel) / (eager - kernel));
}

// ---- 2. Fused elementwise chain ----

std::vector<Tensor> chain20(Context& ctx, const Tensor& x0) {
  auto k = [&](double v) { return op::scalar(ctx, ctx.cpu(), DType::Float32, v); };
  Tensor x = x0;
  for (int i = 0; i < 4; ++i) {  // 5 ops per round
    x = op::mul(ctx, x, k(0.99));
    x = op::add(ctx, x, k(0.01));
    x = op::maximum(ctx, x, k(-1));
    x = op::sub(ctx, k(0.5), x);
    x = op::sigmoid(ctx, x);
  }
  return {x};
}

void bench_fusion(Context& ctx) {
  Tensor x = filled(ctx, Shape{1 << 20}, 0.1f);
  graph::FunctionOptions unfused_options;
  unfused_options.passes.fuse_elementwise = false;
  auto body = [](Context& cx, const std::vector<Tensor>& in) { return chain20(cx, in[0]); };
  auto fused = make_ref<graph::Function>(ctx, "chain20", body);
  auto unfused = make_ref<graph::Function>(ctx, "chain20", body, unfused_options);
  fused->call({x});
  unfused->call({x});
  size_t nodes = 0;
  for (const graph::Node& n : unfused->concretes()[0]->graph().nodes) nodes += n.kind == graph::NodeKind::Op;
  const int reps = 31;
  const Times unfused_t = run_times(reps, [&] { unfused->call({x}); });
  const Times fused_t = run_times(reps, [&] { fused->call({x}); });
  const Times eager_t = run_times(reps, [&] { chain20(ctx, x); });
  const double tu = unfused_t.median, tf = fused_t.median, te = eager_t.median;
  // The floor: a memcpy of the fused chain's bytes (it reads x and writes y once, 8 MB).
  const size_t bytes = sizeof(float) << 20;
  std::vector<char> src(bytes, 1), dst(bytes);
  double tm = median_seconds(reps, [&] { std::memcpy(dst.data(), src.data(), bytes); });
  const double gb = 2.0 * static_cast<double>(bytes) / 1e9;  // read + write
  std::printf("2. chain of %zu elementwise ops on 1M float32, CPU (%d threads):\n", nodes, ctx.pool().num_threads());
  std::printf("   eager %.2f ms, replay unfused %.2f ms, replay fused %.2f ms: fused is %.1fx faster than unfused\n",
              te * 1e3, tu * 1e3, tf * 1e3, tu / tf);
  std::printf("   memcpy of 4 MB %.3f ms (%.1f GB/s read+write); fused moves the same 8 MB at %.1f GB/s (%.0fx memcpy)\n",
              tm * 1e3, gb / tm, gb / tf, tf / tm);
  // For bench/graph_bench.sh, which prints these beside the peers' figures.
  std::printf("   fastest of %d: eager %.2f ms, replay unfused %.2f ms, replay fused %.2f ms\n", reps, eager_t.best * 1e3,
              unfused_t.best * 1e3, fused_t.best * 1e3);
  std::printf("@ cairn/eager %.4f\n@ cairn/unfused %.4f\n@ cairn/fused %.4f\n@ cairn/memcpy %.4f\n", te * 1e3, tu * 1e3,
              tf * 1e3, tm * 1e3);
  std::printf("@ cairn/eager_best %.4f\n@ cairn/unfused_best %.4f\n@ cairn/fused_best %.4f\n", eager_t.best * 1e3,
              unfused_t.best * 1e3, fused_t.best * 1e3);
}

// ---- 3. Training step ----

constexpr int64_t kFeatures = 64, kClasses = 10, kBatch = 32;

void bench_training(Context& ctx) {
  Tensor xb = filled(ctx, Shape{kBatch, kFeatures}, 0.0f);
  Tensor yb = Tensor::allocate(ctx.cpu(), DType::Float32, Shape{kBatch, kClasses});
  for (int64_t i = 0; i < kBatch * kClasses; ++i)
    yb.mutable_data<float>()[i] = (i % kClasses) == ((i / kClasses) * 7) % kClasses ? 1.0f : 0.0f;

  struct Setup {
    Ref<nn::Sequential> model;
    Ref<optim::Optimizer> opt;
  };
  auto make_setup = [&] {
    Setup s;
    s.model = nn::Sequential::create(ctx, "mlp");
    s.model->add(nn::dense(ctx, {.units = 64, .activation = nn::Activation::Relu}));
    s.model->add(nn::dense(ctx, {.units = kClasses}));
    optim::OptimizerOptions oo;
    oo.kind = optim::Kind::Adam;
    oo.learning_rate = 0.005;
    s.opt = optim::Optimizer::create(ctx, oo);
    (*s.model)(xb);  // builds the weights
    return s;
  };
  auto step = [](Context& cx, Setup& s, const Tensor& x, const Tensor& y) {
    std::vector<Ref<Variable>> weights = s.model->trainable_weights();
    GradientTape tape(cx);
    // Softmax cross-entropy on one-hot labels (nn::sparse_categorical_crossentropy checks its
    // labels on the host, which a trace cannot do yet: see docs/graph.md).
    Tensor loss = op::neg(cx, op::all_mean(cx, op::sum(cx, op::mul(cx, y, op::log_softmax(cx, (*s.model)(x, true))), {1})));
    s.opt->apply_gradients(tape.gradient(loss, weights), weights);
    return loss;
  };
  Setup eager = make_setup(), captured = make_setup();
  auto fn = make_ref<graph::Function>(ctx, "train_step", [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{step(cx, captured, in[0], in[1])};
  });
  for (int i = 0; i < 5; ++i) {
    step(ctx, eager, xb, yb);
    fn->call({xb, yb});
  }
  const auto& concrete = *fn->concretes()[0];
  size_t ops = 0, fused_ops = 0;
  for (const graph::Node& n : concrete.graph().nodes) ops += n.kind == graph::NodeKind::Op;
  for (const graph::Node& n : concrete.fused_graph().nodes) fused_ops += n.kind == graph::NodeKind::Op;
  const int reps = 501;
  double te = median_seconds(reps, [&] { step(ctx, eager, xb, yb); });
  double tc = median_seconds(reps, [&] { fn->call({xb, yb}); });
  std::printf("3. digits MLP 64-64-10 training step (Adam, batch %lld), CPU:\n", static_cast<long long>(kBatch));
  std::printf("   eager %.1f us, captured %.1f us (%zu op nodes, %zu after fusion): captured is %.2fx faster\n",
              te * 1e6, tc * 1e6, ops, fused_ops, te / tc);
}

// ---- 4. A function call under a tape ----

// Sees every op and does nothing: with it installed a call replays node by node, each node through
// the eager dispatch, as before calls were one tape entry (runtime/graph/function_grad.h).
class WatchEveryOp final : public DispatchHook {};

void bench_call_under_tape(Context& ctx) {
  Tensor xb = filled(ctx, Shape{kBatch, kFeatures}, 0.0f);
  Tensor yb = Tensor::allocate(ctx.cpu(), DType::Float32, Shape{kBatch, kClasses});
  for (int64_t i = 0; i < kBatch * kClasses; ++i)
    yb.mutable_data<float>()[i] = (i % kClasses) == ((i / kClasses) * 7) % kClasses ? 1.0f : 0.0f;
  Ref<nn::Sequential> model = nn::Sequential::create(ctx, "mlp");
  model->add(nn::dense(ctx, {.units = 64, .activation = nn::Activation::Relu}));
  model->add(nn::dense(ctx, {.units = kClasses}));
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::Adam;
  oo.learning_rate = 0.005;
  Ref<optim::Optimizer> opt = optim::Optimizer::create(ctx, oo);
  (*model)(xb);
  std::vector<Ref<Variable>> weights = model->trainable_weights();

  auto forward = [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{
        op::neg(cx, op::all_mean(cx, op::sum(cx, op::mul(cx, in[1], op::log_softmax(cx, (*model)(in[0], true))), {1})))};
  };
  auto fn = make_ref<graph::Function>(ctx, "loss", forward);
  // A step: the loss under a tape (eagerly or through the function), its gradient, then Adam.
  bool apply = true;
  auto step = [&](bool call) {
    GradientTape tape(ctx);
    Tensor loss = call ? fn->call({xb, yb})[0] : forward(ctx, {xb, yb})[0];
    std::vector<Tensor> grads = tape.gradient(loss, weights);
    if (apply) opt->apply_gradients(grads, weights);
  };
  for (int i = 0; i < 5; ++i) {
    step(false);
    step(true);
  }
  size_t ops = 0;
  for (const graph::Node& n : fn->concretes()[0]->graph().nodes) ops += n.kind == graph::NodeKind::Op;
  std::printf("4. the MLP's forward pass and loss in a function (%zu op nodes), called under the tape:\n", ops);
  const int reps = 501;
  WatchEveryOp watcher;
  for (bool with_adam : {false, true}) {
    apply = with_adam;
    double te = median_seconds(reps, [&] { step(false); });
    double tc = median_seconds(reps, [&] { step(true); });
    ctx.add_hook(&watcher);
    double tn = median_seconds(reps, [&] { step(true); });
    ctx.remove_hook(&watcher);
    std::printf("   %s: eager %.1f us, call as one tape entry %.1f us (%.2fx), call node by node %.1f us (%.2fx)\n",
                with_adam ? "loss, gradient and Adam" : "loss and gradient     ", te * 1e6, tc * 1e6, tc / te, tn * 1e6,
                tn / te);
  }
}

// ---- 5. Fused elementwise chain on Vulkan ----

void bench_fusion_vulkan() {
  ContextOptions o;
  o.device = "vulkan";
  o.seed = 1;
  Ref<Context> vk;
  try {
    vk = make_ref<Context>(o);
  } catch (const Error& e) {
    std::printf("5. chain on Vulkan: skipped, no Vulkan device (%s)\n", e.what());
    return;
  }
  Context& ctx = *vk;
  Device& dev = ctx.default_device();
  // chain20's ops with its constants made eagerly on the device (a trace captures them there).
  auto body = [](Context& cx, const std::vector<Tensor>& in) {
    auto k = [&](double v) {
      EagerScope eager;
      return op::scalar(cx, cx.default_device(), DType::Float32, v);
    };
    Tensor x = in[0];
    for (int i = 0; i < 4; ++i) {
      x = op::mul(cx, x, k(0.99));
      x = op::add(cx, x, k(0.01));
      x = op::maximum(cx, x, k(-1));
      x = op::sub(cx, k(0.5), x);
      x = op::sigmoid(cx, x);
    }
    return std::vector<Tensor>{x};
  };
  Tensor x = tensor_on_device(filled(ctx, Shape{1 << 20}, 0.1f), dev);
  graph::FunctionOptions unfused_options;
  unfused_options.passes.fuse_elementwise = false;
  auto fused = make_ref<graph::Function>(ctx, "chain20_vk", body);
  auto unfused = make_ref<graph::Function>(ctx, "chain20_vk", body, unfused_options);
  // Results are read back (a device wait) so the timings cover the GPU work.
  auto run = [&](graph::Function& f) { f.call({x})[0].device()->synchronize(); };
  auto first = Clock::now();
  run(*fused);  // trace + shader compile + pipeline
  double compile = std::chrono::duration<double>(Clock::now() - first).count();
  run(*unfused);
  const int reps = 21;
  double tu = median_seconds(reps, [&] { run(*unfused); });
  double tf = median_seconds(reps, [&] { run(*fused); });
  std::printf("5. the chain of 2. on Vulkan (%s), 1M float32:\n", dev.name().c_str());
  std::printf("   replay unfused %.2f ms, replay fused %.2f ms: fused is %.1fx faster (first fused call, with the "
              "shader compile: %.1f ms)\n",
              tu * 1e3, tf * 1e3, tu / tf, compile * 1e3);
}

// ---- 6. An RNN over a data-dependent length ----

void bench_rnn(Context& ctx) {
  constexpr int64_t kSteps = 50, kBatch = 32, kFeatures = 16, kUnits = 64;
  Tensor x = filled(ctx, Shape{kSteps, kBatch, kFeatures}, -0.5f);
  Ref<Variable> w = Variable::create(ctx, op::mul(ctx, filled(ctx, Shape{kFeatures, kUnits}, -0.5f),
                                                  op::scalar(ctx, ctx.cpu(), DType::Float32, 0.1)),
                                     {.name = "w"});
  Ref<Variable> u = Variable::create(ctx, op::mul(ctx, filled(ctx, Shape{kUnits, kUnits}, -0.5f),
                                                  op::scalar(ctx, ctx.cpu(), DType::Float32, 0.05)),
                                     {.name = "u"});
  Tensor length = Tensor::allocate(ctx.cpu(), DType::Int32, Shape{});
  *length.mutable_data<int32_t>() = static_cast<int32_t>(kSteps);
  using Ts = std::vector<Tensor>;
  auto forward = [&](Context& c, const Tensor& xs, const Tensor& n) {
    Tensor one = op::scalar(c, c.cpu(), DType::Int32, 1);
    graph::WhileOptions options;
    options.max_iterations = kSteps;
    return graph::while_loop(
        c, [&](Context& y, const Ts& v) { return Ts{op::less(y, v[0], n)}; },
        [&](Context& y, const Ts& v) {
          Tensor xt = graph::tensor_array_read(y, xs, v[0]);
          Tensor h = op::tanh(y, op::add(y, op::matmul(y, xt, w->read()), op::matmul(y, v[1], u->read())));
          return Ts{op::add(y, v[0], one), h};
        },
        {op::scalar(c, c.cpu(), DType::Int32, 0), op::filled(c, c.cpu(), DType::Float32, Shape{kBatch, kUnits}, 0)},
        options)[1];
  };
  auto train = [&](Context& c, const Ts& in) {
    GradientTape tape(c);
    Tensor loss = op::all_mean(c, op::square(c, forward(c, in[0], in[1])));
    Ts g = tape.gradient(loss, std::vector<const Variable*>{w.get(), u.get()});
    return Ts{loss, g[0], g[1]};
  };
  auto fwd = make_ref<graph::Function>(ctx, "rnn", [&](Context& c, const Ts& in) { return Ts{forward(c, in[0], in[1])}; });
  auto step = make_ref<graph::Function>(ctx, "rnn_step", train);
  fwd->call({x, length});
  step->call({x, length});
  const double te = median_seconds(15, [&] { forward(ctx, x, length); });
  const double tc = median_seconds(15, [&] { fwd->call({x, length}); });
  const double se = median_seconds(9, [&] { train(ctx, {x, length}); });
  const double sc = median_seconds(9, [&] { step->call({x, length}); });
  std::printf("6. RNN, %lld steps of tanh(x W + h U), batch %lld, %lld units, as a while_loop:\n",
              static_cast<long long>(kSteps), static_cast<long long>(kBatch), static_cast<long long>(kUnits));
  std::printf("   forward: eager %.0f us, traced %.0f us (%.2fx); %.1f us per iteration traced\n", te * 1e6,
              tc * 1e6, te / tc, tc * 1e6 / kSteps);
  std::printf("   training step (loss and gradient): eager %.0f us, traced %.0f us (%.2fx)\n", se * 1e6, sc * 1e6,
              se / sc);
}

}  // namespace

// With arguments, runs only the sections named: `graph_bench 1 6`.
int main(int argc, char** argv) {
  ContextOptions o;
  o.seed = 1;
  Ref<Context> ctx = make_ref<Context>(o);
  auto wanted = [&](const char* section) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == section) return true;
    return false;
  };
  if (wanted("1")) bench_per_node(*ctx);
  if (wanted("2")) bench_fusion(*ctx);
  if (wanted("3")) bench_training(*ctx);
  if (wanted("4")) bench_call_under_tape(*ctx);
  if (wanted("5")) bench_fusion_vulkan();
  if (wanted("6")) bench_rnn(*ctx);
  return 0;
}
