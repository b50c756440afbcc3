// Chunks of consecutive indexes (Dataset::get_range) in the IndexIterator: an element that fails in
// the middle of a chunk comes in its turn, after the elements before it, and the iterator goes on
// with the next; states stay exact at every position, on the caller's thread and with prefetch.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>

#include "runtime/data/parallel.h"
#include "runtime/data/sources.h"
#include "runtime/io/record.h"
#include "tests/runtime/data/core/core_util.h"

using namespace cairn;
using namespace cairn::test;
using data::DatasetPtr;

namespace {

// Element i is int64 i; the indexes in `bad` fail. get_range computes up to `most` at once and stops
// before a bad one; it counts the elements it computed and the largest range asked for.
class Numbers final : public data::Dataset {
 public:
  Numbers(int64_t n, std::set<int64_t> bad, int64_t most)
      : Dataset(ctx(), data::ElementSpec{{{"v", DType::Int64, {}}}}), n_(n), bad_(std::move(bad)), most_(most) {}
  std::string describe() const override { return "numbers"; }
  int64_t cardinality() const override { return n_; }
  bool random_access() const override { return true; }
  void get(int64_t i, uint64_t, data::Element& out) const override {
    ++gets;
    if (bad_.count(i)) raise(Code::InvalidArgument, "numbers: element {} is bad", i);
    out = {scalar<int64_t>(i)};
  }
  void get_range(int64_t begin, int64_t end, uint64_t, std::vector<data::Element>& out) const override {
    out.clear();
    int64_t seen = widest.load();
    while (end - begin > seen && !widest.compare_exchange_weak(seen, end - begin)) {
    }
    for (int64_t i = begin; i < std::min(end, begin + most_) && !bad_.count(i); ++i) out.push_back({scalar<int64_t>(i)});
    in_ranges += static_cast<int64_t>(out.size());
  }
  mutable std::atomic<int64_t> gets{0}, in_ranges{0}, widest{0};

 private:
  const int64_t n_;
  const std::set<int64_t> bad_;
  const int64_t most_;
};

// The next outcome of `it`: the element's text, or "E" + the error's message; false at the end.
bool next_outcome(data::Iterator& it, std::string* out) {
  data::Element e;
  try {
    if (!it.next(e)) return false;
    *out = text_of(e);
  } catch (const Error& err) {
    *out = std::string("E") + err.what();
  }
  return true;
}

// Runs an iterator to the end: its outcomes.
std::vector<std::string> outcomes(data::Iterator& it) {
  std::vector<std::string> out;
  for (std::string s; next_outcome(it, &s);) out.push_back(s);
  return out;
}

std::vector<std::string> expected_numbers(int64_t n, const std::set<int64_t>& bad) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(bad.count(i) ? "Enumbers: element " + std::to_string(i) + " is bad"
                               : text_of({scalar<int64_t>(i)}));
  return out;
}

// Saves before every element, restores each state into a fresh iterator: the rest is the same.
void check_every_position_with_errors(const DatasetPtr& ds) {
  auto it = ds->make_iterator(0);
  std::vector<std::string> states, seen;
  for (std::string s;; seen.push_back(s)) {
    data::StateWriter w;
    it->save(w);
    states.push_back(w.take());
    if (!next_outcome(*it, &s)) break;
  }
  for (size_t p = 0; p < states.size(); ++p) {
    auto fresh = ds->make_iterator(0);
    data::StateReader r(states[p], ds->describe(), ctx());
    fresh->restore(r);
    auto rest = outcomes(*fresh);
    REQUIRE(rest.size() == seen.size() - p);
    CHECK(std::equal(rest.begin(), rest.end(), seen.begin() + static_cast<long>(p)));
  }
}

std::string records_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string record_text(int i) { return "record-" + std::to_string(i) + std::string(static_cast<size_t>(i % 7), 'x'); }

