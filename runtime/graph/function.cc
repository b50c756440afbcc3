#include "runtime/graph/function.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "runtime/core/profile_events.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/function_grad.h"
#include "runtime/graph/fusion.h"
#include "runtime/graph/trace.h"
#include "runtime/track/mirroring.h"

namespace cairn::graph {

std::string signature_text(const std::vector<TensorSpec>& signature) {
  std::vector<std::string> parts;
  for (const TensorSpec& s : signature) parts.push_back(std::string(dtype_name(s.dtype)) + s.shape.str());
  return fmt::format("{}", fmt::join(parts, ", "));
}

// ---- Replay ----

namespace {
bool matches(const TensorSpec& spec, const Tensor& t) {
  if (t.dtype() != spec.dtype || t.rank() != spec.shape.rank()) return false;
  for (int d = 0; d < spec.shape.rank(); ++d)
    if (spec.shape.dim(d) >= 0 && spec.shape.dim(d) != t.shape().dim(d)) return false;
  return true;
}

bool has_unknown_dims(const std::vector<TensorSpec>& signature) {
  for (const TensorSpec& s : signature)
    for (int d = 0; d < s.shape.rank(); ++d)
      if (s.shape.dim(d) < 0) return true;
  return false;
}
}  // namespace

// Takes a state for one replay from the idle list (or makes one) and puts it back afterwards. A
// replay that threw leaves values behind: they are dropped first.
class ConcreteFunction::StateLease {
 public:
  StateLease(const ConcreteFunction& fn, const Plan& plan) : fn_(fn) {
    {
      std::lock_guard<std::mutex> lock(fn.states_mu_);
      for (size_t i = fn.idle_states_.size(); i-- > 0;)
        if (&fn.idle_states_[i]->program() == &plan.program) {
          state_ = std::move(fn.idle_states_[i]);
          fn.idle_states_.erase(fn.idle_states_.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
    }
    if (!state_) state_ = std::make_unique<ReplayState>(plan.program);
  }
  ~StateLease() {
    if (!finished_) state_->clear();
    std::lock_guard<std::mutex> lock(fn_.states_mu_);
    fn_.idle_states_.push_back(std::move(state_));
  }
  StateLease(const StateLease&) = delete;
  StateLease& operator=(const StateLease&) = delete;
  ReplayState& operator*() const { return *state_; }
  void finished() { finished_ = true; }

 private:
  const ConcreteFunction& fn_;
  bool finished_ = false;
  std::unique_ptr<ReplayState> state_;
};

// The executor's way back to run_node for nodes that are not ops.
class ConcreteFunction::Generic final : public GenericNodes {
 public:
  Generic(const ConcreteFunction& fn, const Plan& plan, const std::vector<Tensor>& inputs)
      : fn_(fn), plan_(plan), inputs_(inputs) {}
  void run(Context& ctx, const Instruction& in, ReplayState& state, bool fast) override {
    fn_.run_node(ctx, plan_, in.node, state, fast, inputs_);
  }

 private:
  const ConcreteFunction& fn_;
  const Plan& plan_;
  const std::vector<Tensor>& inputs_;
};

// ---- ConcreteFunction ----


ConcreteFunction::ConcreteFunction(std::string name, std::vector<TensorSpec> signature, Graph graph, bool fuse)
    : name_(std::move(name)),
      origin_("function '" + name_ + "'"),
      signature_(std::move(signature)),
      exact_(!has_unknown_dims(signature_)),
      unfused_(std::move(graph), exact_) {
  compile_branches(unfused_.graph, fuse);
  if (fuse && exact_) {
    Graph fused = clone(unfused_.graph);
    if (fuse_elementwise(fused) > 0) {
      fused_kinds_ = fused_device_kinds(fused);
      fused_ = std::make_unique<Plan>(std::move(fused), true);
    }
  }
}

ConcreteFunction::~ConcreteFunction() = default;

void ConcreteFunction::compile_branches(const Graph& g, bool fuse) {
  static const char* const kCondNames[] = {"then", "else"};
  static const char* const kWhileNames[] = {"cond", "body"};
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.is_control_flow()) continue;
    // A branch takes the node's inputs (a Cond's without the predicate). Under a signature with
    // unknown dims, shapes are only known per call: the branches re-infer them too.
    std::vector<TensorSpec> signature;
    for (size_t k = n.kind == NodeKind::Cond ? 1 : 0; k < n.inputs.size(); ++k) {
      TensorSpec s = g.spec(n.inputs[k]);
      if (!exact_) {
        Shape unknown;
        for (int d = 0; d < s.shape.rank(); ++d) unknown.push_back(-1);
        s.shape = unknown;
      }
      signature.push_back(s);
    }
    for (size_t b = 0; b < n.branches.size(); ++b) {
      const std::string name =
          fmt::format("{}/%{}/{}", name_, i, n.kind == NodeKind::Cond ? kCondNames[b] : kWhileNames[b]);
      branches_[n.branches[b].get()] = std::make_unique<ConcreteFunction>(name, signature, clone(*n.branches[b]), fuse);
    }
  }
}

void ConcreteFunction::run_node(Context& ctx, const Plan& plan, int i, ReplayState& state, bool fast,
                                const std::vector<Tensor>& inputs) const {
  const Node& n = plan.graph.nodes[static_cast<size_t>(i)];
  Tensor* value = state.outputs(plan.program.instructions()[static_cast<size_t>(i)]);
  switch (n.kind) {
    case NodeKind::Input: value[0] = inputs[static_cast<size_t>(n.index)]; break;
    case NodeKind::Constant: value[0] = n.value; break;
    case NodeKind::Read: value[0] = n.variable->read(); break;
    case NodeKind::Assign: {
      Port p = n.inputs[0];
      // The value the write replaces becomes the next buffer of the written value's register when
      // nothing else holds it (the next replay's update reuses it). Without hooks, read() is a
      // plain snapshot.
      Tensor old = fast ? n.variable->read() : Tensor();
      n.variable->assign(state.value(p), origin_);
      state.offer(old, p);
      break;
    }
    case NodeKind::Cond:
    case NodeKind::While: {
      std::vector<Tensor> args;
      for (Port p : n.inputs) args.push_back(state.value(p));
      BranchRunner run_branch = [&](size_t b, const std::vector<Tensor>& branch_inputs) {
        return branches_.at(n.branches[b].get())->run(ctx, branch_inputs);
      };
      std::vector<Tensor> out = run_control_flow(ctx, n, args, run_branch, name_);
      if (out.size() != n.outputs.size())
        raise(Code::Internal, "{}: a {} node gave {} values for {} outputs", origin_, node_kind_name(n.kind),
              out.size(), n.outputs.size());
      for (size_t k = 0; k < out.size(); ++k) value[k] = std::move(out[k]);
      break;
    }
    default:
      raise(Code::Unimplemented, "{}: a replay cannot run a {} node", origin_, node_kind_name(n.kind));
  }
}

namespace {
// The profiler is on: the whole replay, around its nodes' events.
void record_replay(const std::string& function, const Device& device, int64_t start) {
  prof::Event e;
  e.category = "function";
  e.name = function;
  e.device = device.name();
  e.start_ns = start;
  e.duration_ns = prof::now_ns() - start;
  prof::record(std::move(e));
}
}  // namespace

std::vector<Tensor> ConcreteFunction::run(Context& ctx, const std::vector<Tensor>& inputs, bool observed) const {
  if (inputs.size() != signature_.size())
    raise(Code::InvalidArgument, "function '{}': expected {} inputs, got {}", name_, signature_.size(), inputs.size());
  Device& device = ctx.default_device();
  // The device the inputs are on, where the memory plan's buffers live (null: several devices).
  Device* home = inputs.empty() ? &device : inputs[0].device();
  bool one_kind = true;  // every input on the default device's kind
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid() || !matches(signature_[i], inputs[i]))
      raise(Code::InvalidArgument, "function '{}': input {} is {}, expected {}", name_, i,
            inputs[i].valid() ? inputs[i].debug_string() : "an empty tensor",
            std::string(dtype_name(signature_[i].dtype)) + signature_[i].shape.str());
    if (inputs[i].device() != home) home = nullptr;
    one_kind = one_kind && inputs[i].device()->kind() == device.kind();
  }
  // Hooks (a tape, an enclosing trace) must see every registered op: they get the unfused graph
  // through the full dispatch. The fused plan runs where a backend has fused kernels for all its
  // nodes (the CPU; Vulkan, with shaders generated at run time): see fusion.h.
  const bool fast = exact_ && (!observed || !ctx.has_hooks());
  const bool fused = fast && one_kind && fused_ && (fused_kinds_ >> static_cast<int>(device.kind()) & 1u) &&
                     fused_backend_ready(ctx, device);
  const Plan& plan = fused ? *fused_ : unfused_;
  StateLease lease(*this, plan);
  ReplayState& state = *lease;
  state.begin(home ? *home : device, fast && home != nullptr);
  Generic generic(*this, plan, inputs);
  const int64_t start = prof::on() ? prof::now_ns() : 0;
  execute(ctx, state, fast, generic);
  std::vector<Tensor> results = state.take_results();
  lease.finished();
  if (start != 0) record_replay(name_, device, start);
  return results;
}

