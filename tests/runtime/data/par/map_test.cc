// map and filter: results, order, errors, parallelism and save/restore mid-run.
#include <algorithm>
#include <thread>

#include "tests/runtime/data/par/par_util.h"

namespace cairn::test {
namespace {

using data::Element;

data::ElementFn times(int64_t k, std::set<int64_t> fail = {}) {
  return [k, fail](const Element& x) -> Element {
    const int64_t v = value_of(x);
    if (fail.count(v)) raise(Code::InvalidArgument, "value {} refused", v);
    return {i64(v * k)};
  };
}

data::MapOptions parallel(int n, bool deterministic = true) {
  data::MapOptions o;
  o.name = "times";
  o.num_parallel_calls = n;
  o.deterministic = deterministic;
  return o;
}

std::vector<int64_t> times_of(std::vector<int64_t> v, int64_t k) {
  for (auto& x : v) x *= k;
  return v;
}

TEST_CASE("map over an indexable input stays indexable and keeps the order at every parallelism") {
  for (int npc : {0, 1, 4, data::kAutotune}) {
    auto ds = data::map(numbers(50), value_spec(), times(3), parallel(npc));
    CHECK(ds->random_access());
    CHECK(ds->cardinality() == 50);
    CHECK(ds->parallelism() == (npc == data::kAutotune ? data::autotune_parallelism(ds->context()) : std::max(1, npc)));
    CHECK(drain(ds) == times_of(iota(0, 50), 3));
    CHECK(drain(ds, 2) == times_of(iota(2000, 2050), 3));  // iteration 2 of the input
  }
}

TEST_CASE("map over a stream: input order when deterministic, every element otherwise") {
  for (int npc : {0, 1, 4}) {
    auto ds = data::map(as_stream(numbers(40)), value_spec(), times(2), parallel(npc));
    CHECK_FALSE(ds->random_access());
    CHECK(drain(ds) == times_of(iota(0, 40), 2));
  }
  auto ds = data::map(as_stream(numbers(40)), value_spec(), times(2), parallel(4, false));
  auto got = drain(ds);
  std::sort(got.begin(), got.end());
  CHECK(got == times_of(iota(0, 40), 2));
}

TEST_CASE("a parallel map over a stream pulls its input on its own thread while the function runs") {
  // One worker: while it runs element 0's function, the input must still be pulled (as tf.data's
  // runner thread does), so element 0's function waits (bounded) to see element 1 pulled.
  Numbers s;
  s.n = 4;
  auto pulls = s.calls;
  auto saw = std::make_shared<std::atomic<bool>>(false);
  auto fn = [pulls, saw](const Element& x) -> Element {
    if (value_of(x) == 0)
      for (int k = 0; k < 20000 && !(*saw = pulls->load() >= 2); ++k)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    return x;
  };
  auto ds = data::map(as_stream(numbers(s)), value_spec(), fn, parallel(1));
  CHECK(drain(ds) == iota(0, 4));
  CHECK(saw->load());
}

TEST_CASE("a failed map element names the map and the element, and the iterator continues") {
  for (bool stream : {false, true})
    for (int npc : {0, 4}) {
      CAPTURE(stream);
      CAPTURE(npc);
      data::DatasetPtr in = stream ? as_stream(numbers(8)) : numbers(8);
      auto ds = data::map(in, value_spec(), times(10, {3}), parallel(npc));
      auto it = ds->make_iterator(0);
      Element e;
      for (int64_t i = 0; i < 3; ++i) {
        REQUIRE(it->next(e));
        CHECK(value_of(e) == i * 10);
      }
      CHECK_THROWS_CODE(it->next(e), Code::InvalidArgument, "map 'times' (element 3): value 3 refused");
      REQUIRE(it->next(e));
      CHECK(value_of(e) == 40);
      CHECK(drain(*it) == std::vector<int64_t>{50, 60, 70});
      CHECK_FALSE(it->next(e));
      CHECK_FALSE(it->next(e));  // the end stays the end
    }
}

TEST_CASE("an input failure reaches the consumer at its turn, and the elements after it follow") {
  Numbers s;
  s.n = 6;
  s.fail = {2};
  for (bool stream : {false, true}) {
    data::DatasetPtr in = stream ? as_stream(numbers(s)) : numbers(s);
    int errors = 0;
    CHECK(drain(data::map(in, value_spec(), times(1), parallel(3)), 0, &errors) == std::vector<int64_t>{0, 1, 3, 4, 5});
    CHECK(errors == 1);
  }
}

TEST_CASE("OUT_OF_RANGE raised in a map function becomes INVALID_ARGUMENT") {
  auto fn = [](const Element&) -> Element { raise(Code::OutOfRange, "ran out"); };
  for (int npc : {0, 2}) {
    auto it = data::map(as_stream(numbers(3)), value_spec(), fn, parallel(npc))->make_iterator(0);
    Element e;
    CHECK_THROWS_CODE(it->next(e), Code::InvalidArgument, "map 'times' (element 0): ran out");
  }
}

TEST_CASE("map checks each result against its declared spec") {
  auto fn = [](const Element&) -> Element { return {scalar<float>(1.0f)}; };
  auto it = data::map(numbers(3), value_spec(), fn, parallel(0))->make_iterator(0);
  Element e;
  CHECK_THROWS_CODE(it->next(e), Code::InvalidArgument, "component 'value' (element 0) is float32");
}

TEST_CASE("map refuses bad arguments when built") {
  CHECK_THROWS_CODE(data::map(numbers(3), value_spec(), times(1), parallel(-5)), Code::InvalidArgument,
                    "num_parallel_calls is -5");
  // One OS thread per call: 65,536 of them ran out of memory for their stacks (capi fuzzer F-b4).
  CHECK_THROWS_CODE(data::map(numbers(3), value_spec(), times(1), parallel(65536)), Code::InvalidArgument,
                    "num_parallel_calls is 65536 (expected 0 to 1024");
  CHECK_THROWS_CODE(data::map(numbers(3), value_spec(), nullptr, parallel(1)), Code::InvalidArgument, "null");
  CHECK_THROWS_CODE(data::map(nullptr, value_spec(), times(1), parallel(1)), Code::InvalidArgument, "null");
}

TEST_CASE("save and restore mid-run with a parallel map running continue exactly") {
  Numbers slow;
  slow.n = 30;
  slow.delay = std::chrono::microseconds(200);
  for (bool stream : {false, true})
    for (bool det : {true, false})
      for (int cut : {0, 1, 7, 29, 30}) {
        CAPTURE(stream);
        CAPTURE(cut);
        data::DatasetPtr in = stream ? as_stream(numbers(slow)) : numbers(slow);
        auto ds = data::prefetch(data::map(in, value_spec(), times(5), parallel(4, det || !stream)), 3);
        auto it = ds->make_iterator(0);
        auto head = drain(*it, nullptr, cut);
        auto rest = resumed(ds, *it);
        auto tail = drain(*rest);
        auto all = head;
        all.insert(all.end(), tail.begin(), tail.end());
        if (!det && stream) std::sort(all.begin(), all.end());
        CHECK(all == times_of(iota(0, 30), 5));
        // The original keeps going too.
        auto own = drain(*it);
        if (det || !stream) CHECK(own == tail);
      }
}

TEST_CASE("filter keeps what the predicate accepts, names itself in errors and restores") {
  auto even = [](const Element& x) {
    if (value_of(x) == 5) raise(Code::OutOfRange, "five");
    return value_of(x) % 2 == 0;
  };
  auto ds = data::filter(numbers(10), even, "even", 0);
  CHECK(ds->cardinality() == data::kUnknown);
  auto it = ds->make_iterator(0);
  CHECK(drain(*it, nullptr, 3) == std::vector<int64_t>{0, 2, 4});
  Element e;
  CHECK_THROWS_CODE(it->next(e), Code::InvalidArgument, "filter 'even' (element 5): five");
  auto rest = resumed(ds, *it);
  CHECK(drain(*rest) == std::vector<int64_t>{6, 8});
  CHECK(drain(*it) == std::vector<int64_t>{6, 8});
  CHECK_THROWS_CODE(data::filter(numbers(1), nullptr, "", 0), Code::InvalidArgument, "filter 'filter'");
}

TEST_CASE("AUTOTUNE follows the context's inter-op thread count when one is set") {
  Ref<Context> ctx = make_ref<Context>(ContextOptions{});
  ctx->set_threads(0, 3);
  Numbers spec;
  spec.context = ctx.get();
  auto ds = data::map(numbers(spec), value_spec(), times(3), parallel(data::kAutotune));
  CHECK(ds->parallelism() == 3);
  CHECK(drain(ds) == times_of(iota(0, 10), 3));
  CHECK(data::prefetch(numbers(spec), data::kAutotune)->prefetch_depth() == 6);
}

}  // namespace
}  // namespace cairn::test
