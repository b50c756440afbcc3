// Control flow that a function trace can capture: tf.cond, tf.while_loop and a TensorArray.
//
// Outside a trace these run eagerly: cond reads the predicate and calls one branch, while_loop
// calls cond and body until cond is false, and every op inside goes through eager dispatch (a tape
// records it). Inside a trace (graph::Function) each branch is traced once into a subgraph, and
// the enclosing graph gets one Cond or While node holding the subgraphs; a replay evaluates the
// predicate on the device, reads it (one host sync per branch decision), and runs the chosen
// subgraph, so the number of loop iterations may depend on the data.
//
// Rules, as in TensorFlow's graph mode:
//  - cond: the predicate is a bool scalar; both branches take the operands and return the same
//    number of results with equal dtypes and shapes.
//  - while_loop: the loop variables keep their dtype and shape (body returns one tensor per loop
//    variable); cond returns one bool scalar. max_iterations stops the loop early (TF's
//    maximum_iterations).
//  - Branches may use tensors of the enclosing trace and variables: those are captured (fed to
//    the subgraph at replay; variables by reference). Side effects of the host function run only
//    while tracing, and both branches of a cond are traced even though only one runs per call.
//  - Gradients: a tape recording inside a trace sees a Cond or While node as one entry
//    (control_flow_grad.h). A loop is differentiable there only with max_iterations (the size of
//    the stacks of loop variables its gradient keeps): without it, UNIMPLEMENTED rather than a
//    silently missing gradient. Eager control flow, and replays under a tape, are differentiable.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/graph/graph.h"

namespace cairn::graph {

// A branch, a loop condition or a loop body: tensors in, tensors out.
using BranchFn = std::function<std::vector<Tensor>(Context& ctx, const std::vector<Tensor>& inputs)>;

// tf.cond: then_branch(operands) when `pred` is true, else_branch(operands).
std::vector<Tensor> cond(Context& ctx, const Tensor& pred, const std::vector<Tensor>& operands,
                         const BranchFn& then_branch, const BranchFn& else_branch);

struct WhileOptions {
  int64_t max_iterations = -1;  // -1: no limit
};

// tf.while_loop: while cond(vars) is true, vars = body(vars); returns the final vars.
std::vector<Tensor> while_loop(Context& ctx, const BranchFn& cond, const BranchFn& body,
                               const std::vector<Tensor>& loop_vars, const WhileOptions& options = {});

// Runs a Cond or While node at replay. `run_branch(b, inputs)` runs n.branches[b] on `inputs`
// (the replaying function keeps a compiled function per subgraph). Inside another trace the node
// is recorded into that trace again instead.
using BranchRunner = std::function<std::vector<Tensor>(size_t branch, const std::vector<Tensor>& inputs)>;
std::vector<Tensor> run_control_flow(Context& ctx, const Node& n, const std::vector<Tensor>& inputs,
                                     const BranchRunner& run_branch, const std::string& function);

// ---- TensorArray ----
//
// tf.TensorArray with a fixed size (TF's dynamic_size=False): an array of `size` elements of one
// dtype and shape, held as one tensor of shape [size, element...] so it can be a while_loop
// variable. Elements never written read as zeros (as TF's stack does with a known element shape).
// Writes are functional: they return the new array (the old one is unchanged), built from
// registered ops, so they run on every device, inside traces, and under a tape.
//
// `index` is an int32 or int64 scalar tensor. Eagerly, an index outside [0, size) is OUT_OF_RANGE.
// Inside a trace the index has no value yet: an out-of-range write leaves the array unchanged and
// an out-of-range read fails like GatherV2 (keep indices in range with the loop condition).

// A new array of `size` zero elements.
Tensor tensor_array(Context& ctx, DType dtype, int64_t size, const Shape& element_shape);
// The array with element `index` replaced by `value` (dtype and shape of an element).
Tensor tensor_array_write(Context& ctx, const Tensor& array, const Tensor& index, const Tensor& value);
// Element `index`.
Tensor tensor_array_read(Context& ctx, const Tensor& array, const Tensor& index);

}  // namespace cairn::graph
