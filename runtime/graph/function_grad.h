// Gradients of function calls: under a recording GradientTape, a call to a traced function is one
// tape entry whose gradient is itself a traced function, as tf.function does it.
//
// The call replays its graph without per-node hooks (the fast replay) and records one entry. Its
// inputs are the call's inputs followed by the values of the variables the graph reads (read with
// Variable::read, so the tape watches trainable ones, and fed to the replay in place of its Read
// nodes). Its gradient is a graph::Function, traced once per signature, that returns
// d(sum_k <y_k, dy_k>)/d(each input the tape wants). There are two kinds:
//  - first-order (no tape records the gradient computation): as in TF, the recorded call's replay
//    also returns every intermediate, the entry keeps them, and the backward takes them as inputs:
//    its graph holds gradient ops only. Memory: what an eager tape keeps for the same ops.
//  - higher-order (a tape records the gradient computation): the backward recomputes the forward
//    pass from the entry's inputs under a tape of its own. An enclosing tape must see the gradient
//    depend on the inputs alone; saved intermediates are not connected to them on that tape (TF
//    makes them extra outputs of the forward's entry instead, with gradients of their own). The
//    cost is one more forward pass per gradient.
// Either way, variable values are inputs of the entry, so a write to a variable after the call
// does not change its gradient.
//
// Calls that keep today's node-by-node replay (each node through the eager dispatch, so the tape
// records every op):
//  - graphs with Assign nodes (a captured training step): the writes must happen once, in program
//    order, and a read after a write sees the written value, which one input per variable cannot
//    express (and a recomputation would replay the writes);
//  - graphs with random ops: a recomputation would draw different numbers (a dropout mask), and a
//    higher-order gradient recomputes;
//  - graphs with node kinds other than Input, Constant, Op and Read (control flow);
//  - a dispatch hook that is not a tape (a trace on another thread, a profiler): it may need to see
//    every node;
//  - a tape that watches a tensor the graph captured as a constant: the graph would not pass it as
//    an input, and the tape would miss that gradient.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <optional>
#include <vector>

#include "runtime/autodiff/tape.h"
#include "runtime/graph/function.h"

namespace cairn::graph {

// What a call to one concrete function needs to be recorded as one entry. Made once per concrete
// function and kept in a side table while that function lives.
class CallGradient {
 public:
  // The gradient of `fn`'s calls, or null when its graph needs the node-by-node replay (see above).
  static std::shared_ptr<const CallGradient> of(Context& ctx, const std::shared_ptr<const ConcreteFunction>& fn);

  CallGradient(Context& ctx, const ConcreteFunction& fn);

  // `fn` with its Read nodes turned into inputs after the call's inputs: what the call replays.
  const ConcreteFunction& forward() const { return *forward_; }
  // The variables read, in the order of those extra inputs.
  const std::vector<Ref<Variable>>& variables() const { return variables_; }
  // The inputs that can get a gradient: floating ones with a path to a floating output.
  const std::vector<size_t>& gradient_inputs() const { return wrt_; }
  // The entry's outputs for a call's `outputs`: empty where the call returned an input, a constant
  // or an earlier output as it is (see GradientTape::record).
  std::vector<Tensor> entry_outputs(const std::vector<Tensor>& outputs) const;
  // The backward functions made so far. Each serves one set of outputs that got a gradient and one
  // set of inputs the tapes wanted (a training step wants the weights', not the batch's): inputs
  // the forward's inputs, then dy for each of those outputs; outputs the gradient of each of those
  // inputs. Made on first use, traced once per signature.
  std::vector<Ref<Function>> backwards() const;
  // `forward()` returning every op output after its own outputs, in node order: what a recorded
  // call replays, so that the first-order backward reads intermediates instead of recomputing them.
  const ConcreteFunction& saving_forward() const { return *saving_; }
  // The tape's view of one call's backward; `saved` holds the intermediates saving_forward()
  // returned (empty: the backward recomputes them).
  std::shared_ptr<const CustomGradient> custom(std::vector<Tensor> saved) const;
  // Whether some floating input reaches some floating output: otherwise there is nothing to record.
  bool differentiable() const { return !wrt_.empty(); }
  // Whether `tape` tracks one of the constants the graph captured.
  bool tape_tracks_a_constant(const GradientTape& tape) const;

 private:
  std::string name_;  // "function 'f'"
  std::shared_ptr<const ConcreteFunction> forward_;
  std::shared_ptr<const ConcreteFunction> saving_;
  std::vector<Ref<Variable>> variables_;
  std::vector<Tensor> constants_;
  std::vector<bool> owned_;  // per output: the entry's own (see entry_outputs)
  std::vector<size_t> wrt_;  // forward inputs that can get a gradient
  struct Backwards;
  std::shared_ptr<Backwards> backwards_;  // shared with every call's CustomGradient
};

// The tapes recording on this thread, if every installed hook is a tape; nothing otherwise.
std::optional<std::vector<GradientTape*>> tapes_only(Context& ctx);

// Pauses the tapes recording on this thread for its life. A trace runs under one: its ops are
// symbolic, and a tape around the call must not record them (tapes created inside the host
// function still record, as a training step's tape must).
class TapesPausedHere {
 public:
  explicit TapesPausedHere(Context& ctx);
  explicit TapesPausedHere(std::vector<GradientTape*> tapes);
  ~TapesPausedHere();
  TapesPausedHere(const TapesPausedHere&) = delete;
  TapesPausedHere& operator=(const TapesPausedHere&) = delete;

 private:
  std::vector<GradientTape*> tapes_;
};

// Runs `fn` on `inputs` for Function::call when dispatch hooks are installed. Returns nothing when
// the call must replay node by node under the hooks (the caller does that); otherwise the call's
// outputs, recorded as one entry on each tape that records on this thread.
std::optional<std::vector<Tensor>> call_with_tapes(Context& ctx, const std::shared_ptr<const ConcreteFunction>& fn,
                                                   const std::vector<Tensor>& inputs);

}  // namespace cairn::graph
