// A traced function's graph: nodes in the order the trace recorded them (a valid execution order
// that also keeps variable reads and writes in program order), the function's inputs and outputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/attr_store.h"
#include "runtime/ops/op_def.h"
#include "runtime/tensor/tensor.h"
#include "runtime/track/variable.h"

namespace cairn::graph {

class Graph;

// One output of one node.
struct Port {
  int node = -1;
  int output = 0;
  bool operator==(const Port& o) const { return node == o.node && output == o.output; }
};

enum class NodeKind {
  Input,     // the function's `index`-th input
  Constant,  // an eager tensor the trace used (captured by value)
  Op,        // a registered op
  Read,      // reads `variable` (captured by reference: a replay reads the live value)
  Assign,    // writes its input to `variable`
  Cond,      // tf.cond: runs branches[0] when input 0 (a bool scalar) is true, else branches[1]
  While,     // tf.while_loop: runs branches[1] (body) while branches[0] (cond) gives true
};
const char* node_kind_name(NodeKind k);

struct Node {
  NodeKind kind = NodeKind::Op;
  const OpDef* def = nullptr;            // Op
  std::unique_ptr<AttrStore> attrs;      // Op
  std::vector<Port> inputs;
  std::vector<TensorSpec> outputs;       // dtype and shape of each output
  int index = 0;                         // Input
  Tensor value;                          // Constant
  cairn::Ref<Variable> variable;         // Read, Assign
  // Cond: {then, else}, each taking inputs 1.. (operands, then captures) and giving the outputs.
  // While: {cond, body}, each taking the inputs (loop variables, then captures); cond gives one
  // bool scalar, body the next loop variables. See control_flow.h.
  std::vector<std::shared_ptr<const Graph>> branches;
  int64_t max_iterations = -1;           // While: stop after this many iterations (-1: no limit)
  bool is_control_flow() const { return kind == NodeKind::Cond || kind == NodeKind::While; }
};

// The dtype and shape of each tensor (a trace's input specs, a branch's signature).
std::vector<TensorSpec> specs_of(const std::vector<Tensor>& tensors);

class Graph {
 public:
  std::vector<Node> nodes;
  std::vector<Port> outputs;   // the function's results
  int num_inputs = 0;

  int add(Node node);
  const TensorSpec& spec(Port r) const { return nodes[r.node].outputs[r.output]; }
  // A text dump: one line per node, "%3 = MatMul(%1, %2) {transpose_a=false} -> float32[2,4]".
  // Control-flow subgraphs follow their node, indented.
  std::string dump() const;
  // Whether running the graph writes a variable, draws random numbers or runs a stateful op (a
  // summary), here or in a subgraph.
  bool has_side_effects() const;
};

// Whether two traces of one function made the same graph apart from the shapes of its values: the
// same nodes, ops, attributes, inputs, variables and constant values, and the same dtypes. Two
// traces on different input shapes that differ otherwise baked a shape into the graph (a Reshape
// to the batch size, the count of a mean's gradient), so one cannot replay the other's shapes.
bool same_except_shapes(const Graph& a, const Graph& b);

}  // namespace cairn::graph
