#include "runtime/core/convert.h"
#include "runtime/core/shape.h"
#include "runtime/core/thread_pool.h"
#include "tests/util/test_util.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif
#include <limits>

namespace cairn {

TEST_CASE("dtype sizes and names follow TensorFlow's DataType values") {
  CHECK(static_cast<int>(DType::Float32) == 1);
  CHECK(static_cast<int>(DType::BFloat16) == 14);
  CHECK(static_cast<int>(DType::Float16) == 19);
  CHECK(dtype_size(DType::Float64) == 8);
  CHECK(dtype_size(DType::Bool) == 1);
  CHECK(dtype_size(DType::Complex64) == 8);
  CHECK(dtype_size(DType::String) == 0);
  CHECK(std::string(dtype_name(DType::Int16)) == "int16");
  CHECK(dtype_from_name("bfloat16") == DType::BFloat16);
  CHECK(dtype_from_name("nope") == DType::Invalid);
  CHECK_FALSE(dtype_is_valid(static_cast<DType>(11)));
}

TEST_CASE("float16 and bfloat16 round to nearest even") {
  CHECK(float(float16(1.0f)) == 1.0f);
  CHECK(float16(1.0f).bits == 0x3c00);
  CHECK(float16(65504.0f).bits == 0x7bff);
  CHECK(float16(65520.0f).bits == 0x7c00);  // overflow rounds to inf
  CHECK(float16(-2.0f).bits == 0xc000);
  CHECK(float(float16(5.9604645e-08f)) == 5.9604645e-08f);  // smallest subnormal
  CHECK(float16(1.0f + 1.0f / 2048).bits == 0x3c00);         // tie goes to even
  CHECK(float16(1.0f + 3.0f / 2048).bits == 0x3c02);
  CHECK(std::isnan(float(float16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(bfloat16(1.0f).bits == 0x3f80);
  CHECK(float(bfloat16(3.140625f)) == 3.140625f);
  CHECK(bfloat16(1.0f + 1.0f / 256).bits == 0x3f80);  // tie to even
}

TEST_CASE("convert saturates float to int and maps NaN to zero") {
  CHECK(convert<int8_t>(300.0f) == 127);
  CHECK(convert<int8_t>(-300.0) == -128);
  CHECK(convert<int32_t>(std::nan("")) == 0);
  CHECK(convert<int32_t>(-2.7) == -2);
  CHECK(convert<bool>(0.5f) == true);
  CHECK(convert<float>(complex64(2.0f, 3.0f)) == 2.0f);
  CHECK(convert<complex64>(int64_t(5)) == complex64(5.0f, 0.0f));
  CHECK(float(convert<float16>(int32_t(3))) == 3.0f);
}

TEST_CASE("shapes validate rank, negative dims and overflow") {
  int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_THROWS_CODE(Shape::from(dims, 9, "t"), Code::InvalidArgument, "rank 9 exceeds the maximum of 8");
  int64_t neg[2] = {2, -1};
  CHECK_THROWS_CODE(Shape::from(neg, 2, "t"), Code::InvalidArgument, "dimension 1 is negative");
  int64_t big[2] = {INT64_MAX / 2, 4};
  CHECK_THROWS_CODE(Shape::from(big, 2, "t"), Code::InvalidArgument, "overflows");
  Shape s = Shape::from(dims, 8, "t");
  CHECK(s.rank() == 8);
  CHECK(Shape{2, 3}.str() == "[2,3]");
  CHECK(Shape{}.str() == "[]");
  CHECK(Shape{}.num_elements() == 1);
  CHECK(Shape{0, 3}.num_elements() == 0);
  CHECK(normalize_axis(-1, 3, "t") == 2);
  CHECK_THROWS_CODE(normalize_axis(3, 3, "Sum"), Code::InvalidArgument, "Sum: axis 3 is out of range for rank 3");
}

TEST_CASE("thread pool covers every index exactly once") {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(100000);
  for (int round = 0; round < 20; ++round) {
    pool.parallel_for(100000, 1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
  }
  for (auto& h : hits) CHECK(h.load() == 20);
  // Nested use runs inline instead of deadlocking.
  int64_t total = 0;
  std::mutex mu;
  pool.parallel_for(4, 1, [&](int64_t b, int64_t e) {
    pool.parallel_for(10, 1, [&](int64_t b2, int64_t e2) {
      std::lock_guard<std::mutex> l(mu);
      total += (e - b) * (e2 - b2);
    });
  });
  CHECK(total == 40);
}


#if defined(__linux__)
namespace {
// The CPUs the calling thread may run on.
std::vector<int> allowed_cpus() {
  cpu_set_t mask;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  return cpus;
}

// Pins the calling thread to `cpus` while it lives, then gives it back its mask.
struct Pinned {
  cpu_set_t before;
  explicit Pinned(const std::vector<int>& cpus) {
    sched_getaffinity(0, sizeof before, &before);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (int c : cpus) CPU_SET(c, &mask);
    REQUIRE(sched_setaffinity(0, sizeof mask, &mask) == 0);
  }
  ~Pinned() { sched_setaffinity(0, sizeof before, &before); }
};
}  // namespace

TEST_CASE("a thread moved off its CPU runs elsewhere and keeps its affinity") {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) return;  // nowhere to move to: move_this_thread_off says so below
  const int here = this_thread_cpu();
  REQUIRE(here >= 0);
  CHECK(move_this_thread_off(here));
  CHECK(this_thread_cpu() != here);
  CHECK(allowed_cpus() == cpus);
  {
    Pinned one({cpus[0]});
    CHECK_FALSE(move_this_thread_off(cpus[0]));  // its mask allows no other CPU
    CHECK(this_thread_cpu() == cpus[0]);
  }
  CHECK(allowed_cpus() == cpus);
}

// The threads of this process.
std::set<long> process_threads() {
  std::set<long> tids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) tids.insert(std::stol(e.path().filename()));
  return tids;
}

// A worker on the caller's CPU would get it only when the caller yields: it must move away and take
// part. The pool is made while the caller is pinned to one CPU, so its worker starts there; the
// worker is then allowed a second CPU, which leaves it where it is, beside the caller.
TEST_CASE("a pool worker on its caller's CPU moves off it and takes chunks") {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) return;
  Pinned pinned({cpus[0]});
  const std::set<long> before = process_threads();
  ThreadPool pool(2);
  std::vector<long> started;
  for (long tid : process_threads())
    if (!before.count(tid)) started.push_back(tid);
  REQUIRE(started.size() == 1);
  cpu_set_t two;
  CPU_ZERO(&two);
  CPU_SET(cpus[0], &two);
  CPU_SET(cpus[1], &two);
  REQUIRE(sched_setaffinity(static_cast<pid_t>(started[0]), sizeof two, &two) == 0);

  std::mutex mu;
  std::vector<int> worker_cpus;
  const std::thread::id caller = std::this_thread::get_id();
  for (int job = 0; job < 200 && worker_cpus.size() < 20; ++job) {
    pool.parallel_for(8, 1, [&](int64_t, int64_t) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
      if (std::this_thread::get_id() == caller) return;
      std::lock_guard<std::mutex> lock(mu);
      worker_cpus.push_back(this_thread_cpu());
    });
  }
  // Under load the scheduler may bring it back for a while; it must have run beside the caller.
  CHECK(std::count(worker_cpus.begin(), worker_cpus.end(), cpus[1]) > 0);
}
#endif

}  // namespace cairn