// ---- Function ----

Function::Function(Context& ctx, std::string name, HostFunction fn, FunctionOptions options)
    : ctx_(Ref<Context>::share(&ctx)), name_(std::move(name)), fn_(std::move(fn)), options_(std::move(options)) {
  if (name_.empty()) raise(Code::InvalidArgument, "Function: the name is empty");
  if (!fn_) raise(Code::InvalidArgument, "function '{}': no host function", name_);
  std::vector<int> seen = options_.static_inputs;
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] < 0) raise(Code::InvalidArgument, "function '{}': static input {} is negative", name_, seen[i]);
    if (i > 0 && seen[i] == seen[i - 1])
      raise(Code::InvalidArgument, "function '{}': static input {} is listed twice", name_, seen[i]);
    if (options_.has_input_signature && static_cast<size_t>(seen[i]) >= options_.input_signature.size())
      raise(Code::InvalidArgument, "function '{}': static input {} is beyond the input signature's {} inputs", name_,
            seen[i], options_.input_signature.size());
  }
}

// A device other than the context's CPU (cpu:0): a trace with inputs there keys and places its
// constants by that device. A split CPU's other devices are host memory but count here.
bool Function::off_context_cpu(const Device& device) const { return &device != &ctx_->cpu(); }

bool Function::is_static(size_t input) const {
  for (int s : options_.static_inputs)
    if (static_cast<size_t>(s) == input) return true;
  return false;
}

