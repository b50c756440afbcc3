// Cairn's BundleWriter read back by BundleReader (every dtype, strings, empty values), its index
// decoded by nanopb as an independent peer, the checkpoint state file, errors and atomic writes.
#include <doctest/doctest.h>
#include <pb_decode.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/checkpoint/tf_table.h"
#include "runtime/io/crc32c.h"
#include "runtime/io/proto/tensor_bundle.pb.h"
#include "tests/runtime/tf_checkpoint/tf_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::tfckpt {
namespace {

using cairn::test::ctx;
using cairn::test::pattern_tensor;
using cairn::test::same_tensor;

Code code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  return Code::Ok;
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

const std::vector<DType> kAllDTypes = {DType::Float32, DType::Float64,  DType::Int32,    DType::UInt8,
                                       DType::Int16,   DType::Int8,     DType::Complex64, DType::Int64,
                                       DType::Bool,    DType::BFloat16, DType::Float16};

TEST_CASE("BundleWriter writes what BundleReader reads back, keys sorted") {
  const std::string dir = tftest::make_temp_dir();
  const std::string prefix = dir + "/ckpt-7";
  std::map<std::string, Tensor> want;
  BundleWriter w(prefix);
  int i = 0;
  for (DType t : kAllDTypes) {
    // Added in reverse key order: the writer sorts.
    const std::string key = "z" + std::to_string(20 - i) + "/" + dtype_name(t);
    Tensor v = t == DType::Bool ? cairn::test::make<bool>({true, false, true, true, false, false}, Shape{2, 3})
                                : pattern_tensor(t, Shape{2, 3, ++i}, 0, static_cast<uint64_t>(i));
    w.add(key, v);
    want[key] = v;
  }
  want["empty"] = pattern_tensor(DType::Float32, Shape{4, 0}, 0);
  w.add("empty", want["empty"]);
  want["scalar"] = cairn::test::scalar<int64_t>(-5);
  w.add("scalar", want["scalar"]);
  const std::vector<std::string> strs = {"", "a", std::string(300, 'q'), std::string("\0\xff\x01", 3)};
  w.add_strings("strings", Shape{2, 2}, strs);
  w.add_strings("string_scalar", Shape{}, {"hello"});
  w.add_strings("strings_empty", Shape{0}, {});
  w.finish();
  CHECK(tftest::list_dir(dir).size() == 2);  // no temporary files left

  auto r = BundleReader::open(prefix);
  CHECK(r->num_shards() == 1);
  REQUIRE(r->entries().size() == want.size() + 3);
  for (size_t k = 1; k < r->entries().size(); ++k) CHECK(r->entries()[k - 1].key < r->entries()[k].key);
  for (auto& [key, v] : want) {
    CAPTURE(key);
    const BundleEntry& e = r->info(key);
    CHECK(e.dtype == v.dtype());
    CHECK(e.shape == v.shape());
    CHECK(same_tensor(r->load(e, ctx().cpu()), v));
    r->verify(e);
  }
  CHECK(r->load_strings(r->info("strings")) == strs);
  CHECK(r->load_strings(r->info("string_scalar")) == std::vector<std::string>{"hello"});
  CHECK(r->load_strings(r->info("strings_empty")).empty());
  r->verify(r->info("strings"));
  CHECK(code_of([&] { r->load(r->info("strings"), ctx().cpu()); }) == Code::InvalidArgument);
  CHECK(code_of([&] { r->load_strings(r->info("scalar")); }) == Code::InvalidArgument);
  CHECK(code_of([&] { r->info("nope"); }) == Code::NotFound);
  CHECK(r->find("nope") == nullptr);
}

// nanopb's generated decoder is an implementation of protobuf independent of our wire code.
TEST_CASE("the index values decode with protobuf (nanopb) to the entries the reader reports") {
  const std::string dir = tftest::make_temp_dir();
  BundleWriter w(dir + "/b");
  w.add("a/long/key/.ATTRIBUTES/VARIABLE_VALUE", pattern_tensor(DType::Float32, Shape{300, 7}, 0));
  w.add("b", pattern_tensor(DType::Int64, Shape{}, 0));
  w.add_strings("c", Shape{2}, {"xy", "z"});
  w.finish();
  auto r = BundleReader::open(dir + "/b");
  std::vector<std::pair<std::string, BundleEntry>> checked;
  for (const std::string& prefix : {dir + "/b", tftest::golden_prefix("tf1_saver"), tftest::golden_prefix("dtypes_strings")}) {
    auto reader = BundleReader::open(prefix);
    const std::string bytes = tftest::read_file(prefix + ".index");
    size_t n = 0;
    read_table(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), prefix,
               [&](std::string_view key, std::string_view value) {
                 pb_istream_t s = pb_istream_from_buffer(reinterpret_cast<const pb_byte_t*>(value.data()), value.size());
                 if (key.empty()) {
                   tfpb_BundleHeaderProto h = tfpb_BundleHeaderProto_init_zero;
                   REQUIRE(pb_decode(&s, tfpb_BundleHeaderProto_fields, &h));
                   CHECK(h.num_shards == 1);
                   CHECK(h.endianness == tfpb_BundleHeaderProto_Endianness_LITTLE);
                   CHECK(h.version.producer == 1);
                   return;
                 }
                 tfpb_BundleEntryProto m = tfpb_BundleEntryProto_init_zero;
                 REQUIRE(pb_decode(&s, tfpb_BundleEntryProto_fields, &m));
                 if (key[0] == '\0') return;  // a slice of a partitioned variable: not listed
                 const BundleEntry& e = reader->info(key);
                 CHECK(static_cast<int>(m.dtype) == e.tf_dtype);
                 CHECK(m.has_shape);
                 CHECK(m.shard_id == e.shard_id);
                 if (!e.has_slices) {
                   CHECK(m.offset == e.offset);
                   CHECK(m.size == e.size);
                   CHECK(m.crc32c == e.masked_crc32c);
                 }
                 ++n;
               });
    CHECK(n == reader->entries().size());
  }
}

