// Optimizers (tf.keras.optimizers): SGD with momentum and Nesterov, Adam, AdamW and RMSprop, with a
// constant learning rate or a schedule.
//
// An optimizer is a tracked object (ObjectKind::Optimizer). Its edges are its step counter "iter"
// (int64) and one float32 variable per hyperparameter ("learning_rate", "beta_1", ...), so all of
// them are checkpointed; a schedule is the edge "learning_rate" instead. Its slot variables (m, v,
// momentum, ...) are created for a variable on its first update and checkpointed through
// SlotOwner (runtime/track/slots.h).
//
// Updates are computed with registered ops on the variable's device, in the variable's dtype: one
// fused op per variable (ApplyAdam, ApplyKerasMomentum, ApplyKerasRMSProp, ...).
// apply_gradients is not safe to call from two threads at once for the same optimizer, except from
// the replicas of a MirroredStrategy on mirrored variables (runtime/distribute): each replica
// updates its own components of the variables, slots and iterations.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/track/slots.h"
#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"

namespace cairn::optim {

// A learning rate as a function of the step (the optimizer's iterations before this update),
// computed with ops as a float32 scalar on the CPU. Its parameters are float32 variables (edges),
// so a checkpoint keeps them.
class LearningRateSchedule : public Trackable {
 public:
  virtual Tensor at(const Tensor& step) = 0;  // step: int64 scalar
  // The value at `step` as a double, for printing.
  double value_at(int64_t step);

 protected:
  explicit LearningRateSchedule(Context& ctx) : Trackable(ctx) {}
  Variable& add_param(const std::string& name, double value);
};

// lr0 * rate^(step / decay_steps), with the exponent floored when `staircase`.
Ref<LearningRateSchedule> exponential_decay(Context& ctx, double initial_learning_rate, int64_t decay_steps,
                                            double decay_rate, bool staircase = false);
// lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha).
Ref<LearningRateSchedule> cosine_decay(Context& ctx, double initial_learning_rate, int64_t decay_steps,
                                       double alpha = 0);

enum class Kind { SGD, Adam, AdamW, RMSprop };

struct OptimizerOptions {
  Kind kind = Kind::SGD;
  double learning_rate = 0.01;           // ignored when `schedule` is set
  Ref<LearningRateSchedule> schedule;
  // SGD
  double momentum = 0;                   // also RMSprop's momentum
  bool nesterov = false;
  // Adam / AdamW
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;                 // also RMSprop's
  double weight_decay = 0.004;           // AdamW only (decoupled: var -= lr * wd * var)
  // RMSprop
  double rho = 0.9;
  bool centered = false;
};

class Optimizer : public Trackable, public SlotOwner {
 public:
  // Validates the options (InvalidArgument naming the bad one: a negative learning rate, beta
  // outside [0, 1), ...). The kind's default learning rate is the caller's business.
  static Ref<Optimizer> create(Context& ctx, const OptimizerOptions& options);

  Kind kind_of() const { return options_.kind; }
  // The options it was created with (the hyperparameters' current values are its variables).
  const OptimizerOptions& options() const { return options_; }
  const char* kind_name() const;  // "SGD", "Adam", "AdamW", "RMSprop"
  std::string describe() const override;

  // Applies one update per (gradient, variable) pair and then adds one to iterations. A pair with
  // an invalid (empty) gradient is skipped, as TF skips None. Errors (InvalidArgument) name the
  // variable: a gradient whose dtype or shape does not match, a non-trainable or non-floating
  // variable, the same variable twice. Nothing is updated when any pair is bad.
  void apply_gradients(const std::vector<std::pair<Tensor, Variable*>>& grads_and_vars);
  // The same for `grads[i]` and `vars[i]` (a tape's gradients of a model's trainable_weights()).
  // InvalidArgument when the counts differ.
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<Ref<Variable>>& vars);

  Variable& iterations();               // the int64 "iter" edge
  int64_t iterations_value();
  // The learning rate for the next update (the schedule at the current iterations), float32.
  Tensor learning_rate();
  double learning_rate_value();
  // Replaces a constant learning rate (FailedPrecondition when a schedule is in use).
  void set_learning_rate(double value);

  // The slot names this kind creates, in order: SGD with momentum {"momentum"}, Adam/AdamW
  // {"m", "v"}, RMSprop {"rms"} plus "momentum" with momentum and "mg" when centered.
  std::vector<std::string> slot_names() const;
  // The slot `name` of `variable`, or null when it has not been created.
  Ref<Variable> get_slot(const Variable& variable, std::string_view name) const;

  // SlotOwner
  std::vector<std::pair<std::string, Ref<Variable>>> slots_for(const Variable& variable) const override;
  void restore_slot(const Variable& variable, const std::string& slot_name,
                    std::function<void(Variable&)> restore) override;

  // Whether updates run as one fused op per variable (ApplyAdam, ... in
  // ops/training_ops.cc; the default) or as the unfused elementwise ops. Both give identical
  // results; the switch is for tests and benchmarks.
  void set_fused(bool fused) { fused_ = fused; }

  Optimizer(Context& ctx, const OptimizerOptions& options);

 private:
  struct VarSlots {
    Ref<Variable> variable;  // keeps the key's identity stable
    std::vector<std::pair<std::string, Ref<Variable>>> slots;
  };
  struct PendingRestore {
    Ref<Variable> variable;  // keeps the key's identity stable until the slot appears
    std::function<void(Variable&)> restore;
  };
  Variable& add_hyper(const std::string& name, double value);
  // The hyperparameter cast to `dtype` on `device` (where the variable being updated lives).
  Tensor hyper(const std::string& name, DType dtype, Device& device);
  // Creates the slots of `variable` on first use and runs their pending restores.
  void create_slots(Variable& variable);
  std::vector<Ref<Variable>> slot_list(const Variable& variable) const;  // in slot_names() order
  void check_pairs(const std::vector<std::pair<Tensor, Variable*>>& grads_and_vars) const;
  // Scalars of one apply_gradients call (hyperparameters, the step size), made once per dtype and
  // device and shared by every variable updated in that call.
  class StepScalars;
  void update(Variable& variable, const Tensor& grad, StepScalars& scalars);
  bool fused_for(const Variable& variable) const;

  OptimizerOptions options_;
  bool fused_ = true;
  Ref<Variable> iterations_;
  std::map<std::string, Ref<Variable>> hypers_;
  std::recursive_mutex create_mu_;  // held while creating a variable's slots and restoring them
  mutable std::mutex slots_mu_;
  std::map<const Variable*, VarSlots> slots_;
  // Pending slot restores: (variable, slot name) -> restore function.
  std::map<std::pair<const Variable*, std::string>, PendingRestore> pending_;
};

}  // namespace cairn::optim
