// The libtorch peer of bench/dispatch_loop.cc: N eager 16-element float32 adds through ATen's C++
// API (at::add), the result allocated and freed each time, one intra-op thread. Built by
// bench/callgrind_dispatch.sh against the torch of the bench venv (bench/peers/setup.sh), outside
// Bazel, and counted under callgrind the same way as Cairn's loop.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdlib>

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000;
  at::set_num_threads(1);
  const at::Tensor a = at::zeros({16}), b = at::zeros({16});
  for (long i = 0; i < n; ++i) {
    at::Tensor c = at::add(a, b);
  }
  return 0;
}
