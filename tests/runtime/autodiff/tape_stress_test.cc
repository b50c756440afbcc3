// Tapes on several threads of one context: each records only its own thread's ops, and destroying
// a tape while other threads are inside ops that saw it installed is safe (Context::remove_hook
// waits for them). Runs under ThreadSanitizer in CI.
#include <atomic>
#include <thread>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "tests/util/test_util.h"

namespace cairn::test {

TEST_CASE("tapes on four threads share a context") {
  Context& c = ctx();
  constexpr int kThreads = 4, kRounds = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      Tensor x = make<float>({static_cast<float>(w + 1)}, Shape{});
      for (int i = 0; i < kRounds; ++i) {
        GradientTape tape(c);
        tape.watch(x);
        Tensor y = op::mul(c, x, x);
        std::vector<Tensor> g = tape.gradient(y, {x});
        if (values<float>(g[0])[0] != 2.0f * static_cast<float>(w + 1)) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong.load() == 0);
}

}  // namespace cairn::test
