// The GraphDef model shared by graphdef_text (protobuf text) and graphdef_proto (binary): the
// mapping of a traced graph onto TensorFlow nodes, attributes and library functions is decided
// once here (build_graphdef); the two writers only render it. Mapping: see graphdef.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/graph.h"

namespace cairn::graph::gdef {

// One attribute value, as tensorflow.AttrValue can hold it.
struct Value {
  enum class Kind { Int, Bool, Float, String, Type, Shape, Tensor, Ints, Floats, Types, Shapes, Func };
  Kind kind = Kind::Int;
  int64_t i = 0;                             // Int, Bool (0/1)
  double f = 0;                              // Float
  std::string s;                             // String; Func: the function's name
  DType type = DType::Invalid;               // Type; Tensor: its dtype
  std::vector<int64_t> dims;                 // Shape; Tensor: its shape (no values)
  std::vector<int64_t> ints;                 // Ints
  std::vector<double> floats;                // Floats
  std::vector<DType> types;                  // Types
  std::vector<std::vector<int64_t>> shapes;  // Shapes
};

struct NodeDef {
  std::string name, op;
  std::vector<std::string> inputs;  // "node", "node:k", "^node"; in a function "node:output:k" or an arg
  std::vector<std::pair<std::string, Value>> attrs;  // in writing order
};

struct Arg {
  std::string name;
  DType type = DType::Invalid;
};

// A control-flow subgraph (a cond branch, a loop's cond or body).
struct FunctionDef {
  std::string name;
  std::vector<Arg> inputs, outputs;
  std::vector<NodeDef> nodes;
  std::vector<std::pair<std::string, std::string>> ret;  // output arg -> tensor in the body
};

struct GraphDef {
  std::vector<NodeDef> nodes;
  std::vector<FunctionDef> library;  // every subgraph, nested ones included, each once
  int producer = 27;
};

GraphDef build_graphdef(const Graph& graph);

// TensorFlow's DataType enum value (DT_FLOAT = 1, ...); 0 (DT_INVALID) for anything else.
int tf_dtype_enum(DType t);

}  // namespace cairn::graph::gdef