// n records "record-<i>xx.." with the data of record `bad` damaged (none if bad < 0); *bad_offset
// is where that record starts.
std::string write_numbered_records(const std::string& name, int n, int bad, uint64_t* bad_offset) {
  const std::string path = records_path(name);
  auto w = io::RecordWriter::open(path);
  uint64_t off = 0;
  for (int i = 0; i < n; ++i) {
    const std::string r = record_text(i);
    if (i == bad) *bad_offset = off;
    w->write(r.data(), r.size());
    off += io::kRecordHeaderBytes + r.size() + io::kRecordFooterBytes;
  }
  w->close();
  if (bad >= 0) {
    FILE* f = std::fopen(path.c_str(), "r+b");
    REQUIRE(f != nullptr);
    std::fseek(f, static_cast<long>(*bad_offset + io::kRecordHeaderBytes + 2), SEEK_SET);
    std::fputc('#', f);
    std::fclose(f);
  }
  return path;
}

}  // namespace

TEST_CASE("get_range: errors in the middle of a chunk come in their turn, then the next element") {
  const std::set<int64_t> bad{0, 5, 6, 300, 1999};
  for (int64_t most : {1, 3, 64, 1000}) {
    CAPTURE(most);
    auto ds = std::make_shared<Numbers>(2000, bad, most);
    auto it = ds->make_iterator(0);
    CHECK(outcomes(*it) == expected_numbers(2000, bad));
    CHECK(ds->in_ranges.load() == 2000 - static_cast<int64_t>(bad.size()));  // each computed once
    CHECK(ds->gets.load() == static_cast<int64_t>(bad.size()));              // get() only for the errors
    if (most > 1) CHECK(ds->widest.load() > 1);
    for (int64_t buffer : {int64_t{1}, int64_t{4}, int64_t{data::kAutotune}}) {
      CAPTURE(buffer);
      auto p = data::prefetch(std::make_shared<Numbers>(2000, bad, most), buffer);
      auto pit = p->make_iterator(0);
      CHECK(outcomes(*pit) == expected_numbers(2000, bad));
    }
  }
  // A dataset without get_range still runs one get() per element.
  auto plain = data::prefetch(data::range(ctx(), 0, 500, 1), data::kAutotune);
  CHECK(run_all(plain).size() > 0);
  CHECK(check_every_position(plain) == 500);
}

TEST_CASE("get_range: save and restore at every position, on the caller's thread and with prefetch") {
  const std::set<int64_t> bad{3, 40, 41, 299};
  check_every_position_with_errors(std::make_shared<Numbers>(300, bad, 64));
  check_every_position_with_errors(data::prefetch(std::make_shared<Numbers>(300, bad, 64), data::kAutotune));
  check_every_position_with_errors(data::prefetch(std::make_shared<Numbers>(300, bad, 5), 2));
  // Restoring while chunks are in flight or kept: the rest is exact.
  auto ds = data::prefetch(std::make_shared<Numbers>(300, bad, 64), data::kAutotune);
  auto it = ds->make_iterator(0);
  data::Element e;
  for (int k = 0; k < 100; ++k) {
    try {
      it->next(e);
    } catch (const Error&) {
    }
  }
  data::StateWriter w;
  it->save(w);
  for (int k = 0; k < 7; ++k) it->next(e);
  data::StateReader r(w.bytes(), ds->describe(), ctx());
  it->restore(r);
  auto rest = outcomes(*it);
  auto all = expected_numbers(300, bad);
  CHECK(rest == std::vector<std::string>(all.begin() + 100, all.end()));
}

