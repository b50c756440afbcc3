#include "runtime/autodiff/tape.h"

#include <utility>

#include <fmt/format.h>

#include "runtime/autodiff/gradient.h"
#include "runtime/eager/dispatch.h"
#include "runtime/eager/ops.h"
#include "runtime/track/variable.h"

namespace cairn {

bool is_differentiable_dtype(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 || dtype == DType::BFloat16;
}

GradientTape::GradientTape(Context& ctx, TapeOptions options)
    : ctx_(Ref<Context>::share(&ctx)), options_(options), thread_(std::this_thread::get_id()) {
  ctx.add_hook(this);
}

GradientTape::~GradientTape() { ctx_->remove_hook(this); }

void GradientTape::watch(const Tensor& t) {
  if (!t.valid()) raise(Code::InvalidArgument, "GradientTape::watch: the tensor is empty");
  if (!is_differentiable_dtype(t.dtype()))
    raise(Code::InvalidArgument, "GradientTape::watch: cannot watch a {} tensor; gradients flow only through floating dtypes",
          dtype_name(t.dtype()));
  if (tracked(t)) return;
  track(t);
  watched_tensors_.push_back(t);
}

GradientTape::WatchedVariable& GradientTape::watch_variable(const Variable& v) {
  auto [it, inserted] = variable_index_.emplace(&v, variables_.size());
  if (inserted) variables_.push_back({Ref<Variable>::share(const_cast<Variable*>(&v)), {}});
  return variables_[it->second];
}

void GradientTape::watch(const Variable& v) {
  if (!is_differentiable_dtype(v.dtype()))
    raise(Code::InvalidArgument, "GradientTape::watch: cannot watch variable '{}' of dtype {}; gradients flow only through floating dtypes",
          v.name(), dtype_name(v.dtype()));
  watch_variable(v);
  v.read();  // records the current value through variable_read
}

void GradientTape::variable_read(Context&, const Variable& v, const Tensor& value) {
  if (!records_here() || !is_differentiable_dtype(v.dtype())) return;
  bool watched = variable_index_.count(&v) != 0;
  if (!watched && !(options_.watch_accessed_variables && v.trainable())) return;
  WatchedVariable& w = watch_variable(v);
  if (tracked(value)) return;  // this value was read before
  track(value);
  w.reads.push_back(value);
}

std::vector<Ref<Variable>> GradientTape::watched_variables() const {
  std::vector<Ref<Variable>> out;
  for (const WatchedVariable& w : variables_) out.push_back(w.variable);
  return out;
}

void GradientTape::after(Context&, const OpCall& call) {
  if (!records_here() || !call.def.differentiable) return;
  bool any = false;
  for (int i = 0; i < call.num_inputs && !any; ++i) any = tracked(*call.inputs[i]);
  if (!any) return;
  Entry e;
  e.attrs.emplace(call.attrs);
  e.inputs.reserve(static_cast<size_t>(call.num_inputs));
  for (int i = 0; i < call.num_inputs; ++i) e.inputs.push_back(*call.inputs[i]);
  e.outputs.assign(call.outputs, call.outputs + call.num_outputs);
  for (const Tensor& out : e.outputs)
    if (is_differentiable_dtype(out.dtype())) track(out);
  entries_.push_back(std::move(e));
}

bool GradientTape::record(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                          std::shared_ptr<const CustomGradient> gradient) {
  if (!gradient || !gradient->backward)
    raise(Code::InvalidArgument, "GradientTape::record: no backward function");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].valid())
      raise(Code::InvalidArgument, "GradientTape::record: input {} of {} is an empty tensor", i, gradient->name);
  if (!records_here()) return false;
  bool any = false;
  for (size_t i = 0; i < inputs.size() && !any; ++i) any = tracked(inputs[i]);
  if (!any) return false;
  Entry e;
  e.custom = std::move(gradient);
  e.inputs = inputs;
  e.outputs = outputs;
  for (const Tensor& out : e.outputs)
    if (out.valid() && is_differentiable_dtype(out.dtype())) track(out);
  entries_.push_back(std::move(e));
  return true;
}

void GradientTape::reset() {
  tracked_.clear();
  watched_tensors_.clear();
  entries_.clear();
  variables_.clear();
  variable_index_.clear();
  used_ = false;
}

