// Training step time over MPI (issue 17's benchmark): keras train_on_batch with a multi-worker
// strategy (MirroredStrategy::multi_worker over an MpiCollective, one replica per process), the
// same global batch on every rank count, and the share of each step spent inside the collectives
// (MpiStats::seconds: wall time in the calls, waiting for the other ranks included) and blocked on
// them (MpiStats::blocked_seconds: what is left once the reductions overlap the backward pass).
// Each model runs with all gradients in one bucket (bucket_bytes 0) and in small buckets
// (MirroredOptions::bucket_bytes, reduced while the compiled step's backward pass goes on). Two models:
//  - digits: the digits MLP's shapes (64 -> 64 relu -> 10, Adam, global batch 32), synthetic data;
//  - mlp: a larger synthetic MLP (256 -> 1024 relu -> 1024 relu -> 10, Adam, global batch 512).
// Run under mpirun by bench/mpi_step_bench.sh with 1, 2 and 4 ranks; rank 0 prints one line per
// model. With 1 rank the strategy still runs its collectives (on a world of one), so the line
// also shows what the strategy itself costs against no strategy ("plain").
//
//   mpirun -np N mpi_step_bench [steps]     (200 by default)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/distribute/mpi_collective.h"
#include "runtime/distribute/strategy.h"
#include "runtime/eager/ops.h"
#include "runtime/keras/model.h"

using namespace cairn;
using distribute::MirroredStrategy;
using distribute::MpiCollective;
using Clock = std::chrono::steady_clock;

namespace {

struct ModelShape {
  const char* name;
  int64_t batch, in;
  std::vector<int64_t> hidden;
  int64_t classes;
  size_t bucket_bytes;  // the small buckets: about a fifth of the model's gradients
};

// Inputs in [-1, 1) and labels, the same on every rank (a fixed LCG).
std::pair<Tensor, Tensor> synthetic_batch(Context& ctx, const ModelShape& m) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  Tensor x = Tensor::allocate(ctx.cpu(), DType::Float32, Shape{m.batch, m.in});
  Tensor y = Tensor::allocate(ctx.cpu(), DType::Int32, Shape{m.batch});
  float* xv = x.mutable_data<float>();
  for (int64_t i = 0; i < m.batch * m.in; ++i) xv[i] = static_cast<float>(next() % 2000) / 1000.0f - 1.0f;
  int32_t* yv = y.mutable_data<int32_t>();
  for (int64_t i = 0; i < m.batch; ++i) yv[i] = static_cast<int32_t>(next() % static_cast<uint32_t>(m.classes));
  return {x, y};
}

// The MLP of `m`, compiled with Adam and sparse categorical cross-entropy, inside `s`'s scope when
// there is one.
Ref<keras::Model> make_model(Context& ctx, const ModelShape& m, MirroredStrategy* s) {
  std::optional<MirroredStrategy::Scope> scope;
  if (s) scope.emplace(*s);
  Ref<keras::Model> model = keras::Model::create(ctx, m.name);
  nn::DenseOptions d;
  d.activation = nn::Activation::Relu;
  for (int64_t units : m.hidden) {
    d.units = units;
    model->add(nn::dense(ctx, d));
  }
  d.units = m.classes;
  d.activation = nn::Activation::Linear;
  model->add(nn::dense(ctx, d));
  optim::OptimizerOptions o;
  o.kind = optim::Kind::Adam;
  o.learning_rate = 0.001;
  keras::CompileOptions c;
  c.optimizer = optim::Optimizer::create(ctx, o);
  c.loss = "sparse_categorical_crossentropy";
  c.strategy = s ? Ref<MirroredStrategy>::share(s) : Ref<MirroredStrategy>();
  model->compile(c);
  return model;
}

struct StepFigures {
  double seconds;        // per step, the slowest rank's
  double comm_share;     // of the step, inside collectives (rank 0's)
  double blocked_share;  // of the step, waiting for collectives (rank 0's)
  double calls;          // collective calls per step
};

