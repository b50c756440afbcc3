// Unary elementwise math ops (TensorFlow raw-op names and semantics): input "x", output "y" of the
// same dtype and shape, except the float predicates IsNan / IsFinite, which output bool.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

OpBuilder unary(const char* name, DTypeSet allowed, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("x", "T")
                       .output("y", "T")
                       .type_attr("T", allowed)
                       .shape(shapes::unchanged));
}

OpBuilder predicate(const char* name, DTypeSet allowed, const char* summary) {
  return std::move(OpBuilder(name)
                       .summary(summary)
                       .input("x", "T")
                       .output("y", DType::Bool)
                       .type_attr("T", allowed)
                       .shape(shapes::unchanged));
}

// Sign and magnitude.
CAIRN_REGISTER_OP(unary("Neg", dtypes::kSignedNumber, "-x; signed integers wrap (-INT_MIN == INT_MIN)."));
CAIRN_REGISTER_OP(unary("Abs", dtypes::kFloat | dtypes::kSignedInt,
                        "|x|; real dtypes only (no complex, unlike TF's ComplexAbs); abs(INT_MIN) wraps to INT_MIN."));
CAIRN_REGISTER_OP(unary("Sign", dtypes::kSignedNumber,
                        "-1, 0 or 1 by the sign of x (NaN stays NaN, zeros keep their sign); complex: x / |x|, or 0."));
CAIRN_REGISTER_OP(unary("Square", dtypes::kNumber, "x * x; integers wrap on overflow."));
CAIRN_REGISTER_OP(unary("Reciprocal", dtypes::kSignedNumber,
                        "1 / x; integer division truncates and an integer zero is an error."));

// Exponentials, logarithms, roots.
CAIRN_REGISTER_OP(unary("Exp", dtypes::kFloatComplex, "e ** x."));
CAIRN_REGISTER_OP(unary("Log", dtypes::kFloatComplex, "Natural logarithm; log(0) = -inf, log(x < 0) = NaN."));
CAIRN_REGISTER_OP(unary("Log1p", dtypes::kFloat, "log(1 + x), accurate for small x; float dtypes only."));
CAIRN_REGISTER_OP(unary("Sqrt", dtypes::kFloatComplex, "Square root; sqrt(x < 0) = NaN for real dtypes."));
CAIRN_REGISTER_OP(unary("Rsqrt", dtypes::kFloatComplex, "1 / sqrt(x); rsqrt(0) = inf."));

// Trigonometric, hyperbolic, special functions.
CAIRN_REGISTER_OP(unary("Sin", dtypes::kFloatComplex, "Sine."));
CAIRN_REGISTER_OP(unary("Cos", dtypes::kFloatComplex, "Cosine."));
CAIRN_REGISTER_OP(unary("Tanh", dtypes::kFloatComplex, "Hyperbolic tangent."));
CAIRN_REGISTER_OP(unary("Sigmoid", dtypes::kFloat,
                        "1 / (1 + exp(-x)), computed without overflow for large |x|; float dtypes only."));
CAIRN_REGISTER_OP(unary("Erf", dtypes::kFloat, "The Gauss error function."));

// Activations.
CAIRN_REGISTER_OP(unary("Relu", dtypes::kReal, "max(x, 0); NaN stays NaN."));
CAIRN_REGISTER_OP(unary("Relu6", dtypes::kReal, "min(max(x, 0), 6); NaN stays NaN."));
CAIRN_REGISTER_OP(unary("Elu", dtypes::kFloat, "x if x > 0, else exp(x) - 1."));
CAIRN_REGISTER_OP(unary("Selu", dtypes::kFloat,
                        "scale * (x if x > 0, else alpha * (exp(x) - 1)), with TF's alpha and scale constants."));
CAIRN_REGISTER_OP(unary("Softplus", dtypes::kFloat, "log(1 + exp(x)), computed without overflow for large |x|."));
CAIRN_REGISTER_OP(unary("Gelu", dtypes::kFloat,
                        "x * Phi(x) (as tf.nn.gelu); `approximate` uses the tanh form. Cairn op: TF has no raw op.")
                      .bool_attr("approximate", false));

// Rounding.
CAIRN_REGISTER_OP(unary("Floor", dtypes::kFloat, "Largest integer not above x."));
CAIRN_REGISTER_OP(unary("Ceil", dtypes::kFloat, "Smallest integer not below x."));
CAIRN_REGISTER_OP(unary("Round", dtypes::kFloat, "Nearest integer, halves to even (banker's rounding); float dtypes only."));

// Predicates.
CAIRN_REGISTER_OP(predicate("IsNan", dtypes::kFloat, "True where x is NaN."));
CAIRN_REGISTER_OP(predicate("IsFinite", dtypes::kFloat, "True where x is neither NaN nor infinite."));

}  // namespace
}  // namespace cairn
