// Corrupt records are DataLoss naming the file and offset; a truncated tail is "not yet" and resumes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/io/record.h"
#include "runtime/io/record_reader.h"
#include "tests/runtime/io/io_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::io {
namespace {

using test::append_file;
using test::read_file;
using test::read_records;
using test::temp_path;
using test::write_file;
using test::write_records;

const std::vector<std::string> kRecs = {"hello", "", "world, 16 bytes!", "x"};

// Where each record of kRecs starts, and the end.
std::vector<uint64_t> starts() {
  std::vector<uint64_t> out{0};
  for (const auto& r : kRecs) out.push_back(out.back() + r.size() + 16);
  return out;
}

TEST_CASE("every single-byte corruption of an uncompressed file is DataLoss naming the path and the record's offset") {
  std::string clean_path = temp_path("clean");
  write_records(clean_path, kRecs);
  const std::string clean = read_file(clean_path);
  const std::vector<uint64_t> at = starts();
  REQUIRE(clean.size() == at.back());
  std::string path = temp_path("corrupt");
  int checked = 0;
  for (size_t i = 0; i < clean.size(); ++i) {
    size_t rec = 0;
    while (at[rec + 1] <= i) ++rec;
    for (int flip : {0x01, 0x80, 0xff, 0x5a}) {
      std::string bad = clean;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      write_file(path, bad);
      CAPTURE(i);
      CAPTURE(flip);
      std::string want = path + ": corrupt record at offset " + std::to_string(at[rec]);
      CHECK_THROWS_CODE(read_records(path), Code::DataLoss, want);
      // Without checksums the reader neither crashes nor hangs, whatever it returns.
      try {
        (void)read_records(path, {Compression::None, false});
      } catch (const Error& e) {
        CHECK(e.code() == Code::DataLoss);
      }
      ++checked;
    }
  }
  CHECK(checked == 4 * static_cast<int>(clean.size()));
}

TEST_CASE("a truncated last record is 'not yet' at every cut, and the reader resumes when the rest arrives") {
  std::string full_path = temp_path("full");
  write_records(full_path, kRecs);
  const std::string full = read_file(full_path);
  const std::vector<uint64_t> at = starts();
  const uint64_t last = at[kRecs.size() - 1];
  for (uint64_t cut = last; cut < full.size(); ++cut) {
    CAPTURE(cut);
    std::string path = temp_path("tail");
    write_file(path, full.substr(0, cut));
    auto r = RecordReader::open(path, {Compression::None, true, 8});  // small chunks: the spill path too
    std::vector<std::string> got = test::read_rest(*r);
    CHECK(got == std::vector<std::string>(kRecs.begin(), kRecs.end() - 1));
    CHECK(r->partial() == (cut > last));
    CHECK(r->offset() == last);
    std::string_view rec;
    CHECK_FALSE(r->next(&rec));  // asking again changes nothing
    CHECK(r->offset() == last);
    append_file(path, full.substr(cut));
    REQUIRE(r->next(&rec));
    CHECK(rec == kRecs.back());
    CHECK_FALSE(r->next(&rec));
    CHECK_FALSE(r->partial());
    CHECK(r->offset() == full.size());
  }
}

TEST_CASE("a record written a byte at a time is seen exactly once, when complete") {
  std::string full_path = temp_path("bytes");
  write_records(full_path, {"abc", std::string(100, 'q')});
  const std::string full = read_file(full_path);
  std::string path = temp_path("growing");
  write_file(path, "");
  auto r = RecordReader::open(path);
  std::vector<std::string> got;
  for (size_t i = 0; i < full.size(); ++i) {
    append_file(path, full.substr(i, 1));
    std::string_view rec;
    while (r->next(&rec)) got.emplace_back(rec);
    CHECK(got.size() == (i + 1 >= full.size() ? 2u : i + 1 >= 19 ? 1u : 0u));
  }
}

TEST_CASE("compressed streams: a cut anywhere reads a prefix of the records without error; the rest follows") {
  for (Compression c : {Compression::Zlib, Compression::Gzip}) {
    CAPTURE(compression_name(c));
    std::string full_path = temp_path("zfull");
    auto w = RecordWriter::open(full_path, {c});
    for (size_t i = 0; i + 1 < kRecs.size(); ++i) w->write(kRecs[i].data(), kRecs[i].size());
    w->flush();
    const size_t flushed = read_file(full_path).size();
    w->write(kRecs.back().data(), kRecs.back().size());
    w->close();
    const std::string full = read_file(full_path);
    for (size_t cut = 0; cut < full.size(); ++cut) {
      CAPTURE(cut);
      std::string path = temp_path("ztail");
      write_file(path, full.substr(0, cut));
      auto r = RecordReader::open(path, {c});
      std::vector<std::string> got = test::read_rest(*r);
      REQUIRE(got.size() <= kRecs.size());
      CHECK(got == std::vector<std::string>(kRecs.begin(), kRecs.begin() + got.size()));
      if (cut >= flushed) CHECK(got.size() >= kRecs.size() - 1);  // the sync flush made them readable
      append_file(path, full.substr(cut));
      std::vector<std::string> rest = test::read_rest(*r);
      got.insert(got.end(), rest.begin(), rest.end());
      CHECK(got == kRecs);
    }
  }
}

TEST_CASE("corrupt compressed data is DataLoss naming the path and the compressed offset") {
  std::string path = temp_path("zbad");
  write_records(path, test::sample_records(50), {Compression::Zlib});
  std::string bytes = read_file(path);
  bytes[bytes.size() / 2] ^= 0x55;
  bytes[bytes.size() / 2 + 1] ^= 0x55;
  write_file(path, bytes);
  CHECK_THROWS_CODE(read_records(path, {Compression::Zlib}), Code::DataLoss, path);
  std::string header = temp_path("zhdr");
  write_file(header, "not a zlib stream at all");
  CHECK_THROWS_CODE(read_records(header, {Compression::Zlib}), Code::DataLoss, "corrupt ZLIB stream at compressed offset");
}

TEST_CASE("an impossible length is DataLoss even without checksums") {
  std::string path = temp_path("huge");
  std::string rec(16, '\0');
  for (int i = 0; i < 8; ++i) rec[i] = '\x7f';
  write_file(path, rec);
  CHECK_THROWS_CODE(read_records(path, {Compression::None, false}), Code::DataLoss, "impossible length");
  CHECK_THROWS_CODE(read_records(path), Code::DataLoss, "length checksum mismatch");
}

}  // namespace
}  // namespace cairn::io

