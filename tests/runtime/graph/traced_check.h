// Runs an OpCase eagerly and as a traced graph::Function in every way a replay can run it, on one
// context, and describes each difference. Both sides run the same kernels, so results (and the
// devices they live on) must be bitwise equal; when eager execution raises, every traced run must
// raise the same code.
//
// The ways a case is traced (each a separate Function):
//   trace / replay              passes on, fusion off: the first call (trace, then run), the second
//                               (replay of the cached graph on the fast path)
//   exported call / replay      that function exported to a file and loaded back (attributes and
//                               constants serialized, the stored graph traced again); also for the
//                               constants mode
//   fused trace / fused replay  the same with fuse_elementwise on
//   unoptimized                 every pass off: the graph exactly as traced
//   constants trace / replay    the inputs captured as eager tensors, so constant folding runs the
//                               op at optimization time (random ops are never folded)
//   unknown dims trace / replay an input signature with every dimension -1: the generic replay
//                               (full dispatch, shapes inferred per node, no fusion, no pooling)
//   under a tape trace / replay a GradientTape watching the float inputs: hooks installed, so the
//                               unfused graph runs through the full dispatch
//   pooled chain                Neg after each float output and Identity after every output, fusion
//                               on: the op's outputs become intermediates (pooled buffers, and the
//                               op fused with Neg where fusion knows it). Called first on poisoned
//                               inputs so the real call reuses buffers holding other values.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tests/runtime/graph/op_cases.h"

namespace cairn::test {

struct TracedReport {
  bool eager_ok = false;       // eager execution succeeded (otherwise errors were compared)
  std::string eager_error;     // its message when it did not
  std::vector<std::string> problems;  // one line per difference; empty when traced == eager
  bool op_in_graph = false;           // the traced graph has a node of the case's op
  bool absorbed_by_fusion = false;    // the pooled chain's fused plan absorbed the op's nodes
};

TracedReport check_traced(Context& ctx, const OpCase& c);

// A case with fresh_draws: a traced function drawing twice per call gives, call after call, the
// draws that eager calls give one by one on a context with the same seed (tracing takes no key,
// and the passes neither merge nor drop the two draws); eager draws differ from each other.
// `make_ctx` makes a new context with a fixed seed each time.
TracedReport check_fresh_draws(const std::function<Ref<Context>()>& make_ctx, const OpCase& c);

// The members of `cases` (one device's variants) grouped by family, input dtypes and input ranks;
// only groups of two or more.
std::vector<std::vector<OpCase>> shape_families(const std::vector<OpCase>& cases);

// One family group: a function whose input signature has every dimension -1 is traced on the
// first member and then serves every member, twice each (the generic replay: shapes inferred per
// node), matching eager execution of each member bitwise or raising the same error code.
TracedReport check_shape_family(Context& ctx, const std::vector<OpCase>& members);

// `threads` threads replay one traced function of `c` (with Identity after each output, so the op's
// outputs come from each caller's pooled buffers) `calls` times each, concurrently; every result
// must equal eager execution bitwise. Nothing is checked when eager execution raises.
TracedReport check_concurrent_replays(Context& ctx, const OpCase& c, int threads, int calls);

// An op of untraceable_ops(): eager execution works and tracing raises Unimplemented naming the op.
TracedReport check_untraceable(Context& ctx, const OpCase& c);

// Empty when `got` and `want` have one device, dtype, shape and bytes; else what differs first and
// how many elements differ.
std::string bitwise_difference(Context& ctx, const Tensor& got, const Tensor& want);

// ---- Every case on one device (what the CPU and Vulkan tests run) ----

// Copies a case's input to the device under test (the identity on the CPU).
using ToDevice = std::function<Tensor(const Tensor&)>;

struct DeviceRun {
  int variants = 0;         // case variants run
  int compared = 0;         // ... that ran eagerly and were compared bitwise
  int errors_compared = 0;  // ... that raised eagerly (traced runs raised the same code, or a problem)
  std::set<std::string> ran, in_graph, absorbed;  // ops compared / seen in a traced graph / fused
  std::vector<std::string> problems;              // "Op [label] mode: what differs"
};

// Every case of op_cases() except those of untraceable ops, as `variants(c, float64_kernels)` with
// inputs moved by `to_device`, checked on `ctx` (fresh-draw cases on contexts from `seeded_ctx`).
DeviceRun run_all_cases(Context& ctx, bool float64_kernels, const ToDevice& to_device,
                        const std::function<Ref<Context>()>& seeded_ctx);
// Registered ops (untraceable ones aside) without a compared case: " Op1 Op2", empty when none.
std::string uncovered_ops(const DeviceRun& run);
// Compared ops never seen as a node of their traced graph.
std::string ops_missing_from_graphs(const DeviceRun& run);

struct FamilyRun {
  int groups = 0;  // family groups checked
  int served = 0;  // cases served by their group's one trace
  std::vector<std::string> problems;
};
// check_shape_family over every group of shape_families(), for the same variants as run_all_cases.
FamilyRun run_all_families(Context& ctx, bool float64_kernels, const ToDevice& to_device);

// check_untraceable over every case of every untraceable op; also fails for a listed op that is
// not registered or has no case that runs eagerly.
std::vector<std::string> check_all_untraceable(Context& ctx, bool float64_kernels, const ToDevice& to_device);

}  // namespace cairn::test
