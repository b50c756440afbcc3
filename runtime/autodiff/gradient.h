// Gradient functions: one per differentiable op, registered against the op's schema and written
// with registered ops (runtime/eager/ops.h), so they run on every device, a tape recording around
// them sees them (higher-order gradients), and graph capture can record them.
#pragma once

#include <vector>

#include "runtime/eager/context.h"
#include "runtime/eager/ops.h"
#include "runtime/ops/op_def.h"
#include "runtime/ops/registry.h"
#include "runtime/tensor/tensor.h"

namespace cairn {

// What a gradient function sees: the forward call (inputs, outputs, attributes) and the gradient
// of the loss with respect to each output. It sets the gradient of each input it can reach.
struct GradContext {
  Context& ctx;
  const OpDef& def;
  const Attrs& attrs;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  // dL/d(output i). For an output nothing downstream used, a zero tensor of its shape.
  const std::vector<Tensor>& output_grads;
  // Which inputs the caller wants a gradient for; a function may skip work for the others.
  const std::vector<bool>& needs;
  // dL/d(input i), filled by the function; an input left invalid gets no gradient (as TF's None).
  std::vector<Tensor>& input_grads;

  const Tensor& x(int i) const { return inputs[static_cast<size_t>(i)]; }
  const Tensor& y(int i = 0) const { return outputs[static_cast<size_t>(i)]; }
  const Tensor& dy(int i = 0) const { return output_grads[static_cast<size_t>(i)]; }
  bool need(int i) const { return needs[static_cast<size_t>(i)]; }
  void set(int i, Tensor g) { input_grads[static_cast<size_t>(i)] = std::move(g); }
};

struct GradientRegistration {
  GradientRegistration(const char* op, GradientFn fn) { OpRegistry::global().set_gradient(op, fn); }
};
struct NotDifferentiableRegistration {
  explicit NotDifferentiableRegistration(const char* op) { OpRegistry::global().set_not_differentiable(op); }
};

// Whether a tape tracks tensors of this dtype: gradients flow only through floating values.
bool is_differentiable_dtype(DType dtype);

}  // namespace cairn

#define CAIRN_REGISTER_GRADIENT(op, fn) \
  static const ::cairn::GradientRegistration CAIRN_CONCAT(cairn_gradient_registration_, __COUNTER__)(op, fn)
#define CAIRN_NOT_DIFFERENTIABLE(op)                                                                \
  static const ::cairn::NotDifferentiableRegistration CAIRN_CONCAT(cairn_not_differentiable_, \
                                                                  __COUNTER__)(op)
