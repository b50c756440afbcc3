// interleave: TensorFlow's documented example, parallel read-ahead, errors, save/restore.
#include <thread>

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

// Places of lengths 0..3 (x % 4) over 1..10: places free and reopen at different times, some
// inner datasets are empty, so workers open places ahead at every kind of position.
data::DatasetPtr uneven(int npc, std::set<int64_t> fail_open = {}) {
  auto fn = [fail_open](const Element& x) {
    if (fail_open.count(value_of(x))) raise(Code::NotFound, "no file for {}", value_of(x));
    return copies_of(value_of(x) % 4)(x);
  };
  Numbers s;
  s.n = 10;
  s.start = 1;
  return data::interleave(as_stream(numbers(s)), value_spec(), fn, options(3, 1, npc));
}

TEST_CASE("interleave opening places ahead keeps the order, errors at their turn, and restores everywhere") {
  for (std::set<int64_t> fail : {std::set<int64_t>{}, std::set<int64_t>{2, 5, 6}}) {
    CAPTURE(fail.size());
    int errors0 = 0;
    const std::vector<int64_t> want = drain(uneven(0, fail), 0, &errors0);
    CHECK(errors0 == static_cast<int>(fail.size()));
    for (int npc : {1, 3}) {
      int errors = 0;
      CHECK(drain(uneven(npc, fail), 0, &errors) == want);
      CHECK(errors == errors0);
      auto ds = uneven(npc, fail);
      for (int cut = 0; cut <= static_cast<int>(want.size() + fail.size()); ++cut) {
        CAPTURE(npc);
        CAPTURE(cut);
        auto it = ds->make_iterator(0);
        int errs = 0;
        auto all = drain(*it, &errs, cut);
        auto rest = resumed(ds, *it);
        auto tail = drain(*rest, &errs);
        all.insert(all.end(), tail.begin(), tail.end());
        CHECK(all == want);
        CHECK(errs == errors0);
      }
    }
  }
  // The sequential order by hand: places {1, 2, 3}; freed places take 4 (empty), 5, 6, ... in turn.
  CHECK(drain(uneven(0)) == std::vector<int64_t>{1, 2, 3, 2, 3, 3, 5, 6, 6, 7, 7, 9, 10, 7, 10});
}

TEST_CASE("interleave workers throw an opening failure at its turn, naming the element") {
  auto it = uneven(3, {2})->make_iterator(0);
  Element e;
  REQUIRE(it->next(e));
  CHECK(value_of(e) == 1);
  CHECK_THROWS_CODE(it->next(e), Code::NotFound, "interleave (element 1): no file for 2");
  REQUIRE(it->next(e));
  CHECK(value_of(e) == 3);
}

// Waits (bounded) until `cond`; false if it never holds.
template <class F>
bool eventually(F cond) {
  for (int k = 0; k < 20000 && !cond(); ++k) std::this_thread::sleep_for(std::chrono::microseconds(500));
  return cond();
}

TEST_CASE("interleave workers open every place ahead of the consumer, and cancel stops them while opening") {
  auto opened = std::make_shared<std::atomic<int>>(0);
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto fn = [opened, release](const Element& x) {
    ++*opened;
    if (value_of(x) == 3) eventually([&] { return release->load(); });  // place 3 opens slowly
    return copies_of(2)(x);
  };
  auto ds = data::interleave(one_to_five(), value_spec(), fn, options(3, 1, 3));
  auto it = ds->make_iterator(0);
  Element e;
  REQUIRE(it->next(e));
  CHECK(value_of(e) == 1);
  // The consumer has asked for place 1 only: workers open places 2 and 3 by themselves.
  CHECK(eventually([&] { return opened->load() == 3; }));
  std::thread late([release] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    *release = true;
  });
  it->cancel();  // a worker is inside place 3's opening: cancel waits for it, then stops
  late.join();
  CHECK_FALSE(it->next(e));
  CHECK(opened->load() == 3);  // nothing opened after the cancel
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
