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

std::vector<TensorSpec> specs_of(const std::vector<Tensor>& ts) {
  std::vector<TensorSpec> out;
  for (const Tensor& t : ts) out.push_back({t.dtype(), t.shape()});
  return out;
}

// A branch subgraph as a function the backward can run (recording its ops into the trace).
std::shared_ptr<const ConcreteFunction> compiled(const std::string& name, const Graph& g,
                                                 const std::vector<TensorSpec>& signature) {
  return std::make_shared<const ConcreteFunction>(name, signature, clone(g), false);
}

bool floating(const Tensor& t) { return is_differentiable_dtype(t.dtype()); }

// dL/d(each of `ins`) for L = sum_k <fn(ins)_k, dys_k>, recomputing fn under a tape of its own.
// Non-floating inputs get zeros (control flow needs a tensor per result).
std::vector<Tensor> recomputed_gradient(Context& ctx, const ConcreteFunction& fn, const std::vector<Tensor>& ins,
                                        const std::vector<Tensor>& dys) {
  GradientTape tape(ctx);
  std::vector<Tensor> sources;
  for (const Tensor& t : ins)
    if (floating(t)) {
      tape.watch(t);
      sources.push_back(t);
    }
  std::vector<Tensor> outs = fn.run(ctx, ins);
  std::vector<Tensor> targets, grads;
  for (size_t k = 0; k < outs.size(); ++k)
    if (floating(outs[k])) {
      targets.push_back(outs[k]);
      grads.push_back(dys[k]);
    }
  std::vector<Tensor> g;
  if (!targets.empty() && !sources.empty()) g = tape.gradient(targets, sources, grads, Unconnected::Zero);
  std::vector<Tensor> result;
  size_t next = 0;
  for (const Tensor& t : ins)
    result.push_back(floating(t) && next < g.size() ? g[next++] : op::zeros_like(ctx, t));
  return result;
}

// The output gradients a backward works with: zeros where nothing downstream used an output.
std::vector<Tensor> dense_grads(Context& ctx, const std::vector<Tensor>& outputs, const std::vector<Tensor>& dys) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < outputs.size(); ++k)
    out.push_back(dys[k].valid() ? dys[k] : op::zeros_like(ctx, outputs[k]));
  return out;
}

std::vector<Tensor> only_needed(std::vector<Tensor> grads, const std::vector<Tensor>& inputs,
                                const std::vector<bool>& needs) {
  for (size_t i = 0; i < grads.size(); ++i)
    if (!needs[i] || !floating(inputs[i])) grads[i] = Tensor();
  return grads;
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
    std::vector<Tensor> args = ins;
    for (Tensor& d : dense_grads(ctx, outs, dys)) args.push_back(d);
    auto branch = [&fns, n](size_t b) -> BranchFn {
      return [fn = fns[b], n](Context& c, const std::vector<Tensor>& a) {
        return recomputed_gradient(c, *fn, std::vector<Tensor>(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)),
                                   std::vector<Tensor>(a.begin() + static_cast<std::ptrdiff_t>(n), a.end()));
      };
    };
    return only_needed(cond(ctx, pred, args, branch(0), branch(1)), ins, needs);
  };
  for (GradientTape* tape : tapes)
    if (any_tracked(*tape, inputs)) tape->record(inputs, outputs, gradient);
}

// ---- while_loop ----

namespace {

// The backward of a While node: `fns` are its cond and body; inputs are loop variables (the first
// `num_vars`) then captures.
std::vector<Tensor> while_backward(Context& ctx, const std::vector<std::shared_ptr<const ConcreteFunction>>& fns,
                                   size_t num_vars, int64_t max_iterations, const std::vector<Tensor>& ins,
                                   const std::vector<Tensor>& outs, const std::vector<Tensor>& dys) {
  const std::vector<Tensor> captures(ins.begin() + static_cast<std::ptrdiff_t>(num_vars), ins.end());
  auto with_captures = [&captures](std::vector<Tensor> vars) {
    vars.insert(vars.end(), captures.begin(), captures.end());
    return vars;
  };
  Tensor one = op::scalar(ctx, ctx.cpu(), DType::Int32, 1);
  Tensor limit = op::scalar(ctx, ctx.cpu(), DType::Int32, static_cast<double>(max_iterations));

  // 1. The loop again, pushing the loop variables each iteration starts from.
  std::vector<Tensor> loop = {op::scalar(ctx, ctx.cpu(), DType::Int32, 0)};
  for (size_t k = 0; k < num_vars; ++k) loop.push_back(ins[k]);
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

  // 2. The reverse loop: from the last iteration to the first, the body's gradient at the pushed
  //    variables, accumulating the captures' gradients.
  std::vector<Tensor> back = {op::sub(ctx, pushed[0], one)};
  for (Tensor& d : dense_grads(ctx, outs, dys)) back.push_back(d);
  for (const Tensor& c : captures) back.push_back(op::zeros_like(ctx, c));
  BranchFn pop_cond = [&](Context& c, const std::vector<Tensor>& v) {
    return std::vector<Tensor>{op::run1(c, "GreaterEqual", {v[0], op::sub(c, one, one)})};
  };
  BranchFn pop_body = [&](Context& c, const std::vector<Tensor>& v) {
    std::vector<Tensor> vars;
    for (size_t k = 0; k < num_vars; ++k) vars.push_back(tensor_array_read(c, stacks[k], v[0]));
    std::vector<Tensor> dvars(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(num_vars));
    std::vector<Tensor> g = recomputed_gradient(c, *fns[1], with_captures(vars), dvars);
    std::vector<Tensor> out = {op::sub(c, v[0], one)};
    out.insert(out.end(), g.begin(), g.begin() + static_cast<std::ptrdiff_t>(num_vars));
    for (size_t j = 0; j < captures.size(); ++j) out.push_back(op::add(c, v[1 + num_vars + j], g[num_vars + j]));
    return out;
  };
  std::vector<Tensor> popped = while_loop(ctx, pop_cond, pop_body, back);
  return std::vector<Tensor>(popped.begin() + 1, popped.end());  // d(loop variables), d(captures)
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
    return only_needed(while_backward(ctx, fns, num_vars, max_iterations, ins, outs, dys), ins, needs);
  };
  for (GradientTape* tape : watching) tape->record(inputs, outputs, gradient);
}

}  // namespace cairn::graph