void GradientTape::check_usable(const char* fn) const {
  if (used_)
    raise(Code::FailedPrecondition,
          "{}: a non-persistent GradientTape computes one set of gradients; create it with persistent=true to call "
          "gradient more than once",
          fn);
  if (std::this_thread::get_id() != thread_)
    raise(Code::FailedPrecondition, "{}: a GradientTape is used on the thread that created it", fn);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           const Tensor* output_gradient, Unconnected unconnected) {
  std::vector<std::vector<Tensor>> groups;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].valid()) raise(Code::InvalidArgument, "GradientTape::gradient: source {} is an empty tensor", i);
    groups.push_back({sources[i]});
  }
  std::vector<Tensor> seeds;
  if (output_gradient) seeds.push_back(*output_gradient);
  return backprop({target}, groups, output_gradient ? &seeds : nullptr, unconnected);
}

std::vector<Tensor> GradientTape::gradient(const std::vector<Tensor>& targets, const std::vector<Tensor>& sources,
                                           const std::vector<Tensor>& output_gradients, Unconnected unconnected) {
  if (!output_gradients.empty() && output_gradients.size() != targets.size())
    raise(Code::InvalidArgument, "GradientTape::gradient: {} output gradients for {} targets", output_gradients.size(),
          targets.size());
  std::vector<std::vector<Tensor>> groups;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].valid()) raise(Code::InvalidArgument, "GradientTape::gradient: source {} is an empty tensor", i);
    groups.push_back({sources[i]});
  }
  return backprop(targets, groups, output_gradients.empty() ? nullptr : &output_gradients, unconnected);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Ref<Variable>>& sources,
                                           const Tensor* output_gradient, Unconnected unconnected) {
  std::vector<const Variable*> vars;
  vars.reserve(sources.size());
  for (const Ref<Variable>& v : sources) vars.push_back(v.get());
  return gradient(target, vars, output_gradient, unconnected);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<const Variable*>& sources,
                                           const Tensor* output_gradient, Unconnected unconnected) {
  std::vector<std::vector<Tensor>> groups;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i]) raise(Code::InvalidArgument, "GradientTape::gradient: variable {} is null", i);
    auto it = variable_index_.find(sources[i]);
    groups.push_back(it == variable_index_.end() ? std::vector<Tensor>{} : variables_[it->second].reads);
  }
  std::vector<Tensor> seeds;
  if (output_gradient) seeds.push_back(*output_gradient);
  std::vector<Tensor> grads = backprop({target}, groups, output_gradient ? &seeds : nullptr, Unconnected::None);
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].valid() && unconnected == Unconnected::Zero)
      grads[i] = op::filled(*ctx_, sources[i]->device(), sources[i]->dtype(), sources[i]->shape(), 0);
  return grads;
}

namespace {
// Sums the contributions gathered for one tensor, leaving the sum as the only one.
const Tensor& settle(Context& ctx, std::vector<Tensor>& parts) {
  if (parts.size() > 1) {
    Tensor total = op::add_n(ctx, parts);
    parts.assign(1, std::move(total));
  }
  return parts[0];
}

// Restores the tape's recording flag when the gradient computation ends, however it ends.
class PauseRecording {
 public:
  explicit PauseRecording(GradientTape& tape) : tape_(tape), was_(tape.recording()) { tape.stop_recording(); }
  ~PauseRecording() {
    if (was_) tape_.resume_recording();
  }

 private:
  GradientTape& tape_;
  bool was_;
};
}  // namespace

std::vector<Tensor> GradientTape::entry_gradient(const Entry& e, const std::vector<Tensor>& out_grads,
                                                 const std::vector<bool>& needs) {
  Context& ctx = *ctx_;
  std::vector<Tensor> in_grads;
  if (e.custom) {
    in_grads = e.custom->backward(ctx, e.inputs, e.outputs, out_grads, needs);
    if (in_grads.size() != e.inputs.size())
      raise(Code::Internal, "GradientTape::gradient: the gradient of {} gave {} tensors for {} inputs", e.custom->name,
            in_grads.size(), e.inputs.size());
    return in_grads;
  }
  const OpDef& def = e.attrs->def();
  if (!def.gradient) raise(Code::Unimplemented, "GradientTape::gradient: op '{}' has no registered gradient", def.name);
  in_grads.resize(e.inputs.size());
  GradContext gc{ctx, def, e.attrs->attrs(), e.inputs, e.outputs, out_grads, needs, in_grads};
  def.gradient(gc);
  return in_grads;
}

