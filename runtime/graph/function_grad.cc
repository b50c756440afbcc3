#include "runtime/graph/function_grad.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "runtime/autodiff/gradient.h"
#include "runtime/graph/passes.h"

namespace cairn::graph {

namespace {

// Whether a call to `g` can be one tape entry with a recomputing gradient (function_grad.h says
// why the others replay node by node). Unknown node kinds (control flow) take the generic path.
bool recomputable(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.kind == NodeKind::Input || n.kind == NodeKind::Constant || n.kind == NodeKind::Read) continue;
    if (n.kind == NodeKind::Op && !n.def->has_side_effects()) continue;
    return false;
  }
  return true;
}

// `g` with each variable's Read nodes turned into one Input after the existing ones; `variables`
// gets the variables in input order. Without Assign nodes every read of a variable sees one value.
Graph reads_as_inputs(const Graph& g, std::vector<Ref<Variable>>& variables) {
  Graph out = clone(g);
  std::unordered_map<const Variable*, int> index;
  for (Node& n : out.nodes) {
    if (n.kind != NodeKind::Read) continue;
    auto [it, inserted] = index.emplace(n.variable.get(), out.num_inputs + static_cast<int>(variables.size()));
    if (inserted) variables.push_back(n.variable);
    n.kind = NodeKind::Input;
    n.index = it->second;
    n.variable = Ref<Variable>();
  }
  out.num_inputs += static_cast<int>(variables.size());
  return out;
}

// The forward inputs that get a gradient from `outputs`: those of a floating dtype with a path to
// one of them through differentiable ops and floating values, as a tape would find one.
std::vector<size_t> inputs_with_gradients(const Graph& g, const std::vector<size_t>& outputs) {
  std::vector<bool> live(g.nodes.size(), false);
  for (size_t k : outputs) live[static_cast<size_t>(g.outputs[k].node)] = true;
  std::vector<bool> reaches(static_cast<size_t>(g.num_inputs), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    if (!live[i]) continue;
    if (n.kind == NodeKind::Input) reaches[static_cast<size_t>(n.index)] = true;
    if (n.kind != NodeKind::Op || !n.def->differentiable) continue;
    for (Port p : n.inputs)
      if (is_differentiable_dtype(g.spec(p).dtype)) live[static_cast<size_t>(p.node)] = true;
  }
  std::vector<size_t> wrt;
  for (const Node& n : g.nodes)
    if (n.kind == NodeKind::Input && reaches[static_cast<size_t>(n.index)] && is_differentiable_dtype(n.outputs[0].dtype))
      wrt.push_back(static_cast<size_t>(n.index));
  std::sort(wrt.begin(), wrt.end());
  wrt.erase(std::unique(wrt.begin(), wrt.end()), wrt.end());
  return wrt;
}

// The backward function's host function, run only while tracing it: the forward pass again, on the
// backward's symbolic inputs (the forward's, then dy for each output in `used_outputs`) and under
// a tape, then d(sum_k <y_k, dy_k>)/d(each input in `wrt`).
// (TensorFlow's backward reads intermediates the forward saved instead; see function_grad.h.)
std::vector<Tensor> recompute_and_differentiate(const ConcreteFunction& forward, const std::vector<size_t>& wrt,
                                                const std::vector<size_t>& used_outputs, Context& ctx,
                                                const std::vector<Tensor>& in) {
  const size_t n = forward.signature().size();
  std::vector<Tensor> primals(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
  GradientTape tape(ctx, {.persistent = false, .watch_accessed_variables = false});
  std::vector<Tensor> sources;
  for (size_t i : wrt) {
    tape.watch(primals[i]);
    sources.push_back(primals[i]);
  }
  // Under the trace, the replay sends every node through the dispatch: the trace and the tape see it.
  std::vector<Tensor> ys = forward.run(ctx, primals);
  std::vector<Tensor> targets, dys;
  for (size_t j = 0; j < used_outputs.size(); ++j) {
    targets.push_back(ys[used_outputs[j]]);
    dys.push_back(in[n + j]);
  }
  return tape.gradient(targets, sources, dys, Unconnected::Zero);
}

// The other backward's host function: the forward's intermediates are inputs (the forward's
// inputs, then every op output in node order, then dy for each output in `used_outputs`). Each op
// node is recorded on the tape with the saved values as its outputs, without running it, and the
// tape differentiates as above: the backward graph holds gradient ops only.
std::vector<Tensor> differentiate_saved(const Graph& g, const std::vector<size_t>& wrt,
                                        const std::vector<size_t>& used_outputs, Context& ctx,
                                        const std::vector<Tensor>& in) {
  const size_t n = static_cast<size_t>(g.num_inputs);
  GradientTape tape(ctx, {.persistent = false, .watch_accessed_variables = false});
  std::vector<Tensor> sources;
  for (size_t i : wrt) {
    tape.watch(in[i]);
    sources.push_back(in[i]);
  }
  std::vector<std::vector<Tensor>> values(g.nodes.size());
  size_t next = n;
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    std::vector<Tensor>& v = values[i];
    if (node.kind == NodeKind::Input) v = {in[static_cast<size_t>(node.index)]};
    if (node.kind == NodeKind::Constant) v = {node.value};
    if (node.kind != NodeKind::Op) continue;
    v.assign(in.begin() + static_cast<std::ptrdiff_t>(next),
             in.begin() + static_cast<std::ptrdiff_t>(next + node.outputs.size()));
    next += node.outputs.size();
    ins.clear();
    for (Port p : node.inputs) ins.push_back(&values[static_cast<size_t>(p.node)][static_cast<size_t>(p.output)]);
    // What the dispatch would tell the tape had the op run.
    OpCall call{*node.def, node.attrs->attrs(), ins.data(), static_cast<int>(ins.size()),
                v.data(),  static_cast<int>(v.size()), node.outputs.data()};
    tape.after(ctx, call);
  }
  std::vector<Tensor> targets, dys;
  for (size_t j = 0; j < used_outputs.size(); ++j) {
    Port p = g.outputs[used_outputs[j]];
    targets.push_back(values[static_cast<size_t>(p.node)][static_cast<size_t>(p.output)]);
    dys.push_back(in[next + j]);
  }
  return tape.gradient(targets, sources, dys, Unconnected::Zero);
}

