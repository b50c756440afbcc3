// The profiler's cost per op, in one run: eager 16-element float32 Adds through cairn_op_run and
// replays of a traced two-node function, each timed with the profiler off and on (every op
// recorded), alternating rounds and keeping each side's best. Prints ns per op and the difference.
// Instruction counts with it off and on: bench/callgrind_dispatch.sh [profile].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cairn/cairn.h"

namespace {

void ok(cairn_status* s) {
  if (!s) return;
  std::fprintf(stderr, "%s\n", cairn_status_message(s));
  std::exit(1);
}

cairn_status* body(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_tensor* t = nullptr;
  cairn_tensor* ins[2] = {in[0], in[0]};
  if (cairn_status* s = cairn_op_run(ctx, "Mul", ins, 2, nullptr, 0, &t, 1)) return s;
  ins[1] = t;
  // x * x + x: one fused node on the CPU, so a replay records the node and the function.
  cairn_status* s = cairn_op_run(ctx, "Add", ins, 2, nullptr, 0, out, 1);
  cairn_tensor_free(t);
  return s;
}

// Seconds per iteration of `step` over n iterations, with the profiler on or off.
template <class F>
double per_op(long n, bool profile, F step) {
  cairn_profiler_options po = CAIRN_PROFILER_OPTIONS_INIT;
  po.max_events = static_cast<uint64_t>(n) * 4 + 16;
  if (profile) ok(cairn_profiler_start(&po));
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) step();
  auto t1 = std::chrono::steady_clock::now();
  if (profile) {
    cairn_profile* p = nullptr;
    ok(cairn_profiler_stop(&p));
    cairn_profile_free(p);
  }
  return std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(n);
}

template <class F>
void compare(const char* what, long n, F step) {
  double off = 1e9, on = 1e9;
  for (int round = 0; round < 7; ++round) {
    off = std::min(off, per_op(n, false, step));
    on = std::min(on, per_op(n, true, step));
  }
  std::printf("%-32s off %8.1f ns/op   on %8.1f ns/op   +%6.1f ns/op (on/off %.2fx)\n", what, off * 1e9, on * 1e9,
              (on - off) * 1e9, on / off);
}

}  // namespace

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 200000;
  cairn_context* ctx = nullptr;
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  opts.num_threads = 1;
  ok(cairn_context_create(&opts, &ctx));
  float v[16] = {};
  int64_t shape[1] = {16};
  cairn_tensor *a = nullptr, *b = nullptr;
  ok(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &a));
  ok(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &b));
  cairn_tensor* ins[2] = {a, b};
  cairn_function* fn = nullptr;
  ok(cairn_function_create(ctx, "mul_add", body, nullptr, nullptr, &fn));

  compare("eager Add (cairn_op_run)", n, [&] {
    cairn_tensor* out = nullptr;
    ok(cairn_op_run(ctx, "Add", ins, 2, nullptr, 0, &out, 1));
    cairn_tensor_free(out);
  });
  compare("replay of mul_add (per call)", n / 2, [&] {
    cairn_tensor* out = nullptr;
    ok(cairn_function_call(fn, &a, 1, &out, 1));
    cairn_tensor_free(out);
  });

  cairn_function_free(fn);
  cairn_tensor_free(a);
  cairn_tensor_free(b);
  cairn_context_free(ctx);
  return 0;
}
