#include "runtime/graph/control_flow_grad.h"

#include <fmt/format.h>

#include <map>

#include "runtime/autodiff/gradient.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/function.h"
#include "runtime/graph/passes.h"

namespace cairn::graph {

std::vector<GradientTape*> recording_tapes(Context& ctx) {
  std::vector<GradientTape*> tapes;
  if (!ctx.has_hooks()) return tapes;
  HookSnapshot hooks = ctx.hooks();
  for (DispatchHook* h : hooks)
    if (auto* tape = dynamic_cast<GradientTape*>(h); tape && tape->records_on_this_thread()) tapes.push_back(tape);
  return tapes;
}

// ---- Hoisting variable reads ----

namespace {

void collect_writes(const Graph& g, std::map<const Variable*, bool>& written) {
  for (const Node& n : g.nodes) {
    if (n.kind == NodeKind::Assign) written[n.variable.get()] = true;
    for (const auto& b : n.branches) collect_writes(*b, written);
  }
}

bool hoistable(const Variable& v) { return v.trainable() && is_differentiable_dtype(v.dtype()); }

}  // namespace

std::vector<std::string> hoist_variable_reads(Tracer& tracer, std::vector<std::shared_ptr<Graph>>& branches,
                                              Tracer::Captures& captures, int first_capture) {
  std::map<const Variable*, bool> written;
  for (const auto& b : branches) collect_writes(*b, written);
  std::map<const Variable*, int> input_of;  // variable -> the capture input its value arrives on
  std::vector<std::string> unhoistable;
  for (auto& b : branches)
    for (Node& n : b->nodes) {
      if (n.kind != NodeKind::Read || !hoistable(*n.variable)) continue;
      if (written.count(n.variable.get())) {
        unhoistable.push_back(n.variable->name());
        continue;
      }
      auto it = input_of.find(n.variable.get());
      if (it == input_of.end()) {
        Tensor value = n.variable->read();  // in the enclosing frame: tapes watch the variable here
        captures.ports.push_back(tracer.port_of(value, "a variable value"));
        captures.tensors.push_back(value);
        it = input_of.emplace(n.variable.get(), first_capture + static_cast<int>(captures.ports.size()) - 1).first;
      }
      n.kind = NodeKind::Input;
      n.index = it->second;
      n.variable = Ref<Variable>();
    }
  return unhoistable;
}

// ---- Shared pieces of the backward passes ----

namespace {

// A branch subgraph as a function the backward can run (recording its ops into the trace).
std::shared_ptr<const ConcreteFunction> compiled(const std::string& name, const Graph& g,
                                                 const std::vector<TensorSpec>& signature) {
  return std::make_shared<const ConcreteFunction>(name, signature, clone(g), false);
}

bool floating(const Tensor& t) { return is_differentiable_dtype(t.dtype()); }

// dL/d(ins[i]) for each i in `wanted` (floating inputs only), L = sum_k <fn(ins)_k, dys_k>,
// recomputing fn under a tape of its own. Zeros for an input the result does not depend on.
std::vector<Tensor> recomputed_gradient(Context& ctx, const ConcreteFunction& fn, const std::vector<Tensor>& ins,
                                        const std::vector<Tensor>& dys, const std::vector<size_t>& wanted) {
  GradientTape tape(ctx);
  std::vector<Tensor> sources;
  for (size_t i : wanted) {
    tape.watch(ins[i]);
    sources.push_back(ins[i]);
  }
  std::vector<Tensor> outs = fn.run(ctx, ins);
  std::vector<Tensor> targets, grads;
  for (size_t k = 0; k < outs.size(); ++k)
    if (floating(outs[k])) {
      targets.push_back(outs[k]);
      grads.push_back(dys[k]);
    }
  if (sources.empty()) return {};
  if (targets.empty()) {
    std::vector<Tensor> zeros;
    for (const Tensor& t : sources) zeros.push_back(op::zeros_like(ctx, t));
    return zeros;
  }
  return tape.gradient(targets, sources, grads, Unconnected::Zero);
}

// The inputs a backward computes gradients for: floating ones the tape wants.
std::vector<size_t> wanted_inputs(const std::vector<Tensor>& ins, const std::vector<bool>& needs) {
  std::vector<size_t> out;
  for (size_t i = 0; i < ins.size(); ++i)
    if (needs[i] && floating(ins[i])) out.push_back(i);
  return out;
}

// The output gradients a backward works with: zeros where nothing downstream used an output.
std::vector<Tensor> dense_grads(Context& ctx, const std::vector<Tensor>& outputs, const std::vector<Tensor>& dys) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < outputs.size(); ++k)
    out.push_back(dys[k].valid() ? dys[k] : op::zeros_like(ctx, outputs[k]));
  return out;
}

