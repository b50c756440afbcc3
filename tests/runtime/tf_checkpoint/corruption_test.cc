// Every single-byte corruption of TensorFlow-written bundles, index and data, is detected (DataLoss,
// or InvalidArgument/Unimplemented where the damage reads as an unsupported feature) or harmless
// (every key and value as before); nothing crashes, hangs or throws anything but a cairn Error.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>

#include "runtime/checkpoint/tf_bundle.h"
#include "tests/runtime/tf_checkpoint/tf_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::tfckpt {
namespace {

// Every key with its value's bytes (strings: lengths and bytes; dtypes Cairn lacks: verified only).
std::map<std::string, std::string> snapshot(const std::string& prefix) {
  auto r = BundleReader::open(prefix);
  std::map<std::string, std::string> out;
  for (const BundleEntry& e : r->entries()) {
    std::string& v = out[e.key];
    if (e.tf_dtype == 7) {
      for (const std::string& s : r->load_strings(e)) v += std::to_string(s.size()) + ":" + s;
    } else if (e.dtype == DType::Invalid) {
      r->verify(e);
      v = "verified";
    } else {
      Tensor t = r->load(e, cairn::test::ctx().cpu());
      v.assign(static_cast<const char*>(t.raw_data()), t.nbytes());
    }
    v += "|" + e.shape.str();
  }
  return out;
}

struct Tally {
  int detected = 0, harmless = 0;
};

// Applies `mutate` to a copy of `file` (a path under `prefix`'s folder copy) and classifies the result.
void check_one(const std::string& prefix, const std::string& file, const std::string& bytes,
               const std::map<std::string, std::string>& want, Tally& tally, const std::string& what) {
  tftest::write_file(file, bytes);
  try {
    const auto got = snapshot(prefix);
    if (got == want) {
      ++tally.harmless;
    } else {
      FAIL_CHECK("undetected corruption changed values: " << what);
    }
  } catch (const Error& e) {
    const bool ok = e.code() == Code::DataLoss || e.code() == Code::InvalidArgument || e.code() == Code::Unimplemented;
    if (!ok) FAIL_CHECK(what << ": unexpected code " << static_cast<int>(e.code()) << ": " << e.message());
    ++tally.detected;
  } catch (const std::exception& e) {
    FAIL_CHECK(what << ": not a cairn error: " << e.what());
  }
}

// Tens of thousands of rewrites: in memory (/dev/shm) where there is one, since rewriting a file on
// ext4 after truncating it waits for the disk each time.
std::string scratch_dir() {
  static int n = 0;
  const std::string shm = "/dev/shm/cairn-tf-corruption-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
  if (::mkdir(shm.c_str(), 0700) == 0) return shm;
  return tftest::make_temp_dir();
}

void corrupt_every_byte(const std::string& name, size_t data_stride) {
  const std::string dir = scratch_dir();
  const std::string prefix = tftest::copy_checkpoint(tftest::golden_prefix(name), dir);
  const auto want = snapshot(prefix);
  for (const std::string suffix : {".index", ".data-00000-of-00001"}) {
    const std::string file = prefix + suffix;
    const std::string orig = tftest::read_file(file);
    const size_t stride = suffix[1] == 'i' ? 1 : data_stride;
    Tally tally;
    for (size_t i = 0; i < orig.size(); i += stride) {
      // The data is covered by CRC32C alone, so one flip per byte says as much as three.
      for (uint8_t x : {0x01, 0x80, 0xff}) {
        if (suffix[1] != 'i' && x != 0xff) continue;
        std::string b = orig;
        b[i] = static_cast<char>(b[i] ^ x);
        check_one(prefix, file, b, want, tally, name + suffix + " byte " + std::to_string(i) + " ^ " + std::to_string(x));
      }
    }
    // Every truncation of the index, and a few of the data file.
    for (size_t n = 0; n < orig.size(); n += suffix[1] == 'i' ? 1 : std::max<size_t>(1, orig.size() / 50))
      check_one(prefix, file, orig.substr(0, n), want, tally, name + suffix + " cut at " + std::to_string(n));
    tftest::write_file(file, orig);
    MESSAGE(name << suffix << ": " << tally.detected << " detected, " << tally.harmless << " harmless");
    // Only the footer's padding (and nothing in the data) can change without being noticed.
    CHECK(tally.harmless <= 3 * 40);
  }
  for (const std::string& f : tftest::list_dir(dir)) ::unlink((dir + "/" + f).c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("single-byte corruptions of TensorFlow bundles are detected or harmless") {
  corrupt_every_byte("keras3_mlp", 1);
  corrupt_every_byte("nested_module", 1);
  corrupt_every_byte("dtypes_strings", 1);
  corrupt_every_byte("large_value", 4099);
}

}  // namespace
}  // namespace cairn::tfckpt
