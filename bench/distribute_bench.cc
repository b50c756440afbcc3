// Mirrored replicas on logical CPU devices (runtime/distribute):
//  1. All-reduce cost per MB across 2 and 4 logical CPU devices (the CollectiveAllReduce op inside
//     MirroredStrategy::run, sum of float32), against a plain memcpy of the same bytes on one thread.
//  2. A compiled mirrored training step (Dense 256 -> 512 relu -> 512 relu -> 10, SGD, global batch
//     512) on 2 replicas against 1 replica of the same global batch: the scaling on this machine.
//
//   bazel run -c opt //bench:distribute_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "runtime/autodiff/tape.h"
#include "runtime/distribute/strategy.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"

using namespace cairn;
using namespace cairn::distribute;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Ref<Context> split_cpu(int n) {
  ContextOptions o;
  o.num_threads = 1;  // one intra-op thread per replica: the replicas are the parallelism
  Ref<Context> c = make_ref<Context>(o);
  c->set_logical_devices("cpu:0", std::vector<LogicalDeviceConfig>(static_cast<size_t>(n)));
  return c;
}

std::vector<std::string> cpu_names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("cpu:" + std::to_string(i));
  return out;
}

// Seconds per memcpy of `bytes`, the best of several rounds.
double memcpy_seconds(size_t bytes, int reps) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    Clock::time_point t = Clock::now();
    for (int i = 0; i < reps; ++i) {
      std::memcpy(b.data(), a.data(), bytes);
      a[static_cast<size_t>(i) % bytes] = b[0];  // keep the copies from being merged
    }
    best = std::min(best, seconds_since(t) / reps);
  }
  return best;
}

// Seconds per all-reduce of `bytes` of float32 across `n` replicas, the best of several rounds.
double all_reduce_seconds(int n, size_t bytes, int reps) {
  Ref<Context> c = split_cpu(n);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, cpu_names(n));
  const int64_t elements = static_cast<int64_t>(bytes / sizeof(float));
  std::vector<Tensor> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(op::filled(*c, *s->devices()[static_cast<size_t>(r)], DType::Float32,
                                                          Shape{elements}, r + 1));
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    Clock::time_point t = Clock::now();
    s->run([&](ReplicaContext& rc) {
      Tensor y;
      for (int i = 0; i < reps; ++i) y = rc.all_reduce(Reduction::Sum, inputs[static_cast<size_t>(rc.replica_id())]);
      return y;
    });
    best = std::min(best, seconds_since(t) / reps);
  }
  return best;
}

// Seconds per compiled training step on `n` replicas sharing a global batch.
double train_step_seconds(int n, int steps) {
  constexpr int64_t kBatch = 512, kIn = 256, kHidden = 512, kOut = 10;
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, cpu_names(n));
  Ref<nn::Sequential> model;
  Ref<optim::Optimizer> opt;
  {
    auto scope = s->scope();
    model = nn::Sequential::create(*c, "mlp");
    nn::DenseOptions d;
    d.units = kHidden;
    d.activation = nn::Activation::Relu;
    model->add(nn::dense(*c, d));
    model->add(nn::dense(*c, d));
    d.units = kOut;
    d.activation = nn::Activation::Linear;
    model->add(nn::dense(*c, d));
    (*model)(op::filled(*c, c->cpu(), DType::Float32, Shape{1, kIn}, 0));
    optim::OptimizerOptions o;
    o.learning_rate = 0.01;
    opt = optim::Optimizer::create(*c, o);
  }
  std::vector<Ref<Variable>> vars = model->trainable_weights();
  Tensor x = op::filled(*c, c->cpu(), DType::Float32, Shape{kBatch, kIn}, 0.5);
  Tensor y = op::filled(*c, c->cpu(), DType::Float32, Shape{kBatch, kOut}, 0.25);
  std::vector<Tensor> xs = s->split_batch(x), ys = s->split_batch(y);
  Ref<graph::Function> step = make_ref<graph::Function>(*c, "step", [&](Context& ctx, const std::vector<Tensor>& in) {
    GradientTape tape(ctx);
    Tensor per_example = op::mean(ctx, op::square(ctx, op::sub(ctx, (*model)(in[0], true), in[1])), {-1});
    Tensor loss = MirroredStrategy::compute_average_loss(ctx, per_example, kBatch);
    opt->apply_gradients(s->all_reduce_gradients(tape.gradient(loss, vars)), vars);
    return std::vector<Tensor>{loss};
  });
  auto run = [&] {
    s->run([&](ReplicaContext& rc) {
      const size_t r = static_cast<size_t>(rc.replica_id());
      return step->call({xs[r], ys[r]})[0];
    });
  };
  run();  // traces
  run();
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    Clock::time_point t = Clock::now();
    for (int i = 0; i < steps; ++i) run();
    best = std::min(best, seconds_since(t) / steps);
  }
  return best;
}

}  // namespace

int main() {
  std::printf("all-reduce (sum, float32) across logical CPU devices vs memcpy of the same bytes, one thread\n");
  std::printf("%-8s %-9s %14s %14s %12s %8s\n", "replicas", "size", "all-reduce", "memcpy", "ms per MB", "ratio");
  for (int n : {2, 4}) {
    for (size_t mb : {1, 16}) {
      const size_t bytes = mb << 20;
      const int reps = mb == 1 ? 50 : 5;
      const double ar = all_reduce_seconds(n, bytes, reps);
      const double mc = memcpy_seconds(bytes, reps);
      std::printf("%-8d %6zu MB %11.3f ms %11.3f ms %12.3f %7.1fx\n", n, mb, ar * 1e3, mc * 1e3, ar * 1e3 / mb,
                  ar / mc);
    }
  }
  std::printf("\ncompiled mirrored training step, Dense 256-512-512-10, SGD, global batch 512\n");
  const double one = train_step_seconds(1, 10);
  const double two = train_step_seconds(2, 10);
  std::printf("1 replica:  %8.2f ms per step\n", one * 1e3);
  std::printf("2 replicas: %8.2f ms per step (speedup %.2fx, efficiency %.0f%%)\n", two * 1e3, one / two,
              100.0 * one / two / 2);
  return 0;
}