TEST_CASE("tfrecord: a corrupt record in the middle of a chunk is DATA_LOSS naming the path and offset, then the next") {
  uint64_t bad_offset = 0;
  const std::string path = write_numbered_records("chunk_bad.tfrecord", 300, 137, &bad_offset);
  REQUIRE(bad_offset > 0);
  std::vector<std::string> want;
  for (int i = 0; i < 300; ++i) want.push_back(record_text(i));
  want[137] = "E";
  auto check_run = [&](const DatasetPtr& ds) {
    auto it = ds->make_iterator(0);
    auto got = outcomes(*it);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (i != 137) {
        CHECK(got[i] == want[i]);
        continue;
      }
      CHECK(got[i].rfind("E", 0) == 0);
      CHECK(got[i].find(path + ": corrupt record data at offset " + std::to_string(bad_offset)) != std::string::npos);
    }
  };
  DatasetPtr ds = data::tfrecord(ctx(), {path}, {});
  check_run(ds);
  check_run(data::prefetch(ds, data::kAutotune));
  check_run(data::prefetch(data::tfrecord(ctx(), {path}, {}), 3));
  check_every_position_with_errors(data::prefetch(ds, data::kAutotune));
  // get_range itself stops before the damaged record.
  std::vector<data::Element> got;
  ds->get_range(130, 200, 0, got);
  REQUIRE(got.size() == 7);
  CHECK(text_of(got[6]) == record_text(136));
  ds->get_range(138, 150, 0, got);
  REQUIRE(got.size() == 12);
  CHECK(text_of(got[0]) == record_text(138));
  data::Element el;
  CHECK_THROWS_CODE(ds->get(137, 0, el), Code::DataLoss, path + ": corrupt record data at offset " + std::to_string(bad_offset));
}

TEST_CASE("tfrecord: ranges across files, with parallel reads, empty records, and past the end") {
  uint64_t unused = 0;
  const std::string a = write_numbered_records("chunk_a.tfrecord", 50, -1, &unused);
  const std::string b = write_numbered_records("chunk_b.tfrecord", 3, -1, &unused);
  const std::string empty_records = records_path("chunk_e.tfrecord");
  {
    auto w = io::RecordWriter::open(empty_records);
    w->write("", 0);
    w->write("z", 1);
    w->write("", 0);
    w->close();
  }
  std::string want;
  for (int i = 0; i < 50; ++i) want += (i ? "|" : "") + record_text(i);
  std::string want_b;
  for (int i = 0; i < 3; ++i) want_b += "|" + record_text(i);
  DatasetPtr ds = data::tfrecord(ctx(), {a, b, empty_records}, {});
  CHECK(run_all(ds) == want + want_b + "||z|");
  CHECK(run_all(data::prefetch(ds, 2)) == want + want_b + "||z|");
  CHECK(check_every_position(data::prefetch(ds, data::kAutotune)) == 56);
  std::vector<data::Element> got;
  ds->get_range(48, 1000, 0, got);  // across the files, stopping at the end
  REQUIRE(got.size() == 8);
  CHECK(text_of(got[2]) == record_text(0));
  CHECK(text_of(got[5]).empty());
  data::TfRecordOptions o;
  o.num_parallel_reads = 2;  // a, b interleaved: runs of one record
  DatasetPtr two = data::tfrecord(ctx(), {a, b, empty_records}, o);
  two->get_range(0, 10, 0, got);
  REQUIRE(got.size() == 10);
  CHECK(text_of(got[0]) == record_text(0));
  CHECK(text_of(got[1]) == record_text(0));
  CHECK(text_of(got[2]) == record_text(1));
  CHECK(check_every_position(data::prefetch(two, data::kAutotune)) == 56);
  // text_lines reads its lines in ranges too.
  const std::string lines = temp_file("chunk_lines.txt", "one\ntwo\r\n\nfour");
  DatasetPtr tl = data::text_lines(ctx(), {lines});
  tl->get_range(1, 4, 0, got);
  REQUIRE(got.size() == 3);
  CHECK(text_of(got[0]) == "two");
  CHECK(text_of(got[1]).empty());
  CHECK(text_of(got[2]) == "four");
  CHECK(check_every_position(data::prefetch(tl, 2)) == 4);
}
