// Compressed saves give the same bytes whatever the thread count, and the same bytes as the
// single-threaded writer of main 1d56319 (whose file hashes are recorded below), except at level 1,
// whose parameters for shuffled payloads changed since (tune_for_shuffled_bytes in writer.cc).
#include <xxhash.h>

#include "runtime/core/thread_pool.h"
#include "tests/golden/checkpoint_v1_contents.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;

// Payloads of one and several shuffle blocks, a ragged tail, a plain-zstd int32 ramp of several
// 1 MiB chunks, an incompressible payload (stored raw after a compression try) and small ones.
std::vector<SaveEntry> mixed_entries() {
  std::vector<SaveEntry> e;
  e.emplace_back("a/normal_3m", pattern_tensor(DType::Float32, Shape{786432 + 25}, 2, 1));
  e.emplace_back("b/normal_1m", pattern_tensor(DType::Float32, Shape{262144}, 2, 2));
  e.emplace_back("c/ramp_int32", pattern_tensor(DType::Int32, Shape{600000}, 1, 3));
  e.emplace_back("d/random_bytes", pattern_tensor(DType::UInt8, Shape{300000}, 0, 4));
  e.emplace_back("e/random_float", pattern_tensor(DType::Float32, Shape{70000}, 0, 5));
  e.emplace_back("f/half", pattern_tensor(DType::Float16, Shape{3, 50001}, 2, 6));
  e.emplace_back("g/double", pattern_tensor(DType::Float64, Shape{131072 + 3}, 2, 7));
  e.emplace_back("h/tiny", pattern_tensor(DType::Float32, Shape{5}, 2, 8));
  e.emplace_back("i/empty", pattern_tensor(DType::Float32, Shape{0, 4}, 2, 9));
  for (int i = 0; i < 40; ++i)
    e.emplace_back("j/small_" + std::to_string(i), pattern_tensor(DType::Float32, Shape{1000 + 37 * i}, 2, 100 + i));
  e.push_back(SaveEntry::string_scalar("k/notes", std::string(5000, 'x')));
  return e;
}

Metadata fixed_metadata() {
  Metadata m;
  m.save_counter = 3;
  m.library_version = "0.1.0";
  m.user["case"] = "parallel_test";
  return m;
}

// Writes mixed_entries() to dir/name without fsync; returns the path.
std::string save_mixed(const std::string& dir, const char* name, WriteOptions o = {}) {
  o.fsync = false;
  write_checkpoint(dir + "/" + name, ObjectGraph{}, mixed_entries(), fixed_metadata(), o);
  return dir + "/" + name;
}

uint64_t file_hash(const std::string& path) {
  std::string bytes = read_file(path);
  return XXH3_64bits(bytes.data(), bytes.size());
}

// XXH3-64 of the files main 1d56319 wrote for mixed_entries() (raw, zstd level 3), and of the
// file the single-threaded writer writes at level 1 with the parameters for shuffled payloads.
constexpr uint64_t kMainRaw = 0xd91d7d722be8d760;
constexpr uint64_t kMainZstd3 = 0xa33a1fb96ad3fd42;
constexpr uint64_t kZstd1 = 0xdf625461f73f1369;

TEST_CASE("parallel save: the bytes of main's single-threaded writer") {
  const std::string dir = make_temp_dir();
  WriteOptions o;
  CHECK(file_hash(save_mixed(dir, "raw", o)) == kMainRaw);
  o.compress = true;
  CHECK(file_hash(save_mixed(dir, "default", o)) == kZstd1);  // level 1 is the default now
  o.zstd_level = 3;
  CHECK(file_hash(save_mixed(dir, "z3", o)) == kMainZstd3);
  o.zstd_level = 1;
  CHECK(file_hash(save_mixed(dir, "z1", o)) == kZstd1);
  Reader r = Reader::open(dir + "/z3");
  size_t compressed = 0;
  for (const TensorInfo& e : r.entries()) compressed += e.codec != Codec::None;
  CHECK(compressed > 0);  // and some are stored raw
  CHECK(compressed < r.entries().size());
}

