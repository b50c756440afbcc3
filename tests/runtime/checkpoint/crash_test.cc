// Crash safety (CHECKPOINT.md, "Atomic"): a child process saves with the manager in a loop and is
// killed with SIGKILL at random moments. After every kill, the latest checkpoint and every listed
// one open, verify, and hold the values of one complete save. Bounded: 30 kills.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "runtime/checkpoint/checkpoint.h"
#include "tests/util/test_util.h"

namespace fs = std::filesystem;

namespace cairn::ckpt {
namespace {

bool intact(const std::string& path) {
  try {
    Reader::open(path);
    return true;
  } catch (...) {
    return false;
  }
}

// Two variables that every save sets to the same step number: a torn or mixed checkpoint would
// show two different values. The big one widens the window in which a kill lands mid-write.
[[noreturn]] void child_save_forever(const std::string& dir) {
  ContextOptions o;
  o.num_threads = 1;
  Ref<Context> ctx = make_ref<Context>(o);
  auto filled = [&](int64_t n, float v) {
    Tensor t = Tensor::allocate(ctx->cpu(), DType::Float32, Shape{n});
    std::fill(t.mutable_data<float>(), t.mutable_data<float>() + n, v);
    return t;
  };
  Ref<Variable> small = Variable::create(*ctx, filled(4, 0));
  Ref<Variable> big = Variable::create(*ctx, filled(1 << 18, 0));  // 1 MiB
  Checkpoint c(*ctx, {{"small", small}, {"big", big}});
  ManagerOptions mo;
  mo.max_to_keep = 3;
  CheckpointManager m(dir, mo, intact);
  if (m.latest()) c.restore(*m.latest());
  for (;;) {
    float step = static_cast<float>(c.save_counter_value() + 1);
    small->assign(filled(4, step));
    big->assign(filled(1 << 18, step));
    int64_t n = c.increment_save_counter("crash_test");
    m.save(n, [&](const std::string& p) { c.write_snapshot(c.snapshot(), p); });
  }
}

// Opens `path`, checks every payload and that both variables hold one save's step number.
void check_checkpoint(const std::string& path) {
  CAPTURE(path);
  Reader r = Reader::open(path);
  for (const TensorInfo& e : r.entries()) r.verify(e);
  Tensor small = r.load("small/.ATTRIBUTES/VARIABLE_VALUE", test::ctx().cpu());
  Tensor big = r.load("big/.ATTRIBUTES/VARIABLE_VALUE", test::ctx().cpu());
  float step = small.data<float>()[0];
  CHECK(step == static_cast<float>(r.metadata().save_counter));
  for (int64_t i = 0; i < big.num_elements(); i += 4099) REQUIRE(big.data<float>()[i] == step);
}

TEST_CASE("SIGKILL during saves never leaves a damaged latest or listed checkpoint") {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp ? tmp : "/tmp") / ("crash_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_us(2000, 60000);
  int64_t last_latest = 0;
  for (int kill_round = 0; kill_round < 30; ++kill_round) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) child_save_forever(dir.string());
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));

    // A restart cleans up temporaries and sees only intact checkpoints.
    ManagerOptions mo;
    mo.max_to_keep = 3;
    CheckpointManager m(dir.string(), mo, intact);
    for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().string().find(".tmp-") == std::string::npos);
    for (const std::string& p : m.checkpoints()) check_checkpoint(p);
    if (m.latest()) {
      int64_t latest = Reader::open(*m.latest()).metadata().save_counter;
      CHECK(latest >= last_latest);  // progress is never lost
      last_latest = latest;
    }
  }
  CHECK(last_latest > 0);
  MESSAGE("saves completed across 30 kills: " << last_latest);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cairn::ckpt
