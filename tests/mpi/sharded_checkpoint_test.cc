// Sharded checkpoints under mpirun (tests/mpi/run.sh): every rank a process over MpiCollective.
//   save DIR       saves checkpoints 1 and 2 (step 1 and 2 values) and checks every rank's list
//   crash DIR      starts checkpoint 3; rank 1 kills itself (SIGKILL) once its shard is written
//   resume DIR     restores the latest (must be checkpoint 2, whatever the number of ranks), checks
//                  the values, saves checkpoint 3 and checks that the crashed save left nothing
// Prints "ok" on rank 0 and exits 0 when every check passed; exits 1 naming the failed check.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/collective_group.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/checkpoint/sharded_save.h"
#include "runtime/distribute/mpi_collective.h"

namespace fs = std::filesystem;
using namespace cairn;

namespace {

int g_rank = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", g_rank, what.c_str());
  std::exit(1);
}

constexpr int kVariables = 5;

// Variable i's value at `step`: the same on every rank.
Tensor value(Context& ctx, int i, int step) {
  const int64_t n = int64_t{1} << (4 + 2 * i);  // 16 .. 4096 floats: shards of unequal sizes
  Tensor t = Tensor::allocate(ctx.cpu(), DType::Float32, Shape{n});
  for (int64_t k = 0; k < n; ++k) t.mutable_data<float>()[k] = static_cast<float>(step * 1000 + i * 10 + k % 7);
  return t;
}

bool holds_step(Context& ctx, Variable& v, int i, int step) {
  Tensor want = value(ctx, i, step), got = v.read();
  return got.num_elements() == want.num_elements() &&
         std::equal(want.data<float>(), want.data<float>() + want.num_elements(), got.data<float>());
}

std::vector<std::string> listed(const ckpt::CheckpointManager& m) {
  std::vector<std::string> out;
  for (const auto& p : m.checkpoints()) out.push_back(fs::path(p).filename().string());
  return out;
}

size_t shard_files(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += ckpt::is_shard_file_name(e.path().filename().string(), "ckpt");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  check(argc == 3, "usage: sharded_checkpoint_test save|crash|resume DIR");
  const std::string mode = argv[1], dir = argv[2];
  ContextOptions co;
  co.num_threads = 1;
  Ref<Context> ctx = make_ref<Context>(co);
  distribute::MpiOptions mo;
  mo.timeout = std::chrono::milliseconds(30000);
  Ref<distribute::MpiCollective> world = distribute::MpiCollective::init_world({&ctx->cpu()}, mo);
  g_rank = world->rank();
  const int ranks = world->size();
  try {
    std::vector<Ref<Variable>> vars;
    std::vector<std::pair<std::string, Ref<Object>>> children;
    for (int i = 0; i < kVariables; ++i) {
      vars.push_back(Variable::create(*ctx, value(*ctx, i, 0)));
      children.emplace_back("v" + std::to_string(i), vars.back());
    }
    ckpt::Checkpoint c(*ctx, children);
    ckpt::ManagerOptions options;
    options.max_to_keep = 2;
    ckpt::CheckpointManager manager(dir, options, ckpt::is_intact_checkpoint);
    ckpt::CollectiveShardGroup group(world, g_rank);
    auto set_step = [&](int step) {
      for (int i = 0; i < kVariables; ++i) vars[i]->assign(value(*ctx, i, step));
    };

    if (mode == "save") {
      for (int step : {1, 2}) {
        set_step(step);
        ckpt::save_sharded(c, manager, group, step);
      }
      check(listed(manager) == std::vector<std::string>{"ckpt-1", "ckpt-2"}, "the list after two saves");
      check(ckpt::read_shard_index(*manager.latest()).shards.size() == static_cast<size_t>(ranks), "one shard a rank");
    } else if (mode == "crash") {
      set_step(3);
      c.increment_save_counter("crash");
      const auto shard = ckpt::shard_snapshot(c.snapshot(), g_rank, ranks);
      manager.save_sharded(3, group, [&](const std::string& path) {
        c.write_snapshot(shard, path);
        if (g_rank == 1) ::raise(SIGKILL);  // durable shard, no index: the save must not count
      });
      check(false, "the save with a killed rank returned");
    } else if (mode == "resume") {
      check(listed(manager) == std::vector<std::string>{"ckpt-1", "ckpt-2"}, "the list after the crash");
      c.restore(*manager.latest())->assert_consumed();
      for (int i = 0; i < kVariables; ++i) check(holds_step(*ctx, *vars[i], i, 2), "variable " + std::to_string(i));
      check(c.save_counter_value() == 2, "the save counter");
      set_step(3);
      ckpt::save_sharded(c, manager, group, 3);
      check(listed(manager) == std::vector<std::string>{"ckpt-2", "ckpt-3"}, "the list after resuming");
      // Checkpoint 2's shards (written by the earlier job) and checkpoint 3's; the crash's are gone.
      const size_t want = ckpt::read_shard_index(dir + "/ckpt-2").shards.size() + static_cast<size_t>(ranks);
      check(shard_files(dir) == want, "stray shards were swept");
    } else {
      check(false, "unknown mode " + mode);
    }
    world->barrier(g_rank);
  } catch (const std::exception& e) {
    check(false, e.what());
  }
  if (g_rank == 0) std::printf("%s on %d ranks: ok\n", mode.c_str(), ranks);
  world = nullptr;  // MPI_Finalize
  return 0;
}
