#include "tests/runtime/graph/traced_check.h"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/export.h"
#include "runtime/graph/function.h"
#include "runtime/graph/fusion.h"
#include "runtime/ops/registry.h"
#include "tests/util/test_util.h"

namespace cairn::test {

using graph::Function;
using graph::FunctionOptions;
using graph::PassOptions;

namespace {

using Outputs = std::vector<Tensor>;

// What a traced run gave: outputs, or the error it raised.
struct Outcome {
  Outputs outputs;
  bool ok = false;
  Code code = Code::Ok;
  std::string message;
};

template <class F>
Outcome attempt(F&& f) {
  Outcome o;
  try {
    o.outputs = f();
    o.ok = true;
  } catch (const Error& e) {
    o.code = e.code();
    o.message = e.message();
  }
  return o;
}

bool is_float(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

// The function of a case: the op on the function's (symbolic) inputs, or with `captured`, on the
// case's eager inputs (captured as constants, so constant folding may run the op).
// With `unknown_dims`, an input signature with every dimension -1: replays take the generic path
// (full dispatch, shapes re-inferred per node, no fusion or pooling).
Ref<Function> traced(Context& ctx, const OpCase& c, const PassOptions& passes, bool captured,
                     bool unknown_dims = false) {
  FunctionOptions o;
  o.passes = passes;
  o.retrace_warning = 0;
  if (unknown_dims) {
    for (const Tensor& t : c.inputs) {
      Shape any = t.shape();
      for (int d = 0; d < any.rank(); ++d) any.set_dim(d, -1);
      o.input_signature.push_back({t.dtype(), any});
    }
    o.has_input_signature = true;
  }
  OpFn fn = c.fn;
  graph::HostFunction host;
  if (captured) {
    std::vector<Tensor> eager_inputs = c.inputs;
    host = [fn, eager_inputs](Context& cx, const std::vector<Tensor>&) { return fn(cx, eager_inputs); };
  } else {
    host = [fn](Context& cx, const std::vector<Tensor>& in) { return fn(cx, in); };
  }
  return make_ref<Function>(ctx, c.op, std::move(host), o);
}

// Neg after every float output, then Identity after every output: the op's outputs become
// intermediates of the graph.
Outputs chained(Context& ctx, const Outputs& outs) {
  Outputs r;
  for (const Tensor& t : outs) r.push_back(op::identity(ctx, is_float(t.dtype()) ? op::neg(ctx, t) : t));
  return r;
}

// Inputs of the same signature with other values: floats scaled and shifted, data integers negated
// and bools flipped (index inputs, which must stay in range, are left alone).
std::vector<Tensor> poisoned(Context& ctx, const OpCase& c) {
  const OpDef* def = OpRegistry::global().find(c.op);
  bool has_index_input = false;
  if (def)
    for (const ArgDef& a : def->inputs) has_index_input = has_index_input || a.type_attr == "Tindices" || a.type_attr == "TI";
  std::vector<Tensor> out;
  for (const Tensor& t : c.inputs) {
    Device& d = *t.device();
    if (is_float(t.dtype()))
      out.push_back(op::add(ctx, op::mul(ctx, t, op::scalar(ctx, d, t.dtype(), -1.75)), op::scalar(ctx, d, t.dtype(), 0.5)));
    else if (!has_index_input && t.dtype() == DType::Int32)
      out.push_back(op::neg(ctx, t));  // wraps at INT_MIN by definition; an Add could overflow
    else if (!has_index_input && t.dtype() == DType::Bool)
      out.push_back(op::run1(ctx, "LogicalNot", {t}));
    else
      out.push_back(t);
  }
  return out;
}

int count_op_nodes(const graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const graph::Node& node : g.nodes) n += node.kind == graph::NodeKind::Op && node.def && node.def->name == op;
  return n;
}

const char* code_name(Code c) {
  switch (c) {
    case Code::Ok: return "OK";
    case Code::InvalidArgument: return "INVALID_ARGUMENT";
    case Code::FailedPrecondition: return "FAILED_PRECONDITION";
    case Code::OutOfRange: return "OUT_OF_RANGE";
    case Code::Unimplemented: return "UNIMPLEMENTED";
    case Code::Internal: return "INTERNAL";
    case Code::ResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::Unavailable: return "UNAVAILABLE";
    default: return "other";
  }
}

class Checker {
 public:
  Checker(Context& ctx, TracedReport& report) : ctx_(ctx), report_(report) {}

