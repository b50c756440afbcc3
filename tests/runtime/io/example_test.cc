// tf.train.Example / SequenceExample: round trips, protobuf's decoding rules (unpacked lists,
// unknown fields, merges), batched parsing into tensors, and every error naming what was wrong.
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/io/example.h"
#include "tests/util/test_util.h"

namespace cairn::io {
namespace {

using test::ctx;
using test::make;
using test::values;

// Hand-made wire bytes for encodings our serializer never writes.
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string len_field(uint32_t number, const std::string& payload) {
  return varint(number << 3 | 2) + varint(payload.size()) + payload;
}
std::string fixed32_field(uint32_t number, float x) {
  std::string s = varint(number << 3 | 5);
  s.append(reinterpret_cast<const char*>(&x), 4);
  return s;
}
std::string entry(const std::string& key, const std::string& feature) {
  return len_field(1, len_field(1, key) + len_field(2, feature));
}
std::string example_of(const std::string& entries) { return len_field(1, entries); }

std::vector<Tensor> parse(const std::vector<std::string>& records, const std::vector<FeatureSpec>& specs) {
  std::vector<std::string_view> views(records.begin(), records.end());
  return parse_examples(ctx().cpu(), views.data(), views.size(), specs);
}
std::vector<Tensor> parse_seq(const std::vector<std::string>& records, const std::vector<FeatureSpec>& specs) {
  std::vector<std::string_view> views(records.begin(), records.end());
  return parse_sequence_examples(ctx().cpu(), views.data(), views.size(), specs);
}

FeatureSpec spec(std::string key, SpecKind kind, DType dtype, Shape shape = {}, std::optional<Tensor> dflt = {}) {
  return FeatureSpec{std::move(key), kind, dtype, shape, std::move(dflt)};
}

TEST_CASE("Example round trip, every kind, keys sorted") {
  Example ex;
  ex.features["z"] = Feature::floats({1.0f, std::numeric_limits<float>::quiet_NaN(), -0.0f});
  ex.features["a"] = Feature::int64s({INT64_MAX, INT64_MIN, 0});
  ex.features["m"] = Feature::bytes({"", std::string(300, 'x')});
  ex.features["empty"] = Feature::bytes({});
  ex.features["none"] = Feature{};
  const std::string bytes = serialize(ex);
  CHECK(parse_example(bytes) == ex);
  // Insertion order does not matter: a map built the other way round gives the same bytes.
  Example other;
  for (auto it = ex.features.rbegin(); it != ex.features.rend(); ++it) other.features.emplace(it->first, it->second);
  CHECK(serialize(other) == bytes);
  CHECK(serialize(Example{}).empty());
  CHECK(parse_example("") == Example{});
}

TEST_CASE("SequenceExample round trip") {
  SequenceExample ex;
  ex.context["id"] = Feature::bytes({"q1"});
  ex.feature_lists["tok"] = {Feature::int64s({1, 2, 3}), Feature{}, Feature::int64s({})};
  ex.feature_lists["vec"] = {Feature::floats({0.5f, 1.5f})};
  ex.feature_lists["none"] = {};
  CHECK(parse_sequence_example(serialize(ex)) == ex);
  CHECK(serialize(SequenceExample{}).empty());
}

TEST_CASE("decoding accepts unpacked lists, skips unknown fields, and merges as protobuf does") {
  // FloatList{1.5, 2.5} unpacked (fixed32 each), Int64List{5, -1} unpacked (varint each).
  const std::string floats = len_field(2, fixed32_field(1, 1.5f) + fixed32_field(1, 2.5f));
  const std::string ints = len_field(3, varint(1 << 3) + varint(5) + varint(1 << 3) + varint(uint64_t(-1)));
  // Unknown fields everywhere: a varint field 7 in the example, a fixed64 in the feature.
  const std::string unknown = varint(7 << 3) + varint(99);
  const std::string fixed64 = varint(9 << 3 | 1) + std::string(8, '\x01');
  const std::string rec =
      unknown + example_of(entry("f", fixed64 + floats) + entry("i", ints)) + unknown;
  Example ex = parse_example(rec);
  CHECK(ex.features["f"] == Feature::floats({1.5f, 2.5f}));
  CHECK(ex.features["i"] == Feature::int64s({5, -1}));

  // A key given twice: the last entry wins; the features field twice: the maps merge.
  const std::string twice = example_of(entry("k", len_field(3, len_field(1, varint(1))))) +
                            example_of(entry("k", len_field(3, len_field(1, varint(2)))) + entry("j", ""));
  Example merged = parse_example(twice);
  CHECK(merged.features["k"] == Feature::int64s({2}));
  CHECK(merged.features["j"] == Feature{});
  // One list split in two fields merges; another kind replaces it.
  const std::string split = len_field(3, len_field(1, varint(1))) + len_field(3, len_field(1, varint(2)));
  CHECK(parse_example(example_of(entry("s", split))).features["s"] == Feature::int64s({1, 2}));
  const std::string replaced = len_field(3, len_field(1, varint(1))) + len_field(2, "");
  CHECK(parse_example(example_of(entry("r", replaced))).features["r"] == Feature::floats({}));

  // Batched parsing reads the same unpacked bytes.
  auto out = parse({rec}, {spec("f", SpecKind::FixedLen, DType::Float32, Shape{2}),
                           spec("i", SpecKind::VarLen, DType::Int64)});
  CHECK(values<float>(out[0]) == std::vector<float>{1.5f, 2.5f});
  CHECK(values<int64_t>(out[1]) == std::vector<int64_t>{5, -1});
}

TEST_CASE("malformed bytes are DataLoss naming the offset, never a crash") {
  Example ex;
  ex.features["a"] = Feature::int64s({1, 300, -5});
  ex.features["b"] = Feature::bytes({"hello"});
  ex.features["c"] = Feature::floats({1, 2});
  const std::string good = serialize(ex);
  // Every truncation but the empty record fails cleanly (an empty record is an empty Example).
  for (size_t n = 1; n < good.size(); ++n)
    CHECK_THROWS_CODE(parse_example(std::string_view(good.data(), n)), Code::DataLoss, "parse_example: malformed");
  CHECK_THROWS_CODE(parse_example(std::string("\x0a\x05\x01", 3)), Code::DataLoss, "length past the end");
  CHECK_THROWS_CODE(parse_example(std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)), Code::DataLoss,
                    "varint longer than 10 bytes");
  CHECK_THROWS_CODE(parse_example(std::string("\x0b", 1)), Code::DataLoss, "invalid wire type");
  CHECK_THROWS_CODE(parse_example(std::string("\x00", 1)), Code::DataLoss, "invalid field number");
  CHECK_THROWS_CODE(parse_example(example_of(entry("f", len_field(2, len_field(1, "abc"))))), Code::DataLoss,
                    "packed floats not a multiple of 4 bytes");
  CHECK_THROWS_CODE(parse_sequence_example(std::string("\x12\x03\x0a\x09", 4)), Code::DataLoss,
                    "parse_sequence_example: malformed protobuf");
  // Batched parsing names the example.
  CHECK_THROWS_CODE(parse({good, good.substr(0, good.size() - 1)}, {spec("a", SpecKind::VarLen, DType::Int64)}),
                    Code::DataLoss, "parse_examples: example 1: malformed protobuf");
}

TEST_CASE("parse_examples: FixedLen and VarLen into tensors") {
  std::vector<std::string> records;
  for (int i = 0; i < 3; ++i) {
    Example ex;
    ex.features["age"] = Feature::int64s({20 + i});
    ex.features["xy"] = Feature::floats({float(i), float(-i), 0.5f, 1.0f});
    std::vector<int64_t> tags(i);
    for (int k = 0; k < i; ++k) tags[k] = 10 * i + k;
    ex.features["tags"] = Feature::int64s(tags);
    if (i != 1) ex.features["img"] = Feature::bytes({std::string(2, char('a' + i)), "z"});
    records.push_back(serialize(ex));
  }
  auto out = parse(records, {
                                spec("age", SpecKind::FixedLen, DType::Int64),
                                spec("xy", SpecKind::FixedLen, DType::Float32, Shape{2, 2}),
                                spec("tags", SpecKind::VarLen, DType::Int64),
                                spec("img", SpecKind::VarLen, DType::UInt8),
                                spec("w", SpecKind::FixedLen, DType::Float32, Shape{2}, make<float>({7, 8}, Shape{2})),
                                spec("b", SpecKind::FixedLen, DType::Int64, Shape{3}, make<int64_t>({-1}, Shape{})),
                            });
  REQUIRE(out.size() == 1 + 1 + 2 + 2 + 1 + 1);
  CHECK(out[0].shape() == Shape{3});
  CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{20, 21, 22});
  CHECK(out[1].shape() == Shape{3, 2, 2});
  CHECK(values<float>(out[1]) == std::vector<float>{0, 0, 0.5, 1, 1, -1, 0.5, 1, 2, -2, 0.5, 1});
  CHECK(values<int64_t>(out[2]) == std::vector<int64_t>{10, 20, 21});
  CHECK(values<int64_t>(out[3]) == std::vector<int64_t>{0, 1, 2});
  const std::vector<uint8_t> img = values<uint8_t>(out[4]);
  CHECK(std::string(img.begin(), img.end()) == "aazccz");
  CHECK(values<int64_t>(out[5]) == std::vector<int64_t>{3, 0, 3});
  CHECK(out[6].shape() == Shape{3, 2});
  CHECK(values<float>(out[6]) == std::vector<float>{7, 8, 7, 8, 7, 8});
  CHECK(values<int64_t>(out[7]) == std::vector<int64_t>{-1, -1, -1, -1, -1, -1, -1, -1, -1});

