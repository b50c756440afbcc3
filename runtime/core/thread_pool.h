// A small fork-join pool over std::thread for intra-op parallel loops.
// Kernels must split work so results do not depend on the thread count: parallel_for hands out
// disjoint [begin, end) ranges, and reductions combine fixed-size blocks in a fixed order.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cairn {

// The CPU the calling thread runs on, or -1 where the system does not say.
int this_thread_cpu();

// Moves the calling thread to another CPU its affinity mask allows, then restores the mask (so the
// scheduler may move it anywhere it could before); whether it moved. Nothing happens when the mask
// allows no other CPU or the system cannot say (outside Linux).
bool move_this_thread_off(int cpu);

class ThreadPool {
 public:
  // `num_threads` counts the calling thread; 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over [0, n) in chunks of at least `grain` items. Runs inline when the
  // work is small, the pool has one thread, or another parallel_for is using the pool.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Like parallel_for, but work of at most one grain runs inline without building a
  // std::function: small eager ops pay nothing for the pool.
  template <class F>
  void run(int64_t n, int64_t grain, F&& fn) {
    if (n <= 0) return;
    if (n <= grain || workers_.empty()) {
      fn(int64_t{0}, n);
      return;
    }
    parallel_for(n, grain, std::function<void(int64_t, int64_t)>(std::forward<F>(fn)));
  }

 private:
  void worker_loop();
  void leave_callers_cpu(std::chrono::steady_clock::time_point& last_move);
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the caller of the running parallel_for

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // Written under mu_; atomic so that a waiting thread can poll them before it sleeps.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> finished_workers_{0};
  // The CPU the running job's caller started it on (-1: the system does not say).
  std::atomic<int> caller_cpu_{-1};

  // The running job (valid while busy_ is held).
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  std::atomic<int64_t> next_{0};
};

}  // namespace cairn
