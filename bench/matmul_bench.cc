// CPU MatMul through the C API against calling cblas_sgemm directly, at 256, 512 and 1024.
// Target (ARCHITECTURE.md): at least 0.9x of cblas_sgemm. Both run in the same process.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

// xtensor-blas bundles its own cblas declarations; including <cblas.h> too would clash.
#include <xtensor-blas/xlinalg.hpp>

#include "cairn/cairn.h"

namespace {

void die(cairn_status* s) {
  if (s) {
    std::fprintf(stderr, "error: %s\n", cairn_status_message(s));
    std::exit(1);
  }
}

std::vector<float> data(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
  return v;
}

void BM_CblasSgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto a = data(int64_t{n} * n), b = data(int64_t{n} * n);
  std::vector<float> c(a.size());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_CairnMatMul(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  cairn_context* ctx = nullptr;
  die(cairn_context_create(nullptr, &ctx));
  auto a = data(int64_t{n} * n), b = data(int64_t{n} * n);
  int64_t shape[2] = {n, n};
  cairn_tensor *ta = nullptr, *tb = nullptr;
  die(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, a.data(), a.size() * 4, &ta));
  die(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 2, b.data(), b.size() * 4, &tb));
  cairn_tensor* ins[2] = {ta, tb};
  for (auto _ : state) {
    cairn_tensor* out = nullptr;
    die(cairn_op_run(ctx, "MatMul", ins, 2, nullptr, 0, &out, 1));
    benchmark::DoNotOptimize(out);
    cairn_tensor_free(out);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
  cairn_tensor_free(ta);
  cairn_tensor_free(tb);
  cairn_context_free(ctx);
}

// Interleaved per size so both see the same machine state.
BENCHMARK(BM_CblasSgemm)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();
BENCHMARK(BM_CairnMatMul)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
