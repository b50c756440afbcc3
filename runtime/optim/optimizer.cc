#include "runtime/optim/optimizer.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/ops.h"
#include "runtime/track/mirroring.h"

namespace cairn::optim {

namespace {

constexpr const char* kApply = "Optimizer::apply_gradients";
constexpr const char* kCreate = "Optimizer::create";

// Every hyperparameter is checked for finiteness first; `lo`/`hi` bound it, closed or open.
void check_range(const char* name, double v, double lo, double hi, bool hi_open) {
  bool ok = std::isfinite(v) && v >= lo && (hi_open ? v < hi : v <= hi);
  if (!ok)
    raise(Code::InvalidArgument, "{}: {} must be in [{}, {}{}, got {}", kCreate, name, lo, hi, hi_open ? ")" : "]", v);
}

void check_options(const OptimizerOptions& o) {
  if (o.kind != Kind::SGD && o.kind != Kind::Adam && o.kind != Kind::AdamW && o.kind != Kind::RMSprop)
    raise(Code::InvalidArgument, "{}: unknown optimizer kind {}", kCreate, static_cast<int>(o.kind));
  if (!o.schedule) check_range("learning_rate", o.learning_rate, 0, INFINITY, true);
  switch (o.kind) {
    case Kind::SGD:
      check_range("momentum", o.momentum, 0, 1, false);
      break;
    case Kind::AdamW:
      check_range("weight_decay", o.weight_decay, 0, INFINITY, true);
      [[fallthrough]];
    case Kind::Adam:
      check_range("beta_1", o.beta_1, 0, 1, true);
      check_range("beta_2", o.beta_2, 0, 1, true);
      check_range("epsilon", o.epsilon, 0, INFINITY, true);
      break;
    case Kind::RMSprop:
      check_range("rho", o.rho, 0, 1, true);
      check_range("momentum", o.momentum, 0, 1, false);
      check_range("epsilon", o.epsilon, 0, INFINITY, true);
      break;
  }
  if (o.nesterov && o.kind != Kind::SGD)
    raise(Code::InvalidArgument, "{}: nesterov applies to SGD only", kCreate);
  if (o.centered && o.kind != Kind::RMSprop)
    raise(Code::InvalidArgument, "{}: centered applies to RMSprop only", kCreate);
}

Tensor float32_scalar(Context& ctx, double value) { return op::scalar(ctx, ctx.cpu(), DType::Float32, value); }

Ref<Variable> make_hyper_variable(Context& ctx, const std::string& name, const Tensor& initial) {
  VariableOptions vo;
  vo.name = name;
  vo.trainable = false;
  vo.device = &ctx.cpu();  // read on the host and cast per step to each variable's device
  return Variable::create(ctx, initial, vo);
}

// "dense/kernel:0" -> "dense/kernel".
std::string base_name(const std::string& name) {
  size_t colon = name.rfind(':');
  return colon == std::string::npos ? name : name.substr(0, colon);
}

}  // namespace

// ---- creation ----

Ref<Optimizer> Optimizer::create(Context& ctx, const OptimizerOptions& options) {
  check_options(options);
  if (options.schedule && &options.schedule->context() != &ctx)
    raise(Code::InvalidArgument, "{}: the learning rate schedule belongs to another context", kCreate);
  return make_ref<Optimizer>(ctx, options);
}

Optimizer::Optimizer(Context& ctx, const OptimizerOptions& options)
    : Trackable(ObjectKind::Optimizer, ctx), options_(options) {
  check_options(options_);
  Tensor zero = Tensor::allocate(ctx.cpu(), DType::Int64, Shape{});
  *zero.mutable_data<int64_t>() = 0;
  iterations_ = make_hyper_variable(ctx, "iter", zero);
  set("iter", iterations_, kCreate);
  // Edges in Keras' order: the learning rate first, then the kind's own hyperparameters.
  if (options_.schedule) {
    set("learning_rate", options_.schedule, kCreate);
  } else {
    add_hyper("learning_rate", options_.learning_rate);
  }
  switch (options_.kind) {
    case Kind::SGD:
      add_hyper("momentum", options_.momentum);
      break;
    case Kind::Adam:
    case Kind::AdamW:
      add_hyper("beta_1", options_.beta_1);
      add_hyper("beta_2", options_.beta_2);
      add_hyper("epsilon", options_.epsilon);
      if (options_.kind == Kind::AdamW) add_hyper("weight_decay", options_.weight_decay);
      break;
    case Kind::RMSprop:
      add_hyper("rho", options_.rho);
      add_hyper("momentum", options_.momentum);
      add_hyper("epsilon", options_.epsilon);
      break;
  }
}

Variable& Optimizer::add_hyper(const std::string& name, double value) {
  Ref<Variable> v = make_hyper_variable(context(), name, float32_scalar(context(), value));
  hypers_[name] = v;
  set(name, v, kCreate);
  return *v;
}

const char* Optimizer::kind_name() const {
  switch (options_.kind) {
    case Kind::SGD: return "SGD";
    case Kind::Adam: return "Adam";
    case Kind::AdamW: return "AdamW";
    case Kind::RMSprop: return "RMSprop";
  }
  return "unknown";
}

std::string Optimizer::describe() const { return fmt::format("optimizer '{}'", kind_name()); }

// ---- iterations and learning rate ----

Variable& Optimizer::iterations() { return *iterations_; }

int64_t Optimizer::iterations_value() {
  Tensor t = iterations_->read();
  int64_t v = 0;
  t.device()->read(*t.buffer(), &v, sizeof v);
  return v;
}

Tensor Optimizer::learning_rate() {
  if (options_.schedule) return options_.schedule->at(iterations_->read());
  return hypers_.at("learning_rate")->read();
}

double Optimizer::learning_rate_value() {
  Tensor t = learning_rate();
  float v = 0;
  t.device()->read(*t.buffer(), &v, sizeof v);
  return v;
}

void Optimizer::set_learning_rate(double value) {
  if (options_.schedule)
    raise(Code::FailedPrecondition, "Optimizer::set_learning_rate: the learning rate is a schedule");
  if (!std::isfinite(value) || value < 0)
    raise(Code::InvalidArgument, "Optimizer::set_learning_rate: learning_rate must be finite and >= 0, got {}", value);
  hypers_.at("learning_rate")->assign(float32_scalar(context(), value), "Optimizer::set_learning_rate");
}

Tensor Optimizer::hyper(const std::string& name, DType dtype, Device& device) {
  return tensor_on_device(op::cast(context(), hypers_.at(name)->read(), dtype), device);
}

// ---- slots ----

std::vector<std::string> Optimizer::slot_names() const {
  switch (options_.kind) {
    case Kind::SGD:
      if (options_.momentum > 0) return {"momentum"};
      return {};
    case Kind::Adam:
    case Kind::AdamW:
      return {"m", "v"};
    case Kind::RMSprop: {
      std::vector<std::string> names{"rms"};
      if (options_.momentum > 0) names.push_back("momentum");
      if (options_.centered) names.push_back("mg");
      return names;
    }
  }
  return {};
}

void Optimizer::create_slots(Variable& variable) {
  EagerScope eager;  // zero-filled slots are real even when the first step is being traced
  DeviceScope with_variable(context(), variable.device());  // slots live with their variable
  // Replicas of a MirroredStrategy update concurrently: the first creates the (mirrored) slots and
  // runs their pending restores before any other replica uses them.
  std::lock_guard<std::recursive_mutex> creating(create_mu_);
  std::vector<std::pair<std::function<void(Variable&)>, Ref<Variable>>> restores;
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    if (slots_.count(&variable)) return;
    VarSlots vs;
    vs.variable = Ref<Variable>::share(&variable);
    for (const std::string& name : slot_names()) {
      VariableOptions vo;
      vo.name = base_name(variable.name()) + "/" + name;
      vo.trainable = false;
      Tensor zeros = op::filled(context(), variable.device(), variable.dtype(), variable.shape(), 0);
      Ref<Variable> slot = Variable::create(context(), zeros, vo, kApply);
      vs.slots.emplace_back(name, slot);
      auto pending = pending_.find({&variable, name});
      if (pending != pending_.end()) {
        restores.emplace_back(std::move(pending->second.restore), slot);
        pending_.erase(pending);
      }
    }
    slots_.emplace(&variable, std::move(vs));
  }
  // Outside the lock: a restore reports to its checkpoint's restore state, which may in turn
  // call restore_slot on this optimizer.
  // A restore writes every replica's component of a mirrored slot, whichever replica made it.
  ReplicaScope outside_replicas(-1);
  for (auto& [restore, slot] : restores) restore(*slot);
}