// `g` returning every op output too, after its own outputs, in node order.
Graph saving_intermediates(const Graph& g) {
  Graph out = clone(g);
  for (size_t i = 0; i < out.nodes.size(); ++i)
    if (out.nodes[i].kind == NodeKind::Op)
      for (size_t j = 0; j < out.nodes[i].outputs.size(); ++j)
        out.outputs.push_back({static_cast<int>(i), static_cast<int>(j)});
  return out;
}

// Concrete functions' gradients, by concrete function, while it lives. Never destroyed: entries
// hold contexts, which must not be released during static destruction.
struct GradientTable {
  struct Entry {
    std::weak_ptr<const ConcreteFunction> fn;
    std::shared_ptr<const CallGradient> gradient;  // null: the calls replay node by node
  };
  std::mutex mu;
  std::unordered_map<const ConcreteFunction*, Entry> entries;

  static GradientTable& get() {
    static GradientTable* table = new GradientTable();
    return *table;
  }
  // Drops the entries of functions that are gone (their gradients go with them).
  void prune() {
    for (auto it = entries.begin(); it != entries.end();)
      it = it->second.fn.expired() ? entries.erase(it) : std::next(it);
  }
};

}  // namespace

// The backward functions of one forward, by kind, the outputs they take dy for and the inputs they
// differentiate.
struct CallGradient::Backwards {
  Ref<Context> ctx;
  std::string name;
  std::shared_ptr<const ConcreteFunction> forward;
  std::vector<size_t> own_outputs;  // the floating outputs the entry owns: the only ones with a dy
  std::mutex mu;
  std::map<std::vector<size_t>, std::vector<size_t>> reach;  // by used outputs: inputs with a path
  // By (recomputes, used outputs, inputs differentiated).
  std::map<std::tuple<bool, std::vector<size_t>, std::vector<size_t>>, Ref<Function>> functions;

