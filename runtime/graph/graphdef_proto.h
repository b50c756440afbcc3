// The binary tensorflow.GraphDef of a traced graph, as TensorBoard's graph plugin reads it (the
// GraphDef of an Event's `graph_def` field). Same nodes and attributes as graphdef_text (the
// mapping is in graphdef_model.h), encoded by nanopb from runtime/io/proto/graph.proto.
#pragma once

#include <string>

#include "runtime/graph/graph.h"

namespace cairn::graph {

// The binary tensorflow.GraphDef of a traced function, with the subgraphs of its control flow
// (cond branches, while cond/body) as FunctionDefs in its library, as TensorBoard's graph plugin reads.
std::string graphdef_proto(const Graph& graph);

}  // namespace cairn::graph