// Seconds per train_on_batch over `steps` steps after a warm-up (the trace and the first replays).
StepFigures time_steps(Context& ctx, const ModelShape& m, MirroredStrategy* s, MpiCollective* world, int steps) {
  Ref<keras::Model> model = make_model(ctx, m, s);
  auto [x, y] = synthetic_batch(ctx, m);
  for (int i = 0; i < 5; ++i) model->train_on_batch(x, y);
  if (world) world->barrier(world->rank());
  const distribute::MpiStats before = world ? world->stats() : distribute::MpiStats{};
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < steps; ++i) model->train_on_batch(x, y);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const distribute::MpiStats after = world ? world->stats() : distribute::MpiStats{};
  if (world) {  // the slowest rank's time
    Tensor mine = op::filled(ctx, ctx.cpu(), DType::Float64, Shape{1}, seconds);
    Tensor all = Tensor::allocate(ctx.cpu(), DType::Float64, Shape{1});
    world->all_reduce(world->rank(), DType::Float64, 1, mine.raw_data(), all.raw_mutable_data(),
                      distribute::Reduction::Max);
    seconds = all.data<double>()[0];
  }
  if (seconds <= 0) return {0, 0, 0, 0};
  return {seconds / steps, (after.seconds - before.seconds) / seconds,
          (after.blocked_seconds - before.blocked_seconds) / seconds,
          static_cast<double>(after.calls - before.calls) / steps};
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  ContextOptions co;
  co.num_threads = 1;  // one thread per rank: the ranks are the parallelism on this 2-core machine
  Ref<Context> ctx = make_ref<Context>(co);
  distribute::MpiOptions mo;
  mo.timeout = std::chrono::milliseconds(120000);
  Ref<MpiCollective> world = MpiCollective::init_world({&ctx->cpu()}, mo);
  const int rank = world->rank(), size = world->size();
  const std::vector<ModelShape> shapes = {{"digits", 32, 64, {64}, 10, 4 << 10},
                                             {"mlp", 512, 256, {1024, 1024}, 10, 1 << 20}};
  if (rank == 0)
    std::printf("# train_on_batch, multi-worker strategy, %d rank(s), 1 thread each, %d steps, same global batch\n",
                size, steps);
  for (const ModelShape& m : shapes) {
    const int n = m.batch >= 512 ? steps / 10 : steps;
    for (size_t bucket_bytes : {size_t{0}, m.bucket_bytes}) {
      distribute::MirroredOptions so;
      so.bucket_bytes = bucket_bytes;
      Ref<MirroredStrategy> s = MirroredStrategy::multi_worker(*ctx, world, "", so);
      const StepFigures f = time_steps(*ctx, m, s.get(), world.get(), n);
      if (rank != 0) continue;
      const std::string key = fmt::format("{}/ranks{}{}", m.name, size, bucket_bytes ? "/buckets" : "");
      std::printf("%-7s ranks %d  global batch %4lld  buckets %-8s %8.3f ms/step  in collectives %4.1f%%  blocked "
                  "%4.1f%%  (%.0f calls/step)\n",
                  m.name, size, static_cast<long long>(m.batch),
                  bucket_bytes ? fmt::format("{}K", bucket_bytes >> 10).c_str() : "one", f.seconds * 1e3,
                  100 * f.comm_share, 100 * f.blocked_share, f.calls);
      std::printf("@ %s/step_ms %.4f\n@ %s/comm_share %.4f\n@ %s/blocked_share %.4f\n", key.c_str(), f.seconds * 1e3,
                  key.c_str(), f.comm_share, key.c_str(), f.blocked_share);
    }
    if (size == 1) {
      const double plain = time_steps(*ctx, m, nullptr, nullptr, n).seconds;
      if (rank == 0) std::printf("%-7s no strategy %8.3f ms/step\n@ %s/plain/step_ms %.4f\n", m.name, plain * 1e3, m.name,
                                 plain * 1e3);
    }
    std::fflush(stdout);
  }
  return 0;
}
