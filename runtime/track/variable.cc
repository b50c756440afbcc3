#include "runtime/track/variable.h"

#include <fmt/format.h>

#include <vector>

#include "runtime/core/error.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/dispatch.h"
#include "runtime/track/mirroring.h"
#include "runtime/track/trackable.h"

namespace cairn {


namespace {

std::string variable_name(const VariableOptions& o, std::string_view fn) {
  if (o.name.empty()) raise(Code::InvalidArgument, "{}: variable name is empty", fn);
  if (o.name.find(':') != std::string::npos)
    raise(Code::InvalidArgument, "{}: variable name \"{}\" contains ':'", fn, o.name);
  if (o.scope) return fmt::format("{}/{}:0", o.scope->scope(), o.name);
  return o.name + ":0";
}

const Tensor& checked_initial(const Tensor& initial, std::string_view fn) {
  if (!initial.valid()) raise(Code::InvalidArgument, "{}: the initial value is an empty tensor", fn);
  if (initial.dtype() == DType::String)
    raise(Code::InvalidArgument, "{}: string variables are not supported", fn);
  return initial;
}

// The devices of a new variable's mirrors (replicas 1..N-1), or null when it is not mirrored.
const std::vector<Device*>* mirror_devices(const VariableOptions& o) {
  if (!o.mirrored) return nullptr;
  const std::vector<Device*>* devices = MirrorScope::current();
  return devices && devices->size() > 1 ? devices : nullptr;
}

// Where replica r's component of a mirrored variable lives: the replica's device, or the device
// the options pin. A variable pinned to the host (an optimizer's hyperparameters) follows a
// replica on another host device (a split CPU's cpu:1): the replica's ops then never mix its
// device with cpu:0, which eager dispatch refuses and a compiled step would run on cpu:0.
Device* component_device(const VariableOptions& o, Device& replica) {
  if (!o.device) return &replica;
  return o.device->is_host() && replica.is_host() ? &replica : o.device;
}

// The initial value on the device the variable lives on: inside a MirrorScope replica 0's
// component device, else options.device, else the device scope's, else where it is.
Tensor placed_initial(Context& ctx, const Tensor& initial, const VariableOptions& o, std::string_view fn) {
  Device* target = o.device;
  if (o.mirrored && MirrorScope::current()) target = component_device(o, *MirrorScope::current()->front());
  if (!target) target = DeviceScope::current(ctx);
  if (!target) return initial;
  try {
    return tensor_on_device(initial, *target);
  } catch (const Error& e) {
    raise(e.code(), "{}: {}", fn, e.message());
  }
}

}  // namespace

Variable::Variable(Context& ctx, const Tensor& initial, const VariableOptions& options, std::string_view fn)
    : Object(ObjectKind::Variable, ctx),
      dtype_(checked_initial(initial, fn).dtype()),
      shape_(initial.shape()),
      trainable_(options.trainable),
      name_(variable_name(options, fn)),
      value_(placed_initial(ctx, initial, options, fn)) {
  device_ = Ref<Device>::share(value_.device());
  if (const std::vector<Device*>* devices = mirror_devices(options)) {
    VariableOptions component = options;
    component.mirrored = false;
    for (size_t r = 1; r < devices->size(); ++r) {
      component.device = component_device(options, *(*devices)[r]);
      Ref<Variable> m = make_ref<Variable>(ctx, value_, component, fn);
      m->primary_ = this;
      mirrors_.push_back(std::move(m));
    }
  }
}

const Variable& Variable::resolve() const {
  if (mirrors_.empty()) return *this;
  const int r = ReplicaScope::current();
  if (r <= 0) return *this;
  if (static_cast<size_t>(r) > mirrors_.size())
    raise(Code::FailedPrecondition,
          "variable '{}': replica {} has no component; the variable is mirrored on {} replicas (make it inside "
          "the scope of the strategy that runs it)",
          name_, r, mirrors_.size() + 1);
  return *mirrors_[static_cast<size_t>(r) - 1];
}

Variable& Variable::component(int replica) {
  if (replica == 0) return *this;
  if (replica < 0 || static_cast<size_t>(replica) > mirrors_.size())
    raise(Code::OutOfRange, "Variable::component: variable '{}' has {} component(s), no replica {}", name_,
          mirrors_.size() + 1, replica);
  return *mirrors_[static_cast<size_t>(replica) - 1];
}

void Variable::assign_mirrors(const Tensor& value) {
  for (const Ref<Variable>& m : mirrors_) m->assign(value, "Variable::assign (mirror)");
}

Ref<Variable> Variable::create(Context& ctx, const Tensor& initial, const VariableOptions& options,
                               std::string_view fn) {
  return make_ref<Variable>(ctx, initial, options, fn);
}

std::string Variable::describe() const { return fmt::format("variable '{}'", name_); }

Tensor Variable::snapshot() const {
  std::lock_guard<std::mutex> lock(value_mu_);
  return value_;
}

Tensor Variable::read() const {
  // A mirrored variable reads the current replica's component. Graph capture records that
  // component; a gradient tape sees the read as one of the variable itself (replica 0's object),
  // so gradients are asked for with the variable a model lists.
  const Variable& c = resolve();
  Context& ctx = context();
  if (!ctx.has_hooks()) return c.snapshot();
  HookSnapshot hooks = ctx.hooks();
  Tensor value;
  bool captured = false;
  for (DispatchHook* h : hooks)
    if (!captured && h->read_variable(ctx, c, &value)) captured = true;
  if (!captured) value = c.snapshot();
  for (DispatchHook* h : hooks) h->variable_read(ctx, c.primary(), value);
  return value;
}

bool Variable::capture_assign(const Tensor& value) {
  Context& ctx = context();
  if (!ctx.has_hooks()) return false;
  for (DispatchHook* h : ctx.hooks())
    if (h->assign_variable(ctx, *this, value)) return true;
  return false;
}

void Variable::check_value(const Tensor& value, std::string_view fn) const {
  if (!value.valid()) raise(Code::InvalidArgument, "{}: the value is an empty tensor", fn);
  if (value.dtype() != dtype_)
    raise(Code::InvalidArgument, "{}: dtype {} does not match variable '{}' of dtype {}", fn,
          dtype_name(value.dtype()), name_, dtype_name(dtype_));
  if (value.shape() != shape_)
    raise(Code::InvalidArgument, "{}: shape {} does not match variable '{}' of shape {}", fn, value.shape().str(),
          name_, shape_.str());
}

Tensor Variable::conform(const Tensor& value, std::string_view fn) const {
  check_value(value, fn);
  return tensor_on_device(value, *device_);
}

void Variable::assign(const Tensor& value, std::string_view fn) { exchange(value, fn); }

Tensor Variable::exchange(const Tensor& value, std::string_view fn) {
  check_value(value, fn);
  Variable& c = resolve();
  if (&c != this) return c.exchange(value, fn);
  if (capture_assign(value)) return Tensor();
  Tensor next = tensor_on_device(value, *device_);
  std::lock_guard<std::mutex> write(write_mu_);
  {
    std::lock_guard<std::mutex> lock(value_mu_);
    std::swap(value_, next);  // `next` now holds the replaced value
  }
  // Outside replicas a write of a mirrored variable goes to every component.
  if (!mirrors_.empty() && ReplicaScope::current() < 0) assign_mirrors(value);
  return next;
}

void Variable::update_with(const std::function<Tensor(const Tensor&)>& f, std::string_view fn) {
  Variable& c = resolve();
  if (&c != this) return c.update_with(f, fn);
  std::lock_guard<std::mutex> write(write_mu_);
  Tensor current = read();
  const bool traced = current.device()->kind() == DeviceKind::Symbolic;
  Tensor next;
  try {
    next = f(current);
  } catch (const Error& e) {
    raise(e.code(), "{}: {}", fn, e.message());
  }
  check_value(next, fn);
  if (traced) {
    if (!capture_assign(next))
      raise(Code::Internal, "{}: variable '{}' was read inside a trace but its update was not captured", fn, name_);
    return;
  }
  next = tensor_on_device(next, *device_);
  Tensor written = next;
  {
    std::lock_guard<std::mutex> lock(value_mu_);
    std::swap(value_, next);
  }
  if (!mirrors_.empty() && ReplicaScope::current() < 0) assign_mirrors(written);
}

void Variable::update(const Tensor& delta, const char* op, std::string_view fn) {
  check_value(delta, fn);
  update_with(
      [&](const Tensor& current) {
        const bool traced = current.device()->kind() == DeviceKind::Symbolic;
        return run_op(context(), op, {current, traced ? delta : tensor_on_device(delta, device())})[0];
      },
      fn);
}

void Variable::assign_add(const Tensor& delta, std::string_view fn) { update(delta, "Add", fn); }

void Variable::assign_sub(const Tensor& delta, std::string_view fn) { update(delta, "Sub", fn); }

}  // namespace cairn
