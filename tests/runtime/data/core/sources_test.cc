// d-core's sources in C++: edge cases of range, slices, text lines, CSV, list_files, TFRecord
// files (indexed and scanned, read several at once), generators; thread-safe reads.
#include <limits>
#include <atomic>
#include <thread>

#include "runtime/data/sources.h"
#include "runtime/io/record.h"
#include "tests/runtime/data/core/core_util.h"

namespace cairn::test {
namespace {

using data::DatasetPtr;

TEST_CASE("range: counts at the limits of int64 and with negative steps") {
  CHECK(data::range(ctx(), 0, 10, 3)->cardinality() == 4);
  CHECK(data::range(ctx(), 10, 0, 3)->cardinality() == 0);
  CHECK(data::range(ctx(), 10, 0, -3)->cardinality() == 4);
  CHECK(data::range(ctx(), INT64_MIN, INT64_MAX, INT64_MAX)->cardinality() == 3);
  DatasetPtr r = data::range(ctx(), INT64_MAX - 2, INT64_MAX, 1);
  CHECK(r->cardinality() == 2);
  CHECK(run_all(r) == std::to_string(double(INT64_MAX - 2)) + "|" + std::to_string(double(INT64_MAX - 1)));
  CHECK_THROWS_CODE(data::range(ctx(), 0, 1, 0), Code::InvalidArgument, "range: step is 0");
  CHECK(check_every_position(data::range(ctx(), 5, -5, -2)) == 5);
}

TEST_CASE("from_tensor_slices: rows of every component; specs drop the first dimension") {
  DatasetPtr ds = data::from_tensor_slices(ctx(), {"x", "y"},
                                           {make<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}), make<int32_t>({7, 8, 9}, Shape{3})});
  CHECK(ds->spec().text() == "x: float32[2], y: int32[]");
  CHECK(ds->cardinality() == 3);
  CHECK(run_all(ds, 0).find("3.000000,4.000000") != std::string::npos);
  CHECK(run_all(ds, 1) == "7.000000|8.000000|9.000000");
  CHECK(data::from_tensor_slices(ctx(), {"x"}, {make<float>({}, Shape{0, 2})})->cardinality() == 0);
}

TEST_CASE("text_lines: line ends, empty lines, no final newline, empty files") {
  std::string a = temp_file("t_a.txt", "a\r\n\nb");
  std::string empty = temp_file("t_empty.txt", "");
  std::string nl = temp_file("t_nl.txt", "\n");
  DatasetPtr ds = data::text_lines(ctx(), {a, empty, nl});
  CHECK(ds->cardinality() == 4);
  CHECK(run_all(ds) == "a||b|");
  CHECK(check_every_position(ds) == 4);
  CHECK(ds->describe() == "text_lines(['" + a + "', '" + empty + "', '" + nl + "'])");
}

TEST_CASE("text_lines: many threads read lines at once") {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + "\n";
  DatasetPtr ds = data::text_lines(ctx(), {temp_file("t_many.txt", text)});
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      data::Element e;
      for (int i = t; i < 2000; i += 4) {
        ds->get(i, 0, e);
        if (text_of(e) != "line " + std::to_string(i)) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
  CHECK(ds->cardinality() == 2000);
}

TEST_CASE("csv: quoted fields, a header-only file, defaults for quoted and unquoted empties") {
  std::string a = temp_file("c_a.csv", "n,s\n1,\"\"\n2,\n3,\"a\"\"b\"\n");
  std::string head = temp_file("c_head.csv", "n,s\n");
  data::CsvOptions o;
  o.column_dtypes = {DType::Int64, DType::String};
  o.column_defaults = {std::nullopt, std::string("dflt")};
  o.header = true;
  DatasetPtr ds = data::csv(ctx(), {a, head}, o);
  CHECK(ds->spec().text() == "n: int64[], s: uint8[-1]");
  CHECK(ds->cardinality() == 3);
  // A quoted empty string is a value; an unquoted empty field takes the default.
  CHECK(run_all(ds, 1) == "|dflt|a\"b");
  CHECK(check_every_position(ds, 1) == 3);
  o.select_columns = {0, 1};
  o.column_dtypes = {DType::Int64, DType::Int64};
  o.column_defaults = {};
  DatasetPtr bad = data::csv(ctx(), {a}, o);
  data::Element e;
  CHECK_THROWS_CODE(bad->get(0, 0, e), Code::InvalidArgument, a + ":2: field 1 ('s') is empty and the column has no default");
  CHECK_THROWS_CODE(bad->get(2, 0, e), Code::InvalidArgument, a + ":4: field 1 ('s'): \"a\"b\" is not a valid int64");
  // Blank lines before the header and between records are skipped.
  data::CsvOptions h;
  h.column_dtypes = {DType::Int64, DType::String};
  h.header = true;
  DatasetPtr blank = data::csv(ctx(), {temp_file("c_blank.csv", "\n\r\nn,s\n\n1,x\n\n")}, h);
  CHECK(blank->spec().text() == "n: int64[], s: uint8[-1]");
  CHECK(run_all(blank, 1) == "x");
  o.delimiter = '"';
  CHECK_THROWS_CODE(data::csv(ctx(), {a}, o), Code::InvalidArgument, "delimiter");
}

TEST_CASE("list_files: sorted, without duplicates; a seeded order per iteration") {
  std::vector<std::string> files;
  for (int i = 0; i < 20; ++i) files.push_back(temp_file("lf" + std::to_string(100 + i) + ".bin", "x"));
  const std::string dir = files[0].substr(0, files[0].rfind('/'));
  DatasetPtr ds = data::list_files(ctx(), {dir + "/lf1*.bin", dir + "/lf10*.bin"}, false, 0);
  CHECK(ds->cardinality() == 20);
  std::string sorted;
  for (const auto& f : files) sorted += (sorted.empty() ? "" : "|") + f;
  CHECK(run_all(ds) == sorted);
  DatasetPtr sh = data::list_files(ctx(), {dir + "/lf1*.bin"}, true, 7);
  const std::string e0 = run_all(sh, 0, 0), e1 = run_all(sh, 0, 1);
  CHECK(e0 == run_all(sh, 0, 0));
  CHECK(e0 != e1);  // 20! orders: two iterations agreeing would be a bug
  CHECK(e0 != sorted);
  CHECK(e0.size() == sorted.size());
  CHECK(run_all(data::list_files(ctx(), {dir + "/lf1*.bin"}, true, 8)) != e0);
  CHECK(check_every_position(sh) == 20);
}

std::string write_records(const std::string& name, const std::vector<std::string>& recs, io::Compression c, bool index) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  io::RecordWriterOptions o;
  o.compression = c;
  o.write_index = index;
  auto w = io::RecordWriter::open(path, o);
  for (const auto& r : recs) w->write(r.data(), r.size());
  w->close();
  return path;
}

