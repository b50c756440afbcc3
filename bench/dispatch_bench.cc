// Eager dispatch cost: a 16-element float32 Add through the C API, result allocation included.
// Budget (ARCHITECTURE.md): under 1 us and at most 1,850 instructions per op; the instruction count
// comes from bench/callgrind_dispatch.sh, which runs dispatch_loop under callgrind.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "cairn/cairn.h"

namespace {

void die(cairn_status* s) {
  if (s) {
    std::fprintf(stderr, "error: %s\n", cairn_status_message(s));
    std::exit(1);
  }
}

void BM_EagerAdd16(benchmark::State& state) {
  cairn_context* ctx = nullptr;
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  opts.num_threads = 1;
  die(cairn_context_create(&opts, &ctx));
  float v[16];
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  int64_t shape[1] = {16};
  cairn_tensor *a = nullptr, *b = nullptr;
  die(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &a));
  die(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &b));
  cairn_tensor* ins[2] = {a, b};
  for (auto _ : state) {
    cairn_tensor* out = nullptr;
    die(cairn_op_run(ctx, "Add", ins, 2, nullptr, 0, &out, 1));
    benchmark::DoNotOptimize(out);
    cairn_tensor_free(out);
  }
  state.SetItemsProcessed(state.iterations());
  cairn_tensor_free(a);
  cairn_tensor_free(b);
  cairn_context_free(ctx);
}
BENCHMARK(BM_EagerAdd16);

}  // namespace

BENCHMARK_MAIN();