  // The traced outcome must equal the eager one: same outputs bitwise, or the same error code.
  void expect(const std::string& mode, const Outcome& got, const Outcome& want) {
    if (!want.ok) {
      if (got.ok)
        problem(mode, fmt::format("succeeded where eager raised {} ({})", code_name(want.code), want.message));
      else if (got.code != want.code)
        problem(mode, fmt::format("raised {} ({}) where eager raised {} ({})", code_name(got.code), got.message,
                                  code_name(want.code), want.message));
      return;
    }
    if (!got.ok) return problem(mode, fmt::format("raised {}: {}", code_name(got.code), got.message));
    if (got.outputs.size() != want.outputs.size())
      return problem(mode, fmt::format("{} outputs, eager {}", got.outputs.size(), want.outputs.size()));
    for (size_t k = 0; k < got.outputs.size(); ++k) {
      std::string diff = bitwise_difference(ctx_, got.outputs[k], want.outputs[k]);
      if (!diff.empty()) problem(mode, fmt::format("output {}: {}", k, diff));
    }
  }
  void problem(const std::string& mode, const std::string& what) { report_.problems.push_back(mode + ": " + what); }

 private:
  Context& ctx_;
  TracedReport& report_;
};

// A fresh file name for an export. Thousands of exports each fsync their file and directory
// (the writer is atomic and durable), so they go to tmpfs (/dev/shm) where there is one.
std::string temp_file() {
  static std::atomic<int> counter{0};
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TEST_TMPDIR");
  return fmt::format("{}/traced_check_{}_{}.cairnfn", dir ? dir : "/tmp", ::getpid(), counter++);
}

// `f` exported to a file and loaded back: the loaded function (whose stored graph is traced again
// on its first call) must match eager execution too, on its first call and on a replay.
void check_exported(Context& ctx, const Function& f, const std::vector<Tensor>& args, const Outcome& eager,
                    const std::string& mode, Checker& check) {
  const std::string path = temp_file();
  Outcome loaded_ok = attempt([&] {
    graph::export_function(f, path);
    graph::LoadedFunction loaded = graph::load_function(ctx, path);
    check.expect(mode + " call", attempt([&] { return loaded.function->call(args); }), eager);
    if (eager.ok) check.expect(mode + " replay", attempt([&] { return loaded.function->call(args); }), eager);
    return Outputs{};
  });
  std::remove(path.c_str());
  if (!loaded_ok.ok) check.problem(mode, fmt::format("export or load raised {}: {}", code_name(loaded_ok.code),
                                                     loaded_ok.message));
}

// Each function once on the case's inputs (trace) and once more (replay).
void check_modes(Context& ctx, const OpCase& c, const Outcome& eager, Checker& check, TracedReport& report) {
  PassOptions unfused;
  unfused.fuse_elementwise = false;
  PassOptions fused;
  PassOptions none;
  none.fold_constants = none.eliminate_common_subexpressions = none.eliminate_dead_code = none.fuse_elementwise = false;
  struct Mode {
    std::string name;
    PassOptions passes;
    bool captured = false;
    bool replay = true;
    bool unknown_dims = false;
    bool under_tape = false;
    bool exported = false;
  };
  const std::vector<Mode> modes = {{"", unfused, false, true, false, false, true},
                                   {"fused ", fused},
                                   {"unoptimized ", none, false, false},
                                   {"constants ", fused, true, true, false, false, true},
                                   {"unknown dims ", fused, false, true, true},
                                   {"under a tape ", fused, false, true, false, true}};
  for (const Mode& m : modes) {
    Ref<Function> f = traced(ctx, c, m.passes, m.captured, m.unknown_dims);
    const std::vector<Tensor> args = m.captured ? std::vector<Tensor>{} : c.inputs;
    // A tape installs a dispatch hook: replays run the unfused graph through the full dispatch so
    // the tape records each node.
    std::unique_ptr<GradientTape> tape;
    if (m.under_tape) {
      tape = std::make_unique<GradientTape>(ctx);
      for (const Tensor& t : args)
        if (is_float(t.dtype())) tape->watch(t);
    }
    check.expect(m.name + "trace", attempt([&] { return f->call(args); }), eager);
    if (m.replay && eager.ok) check.expect(m.name + "replay", attempt([&] { return f->call(args); }), eager);
    if (!m.passes.fold_constants && f->num_traces() == 1)  // the graph as traced
      report.op_in_graph = count_op_nodes(f->concretes()[0]->graph(), c.op) > 0;
    if (m.exported && f->num_traces() == 1) check_exported(ctx, *f, args, eager, m.name + "exported", check);
  }
}

void check_pooled_chain(Context& ctx, const OpCase& c, Checker& check, TracedReport& report) {
  Outcome want = attempt([&] { return chained(ctx, c.fn(ctx, c.inputs)); });
  if (!want.ok) return;
  FunctionOptions o;
  o.retrace_warning = 0;
  OpFn fn = c.fn;
  auto f = make_ref<Function>(ctx, c.op + "_chain",
                              [fn](Context& cx, const std::vector<Tensor>& in) { return chained(cx, fn(cx, in)); }, o);
  // The poisoned call may raise (an integer divisor became 0): the real call still runs.
  attempt([&] { return f->call(poisoned(ctx, c)); });
  check.expect("pooled chain", attempt([&] { return f->call(c.inputs); }), want);
  if (f->num_traces() == 1) {
    const auto& concrete = *f->concretes()[0];
    report.absorbed_by_fusion = count_op_nodes(concrete.fused_graph(), c.op) < count_op_nodes(concrete.graph(), c.op);
  }
}

// The case run eagerly on `ctx`, noted in the report.
Outcome run_eagerly(Context& ctx, const OpCase& c, TracedReport& report) {
  Outcome eager = attempt([&] { return c.fn(ctx, c.inputs); });
  report.eager_ok = eager.ok;
  report.eager_error = eager.message;
  return eager;
}

// `c` with its inputs moved by `to_device`.
OpCase moved(const OpCase& c, const ToDevice& to_device) {
  OpCase out = c;
  for (Tensor& t : out.inputs) t = to_device(t);
  return out;
}

void note_problems(const OpCase& c, const TracedReport& rep, std::vector<std::string>& problems) {
  for (const std::string& p : rep.problems) problems.push_back(c.op + " [" + c.label + "] " + p);
}

}  // namespace

std::string bitwise_difference(Context& ctx, const Tensor& got, const Tensor& want) {
  if (got.device()->name() != want.device()->name())
    return fmt::format("on {}, eager on {}", got.device()->name(), want.device()->name());
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return fmt::format("{} vs eager {}", got.debug_string(), want.debug_string());
  Tensor g = tensor_on_device(got, ctx.cpu()), w = tensor_on_device(want, ctx.cpu());
  const size_t size = dtype_size(got.dtype());
  const auto* gb = static_cast<const unsigned char*>(g.raw_data());
  const auto* wb = static_cast<const unsigned char*>(w.raw_data());
  // On a GPU a NaN's sign is the compiler's choice: GLSL and SPIR-V do not define it through
  // negation or arithmetic, and a fused shader that folds -(x * x) into one expression may give
  // the other sign than two dispatches. There any NaN equals any NaN; on the CPU bits must match.
  const bool any_nan_matches = !got.device()->is_host() && dtype_is_floating(got.dtype());
  std::vector<double> gv = as_doubles(g), wv = as_doubles(w);
  int64_t first = -1, differing = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i)
    if (std::memcmp(gb + i * size, wb + i * size, size) != 0) {
      const size_t k = static_cast<size_t>(i);
      if (any_nan_matches && std::isnan(gv[k]) && std::isnan(wv[k])) continue;
      if (first < 0) first = i;
      ++differing;
    }
  if (differing == 0) return "";
  return fmt::format("{} of {} elements differ; first at {}: {} vs eager {} ({})", differing, got.num_elements(),
                     first, gv[static_cast<size_t>(first)], wv[static_cast<size_t>(first)], got.debug_string());
}

