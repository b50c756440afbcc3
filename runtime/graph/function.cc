#include "runtime/graph/function.h"

#include <fmt/format.h>

#include <map>

#include "runtime/core/thread_pool.h"
#include "runtime/graph/fusion.h"
#include "runtime/graph/trace.h"

namespace cairn::graph {

std::string signature_text(const std::vector<TensorSpec>& signature) {
  std::vector<std::string> parts;
  for (const TensorSpec& s : signature) parts.push_back(std::string(dtype_name(s.dtype)) + s.shape.str());
  return fmt::format("{}", fmt::join(parts, ", "));
}

// ---- Buffer reuse ----

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

// Free host buffers by bucket: a plan numbers the (dtype, element count) pairs of its values once,
// so a replay finds a buffer by index instead of hashing. A taken buffer is reshaped to the shape
// asked for. Buckets keep their capacity, so steady-state take/give never allocates.
class BufferPool {
 public:
  explicit BufferPool(size_t buckets) : free_(buckets) {}

  Tensor take(Device& device, const TensorSpec& spec, int bucket) {
    std::vector<Tensor>& free = free_[static_cast<size_t>(bucket)];
    if (!free.empty() && free.back().device() == &device) {
      Tensor t = std::move(free.back());
      free.pop_back();
      return t.shape() == spec.shape ? t : t.reshaped(spec.shape);
    }
    return Tensor::allocate(device, spec.dtype, spec.shape);
  }
  // Keeps `t` for reuse when nothing else references its buffer; empties `t` either way.
  void give(Tensor& t, int bucket) {
    if (t.valid() && t.device()->is_host() && t.dtype() != DType::String &&
        t.buffer()->refs.load(std::memory_order_acquire) == 1)
      free_[static_cast<size_t>(bucket)].push_back(std::move(t));
    t = Tensor();
  }

 private:
  std::vector<std::vector<Tensor>> free_;
};
}  // namespace

// What one replay needs besides the graph: node values and the buffer pool, kept between replays.
struct ConcreteFunction::ReplayState {
  const Plan* plan = nullptr;
  std::vector<std::vector<Tensor>> values;
  std::vector<const Tensor*> ins;
  BufferPool pool;

  explicit ReplayState(const Plan& p) : plan(&p), values(p.graph.nodes.size()), pool(p.num_buckets) {}
  // Only fast-path replays take from the pool, so only they give back (or the pool would grow).
  bool recycle = false;

  void release(Tensor& t, int bucket) {
    if (recycle) pool.give(t, bucket);
    else t = Tensor();
  }
  void release_node(int node) {
    std::vector<Tensor>& v = values[static_cast<size_t>(node)];
    for (size_t k = 0; k < v.size(); ++k) release(v[k], plan->bucket[static_cast<size_t>(node)][k]);
  }
};

