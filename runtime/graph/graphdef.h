// A traced graph as TensorFlow GraphDef text format (protobuf text of tensorflow.GraphDef), so
// TensorBoard can draw it (convert with `text_format.Parse` and write an event file, or load the
// .pbtxt in TensorBoard's graph plugin).
//
// Mapping: each function input is a Placeholder "input_<i>"; a captured constant a Const
// "const_<node>" (dtype and shape, no values); an op node "<Op>_<node>" with its attributes and
// "T"-style inferred type attributes; each variable one VarHandleOp named after the variable (its
// scopes become TensorBoard groups) read by ReadVariableOp and written by AssignVariableOp nodes;
// each result an Identity "output_<k>". Every node carries "_output_shapes". Variable writes are
// chained to the previous stateful node with a control input ("^name"), as TF's automatic control
// dependencies order them. A Cond is an If node and a While a While node (TF's functional control
// flow) whose subgraphs are FunctionDefs in the library ("If_<node>_then"/"_else",
// "While_<node>_cond"/"_body"; nested ones prefixed by their enclosing function's name and "__"):
// in a function body the args are "input_<i>", the results "output_<k>", and a tensor is
// "node:output:k" (TF's form inside functions; "output" stands for the op's output arg name).
//
// The mapping lives in graphdef_model.h (build_graphdef); graphdef_proto.h writes the same model as
// binary protobuf.
#pragma once

#include <string>

#include "runtime/graph/graph.h"

namespace cairn::graph {

// "DT_FLOAT", "DT_INT64", ...; "DT_INVALID" for anything else.
const char* tf_dtype_name(DType t);

std::string graphdef_text(const Graph& graph);

}  // namespace cairn::graph
