// The CPU kernel of FusedElementwise (the graph pass is runtime/graph/fusion.h): it runs a fused
// program with the same functors and SIMD loops as the unfused CPU kernels (elementwise_ops.h).
#pragma once

#include <cstdint>

#include "runtime/cpu/elementwise_table.h"
#include "runtime/ops/op_def.h"

namespace cairn {

// Attribute 1 is the program: three ints per step (graph::FusedStep, operand a, operand b or -1).
// Registers 0..num_inputs-1 are the inputs; step j writes register num_inputs + j; the last step
// is the output. Float32 and float64.
void cpu_fused_elementwise_kernel(KernelContext& kc);

}  // namespace cairn

namespace cairn::graph {

// The steps of a FusedElementwise program (runtime/graph/fusion.h), one per row of the elementwise
// table (runtime/cpu/elementwise_table.h) in its order: the unary rows, then the binary rows. The
// numbering is shared with the Vulkan fused shader (gpu/vulkan/fused_shader.cc).
enum FusedStep : int64_t {
#define CAIRN_STEP_ENUM(name, step, ...) step,
  CAIRN_FUSIBLE_UNARY_OPS(CAIRN_STEP_ENUM)
  kFirstBinaryStep,
  kLastUnaryStep = kFirstBinaryStep - 1,  // so that the first binary row is kFirstBinaryStep
  CAIRN_FUSIBLE_BINARY_OPS(CAIRN_STEP_ENUM)
#undef CAIRN_STEP_ENUM
  kNumFusedSteps
};

}  // namespace cairn::graph
