// tf.function for C++ (and, through the C API, every binding): a host function traced into a graph
// the first time it is called with a new input signature; later calls with that signature replay
// the graph without entering the host function.
//
// The cache key is each input's dtype and shape. With an input signature (dims of -1 allowed) the
// key is the signature: one trace serves every matching shape, and replays re-infer shapes per
// node, as long as the trace does not depend on the -1 dims. Traces run on the call's concrete
// shapes, and code that reads a shape while tracing (a Reshape to the batch size, the count of a
// mean's gradient) bakes it into the graph. So the second distinct shape is traced too: the same
// graph (same_except_shapes) makes the first trace serve every shape from then on; a different one
// makes the function trace once per concrete shape, which is always correct. Variables are captured by reference (a replay reads and writes the live variable); eager
// tensors the host function uses are captured by value at trace time. Side effects of the host
// function itself (printing, counters) happen only while tracing.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/passes.h"

namespace cairn::graph {

// One traced graph and how to run it.
//
// Each plan (unfused, fused) is compiled once into a Program (executor.h): a flat instruction list
// over one slot array, with a memory plan that gives intermediates shared buffers by liveness.
// Replays run with a ReplayState taken from a per-function free list (one per concurrent caller),
// which keeps those buffers between replays: after the first replay, a replay without hooks
// allocates only the buffers it returns to the caller. A buffer something else references (a
// result, a variable's value, a caller's tensor) is never overwritten.
class ConcreteFunction {
 public:
  // `graph` is the traced graph, already optimized by the caller (see passes.h); with `fuse`, a
  // second plan with elementwise fusion (fusion.h) serves replays on the CPU without hooks.
  ConcreteFunction(std::string name, std::vector<TensorSpec> signature, Graph graph, bool fuse = false);
  ~ConcreteFunction();

  const std::string& name() const { return name_; }
  const std::vector<TensorSpec>& signature() const { return signature_; }  // dims may be -1
  // The optimized graph without fusion: what a replay under dispatch hooks runs.
  const Graph& graph() const { return unfused_.graph; }
  // The fused plan (the same graph when nothing was fused).
  const Graph& fused_graph() const { return fused_ ? fused_->graph : unfused_.graph; }
  size_t num_outputs() const { return unfused_.graph.outputs.size(); }
  // The inputs whose values were baked in at trace time (FunctionOptions::static_inputs).
  const std::vector<int>& static_inputs() const { return static_inputs_; }
  void set_static_inputs(std::vector<int> inputs) { static_inputs_ = std::move(inputs); }

  // Runs the graph on `inputs` (checked against the signature). Ops run on their inputs' device
  // (an op without inputs on the context's default device). With dispatch hooks installed (a tape,
  // an enclosing trace) each node goes through the full eager dispatch so the hooks see it, unless
  // `observed` is false: the caller vouches that no hook needs the nodes (a tape records the whole
  // call as one entry, function_grad.h), and the replay takes the fast path.
  std::vector<Tensor> run(Context& ctx, const std::vector<Tensor>& inputs, bool observed = true) const;

 private:
  struct Plan {
    Graph graph;
    Program program;  // refers to `graph`
    Plan(Graph g, bool plan_memory) : graph(std::move(g)), program(graph, plan_memory) {}
  };
  class StateLease;
  class Generic;

  // Runs node `i`, of any kind but Op, reading and writing values through `state`.
  void run_node(Context& ctx, const Plan& plan, int i, ReplayState& state, bool fast,
                const std::vector<Tensor>& inputs) const;
  // Compiles a function per control-flow subgraph of `g` (see control_flow.h).
  void compile_branches(const Graph& g, bool fuse);

