// Checkpoints written by real TensorFlow 2.21 (tests/golden/tf_checkpoint, README.md there): Cairn
// lists every key with TensorFlow's dtype and shape and loads every value exactly as
// tf.train.load_checkpoint does (expected.json), and rebuilds each .index table byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/checkpoint/tf_table.h"
#include "tests/runtime/tf_checkpoint/tf_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::tfckpt {
namespace {

using tftest::expected;
using tftest::golden_names;
using tftest::golden_prefix;

// Strings as expected.json checksums them: each as an 8-byte little-endian length, then its bytes.
std::string joined(const std::vector<std::string>& strings) {
  std::string out;
  for (const std::string& s : strings) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(static_cast<uint64_t>(s.size()) >> (8 * i)));
    out += s;
  }
  return out;
}

TEST_CASE("every golden checkpoint lists and loads exactly as TensorFlow does") {
  REQUIRE(golden_names().size() == 7);
  for (const std::string& name : golden_names()) {
    CAPTURE(name);
    auto r = BundleReader::open(golden_prefix(name));
    const auto& want = expected()["checkpoints"][name]["entries"];
    REQUIRE(r->entries().size() == want.size());
    CHECK(r->num_shards() == 1);
    size_t i = 0;
    for (const auto& w : want) {
      const BundleEntry& e = r->entries()[i++];
      const std::string key = w["key"];
      CAPTURE(key);
      REQUIRE(e.key == key);
      CHECK(r->find(key) == &e);
      CHECK(e.tf_dtype == w["dtype_enum"].get<int>());
      CHECK(tf_dtype_name(e.tf_dtype) == w["dtype"].get<std::string>());
      CHECK(e.shape.to_vector() == w["shape"].get<std::vector<int64_t>>());
      if (e.tf_dtype == 7) {
        const std::vector<std::string> got = r->load_strings(e);
        const std::string all = joined(got);
        CHECK(tftest::zlib_crc32(all.data(), all.size()) == w["crc32"].get<uint32_t>());
        if (w.contains("strings_b64")) {
          std::vector<std::string> ws;
          for (const auto& s : w["strings_b64"]) ws.push_back(tftest::base64_decode(s));
          CHECK(got == ws);
        }
        CHECK_THROWS_AS(r->load(e, cairn::test::ctx().cpu()), Error);
      } else if (e.dtype == DType::Invalid) {
        // uint16 and complex128: listed and checksummed, but no Cairn tensor can hold them.
        r->verify(e);
        try {
          r->load(e, cairn::test::ctx().cpu());
          FAIL("loaded a dtype Cairn lacks");
        } catch (const Error& err) {
          CHECK(err.code() == Code::Unimplemented);
          CHECK(err.message().find(key) != std::string::npos);
          CHECK(err.message().find(w["dtype"].get<std::string>()) != std::string::npos);
        }
      } else {
        Tensor t = r->load(e, cairn::test::ctx().cpu());
        CHECK(t.dtype() == static_cast<DType>(e.tf_dtype));
        CHECK(t.nbytes() == w["nbytes"].get<size_t>());
        CHECK(tftest::zlib_crc32(t.raw_data(), t.nbytes()) == w["crc32"].get<uint32_t>());
        if (w.contains("raw_b64")) {
          const std::string raw = tftest::base64_decode(w["raw_b64"]);
          CHECK(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()) == raw);
        }
        r->verify(e);
      }
    }
  }
}

