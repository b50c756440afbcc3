// interleave: TensorFlow's documented example, parallel read-ahead, errors, save/restore.
#include "tests/runtime/data/par/par_util.h"

namespace cairn::test {
namespace {

using data::Element;

// x -> a dataset of `copies` elements equal to x (TF's from_tensors(x).repeat(copies)).
data::DatasetFn copies_of(int64_t copies) {
  return [copies](const Element& x) {
    const int64_t v = value_of(x);
    data::MapOptions o;
    o.name = "const";
    return data::map(numbers(copies), value_spec(), [v](const Element&) { return Element{i64(v)}; }, o);
  };
}

data::InterleaveOptions options(int cycle, int block, int npc) {
  data::InterleaveOptions o;
  o.cycle_length = cycle;
  o.block_length = block;
  o.num_parallel_calls = npc;
  return o;
}

// tf.data.Dataset.interleave's documented example: range(1, 6).interleave(lambda x:
// from_tensors(x).repeat(6), cycle_length=2, block_length=4).
const std::vector<int64_t> kTfExample = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3,
                                         4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5};

data::DatasetPtr one_to_five() {
  Numbers s;
  s.n = 5;
  s.start = 1;
  return numbers(s);
}

TEST_CASE("interleave gives TensorFlow's documented order, with or without workers") {
  for (int npc : {0, 1, 2})
    for (bool stream : {false, true}) {
      data::DatasetPtr in = stream ? as_stream(one_to_five()) : one_to_five();
      auto ds = data::interleave(in, value_spec(), copies_of(6), options(2, 4, npc));
      CHECK(drain(ds) == kTfExample);
    }
}

TEST_CASE("interleave with cycle_length 1 is flat_map, and empty inner datasets are skipped") {
  auto flat = data::interleave(one_to_five(), value_spec(), copies_of(2), options(1, 1, 0));
  CHECK(drain(flat) == std::vector<int64_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5});
  auto fn = [](const Element& x) { return copies_of(value_of(x) % 2)(x); };  // odd: one copy, even: none
  auto ds = data::interleave(one_to_five(), value_spec(), fn, options(3, 2, 2));
  CHECK(drain(ds) == std::vector<int64_t>{1, 3, 5});
}

TEST_CASE("interleave restores at every position, workers running") {
  for (int npc : {0, 2}) {
    auto ds = data::interleave(as_stream(one_to_five()), value_spec(), copies_of(6), options(2, 4, npc));
    for (int cut = 0; cut <= static_cast<int>(kTfExample.size()); ++cut) {
      CAPTURE(cut);
      auto it = ds->make_iterator(0);
      auto all = drain(*it, nullptr, cut);
      auto rest = resumed(ds, *it);
      auto tail = drain(*rest);
      all.insert(all.end(), tail.begin(), tail.end());
      CHECK(all == kTfExample);
    }
  }
}

TEST_CASE("interleave checks each inner dataset's spec and names the input element") {
  auto fn = [](const Element& x) -> data::DatasetPtr {
    if (value_of(x) == 3) {
      data::MapOptions o;
      return data::map(numbers(1), data::ElementSpec{{{"other", DType::Int64, {}}}},
                       [](const Element& e) { return e; }, o);
    }
    if (value_of(x) == 4) raise(Code::NotFound, "no file for 4");
    return copies_of(1)(x);
  };
  auto it = data::interleave(one_to_five(), value_spec(), fn, options(1, 1, 1))->make_iterator(0);
  Element e;
  REQUIRE(it->next(e));
  REQUIRE(it->next(e));
  CHECK(value_of(e) == 2);
  CHECK_THROWS_CODE(it->next(e), Code::InvalidArgument, "interleave (element 2): the function's dataset has spec {other");
  CHECK_THROWS_CODE(it->next(e), Code::NotFound, "interleave (element 3): no file for 4");
  REQUIRE(it->next(e));
  CHECK(value_of(e) == 5);
  CHECK_FALSE(it->next(e));
}

TEST_CASE("interleave refuses bad arguments") {
  CHECK_THROWS_CODE(data::interleave(one_to_five(), value_spec(), copies_of(1), options(0, 1, 0)),
                    Code::InvalidArgument, "cycle_length is 0");
  CHECK_THROWS_CODE(data::interleave(one_to_five(), value_spec(), copies_of(1), options(2, 0, 0)),
                    Code::InvalidArgument, "block_length is 0");
  CHECK_THROWS_CODE(data::interleave(one_to_five(), value_spec(), copies_of(1), options(2, 1, -3)),
                    Code::InvalidArgument, "num_parallel_calls is -3");
}

}  // namespace
}  // namespace cairn::test
