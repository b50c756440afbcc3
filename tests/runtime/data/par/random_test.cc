// Random ops inside map and filter functions draw from a stream keyed by (seed, stage, epoch,
// element index): the same numbers whatever the parallelism, the thread or a restore.
#include <cstring>
#include <map>

#include "runtime/data/parallel_internal.h"
#include "runtime/eager/dispatch.h"
#include "tests/runtime/data/par/par_util.h"

namespace cairn::test {
namespace {

using data::Element;

const data::ElementSpec kSpec{{{"value", DType::Int64, {}}, {"noise", DType::Float32, {3}}}};

// Appends three uniform numbers (RandomUniform with seeds 0,0) to each element.
data::DatasetPtr noisy(data::DatasetPtr in, int npc, int64_t seed = 0, bool deterministic = true) {
  data::MapOptions o;
  o.name = "noise";
  o.num_parallel_calls = npc;
  o.seed = seed;
  o.deterministic = deterministic;
  auto fn = [](const Element& x) -> Element {
    const std::vector<int64_t> shape = {3};
    Tensor u = run_op(ctx(), "RandomUniform", std::vector<Tensor>{}, {attr_ints("shape", shape)})[0];
    return {x[0], u};
  };
  return data::map(std::move(in), kSpec, fn, o);
}

// value -> the noise bits of that element.
std::map<int64_t, std::vector<uint32_t>> noise_of(data::Iterator& it) {
  std::map<int64_t, std::vector<uint32_t>> out;
  Element e;
  while (it.next(e)) {
    std::vector<uint32_t> bits(3);
    std::memcpy(bits.data(), e[1].raw_data(), 12);
    out[value_of(e)] = bits;
  }
  return out;
}

std::map<int64_t, std::vector<uint32_t>> noise_of(const data::DatasetPtr& ds, uint64_t epoch = 0) {
  return noise_of(*ds->make_iterator(epoch));
}

TEST_CASE("random ops in map give the same numbers with parallelism 1 and 4, indexable or stream") {
  const auto reference = noise_of(noisy(numbers(64), 1));
  REQUIRE(reference.size() == 64);
  CHECK(noise_of(noisy(numbers(64), 4)) == reference);
  CHECK(noise_of(noisy(numbers(64), 0)) == reference);
  // Other draws on the context in between change nothing.
  (void)run_op(ctx(), "RandomUniform", std::vector<Tensor>{}, {attr_ints("shape", {5})});
  CHECK(noise_of(noisy(as_stream(numbers(64)), 4)) == noise_of(noisy(as_stream(numbers(64)), 1)));
  CHECK(noise_of(noisy(as_stream(numbers(64)), 4, 0, false)) == noise_of(noisy(as_stream(numbers(64)), 0)));
  // Elements differ from each other, iterations and seeds differ.
  CHECK(reference.at(0) != reference.at(1));
  auto epoch1 = noise_of(noisy(numbers(64), 4), 1);
  CHECK(epoch1.at(1000) != reference.at(0));
  CHECK(noise_of(noisy(numbers(64), 4, 7)).at(0) != reference.at(0));
  CHECK(noise_of(noisy(numbers(64), 2, 7)) == noise_of(noisy(numbers(64), 3, 7)));
}

TEST_CASE("parallelism and prefetches upstream do not change a map's random numbers either") {
  auto upstream = [](int npc, int64_t buffer) {
    data::MapOptions o;
    o.name = "id";
    o.num_parallel_calls = npc;
    data::DatasetPtr m = data::map(numbers(20), value_spec(), [](const Element& x) { return x; }, o);
    return buffer > 0 ? data::prefetch(m, buffer) : m;
  };
  CHECK(noise_of(noisy(upstream(1, 0), 1)) == noise_of(noisy(upstream(4, 3), 2)));
  CHECK(noise_of(noisy(upstream(data::kAutotune, data::kAutotune), 1)) == noise_of(noisy(upstream(0, 0), 0)));
  CHECK(data::internal::stable_identity("r.map('a', parallel=4).prefetch(AUTOTUNE).map('b', parallel=AUTOTUNE)"
                                        ".prefetch_to_device('vulkan:0', 2).interleave(cycle=2, block=1, parallel=2)") ==
        "r.map('a').map('b').interleave(cycle=2, block=1)");
}

TEST_CASE("a restored iterator draws the same numbers as an uninterrupted one") {
  for (bool stream : {false, true}) {
    auto ds = data::prefetch(noisy(stream ? as_stream(numbers(30)) : numbers(30), 4), 5);
    const auto reference = noise_of(ds);
    auto it = ds->make_iterator(0);
    Element e;
    for (int k = 0; k < 11; ++k) REQUIRE(it->next(e));
    auto rest = resumed(ds, *it);
    auto tail = noise_of(*rest);
    CHECK(tail.size() == 19);
    for (const auto& [v, bits] : tail) CHECK(reference.at(v) == bits);
  }
}

TEST_CASE("random ops in filter are keyed by element too") {
  auto keep = [](const Element&) {
    const std::vector<int64_t> shape = {};
    Tensor u = run_op(ctx(), "RandomUniform", std::vector<Tensor>{}, {attr_ints("shape", shape)})[0];
    return u.data<float>()[0] < 0.5f;
  };
  auto a = drain(data::filter(data::map(numbers(100), value_spec(), [](const Element& x) { return x; }, {}), keep, "half", 0));
  auto b = drain(data::filter(numbers(100), keep, "half", 0));
  auto c = drain(data::filter(numbers(100), keep, "half", 0));
  CHECK(b == c);
  CHECK(b.size() > 20);
  CHECK(b.size() < 80);
  (void)a;
}

}  // namespace
}  // namespace cairn::test
