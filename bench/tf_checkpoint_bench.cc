// Reads a TensorFlow checkpoint with Cairn, best of N runs, files in the page cache.
// bench/tf_checkpoint_bench.sh runs it beside TensorFlow's own restore of the same checkpoint and
// prints the ratios (issue 15 target: >= 2x). Two cases:
//   cairn_read_s    : every value through BundleReader (CRC32C verified) onto the CPU, as
//                     tf.train.load_checkpoint + get_tensor does;
//   cairn_restore_s : restore by object graph into existing variables (tfckpt::restore_tf, what
//                     cairn_checkpoint_restore does), as tf.train.Checkpoint(m=...).restore does.
//                     The live structure is the script's: a module with a list `vs` of 16 float32
//                     vectors, under the checkpoint edge "m".
//
//   bazel run -c opt //bench:tf_checkpoint_bench -- PREFIX [RUNS]
// Prints "cairn_read_s <seconds> <bytes>" and "cairn_restore_s <seconds>". Not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/checkpoint/tf_restore.h"
#include "runtime/eager/context.h"
#include "runtime/track/containers.h"
#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {

// The best of `runs` timed calls after one untimed call (page cache, first allocations).
double best_of(int runs, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < runs + 1; ++r) {
    const auto t0 = Clock::now();
    f();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r > 0) best = std::min(best, s);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tf_checkpoint_bench PREFIX [RUNS]\n");
    return 2;
  }
  const std::string prefix = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  Ref<Context> ctx = make_ref<Context>(ContextOptions{});
  try {
    size_t bytes = 0;
    const double read = best_of(runs, [&] {
      auto reader = tfckpt::BundleReader::open(prefix);
      bytes = 0;
      for (const auto& e : reader->entries()) {
        if (e.dtype == DType::String) {
          for (const std::string& s : reader->load_strings(e)) bytes += s.size();
        } else {
          bytes += reader->load(e, ctx->cpu()).nbytes();
        }
      }
    });

    // The live structure, shaped like the checkpoint's values.
    auto reader = tfckpt::BundleReader::open(prefix);
    Ref<Module> m = Module::create(*ctx, "m");
    Ref<List> vs = List::create(*ctx);
    m->set("vs", vs);
    for (int i = 0;; ++i) {
      const tfckpt::BundleEntry* e = reader->find("m/vs/" + std::to_string(i) + "/.ATTRIBUTES/VARIABLE_VALUE");
      if (!e) break;
      vs->append(Variable::create(*ctx, Tensor::allocate(ctx->cpu(), e->dtype, e->shape)));
    }
    ckpt::Checkpoint c(*ctx, {{"m", m}});
    const double restore = best_of(runs, [&] { tfckpt::restore_tf(c, prefix)->expect_partial(); });
    std::printf("cairn_read_s %.6f %zu\ncairn_restore_s %.6f\n", read, bytes, restore);
  } catch (const Error& e) {
    std::fprintf(stderr, "tf_checkpoint_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