TEST_CASE("parallel save: same bytes for 1 to 4 threads, raw and zstd, any bytes-ahead bound") {
  const std::string dir = make_temp_dir();
  const std::vector<SaveEntry> entries = mixed_entries();
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    // 1 MiB holds back the 3 MiB payload (compressed on the writing thread) and makes the others wait.
    for (size_t ahead : {size_t{64} << 20, size_t{1} << 20, size_t{1}}) {
      CAPTURE(threads);
      CAPTURE(ahead);
      WriteOptions o;
      o.fsync = false;
      o.pool = &pool;
      o.max_bytes_ahead = ahead;
      write_checkpoint(dir + "/raw", ObjectGraph{}, entries, fixed_metadata(), o);
      CHECK(file_hash(dir + "/raw") == kMainRaw);
      o.compress = true;
      o.zstd_level = 3;
      write_checkpoint(dir + "/z3", ObjectGraph{}, entries, fixed_metadata(), o);
      CHECK(file_hash(dir + "/z3") == kMainZstd3);
      o.zstd_level = 1;
      write_checkpoint(dir + "/z1", ObjectGraph{}, entries, fixed_metadata(), o);
      CHECK(file_hash(dir + "/z1") == kZstd1);
    }
  }
  // And the files read back.
  for (const char* name : {"z3", "z1"}) {
    Reader r = Reader::open(dir + "/" + name);
    for (const SaveEntry& e : entries) {
      CAPTURE(name);
      CAPTURE(e.key);
      if (e.is_string) CHECK(r.load_string(e.key) == e.bytes);
      else CHECK(same_tensor(r.load(e.key, ctx().cpu()), e.tensor));
    }
  }
}

TEST_CASE("parallel save: the committed golden file, rewritten with 3 threads, is byte-identical") {
  const std::string dir = make_temp_dir();
  ThreadPool pool(3);
  WriteOptions o = golden::checkpoint_v1_options();
  o.fsync = false;
  o.pool = &pool;
  o.max_bytes_ahead = 300;
  write_checkpoint(dir + "/golden", golden::checkpoint_v1_graph(), golden::checkpoint_v1_entries(ctx().cpu()),
                   golden::checkpoint_v1_metadata(), o);
  CHECK(read_file(dir + "/golden") == read_file("tests/golden/checkpoint_v1.cairn"));
}

TEST_CASE("parallel save: an error on one entry fails the write and leaves no file") {
  const std::string dir = make_temp_dir();
  ThreadPool pool(2);
  std::vector<SaveEntry> entries = mixed_entries();
  WriteOptions o;
  o.compress = true;
  o.fsync = false;
  o.pool = &pool;
  o.zstd_level = 99;  // refused before anything is written
  CHECK_THROWS_AS(write_checkpoint(dir + "/bad", ObjectGraph{}, entries, fixed_metadata(), o), Error);
  CHECK(list_dir(dir).empty());
}

TEST_CASE("parallel read: raw payloads read on 1 to 4 threads, and a flipped byte is still caught") {
  const std::string dir = make_temp_dir();
  const std::vector<SaveEntry> entries = mixed_entries();
  save_mixed(dir, "raw");
  for (int threads = 1; threads <= 4; ++threads) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    Reader r = Reader::open(dir + "/raw");
    r.set_thread_pool(&pool);
    for (const SaveEntry& e : entries) {
      CAPTURE(e.key);
      if (e.is_string) CHECK(r.load_string(e.key) == e.bytes);
      else CHECK(same_tensor(r.load(e.key, ctx().cpu()), e.tensor));
    }
  }
  // One byte in the last piece of the 3 MiB payload, then one in its first piece.
  std::string bytes = read_file(dir + "/raw");
  const TensorInfo big = Reader::open(dir + "/raw").info("a/normal_3m");
  REQUIRE(big.stored_size > (size_t{3} << 20));
  for (uint64_t at : {big.offset + big.stored_size - 3, big.offset + 5}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x10;
    write_file(dir + "/damaged", damaged);
    ThreadPool pool(2);
    Reader r = Reader::open(dir + "/damaged");
    r.set_thread_pool(&pool);
    CHECK_THROWS_CODE(r.load("a/normal_3m", ctx().cpu()), Code::DataLoss, "checksum mismatch for key 'a/normal_3m'");
    CHECK(same_tensor(r.load("b/normal_1m", ctx().cpu()), entries[1].tensor));
  }
}

}  // namespace
}  // namespace cairn::test