  // FixedLen uint8: the bytes of the feature's strings, exactly the shape's count.
  auto raw = parse({records[0]}, {spec("img", SpecKind::FixedLen, DType::UInt8, Shape{3})});
  CHECK(values<uint8_t>(raw[0]) == std::vector<uint8_t>{'a', 'a', 'z'});

  // An empty batch gives empty tensors of the right shapes.
  auto none = parse({}, {spec("xy", SpecKind::FixedLen, DType::Float32, Shape{2, 2}),
                         spec("tags", SpecKind::VarLen, DType::Int64)});
  CHECK(none[0].shape() == Shape{0, 2, 2});
  CHECK(none[1].shape() == Shape{0});
  CHECK(none[2].shape() == Shape{0});
}

TEST_CASE("parse_examples: errors name the key, the example and the counts") {
  Example ex;
  ex.features["i"] = Feature::int64s({1, 2, 3});
  ex.features["none"] = Feature{};
  const std::vector<std::string> recs = {serialize(Example{}), serialize(ex)};
  CHECK_THROWS_CODE(parse({serialize(ex), serialize(Example{})}, {spec("i", SpecKind::FixedLen, DType::Int64, Shape{3})}),
                    Code::InvalidArgument, "example 1: feature 'i' is missing and its FixedLen spec has no default");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::FixedLen, DType::Int64, Shape{2}, make<int64_t>({0}, Shape{}))}),
                    Code::InvalidArgument, "example 1: feature 'i': expected 2 values for shape [2], got 3");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::VarLen, DType::Float32)}), Code::InvalidArgument,
                    "example 1: feature 'i' is a int64 list, but its spec asks for float32");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::VarLen, DType::UInt8)}), Code::InvalidArgument,
                    "feature 'i' is a int64 list, but its spec asks for uint8");
  // A Feature with no list set is an empty list of any dtype.
  auto out = parse(recs, {spec("none", SpecKind::VarLen, DType::Float32)});
  CHECK(values<int64_t>(out[1]) == std::vector<int64_t>{0, 0});
  CHECK_THROWS_CODE(parse(recs, {spec("none", SpecKind::FixedLen, DType::Float32, Shape{}, make<float>({1}, Shape{}))}),
                    Code::InvalidArgument, "example 1: feature 'none': expected 1 values for shape [], got 0");

  // Bad specs.
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::VarLen, DType::Int32)}), Code::InvalidArgument,
                    "spec 0 ('i'): dtype int32 is not float32, int64 or uint8");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::VarLen, DType::Int64), spec("i", SpecKind::VarLen, DType::Int64)}),
                    Code::InvalidArgument, "spec 1 ('i'): another spec has the same key");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::FixedLenSequence, DType::Int64)}), Code::InvalidArgument,
                    "FixedLenSequence specs are for sequence examples");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::VarLen, DType::Int64, {}, make<int64_t>({0}, Shape{}))}),
                    Code::InvalidArgument, "VarLen specs take no default");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::FixedLen, DType::Int64, Shape{3}, make<float>({0}, Shape{}))}),
                    Code::InvalidArgument, "default is float32, the spec int64");
  CHECK_THROWS_CODE(
      parse(recs, {spec("i", SpecKind::FixedLen, DType::Int64, Shape{3}, make<int64_t>({0, 1}, Shape{2}))}),
      Code::InvalidArgument, "default has 2 elements; shape [3] needs 3 (or 1)");
  CHECK_THROWS_CODE(parse(recs, {spec("i", static_cast<SpecKind>(9), DType::Int64)}), Code::InvalidArgument,
                    "unknown spec kind 9");
  CHECK_THROWS_CODE(parse(recs, {spec("i", SpecKind::FixedLen, DType::Int64, Shape{1, 1, 1, 1, 1, 1, 1, 1})}),
                    Code::InvalidArgument, "has more than 7 dims");
}

