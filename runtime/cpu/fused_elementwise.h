// The CPU kernel of FusedElementwise (the graph pass is runtime/graph/fusion.h): it runs a fused
// program with the same functors and SIMD loops as the unfused CPU kernels (elementwise_ops.h).
#pragma once

#include <cstdint>

#include "runtime/ops/op_def.h"

namespace cairn {

// Attribute 1 is the program: three ints per step (graph::FusedStep, operand a, operand b or -1).
// Registers 0..num_inputs-1 are the inputs; step j writes register num_inputs + j; the last step
// is the output. Float32 and float64.
void cpu_fused_elementwise_kernel(KernelContext& kc);

}  // namespace cairn

namespace cairn::graph {

// The steps of a FusedElementwise program (runtime/graph/fusion.h), one per row of the table in
// elementwise_ops.h.
// The numbering is shared with the Vulkan fused shader (gpu/vulkan/fused_shader.cc).
enum FusedStep : int64_t {
  kStepNeg, kStepAbs, kStepSign, kStepSquare, kStepReciprocal, kStepExp, kStepLog, kStepLog1p, kStepSqrt,
  kStepRsqrt, kStepSin, kStepCos, kStepTanh, kStepSigmoid, kStepErf, kStepRelu, kStepRelu6, kStepElu, kStepSelu,
  kStepSoftplus, kStepFloor, kStepCeil, kStepRound,
  kFirstBinaryStep,
  kStepAdd = kFirstBinaryStep, kStepSub, kStepMul, kStepDiv, kStepMaximum, kStepMinimum, kStepPow,
  kStepSquaredDifference,
  kNumFusedSteps
};

}  // namespace cairn::graph