TEST_CASE("the checkpoint state file") {
  const std::string dir = tftest::make_temp_dir();
  CHECK(latest_checkpoint(dir) == std::nullopt);
  CHECK(code_of([&] { BundleReader::open(dir); }) == Code::NotFound);
  BundleWriter w(dir + "/odd \"name\"-1");
  w.add("x", cairn::test::scalar<float>(1.5f));
  w.finish();
  write_checkpoint_state(dir, "odd \"name\"-1", {"gone-0", "odd \"name\"-1"});
  CHECK(latest_checkpoint(dir) == dir + "/odd \"name\"-1");
  CHECK(BundleReader::open(dir)->prefix() == dir + "/odd \"name\"-1");
  // Absolute paths are taken as they are; a prefix without an .index is no checkpoint.
  write_checkpoint_state(dir, dir + "/odd \"name\"-1", {});
  CHECK(latest_checkpoint(dir) == dir + "/odd \"name\"-1");
  write_checkpoint_state(dir, "gone-0", {});
  CHECK(latest_checkpoint(dir) == std::nullopt);
  // TensorFlow's CheckpointManager adds timestamps; octal escapes as protobuf's text format writes them.
  tftest::write_file(dir + "/checkpoint",
                     "model_checkpoint_path: \"odd \\\"name\\\"\\055\\061\"\nall_model_checkpoint_paths: \"x\"\n"
                     "all_model_checkpoint_timestamps: 1764100000.5\nlast_preserved_timestamp: 1764000000.25\n");
  CHECK(latest_checkpoint(dir) == dir + "/odd \"name\"-1");
  tftest::write_file(dir + "/checkpoint", "model_checkpoint_path \"x\"\n");
  CHECK(code_of([&] { latest_checkpoint(dir); }) == Code::DataLoss);
  tftest::write_file(dir + "/checkpoint", "model_checkpoint_path: \"x\n");
  CHECK(code_of([&] { latest_checkpoint(dir); }) == Code::DataLoss);
}