  const std::vector<size_t>& reach_of(const std::vector<size_t>& used) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = reach.find(used);
    if (it == reach.end()) it = reach.emplace(used, inputs_with_gradients(forward->graph(), used)).first;
    return it->second;  // map nodes stay put
  }

  Function& get(bool recompute, const std::vector<size_t>& used, const std::vector<size_t>& wrt) {
    std::lock_guard<std::mutex> lock(mu);
    Ref<Function>& f = functions[{recompute, used, wrt}];
    if (f) return *f;
    // Traced once per signature (the shapes of the inputs and output gradients) on its first call.
    std::shared_ptr<const ConcreteFunction> fwd = forward;
    if (recompute)
      f = make_ref<Function>(*ctx, name + "_grad_recompute", [fwd, used, wrt](Context& cx, const std::vector<Tensor>& in) {
        return recompute_and_differentiate(*fwd, wrt, used, cx, in);
      });
    else
      f = make_ref<Function>(*ctx, name + "_grad", [fwd, used, wrt](Context& cx, const std::vector<Tensor>& in) {
        return differentiate_saved(fwd->graph(), wrt, used, cx, in);
      });
    return *f;
  }

  // The tape's backward. Like a tape, it differentiates only through the outputs that got a
  // gradient, and only for the inputs the tape wants that such an output depends on. `saved`: the
  // intermediates of the call, when it kept them.
  std::vector<Tensor> differentiate(const std::vector<Tensor>& inputs, const std::vector<Tensor>& output_grads,
                                    const std::vector<bool>& needs, const std::vector<Tensor>* saved) {
    std::vector<Tensor> result(inputs.size());
    std::vector<size_t> used;
    for (size_t k : own_outputs)
      if (output_grads[k].valid()) used.push_back(k);
    if (used.empty()) return result;
    std::vector<size_t> wrt;
    for (size_t i : reach_of(used))
      if (needs[i]) wrt.push_back(i);
    if (wrt.empty()) return result;
    // A tape recording this gradient (a higher-order one) must see it depend on the inputs alone:
    // the saved intermediates are not connected to them on that tape. Then the backward recomputes.
    std::optional<std::vector<GradientTape*>> recording = tapes_only(*ctx);
    const bool recompute = !saved || !recording || !recording->empty();
    std::vector<Tensor> args = inputs;
    if (!recompute) args.insert(args.end(), saved->begin(), saved->end());
    for (size_t k : used) args.push_back(output_grads[k]);
    // A call like any other: under an enclosing tape it is itself one entry (higher-order gradients).
    std::vector<Tensor> grads = get(recompute, used, wrt).call(args);
    for (size_t j = 0; j < wrt.size(); ++j) result[wrt[j]] = std::move(grads[j]);
    return result;
  }
};

CallGradient::CallGradient(Context& ctx, const ConcreteFunction& fn) {
  Graph graph = reads_as_inputs(fn.graph(), variables_);
  std::vector<TensorSpec> signature = fn.signature();
  for (const Ref<Variable>& v : variables_) signature.push_back({v->dtype(), v->shape()});
  // The entry owns the outputs an op computed, each once. An input, a variable's value or a
  // constant returned as it is stays that tensor, and a value returned twice is one output: the
  // tape would otherwise count the same gradient twice.
  owned_.assign(graph.outputs.size(), false);
  std::vector<size_t> own_outputs;
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    Port p = graph.outputs[k];
    bool first = std::find(graph.outputs.begin(), graph.outputs.begin() + static_cast<std::ptrdiff_t>(k), p) ==
                 graph.outputs.begin() + static_cast<std::ptrdiff_t>(k);
    owned_[k] = first && graph.nodes[static_cast<size_t>(p.node)].kind == NodeKind::Op;
    if (owned_[k] && is_differentiable_dtype(graph.spec(p).dtype)) own_outputs.push_back(k);
  }
  wrt_ = inputs_with_gradients(graph, own_outputs);
  for (const Node& n : graph.nodes)
    if (n.kind == NodeKind::Constant && is_differentiable_dtype(n.value.dtype())) constants_.push_back(n.value);
  const bool fuse = &fn.fused_graph() != &fn.graph();
  // Every value is an output there: nothing to fuse.
  saving_ = std::make_shared<const ConcreteFunction>(fn.name(), signature, saving_intermediates(graph), false);
  forward_ = std::make_shared<const ConcreteFunction>(fn.name(), std::move(signature), std::move(graph), fuse);

  backwards_ = std::make_shared<Backwards>();
  backwards_->ctx = Ref<Context>::share(&ctx);
  backwards_->name = fn.name();
  backwards_->forward = forward_;
  backwards_->own_outputs = std::move(own_outputs);
  name_ = fmt::format("function '{}'", fn.name());
}

std::shared_ptr<const CustomGradient> CallGradient::custom(std::vector<Tensor> saved) const {
  auto gradient = std::make_shared<CustomGradient>();
  gradient->name = name_;
  std::shared_ptr<Backwards> backwards = backwards_;
  gradient->backward = [backwards, saved = std::move(saved)](Context&, const std::vector<Tensor>& inputs,
                                                              const std::vector<Tensor>&,
                                                              const std::vector<Tensor>& output_grads,
                                                              const std::vector<bool>& needs) {
    return backwards->differentiate(inputs, output_grads, needs, saved.empty() ? nullptr : &saved);
  };
  return gradient;
}

std::vector<Tensor> CallGradient::entry_outputs(const std::vector<Tensor>& outputs) const {
  std::vector<Tensor> own(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k)
    if (owned_[k]) own[k] = outputs[k];
  return own;
}