TEST_CASE("tfrecord: parallel reads in a fixed round-robin, empty files, every position") {
  for (io::Compression c : {io::Compression::None, io::Compression::Zlib}) {
    const std::string sfx = c == io::Compression::None ? "" : ".z";
    std::string a = write_records("r_a" + sfx, {"a0", "a1", "a2", "a3"}, c, false);
    std::string e = write_records("r_e" + sfx, {}, c, true);
    std::string b = write_records("r_b" + sfx, {"b0"}, c, true);
    std::string d = write_records("r_d" + sfx, {"d0", "d1"}, c, false);
    data::TfRecordOptions o;
    o.compression = c;
    CHECK(run_all(data::tfrecord(ctx(), {a, e, b, d}, o)) == "a0|a1|a2|a3|b0|d0|d1");
    o.num_parallel_reads = 2;
    DatasetPtr ds = data::tfrecord(ctx(), {a, e, b, d}, o);
    // slots: a | e (ends, empty) ; a1 ; slot 1 takes b: b0 ; a2 ; slot 1 ends ; a3 ; slot 1 takes d ...
    CHECK(run_all(ds) == "a0|a1|b0|a2|a3|d0|d1");
    CHECK(check_every_position(ds) == 7);
    o.num_parallel_reads = 8;
    CHECK(run_all(data::tfrecord(ctx(), {a, e, b, d}, o)) == "a0|b0|d0|a1|d1|a2|a3");
    CHECK(check_every_position(data::tfrecord(ctx(), {a, e, b, d}, o)) == 7);
    // More reads than files is the same order; INT32_MAX sizes nothing (capi fuzzer F-b5 hung).
    o.num_parallel_reads = std::numeric_limits<int32_t>::max();
    CHECK(run_all(data::tfrecord(ctx(), {a, e, b, d}, o)) == "a0|b0|d0|a1|d1|a2|a3");
  }
}

TEST_CASE("tfrecord: a damaged record is DATA_LOSS naming the path") {
  std::string a = write_records("r_bad", {"hello", "world"}, io::Compression::None, false);
  std::string bytes;
  {
    FILE* f = std::fopen(a.c_str(), "rb");
    char buf[256];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    bytes.assign(buf, n);
  }
  bytes[14] ^= 1;  // data of the first record
  std::string bad = temp_file("r_bad2", bytes);
  DatasetPtr ds = data::tfrecord(ctx(), {bad}, {});
  data::Element el;
  CHECK(ds->cardinality() == 2);
  CHECK_THROWS_CODE(ds->get(0, 0, el), Code::DataLoss, bad + ": corrupt record data at offset 0");
  ds->get(1, 0, el);
  CHECK(text_of(el) == "world");
  bytes[0] ^= 1;  // a length
  std::string bad3 = temp_file("r_bad3", bytes);
  CHECK_THROWS_CODE(data::tfrecord(ctx(), {bad3}, {})->cardinality(), Code::DataLoss, bad3 + ": corrupt record length at offset 0");
}

TEST_CASE("from_generator: state is the next index; the end is sticky") {
  data::ElementSpec spec{{{"v", DType::Int32, {}}}};
  int calls = 0;
  DatasetPtr ds = data::from_generator(ctx(), spec, [&](int64_t i, data::Element& out) {
    ++calls;
    if (i >= 4) return false;
    out = {scalar<int32_t>(static_cast<int32_t>(i * i))};
    return true;
  });
  CHECK(ds->cardinality() == data::kUnknown);
  CHECK_FALSE(ds->random_access());
  CHECK(run_all(ds) == "0.000000|1.000000|4.000000|9.000000");
  CHECK(check_every_position(ds) == 4);
  DatasetPtr wrong = data::from_generator(ctx(), spec, [](int64_t i, data::Element& out) {
    out = {make<int32_t>({1, 2}, Shape{2})};
    return i < 1;
  });
  auto it = wrong->make_iterator(0);
  data::Element e;
  CHECK_THROWS_CODE(it->next(e), Code::InvalidArgument, "from_generator: component 'v' (element 0) is int32[2], expected int32[]");
  CHECK_FALSE(it->next(e));
  CHECK_THROWS_CODE(data::from_generator(ctx(), data::ElementSpec{{{"a", DType::Int32, {}}, {"a", DType::Int32, {}}}},
                                         [](int64_t, data::Element&) { return false; }),
                    Code::InvalidArgument, "'a' is given twice");
}

}  // namespace
}  // namespace cairn::test