TEST_CASE("the values the goldens were made to hold") {
  auto r = BundleReader::open(golden_prefix("tf1_saver"));
  // The partitioned variable is listed once, assembled from its 3 slices (the slice keys, which
  // start with a zero byte, are not listed, as in tf.train.list_variables).
  const BundleEntry& part = r->info("part");
  CHECK(part.has_slices);
  CHECK(cairn::test::values<float>(r->load(part, cairn::test::ctx().cpu())) ==
        std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(cairn::test::values<int64_t>(r->load(r->info("global_step"), cairn::test::ctx().cpu())) == std::vector<int64_t>{42});
  for (const BundleEntry& e : r->entries()) CHECK(e.key[0] != '\0');
  // Slice starts and lengths of 64 and more take two bytes in OrderedCode's signed encoding.
  auto wide = BundleReader::open(golden_prefix("tf1_partitioned_wide"));
  std::vector<float> halves(600);
  for (int i = 0; i < 600; ++i) halves[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
  CHECK(wide->info("wide").has_slices);
  CHECK(cairn::test::values<float>(wide->load(wide->info("wide"), cairn::test::ctx().cpu())) == halves);
  std::vector<int64_t> ints(70);
  for (int i = 0; i < 70; ++i) ints[static_cast<size_t>(i)] = i - 35;
  CHECK(cairn::test::values<int64_t>(wide->load(wide->info("ints"), cairn::test::ctx().cpu())) == ints);
  wide->verify(wide->info("wide"));

  auto d = BundleReader::open(golden_prefix("dtypes_strings"));
  CHECK(d->load_strings(d->info("m/s_scalar/.ATTRIBUTES/VARIABLE_VALUE")) == std::vector<std::string>{"hello, checkpoint"});
  const auto vec = d->load_strings(d->info("m/s_vec/.ATTRIBUTES/VARIABLE_VALUE"));
  REQUIRE(vec.size() == 5);
  CHECK(vec[0].empty());
  CHECK(vec[3] == std::string(200, 'x'));   // a 2-byte varint length
  CHECK(vec[4].size() == 20480);            // a 3-byte varint length
  CHECK(d->load_strings(d->info("m/s_empty/.ATTRIBUTES/VARIABLE_VALUE")).empty());
  CHECK(cairn::test::values<int64_t>(d->load(d->info("m/i64/.ATTRIBUTES/VARIABLE_VALUE"), cairn::test::ctx().cpu())) ==
        std::vector<int64_t>{0, -1, int64_t{1} << 40, -(int64_t{1} << 62), INT64_MAX});

  auto big = BundleReader::open(golden_prefix("large_value"));
  const BundleEntry& b = big->info("m/big/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK(b.size == 1080000);  // more than TensorFlow's 1 MiB read buffer
}

TEST_CASE("a directory opens through its checkpoint state file") {
  const std::string dir = tftest::kGoldenDir + "nested_module";
  CHECK(latest_checkpoint(dir) == dir + "/ckpt-2");
  CHECK(BundleReader::open(dir)->prefix() == dir + "/ckpt-2");
  CHECK(BundleReader::open(dir + "/ckpt-1.index")->prefix() == dir + "/ckpt-1");
  CHECK(latest_checkpoint(tftest::kGoldenDir + "tf1_saver") == tftest::kGoldenDir + "tf1_saver/model.ckpt");
  CHECK(latest_checkpoint(tftest::kGoldenDir + "keras3_mlp") == std::nullopt);  // written with .write: no state file
  auto r = BundleReader::open(dir);
  CHECK(cairn::test::values<double>(r->load(r->info("scalar/.ATTRIBUTES/VARIABLE_VALUE"), cairn::test::ctx().cpu())) ==
        std::vector<double>{4.5});
}

TEST_CASE("TableWriter rebuilds every golden .index byte for byte") {
  for (const std::string& name : golden_names()) {
    CAPTURE(name);
    const std::string bytes = tftest::read_file(golden_prefix(name) + ".index");
    TableWriter w;
    const size_t blocks = read_table(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name,
                                     [&](std::string_view k, std::string_view v) { w.add(k, v); });
    // tf1_saver was made with enough long keys to need more than one 256 KiB block.
    CHECK(blocks == (name == "tf1_saver" ? 2u : 1u));
    CHECK(w.finish() == bytes);
  }
}

}  // namespace
}  // namespace cairn::tfckpt