TEST_CASE("parse_sequence_examples: context, FixedLenSequence padded, VarLenSequence ragged") {
  std::vector<std::string> records;
  for (int i = 0; i < 3; ++i) {
    SequenceExample ex;
    ex.context["len"] = Feature::int64s({i});
    std::vector<Feature> frames, words;
    for (int t = 0; t < i; ++t) {
      frames.push_back(Feature::floats({float(10 * i + t), -float(10 * i + t)}));
      words.push_back(Feature::bytes({std::string(t + 1, char('a' + i))}));
    }
    if (i != 0) ex.feature_lists["frames"] = frames;  // example 0: missing = no steps
    ex.feature_lists["words"] = words;
    records.push_back(serialize(ex));
  }
  auto out = parse_seq(records, {
                                    spec("len", SpecKind::FixedLen, DType::Int64),
                                    spec("frames", SpecKind::FixedLenSequence, DType::Float32, Shape{2}),
                                    spec("words", SpecKind::VarLenSequence, DType::UInt8),
                                });
  REQUIRE(out.size() == 1 + 2 + 3);
  CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{0, 1, 2});
  CHECK(out[1].shape() == Shape{3, 2, 2});
  CHECK(values<float>(out[1]) == std::vector<float>{0, 0, 0, 0, 10, -10, 0, 0, 20, -20, 21, -21});
  CHECK(values<int64_t>(out[2]) == std::vector<int64_t>{0, 1, 2});
  const std::vector<uint8_t> w = values<uint8_t>(out[3]);
  CHECK(std::string(w.begin(), w.end()) == "bccc");
  CHECK(values<int64_t>(out[4]) == std::vector<int64_t>{1, 1, 2});  // bytes per step
  CHECK(values<int64_t>(out[5]) == std::vector<int64_t>{0, 1, 2});  // steps per example
  auto padded = parse_seq(
      records, {spec("frames", SpecKind::FixedLenSequence, DType::Float32, Shape{2}, make<float>({9}, Shape{}))});
  CHECK(values<float>(padded[0]) == std::vector<float>{9, 9, 9, 9, 10, -10, 9, 9, 20, -20, 21, -21});

  CHECK_THROWS_CODE(parse_seq(records, {spec("frames", SpecKind::FixedLenSequence, DType::Float32, Shape{3})}),
                    Code::InvalidArgument, "example 1: feature list 'frames' step 0: expected 3 values for shape [3], got 2");
  CHECK_THROWS_CODE(parse_seq(records, {spec("frames", SpecKind::VarLenSequence, DType::Int64)}),
                    Code::InvalidArgument, "example 1: feature list 'frames' step 0 is a float list, but its spec asks for int64");
  CHECK_THROWS_CODE(parse_seq(records, {spec("nope", SpecKind::FixedLen, DType::Int64)}), Code::InvalidArgument,
                    "parse_sequence_examples: example 0: feature 'nope' is missing");
  // A context key and a feature-list key may be the same name.
  auto both = parse_seq(records, {spec("len", SpecKind::VarLen, DType::Int64),
                                  spec("len", SpecKind::VarLenSequence, DType::Int64)});
  CHECK(values<int64_t>(both[4]) == std::vector<int64_t>{0, 0, 0});
}

