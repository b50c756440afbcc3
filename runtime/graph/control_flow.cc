#include "runtime/graph/control_flow.h"

#include <fmt/format.h>

#include <memory>

#include "runtime/eager/dispatch.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/control_flow_grad.h"
#include "runtime/graph/function_grad.h"
#include "runtime/graph/trace.h"

namespace cairn::graph {

namespace {

std::string spec_text(const TensorSpec& s) { return std::string(dtype_name(s.dtype)) + s.shape.str(); }
TensorSpec spec_of(const Tensor& t) { return {t.dtype(), t.shape()}; }

void check_predicate_spec(const TensorSpec& s, const char* what) {
  if (s.dtype != DType::Bool || s.shape.num_elements() != 1)
    raise(Code::InvalidArgument, "{} must be a bool tensor of one element, got {}", what, spec_text(s));
}

// The predicate's value: a host read (a sync on a GPU device).
bool predicate_value(const Tensor& pred, Device& host, const char* what) {
  if (!pred.valid()) raise(Code::InvalidArgument, "{} is an empty tensor", what);
  check_predicate_spec(spec_of(pred), what);
  Tensor h = host_values(pred, host, what);
  return h.data<bool>()[0];
}

void check_inputs(const std::vector<Tensor>& ts, const char* fn, const char* what) {
  for (size_t i = 0; i < ts.size(); ++i)
    if (!ts[i].valid()) raise(Code::InvalidArgument, "{}: {} {} is an empty tensor", fn, what, i);
}

// A loop body's results must be the loop variables' next values: same count, dtype and shape.
void check_body_results(const std::vector<TensorSpec>& vars, const std::vector<TensorSpec>& results) {
  if (results.size() != vars.size())
    raise(Code::InvalidArgument, "while_loop: body returned {} tensors for {} loop variables", results.size(),
          vars.size());
  for (size_t i = 0; i < vars.size(); ++i)
    if (results[i].dtype != vars[i].dtype || !(results[i].shape == vars[i].shape))
      raise(Code::InvalidArgument,
            "while_loop: body result {} is {}, but loop variable {} is {} (a loop variable keeps its dtype and shape)",
            i, spec_text(results[i]), i, spec_text(vars[i]));
}

// ---- Eager ----

std::vector<Tensor> eager_cond(Context& ctx, const Tensor& pred, const std::vector<Tensor>& operands,
                               const BranchFn& then_branch, const BranchFn& else_branch) {
  return predicate_value(pred, ctx.cpu(), "cond: the predicate") ? then_branch(ctx, operands)
                                                                  : else_branch(ctx, operands);
}

std::vector<Tensor> eager_while(Context& ctx, const BranchFn& cond_fn, const BranchFn& body,
                                std::vector<Tensor> vars, const WhileOptions& options) {
  const std::vector<TensorSpec> specs = specs_of(vars);
  for (int64_t it = 0; options.max_iterations < 0 || it < options.max_iterations; ++it) {
    std::vector<Tensor> c = cond_fn(ctx, vars);
    if (c.size() != 1) raise(Code::InvalidArgument, "while_loop: cond returned {} tensors, expected 1", c.size());
    if (!predicate_value(c[0], ctx.cpu(), "while_loop: cond's result")) break;
    std::vector<Tensor> next = body(ctx, vars);
    check_inputs(next, "while_loop", "body result");
    check_body_results(specs, specs_of(next));
    vars = std::move(next);
  }
  return vars;
}

// ---- Traced ----

// Traces `fn` on inputs of `specs` into a new subgraph; enclosing tensors it uses join `captures`.
std::shared_ptr<Graph> trace_branch(Tracer& tracer, Context& ctx, const BranchFn& fn,
                                    const std::vector<TensorSpec>& specs, Tracer::Captures& captures,
                                    const char* what) {
  auto g = std::make_shared<Graph>();
  tracer.push_frame(*g, captures, static_cast<int>(specs.size()));
  try {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < specs.size(); ++i) inputs.push_back(tracer.input(static_cast<int>(i), specs[i]));
    std::vector<Tensor> results = fn(ctx, inputs);
    const std::string result_name = std::string("a result of ") + what;
    for (const Tensor& r : results) g->outputs.push_back(tracer.port_of(r, result_name.c_str()));
  } catch (...) {
    tracer.pop_frame();
    throw;
  }
  tracer.pop_frame();
  return g;
}

std::vector<TensorSpec> output_specs(const Graph& g) {
  std::vector<TensorSpec> out;
  for (Port p : g.outputs) out.push_back(g.spec(p));
  return out;
}

// A variable a branch both reads and writes stays a read inside the subgraph, out of the tapes'
// reach: refuse when a tape differentiates the node rather than lose that gradient.
void refuse_unhoisted(const std::vector<GradientTape*>& tapes, const std::vector<Tensor>& inputs,
                      const std::vector<std::string>& unhoisted, const char* fn) {
  if (unhoisted.empty()) return;
  for (GradientTape* tape : tapes)
    for (const Tensor& t : inputs)
      if (tape->tracks(t))
        raise(Code::Unimplemented,
              "{} inside a traced function under a recording gradient tape: a branch both reads and writes variable "
              "'{}', whose gradient through the branch is not supported",
              fn, unhoisted[0]);
}

// Appends the captures to the node's inputs and its branches (which all take them).
void finish_node(Node& n, const Tracer::Captures& captures, int first_capture,
                 std::vector<std::shared_ptr<Graph>>& branches) {
  for (Port p : captures.ports) n.inputs.push_back(p);
  for (auto& b : branches) {
    b->num_inputs = first_capture + static_cast<int>(captures.ports.size());
    n.branches.push_back(b);
  }
}

std::vector<Tensor> traced_cond(Tracer& tracer, Context& ctx, const Tensor& pred, const std::vector<Tensor>& operands,
                                const BranchFn& then_branch, const BranchFn& else_branch) {
  check_predicate_spec(spec_of(pred), "cond: the predicate");
  const std::vector<TensorSpec> specs = specs_of(operands);
  const std::vector<GradientTape*> tapes = recording_tapes(ctx);
  Tracer::Captures captures;
  std::vector<std::shared_ptr<Graph>> branches;
  {
    // The tapes see the node as one entry (control_flow_grad.h), not the branches' symbolic ops.
    TapesPausedHere paused(tapes);
    branches.push_back(trace_branch(tracer, ctx, then_branch, specs, captures, "cond's then branch"));
    branches.push_back(trace_branch(tracer, ctx, else_branch, specs, captures, "cond's else branch"));
  }
  const std::vector<TensorSpec> outs = output_specs(*branches[0]), else_outs = output_specs(*branches[1]);
  if (outs.size() != else_outs.size())
    raise(Code::InvalidArgument, "cond: the then branch returned {} tensors and the else branch {}", outs.size(),
          else_outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    if (outs[i].dtype != else_outs[i].dtype || !(outs[i].shape == else_outs[i].shape))
      raise(Code::InvalidArgument, "cond: result {} is {} in the then branch but {} in the else branch", i,
            spec_text(outs[i]), spec_text(else_outs[i]));
  const int first_capture = static_cast<int>(operands.size());
  std::vector<std::string> unhoisted;
  if (!tapes.empty()) unhoisted = hoist_variable_reads(tracer, branches, captures, first_capture);
  Node n;
  n.kind = NodeKind::Cond;
  n.inputs.push_back(tracer.port_of(pred, "cond's predicate"));
  for (const Tensor& t : operands) n.inputs.push_back(tracer.port_of(t, "a cond operand"));
  finish_node(n, captures, first_capture, branches);
  n.outputs = outs;
  std::vector<Tensor> results = tracer.add(std::move(n));
  if (!tapes.empty()) {
    std::vector<Tensor> inputs = operands;
    inputs.insert(inputs.end(), captures.tensors.begin(), captures.tensors.end());
    refuse_unhoisted(tapes, inputs, unhoisted, "cond");
    record_cond_gradient(tapes, pred, inputs, results, branches);
  }
  return results;
}

std::vector<Tensor> traced_while(Tracer& tracer, Context& ctx, const BranchFn& cond_fn, const BranchFn& body,
                                 const std::vector<Tensor>& vars, const WhileOptions& options) {
  const std::vector<TensorSpec> specs = specs_of(vars);
  const std::vector<GradientTape*> tapes = recording_tapes(ctx);
  Tracer::Captures captures;
  std::vector<std::shared_ptr<Graph>> branches;
  {
    TapesPausedHere paused(tapes);  // as in traced_cond
    branches.push_back(trace_branch(tracer, ctx, cond_fn, specs, captures, "while_loop's cond"));
    branches.push_back(trace_branch(tracer, ctx, body, specs, captures, "while_loop's body"));
  }
  const std::vector<TensorSpec> c = output_specs(*branches[0]);
  if (c.size() != 1) raise(Code::InvalidArgument, "while_loop: cond returned {} tensors, expected 1", c.size());
  check_predicate_spec(c[0], "while_loop: cond's result");
  check_body_results(specs, output_specs(*branches[1]));
  const int first_capture = static_cast<int>(vars.size());
  std::vector<std::string> unhoisted;
  if (!tapes.empty()) unhoisted = hoist_variable_reads(tracer, branches, captures, first_capture);
  Node n;
  n.kind = NodeKind::While;
  n.max_iterations = options.max_iterations;
  for (const Tensor& t : vars) n.inputs.push_back(tracer.port_of(t, "a loop variable"));
  finish_node(n, captures, first_capture, branches);
  n.outputs = specs;
  std::vector<Tensor> results = tracer.add(std::move(n));
  if (!tapes.empty()) {
    std::vector<Tensor> inputs = vars;
    inputs.insert(inputs.end(), captures.tensors.begin(), captures.tensors.end());
    refuse_unhoisted(tapes, inputs, unhoisted, "while_loop");
    record_while_gradient(tapes, inputs, results, branches, options.max_iterations);
  }
  return results;
}

}  // namespace

std::vector<Tensor> cond(Context& ctx, const Tensor& pred, const std::vector<Tensor>& operands,
                         const BranchFn& then_branch, const BranchFn& else_branch) {
  if (!then_branch || !else_branch) raise(Code::InvalidArgument, "cond: a branch is missing");
  if (!pred.valid()) raise(Code::InvalidArgument, "cond: the predicate is an empty tensor");
  check_inputs(operands, "cond", "operand");
  if (Tracer* tracer = Tracer::current()) return traced_cond(*tracer, ctx, pred, operands, then_branch, else_branch);
  return eager_cond(ctx, pred, operands, then_branch, else_branch);
}

std::vector<Tensor> while_loop(Context& ctx, const BranchFn& cond_fn, const BranchFn& body,
                               const std::vector<Tensor>& loop_vars, const WhileOptions& options) {
  if (!cond_fn || !body) raise(Code::InvalidArgument, "while_loop: cond or body is missing");
  if (loop_vars.empty()) raise(Code::InvalidArgument, "while_loop: at least one loop variable is needed");
  check_inputs(loop_vars, "while_loop", "loop variable");
  if (options.max_iterations < -1)
    raise(Code::InvalidArgument, "while_loop: max_iterations must be -1 (no limit) or >= 0, got {}",
          options.max_iterations);
  if (Tracer* tracer = Tracer::current()) return traced_while(*tracer, ctx, cond_fn, body, loop_vars, options);
  return eager_while(ctx, cond_fn, body, loop_vars, options);
}

namespace {
// A replay inside another trace (a loaded function traced into its Function, or a replay that a
// trace calls): the Cond or While node is recorded into that trace again, its branches replaying
// the compiled subgraphs (which record their ops). Captured values become operands, or loop
// variables that the body passes through.
std::vector<Tensor> retrace_control_flow(Context& ctx, const Node& n, const std::vector<Tensor>& args,
                                         const BranchRunner& run_branch) {
  if (n.kind == NodeKind::Cond) {
    std::vector<Tensor> operands(args.begin() + 1, args.end());
    auto branch = [&](size_t b) {
      return [&run_branch, b](Context&, const std::vector<Tensor>& in) { return run_branch(b, in); };
    };
    return cond(ctx, args[0], operands, branch(0), branch(1));
  }
  const size_t num_vars = n.outputs.size();
  BranchFn cond_fn = [&](Context&, const std::vector<Tensor>& in) { return run_branch(0, in); };
  BranchFn body = [&](Context&, const std::vector<Tensor>& in) {
    std::vector<Tensor> next = run_branch(1, in);
    next.insert(next.end(), in.begin() + static_cast<std::ptrdiff_t>(num_vars), in.end());
    return next;
  };
  WhileOptions options;
  options.max_iterations = n.max_iterations;
  std::vector<Tensor> out = while_loop(ctx, cond_fn, body, args, options);
  out.resize(num_vars);
  return out;
}
}  // namespace

std::vector<Tensor> run_control_flow(Context& ctx, const Node& n, const std::vector<Tensor>& inputs,
                                     const BranchRunner& run_branch, const std::string& function) {
  if (Tracer::current()) return retrace_control_flow(ctx, n, inputs, run_branch);
  if (n.kind == NodeKind::Cond) {
    const std::string what = fmt::format("function '{}': cond's predicate", function);
    if (inputs.empty()) raise(Code::Internal, "{}: the Cond node has no inputs", what);
    const bool p = predicate_value(inputs[0], ctx.cpu(), what.c_str());
    std::vector<Tensor> operands(inputs.begin() + 1, inputs.end());
    return run_branch(p ? 0 : 1, operands);
  }
  if (n.kind != NodeKind::While) raise(Code::Internal, "function '{}': node is not control flow", function);
  const size_t num_vars = n.outputs.size();
  std::vector<Tensor> args = inputs;  // loop variables, then captures
  const std::string what = fmt::format("function '{}': while_loop's cond", function);
  for (int64_t it = 0; n.max_iterations < 0 || it < n.max_iterations; ++it) {
    std::vector<Tensor> c = run_branch(0, args);
    if (!predicate_value(c.at(0), ctx.cpu(), what.c_str())) break;
    std::vector<Tensor> next = run_branch(1, args);
    for (size_t k = 0; k < num_vars; ++k) args[k] = std::move(next[k]);
  }
  args.resize(num_vars);
  return args;
}

// ---- TensorArray ----

namespace {

int64_t checked_index(const Tensor& index, int64_t size, Device& host, const char* fn) {
  if (!index.valid()) raise(Code::InvalidArgument, "{}: the index is an empty tensor", fn);
  if ((index.dtype() != DType::Int32 && index.dtype() != DType::Int64) || index.rank() != 0)
    raise(Code::InvalidArgument, "{}: the index must be an int32 or int64 scalar, got {}", fn, index.debug_string());
  if (index.device()->kind() == DeviceKind::Symbolic) return -1;  // no value while tracing
  Tensor h = host_values(index, host, fn);
  const int64_t i = index.dtype() == DType::Int32 ? h.data<int32_t>()[0] : h.data<int64_t>()[0];
  if (i < 0 || i >= size)
    raise(Code::OutOfRange, "{}: index {} is outside the array's {} elements", fn, i, size);
  return i;
}

void check_array(const Tensor& array, const char* fn) {
  if (!array.valid()) raise(Code::InvalidArgument, "{}: the array is an empty tensor", fn);
  if (array.rank() < 1)
    raise(Code::InvalidArgument, "{}: an array is a tensor of shape [size, element...], got {}", fn,
          array.debug_string());
}

Shape element_shape_of(const Tensor& array) {
  std::vector<int64_t> dims = array.shape().to_vector();
  return Shape::from(dims.data() + 1, dims.size() - 1, "a tensor array element");
}

}  // namespace

Tensor tensor_array(Context& ctx, DType dtype, int64_t size, const Shape& element_shape) {
  if (size < 0) raise(Code::InvalidArgument, "tensor_array: size must be >= 0, got {}", size);
  std::vector<int64_t> dims = {size};
  for (int d = 0; d < element_shape.rank(); ++d) {
    if (element_shape.dim(d) < 0)
      raise(Code::InvalidArgument, "tensor_array: the element shape {} has an unknown dimension", element_shape.str());
    dims.push_back(element_shape.dim(d));
  }
  return op::filled(ctx, ctx.default_device(), dtype, Shape::from(dims.data(), dims.size(), "tensor_array"), 0);
}

Tensor tensor_array_write(Context& ctx, const Tensor& array, const Tensor& index, const Tensor& value) {
  const char* fn = "tensor_array_write";
  check_array(array, fn);
  if (!value.valid()) raise(Code::InvalidArgument, "{}: the value is an empty tensor", fn);
  const Shape element = element_shape_of(array);
  if (value.dtype() != array.dtype() || !(value.shape() == element))
    raise(Code::InvalidArgument, "{}: the value is {}, but the array's elements are {}{}", fn, value.debug_string(),
          dtype_name(array.dtype()), element.str());
  const int64_t size = array.shape().dim(0);
  checked_index(index, size, ctx.cpu(), fn);
  // mask[i] = (i == index), shaped [size, 1, ...] to broadcast over an element.
  std::vector<int64_t> mask_dims(static_cast<size_t>(array.rank()), 1);
  mask_dims[0] = size;
  Tensor iota = op::run1(ctx, "Range", {},
                         {attr_float("start", 0), attr_float("limit", static_cast<double>(size)), attr_float("delta", 1),
                          attr_dtype("dtype", index.dtype())});
  Tensor mask = op::equal(ctx, op::reshape(ctx, iota, Shape::from(mask_dims.data(), mask_dims.size(), fn)), index);
  Tensor row = op::run1(ctx, "ExpandDims", {value}, {attr_int("axis", 0)});
  return op::select(ctx, mask, row, array);
}

Tensor tensor_array_read(Context& ctx, const Tensor& array, const Tensor& index) {
  const char* fn = "tensor_array_read";
  check_array(array, fn);
  checked_index(index, array.shape().dim(0), ctx.cpu(), fn);
  return op::gather(ctx, array, index, 0);
}

}  // namespace cairn::graph
