// Learning rate schedules (tf.keras.optimizers.schedules): ExponentialDecay and CosineDecay,
// computed in float32 with ops, parameters held in float32 variables so checkpoints keep them.
#include <fmt/format.h>

#include <cmath>

#include "runtime/core/error.h"
#include "runtime/eager/ops.h"
#include "runtime/optim/optimizer.h"

namespace cairn::optim {

namespace {

constexpr double kPi = 3.14159265358979323846;

void check_schedule_arg(const char* fn, const char* name, double v, bool positive) {
  if (!std::isfinite(v) || v < 0 || (positive && v == 0))
    raise(Code::InvalidArgument, "{}: {} must be finite and {} 0, got {}", fn, name, positive ? ">" : ">=", v);
}

// The step as float32 on the CPU; the schedule's own variables live there.
Tensor step_f32(Context& ctx, const Tensor& step) {
  if (!step.valid() || step.dtype() != DType::Int64 || step.shape().rank() != 0)
    raise(Code::InvalidArgument, "LearningRateSchedule::at: the step must be an int64 scalar");
  return op::cast(ctx, tensor_on_device(step, ctx.cpu()), DType::Float32);
}

class ExponentialDecay final : public LearningRateSchedule {
 public:
  ExponentialDecay(Context& ctx, double lr0, int64_t decay_steps, double decay_rate, bool staircase)
      : LearningRateSchedule(ctx), staircase_(staircase) {
    lr0_ = &add_param("initial_learning_rate", lr0);
    decay_steps_ = &add_param("decay_steps", static_cast<double>(decay_steps));
    decay_rate_ = &add_param("decay_rate", decay_rate);
  }

  // lr0 * rate ^ (step / decay_steps), the exponent floored when staircase.
  Tensor at(const Tensor& step) override {
    Context& c = context();
    Tensor p = op::div(c, step_f32(c, step), decay_steps_->read());
    if (staircase_) p = run_op(c, "Floor", {p})[0];
    return op::mul(c, lr0_->read(), op::pow(c, decay_rate_->read(), p));
  }

  std::string describe() const override {
    return staircase_ ? "exponential decay schedule (staircase)" : "exponential decay schedule";
  }

 private:
  const bool staircase_;
  Variable* lr0_;
  Variable* decay_steps_;
  Variable* decay_rate_;
};

class CosineDecay final : public LearningRateSchedule {
 public:
  CosineDecay(Context& ctx, double lr0, int64_t decay_steps, double alpha) : LearningRateSchedule(ctx) {
    lr0_ = &add_param("initial_learning_rate", lr0);
    decay_steps_ = &add_param("decay_steps", static_cast<double>(decay_steps));
    alpha_ = &add_param("alpha", alpha);
  }

  // lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)
  Tensor at(const Tensor& step) override {
    Context& c = context();
    auto f32 = [&](double v) { return op::scalar(c, c.cpu(), DType::Float32, v); };
    Tensor steps = decay_steps_->read();
    Tensor fraction = op::div(c, run_op(c, "Minimum", {step_f32(c, step), steps})[0], steps);
    Tensor cosine = op::mul(c, f32(0.5), op::add(c, f32(1), run_op(c, "Cos", {op::mul(c, f32(kPi), fraction)})[0]));
    Tensor alpha = alpha_->read();
    Tensor decayed = op::add(c, op::mul(c, op::sub(c, f32(1), alpha), cosine), alpha);
    return op::mul(c, lr0_->read(), decayed);
  }

  std::string describe() const override { return "cosine decay schedule"; }

 private:
  Variable* lr0_;
  Variable* decay_steps_;
  Variable* alpha_;
};

}  // namespace

Variable& LearningRateSchedule::add_param(const std::string& name, double value) {
  VariableOptions vo;
  vo.name = name;
  vo.trainable = false;
  vo.device = &context().cpu();
  Ref<Variable> v = Variable::create(context(), op::scalar(context(), context().cpu(), DType::Float32, value), vo);
  set(name, v, "LearningRateSchedule");
  return *v;  // the edge keeps it alive
}

double LearningRateSchedule::value_at(int64_t step) {
  Tensor s = Tensor::allocate(context().cpu(), DType::Int64, Shape{});
  *s.mutable_data<int64_t>() = step;
  Tensor lr = at(s);
  float v = 0;
  lr.device()->read(*lr.buffer(), &v, sizeof v);
  return v;
}

Ref<LearningRateSchedule> exponential_decay(Context& ctx, double initial_learning_rate, int64_t decay_steps,
                                            double decay_rate, bool staircase) {
  const char* fn = "exponential_decay";
  check_schedule_arg(fn, "initial_learning_rate", initial_learning_rate, false);
  if (decay_steps <= 0) raise(Code::InvalidArgument, "{}: decay_steps must be > 0, got {}", fn, decay_steps);
  check_schedule_arg(fn, "decay_rate", decay_rate, true);
  return make_ref<ExponentialDecay>(ctx, initial_learning_rate, decay_steps, decay_rate, staircase);
}

Ref<LearningRateSchedule> cosine_decay(Context& ctx, double initial_learning_rate, int64_t decay_steps, double alpha) {
  const char* fn = "cosine_decay";
  check_schedule_arg(fn, "initial_learning_rate", initial_learning_rate, false);
  if (decay_steps <= 0) raise(Code::InvalidArgument, "{}: decay_steps must be > 0, got {}", fn, decay_steps);
  if (!std::isfinite(alpha) || alpha < 0 || alpha > 1)
    raise(Code::InvalidArgument, "{}: alpha must be in [0, 1], got {}", fn, alpha);
  return make_ref<CosineDecay>(ctx, initial_learning_rate, decay_steps, alpha);
}

}  // namespace cairn::optim
