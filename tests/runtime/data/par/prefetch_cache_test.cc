// prefetch, cache, the parallel IndexIterator, and closing iterators with threads running.
#include <dirent.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "tests/runtime/data/par/par_util.h"

namespace cairn::test {
namespace {

using data::Element;

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

std::string tmp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST_CASE("prefetch over an indexable input stays indexable; over a stream it buffers") {
  auto ds = data::prefetch(numbers(20), 4);
  CHECK(ds->random_access());
  CHECK(ds->prefetch_depth() == 4);
  CHECK(drain(ds) == iota(0, 20));
  auto tuned = data::prefetch(numbers(3), data::kAutotune);
  CHECK(tuned->prefetch_depth() == 2 * data::autotune_parallelism(tuned->context()));
  auto st = data::prefetch(as_stream(numbers(20)), 4);
  CHECK_FALSE(st->random_access());
  CHECK(drain(st) == iota(0, 20));
  CHECK_THROWS_CODE(data::prefetch(numbers(3), 0), Code::InvalidArgument, "prefetch: buffer_size is 0");
  CHECK_THROWS_CODE(data::prefetch(numbers(3), -7), Code::InvalidArgument, "buffer_size is -7");
}

TEST_CASE("the parallel IndexIterator delivers in order, throws failures at their turn and restores") {
  Numbers s;
  s.n = 40;
  s.parallelism = 4;
  s.prefetch = 3;
  s.fail = {5, 6, 39};
  auto ds = numbers(s);
  auto it = ds->make_iterator(1);
  int errors = 0;
  auto head = drain(*it, &errors, 10);
  CHECK(errors == 2);
  CHECK(head == std::vector<int64_t>{1000, 1001, 1002, 1003, 1004, 1007, 1008, 1009, 1010, 1011});
  auto rest = resumed(ds, *it, 1);
  errors = 0;
  auto tail = drain(*rest, &errors);
  CHECK(errors == 1);
  CHECK(tail == iota(1012, 1039));
  // At most parallelism + prefetch chunks computed ahead of the consumer: one element each while
  // an element takes more than ~100 us (chunks grow only while they are cheap), at most 1024 cheap
  // ones (the largest chunk).
  for (auto delay : {std::chrono::microseconds(1000), std::chrono::microseconds(0)}) {
    Numbers w;
    w.n = 20000;
    w.parallelism = 2;
    w.prefetch = 3;
    w.delay = delay;
    auto calls = w.calls;
    auto it2 = numbers(w)->make_iterator(0);
    Element e;
    REQUIRE(it2->next(e));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(calls->load() <= 1 + 5 * (delay.count() ? 1 : 1024));
    it2->cancel();
  }
}

TEST_CASE("prefetch_to_device copies to the device and fails for an unknown one when built") {
  auto ds = data::prefetch_to_device(as_stream(numbers(5)), "cpu", 2);
  CHECK(drain(ds) == iota(0, 5));
  CHECK_THROWS_CODE(data::prefetch_to_device(numbers(5), "tpu:3", 2), Code::NotFound, "tpu:3");
}

TEST_CASE("closing an iterator stops its threads promptly, and none outlives it") {
  const int before = thread_count();
  Numbers slow;
  slow.n = 100000;
  slow.delay = std::chrono::milliseconds(2);
  data::MapOptions o;
  o.num_parallel_calls = 4;
  auto fn = [](const Element& x) { return x; };
  auto inner = [&](const Element&) { return data::map(numbers(slow), value_spec(), fn, o); };
  data::InterleaveOptions io;
  io.cycle_length = 2;
  io.num_parallel_calls = 2;
  auto ds = data::prefetch(
      data::map(data::interleave(as_stream(numbers(4)), value_spec(), inner, io), value_spec(), fn, o), 8);
  {
    auto it = ds->make_iterator(0);
    Element e;
    REQUIRE(it->next(e));
    CHECK(thread_count() > before);
    const auto t0 = std::chrono::steady_clock::now();
    it->cancel();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    CHECK(ms.count() < 1000);
    CHECK(thread_count() == before);
    it->cancel();  // idempotent
  }
  {
    auto it = ds->make_iterator(0);  // destroyed without cancel()
    Element e;
    REQUIRE(it->next(e));
  }
  CHECK(thread_count() == before);
}

TEST_CASE("memory cache over an indexable input computes each element once, from the first iteration") {
  Numbers s;
  s.n = 6;
  auto calls = s.calls;
  auto ds = data::cache(numbers(s), "");
  CHECK(ds->random_access());
  CHECK(drain(ds, 0) == iota(0, 6));
  CHECK(drain(ds, 3) == iota(0, 6));  // later iterations get the first one's elements
  CHECK(calls->load() == 6);
}

TEST_CASE("memory cache over a stream: the first complete pass fills it") {
  Numbers s;
  s.n = 6;
  auto calls = s.calls;
  auto ds = data::cache(as_stream(numbers(s)), "");
  CHECK_FALSE(ds->random_access());
  auto partial = ds->make_iterator(0);
  CHECK(drain(*partial, nullptr, 2) == iota(0, 2));  // abandoned: publishes nothing
  partial.reset();
  CHECK(drain(ds, 0) == iota(0, 6));
  const int after_fill = calls->load();
  CHECK(drain(ds, 1) == iota(0, 6));
  CHECK(calls->load() == after_fill);
  // Restore into a reading iterator, then from a state saved while reading.
  auto it = ds->make_iterator(2);
  CHECK(drain(*it, nullptr, 4) == iota(0, 4));
  CHECK(drain(*resumed(ds, *it, 2)) == iota(4, 6));
}

TEST_CASE("file cache: written during the first pass, in place only when it completes") {
  const std::string file = tmp_path("cache_test.cache");
  std::filesystem::remove(file);
  Numbers s;
  s.n = 5;
  auto calls = s.calls;
  auto ds = data::cache(as_stream(numbers(s)), file);
  CHECK(ds->describe().find("cache('") != std::string::npos);
  {
    auto it = ds->make_iterator(0);
    CHECK(drain(*it, nullptr, 3) == iota(0, 3));
    CHECK_FALSE(std::filesystem::exists(file));
    // A restored filling pass gives the same elements but never publishes.
    auto rest = resumed(ds, *it);
    CHECK(drain(*rest) == iota(3, 5));
    CHECK_FALSE(std::filesystem::exists(file));
    CHECK(drain(*it) == iota(3, 5));
  }
  CHECK(std::filesystem::exists(file));
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(file).parent_path()))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);
  // Another pipeline with the same file reads it without running its input.
  Numbers s2;
  s2.n = 5;
  auto calls2 = s2.calls;
  auto again = data::cache(as_stream(numbers(s2)), file);
  auto it = again->make_iterator(7);
  CHECK(drain(*it, nullptr, 2) == iota(0, 2));
  CHECK(drain(*resumed(again, *it, 7)) == iota(2, 5));
  CHECK(calls2->load() == 0);
  // A pipeline with another element spec refuses the file.
  data::MapOptions o;
  auto floats = data::map(numbers(2), data::ElementSpec{{{"f", DType::Float32, {}}}},
                          [](const Element&) { return Element{scalar<float>(1)}; }, o);
  auto other = data::cache(floats, file);
  CHECK_THROWS_CODE(other->make_iterator(0), Code::InvalidArgument, "the file caches elements {value: int64[]}");
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace cairn::test
