// A variable: a mutable slot holding an immutable Tensor of fixed dtype and shape (tf.Variable).
//
// Threads: reads and writes of one variable are serialized. A read returns a snapshot; a write
// swaps in a new tensor, so a snapshot never changes under its reader. Read-modify-write updates
// (assign_add/assign_sub) are atomic with respect to every other write of the same variable.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor/tensor.h"
#include "runtime/track/object.h"

namespace cairn {

class Module;

struct VariableOptions {
  std::string name = "Variable";  // the name before the scope and ":0"
  bool trainable = true;
  const Module* scope = nullptr;  // names the variable "<scope>/<name>:0"
  // Where the variable lives (its initial value is copied there). Null: the device of the innermost
  // device scope on this thread (DeviceScope), else the initial value's device. The runtime's own
  // bookkeeping (counters, metrics, hyperparameters) stays on the CPU this way whatever the scope.
  Device* device = nullptr;
  // Inside a MirrorScope (runtime/track/mirroring.h: a MirroredStrategy's scope and replicas), a
  // new variable is mirrored: one component per replica device (all on `device` when that is
  // set), each holding the initial value. false: one variable that every replica shares (metrics'
  // accumulators: replicas' assign_add calls then add up).
  bool mirrored = true;
};

class Variable final : public Object {
 public:
  // The variable takes the dtype and shape of `initial`, and its device unless options.device or a
  // device scope says otherwise (then the value is copied there; otherwise shared, not copied:
  // tensors are immutable). Throws InvalidArgument for an empty tensor, a string dtype or a bad name.
  static Ref<Variable> create(Context& ctx, const Tensor& initial, const VariableOptions& options = {},
                              std::string_view fn = "Variable::create");
  Variable(Context& ctx, const Tensor& initial, const VariableOptions& options, std::string_view fn);

  const std::string& name() const { return name_; }  // "m1/m_v:0"; fixed at creation
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  bool trainable() const { return trainable_; }
  // The device of the current replica's component (replica 0's outside replicas).
  Device& device() const { return *resolve().device_; }
  std::string describe() const override;

  // A snapshot of the current value. Dispatch hooks see the read (a gradient tape watches
  // trainable variables this way).
  Tensor read() const;

  // Replaces the value. `value` must match the variable's dtype and shape; a value on another
  // device is copied to the variable's device. Errors name `fn`, e.g. "cairn_variable_assign:
  // shape [3] does not match variable 'v:0' of shape [2]". The checkpoint restore uses this too,
  // passing the checkpoint key as `fn`.
  void assign(const Tensor& value, std::string_view fn = "Variable::assign");
  // assign, handing back the value it replaced (the written component's), so that a caller left
  // holding its only reference can reuse the buffer (the checkpoint restore does). Empty when a
  // dispatch hook captured the write instead.
  Tensor exchange(const Tensor& value, std::string_view fn = "Variable::exchange");
  // value += delta / value -= delta, computed by the Add / Sub ops on the variable's device.
  // `delta` must match dtype and shape exactly (no broadcasting, like TensorFlow).
  void assign_add(const Tensor& delta, std::string_view fn = "Variable::assign_add");
  void assign_sub(const Tensor& delta, std::string_view fn = "Variable::assign_sub");
  // value = f(value), atomic with respect to every other write of this variable (assign_add and
  // assign_sub are this with Add and Sub). `f` computes with ops and must not write this variable;
  // inside a trace it gets the symbolic read and its result is captured as the write. Its result
  // must match the variable's dtype and shape. Errors are prefixed with `fn`.
  void update_with(const std::function<Tensor(const Tensor&)>& f, std::string_view fn);

  // ---- mirroring (runtime/track/mirroring.h) ----
  // Whether this variable has components on several replicas (true only for replica 0's, the
  // variable that was created).
  bool mirrored() const { return !mirrors_.empty(); }
  // 1 for a plain variable; the replica count for a mirrored one.
  int num_components() const { return 1 + static_cast<int>(mirrors_.size()); }
  // Replica `replica`'s component (0: this variable). OutOfRange for a replica it lacks.
  Variable& component(int replica);
  // The variable replica r's component belongs to (itself for a plain or replica 0 variable).
  const Variable& primary() const { return primary_ ? *primary_ : *this; }
  // The component the calling thread acts on: the current replica's (ReplicaScope), else this.
  const Variable& resolve() const;
  Variable& resolve() { return const_cast<Variable&>(static_cast<const Variable*>(this)->resolve()); }

 private:
  // Checks dtype and shape and brings `value` to the variable's device.
  Tensor conform(const Tensor& value, std::string_view fn) const;
  void check_value(const Tensor& value, std::string_view fn) const;
  Tensor snapshot() const;
  // Writes `value` (already checked) into every mirror of this replica 0 variable.
  void assign_mirrors(const Tensor& value);
  // Offers the write to the dispatch hooks (graph capture); true when one recorded it.
  bool capture_assign(const Tensor& value);
  void update(const Tensor& delta, const char* op, std::string_view fn);

  const DType dtype_;
  const Shape shape_;
  const bool trainable_;
  std::string name_;
  Ref<Device> device_;
  std::mutex write_mu_;       // serializes writers; held across a read-modify-write
  mutable std::mutex value_mu_;  // guards value_ (held only to copy or swap it)
  Tensor value_;
  std::vector<Ref<Variable>> mirrors_;  // replicas 1..N-1 (mirrored variables only)
  const Variable* primary_ = nullptr;   // replica 0's variable, on a mirror
};

}  // namespace cairn
