// Gradients of traced control flow (internal to runtime/graph; used by control_flow.cc).
//
// A tape recording inside a trace sees a Cond or While node as one custom entry (see
// GradientTape::record) whose inputs are the node's operands or loop variables followed by its
// captures, and whose backward is traced control flow itself:
//  - cond: a cond on the same predicate whose branches recompute their forward branch under a
//    tape of their own and return d(sum <y, dy>)/d(each input) (TF builds the same If of gradient
//    branches, from saved intermediates instead of a recomputation);
//  - while_loop: the loop runs again, pushing each iteration's loop variables onto stacks (fixed-size
//    TensorArrays of max_iterations elements), then a reverse loop pops them and takes the body's
//    gradient one iteration at a time. Stacks need a static size, so a loop is differentiable only
//    with max_iterations set (as TF requires under XLA); without it the tape gets UNIMPLEMENTED.
// Variables: a branch's reads of trainable floating variables that no branch writes are hoisted:
// the variable is read once in the enclosing frame (so the tape watches it, as eagerly) and its
// value reaches the branches as a capture, which the entry's gradient covers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/autodiff/tape.h"
#include "runtime/graph/trace.h"

namespace cairn::graph {

// The gradient tapes recording on this thread now.
std::vector<GradientTape*> recording_tapes(Context& ctx);

// Hoists the branches' reads of trainable floating variables that no branch writes into
// `captures` (see above); the branches' capture inputs start at `first_capture`. Returns the
// variables that are both read and written in a branch: their gradient cannot be recorded.
std::vector<std::string> hoist_variable_reads(Tracer& tracer, std::vector<std::shared_ptr<Graph>>& branches,
                                              Tracer::Captures& captures, int first_capture);

// Records a traced Cond node (`inputs`: operands then captures) on each tape that tracks an input.
void record_cond_gradient(const std::vector<GradientTape*>& tapes, const Tensor& pred, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& outputs, const std::vector<std::shared_ptr<Graph>>& branches);

// Records a traced While node (`inputs`: loop variables then captures) on each tape that tracks an
// input. UNIMPLEMENTED when one does and `max_iterations` is -1.
void record_while_gradient(const std::vector<GradientTape*>& tapes, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& outputs, const std::vector<std::shared_ptr<Graph>>& branches,
                           int64_t max_iterations);

}  // namespace cairn::graph
