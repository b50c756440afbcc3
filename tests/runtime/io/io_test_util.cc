#include "tests/runtime/io/io_test_util.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace cairn::test {

std::string temp_path(const std::string& name) {
  static int counter = 0;
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name + "-" + std::to_string(++counter);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

void append_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

void write_records(const std::string& path, const std::vector<std::string>& records,
                   const io::RecordWriterOptions& opts) {
  auto w = io::RecordWriter::open(path, opts);
  for (const auto& r : records) w->write(r.data(), r.size());
  w->close();
}

std::vector<std::string> read_rest(io::RecordReader& r) {
  std::vector<std::string> out;
  std::string_view rec;
  while (r.next(&rec)) out.emplace_back(rec);
  return out;
}

std::vector<std::string> read_records(const std::string& path, const io::RecordReaderOptions& opts) {
  auto r = io::RecordReader::open(path, opts);
  return read_rest(*r);
}

std::vector<std::string> sample_records(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    size_t len = i % 5 == 0 ? 0 : (i % 7 == 0 ? 3000 + rng() % 2000 : rng() % 100);
    std::string s(len, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % 7 == 0 ? rng() : 'a' + i % 26);  // compressible-ish
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace cairn::test
