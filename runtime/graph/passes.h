// Graph optimization passes, run on a traced graph before it is replayed. Every pass keeps what a
// replay observes: the function's results, the variable writes (Assign nodes) in their order, and
// the reads that feed them. Stateful ops (summaries) are kept in their order. Random ops are never
// folded, merged or removed (each draws a seed from the context, so dropping one would shift the
// numbers of every later random op). Ops that read variables are never folded: a Read node's value
// is only known at replay.
#pragma once

#include <string>

#include "runtime/eager/context.h"
#include "runtime/graph/graph.h"

namespace cairn::graph {

struct PassOptions {
  bool fold_constants = true;
  bool eliminate_common_subexpressions = true;
  bool eliminate_dead_code = true;
  bool fuse_elementwise = true;  // see fusion.h; only the fused replay plan uses it
  bool order_split_collectives = true;
  // Folding never makes a constant larger than this or than its inputs together, whichever is
  // bigger (folding a Fill or a broadcast could otherwise bloat the graph).
  size_t max_folded_bytes = 1 << 16;
};

struct PassStats {
  int folded = 0;   // op nodes replaced by constants
  int merged = 0;   // nodes replaced by an identical earlier node
  int removed = 0;  // dead nodes dropped
  int fused = 0;    // op nodes absorbed into FusedElementwise nodes
  std::string str() const;
};

// Removes nodes nothing observable depends on. Input nodes are kept (they document the signature).
int eliminate_dead_code(Graph& g);
// Merges op nodes with the same op, attributes and inputs; constants with equal small values; and
// reads of one variable with no write of it in between.
int eliminate_common_subexpressions(Graph& g);
// Runs ops whose inputs are all constants once, now, and replaces them by constants. Kernels run
// directly (no dispatch hooks), so an enclosing tape or trace never sees them.
int fold_constants(Context& ctx, Graph& g, size_t max_folded_bytes = PassOptions().max_folded_bytes);

// Copies every host constant (numeric or bool, here and in control-flow subgraphs) to `device`,
// once, so a graph traced for a GPU runs there without mixing devices. Returns how many moved.
int place_constants(Graph& g, Device& device);

// Reorders a graph with split all-reduces (CollectiveAllReduceStart / Done: gradient buckets) so
// that they overlap the computation: each Start runs as soon as the nodes it needs have run (the
// backward pass of the other buckets after it), each Done as late as its users allow. Keeps every
// input before its users, the collectives in their order (every rank runs the same pass on the
// same graph, so all issue them alike) and the other ordered nodes (variable reads and writes,
// random and stateful ops, control flow) in theirs. Returns how many nodes moved; 0 without Starts.
int order_split_collectives(Graph& g);

// Folding and CSE to a fixed point, then dead code elimination, then order_split_collectives (no fusion).
PassStats optimize(Context& ctx, Graph& g, const PassOptions& options = {});

// A deep copy (attribute stores are copied; constant and variable references are shared).
Graph clone(const Graph& g);

}  // namespace cairn::graph
