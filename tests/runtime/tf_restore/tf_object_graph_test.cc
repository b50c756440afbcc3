// TrackableObjectGraph bytes in and out: the same bytes as TensorFlow's protobuf serializer for the
// same graph, the conversion to ckpt::ObjectGraph, and hostile bytes (every truncation, ids out of
// range, bad wire types) refused with DataLoss.
#include <string>

#include "runtime/checkpoint/tf_object_graph.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace tfckpt;

std::string unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// Made with TensorFlow 2.21's trackable_object_graph_pb2 (root {net: 1, opt: 2}; node 1 a variable
// with full_name "w"; node 2 with child "empty" -> 3 and slot "m" of node 1 in node 4; node 3
// without values; node 4 a slot value; has_checkpoint_values set on every node):
//   g = TrackableObjectGraph(); ...; g.SerializeToString().hex()
constexpr std::string_view kTfBytes =
    "0a160a07080112036e65740a07080212036f70742a0208010a3912330a0e5641524941424c455f56414c55451201771a1e6e65742f2e41"
    "5454524942555445532f5641524941424c455f56414c55452a0208010a180a0908031205656d7074791a07080112016d18042a0208010a"
    "022a000a4c12460a0e5641524941424c455f56414c55451a346e65742f2e4f5054494d495a45525f534c4f542f6f70742f6d2f2e415454"
    "524942555445532f5641524941424c455f56414c55452a020801";

TEST_CASE("TensorFlow's bytes parse to the expected graph and serialize back to the same bytes") {
  const std::string bytes = unhex(kTfBytes);
  TfObjectGraph g = parse_trackable_object_graph(bytes, "golden");
  REQUIRE(g.graph.nodes.size() == 5);
  const auto& root = g.graph.nodes[0];
  REQUIRE(root.children.size() == 2);
  CHECK(root.children[0] == ckpt::ChildEdge{"net", 1});
  CHECK(root.children[1] == ckpt::ChildEdge{"opt", 2});
  REQUIRE(g.graph.nodes[1].attributes.size() == 1);
  CHECK(g.graph.nodes[1].attributes[0] == ckpt::Attribute{"VARIABLE_VALUE", "net/.ATTRIBUTES/VARIABLE_VALUE"});
  CHECK(g.full_names[1] == std::vector<std::string>{"w"});
  REQUIRE(g.graph.nodes[2].slots.size() == 1);
  CHECK(g.graph.nodes[2].slots[0] == ckpt::SlotRef{2, 1, "m", 4});
  CHECK(g.graph.nodes[2].children[0] == ckpt::ChildEdge{"empty", 3});
  CHECK(g.graph.nodes[3].attributes.empty());
  CHECK(g.graph.nodes[4].attributes[0].key == "net/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK(g.full_names[4] == std::vector<std::string>{""});
  // has_checkpoint_values is recomputed: the root and the optimizer hold values below them, the
  // empty node none; TensorFlow's serializer gave the same flags.
  CHECK(serialize_trackable_object_graph(g) == bytes);
}

TEST_CASE("a graph without full names round-trips") {
  TfObjectGraph g;
  g.graph.nodes.resize(3);
  g.graph.nodes[0].children = {{"a", 1}, {"self", 0}};
  g.graph.nodes[1].children = {{"0", 2}};
  g.graph.nodes[2].attributes = {{"VARIABLE_VALUE", "a/0/.ATTRIBUTES/VARIABLE_VALUE"}, {"ITERATOR_STATE", "k2"}};
  TfObjectGraph back = parse_trackable_object_graph(serialize_trackable_object_graph(g), "roundtrip");
  CHECK(back.graph == g.graph);
  CHECK(back.full_names[2] == std::vector<std::string>{"", ""});
}

TEST_CASE("every truncation and every single-byte change of the golden bytes is refused or parses") {
  const std::string bytes = unhex(kTfBytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      TfObjectGraph g = parse_trackable_object_graph(bytes.substr(0, n), "truncated");
      // A prefix that ends on a node boundary is a smaller valid graph; its ids are in range.
      ckpt::validate_object_graph(g.graph, "truncated");
    } catch (const Error& e) {
      CHECK_MESSAGE(e.code() == Code::DataLoss, e.message());
    }
  }
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      try {
        TfObjectGraph g = parse_trackable_object_graph(bad, "flipped");
        ckpt::validate_object_graph(g.graph, "flipped");
      } catch (const Error& e) {
        CHECK_MESSAGE(e.code() == Code::DataLoss, e.message());
      }
    }
}

TEST_CASE("hostile graphs name what is wrong") {
  CHECK_THROWS_CODE(parse_trackable_object_graph("", "g"), Code::DataLoss, "g: the object graph has no nodes");
  // node 0 with child node_id 5.
  CHECK_THROWS_CODE(parse_trackable_object_graph(unhex("0a060a0408051200"), "g"), Code::DataLoss,
                    "node 0 refers to child node 5, but the graph has 1 nodes");
  // node_id -1 (a 10-byte varint).
  CHECK_THROWS_CODE(parse_trackable_object_graph(unhex("0a0d0a0b08ffffffffffffffffff01"), "g"), Code::DataLoss,
                    "child node -1");
  // A length past the end.
  CHECK_THROWS_CODE(parse_trackable_object_graph(unhex("0a05"), "g"), Code::DataLoss, "a length runs past the end");
  // Wire type 3 (a group).
  CHECK_THROWS_CODE(parse_trackable_object_graph(unhex("0b"), "g"), Code::DataLoss, "invalid wire type");
  // A registered saver on node 0.
  CHECK_THROWS_CODE(parse_trackable_object_graph(unhex("0a0422020a00"), "g"), Code::DataLoss,
                    "g: node 0: the object is saved by a registered saver");
  // Nodes as a varint instead of a message.
  CHECK_THROWS_CODE(parse_trackable_object_graph(unhex("0801"), "g"), Code::DataLoss, "not length-delimited");
}

}  // namespace
}  // namespace cairn::test
