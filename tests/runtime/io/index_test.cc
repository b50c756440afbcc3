// The .cairnidx sidecar: counts, seek to record i, sharding, stale and corrupt indexes.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/io/record.h"
#include "runtime/io/record_index.h"
#include "runtime/io/record_reader.h"
#include "tests/runtime/io/io_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::io {
namespace {

using test::read_file;
using test::temp_path;
using test::write_file;

const Compression kAll[] = {Compression::None, Compression::Zlib, Compression::Gzip};

std::string indexed_file(const std::vector<std::string>& recs, Compression c) {
  std::string path = temp_path("indexed");
  RecordWriterOptions o{c};
  o.write_index = true;
  test::write_records(path, recs, o);
  return path;
}

TEST_CASE("the writer's index counts, seeks to any record and shards, in every compression") {
  const auto recs = test::sample_records(97);
  for (Compression c : kAll) {
    CAPTURE(compression_name(c));
    std::string path = indexed_file(recs, c);
    RecordReaderOptions ro{c};
    std::string why;
    auto idx = load_record_index(path, c, &why);
    REQUIRE_MESSAGE(idx, why);
    CHECK(idx->count() == recs.size());
    CHECK(count_records(path, ro) == recs.size());
    auto r = RecordReader::open(path, ro);
    std::string_view rec;
    for (uint64_t i : {50, 3, 96, 0, 60, 59}) {  // forwards and backwards
      r->seek_record(i);
      CHECK(r->offset() == idx->offsets[i]);
      REQUIRE(r->next(&rec));
      CHECK(rec == recs[i]);
    }
    r->seek_record(recs.size());
    CHECK_FALSE(r->next(&rec));
    CHECK_THROWS_CODE(r->seek_record(recs.size() + 1), Code::OutOfRange, "past the end");
    std::vector<std::string> joined;
    for (uint64_t s = 0; s < 4; ++s) {
      auto [begin, end] = shard_range(idx->count(), 4, s);
      r->seek_record(begin);
      for (uint64_t i = begin; i < end; ++i) {
        REQUIRE(r->next(&rec));
        joined.emplace_back(rec);
      }
    }
    CHECK(joined == recs);
  }
}

TEST_CASE("shard_range splits evenly and covers every record once") {
  CHECK(shard_range(10, 3, 0) == std::pair<uint64_t, uint64_t>{0, 3});
  CHECK(shard_range(10, 3, 1) == std::pair<uint64_t, uint64_t>{3, 6});
  CHECK(shard_range(10, 3, 2) == std::pair<uint64_t, uint64_t>{6, 10});
  CHECK(shard_range(2, 5, 0) == std::pair<uint64_t, uint64_t>{0, 0});
  CHECK(shard_range(UINT64_MAX, 2, 1).second == UINT64_MAX);
  CHECK_THROWS_CODE(shard_range(10, 3, 3), Code::InvalidArgument, "shard 3 of 3");
  CHECK_THROWS_CODE(shard_range(10, 0, 0), Code::InvalidArgument, "shard 0 of 0");
}

TEST_CASE("seek to a record's offset; a wrong offset is caught by the length checksum") {
  const auto recs = test::sample_records(20);
  for (Compression c : kAll) {
    CAPTURE(compression_name(c));
    std::string path = temp_path("seek");
    test::write_records(path, recs, {c});
    auto r = RecordReader::open(path, {c});
    std::vector<uint64_t> offsets;
    std::string_view rec;
    for (;;) {
      offsets.push_back(r->offset());
      if (!r->next(&rec)) break;
    }
    r->seek(offsets[7]);
    REQUIRE(r->next(&rec));
    CHECK(rec == recs[7]);
    r->seek(offsets[2]);
    REQUIRE(r->next(&rec));
    CHECK(rec == recs[2]);
    r->seek(offsets[2] + 1);
    CHECK_THROWS_CODE(r->next(&rec), Code::DataLoss, "at offset " + std::to_string(offsets[2] + 1));
    if (c != Compression::None)
      CHECK_THROWS_CODE(r->seek(offsets.back() + 5), Code::OutOfRange, "past the end");
  }
}

TEST_CASE("a stale or corrupt index is ignored: counts scan, seek_record says why, build_record_index repairs") {
  const auto recs = test::sample_records(10);
  std::string path = indexed_file(recs, Compression::None);
  const std::string ipath = index_path(path);
  const std::string good_index = read_file(ipath);
  RecordReaderOptions ro;

  // The file grew after indexing.
  test::append_file(path, read_file(path).substr(0, 16 + recs[0].size()));
  std::string why;
  CHECK_FALSE(load_record_index(path, Compression::None, &why));
  CHECK(why.find("stale") != std::string::npos);
  CHECK(count_records(path, ro) == 11);
  auto r = RecordReader::open(path);
  CHECK_THROWS_CODE(r->seek_record(1), Code::FailedPrecondition, "stale");
  RecordIndex rebuilt = build_record_index(path, ro);
  CHECK(rebuilt.count() == 11);
  CHECK(load_record_index(path, Compression::None));
  CHECK(count_records(path, ro) == 11);

  // Corruption anywhere in the sidecar.
  const std::string now = read_file(ipath);
  for (size_t i = 0; i < now.size(); ++i) {
    std::string bad = now;
    bad[i] ^= 0x10;
    write_file(ipath, bad);
    CAPTURE(i);
    CHECK_FALSE(load_record_index(path, Compression::None, &why));
    CHECK(count_records(path, ro) == 11);
  }
  write_file(ipath, now.substr(0, now.size() - 3));
  CHECK_FALSE(load_record_index(path, Compression::None, &why));
  write_file(ipath, now);
  CHECK_FALSE(load_record_index(path, Compression::Gzip, &why));
  CHECK(why.find("compression NONE") != std::string::npos);

  std::remove(ipath.c_str());
  CHECK_FALSE(load_record_index(path, Compression::None, &why));
  CHECK(why.find("no index") != std::string::npos);
  auto r2 = RecordReader::open(path);
  CHECK_THROWS_CODE(r2->seek_record(0), Code::FailedPrecondition, "no index");
  (void)good_index;
}

TEST_CASE("build_record_index on a file with a partial tail indexes the complete records") {
  const auto recs = test::sample_records(5);
  std::string path = temp_path("partial");
  test::write_records(path, recs);
  test::append_file(path, std::string(7, 'p'));
  RecordIndex idx = build_record_index(path, {});
  CHECK(idx.count() == 5);
  CHECK(count_records(path, {}) == 5);
  CHECK(load_record_index(path, Compression::None));
}

TEST_CASE("a new writer removes the sidecar of the file it replaces") {
  std::string path = indexed_file({"a", "b"}, Compression::None);
  CHECK(load_record_index(path, Compression::None));
  test::write_records(path, {"c"});
  std::string why;
  CHECK_FALSE(load_record_index(path, Compression::None, &why));
  CHECK(why.find("no index") != std::string::npos);
}

}  // namespace
}  // namespace cairn::io