std::vector<std::pair<std::string, Ref<Variable>>> Optimizer::slots_for(const Variable& variable) const {
  std::lock_guard<std::mutex> lock(slots_mu_);
  auto it = slots_.find(&variable);
  if (it == slots_.end()) return {};
  return it->second.slots;
}

std::vector<Ref<Variable>> Optimizer::slot_list(const Variable& variable) const {
  std::vector<Ref<Variable>> out;
  for (auto& [name, slot] : slots_for(variable)) out.push_back(slot);
  return out;
}

Ref<Variable> Optimizer::get_slot(const Variable& variable, std::string_view name) const {
  for (auto& [slot_name, slot] : slots_for(variable))
    if (slot_name == name) return slot;
  return nullptr;
}

void Optimizer::restore_slot(const Variable& variable, const std::string& slot_name,
                             std::function<void(Variable&)> restore) {
  Ref<Variable> existing;
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    auto it = slots_.find(&variable);
    if (it == slots_.end()) {
      // Not created yet: restored the moment it is (a later call replaces this one).
      pending_[{&variable, slot_name}] =
          PendingRestore{Ref<Variable>::share(const_cast<Variable*>(&variable)), std::move(restore)};
      return;
    }
    for (auto& [name, slot] : it->second.slots)
      if (name == slot_name) existing = slot;
  }
  // A slot this optimizer does not make (another kind's checkpoint) stays unrestored, and the
  // checkpoint reports its value as not restored.
  if (existing) restore(*existing);
}