namespace cairn::io {
namespace {

TEST_CASE("large records (read straight from the file) are 'not yet' when cut, resume, and are checked") {
  const std::vector<std::string> recs = {"small", std::string(3 << 20, 'B'), std::string(600 << 10, 'C'), "end"};
  std::string full_path = temp_path("large");
  write_records(full_path, recs);
  const std::string full = read_file(full_path);
  const size_t second = 5 + 16, third = second + recs[1].size() + 16;
  for (size_t cut : {second + 5, second + 12, second + 100000, third - 1, third + 300000, full.size() - 1}) {
    CAPTURE(cut);
    std::string path = temp_path("large-cut");
    write_file(path, full.substr(0, cut));
    auto r = RecordReader::open(path);
    std::vector<std::string> got = test::read_rest(*r);
    CHECK(r->partial());
    append_file(path, full.substr(cut, (full.size() - cut) / 2));  // half of the rest: still not there
    std::vector<std::string> more = test::read_rest(*r);
    got.insert(got.end(), more.begin(), more.end());
    append_file(path, full.substr(cut + (full.size() - cut) / 2));
    more = test::read_rest(*r);
    got.insert(got.end(), more.begin(), more.end());
    CHECK(got == recs);
  }
  std::string bad = full;
  bad[second + 12 + 2000000] ^= 1;
  std::string path = temp_path("large-bad");
  write_file(path, bad);
  CHECK_THROWS_CODE(read_records(path), Code::DataLoss, "at offset " + std::to_string(second) + ": data checksum");
}

}  // namespace
}  // namespace cairn::io
