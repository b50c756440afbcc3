// CPU FFT timings: a prime length with no small factor (62,501) against the power of two above it
// (65,536), through the eager dispatch, and kissfft called directly (the CPU kernel's path before
// Bluestein: O(n * p) for a prime factor p, so O(n^2) for a prime length). Figures only, never a
// test; bench/fft_bench.sh runs it with -c opt and numpy.fft in the same run.
//
//   fft_bench [repetitions [n...]]   (5 by default; kissfft on the prime runs once, it takes
//                                     seconds; other lengths n replace 62,501 and 65,536, e.g. to
//                                     place kMaxKissPrime in runtime/cpu/fft_kernels.cc)
//
// Prints "@ <impl>/<n> <seconds>" lines (the best of the repetitions) that fft_bench.sh collates.
#include <kissfft/kiss_fft.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/eager/dispatch.h"

namespace {

using cairn::complex64;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<complex64> signal(int64_t n) {
  std::vector<complex64> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = complex64(static_cast<float>((i * 37) % 101) / 101.0f - 0.5f,
                                          static_cast<float>((i * 53) % 97) / 97.0f - 0.5f);
  return v;
}

double time_cairn(cairn::Context& ctx, int64_t n, int reps) {
  cairn::Tensor x = cairn::Tensor::allocate(ctx.cpu(), cairn::DType::Complex64, cairn::Shape{n});
  std::vector<complex64> v = signal(n);
  std::copy(v.begin(), v.end(), x.mutable_data<complex64>());
  // The first call builds the plan (twiddles; Bluestein's chirp and its transform); it is cached.
  const auto t_plan = std::chrono::steady_clock::now();
  cairn::run_op(ctx, "FFT", {x}, {});
  std::printf("@ cairn_first_call/%lld %.6f\n", static_cast<long long>(n), seconds_since(t_plan));
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<cairn::Tensor> y = cairn::run_op(ctx, "FFT", {x}, {});
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

double time_kissfft(int64_t n, int reps) {
  kiss_fft_cfg cfg = kiss_fft_alloc(static_cast<int>(n), 0, nullptr, nullptr);
  std::vector<complex64> in = signal(n), out(in.size());
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    kiss_fft(cfg, reinterpret_cast<const kiss_fft_cpx*>(in.data()), reinterpret_cast<kiss_fft_cpx*>(out.data()));
    best = std::min(best, seconds_since(t0));
  }
  kiss_fft_free(cfg);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  cairn::ContextOptions options;
  options.num_threads = 1;  // one line: the transform itself is single-threaded either way
  cairn::Context ctx(options);
  std::vector<int64_t> lengths = {62501, 65536};
  if (argc > 2) lengths.clear();
  for (int i = 2; i < argc; ++i) lengths.push_back(std::atoll(argv[i]));
  for (int64_t n : lengths) {
    std::printf("@ cairn/%lld %.6f\n", static_cast<long long>(n), time_cairn(ctx, n, reps));
    // kissfft's cost grows with the largest prime factor: one repetition where that is slow.
    const double once = time_kissfft(n, 1);
    std::printf("@ kissfft/%lld %.6f\n", static_cast<long long>(n), once > 0.5 ? once : time_kissfft(n, reps));
    std::fflush(stdout);
  }
  return 0;
}
