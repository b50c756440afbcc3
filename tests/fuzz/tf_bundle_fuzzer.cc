// libFuzzer target for the TensorFlow checkpoint reader (runtime/checkpoint:tf_bundle): any bytes,
// made into a bundle, must open, list, load and verify without crashing or hanging, raising only
// cairn::Error, with allocations bounded by the files. The first byte picks the mode:
//   even: the rest is the raw .index file (the table parser: footer, handles, blocks, varints);
//   odd:  the rest is a list of entries, each [u8 key length][key][u16 LE value length][value], up to
//         a key length of 255, built into a valid table (so mutations reach the BundleHeaderProto and
//         BundleEntryProto parsers, shapes, slices and the loaders); what follows is the data shard.
// Build and run with tests/fuzz/run_tf_bundle_fuzzer.sh (clang, checksums off), or replay the corpus
// under gcc with //tests/fuzz:tf_bundle_corpus_test.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/checkpoint/tf_table.h"
#include "runtime/core/allocator.h"
#include "runtime/core/error.h"
#include "runtime/cpu/cpu_device.h"

namespace {

cairn::Device& host() {
  static cairn::Device* d = new cairn::CpuDevice(cairn::default_allocator());
  return *d;
}

// One scratch folder per process, in memory where possible.
const std::string& prefix() {
  static const std::string p = [] {
    std::string dir = "/dev/shm/cairn-tf-bundle-fuzz-" + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0700) != 0) {
      const char* t = std::getenv("TMPDIR");
      dir = std::string(t ? t : "/tmp") + "/cairn-tf-bundle-fuzz-" + std::to_string(::getpid());
      ::mkdir(dir.c_str(), 0700);
    }
    // Removed at exit (the two files, then the folder).
    static const std::string removed = dir;
    std::atexit([] {
      for (const char* f : {"/ckpt.index", "/ckpt.data-00000-of-00001"}) ::unlink((removed + f).c_str());
      ::rmdir(removed.c_str());
    });
    return dir + "/ckpt";
  }();
  return p;
}

void put(const std::string& path, const uint8_t* data, size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const uint8_t* p = data + 1;
  const uint8_t* end = data + size;
  std::string index;
  if (mode & 1) {
    std::map<std::string, std::string> entries;
    while (p < end) {
      const uint8_t klen = *p++;
      if (klen == 255 || static_cast<size_t>(end - p) < klen + 2u) break;
      std::string key(reinterpret_cast<const char*>(p), klen);
      p += klen;
      const size_t vlen = std::min<size_t>(p[0] | p[1] << 8, static_cast<size_t>(end - p - 2));
      p += 2;
      entries[key].assign(reinterpret_cast<const char*>(p), vlen);
      p += vlen;
    }
    cairn::tfckpt::TableWriter w;
    for (auto& [k, v] : entries) w.add(k, v);
    index = w.finish();
    put(prefix() + ".data-00000-of-00001", p, static_cast<size_t>(end - p));
  } else {
    index.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(end - p));
    static const uint8_t zeros[64] = {};
    put(prefix() + ".data-00000-of-00001", zeros, sizeof(zeros));
  }
  put(prefix() + ".index", reinterpret_cast<const uint8_t*>(index.data()), index.size());
  try {
    auto r = cairn::tfckpt::BundleReader::open(prefix());
    for (const auto& e : r->entries()) {
      try {
        if (e.tf_dtype == 7) (void)r->load_strings(e);
        else (void)r->load(e, host());
      } catch (const cairn::Error&) {
      }
      try {
        r->verify(e);
      } catch (const cairn::Error&) {
      }
    }
  } catch (const cairn::Error&) {
  }
  return 0;
}