std::string Function::cache_key(const std::vector<TensorSpec>& key, const std::vector<Tensor>& inputs) const {
  std::string text = signature_text(key);
  // The devices of inputs off the context's CPU: a graph holds constants placed on its trace's device.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (off_context_cpu(*inputs[i].device())) text += fmt::format("; {}@{}", i, inputs[i].device()->name());
  // Each replica of a strategy traces its own graph: it captures that replica's components of
  // mirrored variables (runtime/track/mirroring.h).
  if (const int replica = ReplicaScope::current(); replica >= 0) text += fmt::format("; replica {}", replica);
  for (int s : options_.static_inputs) {
    const size_t i = static_cast<size_t>(s);
    if (i >= inputs.size())
      raise(Code::InvalidArgument, "function '{}': static input {} is missing (called with {} inputs)", name_, s,
            inputs.size());
    const Tensor& t = inputs[i];
    if (t.device()->kind() == DeviceKind::Symbolic)
      raise(Code::InvalidArgument, "function '{}': static input {} must have a value, but it is a symbolic tensor",
            name_, s);
    if (t.dtype() == DType::String || t.num_elements() > kMaxStaticElements)
      raise(Code::InvalidArgument,
            "function '{}': static input {} is {}; a static input is a numeric or bool tensor of at most {} elements",
            name_, s, t.debug_string(), kMaxStaticElements);
    // The exact bytes: 1.0 and 1.0000001 are different keys, as different Python floats are.
    Tensor host = host_values(t, ctx_->cpu(), "a static input");
    const unsigned char* p = static_cast<const unsigned char*>(host.raw_data());
    text += fmt::format("; static {}=", s);
    for (size_t b = 0; b < host.nbytes(); ++b) text += fmt::format("{:02x}", p[b]);
  }
  return text;
}

std::vector<TensorSpec> Function::key_of(const std::vector<Tensor>& inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].valid()) raise(Code::InvalidArgument, "function '{}': input {} is an empty tensor", name_, i);
  if (options_.has_input_signature) {
    const std::vector<TensorSpec>& sig = options_.input_signature;
    if (inputs.size() != sig.size())
      raise(Code::InvalidArgument, "function '{}': the input signature has {} inputs, got {}", name_, sig.size(),
            inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!matches(sig[i], inputs[i]))
        raise(Code::InvalidArgument, "function '{}': input {} is {}, which does not match the input signature's {}",
              name_, i, inputs[i].debug_string(), std::string(dtype_name(sig[i].dtype)) + sig[i].shape.str());
    return sig;
  }
  return specs_of(inputs);
}

Graph trace_host_function(Context& ctx, const std::string& name, const HostFunction& fn,
                          const std::vector<TensorSpec>& specs, const std::vector<Tensor>& static_values) {
  Graph graph;
  graph.num_inputs = static_cast<int>(specs.size());
  TapesPausedHere paused(ctx);  // a tape around the call records the call, not the trace
  Tracer tracer(ctx, graph, name);
  std::vector<Tensor> symbolic;
  for (size_t i = 0; i < specs.size(); ++i)
    symbolic.push_back(i < static_values.size() && static_values[i].valid()
                           ? static_values[i]  // a value the host function may read; captured if used
                           : tracer.input(static_cast<int>(i), specs[i]));
  std::vector<Tensor> results = fn(ctx, symbolic);
  for (size_t i = 0; i < results.size(); ++i) graph.outputs.push_back(tracer.port_of(results[i], "a result"));
  return graph;
}