// One gradient per input: `grads[k]` for input `wanted[k]`, empty tensors elsewhere.
std::vector<Tensor> per_input(size_t n, const std::vector<size_t>& wanted, const std::vector<Tensor>& grads) {
  std::vector<Tensor> out(n);
  for (size_t k = 0; k < wanted.size(); ++k) out[wanted[k]] = grads[k];
  return out;
}

bool any_tracked(const GradientTape& tape, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (tape.tracks(t)) return true;
  return false;
}

}  // namespace

// ---- cond ----

void record_cond_gradient(const std::vector<GradientTape*>& tapes, const Tensor& pred, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& outputs, const std::vector<std::shared_ptr<Graph>>& branches) {
  const std::vector<TensorSpec> signature = specs_of(inputs);
  std::vector<std::shared_ptr<const ConcreteFunction>> fns = {compiled("cond/then", *branches[0], signature),
                                                               compiled("cond/else", *branches[1], signature)};
  auto gradient = std::make_shared<CustomGradient>();
  gradient->name = "cond";
  const size_t n = inputs.size();
  gradient->backward = [pred, fns, n](Context& ctx, const std::vector<Tensor>& ins, const std::vector<Tensor>& outs,
                                      const std::vector<Tensor>& dys, const std::vector<bool>& needs) {
    const std::vector<size_t> wanted = wanted_inputs(ins, needs);
    if (wanted.empty()) return std::vector<Tensor>(n);
    std::vector<Tensor> args = ins;
    for (Tensor& d : dense_grads(ctx, outs, dys)) args.push_back(d);
    auto branch = [&fns, &wanted, n](size_t b) -> BranchFn {
      return [fn = fns[b], &wanted, n](Context& c, const std::vector<Tensor>& a) {
        const auto mid = a.begin() + static_cast<std::ptrdiff_t>(n);
        return recomputed_gradient(c, *fn, std::vector<Tensor>(a.begin(), mid), std::vector<Tensor>(mid, a.end()),
                                   wanted);
      };
    };
    return per_input(n, wanted, cond(ctx, pred, args, branch(0), branch(1)));
  };
  for (GradientTape* tape : tapes)
    if (any_tracked(*tape, inputs)) tape->record(inputs, outputs, gradient);
}

// ---- while_loop ----