TracedReport check_traced(Context& ctx, const OpCase& c) {
  TracedReport report;
  Checker check(ctx, report);
  Outcome eager = run_eagerly(ctx, c, report);
  // A second eager run separates nondeterministic kernels from tracing bugs.
  if (eager.ok) check.expect("eager again", attempt([&] { return c.fn(ctx, c.inputs); }), eager);
  check_modes(ctx, c, eager, check, report);
  if (eager.ok) check_pooled_chain(ctx, c, check, report);
  return report;
}

TracedReport check_fresh_draws(const std::function<Ref<Context>()>& make_ctx, const OpCase& c) {
  TracedReport report;
  Ref<Context> eager_ctx = make_ctx(), traced_ctx = make_ctx();
  Checker check(*eager_ctx, report);
  // Four eager draws; the traced function draws twice per call (two nodes, which CSE must not
  // merge), so its first call must give draws 1 and 2 and its second call draws 3 and 4.
  std::vector<Outcome> draws;
  for (int k = 0; k < 4; ++k) draws.push_back(attempt([&] { return c.fn(*eager_ctx, c.inputs); }));
  report.eager_ok = draws[0].ok;
  report.eager_error = draws[0].message;
  auto pair = [&](int k) {
    Outcome o = draws[static_cast<size_t>(k)];
    const Outcome& next = draws[static_cast<size_t>(k) + 1];
    if (o.ok) o.outputs.insert(o.outputs.end(), next.outputs.begin(), next.outputs.end());
    return o;
  };
  FunctionOptions o;
  o.retrace_warning = 0;
  OpFn fn = c.fn;
  auto f = make_ref<Function>(*traced_ctx, c.op + "_twice", [fn](Context& cx, const std::vector<Tensor>& in) {
    std::vector<Tensor> out = fn(cx, in), again = fn(cx, in);
    out.insert(out.end(), again.begin(), again.end());
    return out;
  }, o);
  check.expect("trace (draws 1 and 2)", attempt([&] { return f->call(c.inputs); }), pair(0));
  if (!report.eager_ok) return report;
  check.expect("replay (draws 3 and 4)", attempt([&] { return f->call(c.inputs); }), pair(2));
  if (f->num_traces() == 1) report.op_in_graph = count_op_nodes(f->concretes()[0]->graph(), c.op) == 2;
  for (int k = 1; k < 4; ++k)
    if (draws[static_cast<size_t>(k)].ok &&
        bitwise_difference(*eager_ctx, draws[0].outputs[0], draws[static_cast<size_t>(k)].outputs[0]).empty())
      check.problem("eager", fmt::format("draws 1 and {} with seeds 0,0 are equal", k + 1));
  return report;
}

