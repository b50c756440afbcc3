#include "runtime/graph/function.h"

#include <fmt/format.h>

#include "runtime/core/thread_pool.h"
#include "runtime/graph/trace.h"

namespace cairn::graph {

std::string signature_text(const std::vector<TensorSpec>& signature) {
  std::vector<std::string> parts;
  for (const TensorSpec& s : signature) parts.push_back(std::string(dtype_name(s.dtype)) + s.shape.str());
  return fmt::format("{}", fmt::join(parts, ", "));
}

// ---- ConcreteFunction ----

ConcreteFunction::ConcreteFunction(std::string name, std::vector<TensorSpec> signature, Graph graph)
    : name_(std::move(name)), signature_(std::move(signature)), graph_(std::move(graph)) {
  last_use_.assign(graph_.nodes.size(), -1);
  for (size_t i = 0; i < graph_.nodes.size(); ++i)
    for (Port p : graph_.nodes[i].inputs) last_use_[p.node] = static_cast<int>(i);
  for (Port p : graph_.outputs) last_use_[p.node] = static_cast<int>(graph_.nodes.size());  // kept to the end
}

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

void ConcreteFunction::run_op_node(Context& ctx, const Node& n, std::vector<std::vector<Tensor>>& values,
                                   bool exact) const {
  std::vector<const Tensor*> ins;
  ins.reserve(n.inputs.size());
  for (Port p : n.inputs) ins.push_back(&values[p.node][p.output]);
  std::vector<Tensor>& outs = values[&n - graph_.nodes.data()];
  outs.assign(n.outputs.size(), Tensor());
  const Attrs& attrs = n.attrs->attrs();
  if (!exact || ctx.has_hooks()) {
    // The full eager path: validates, re-infers shapes, and lets hooks (a tape) see the op.
    std::vector<NamedAttr> named = explicit_attrs(attrs);
    run_op(ctx, *n.def, ins.data(), static_cast<int>(ins.size()), named.data(), static_cast<int>(named.size()),
           outs.data(), static_cast<int>(outs.size()));
    return;
  }
  // The replay fast path: attributes were resolved and shapes inferred at trace time.
  Device& device = ins.empty() ? ctx.default_device() : *ins[0]->device();
  KernelFn kernel = n.def->kernels[static_cast<int>(device.kind())];
  if (!kernel) raise(Code::Unimplemented, "{}: no kernel on device {} (function '{}')", n.def->name, device.name(), name_);
  for (size_t i = 0; i < outs.size(); ++i) outs[i] = Tensor::allocate(device, n.outputs[i].dtype, n.outputs[i].shape);
  KernelContext kc{*n.def, attrs, device, ctx.pool(), ins.data(), static_cast<int>(ins.size()), outs.data(),
                   static_cast<int>(outs.size())};
  if (n.def->random) kc.random_seed = ctx.next_random_seed();
  kernel(kc);
}

std::vector<Tensor> ConcreteFunction::run(Context& ctx, const std::vector<Tensor>& inputs) const {
  if (inputs.size() != signature_.size())
    raise(Code::InvalidArgument, "function '{}': expected {} inputs, got {}", name_, signature_.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].valid() || !matches(signature_[i], inputs[i]))
      raise(Code::InvalidArgument, "function '{}': input {} is {}, expected {}", name_, i,
            inputs[i].valid() ? inputs[i].debug_string() : "an empty tensor",
            std::string(dtype_name(signature_[i].dtype)) + signature_[i].shape.str());
  const bool exact = !has_unknown_dims(signature_);
  std::vector<std::vector<Tensor>> values(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    switch (n.kind) {
      case NodeKind::Input: values[i] = {inputs[static_cast<size_t>(n.index)]}; break;
      case NodeKind::Constant: values[i] = {n.value}; break;
      case NodeKind::Read: values[i] = {n.variable->read()}; break;
      case NodeKind::Assign: {
        Port p = n.inputs[0];
        n.variable->assign(values[p.node][p.output], "function '" + name_ + "'");
        break;
      }
      case NodeKind::Op: run_op_node(ctx, n, values, exact && n.def->dynamic_output_shape == false); break;
    }
    // Drop intermediates after their last reader, so memory is handed back during the replay.
    for (Port p : n.inputs)
      if (last_use_[p.node] == static_cast<int>(i)) values[p.node].clear();
  }
  std::vector<Tensor> out;
  out.reserve(graph_.outputs.size());
  for (Port p : graph_.outputs) out.push_back(values[p.node][p.output]);
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
  auto concrete = std::make_shared<const ConcreteFunction>(name_, key, std::move(graph));
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
