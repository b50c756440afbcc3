#include "runtime/core/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__linux__)
#include <sched.h>
#endif

namespace cairn {

namespace {
// How long a worker polls for the next loop, and the caller for the workers to finish, before
// sleeping on a condition variable. Waking a sleeping thread goes through the kernel (and, in a
// VM, an interrupt to an idle virtual CPU): tens of microseconds per loop, so in a chain of
// 1M-element ops (about 100 us each) the caller often ran most chunks alone. Polling briefly keeps
// back-to-back loops on every thread, as Eigen's and OpenMP's pools do (OpenMP's default wait is
// far longer); an idle pool sleeps after this long.
constexpr auto kPoll = std::chrono::microseconds(50);

// Polls `ready` for at most kPoll, yielding the CPU between looks (on a busy machine the other
// runnable threads go first; on an idle one the yield returns at once); whether it held. The
// caller still waits under the lock after: polling only saves the sleep when the answer comes soon.
template <class Ready>
bool poll_for(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kPoll;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    std::this_thread::yield();
    if (i % 8 == 0 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

// At most one move per worker per this long: where another program keeps the other CPUs busy, the
// scheduler may rightly put the worker back, and it must not bounce between CPUs on every loop.
constexpr auto kMinMoveInterval = std::chrono::milliseconds(10);
}  // namespace

int this_thread_cpu() {
#if defined(__linux__)
  return sched_getcpu();  // glibc reads it from rseq or the vDSO: a few nanoseconds
#else
  return -1;
#endif
}

bool move_this_thread_off(int cpu) {
#if defined(__linux__)
  cpu_set_t mask;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
  cpu_set_t others = mask;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0 || sched_setaffinity(0, sizeof others, &others) != 0) return false;
  // Setting a mask without the current CPU migrates the thread before the call returns; the old
  // mask back does not move it again.
  sched_setaffinity(0, sizeof mask, &mask);
  return true;
#else
  (void)cpu;
  return false;
#endif
}

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t begin = next_.fetch_add(chunk_, std::memory_order_acq_rel);
    if (begin >= n_) return;
    (*fn_)(begin, std::min(n_, begin + chunk_));
  }
}

// A worker on the caller's CPU gets that CPU only when the caller yields, so it takes no chunk and
// a loop runs at one thread's speed. The scheduler may leave the two paired for a long while: on
// these VMs a chain of 1M-element ops ran so for hundreds of loops, in about half the runs: the
// balancer does not move threads that are busy and cache-hot, and letting the worker sleep did not
// help either (each wakeup put it back on the caller's CPU). So the worker moves itself off.
void ThreadPool::leave_callers_cpu(std::chrono::steady_clock::time_point& last_move) {
  const int cpu = this_thread_cpu();
  if (cpu < 0 || cpu != caller_cpu_.load(std::memory_order_relaxed)) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_move < kMinMoveInterval) return;
  last_move = now;
  move_this_thread_off(cpu);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::chrono::steady_clock::time_point last_move{};
  for (;;) {
    poll_for([&] {
      return stop_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_relaxed) != seen;
    });
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    leave_callers_cpu(last_move);
    run_chunks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (++finished_workers_ == static_cast<int>(workers_.size())) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (workers_.empty() || n <= grain) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (!busy.owns_lock()) {  // nested or concurrent use: stay on this thread
    fn(0, n);
    return;
  }
  int64_t max_chunks = static_cast<int64_t>(num_threads()) * 4;
  int64_t chunk = std::max(grain, (n + max_chunks - 1) / max_chunks);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_release);
    finished_workers_ = 0;
    caller_cpu_.store(this_thread_cpu(), std::memory_order_relaxed);
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  const int workers = static_cast<int>(workers_.size());
  poll_for([&] { return finished_workers_.load(std::memory_order_relaxed) == workers; });
  std::unique_lock<std::mutex> lock(mu_);
  // Every worker takes part in every generation, so no worker can still be reading this job's
  // fields when the next one is set up.
  done_.wait(lock, [&] { return finished_workers_ == static_cast<int>(workers_.size()); });
  fn_ = nullptr;
}

}  // namespace cairn
