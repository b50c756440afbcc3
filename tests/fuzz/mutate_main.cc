// A seeded mutation driver for a libFuzzer target built with Bazel's gcc (under --config=asan):
// it runs the target over mutations of the corpus files for a bounded time. Coverage-guided
// fuzzing needs clang's libFuzzer; this keeps a bounded, reproducible fuzz run of targets whose
// dependencies (the whole runtime) are too large to rebuild with clang in the CI budget.
//
//   function_load_mutator [--seconds=N] [--seed=S] [--artifact=FILE] DIR_OR_FILE...
//
// Before each run the input is written to --artifact, so a crash (a sanitizer abort, a signal, or
// SIGALRM after 10 s: a hang) leaves the input there: replay it with the corpus test binary or
// this one (`function_load_mutator --replay FILE`). Prints the number of runs at the end.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  size_t below(size_t n) { return n ? next() % n : 0; }
};

std::vector<uint8_t> read_all(const std::string& f) {
  std::ifstream in(f, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void mutate(Rng& r, std::vector<uint8_t>& b, const std::vector<std::vector<uint8_t>>& seeds) {
  static const uint8_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, 2, 8, 16, 64, 0x40, 0x20};
  int n = 1 + static_cast<int>(r.below(4));
  for (int m = 0; m < n; ++m) {
    // Byte 0 picks the target's layout: mutate it rarely.
    size_t lo = b.size() > 1 && r.below(16) ? 1 : 0;
    size_t size = b.size();
    switch (r.below(8)) {
      case 0:
        if (size > lo) b[lo + r.below(size - lo)] ^= static_cast<uint8_t>(1u << r.below(8));
        break;
      case 1:
        if (size > lo) b[lo + r.below(size - lo)] = interesting[r.below(sizeof interesting)];
        break;
      case 2:
        if (size > lo) b[lo + r.below(size - lo)] = static_cast<uint8_t>(r.next());
        break;
      case 3:  // erase a range
        if (size > lo + 1) {
          size_t at = lo + r.below(size - lo), len = 1 + r.below(std::min<size_t>(64, size - at));
          b.erase(b.begin() + at, b.begin() + at + len);
        }
        break;
      case 4:  // duplicate a range
        if (size > lo + 1 && size < (1u << 20)) {
          size_t at = lo + r.below(size - lo), len = 1 + r.below(std::min<size_t>(64, size - at));
          std::vector<uint8_t> chunk(b.begin() + at, b.begin() + at + len);
          b.insert(b.begin() + lo + r.below(size - lo), chunk.begin(), chunk.end());
        }
        break;
      case 5:  // truncate
        if (size > lo + 1) b.resize(lo + r.below(size - lo));
        break;
      case 6:  // a little-endian 32-bit interesting value
        if (size >= lo + 4) {
          static const uint32_t v32[] = {0, 0xffffffffu, 0x7fffffffu, 0x80000000u, 1, 0x10000, 0xffff};
          uint32_t v = v32[r.below(7)];
          size_t at = lo + r.below(size - lo - 3);
          for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
        }
        break;
      default:  // splice in part of another seed
        if (!seeds.empty()) {
          const auto& o = seeds[r.below(seeds.size())];
          if (o.size() > 1 && size > lo) {
            size_t from = r.below(o.size()), len = 1 + r.below(std::min<size_t>(256, o.size() - from));
            size_t at = lo + r.below(size - lo);
            b.erase(b.begin() + at, b.begin() + std::min(size, at + len));
            b.insert(b.begin() + at, o.begin() + from, o.begin() + from + len);
          }
        }
        break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 20;
  uint64_t seed = 1;
  std::string artifact = "/tmp/cairn-mutator-current";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--seconds=", 0) == 0) seconds = atof(a.c_str() + 10);
    else if (a.rfind("--seed=", 0) == 0) seed = strtoull(a.c_str() + 7, nullptr, 10);
    else if (a.rfind("--artifact=", 0) == 0) artifact = a.substr(11);
    else if (a == "--replay" && i + 1 < argc) {
      std::vector<uint8_t> b = read_all(argv[++i]);
      LLVMFuzzerTestOneInput(b.data(), b.size());
      printf("replayed %s: no crash\n", argv[i]);
      return 0;
    } else if (DIR* d = opendir(a.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') files.push_back(a + "/" + e->d_name);
      closedir(d);
    } else {
      files.push_back(a);
    }
  }
  std::vector<std::vector<uint8_t>> seeds;
  for (const auto& f : files) seeds.push_back(read_all(f));
  if (seeds.empty()) {
    fprintf(stderr, "mutator: no corpus files\n");
    return 2;
  }
  Rng r{seed * 0x9e3779b97f4a7c15ull + 1};
  auto start = std::chrono::steady_clock::now();
  uint64_t runs = 0;
  for (;;) {
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (t >= seconds) break;
    std::vector<uint8_t> b = seeds[r.below(seeds.size())];
    if (runs >= seeds.size()) mutate(r, b, seeds);  // the seeds themselves first
    {
      std::ofstream out(artifact, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    }
    alarm(10);  // a hang: SIGALRM ends the process, the input stays in the artifact
    LLVMFuzzerTestOneInput(b.data(), b.size());
    alarm(0);
    ++runs;
  }
  unlink(artifact.c_str());
  printf("mutator seed %" PRIu64 ": %" PRIu64 " runs over %zu seeds in %.0f s, no crash\n", seed, runs, seeds.size(),
         seconds);
  return 0;
}