// ---- updates ----

void Optimizer::check_pairs(const std::vector<std::pair<Tensor, Variable*>>& grads_and_vars) const {
  std::set<const Variable*> seen;
  std::vector<std::string> names;
  for (size_t i = 0; i < grads_and_vars.size(); ++i) {
    const auto& [grad, var] = grads_and_vars[i];
    if (!var) raise(Code::InvalidArgument, "{}: pair {} has no variable", kApply, i);
    names.push_back(var->name());
    if (!grad.valid()) continue;  // skipped, like a None gradient in TensorFlow
    if (&var->context() != &context())
      raise(Code::InvalidArgument, "{}: variable '{}' belongs to another context", kApply, var->name());
    if (!var->trainable())
      raise(Code::InvalidArgument, "{}: variable '{}' is not trainable", kApply, var->name());
    if (!dtype_is_floating(var->dtype()))
      raise(Code::InvalidArgument, "{}: variable '{}' has dtype {}; optimizers update floating variables only",
            kApply, var->name(), dtype_name(var->dtype()));
    if (grad.dtype() != var->dtype())
      raise(Code::InvalidArgument, "{}: the gradient of variable '{}' has dtype {}, the variable {}", kApply,
            var->name(), dtype_name(grad.dtype()), dtype_name(var->dtype()));
    if (grad.shape() != var->shape())
      raise(Code::InvalidArgument, "{}: the gradient of variable '{}' has shape {}, the variable {}", kApply,
            var->name(), grad.shape().str(), var->shape().str());
    if (!seen.insert(var).second)
      raise(Code::InvalidArgument, "{}: variable '{}' is given more than once", kApply, var->name());
  }
  if (seen.empty())
    raise(Code::InvalidArgument, "{}: no gradients provided for any variable: [{}]", kApply,
          fmt::join(names, ", "));
}