std::vector<std::vector<OpCase>> shape_families(const std::vector<OpCase>& cases) {
  std::map<std::string, std::vector<OpCase>> groups;
  for (const OpCase& c : cases) {
    if (c.family.empty()) continue;
    std::string key = c.family;
    for (const Tensor& t : c.inputs) key += fmt::format(" {}/{}", dtype_name(t.dtype()), t.rank());
    groups[key].push_back(c);
  }
  std::vector<std::vector<OpCase>> out;
  for (auto& [key, members] : groups)
    if (members.size() >= 2) out.push_back(std::move(members));
  return out;
}

TracedReport check_shape_family(Context& ctx, const std::vector<OpCase>& members) {
  TracedReport report;
  Checker check(ctx, report);
  Ref<Function> f = traced(ctx, members[0], PassOptions{}, false, /*unknown_dims=*/true);
  for (int round = 0; round < 2; ++round)
    for (const OpCase& c : members) {
      Outcome eager = attempt([&] { return c.fn(ctx, c.inputs); });
      report.eager_ok = report.eager_ok || eager.ok;
      check.expect(fmt::format("{} [{}] round {}", c.op, c.label, round + 1),
                   attempt([&] { return f->call(c.inputs); }), eager);
    }
  if (f->num_traces() != 1) check.problem("family", fmt::format("{} traces, expected 1", f->num_traces()));
  return report;
}

