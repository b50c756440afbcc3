// Fused optimizer updates: TensorFlow's training_ops (ApplyGradientDescent, ApplyMomentum,
// ApplyKerasMomentum, ApplyAdam, ApplyRMSProp, ApplyCenteredRMSProp) plus Keras updates that
// TensorFlow has no raw op for (ApplyAdamW, ApplyKerasRMSProp, ApplyKerasCenteredRMSProp: RMSprop
// without momentum), each one pass over the elements.
//
// Cairn's ops are functions of their inputs, so where TensorFlow's Apply* ops update their ref
// inputs in place, these take the variable and its slots as values and return the updated values
// (`var_out`, then each slot in input order); the caller assigns them back. That keeps one form for
// eager calls and traced functions (Read -> Apply* -> Assign nodes). TF's `use_locking` attribute
// is not taken: a variable's write is an atomic swap in Cairn. The hyperparameters are scalars of
// the variable's dtype; every tensor input has the variable's shape (no broadcasting, as TF).
//
// Rounding: each step below is one rounding in T (float16/bfloat16 round to T after every
// operation), in the order written, which is the order optim::Optimizer's unfused path used, so the
// fused update is bit-identical to it. Where TensorFlow's kernel orders the same math differently
// it is said below; the results then differ from TF's by rounding only.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

// Inputs named in `scalars` are rank 0; every other input has input 0's shape.
template <int... Scalars>
void training_shape(ShapeContext& c) {
  const Shape& var = c.in(0);
  for (int i = 1; i < c.num_inputs; ++i) {
    const char* name = c.def.inputs[i].name.c_str();
    bool scalar = ((i == Scalars) || ...);
    if (scalar && c.in(i).rank() != 0)
      raise(Code::InvalidArgument, "{}: {} must be a scalar, got shape {}", c.op(), name, c.in(i).str());
    if (!scalar && c.in(i) != var)
      raise(Code::InvalidArgument, "{}: {} has shape {}, var has shape {}", c.op(), name, c.in(i).str(), var.str());
  }
  for (int o = 0; o < c.num_outputs; ++o) c.set_out(o, var);
}

OpBuilder training_op(const char* name, const char* summary, std::initializer_list<const char*> inputs,
                      std::initializer_list<const char*> outputs) {
  OpBuilder b(name);
  b.summary(summary);
  for (const char* in : inputs) b.input(in, "T");
  for (const char* out : outputs) b.output(out, "T");
  b.type_attr("T", dtypes::kFloat);
  return b;
}

CAIRN_REGISTER_OP(training_op("ApplyGradientDescent", "var_out = var - alpha * delta.", {"var", "alpha", "delta"},
                              {"var_out"})
                      .shape(training_shape<1>));

CAIRN_REGISTER_OP(training_op("ApplyMomentum",
                              "TF's momentum: accum_out = accum * momentum + grad; var_out = var - lr * accum_out, "
                              "or with use_nesterov var - (grad * lr + accum_out * momentum * lr).",
                              {"var", "accum", "lr", "grad", "momentum"}, {"var_out", "accum_out"})
                      .bool_attr("use_nesterov", false)
                      .shape(training_shape<2, 4>));

CAIRN_REGISTER_OP(training_op("ApplyKerasMomentum",
                              "Keras' SGD momentum (TF's ResourceApplyKerasMomentum): accum_out = momentum * "
                              "accum - lr * grad; var_out = var + accum_out, or with use_nesterov "
                              "var + (momentum * accum_out - lr * grad).",
                              {"var", "accum", "lr", "grad", "momentum"}, {"var_out", "accum_out"})
                      .bool_attr("use_nesterov", false)
                      .shape(training_shape<2, 4>));

CAIRN_REGISTER_OP(training_op("ApplyAdam",
                              "Adam: alpha = lr * (sqrt(1 - beta2_power) / (1 - beta1_power)) (TF: (lr * sqrt(...)) "
                              "/ (...)); m_out = m + (grad - m) * (1 - beta1); v_out = v + (grad^2 - v) * (1 - beta2); "
                              "var_out = var - (m_out * alpha) / (sqrt(v_out) + epsilon), or with use_nesterov "
                              "var - ((m_out * beta1 + grad * (1 - beta1)) * alpha) / (sqrt(v_out) + epsilon).",
                              {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
                               "grad"},
                              {"var_out", "m_out", "v_out"})
                      .bool_attr("use_nesterov", false)
                      .shape(training_shape<3, 4, 5, 6, 7, 8>));

CAIRN_REGISTER_OP(training_op("ApplyAdamW",
                              "Keras' AdamW (decoupled weight decay; no TF raw op): var is first decayed, "
                              "var - (var * weight_decay) * lr, then updated as ApplyAdam (without Nesterov).",
                              {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
                               "weight_decay", "grad"},
                              {"var_out", "m_out", "v_out"})
                      .shape(training_shape<3, 4, 5, 6, 7, 8, 9>));

CAIRN_REGISTER_OP(training_op("ApplyRMSProp",
                              "RMSProp with momentum: ms_out = rho * ms + (1 - rho) * grad^2 (TF: ms + (grad^2 - "
                              "ms) * (1 - rho)); mom_out = momentum * mom + (lr * grad) / sqrt(ms_out + epsilon); "
                              "var_out = var - mom_out.",
                              {"var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"},
                              {"var_out", "ms_out", "mom_out"})
                      .shape(training_shape<3, 4, 5, 6>));

CAIRN_REGISTER_OP(training_op("ApplyCenteredRMSProp",
                              "Centered RMSProp with momentum: mg_out = rho * mg + (1 - rho) * grad; ms_out as "
                              "ApplyRMSProp; mom_out = momentum * mom + (lr * grad) / sqrt((ms_out - mg_out^2) + "
                              "epsilon); var_out = var - mom_out.",
                              {"var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"},
                              {"var_out", "mg_out", "ms_out", "mom_out"})
                      .shape(training_shape<4, 5, 6, 7>));

CAIRN_REGISTER_OP(training_op("ApplyKerasRMSProp",
                              "Keras' RMSprop without momentum (no TF op: Keras computes it in Python): ms_out as "
                              "ApplyRMSProp; var_out = var - (lr * grad) / (sqrt(ms_out) + epsilon).",
                              {"var", "ms", "lr", "rho", "epsilon", "grad"}, {"var_out", "ms_out"})
                      .shape(training_shape<2, 3, 4>));

CAIRN_REGISTER_OP(training_op("ApplyKerasCenteredRMSProp",
                              "Keras' centered RMSprop without momentum: mg_out and ms_out as "
                              "ApplyCenteredRMSProp; var_out = var - (lr * grad) / (sqrt(ms_out - mg_out^2) + "
                              "epsilon).",
                              {"var", "mg", "ms", "lr", "rho", "epsilon", "grad"}, {"var_out", "mg_out", "ms_out"})
                      .shape(training_shape<3, 4, 5>));

}  // namespace
}  // namespace cairn
