// Runs N eager 16-element float32 Adds through the C API; bench/callgrind_dispatch.sh runs it
// under callgrind at two values of N and divides the difference, so setup cost cancels out.
// `dispatch_loop N profile` runs the loop with the profiler on (every op recorded).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cairn/cairn.h"

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1000;
  cairn_context* ctx = nullptr;
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  opts.num_threads = 1;
  if (cairn_status* s = cairn_context_create(&opts, &ctx)) {
    std::fprintf(stderr, "%s\n", cairn_status_message(s));
    return 1;
  }
  float v[16] = {};
  int64_t shape[1] = {16};
  cairn_tensor *a = nullptr, *b = nullptr;
  if (cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &a) ||
      cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &b))
    return 1;
  cairn_tensor* ins[2] = {a, b};
  const bool profile = argc > 2 && std::strcmp(argv[2], "profile") == 0;
  cairn_profiler_options po = CAIRN_PROFILER_OPTIONS_INIT;
  po.max_events = static_cast<uint64_t>(n) + 1;
  if (profile && cairn_profiler_start(&po)) return 1;
  for (long i = 0; i < n; ++i) {
    cairn_tensor* out = nullptr;
    if (cairn_status* s = cairn_op_run(ctx, "Add", ins, 2, nullptr, 0, &out, 1)) {
      std::fprintf(stderr, "%s\n", cairn_status_message(s));
      return 1;
    }
    cairn_tensor_free(out);
  }
  if (profile) {
    cairn_profile* p = nullptr;
    if (cairn_profiler_stop(&p)) return 1;
    cairn_profile_free(p);
  }
  cairn_tensor_free(a);
  cairn_tensor_free(b);
  cairn_context_free(ctx);
  return 0;
}
