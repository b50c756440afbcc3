// Four threads pulling from one iterator (serialized as the iterator object serializes callers)
// while map, interleave and prefetch workers run: every element exactly once. Runs under TSan.
#include <algorithm>
#include <mutex>
#include <thread>

#include "tests/runtime/data/par/par_util.h"

namespace cairn::test {
namespace {

using data::Element;

TEST_CASE("four threads pulling from one parallel pipeline get every element exactly once") {
  data::MapOptions o;
  o.num_parallel_calls = 3;
  auto plus = [](const Element& x) { return Element{i64(value_of(x) + 1)}; };
  data::InterleaveOptions io;
  io.cycle_length = 3;
  io.block_length = 2;
  io.num_parallel_calls = 2;
  auto inner = [&](const Element& x) {
    Numbers s;
    s.n = 50;
    s.start = value_of(x) * 100;
    return numbers(s);
  };
  const int n_inputs = 8;
  auto streams = data::interleave(as_stream(numbers(n_inputs)), value_spec(), inner, io);
  auto ds = data::prefetch(data::map(data::prefetch(data::map(streams, value_spec(), plus, o), 4), value_spec(), plus, o), 4);
  for (auto pipeline : {ds, data::prefetch(data::map(numbers(400), value_spec(), plus, o), 3)}) {
    auto it = pipeline->make_iterator(0);
    std::mutex mu;  // the iterator object's serialization
    std::vector<std::vector<int64_t>> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        Element e;
        for (;;) {
          std::lock_guard<std::mutex> lock(mu);
          if (!it->next(e)) return;
          got[t].push_back(value_of(e));
        }
      });
    for (auto& t : threads) t.join();
    std::vector<int64_t> all;
    for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
    std::sort(all.begin(), all.end());
    std::vector<int64_t> want;
    if (pipeline == ds) {
      for (int64_t x = 0; x < n_inputs; ++x)
        for (int64_t k = 0; k < 50; ++k) want.push_back(x * 100 + k + 2 + 1000 * x);  // inner iteration x
    } else {
      want = iota(1, 401);
    }
    CHECK(all == want);
    it->cancel();
  }
}

}  // namespace
}  // namespace cairn::test
