// The record writer and reader: framing, round trips in every compression, flush and append.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/io/crc32c.h"
#include "runtime/io/record.h"
#include "runtime/io/record_reader.h"
#include "tests/runtime/io/io_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::io {
namespace {

using test::read_file;
using test::read_records;
using test::temp_path;
using test::write_records;

const Compression kAll[] = {Compression::None, Compression::Zlib, Compression::Gzip};

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string le32(uint32_t v) { return le64(v).substr(0, 4); }

// The TFRecord framing of one record, from FORMATS.md.
std::string framed(const std::string& data) {
  std::string len = le64(data.size());
  return len + le32(mask_crc(crc32c(len.data(), 8))) + data + le32(mask_crc(crc32c(data.data(), data.size())));
}

TEST_CASE("RecordWriter: uncompressed output is TensorFlow's framing, byte for byte") {
  std::string path = temp_path("framing");
  write_records(path, {"abc", "", std::string(300, 'x')});
  CHECK(read_file(path) == framed("abc") + framed("") + framed(std::string(300, 'x')));
  auto w = RecordWriter::open(path);
  CHECK(w->records() == 0);
  w->write("q", 1);
  CHECK(w->records() == 1);
  CHECK(w->path() == path);
}

TEST_CASE("records round-trip in every compression, with empty and large records") {
  std::vector<std::string> recs = test::sample_records(300);
  recs.push_back(std::string(5 << 20, 'L'));  // larger than the reader's default chunk
  recs.push_back("");
  recs.push_back("tail");
  for (Compression c : kAll) {
    CAPTURE(compression_name(c));
    std::string path = temp_path("roundtrip");
    write_records(path, recs, {c});
    CHECK(read_records(path, {c}) == recs);
    // A tiny buffer sends every record through the straddling path.
    std::string small = temp_path("roundtrip-small");
    std::vector<std::string> few(recs.begin(), recs.begin() + 40);
    write_records(small, few, {c});
    CHECK(read_records(small, {c, true, 7}) == few);
    CHECK(read_records(path, {c, true, 1 << 20}) == recs);
    CHECK(read_records(path, {c, false, 4096, false}) == recs);
  }
}

TEST_CASE("compressed files are compressed, and zlib/gzip headers are as TensorFlow writes them") {
  std::vector<std::string> recs(100, std::string(1000, 'z'));
  std::string pz = temp_path("z"), pg = temp_path("g"), pn = temp_path("n");
  write_records(pn, recs);
  write_records(pz, recs, {Compression::Zlib});
  write_records(pg, recs, {Compression::Gzip, 9});
  std::string z = read_file(pz), g = read_file(pg);
  CHECK(z.size() < read_file(pn).size() / 20);
  CHECK(static_cast<uint8_t>(z[0]) == 0x78);  // zlib: deflate, 32 KiB window
  CHECK(static_cast<uint8_t>(g[0]) == 0x1f);  // gzip magic
  CHECK(static_cast<uint8_t>(g[1]) == 0x8b);
  // Read with the wrong compression: corrupt, not silently empty.
  CHECK_THROWS_CODE(read_records(pz, {Compression::Gzip}), Code::DataLoss, pz);
}

TEST_CASE("flush makes every record so far readable, in every compression") {
  for (Compression c : kAll) {
    CAPTURE(compression_name(c));
    std::string path = temp_path("flush");
    auto w = RecordWriter::open(path, {c});
    auto r = RecordReader::open(path, {c});
    std::string_view rec;
    CHECK_FALSE(r->next(&rec));
    CHECK_FALSE(r->partial());
    w->write("one", 3);
    w->write("two", 3);
    w->flush();
    REQUIRE(r->next(&rec));
    CHECK(rec == "one");
    REQUIRE(r->next(&rec));
    CHECK(rec == "two");
    CHECK_FALSE(r->next(&rec));
    w->write("three", 5);
    w->sync();
    REQUIRE(r->next(&rec));
    CHECK(rec == "three");
    w->close();
    w->close();  // idempotent
    CHECK_FALSE(r->next(&rec));
    CHECK_THROWS_CODE(w->write("x", 1), Code::FailedPrecondition, "closed");
  }
}

TEST_CASE("append continues a file, also across concatenated zlib and gzip streams") {
  for (Compression c : kAll) {
    CAPTURE(compression_name(c));
    std::string path = temp_path("append");
    write_records(path, {"a", "b"}, {c});
    RecordWriterOptions o{c};
    o.append = true;
    write_records(path, {"c"}, o);
    write_records(path, {"d", ""}, o);
    CHECK(read_records(path, {c}) == std::vector<std::string>{"a", "b", "c", "d", ""});
  }
}

TEST_CASE("writer and reader errors name the path") {
  std::string missing = temp_path("no-such-dir") + "/f.tfrecord";
  CHECK_THROWS_CODE(RecordWriter::open(missing), Code::NotFound, missing);
  CHECK_THROWS_CODE(RecordReader::open(missing), Code::NotFound, missing);
  std::string path = temp_path("opts");
  CHECK_THROWS_CODE(RecordWriter::open(path, {Compression::Zlib, 12}), Code::InvalidArgument, "level 12");
  CHECK_THROWS_CODE(RecordWriter::open(path, {static_cast<Compression>(5)}), Code::InvalidArgument, "compression 5");
  RecordWriterOptions o;
  o.append = true;
  o.write_index = true;
  CHECK_THROWS_CODE(RecordWriter::open(path, o), Code::InvalidArgument, "write_index");
  auto w = RecordWriter::open(path);
  CHECK_THROWS_CODE(w->write(nullptr, 3), Code::InvalidArgument, "null");
  w->write(nullptr, 0);  // an empty record may come without a buffer
  w->close();
  CHECK(read_records(path) == std::vector<std::string>{""});
}

}  // namespace
}  // namespace cairn::io