TracedReport check_concurrent_replays(Context& ctx, const OpCase& c, int threads, int calls) {
  TracedReport report;
  Checker check(ctx, report);
  Outcome eager = run_eagerly(ctx, c, report);
  if (!eager.ok) return report;
  for (Tensor& t : eager.outputs) t = op::identity(ctx, t);
  OpFn fn = c.fn;
  auto f = make_ref<Function>(ctx, c.op + "_concurrent", [fn](Context& cx, const std::vector<Tensor>& in) {
    Outputs out;
    for (const Tensor& t : fn(cx, in)) out.push_back(op::identity(cx, t));
    return out;
  });
  check.expect("trace", attempt([&] { return f->call(c.inputs); }), eager);
  std::mutex mu;  // guards `check`
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (int call = 0; call < calls; ++call) {
        Outcome got = attempt([&] { return f->call(c.inputs); });
        std::lock_guard<std::mutex> lock(mu);
        check.expect(fmt::format("thread {} replay {}", k, call + 1), got, eager);
      }
    });
  for (std::thread& t : pool) t.join();
  return report;
}

TracedReport check_untraceable(Context& ctx, const OpCase& c) {
  TracedReport report;
  Checker check(ctx, report);
  if (!run_eagerly(ctx, c, report).ok) return report;
  Ref<Function> f = traced(ctx, c, PassOptions{}, false);
  Outcome got = attempt([&] { return f->call(c.inputs); });
  if (got.ok)
    check.problem("trace", c.op + " is traceable now: remove it from untraceable_ops() (op_cases.cc)");
  else if (got.code != Code::Unimplemented || got.message.find(c.op) == std::string::npos)
    check.problem("trace", fmt::format("raised {} ({}), expected UNIMPLEMENTED naming {}", code_name(got.code),
                                       got.message, c.op));
  return report;
}

// ---- Every case on one device ----

DeviceRun run_all_cases(Context& ctx, bool float64_kernels, const ToDevice& to_device,
                        const std::function<Ref<Context>()>& seeded_ctx) {
  DeviceRun run;
  for (const OpCase& base : op_cases()) {
    if (untraceable_ops().count(base.op)) continue;
    for (const OpCase& variant : variants(base, float64_kernels)) {
      OpCase c = moved(variant, to_device);
      ++run.variants;
      TracedReport rep = c.fresh_draws ? check_fresh_draws(seeded_ctx, c) : check_traced(ctx, c);
      note_problems(c, rep, run.problems);
      if (!rep.eager_ok) {
        ++run.errors_compared;
        continue;
      }
      ++run.compared;
      run.ran.insert(c.op);
      if (rep.op_in_graph) run.in_graph.insert(c.op);
      if (rep.absorbed_by_fusion) run.absorbed.insert(c.op);
    }
  }
  return run;
}

std::string uncovered_ops(const DeviceRun& run) {
  std::string missing;
  for (const OpDef* def : OpRegistry::global().list())
    if (!untraceable_ops().count(def->name) && !run.ran.count(def->name)) missing += " " + def->name;
  return missing;
}

std::string ops_missing_from_graphs(const DeviceRun& run) {
  std::string missing;
  for (const std::string& op : run.ran)
    if (!run.in_graph.count(op)) missing += " " + op;
  return missing;
}

FamilyRun run_all_families(Context& ctx, bool float64_kernels, const ToDevice& to_device) {
  std::vector<OpCase> all;
  for (const OpCase& base : op_cases())
    for (const OpCase& c : variants(base, float64_kernels)) all.push_back(moved(c, to_device));
  FamilyRun run;
  for (const std::vector<OpCase>& members : shape_families(all)) {
    ++run.groups;
    run.served += static_cast<int>(members.size());
    note_problems(members[0], check_shape_family(ctx, members), run.problems);
  }
  return run;
}

std::vector<std::string> check_all_untraceable(Context& ctx, bool float64_kernels, const ToDevice& to_device) {
  std::vector<std::string> problems;
  for (const auto& [op, reason] : untraceable_ops()) {
    if (!OpRegistry::global().find(op)) problems.push_back(op + " is listed as untraceable but not registered");
    int ran = 0;
    for (const OpCase& base : op_cases()) {
      if (base.op != op) continue;
      for (const OpCase& variant : variants(base, float64_kernels)) {
        OpCase c = moved(variant, to_device);
        TracedReport rep = check_untraceable(ctx, c);
        note_problems(c, rep, problems);
        ran += rep.eager_ok;
      }
    }
    if (ran == 0) problems.push_back("no case of untraceable op " + op + " (" + reason + ") ran eagerly");
  }
  return problems;
}

}  // namespace cairn::test
