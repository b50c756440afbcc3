// Cairn's serializer gives exactly protobuf's deterministic encoding of the same messages
// (tests/golden/example/README.md), and parses those bytes back to the same messages.
#include <fstream>
#include <iterator>

#include "runtime/io/example.h"
#include "tests/util/test_util.h"

namespace cairn::io {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The messages of tests/golden/example/make_golden.py.
Example golden_example() {
  Example ex;
  ex.features["bytes"] = Feature::bytes({"abc", "", std::string("\x00\xff\x80", 3)});
  ex.features["floats"] = Feature::floats({1.5f, -2.25f, 0.0f, 3.0e38f});
  ex.features["int64s"] = Feature::int64s({0, 1, -1, 127, 128, int64_t{1} << 62, INT64_MIN});
  ex.features["empty_floats"] = Feature::floats({});
  ex.features["none"] = Feature{};
  ex.features["caf\xc3\xa9"] = Feature::int64s({300});
  return ex;
}

SequenceExample golden_sequence_example() {
  SequenceExample ex;
  ex.context["length"] = Feature::int64s({3});
  ex.context["label"] = Feature::bytes({"cat"});
  ex.feature_lists["tokens"] = {Feature::int64s({1, 2}), Feature::int64s({3}), Feature::int64s({})};
  ex.feature_lists["weights"] = {Feature::floats({0.5f}), Feature::floats({0.25f})};
  ex.feature_lists["empty"] = {};
  return ex;
}

TEST_CASE("Example: serialize equals protobuf's deterministic encoding") {
  const std::string golden = read_file("tests/golden/example/example.pb");
  CHECK(serialize(golden_example()) == golden);
  CHECK(parse_example(golden) == golden_example());
}

TEST_CASE("SequenceExample: serialize equals protobuf's deterministic encoding") {
  const std::string golden = read_file("tests/golden/example/sequence_example.pb");
  CHECK(serialize(golden_sequence_example()) == golden);
  CHECK(parse_sequence_example(golden) == golden_sequence_example());
}

}  // namespace
}  // namespace cairn::io
