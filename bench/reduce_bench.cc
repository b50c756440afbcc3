// CPU reduction timings: Sum of float32 over 1M and 16M elements, and over a [4096, 4096] matrix
// (everything, axis 0, axis 1), through the eager dispatch on all cores; and, for the same bytes,
// a memcpy and a plain read on as many threads, the memory system's bounds. Figures only, never a
// test; bench/reduce_bench.sh runs it with -c opt and PyTorch's torch.sum in the same run.
//
//   reduce_bench [repetitions]   (20 by default)
//
// Prints "@ <impl>/<case> <seconds> <bytes>" lines (the median of the repetitions) that
// reduce_bench.sh collates.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/eager/dispatch.h"

namespace {

struct Case {
  const char* name;
  std::vector<int64_t> dims;
  std::vector<int64_t> axis;  // empty: everything
};

template <class F>
double median_seconds(int reps, F&& fn) {
  fn();  // warm: page faults, the pool's threads
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double time_cairn(cairn::Context& ctx, const Case& c, int reps) {
  cairn::Tensor x = cairn::Tensor::allocate(ctx.cpu(), cairn::DType::Float32, cairn::Shape::from(c.dims.data(), c.dims.size(), "bench"));
  float* p = x.mutable_data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i) p[i] = static_cast<float>(i % 1000) * 0.001f;
  return median_seconds(reps, [&] { cairn::run_op(ctx, "Sum", {x}, {cairn::attr_ints("axis", c.axis)}); });
}

// fn(begin, end) over [0, n) in `threads` equal parts, each on a thread started for the call.
template <class F>
void on_threads(size_t n, int threads, F&& fn) {
  std::vector<std::thread> pool;
  const size_t share = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const size_t b = std::min(n, t * share), e = std::min(n, b + share);
    pool.emplace_back([&fn, b, e] { fn(b, e); });
  }
  for (std::thread& th : pool) th.join();
}

// Every thread sums its share of the words: a read of every byte at the memory's speed.
double time_read(const std::vector<uint64_t>& words, int threads, int reps) {
  std::atomic<uint64_t> sink{0};  // keeps the sums alive
  return median_seconds(reps, [&] {
    on_threads(words.size(), threads, [&](size_t b, size_t e) {
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      size_t i = b;
      for (; i + 4 <= e; i += 4) {
        s0 += words[i];
        s1 += words[i + 1];
        s2 += words[i + 2];
        s3 += words[i + 3];
      }
      for (; i < e; ++i) s0 += words[i];
      sink.fetch_add(s0 + s1 + s2 + s3, std::memory_order_relaxed);
    });
  });
}

// memcpy of the bytes in `threads` parallel parts (reads them and writes as many).
double time_memcpy(const std::vector<uint64_t>& src, std::vector<uint64_t>& dst, int threads, int reps) {
  return median_seconds(reps, [&] {
    on_threads(src.size(), threads,
               [&](size_t b, size_t e) { std::memcpy(dst.data() + b, src.data() + b, (e - b) * sizeof(uint64_t)); });
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  cairn::Context ctx(cairn::ContextOptions{});  // all cores
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("# threads %d\n", threads);
  const std::vector<Case> cases = {
      {"sum_1M", {1 << 20}, {}},
      {"sum_16M", {1 << 24}, {}},
      {"4096x4096_all", {4096, 4096}, {}},
      {"4096x4096_axis0", {4096, 4096}, {0}},
      {"4096x4096_axis1", {4096, 4096}, {1}},
  };
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int64_t d : c.dims) n *= d;
    const long long bytes = static_cast<long long>(n) * 4;
    std::printf("@ cairn/%s %.6f %lld\n", c.name, time_cairn(ctx, c, reps), bytes);
    std::fflush(stdout);
  }
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 24}) {
    std::vector<uint64_t> src(static_cast<size_t>(n / 2), 1), dst(src.size());
    const long long bytes = static_cast<long long>(n) * 4;
    const char* name = n == (1 << 20) ? "1M" : "16M";
    std::printf("@ read/%s %.6f %lld\n", name, time_read(src, threads, reps), bytes);
    std::printf("@ memcpy/%s %.6f %lld\n", name, time_memcpy(src, dst, threads, reps), bytes);
    std::fflush(stdout);
  }
  return 0;
}