// Takes a state for one replay from the idle list (or makes one) and puts it back afterwards,
// values cleared, even when the replay throws.
class ConcreteFunction::StateLease {
 public:
  StateLease(const ConcreteFunction& fn, const Plan& plan) : fn_(fn) {
    {
      std::lock_guard<std::mutex> lock(fn.states_mu_);
      for (size_t i = fn.idle_states_.size(); i-- > 0;)
        if (fn.idle_states_[i]->plan == &plan) {
          state_ = std::move(fn.idle_states_[i]);
          fn.idle_states_.erase(fn.idle_states_.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
    }
    if (!state_) {
      state_ = std::make_unique<ReplayState>(plan);
    }
  }
  ~StateLease() {
    for (size_t i = 0; i < state_->values.size(); ++i) state_->release_node(static_cast<int>(i));
    std::lock_guard<std::mutex> lock(fn_.states_mu_);
    fn_.idle_states_.push_back(std::move(state_));
  }
  StateLease(const StateLease&) = delete;
  StateLease& operator=(const StateLease&) = delete;
  ReplayState& operator*() const { return *state_; }

 private:
  const ConcreteFunction& fn_;
  std::unique_ptr<ReplayState> state_;
};

// ---- ConcreteFunction ----

ConcreteFunction::Plan::Plan(Graph g) : graph(std::move(g)) {
  const size_t n = graph.nodes.size();
  last_use.assign(n, -1);
  is_result.resize(n);
  for (size_t i = 0; i < n; ++i) {
    is_result[i].assign(graph.nodes[i].outputs.size(), false);
    for (Port p : graph.nodes[i].inputs) last_use[p.node] = static_cast<int>(i);
  }
  for (Port p : graph.outputs) {
    last_use[p.node] = static_cast<int>(n);  // kept to the end
    is_result[p.node][p.output] = true;
  }
  release_after.resize(n);
  for (size_t i = 0; i < n; ++i)
    if (last_use[i] >= 0 && last_use[i] < static_cast<int>(n)) release_after[last_use[i]].push_back(static_cast<int>(i));
  std::map<std::pair<DType, int64_t>, int> ids;
  bucket.resize(n);
  for (size_t i = 0; i < n; ++i)
    for (const TensorSpec& s : graph.nodes[i].outputs)
      bucket[i].push_back(ids.emplace(std::make_pair(s.dtype, s.shape.num_elements()), static_cast<int>(ids.size()))
                              .first->second);
  num_buckets = ids.size();
}

ConcreteFunction::ConcreteFunction(std::string name, std::vector<TensorSpec> signature, Graph graph, bool fuse)
    : name_(std::move(name)),
      signature_(std::move(signature)),
      exact_(!has_unknown_dims(signature_)),
      unfused_(std::move(graph)) {
  if (fuse && exact_) {
    Graph fused = clone(unfused_.graph);
    if (fuse_elementwise(fused) > 0) {
      fused_kinds_ = fused_device_kinds(fused);
      fused_ = std::make_unique<Plan>(std::move(fused));
    }
  }
}

ConcreteFunction::~ConcreteFunction() = default;

void ConcreteFunction::run_op_node(Context& ctx, const Plan& plan, int i, ReplayState& state, bool fast) const {
  const Node& n = plan.graph.nodes[i];
  std::vector<const Tensor*>& ins = state.ins;
  ins.clear();
  for (Port p : n.inputs) ins.push_back(&state.values[p.node][p.output]);
  std::vector<Tensor>& outs = state.values[i];
  outs.resize(n.outputs.size());
  const Attrs& attrs = n.attrs->attrs();
  if (!fast || n.def->dynamic_output_shape) {
    // The full eager path: validates, re-infers shapes, and lets hooks (a tape) see the op.
    std::vector<NamedAttr> named = explicit_attrs(attrs);
    run_op(ctx, *n.def, ins.data(), static_cast<int>(ins.size()), named.data(), static_cast<int>(named.size()),
           outs.data(), static_cast<int>(outs.size()));
    return;
  }
  // The replay fast path: attributes were resolved and shapes inferred at trace time, and output
  // buffers come from the pool (results are always fresh: the caller keeps them).
  Device& device = ins.empty() ? ctx.default_device() : *ins[0]->device();
  KernelFn kernel = n.def->kernels[static_cast<int>(device.kind())];
  if (!kernel) raise(Code::Unimplemented, "{}: no kernel on device {} (function '{}')", n.def->name, device.name(), name_);
  for (size_t k = 0; k < outs.size(); ++k)
    outs[k] = plan.is_result[i][k] ? Tensor::allocate(device, n.outputs[k].dtype, n.outputs[k].shape)
                                   : state.pool.take(device, n.outputs[k], plan.bucket[i][k]);
  KernelContext kc{*n.def, attrs, device, ctx.pool(), ins.data(), static_cast<int>(ins.size()), outs.data(),
                   static_cast<int>(outs.size())};
  if (n.def->random) kc.random_seed = ctx.next_random_seed();
  kernel(kc);
}

void ConcreteFunction::run_node(Context& ctx, const Plan& plan, int i, ReplayState& state, bool fast,
                                const std::vector<Tensor>& inputs) const {
  const Node& n = plan.graph.nodes[i];
  std::vector<Tensor>& value = state.values[i];
  switch (n.kind) {
    case NodeKind::Input:
      value.resize(1);
      value[0] = inputs[static_cast<size_t>(n.index)];
      break;
    case NodeKind::Constant:
      value.resize(1);
      value[0] = n.value;
      break;
    case NodeKind::Read:
      value.resize(1);
      value[0] = n.variable->read();
      break;
    case NodeKind::Assign: {
      Port p = n.inputs[0];
      // The value the write replaces goes back to the pool when nothing else holds it (the next
      // replay's update reuses it). Without hooks, read() is a plain snapshot.
      Tensor old = fast ? n.variable->read() : Tensor();
      n.variable->assign(state.values[p.node][p.output], "function '" + name_ + "'");
      state.release(old, plan.bucket[p.node][p.output]);
      break;
    }
    case NodeKind::Op: run_op_node(ctx, plan, i, state, fast); break;
  }
}

std::vector<Tensor> ConcreteFunction::run(Context& ctx, const std::vector<Tensor>& inputs) const {
  if (inputs.size() != signature_.size())
    raise(Code::InvalidArgument, "function '{}': expected {} inputs, got {}", name_, signature_.size(), inputs.size());
  Device& device = ctx.default_device();
  bool one_kind = true;  // every input on the default device's kind
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid() || !matches(signature_[i], inputs[i]))
      raise(Code::InvalidArgument, "function '{}': input {} is {}, expected {}", name_, i,
            inputs[i].valid() ? inputs[i].debug_string() : "an empty tensor",
            std::string(dtype_name(signature_[i].dtype)) + signature_[i].shape.str());
    one_kind = one_kind && inputs[i].device()->kind() == device.kind();
  }
  // Hooks (a tape, an enclosing trace) must see every registered op: they get the unfused graph
  // through the full dispatch. The fused plan runs where a backend has fused kernels for all its
  // nodes (the CPU; Vulkan with shaderc): see fusion.h.
  const bool fast = exact_ && !ctx.has_hooks();
  const bool fused = fast && one_kind && fused_ && (fused_kinds_ >> static_cast<int>(device.kind()) & 1u) &&
                     fused_backend_ready(ctx, device);
  const Plan& plan = fused ? *fused_ : unfused_;
  StateLease lease(*this, plan);
  ReplayState& state = *lease;
  state.recycle = fast;
  const int n = static_cast<int>(plan.graph.nodes.size());
  for (int i = 0; i < n; ++i) {
    run_node(ctx, plan, i, state, fast, inputs);
    // Hand intermediates back after their last reader, so the next nodes reuse their buffers.
    for (int done : plan.release_after[i]) state.release_node(done);
  }
  std::vector<Tensor> out;
  out.reserve(plan.graph.outputs.size());
  for (Port p : plan.graph.outputs) out.push_back(state.values[p.node][p.output]);
  return out;
}