class Optimizer::StepScalars {
 public:
  StepScalars(Optimizer& opt, Tensor lr_f32, Tensor step_i64)
      : opt_(opt), lr_f32_(std::move(lr_f32)), step_i64_(std::move(step_i64)) {}

  // The scalar `name` in `dtype` on `device`, made by `make` the first time it is asked for.
  template <class Make>
  const Tensor& get(const std::string& name, DType dtype, Device& device, Make make) {
    auto key = std::make_tuple(name, dtype, &device);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, make()).first;
    return it->second;
  }
  const Tensor& hyper(const char* name, DType dt, Device& dev) {
    return get(name, dt, dev, [&] { return opt_.hyper(name, dt, dev); });
  }
  const Tensor& number(double v, DType dt, Device& dev) {
    return get(fmt::format("{}", v), dt, dev, [&] { return op::scalar(opt_.context(), dev, dt, v); });
  }
  const Tensor& lr(DType dt, Device& dev) {
    return get("lr", dt, dev, [&] { return tensor_on_device(op::cast(opt_.context(), lr_f32_, dt), dev); });
  }
  // t = iter + 1, the step number Adam's bias correction uses.
  const Tensor& t(DType dt, Device& dev) {
    return get("t", dt, dev, [&] {
      Context& c = opt_.context();
      return tensor_on_device(op::cast(c, op::add(c, step_i64_, op::scalar_like(c, step_i64_, 1)), dt), dev);
    });
  }

 private:
  Optimizer& opt_;
  Tensor lr_f32_, step_i64_;
  std::map<std::tuple<std::string, DType, Device*>, Tensor> cache_;
};

void Optimizer::apply_gradients(const std::vector<Tensor>& grads, const std::vector<Ref<Variable>>& vars) {
  if (grads.size() != vars.size())
    raise(Code::InvalidArgument, "apply_gradients: {} gradients for {} variables", grads.size(), vars.size());
  std::vector<std::pair<Tensor, Variable*>> pairs;
  pairs.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) pairs.emplace_back(grads[i], vars[i].get());
  apply_gradients(pairs);
}

void Optimizer::apply_gradients(const std::vector<std::pair<Tensor, Variable*>>& grads_and_vars) {
  check_pairs(grads_and_vars);
  // Slots first, for every pair: a pending slot restore that fails leaves every variable as it was.
  for (const auto& [grad, var] : grads_and_vars)
    if (grad.valid()) create_slots(*var);
  // Keras evaluates the learning rate (a schedule at the current step) once per apply.
  StepScalars scalars(*this, learning_rate(), iterations_->read());
  for (const auto& [grad, var] : grads_and_vars)
    if (grad.valid()) update(*var, tensor_on_device(grad, var->device()), scalars);
  Tensor one = Tensor::allocate(context().cpu(), DType::Int64, Shape{});
  *one.mutable_data<int64_t>() = 1;
  iterations_->assign_add(one, kApply);
}


// Whether the fused update ops (ops/training_ops.cc) update the variables: one kernel per
// variable, on the CPU and on Vulkan (training.comp).
bool Optimizer::fused_for(const Variable&) const { return fused_; }