  std::string name_;
  std::string origin_;  // "function 'name'", for errors of variable writes
  std::vector<TensorSpec> signature_;
  bool exact_;  // no unknown dimensions: shapes were inferred once, at trace time
  std::vector<int> static_inputs_;
  Plan unfused_;
  std::unique_ptr<Plan> fused_;  // null when fusion is off or found nothing
  unsigned fused_kinds_ = 0;      // device kinds that can replay fused_ (fusion.h: fused_device_kinds)
  // The compiled subgraphs of Cond and While nodes (both plans share the subgraphs).
  std::unordered_map<const Graph*, std::unique_ptr<ConcreteFunction>> branches_;
  mutable std::mutex states_mu_;
  mutable std::vector<std::unique_ptr<ReplayState>> idle_states_;
};

struct FunctionOptions {
  // Optional: the dtype and shape of every input, -1 for a dimension of any size.
  std::vector<TensorSpec> input_signature;
  bool has_input_signature = false;
  // A warning goes to the context's log when the number of traces reaches this (TF warns about
  // frequent retracing too); 0 turns it off.
  int retrace_warning = 5;
  // Graph optimizations run on each new trace (passes.h, fusion.h).
  PassOptions passes;
  // Static inputs (TF's rule for Python scalars): each listed input's value, not only its dtype and
  // shape, is part of the cache key. The host function receives it as an eager tensor whose values
  // it may read (to pick a code path, a loop count, a layer size), and the trace bakes it in as a
  // constant: a new value retraces. For small tensors (at most kMaxStaticElements elements).
  std::vector<int> static_inputs;
};

constexpr int64_t kMaxStaticElements = 1024;

// The host function: symbolic inputs in, outputs out. It runs only while tracing.
using HostFunction = std::function<std::vector<Tensor>(Context& ctx, const std::vector<Tensor>& inputs)>;

class Function : public RefCounted {
 public:
  Function(Context& ctx, std::string name, HostFunction fn, FunctionOptions options = {});

  const std::string& name() const { return name_; }
  // Traces on a new signature, replays otherwise.
  std::vector<Tensor> call(const std::vector<Tensor>& inputs);
  // The concrete function for these inputs' signature, tracing it if needed.
  std::shared_ptr<const ConcreteFunction> concrete(const std::vector<Tensor>& inputs);
  size_t num_traces() const;
  // Every concrete function traced so far, in trace order.
  std::vector<std::shared_ptr<const ConcreteFunction>> concretes() const;

 private:
  std::vector<TensorSpec> key_of(const std::vector<Tensor>& inputs) const;
  // The cache key: the signature text, the devices of inputs off the context's CPU, and the values of
  // static inputs.
  std::string cache_key(const std::vector<TensorSpec>& key, const std::vector<Tensor>& inputs) const;
  bool is_static(size_t input) const;
  bool off_context_cpu(const Device& device) const;
  // Traces the host function on `inputs`' shapes and optimizes the graph.
  Graph trace_graph(const std::vector<Tensor>& inputs);
  // Caches `graph` under `text` (a cache_key) as a concrete function with signature `key`.
  std::shared_ptr<const ConcreteFunction> add_trace(const std::vector<TensorSpec>& key, const std::string& text,
                                                    Graph graph);

  // What is known of a signature with -1 dims: the concrete shapes of its first trace (a cache_key)
  // and whether that trace serves other shapes (checked on the second distinct shape).
  struct Relaxed {
    std::string first_shapes;
    enum State { Unverified, Generic, PerShape } state = Unverified;
  };

  Ref<Context> ctx_;
  std::string name_;
  HostFunction fn_;
  FunctionOptions options_;
  mutable std::mutex mu_;
  // Held while tracing. Recursive: a host function may call its own Function with eager inputs.
  std::recursive_mutex trace_mu_;
  std::map<std::string, std::shared_ptr<const ConcreteFunction>> cache_;  // by cache_key
  std::vector<std::shared_ptr<const ConcreteFunction>> order_;
  std::map<std::string, Relaxed> relaxed_;  // by the signature's cache_key
};

// Traces `fn` into a new, unoptimized graph: input i is a symbolic tensor of `specs[i]` (dims may
// be -1), or `static_values[i]` when that is a valid tensor (a value the function may read). A
// gradient tape around the call records nothing of it.
Graph trace_host_function(Context& ctx, const std::string& name, const HostFunction& fn,
                          const std::vector<TensorSpec>& specs, const std::vector<Tensor>& static_values = {});

// "float32[2,-1], int32[]": a signature as text (also the cache key).
std::string signature_text(const std::vector<TensorSpec>& signature);

}  // namespace cairn::graph
