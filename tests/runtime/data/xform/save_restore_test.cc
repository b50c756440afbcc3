// Iterator save/restore at EVERY position of small pipelines: a fresh iterator restored from the
// state saved after k elements continues exactly as the uninterrupted run, bit for bit (failed
// elements included), and ends where it ends. Indexable pipelines save a few integers.
#include "runtime/data/transforms.h"
#include "tests/runtime/data/xform/xform_test_util.h"

namespace cairn::data::test {
namespace {

DatasetPtr named(DatasetPtr d, const std::string& name) { return select(std::move(d), {"x"}, {name}); }

TEST_CASE("indexable pipelines: exact resume, the state is one index") {
  const std::vector<DatasetPtr> pipelines = {
      repeat(batch(shuffle(ints(20), 5, 1, true), 3, false), 2),
      batch(repeat(shuffle(ints(10), 4, 2, true), 3), 4, false),
      batch(repeat(shuffle(ints(10), 4, 2, false), 3), 4, true),
      enumerate(shard(skip(take(repeat(ints(9, true, {}, true), 3), 25), 2), 3, 1), 10),
      zip({named(shuffle(ints(12), 2, 3, true), "a"), named(concatenate(ints(5), skip(ints(9), 2)), "b")}),
      concatenate(take(shuffle(ints(7), 1, 4, true), 5), shard(ints(11), 4, 3)),
      unbatch(batch(repeat(shuffle(ints(5), 5, 5, true), 2), 2, true)),
      padded_batch(vectors({1, 3, 2, 0, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7}), 3, false, {}, {}),
      batch(ints(8, true, {3}), 3, false),  // a failed batch in the middle
  };
  for (const DatasetPtr& d : pipelines) {
    CAPTURE(d->describe());
    REQUIRE(d->random_access());
    const size_t largest = check_every_cut(d);
    CHECK(largest <= 16);
  }
}

TEST_CASE("stream pipelines: exact resume with buffers, partial repetitions and failed elements") {
  const std::vector<DatasetPtr> pipelines = {
      // a stream shuffle (a filter-like stream with failures) inside a repeat, then batch
      batch(repeat(shuffle(ints(30, false, {5, 17}), 8, 11, true), 2), 3, false),
      repeat(batch(shuffle(ints(13, false), 4, 1, false), 5, true), 3),
      // tensor-slices-like input -> shuffle (reshuffle) -> repeat(3) -> batch with remainder
      batch(repeat(shuffle(ints(7, false, {}, true), 3, 9, true), 3), 4, false),
      enumerate(shard(skip(take(repeat(ints(9, false, {4}), 3), 25), 2), 3, 1), 10),
      zip({named(shuffle(ints(12, false), 3, 3, true), "a"), named(concatenate(ints(5, false), ints(9)), "b")}),
      concatenate(take(ints(7, false), 5), shard(ints(11, false), 4, 3)),
      shuffle(unbatch(vectors({2, 0, 3, 1, 4}, {1, 2, 3, 4, 5}, false)), 3, 8, true),
      padded_batch(vectors({1, 3, 2, 0, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7}, false), 3, true, {}, {}),
      shuffle(ints(kInfinite), 6, 2, true),  // an endless buffered shuffle, cut within its first 200
      repeat(ints(0, false), -1),
  };
  for (const DatasetPtr& d : pipelines) {
    CAPTURE(d->describe());
    CHECK(!d->random_access());
    check_every_cut(d, 120);
  }
}

TEST_CASE("a shuffle buffer is saved explicitly, with its elements") {
  DatasetPtr d = shuffle(ints(100, false), 10, 1, true);
  auto it = d->make_iterator(0);
  Element e;
  REQUIRE(it->next(e));
  StateWriter w;
  it->save(w);
  // input state (count, ended, position) + draws + buffer size + 9 buffered int64 scalars
  CHECK(w.bytes().size() > 9 * 8);
  CHECK(w.bytes().size() < 9 * 64 + 64);
}

TEST_CASE("corrupt states are DataLoss, not crashes") {
  DatasetPtr d = batch(repeat(shuffle(ints(30, false), 8, 11, true), 2), 3, false);
  auto it = d->make_iterator(0);
  Element e;
  for (int i = 0; i < 4; ++i) REQUIRE(it->next(e));
  StateWriter w;
  it->save(w);
  const std::string state = w.take();
  for (size_t cut = 0; cut < state.size(); cut += 3) {
    auto fresh = d->make_iterator(0);
    StateReader r(std::string_view(state).substr(0, cut), "pipeline", ctx());
    CHECK_THROWS_CODE(fresh->restore(r), Code::DataLoss, "pipeline: corrupt iterator state");
  }
}

}  // namespace
}  // namespace cairn::data::test
