// The binary GraphDef: decoded back field by field with nanopb's wire-level decoder, against the
// shared model (graphdef_model.h) and TensorFlow's field numbers.
#include "runtime/graph/graphdef_proto.h"

#include <pb_decode.h>

#include <map>
#include <set>

#include "runtime/graph/graphdef.h"
#include "runtime/graph/graphdef_model.h"
#include "tests/tensorboard/tools/graph_sample.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

// A decoded message: each field number's values in order (varints as numbers, length-delimited
// fields as bytes).
struct Msg {
  std::multimap<uint32_t, std::string> bytes;
  std::multimap<uint32_t, uint64_t> varints;
  std::vector<std::string> all(uint32_t f) const {
    std::vector<std::string> out;
    for (auto [it, end] = bytes.equal_range(f); it != end; ++it) out.push_back(it->second);
    return out;
  }
  std::string one(uint32_t f) const {
    REQUIRE(bytes.count(f) == 1);
    return bytes.find(f)->second;
  }
  uint64_t varint(uint32_t f) const {
    REQUIRE(varints.count(f) == 1);
    return varints.find(f)->second;
  }
};

Msg decode(const std::string& data) {
  Msg m;
  pb_istream_t s = pb_istream_from_buffer(reinterpret_cast<const pb_byte_t*>(data.data()), data.size());
  pb_wire_type_t wt;
  uint32_t tag;
  bool eof = false;
  while (pb_decode_tag(&s, &wt, &tag, &eof)) {
    if (wt == PB_WT_VARINT) {
      uint64_t v = 0;
      REQUIRE(pb_decode_varint(&s, &v));
      m.varints.emplace(tag, v);
    } else if (wt == PB_WT_STRING) {
      uint32_t n = 0;
      REQUIRE(pb_decode_varint32(&s, &n));
      std::string b(n, '\0');
      REQUIRE(pb_read(&s, reinterpret_cast<pb_byte_t*>(b.data()), n));
      m.bytes.emplace(tag, b);
    } else {
      // float (fixed32): kept as bytes too
      REQUIRE(wt == PB_WT_32BIT);
      std::string b(4, '\0');
      REQUIRE(pb_read(&s, reinterpret_cast<pb_byte_t*>(b.data()), 4));
      m.bytes.emplace(tag, b);
    }
  }
  REQUIRE(eof);
  return m;
}

std::map<std::string, Msg> attrs_of(const Msg& node, uint32_t field = 5) {
  std::map<std::string, Msg> out;
  for (const std::string& e : node.all(field)) {
    Msg entry = decode(e);
    out.emplace(entry.one(1), decode(entry.one(2)));
  }
  return out;
}

// Nodes of a GraphDef (field 1) or a FunctionDef (field 3) against the model's.
void check_nodes(const std::vector<std::string>& got, const std::vector<graph::gdef::NodeDef>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    Msg n = decode(got[k]);
    CHECK(n.one(1) == want[k].name);
    CHECK(n.one(2) == want[k].op);
    std::vector<std::string> inputs = n.all(3);
    CHECK(inputs == want[k].inputs);
    std::map<std::string, Msg> attrs = attrs_of(n);
    CHECK(attrs.size() == want[k].attrs.size());
    for (const auto& [key, v] : want[k].attrs) CHECK_MESSAGE(attrs.count(key) == 1, want[k].name, " ", key);
  }
}

const graph::Graph& sample_graph() {
  static Ref<graph::Function> f = graph_sample(ctx());
  return f->concretes()[0]->graph();
}