namespace {

// The backward of a While node: `fns` are its cond and body; inputs are loop variables (the first
// `num_vars`) then captures. Every floating loop variable carries a gradient through the reverse
// loop (the chain rule needs it); captures get one only when the tape wants it (a captured data
// array would otherwise cost a dense accumulation per iteration).
std::vector<Tensor> while_backward(Context& ctx, const std::vector<std::shared_ptr<const ConcreteFunction>>& fns,
                                   size_t num_vars, int64_t max_iterations, const std::vector<Tensor>& ins,
                                   const std::vector<Tensor>& outs, const std::vector<Tensor>& dys,
                                   const std::vector<bool>& needs) {
  const auto vars_end = ins.begin() + static_cast<std::ptrdiff_t>(num_vars);
  const std::vector<Tensor> captures(vars_end, ins.end());
  auto with_captures = [&captures](std::vector<Tensor> vars) {
    vars.insert(vars.end(), captures.begin(), captures.end());
    return vars;
  };
  // Body inputs whose gradients the reverse loop computes: floating loop variables, then the
  // wanted captures. `wanted_captures` indexes `captures`.
  std::vector<size_t> wrt, wanted_captures;
  for (size_t k = 0; k < num_vars; ++k)
    if (floating(ins[k])) wrt.push_back(k);
  const size_t num_var_grads = wrt.size();
  for (size_t j = 0; j < captures.size(); ++j)
    if (needs[num_vars + j] && floating(captures[j])) {
      wrt.push_back(num_vars + j);
      wanted_captures.push_back(j);
    }
  Tensor one = op::scalar(ctx, ctx.cpu(), DType::Int32, 1);
  Tensor limit = op::scalar(ctx, ctx.cpu(), DType::Int32, static_cast<double>(max_iterations));

  // 1. The loop again, pushing the loop variables each iteration starts from.
  std::vector<Tensor> loop = {op::scalar(ctx, ctx.cpu(), DType::Int32, 0)};
  loop.insert(loop.end(), ins.begin(), vars_end);
  for (size_t k = 0; k < num_vars; ++k)
    loop.push_back(tensor_array(ctx, ins[k].dtype(), max_iterations, ins[k].shape()));
  BranchFn push_cond = [&](Context& c, const std::vector<Tensor>& v) {
    std::vector<Tensor> vars(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(num_vars));
    Tensor more = fns[0]->run(c, with_captures(vars))[0];
    return std::vector<Tensor>{op::run1(c, "LogicalAnd", {op::less(c, v[0], limit), op::reshape(c, more, Shape{})})};
  };
  BranchFn push_body = [&](Context& c, const std::vector<Tensor>& v) {
    std::vector<Tensor> vars(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(num_vars));
    std::vector<Tensor> next = fns[1]->run(c, with_captures(vars));
    std::vector<Tensor> out = {op::add(c, v[0], one)};
    out.insert(out.end(), next.begin(), next.end());
    for (size_t k = 0; k < num_vars; ++k) out.push_back(tensor_array_write(c, v[1 + num_vars + k], v[0], vars[k]));
    return out;
  };
  std::vector<Tensor> pushed = while_loop(ctx, push_cond, push_body, loop);
  const std::vector<Tensor> stacks(pushed.begin() + 1 + static_cast<std::ptrdiff_t>(num_vars), pushed.end());

  // 2. The reverse loop, from the last iteration to the first: the body's gradient at the pushed
  //    variables. Loop variables: the iteration, d(each loop variable), d(each wanted capture).
  std::vector<Tensor> back = {op::sub(ctx, pushed[0], one)};
  for (Tensor& d : dense_grads(ctx, outs, dys)) back.push_back(d);
  for (size_t j : wanted_captures) back.push_back(op::zeros_like(ctx, captures[j]));
  BranchFn pop_cond = [&](Context& c, const std::vector<Tensor>& v) {
    return std::vector<Tensor>{op::run1(c, "GreaterEqual", {v[0], op::sub(c, one, one)})};
  };
  BranchFn pop_body = [&](Context& c, const std::vector<Tensor>& v) {
    std::vector<Tensor> vars;
    for (size_t k = 0; k < num_vars; ++k) vars.push_back(tensor_array_read(c, stacks[k], v[0]));
    std::vector<Tensor> dvars(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(num_vars));
    std::vector<Tensor> g = recomputed_gradient(c, *fns[1], with_captures(vars), dvars, wrt);
    std::vector<Tensor> out = {op::sub(c, v[0], one)};
    size_t next = 0;
    for (size_t k = 0; k < num_vars; ++k)  // a non-floating loop variable carries zeros
      out.push_back(floating(vars[k]) ? g[next++] : op::zeros_like(c, vars[k]));
    for (size_t j = 0; j < wanted_captures.size(); ++j)
      out.push_back(op::add(c, v[1 + num_vars + j], g[num_var_grads + j]));
    return out;
  };
  std::vector<Tensor> popped = while_loop(ctx, pop_cond, pop_body, back);
  std::vector<Tensor> result(ins.size());
  for (size_t k = 0; k < num_vars; ++k)
    if (needs[k] && floating(ins[k])) result[k] = popped[1 + k];
  for (size_t j = 0; j < wanted_captures.size(); ++j) result[num_vars + wanted_captures[j]] = popped[1 + num_vars + j];
  return result;
}

}  // namespace

void record_while_gradient(const std::vector<GradientTape*>& tapes, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& outputs, const std::vector<std::shared_ptr<Graph>>& branches,
                           int64_t max_iterations) {
  std::vector<GradientTape*> watching;
  for (GradientTape* tape : tapes)
    if (any_tracked(*tape, inputs)) watching.push_back(tape);
  if (watching.empty()) return;
  if (max_iterations < 0)
    raise(Code::Unimplemented,
          "while_loop inside a traced function under a recording gradient tape needs max_iterations: the gradient "
          "keeps each iteration's loop variables in stacks of that size (as TensorFlow does under XLA)");
  const std::vector<TensorSpec> signature = specs_of(inputs);
  std::vector<std::shared_ptr<const ConcreteFunction>> fns = {compiled("while/cond", *branches[0], signature),
                                                               compiled("while/body", *branches[1], signature)};
  auto gradient = std::make_shared<CustomGradient>();
  gradient->name = "while_loop";
  const size_t num_vars = outputs.size();
  gradient->backward = [fns, num_vars, max_iterations](Context& ctx, const std::vector<Tensor>& ins,
                                                        const std::vector<Tensor>& outs, const std::vector<Tensor>& dys,
                                                        const std::vector<bool>& needs) {
    return while_backward(ctx, fns, num_vars, max_iterations, ins, outs, dys, needs);
  };
  for (GradientTape* tape : watching) tape->record(inputs, outputs, gradient);
}

}  // namespace cairn::graph