TEST_CASE("parsing on the thread pool gives the serial results and the serial error") {
  std::vector<std::string> records;
  for (int i = 0; i < 1000; ++i) {
    SequenceExample ex;
    ex.context["id"] = Feature::int64s({i});
    ex.context["tags"] = Feature::bytes(std::vector<std::string>(i % 3, std::string(i % 5, 'x')));
    for (int t = 0; t < i % 7; ++t) {
      ex.feature_lists["f"].push_back(Feature::floats({float(i), float(t)}));
      ex.feature_lists["v"].push_back(Feature::int64s(std::vector<int64_t>(t, i)));
    }
    records.push_back(serialize(ex));
  }
  std::vector<std::string_view> views(records.begin(), records.end());
  const std::vector<FeatureSpec> specs = {spec("id", SpecKind::FixedLen, DType::Int64),
                                          spec("tags", SpecKind::VarLen, DType::UInt8),
                                          spec("f", SpecKind::FixedLenSequence, DType::Float32, Shape{2}),
                                          spec("v", SpecKind::VarLenSequence, DType::Int64)};
  REQUIRE(ctx().pool().num_threads() > 1);
  auto serial = parse_sequence_examples(ctx().cpu(), views.data(), views.size(), specs);
  auto parallel = parse_sequence_examples(ctx().cpu(), views.data(), views.size(), specs, &ctx().pool());
  REQUIRE(serial.size() == parallel.size());
  for (size_t k = 0; k < serial.size(); ++k) {
    CHECK(serial[k].shape() == parallel[k].shape());
    CHECK(std::memcmp(serial[k].raw_data(), parallel[k].raw_data(), serial[k].nbytes()) == 0);
  }
  CHECK(serial[3].shape() == Shape{1000, 6, 2});
  // Two bad records in different blocks: the first one is reported, as on one thread.
  records[900] = records[900].substr(0, 3);
  records[130] = serialize(SequenceExample{});
  views.assign(records.begin(), records.end());
  CHECK_THROWS_CODE(parse_sequence_examples(ctx().cpu(), views.data(), views.size(), specs, &ctx().pool()),
                    Code::InvalidArgument, "example 130: feature 'id' is missing");
}

TEST_CASE("many specs use the hash index") {
  Example ex;
  std::vector<FeatureSpec> specs;
  for (int k = 0; k < 20; ++k) {
    ex.features["k" + std::to_string(k)] = Feature::int64s({k});
    specs.push_back(spec("k" + std::to_string(k), SpecKind::FixedLen, DType::Int64));
  }
  auto out = parse({serialize(ex), serialize(ex)}, specs);
  for (int k = 0; k < 20; ++k) CHECK(values<int64_t>(out[k]) == std::vector<int64_t>{k, k});
}

}  // namespace
}  // namespace cairn::io