TEST_CASE("the binary GraphDef holds the model's nodes, inputs and attributes, and the version") {
  const graph::gdef::GraphDef model = graph::gdef::build_graphdef(sample_graph());
  Msg g = decode(graph::graphdef_proto(sample_graph()));
  check_nodes(g.all(1), model.nodes);
  CHECK(decode(g.one(4)).varint(1) == 27);  // versions.producer

  // Field by field for a few nodes: Placeholder dtype and shape, the variable, the While.
  std::map<std::string, Msg> nodes;
  for (const std::string& n : g.all(1)) {
    Msg m = decode(n);
    nodes.emplace(m.one(1), m);
  }
  REQUIRE(nodes.count("input_0"));
  auto in = attrs_of(nodes["input_0"]);
  CHECK(in["dtype"].varint(6) == 3);           // DT_INT32
  CHECK(in["shape"].all(7).size() == 1);       // a scalar: a shape with no dims
  CHECK(decode(in["shape"].one(7)).all(2).empty());
  REQUIRE(nodes.count("sample/calls"));
  CHECK(nodes["sample/calls"].one(2) == "VarHandleOp");
  CHECK(attrs_of(nodes["sample/calls"])["shared_name"].one(2) == "sample/calls:0");

  std::string loop;
  for (const auto& [name, m] : nodes)
    if (m.one(2) == "While") loop = name;
  REQUIRE(!loop.empty());
  auto w = attrs_of(nodes[loop]);
  CHECK(decode(w["body"].one(10)).one(1) == loop + "_body");
  CHECK(decode(w["cond"].one(10)).one(1) == loop + "_cond");
  CHECK(decode(w["T"].one(1)).all(6).size() == 1);  // packed list of types: one field
  CHECK(w["parallel_iterations"].varint(3) == 10);
  // _output_shapes: a list of two scalar shapes
  CHECK(decode(w["_output_shapes"].one(1)).all(7).size() == 2);
  // A Const's value is a TensorProto with dtype and shape only.
  for (const auto& [name, m] : nodes)
    if (m.one(2) == "Const") {
      Msg t = decode(attrs_of(m)["value"].one(8));
      CHECK(t.varint(1) == 3);
      CHECK(t.all(2).size() == 1);
    }
}

TEST_CASE("control-flow subgraphs are FunctionDefs in the library, nested ones included") {
  const graph::gdef::GraphDef model = graph::gdef::build_graphdef(sample_graph());
  Msg g = decode(graph::graphdef_proto(sample_graph()));
  std::vector<std::string> functions = decode(g.one(2)).all(1);
  REQUIRE(functions.size() == 4);  // while cond, while body, and the cond's two branches in the body
  REQUIRE(model.library.size() == 4);
  std::set<std::string> names;
  for (size_t k = 0; k < functions.size(); ++k) {
    Msg f = decode(functions[k]);
    Msg sig = decode(f.one(1));
    CHECK(sig.one(1) == model.library[k].name);
    names.insert(sig.one(1));
    REQUIRE(sig.all(2).size() == model.library[k].inputs.size());
    for (const std::string& arg : sig.all(2)) CHECK(decode(arg).varint(3) == 3);  // int32 args
    CHECK(sig.all(3).size() == model.library[k].outputs.size());
    check_nodes(f.all(3), model.library[k].nodes);
    std::vector<std::string> ret = f.all(4);
    REQUIRE(ret.size() == model.library[k].ret.size());
    for (size_t r = 0; r < ret.size(); ++r) {
      CHECK(decode(ret[r]).one(1) == model.library[k].ret[r].first);
      CHECK(decode(ret[r]).one(2) == model.library[k].ret[r].second);
    }
  }
  // The If inside the loop body names its branches, which are in the library.
  bool found_if = false;
  for (const std::string& fn : functions) {
    Msg f = decode(fn);
    for (const std::string& n : f.all(3)) {
      Msg node = decode(n);
      if (node.one(2) != "If") continue;
      found_if = true;
      auto a = attrs_of(node);
      CHECK(names.count(decode(a["then_branch"].one(10)).one(1)));
      CHECK(names.count(decode(a["else_branch"].one(10)).one(1)));
      CHECK(a["Tcond"].varint(6) == 10);  // DT_BOOL
      // Inside a function, tensors are "node:output:k" or arg names.
      for (const std::string& input : node.all(3))
        CHECK_MESSAGE((input.find(":output:") != std::string::npos || input.rfind("input_", 0) == 0), input);
    }
  }
  CHECK(found_if);
}

TEST_CASE("the text GraphDef renders the same model, library included") {
  std::string text = graph::graphdef_text(sample_graph());
  CHECK(text.find("library {\n  function {\n    signature {\n") != std::string::npos);
  CHECK(text.find("op: \"While\"") != std::string::npos);
  CHECK(text.find("value { func { name: \"") != std::string::npos);
  CHECK(text.find("ret { key: \"output_0\" value: \"") != std::string::npos);
  CHECK(text.substr(text.size() - 30).find("versions {\n  producer: 27\n}\n") != std::string::npos);
}

}  // namespace
}  // namespace cairn::test
