// Reads every value of a TensorFlow checkpoint with Cairn's BundleReader (CRC32C verified) onto the
// CPU, best of N runs, files in the page cache. bench/tf_checkpoint_bench.sh runs it beside
// TensorFlow's own restore of the same checkpoint and prints the ratio (issue 15 target: >= 2x).
//
//   bazel run -c opt //bench:tf_checkpoint_bench -- PREFIX [RUNS]
// Prints "cairn_read_s <seconds> <bytes>". Not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/core/allocator.h"
#include "runtime/cpu/cpu_device.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tf_checkpoint_bench PREFIX [RUNS]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  cairn::CpuDevice cpu(cairn::default_allocator());
  double best = 1e30;
  size_t bytes = 0;
  try {
    for (int r = 0; r < runs + 1; ++r) {  // the first run warms the page cache and is not counted
      const auto t0 = Clock::now();
      auto reader = cairn::tfckpt::BundleReader::open(argv[1]);
      bytes = 0;
      for (const auto& e : reader->entries()) {
        if (e.tf_dtype == 7) {
          for (const std::string& s : reader->load_strings(e)) bytes += s.size();
        } else {
          bytes += reader->load(e, cpu).nbytes();
        }
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r > 0) best = std::min(best, s);
    }
  } catch (const cairn::Error& e) {
    std::fprintf(stderr, "tf_checkpoint_bench: %s\n", e.what());
    return 1;
  }
  std::printf("cairn_read_s %.6f %zu\n", best, bytes);
  return 0;
}