std::vector<Ref<Function>> CallGradient::backwards() const {
  std::lock_guard<std::mutex> lock(backwards_->mu);
  std::vector<Ref<Function>> out;
  for (const auto& [key, f] : backwards_->functions) out.push_back(f);
  return out;
}

bool CallGradient::tape_tracks_a_constant(const GradientTape& tape) const {
  for (const Tensor& c : constants_)
    if (tape.tracks(c)) return true;
  return false;
}

std::shared_ptr<const CallGradient> CallGradient::of(Context& ctx, const std::shared_ptr<const ConcreteFunction>& fn) {
  GradientTable& table = GradientTable::get();
  {
    std::lock_guard<std::mutex> lock(table.mu);
    auto it = table.entries.find(fn.get());
    // An expired entry belonged to a function that lived at the same address before.
    if (it != table.entries.end() && !it->second.fn.expired()) return it->second.gradient;
  }
  std::shared_ptr<const CallGradient> made;
  if (recomputable(fn->graph())) made = std::make_shared<const CallGradient>(ctx, *fn);
  std::lock_guard<std::mutex> lock(table.mu);
  table.prune();
  auto [it, inserted] = table.entries.emplace(fn.get(), GradientTable::Entry{fn, made});
  return inserted ? made : it->second.gradient;  // another thread may have made it meanwhile
}

std::optional<std::vector<GradientTape*>> tapes_only(Context& ctx) {
  // The tapes recording here outlive the caller's use: a tape is destroyed on its own thread.
  std::vector<GradientTape*> tapes;
  HookSnapshot hooks = ctx.hooks();
  for (DispatchHook* h : hooks) {
    auto* tape = dynamic_cast<GradientTape*>(h);
    if (!tape) return std::nullopt;
    if (tape->records_on_this_thread()) tapes.push_back(tape);
  }
  return tapes;
}

TapesPausedHere::TapesPausedHere(std::vector<GradientTape*> tapes) : tapes_(std::move(tapes)) {
  for (GradientTape* t : tapes_) t->stop_recording();
}

TapesPausedHere::TapesPausedHere(Context& ctx) {
  if (!ctx.has_hooks()) return;
  HookSnapshot hooks = ctx.hooks();
  for (DispatchHook* h : hooks)
    if (auto* tape = dynamic_cast<GradientTape*>(h); tape && tape->records_on_this_thread()) tapes_.push_back(tape);
  for (GradientTape* t : tapes_) t->stop_recording();
}

TapesPausedHere::~TapesPausedHere() {
  for (GradientTape* t : tapes_) t->resume_recording();
}

std::optional<std::vector<Tensor>> call_with_tapes(Context& ctx, const std::shared_ptr<const ConcreteFunction>& fn,
                                                   const std::vector<Tensor>& inputs) {
  std::optional<std::vector<GradientTape*>> found = tapes_only(ctx);
  if (!found) return std::nullopt;  // a trace or another hook: it sees every node
  std::vector<GradientTape*>& tapes = *found;
  // Only other threads' tapes, or paused ones: none of them wants this thread's nodes.
  if (tapes.empty()) return fn->run(ctx, inputs, /*observed=*/false);

  std::shared_ptr<const CallGradient> gradient = CallGradient::of(ctx, fn);
  if (!gradient) return std::nullopt;
  for (GradientTape* tape : tapes)
    if (gradient->tape_tracks_a_constant(*tape)) return std::nullopt;

  // The variables' values join the inputs; reading them lets the tapes watch trainable ones.
  std::vector<Tensor> args = inputs;
  for (const Ref<Variable>& v : gradient->variables()) args.push_back(v->read());
  bool recorded = false;
  for (GradientTape* tape : tapes)
    for (size_t i = 0; i < args.size() && !recorded; ++i) recorded = tape->tracks(args[i]);
  if (!gradient->differentiable() || !recorded) return gradient->forward().run(ctx, args, /*observed=*/false);

  // The replay keeps every intermediate for the backward (after the outputs), as TF's does.
  std::vector<Tensor> outputs;
  {
    TapesPausedHere paused(tapes);  // a replay with unknown dimensions still goes through the dispatch
    outputs = gradient->saving_forward().run(ctx, args, /*observed=*/false);
  }
  const size_t n = gradient->forward().num_outputs();
  std::vector<Tensor> saved(outputs.begin() + static_cast<std::ptrdiff_t>(n), outputs.end());
  outputs.resize(n);
  std::shared_ptr<const CustomGradient> custom = gradient->custom(std::move(saved));
  std::vector<Tensor> own = gradient->entry_outputs(outputs);
  for (GradientTape* tape : tapes) tape->record(args, own, custom);
  return outputs;
}

}  // namespace cairn::graph