// ---- Function ----

Function::Function(Context& ctx, std::string name, HostFunction fn, FunctionOptions options)
    : ctx_(Ref<Context>::share(&ctx)), name_(std::move(name)), fn_(std::move(fn)), options_(std::move(options)) {
  if (name_.empty()) raise(Code::InvalidArgument, "Function: the name is empty");
  if (!fn_) raise(Code::InvalidArgument, "function '{}': no host function", name_);
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
  std::vector<TensorSpec> key;
  for (const Tensor& t : inputs) key.push_back({t.dtype(), t.shape()});
  return key;
}

std::shared_ptr<const ConcreteFunction> Function::trace(const std::vector<TensorSpec>& key,
                                                         const std::vector<Tensor>& inputs) {
  Graph graph;
  graph.num_inputs = static_cast<int>(inputs.size());
  {
    Tracer tracer(*ctx_, graph, name_);
    std::vector<Tensor> symbolic;
    for (size_t i = 0; i < inputs.size(); ++i)
      symbolic.push_back(tracer.input(static_cast<int>(i), {inputs[i].dtype(), inputs[i].shape()}));
    std::vector<Tensor> results = fn_(*ctx_, symbolic);
    for (size_t i = 0; i < results.size(); ++i) graph.outputs.push_back(tracer.port_of(results[i], "a result"));
  }
  optimize(*ctx_, graph, options_.passes);
  auto concrete = std::make_shared<const ConcreteFunction>(name_, key, std::move(graph), options_.passes.fuse_elementwise);
  size_t traces;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cache_[signature_text(key)] = concrete;
    order_.push_back(concrete);
    traces = order_.size();
  }
  if (options_.retrace_warning > 0 && traces == static_cast<size_t>(options_.retrace_warning))
    ctx_->log().log(LogLevel::Warning,
                    fmt::format("function '{}' has been traced {} times (latest signature: {}); a new dtype or shape "
                                "on each call retraces, an input signature with -1 dimensions traces once",
                                name_, traces, signature_text(key)));
  return concrete;
}

std::shared_ptr<const ConcreteFunction> Function::concrete(const std::vector<Tensor>& inputs) {
  std::vector<TensorSpec> key = key_of(inputs);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(signature_text(key));
    if (it != cache_.end()) return it->second;
  }
  return trace(key, inputs);
}

std::vector<Tensor> Function::call(const std::vector<Tensor>& inputs) {
  // Called inside another function's trace: trace through (the host function runs and its ops
  // join the outer graph), as TF inlines nested tf.functions.
  for (const Tensor& t : inputs)
    if (t.valid() && t.device()->kind() == DeviceKind::Symbolic) return fn_(*ctx_, inputs);
  return concrete(inputs)->run(*ctx_, inputs);
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
