// TFRecord write and read speed against raw write()/read() of the same bytes, in the same run
// (issue 12 target: read >= 0.8x raw read with checksums on), and CRC32C speed.
//
//   bazel run -c opt //bench:records_bench -- [DIR] [MiB]   (DIR defaults to /tmp, 256 MiB)
//
// Each case writes MiB of records of one size with RecordWriter, and the same framed bytes with
// plain write() of 1 MiB blocks; then reads the record file with RecordReader (checksums verified)
// and with plain read() of 1 MiB blocks. The files are in the page cache (just written, read once
// before timing). Reads run with the read-ahead thread (the default) and without, interleaved
// with the raw reads, best of 9; writes best of 5. CAIRN_RECORDS_BUFFER=<bytes> sets the reader's buffer_size. Prints figures; it is not a test.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "runtime/io/crc32c.h"
#include "runtime/io/record.h"
#include "runtime/io/record_reader.h"

using namespace cairn::io;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void die(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

template <class F>
double best_of(int runs, F&& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) best = std::min(best, f());
  return best;
}

double raw_write(const std::string& path, const std::string& bytes) {
  auto t0 = Clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die(path);
  for (size_t at = 0; at < bytes.size();) {
    size_t n = std::min<size_t>(1 << 20, bytes.size() - at);
    ssize_t put = ::write(fd, bytes.data() + at, n);
    if (put <= 0) die("write");
    at += static_cast<size_t>(put);
  }
  ::close(fd);
  return seconds_since(t0);
}

double raw_read(const std::string& path, uint64_t* total) {
  std::vector<char> buf(1 << 20);
  auto t0 = Clock::now();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die(path);
  uint64_t sum = 0;
  for (;;) {
    ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0) die("read");
    if (got == 0) break;
    sum += static_cast<uint64_t>(got);
  }
  ::close(fd);
  *total = sum;
  return seconds_since(t0);
}

void run_case(const std::string& dir, size_t total_bytes, size_t record_bytes, Compression c) {
  const size_t n = total_bytes / record_bytes;
  std::string payload(record_bytes, '\0');
  uint64_t s = 88172645463325252ull;
  for (auto& ch : payload) {  // incompressible for uncompressed cases; text-like for compressed ones
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    ch = c == Compression::None ? static_cast<char>(s) : static_cast<char>('a' + (s >> 60));
  }
  const std::string rec_path = dir + "/cairn-records-bench.tfrecord";
  const std::string raw_path = dir + "/cairn-records-bench.raw";

  double t_write = best_of(5, [&] {
    auto t0 = Clock::now();
    auto w = RecordWriter::open(rec_path, {c});
    for (size_t i = 0; i < n; ++i) w->write(payload.data(), payload.size());
    w->close();
    return seconds_since(t0);
  });
  std::string framed;  // the record file's bytes, for the raw baselines
  {
    int fd = ::open(rec_path.c_str(), O_RDONLY);
    framed.resize(static_cast<size_t>(::lseek(fd, 0, SEEK_END)));
    if (::pread(fd, framed.data(), framed.size(), 0) != static_cast<ssize_t>(framed.size())) die("pread");
    ::close(fd);
  }
  double t_raw_write = best_of(5, [&] { return raw_write(raw_path, framed); });

  uint64_t raw_bytes = 0;
  raw_read(rec_path, &raw_bytes);  // warm the page cache
  size_t got = 0;
  auto read_once = [&](bool read_ahead) {
    auto t0 = Clock::now();
    RecordReaderOptions ro{c};
    ro.read_ahead = read_ahead;
    ro.force_read_ahead = read_ahead;
    if (const char* b = std::getenv("CAIRN_RECORDS_BUFFER")) ro.buffer_size = std::strtoull(b, nullptr, 10);
    auto r = RecordReader::open(rec_path, ro);
    std::string_view rec;
    got = 0;
    while (r->next(&rec)) ++got;
    return seconds_since(t0);
  };
  // Interleaved, so a burst of load elsewhere on the machine hits all three alike; best of 9.
  double t_raw_read = 1e30, t_read = 1e30, t_read_single = 1e30;
  for (int i = 0; i < 9; ++i) {
    t_raw_read = std::min(t_raw_read, raw_read(rec_path, &raw_bytes));
    t_read = std::min(t_read, read_once(true));
    t_read_single = std::min(t_read_single, read_once(false));
  }
  if (got != n) {
    std::fprintf(stderr, "read %zu records, wrote %zu\n", got, n);
    std::exit(1);
  }
  const double data = static_cast<double>(n) * record_bytes / 1e9;  // payload GB
  if (c != Compression::None) {  // raw I/O of a compressed file is no peer: payload speeds only
    std::printf("%-4s %8zu-byte records x %7zu: write %6.2f GB/s, read %6.2f GB/s of payload (level 6, %.1fx smaller)\n",
                compression_name(c), record_bytes, n, data / t_write, data / t_read, data * 1e9 / framed.size());
    ::unlink(rec_path.c_str());
    ::unlink(raw_path.c_str());
    return;
  }
  const double file = static_cast<double>(framed.size()) / 1e9;
  std::printf("%-4s %8zu-byte records x %7zu: write %6.2f GB/s (raw write of the file %6.2f GB/s, %.2fx)  "
              "read %6.2f GB/s (raw read %6.2f GB/s, %.2fx; without read-ahead %6.2f GB/s, %.2fx)\n",
              compression_name(c), record_bytes, n, data / t_write, file / t_raw_write, t_raw_write / t_write,
              data / t_read, file / t_raw_read, t_raw_read / t_read, data / t_read_single, t_raw_read / t_read_single);
  ::unlink(rec_path.c_str());
  ::unlink(raw_path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp";
  size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  {
    std::string buf(64 << 20, 'x');
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 2654435761u >> 13);
    uint32_t sink = 0;
    double t = best_of(5, [&] {
      auto t0 = Clock::now();
      sink ^= crc32c(buf.data(), buf.size());
      return seconds_since(t0);
    });
    std::printf("crc32c (ISA-L crc32_iscsi): %.2f GB/s over 64 MiB (%08x)\n", buf.size() / 1e9 / t, sink);
  }
  std::printf("read-ahead thread by default: %s (%u CPUs); both ways measured below\n",
              read_ahead_pays() ? "used" : "not used, fewer than 4 CPUs",
              std::thread::hardware_concurrency());
  const size_t total = mib << 20;
  run_case(dir, total, 4096, Compression::None);
  run_case(dir, total, 1 << 20, Compression::None);
  run_case(dir, total / 4, 4096, Compression::Gzip);
  run_case(dir, total / 4, 4096, Compression::Zlib);
  return 0;
}