TEST_CASE("writer errors, and a failed write leaves the old bundle") {
  const std::string dir = tftest::make_temp_dir();
  BundleWriter w(dir + "/c");
  w.add("k", cairn::test::scalar<float>(1));
  CHECK(code_of([&] { w.add("k", cairn::test::scalar<float>(2)); }) == Code::InvalidArgument);
  CHECK(code_of([&] { w.add("", cairn::test::scalar<float>(2)); }) == Code::InvalidArgument);
  CHECK(code_of([&] { w.add(std::string("\0s", 2), cairn::test::scalar<float>(2)); }) == Code::InvalidArgument);
  CHECK(code_of([&] { w.add_strings("s", Shape{3}, {"a"}); }) == Code::InvalidArgument);
  w.finish();
  CHECK(code_of([&] { w.finish(); }) == Code::FailedPrecondition);
  CHECK(code_of([&] { w.add("later", cairn::test::scalar<float>(2)); }) == Code::FailedPrecondition);

  BundleWriter bad(dir + "/missing-dir/c");
  bad.add("k", cairn::test::scalar<float>(1));
  CHECK(code_of([&] { bad.finish(); }) == Code::NotFound);
  CHECK(tftest::list_dir(dir).size() == 2);

  // The data file cannot be renamed over a directory: finish fails and the old files stay whole.
  BundleWriter blocked(dir + "/c");
  blocked.add("k", cairn::test::scalar<float>(9));
  const std::string old_index = tftest::read_file(dir + "/c.index");
  ::rename((dir + "/c.data-00000-of-00001").c_str(), (dir + "/saved").c_str());
  ::mkdir((dir + "/c.data-00000-of-00001").c_str(), 0777);
  ::mkdir((dir + "/c.data-00000-of-00001/x").c_str(), 0777);
  CHECK(code_of([&] { blocked.finish(); }) != Code::Ok);
  CHECK(tftest::read_file(dir + "/c.index") == old_index);
  CHECK(tftest::list_dir(dir).size() == 3);  // c.index, the blocking folder, saved: no temporaries
}

TEST_CASE("reader errors name the file and the key") {
  const std::string dir = tftest::make_temp_dir();
  CHECK(code_of([&] { BundleReader::open(dir + "/none"); }) == Code::NotFound);
  const std::string prefix = tftest::copy_checkpoint(tftest::golden_prefix("keras3_mlp"), dir);
  ::unlink((prefix + ".data-00000-of-00001").c_str());
  const std::string msg = message_of([&] { BundleReader::open(prefix); });
  CHECK(msg.find("data-00000-of-00001") != std::string::npos);
  CHECK(code_of([&] { BundleReader::open(prefix); }) == Code::NotFound);
  // A data shard cut short: the entries past its end are named.
  const std::string p2 = tftest::copy_checkpoint(tftest::golden_prefix("keras3_mlp"), tftest::make_temp_dir());
  std::string data = tftest::read_file(p2 + ".data-00000-of-00001");
  tftest::write_file(p2 + ".data-00000-of-00001", data.substr(0, data.size() - 10));
  CHECK(code_of([&] { BundleReader::open(p2); }) == Code::DataLoss);
  CHECK(message_of([&] { BundleReader::open(p2); }).find("lies outside its data shard") != std::string::npos);
  // Not a table at all.
  const std::string p3 = tftest::make_temp_dir() + "/x";
  tftest::write_file(p3 + ".index", std::string(100, 'x'));
  CHECK(code_of([&] { BundleReader::open(p3); }) == Code::DataLoss);
  tftest::write_file(p3 + ".index", "");
  CHECK(code_of([&] { BundleReader::open(p3); }) == Code::DataLoss);
}

TEST_CASE("the table rejects keys out of order, and handles keys of every byte") {
  TableWriter w;
  w.add("b", "1");
  CHECK(code_of([&] { w.add("a", "2"); }) == Code::InvalidArgument);
  CHECK(code_of([&] { w.add("b", "2"); }) == Code::InvalidArgument);
  TableWriter t;
  std::vector<std::pair<std::string, std::string>> kv;
  for (int i = 0; i < 5000; ++i) {
    std::string k = std::string(1, static_cast<char>(i / 256)) + std::string(1, static_cast<char>(i % 256)) + "\xff\xff";
    kv.emplace_back(k, std::string(static_cast<size_t>(i % 97), static_cast<char>(i)));
  }
  for (auto& [k, v] : kv) t.add(k, v);
  const std::string bytes = t.finish();
  size_t i = 0;
  const size_t blocks = read_table(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t",
                                   [&](std::string_view k, std::string_view v) {
                                     REQUIRE(i < kv.size());
                                     CHECK(k == kv[i].first);
                                     CHECK(v == kv[i].second);
                                     ++i;
                                   });
  CHECK(i == kv.size());
  CHECK(blocks >= 1);
}

}  // namespace
}  // namespace cairn::tfckpt