Graph Function::trace_graph(const std::vector<Tensor>& inputs) {
  std::vector<TensorSpec> specs = specs_of(inputs);
  std::vector<Tensor> statics(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (is_static(i)) statics[i] = inputs[i];
  Graph graph = trace_host_function(*ctx_, name_, fn_, specs, statics);
  optimize(*ctx_, graph, options_.passes);
  // Host constants the trace made (scalars in gradients, folded shapes) go to the device the
  // inputs are on, where eager execution would have created them. A split CPU's devices other than
  // the first count too: a replica on cpu:1 must not replay with constants on cpu:0 (an op would
  // then run on cpu:0, and a collective would count the replica as replica 0).
  for (const Tensor& t : inputs)
    if (off_context_cpu(*t.device())) {
      place_constants(graph, *t.device());
      break;
    }
  return graph;
}

std::shared_ptr<const ConcreteFunction> Function::add_trace(const std::vector<TensorSpec>& key, const std::string& text,
                                                            Graph graph) {
  auto traced = std::make_shared<ConcreteFunction>(name_, key, std::move(graph), options_.passes.fuse_elementwise);
  traced->set_static_inputs(options_.static_inputs);
  std::shared_ptr<const ConcreteFunction> concrete = traced;
  size_t traces;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cache_[text] = concrete;
    order_.push_back(concrete);
    traces = order_.size();
  }
  if (options_.retrace_warning > 0 && traces == static_cast<size_t>(options_.retrace_warning))
    ctx_->log().log(LogLevel::Warning,
                    fmt::format("function '{}' has been traced {} times (latest signature: {}); a new dtype or shape "
                                "(or static input value) on each call retraces, an input signature with -1 dimensions "
                                "traces once when the function does not depend on those dimensions",
                                name_, traces, signature_text(key)));
  return concrete;
}

std::shared_ptr<const ConcreteFunction> Function::concrete(const std::vector<Tensor>& inputs) {
  std::vector<TensorSpec> key = key_of(inputs);
  const std::string text = cache_key(key, inputs);
  const bool relaxed = has_unknown_dims(key);
  // With -1 dims in the signature, `shapes` names this call's own shapes (see Relaxed).
  const std::string shapes = relaxed ? cache_key(specs_of(inputs), inputs) : text;
  auto cached = [&]() -> std::shared_ptr<const ConcreteFunction> {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(text);
    if (it == cache_.end()) return nullptr;
    if (!relaxed) return it->second;
    const Relaxed& r = relaxed_.at(text);
    if (r.state == Relaxed::Generic || r.first_shapes == shapes) return it->second;
    if (r.state == Relaxed::PerShape) {
      auto own = cache_.find(shapes);
      if (own != cache_.end()) return own->second;
    }
    return nullptr;
  };
  if (auto found = cached()) return found;
  // One trace at a time: threads that miss the cache together trace once (the host function's
  // side effects happen once), and the later ones find the result.
  std::lock_guard<std::recursive_mutex> tracing(trace_mu_);
  if (auto found = cached()) return found;
  Graph graph = trace_graph(inputs);
  if (!relaxed) return add_trace(key, text, std::move(graph));
  Relaxed::State state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = relaxed_.find(text);
    if (it == relaxed_.end()) {
      relaxed_[text] = Relaxed{shapes, Relaxed::Unverified};
      state = Relaxed::Unverified;
    } else {
      state = it->second.state;
      // The second shape: the same graph means the trace does not depend on the -1 dims.
      if (state == Relaxed::Unverified)
        it->second.state = state = same_except_shapes(cache_.at(text)->graph(), graph) ? Relaxed::Generic
                                                                                        : Relaxed::PerShape;
      if (state == Relaxed::Generic) return cache_.at(text);
    }
  }
  if (state == Relaxed::PerShape) return add_trace(specs_of(inputs), shapes, std::move(graph));
  return add_trace(key, text, std::move(graph));
}

std::vector<Tensor> Function::call(const std::vector<Tensor>& inputs) {
  // Called inside another function's trace: trace through (the host function runs and its ops
  // join the outer graph), as TF inlines nested tf.functions.
  for (const Tensor& t : inputs)
    if (t.valid() && t.device()->kind() == DeviceKind::Symbolic) return fn_(*ctx_, inputs);
  std::shared_ptr<const ConcreteFunction> fn = concrete(inputs);
  // Under a gradient tape the call is one entry whose gradient is a traced function.
  if (ctx_->has_hooks())
    if (std::optional<std::vector<Tensor>> out = call_with_tapes(*ctx_, fn, inputs)) return std::move(*out);
  return fn->run(*ctx_, inputs);
}

size_t Function::num_traces() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

std::vector<std::shared_ptr<const ConcreteFunction>> Function::concretes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_;
}

}  // namespace cairn::graph
