// Writes the seed corpus of the record reader fuzzer (see README.md):
//   bazel run //tests/fuzz:make_record_fuzz_corpus -- "$PWD/tests/fuzz/corpus/record_reader"
// Each seed is a mode byte (record_reader_fuzzer.cc) followed by a record file.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/io/record.h"

using namespace cairn::io;

namespace {

std::string record_file(const std::string& scratch, Compression c, const std::vector<std::string>& recs) {
  auto w = RecordWriter::open(scratch, {c});
  for (const auto& r : recs) w->write(r.data(), r.size());
  w->close();
  std::ifstream in(scratch, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void seed(const std::string& dir, const std::string& name, char mode, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary) << mode << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_record_fuzz_corpus OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string scratch = dir + "/.scratch";
  const std::vector<std::string> recs = {"hello", "", std::string(40, 'r'), "tail"};
  const std::string plain = record_file(scratch, Compression::None, recs);
  seed(dir, "plain", 0, plain);
  seed(dir, "plain_nocrc_tiny_buffer", 4 | 8 | 16, plain);  // no read-ahead: a thread per 7 bytes is slow to replay
  seed(dir, "plain_truncated", 0, plain.substr(0, plain.size() - 7));
  // Over 4 KiB: with mode 0 the read-ahead ring runs (4 KiB chunks).
  seed(dir, "plain_read_ahead", 0, record_file(scratch, Compression::None, {std::string(2500, 'a'), "b", std::string(3000, 'c')}));
  seed(dir, "zlib", 1, record_file(scratch, Compression::Zlib, recs));
  seed(dir, "gzip_nocrc", 2 | 4, record_file(scratch, Compression::Gzip, recs));
  const std::string gz = record_file(scratch, Compression::Gzip, {"a", "bb"});
  seed(dir, "gzip_two_members", 2, gz + gz);
  std::remove(scratch.c_str());
  return 0;
}
