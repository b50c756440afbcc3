// The elementwise table: one row per elementwise math op that the CPU kernels, the CPU fused loop,
// the graph fusion pass and the Vulkan backend are all instantiated from.
//
//   unary rows   X(op name, fused step, CPU functor, Vulkan code)
//   binary rows  X(op name, fused step, CPU functor, Vulkan code, Vulkan float only)
//
// - op name: the registered op ("Exp").
// - fused step: its graph::FusedStep, declared from these rows in this order
//   (runtime/cpu/fused_elementwise.h).
// - CPU functor: the math, in runtime/cpu/elementwise_ops.h; it gives the CPU kernel
//   (unary_kernels.cc, binary_kernels.cc) and the fused loop's step (fused_elementwise.cc).
// - Vulkan code: the op's code in gpu/shaders/op_codes.h, the same for the unfused shaders
//   (unary.comp / binary.comp, registered by gpu/vulkan/kernels/elementwise.cc) and the fused
//   shader (gpu/vulkan/fused_shader.cc, which names it in the GLSL it generates).
// - Vulkan float only (binary rows): true when the Vulkan kernel has no int32 variant (integer
//   semantics differ or raise on the CPU), so int32 falls back. Unary codes carry this in
//   gpu/vulkan/kernels/elementwise.cc's float_only().
//
// Every row has all columns (tests/gpu/elementwise_table_test.cc): an elementwise op without a
// Vulkan code or fused step is registered outside the table (FloorDiv, Gelu).
//
// The rows are only tokens: this header includes nothing, and each name is resolved where a row
// is expanded, so the Vulkan backend includes it without the CPU functors (xsimd) and the CPU
// without the Vulkan codes.
#pragma once

#define CAIRN_FUSIBLE_UNARY_OPS(X)                                                                     \
  X("Neg", kStepNeg, NegF, UOP_NEG)                                                                    \
  X("Abs", kStepAbs, AbsF, UOP_ABS)                                                                    \
  X("Sign", kStepSign, SignF, UOP_SIGN)                                                                \
  X("Square", kStepSquare, SquareF, UOP_SQUARE)                                                        \
  X("Reciprocal", kStepReciprocal, ReciprocalF, UOP_RECIPROCAL)                                        \
  X("Exp", kStepExp, ExpF, UOP_EXP)                                                                    \
  X("Log", kStepLog, LogF, UOP_LOG)                                                                    \
  X("Log1p", kStepLog1p, Log1pF, UOP_LOG1P)                                                            \
  X("Sqrt", kStepSqrt, SqrtF, UOP_SQRT)                                                                \
  X("Rsqrt", kStepRsqrt, RsqrtF, UOP_RSQRT)                                                            \
  X("Sin", kStepSin, SinF, UOP_SIN)                                                                    \
  X("Cos", kStepCos, CosF, UOP_COS)                                                                    \
  X("Tanh", kStepTanh, TanhF, UOP_TANH)                                                                \
  X("Sigmoid", kStepSigmoid, SigmoidF, UOP_SIGMOID)                                                    \
  X("Erf", kStepErf, ErfF, UOP_ERF)                                                                    \
  X("Relu", kStepRelu, ReluF, UOP_RELU)                                                                \
  X("Relu6", kStepRelu6, Relu6F, UOP_RELU6)                                                            \
  X("Elu", kStepElu, EluF, UOP_ELU)                                                                    \
  X("Selu", kStepSelu, SeluF, UOP_SELU)                                                                \
  X("Softplus", kStepSoftplus, SoftplusF, UOP_SOFTPLUS)                                                \
  X("Floor", kStepFloor, FloorF, UOP_FLOOR)                                                            \
  X("Ceil", kStepCeil, CeilF, UOP_CEIL)                                                                \
  X("Round", kStepRound, RoundF, UOP_ROUND)

#define CAIRN_FUSIBLE_BINARY_OPS(X)                                                                    \
  X("Add", kStepAdd, AddF, BOP_ADD, false)                                                             \
  X("Sub", kStepSub, SubF, BOP_SUB, false)                                                             \
  X("Mul", kStepMul, MulF, BOP_MUL, false)                                                             \
  X("RealDiv", kStepDiv, DivF, BOP_DIV, true)                                                          \
  X("Maximum", kStepMaximum, MaximumF, BOP_MAX, false)                                                 \
  X("Minimum", kStepMinimum, MinimumF, BOP_MIN, false)                                                 \
  X("Pow", kStepPow, PowF, BOP_POW, true)                                                              \
  X("SquaredDifference", kStepSquaredDifference, SquaredDifferenceF, BOP_SQDIFF, false)