std::vector<Tensor> GradientTape::backprop(const std::vector<Tensor>& targets,
                                           const std::vector<std::vector<Tensor>>& sources,
                                           const std::vector<Tensor>* output_gradients, Unconnected unconnected) {
  constexpr const char* kFn = "GradientTape::gradient";
  check_usable(kFn);
  for (size_t k = 0; k < targets.size(); ++k) {
    const Tensor& target = targets[k];
    if (!target.valid()) {
      if (targets.size() == 1) raise(Code::InvalidArgument, "{}: the target is an empty tensor", kFn);
      raise(Code::InvalidArgument, "{}: target {} is an empty tensor", kFn, k);
    }
    const Tensor* seed = output_gradients ? &(*output_gradients)[k] : nullptr;
    if (seed && (!seed->valid() || seed->dtype() != target.dtype() || seed->shape() != target.shape()))
      raise(Code::InvalidArgument, "{}: output_gradient {} does not match the target {}", kFn,
            seed->valid() ? seed->debug_string() : "(empty)", target.debug_string());
  }
  Context& ctx = *ctx_;
  PauseRecording pause(*this);

  // Forward: which recorded ops lie on a path from a source. As in TF, a source the tape never
  // watched (nor computed from something watched) gets no gradient.
  std::unordered_set<const Buffer*> reach;
  for (const auto& group : sources)
    for (const Tensor& s : group)
      if (tracked(s)) reach.insert(s.buffer());
  std::vector<bool> relevant(entries_.size(), false);
  for (size_t k = 0; k < entries_.size(); ++k) {
    for (const Tensor& in : entries_[k].inputs)
      if (reach.count(in.buffer())) relevant[k] = true;
    if (relevant[k])
      for (const Tensor& out : entries_[k].outputs)
        if (out.valid()) reach.insert(out.buffer());
  }

  // Backward, in reverse execution order.
  std::unordered_map<const Buffer*, std::vector<Tensor>> grads;
  for (size_t k = 0; k < targets.size(); ++k)
    grads[targets[k].buffer()].push_back(output_gradients ? (*output_gradients)[k] : op::ones_like(ctx, targets[k]));
  for (size_t k = entries_.size(); k-- > 0;) {
    if (!relevant[k]) continue;
    const Entry& e = entries_[k];
    std::vector<Tensor> out_grads(e.outputs.size());
    bool any = false;
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      if (!e.outputs[i].valid()) continue;  // not the entry's own (custom entries)
      auto it = grads.find(e.outputs[i].buffer());
      if (it == grads.end()) continue;
      out_grads[i] = settle(ctx, it->second);
      any = true;
    }
    if (!any) continue;
    if (!e.custom)  // an op's gradient gets zeros for unused outputs; a custom one, invalid tensors
      for (size_t i = 0; i < e.outputs.size(); ++i)
        if (!out_grads[i].valid()) out_grads[i] = op::zeros_like(ctx, e.outputs[i]);
    std::vector<bool> needs(e.inputs.size());
    for (size_t i = 0; i < e.inputs.size(); ++i)
      needs[i] = reach.count(e.inputs[i].buffer()) != 0 && is_differentiable_dtype(e.inputs[i].dtype());
    std::vector<Tensor> in_grads = entry_gradient(e, out_grads, needs);
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      if (!needs[i] || !in_grads[i].valid()) continue;
      const Tensor& in = e.inputs[i];
      if (in_grads[i].shape() != in.shape() || in_grads[i].dtype() != in.dtype())
        raise(Code::Internal, "{}: the gradient of {} gave {} for input {} of {}", kFn,
              e.custom ? e.custom->name : fmt::format("'{}'", e.attrs->def().name), in_grads[i].debug_string(), i,
              in.debug_string());
      grads[in.buffer()].push_back(std::move(in_grads[i]));
    }
  }

  std::vector<Tensor> result(sources.size());
  for (size_t s = 0; s < sources.size(); ++s) {
    std::vector<Tensor> parts;
    for (const Tensor& t : sources[s]) {
      if (!reach.count(t.buffer())) continue;
      auto it = grads.find(t.buffer());
      if (it != grads.end()) parts.push_back(settle(ctx, it->second));
    }
    if (!parts.empty()) result[s] = op::add_n(ctx, parts);
    else if (unconnected == Unconnected::Zero && !sources[s].empty()) result[s] = op::zeros_like(ctx, sources[s][0]);
  }
  if (!options_.persistent) {
    // Done: forget what was recorded. The tracked set holds buffer addresses, which later
    // tensors may reuse once these are freed: kept, they would make new ops look watched.
    entries_.clear();
    tracked_.clear();
    watched_tensors_.clear();
    used_ = true;
  }
  return result;
}

}  // namespace cairn
