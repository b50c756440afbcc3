// TFRecord files written by TensorFlow 2.21 (tests/golden/tfrecord): Cairn reads them in all three
// compressions, and writes the uncompressed one byte for byte.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/io/record.h"
#include "runtime/io/record_index.h"
#include "runtime/io/record_reader.h"
#include "tests/runtime/io/io_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::io {
namespace {

const std::string kDir = "tests/golden/tfrecord/";

// records.txt: one line per record, "<length> <hex bytes>".
std::vector<std::string> expected_records() {
  std::ifstream in(kDir + "records.txt");
  REQUIRE(in.good());
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    size_t len = 0;
    std::string hex;
    fields >> len >> hex;
    REQUIRE(hex.size() == 2 * len);
    std::string bytes(len, '\0');
    for (size_t i = 0; i < len; ++i) bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    out.push_back(std::move(bytes));
  }
  return out;
}

TEST_CASE("TensorFlow's record files read in every compression, every way") {
  const std::vector<std::string> want = expected_records();
  REQUIRE(want.size() == 11);
  CHECK(want[9].size() == 70000);
  const std::pair<const char*, Compression> files[] = {
      {"records_plain.tfrecord", Compression::None},
      {"records_zlib.tfrecord", Compression::Zlib},
      {"records_gzip.tfrecord", Compression::Gzip},
  };
  for (const auto& [name, c] : files) {
    CAPTURE(name);
    const std::string path = kDir + name;
    CHECK(test::read_records(path, {c}) == want);
    CHECK(test::read_records(path, {c, true, 5}) == want);  // every record straddles buffers
    RecordReaderOptions ahead{c};
    ahead.buffer_size = 4096;
    ahead.force_read_ahead = true;
    CHECK(test::read_records(path, ahead) == want);
    CHECK(count_records(path, {c}) == want.size());
  }
  // Wrong compression: an error, not a silent misread.
  CHECK_THROWS_CODE(test::read_records(kDir + "records_gzip.tfrecord", {Compression::Zlib}), Code::DataLoss,
                    "records_gzip.tfrecord: corrupt ZLIB stream");
  CHECK_THROWS_CODE(test::read_records(kDir + "records_zlib.tfrecord", {}), Code::DataLoss,
                    "records_zlib.tfrecord: corrupt record at offset 0: length checksum mismatch");
  // The Example file holds four records (their contents are the Example parser's tests).
  CHECK(count_records(kDir + "examples.tfrecord", {}) == 4);
}

TEST_CASE("Cairn's writer produces TensorFlow's files byte for byte") {
  const std::vector<std::string> want = expected_records();
  const std::string ours = test::temp_path("golden-plain");
  test::write_records(ours, want);
  CHECK(test::read_file(ours) == test::read_file(kDir + "records_plain.tfrecord"));
  // With the same deflate parameters as TensorFlow's ZlibOutputBuffer and Debian's zlib, even the
  // compressed streams come out identical (another deflate, e.g. zlib-ng, may differ and still read).
  for (auto [c, name] : {std::pair{Compression::Zlib, "records_zlib.tfrecord"}, {Compression::Gzip, "records_gzip.tfrecord"}}) {
    const std::string path = test::temp_path("golden-z");
    test::write_records(path, want, {c});
    CHECK(test::read_records(path, {c}) == want);
    CHECK(test::read_file(path) == test::read_file(kDir + name));
  }
}

TEST_CASE("an index built for TensorFlow's file gives random access into it") {
  const std::vector<std::string> want = expected_records();
  const std::string path = test::temp_path("golden-indexed");
  test::write_file(path, test::read_file(kDir + "records_gzip.tfrecord"));
  RecordIndex idx = build_record_index(path, {Compression::Gzip});
  CHECK(idx.count() == want.size());
  auto r = RecordReader::open(path, {Compression::Gzip});
  std::string_view rec;
  for (uint64_t i : {9, 3, 10, 0}) {
    r->seek_record(i);
    REQUIRE(r->next(&rec));
    CHECK(rec == want[i]);
  }
}

}  // namespace
}  // namespace cairn::io
