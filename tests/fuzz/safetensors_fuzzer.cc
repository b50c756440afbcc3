// libFuzzer target for the safetensors reader (runtime/io/safetensors.h): any bytes, as a file, must
// open or raise cairn::Error, never crash or allocate more than the file justifies. A file that
// opens must load every tensor (or raise for the dtypes Cairn lacks and for a checksum mismatch),
// a CPU load must hold the file's bytes, and the loaded tensors must survive serialize -> open with
// the same values. Build and run with tests/fuzz/run_safetensors_fuzzer.sh (clang), or replay the
// corpus under gcc with //tests/fuzz:safetensors_corpus_test.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/core/allocator.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/io/safetensors.h"

namespace {

using namespace cairn;

Device& host() {
  static Device* d = new CpuDevice(default_allocator());
  return *d;
}

// One scratch file per process, in memory where /dev/shm exists.
const std::string& scratch_path(int which) {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    if (tmp && *tmp) return std::string(tmp);
    return std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  }();
  // Removed at exit (libFuzzer and the replay main both return through exit()).
  static const struct Scratch {
    std::string paths[2];
    ~Scratch() {
      for (const std::string& p : paths) ::unlink(p.c_str());
    }
  } scratch{{dir + "/st-fuzz-" + std::to_string(::getpid()) + ".in", dir + "/st-fuzz-" + std::to_string(::getpid()) + ".out"}};
  return scratch.paths[which];
}

void put(const std::string& path, const void* data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  if (size && ::write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  put(scratch_path(0), data, size);
  std::shared_ptr<safetensors::File> file;
  try {
    file = safetensors::File::open(scratch_path(0));
  } catch (const Error&) {
    return 0;
  }
  std::vector<std::pair<std::string, Tensor>> loaded;
  for (const safetensors::TensorEntry& e : file->tensors()) {
    if (e.end < e.begin || e.end - e.begin != file->raw_bytes(e).size()) std::abort();
    Tensor t;
    try {
      t = file->load(e.name, host());
    } catch (const Error& err) {
      if (err.code() != Code::Unimplemented && err.code() != Code::DataLoss) std::abort();
      continue;
    }
    if (e.dtype.rfind("F8_", 0) != 0) {
      const std::string_view raw = file->raw_bytes(e);
      if (t.nbytes() != raw.size() || (raw.size() && std::memcmp(t.raw_data(), raw.data(), raw.size()) != 0)) std::abort();
    }
    loaded.emplace_back(e.name, std::move(t));
  }
  // Round trip through the writer (checksum keys dropped: the writer recomputes them).
  safetensors::WriteOptions o;
  for (const auto& [k, v] : file->metadata())
    if (k.rfind(safetensors::kChecksumKeyPrefix, 0) != 0) o.metadata.emplace(k, v);
  o.checksums = true;
  std::string bytes;
  try {
    bytes = safetensors::serialize(loaded, o);
  } catch (const Error&) {
    // The writer refuses only what a valid file cannot hold (duplicate names, "__metadata__").
    std::abort();
  }
  put(scratch_path(1), bytes.data(), bytes.size());
  auto again = safetensors::File::open(scratch_path(1));
  if (again->tensors().size() != loaded.size()) std::abort();
  for (const auto& [name, t] : loaded) {
    Tensor back = again->load(name, host());
    if (back.dtype() != t.dtype() || back.shape() != t.shape() || back.nbytes() != t.nbytes()) std::abort();
    if (t.nbytes() && std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()) != 0) std::abort();
  }
  return 0;
}