// One update of `var` by the rules of Keras' optimizer_v2 kernels (TF's training_ops), with every
// scalar cast to the variable's dtype and moved to its device first. The fused ops compute the same
// steps in the same order with the same roundings as the unfused ops below, so both give identical
// bits (tests/runtime/optim/fused_update_test.cc checks it for every kind, several steps, float16,
// float32 and float64).
void Optimizer::update(Variable& var, const Tensor& grad, StepScalars& scalars) {
  Context& c = context();
  const DType dt = var.dtype();
  Device& dev = var.device();
  auto hp = [&](const char* name) { return scalars.hyper(name, dt, dev); };
  auto num = [&](double v) { return scalars.number(v, dt, dev); };
  using namespace op;
  const Tensor g = grad;
  const Tensor lr = scalars.lr(dt, dev);
  std::vector<Ref<Variable>> slots = slot_list(var);

  if (fused_for(var)) {
    // Runs `op` on the variable's value (input 0, left empty by the caller) and the other inputs,
    // under the variable's write lock as assign_sub did (no other write of it interleaves), and
    // assigns the other outputs to `slots` in order.
    auto fused = [&](const char* op, std::vector<Tensor> inputs, std::vector<Variable*> slots,
                     const std::vector<NamedAttr>& attrs = {}) {
      std::vector<Tensor> out;
      var.update_with(
          [&](const Tensor& current) {
            inputs[0] = current;
            out = run_op(c, op, inputs, attrs);
            return out[0];
          },
          kApply);
      for (size_t i = 0; i < slots.size(); ++i) slots[i]->assign(out[i + 1], kApply);
    };
    switch (options_.kind) {
      case Kind::SGD:
        if (slots.empty()) {
          fused("ApplyGradientDescent", {Tensor(), lr, g}, {});
        } else {
          fused("ApplyKerasMomentum", {Tensor(), slots[0]->read(), lr, g, hp("momentum")}, {slots[0].get()},
                {attr_bool("use_nesterov", options_.nesterov)});
        }
        return;
      case Kind::Adam:
      case Kind::AdamW: {
        const Tensor& b1p = scalars.get("beta_1^t", dt, dev, [&] { return pow(c, hp("beta_1"), scalars.t(dt, dev)); });
        const Tensor& b2p = scalars.get("beta_2^t", dt, dev, [&] { return pow(c, hp("beta_2"), scalars.t(dt, dev)); });
        std::vector<Tensor> in = {Tensor(), slots[0]->read(), slots[1]->read(), b1p, b2p, lr,
                                  hp("beta_1"), hp("beta_2"), hp("epsilon")};
        if (options_.kind == Kind::AdamW) in.push_back(hp("weight_decay"));
        in.push_back(g);
        fused(options_.kind == Kind::AdamW ? "ApplyAdamW" : "ApplyAdam", in, {slots[0].get(), slots[1].get()});
        return;
      }
      case Kind::RMSprop: {
        size_t next = 0;
        Variable& rms = *slots[next++];
        Variable* mom = options_.momentum > 0 ? slots[next++].get() : nullptr;
        Variable* mg = options_.centered ? slots[next++].get() : nullptr;
        Tensor rho = hp("rho"), eps = hp("epsilon");
        if (mom && mg) {
          fused("ApplyCenteredRMSProp",
                {Tensor(), mg->read(), rms.read(), mom->read(), lr, rho, hp("momentum"), eps, g}, {mg, &rms, mom});
        } else if (mom) {
          fused("ApplyRMSProp", {Tensor(), rms.read(), mom->read(), lr, rho, hp("momentum"), eps, g}, {&rms, mom});
        } else if (mg) {
          fused("ApplyKerasCenteredRMSProp", {Tensor(), mg->read(), rms.read(), lr, rho, eps, g}, {mg, &rms});
        } else {
          fused("ApplyKerasRMSProp", {Tensor(), rms.read(), lr, rho, eps, g}, {&rms});
        }
        return;
      }
    }
  }

  switch (options_.kind) {
    case Kind::SGD: {
      if (slots.empty()) {  // plain gradient descent: var -= lr * g
        var.assign_sub(mul(c, lr, g), kApply);
        return;
      }
      // m = momentum * m - lr * g; var += m, or with Nesterov var += momentum * m - lr * g.
      Variable& m = *slots[0];
      Tensor momentum = hp("momentum");
      Tensor lr_g = mul(c, lr, g);
      Tensor m_new = sub(c, mul(c, momentum, m.read()), lr_g);
      m.assign(m_new, kApply);
      var.assign_add(options_.nesterov ? sub(c, mul(c, momentum, m_new), lr_g) : m_new, kApply);
      return;
    }
    case Kind::Adam:
    case Kind::AdamW: {
      Tensor b1 = hp("beta_1"), b2 = hp("beta_2"), eps = hp("epsilon");
      Tensor one = num(1);
      if (options_.kind == Kind::AdamW)  // decoupled decay first, as Keras: var -= var * wd * lr
        var.assign_sub(mul(c, mul(c, var.read(), hp("weight_decay")), lr), kApply);
      // The bias correction folds into the step size: lr * sqrt(1 - b2^t) / (1 - b1^t), t = iter + 1.
      const Tensor& alpha = scalars.get("adam_alpha", dt, dev, [&] {
        Tensor t = scalars.t(dt, dev);
        return mul(c, lr, div(c, sqrt(c, sub(c, one, pow(c, b2, t))), sub(c, one, pow(c, b1, t))));
      });
      const Tensor& one_minus_b1 = scalars.get("1-beta_1", dt, dev, [&] { return sub(c, one, b1); });
      const Tensor& one_minus_b2 = scalars.get("1-beta_2", dt, dev, [&] { return sub(c, one, b2); });
      Variable& m = *slots[0];
      Variable& v = *slots[1];
      // m += (g - m) * (1 - b1); v += (g^2 - v) * (1 - b2)
      Tensor m_new = add(c, m.read(), mul(c, sub(c, g, m.read()), one_minus_b1));
      Tensor v_new = add(c, v.read(), mul(c, sub(c, square(c, g), v.read()), one_minus_b2));
      m.assign(m_new, kApply);
      v.assign(v_new, kApply);
      var.assign_sub(div(c, mul(c, m_new, alpha), add(c, sqrt(c, v_new), eps)), kApply);
      return;
    }
    case Kind::RMSprop: {
      Tensor rho = hp("rho"), eps = hp("epsilon");
      Tensor one_minus_rho = sub(c, num(1), rho);
      size_t next = 0;
      Variable& rms = *slots[next++];
      Variable* mom = options_.momentum > 0 ? slots[next++].get() : nullptr;
      Variable* mg = options_.centered ? slots[next++].get() : nullptr;
      // rms = rho * rms + (1 - rho) * g^2; centered: mg likewise with g, denominator rms - mg^2.
      Tensor rms_new = add(c, mul(c, rho, rms.read()), mul(c, one_minus_rho, square(c, g)));
      rms.assign(rms_new, kApply);
      Tensor denom = rms_new;
      if (mg) {
        Tensor mg_new = add(c, mul(c, rho, mg->read()), mul(c, one_minus_rho, g));
        mg->assign(mg_new, kApply);
        denom = sub(c, rms_new, square(c, mg_new));
      }
      if (mom) {
        // TF's ApplyRMSProp kernel: epsilon inside the root.
        // mom = momentum * mom + lr * g / sqrt(denom + eps); var -= mom
        Tensor scaled = div(c, mul(c, lr, g), sqrt(c, add(c, denom, eps)));
        Tensor mom_new = add(c, mul(c, hp("momentum"), mom->read()), scaled);
        mom->assign(mom_new, kApply);
        var.assign_sub(mom_new, kApply);
      } else {
        // Keras' own formula without momentum: epsilon outside the root.
        var.assign_sub(div(c, mul(c, lr, g), add(c, sqrt(c, denom), eps)), kApply);
      }
      return;
    }
  }
}

}  // namespace cairn::optim
