// The compute shader of one FusedElementwise program (runtime/graph/fusion.h), generated as GLSL
// at run time and compiled on first use (glsl_compiler.h). Each thread loads its element of every
// input (or element 0 of a one-element input: a scalar broadcast), runs the steps in registers
// and stores one output element: one dispatch, no intermediate tensors.
//
// Every step calls unary_float / binary_float of gpu/shaders/elementwise_ops.glsl, the functions
// unary.comp and binary.comp evaluate, with the op code as a literal where those shaders have a
// specialization constant. Those functions are `precise`, so no compiler contracts or
// reassociates across steps (which a store between unfused ops forbids anyway): a fused float32
// chain equals the unfused one bit for bit (tests/gpu/fused_compare_test.cc checks every ordered
// pair of steps on lavapipe). Transcendentals (exp, log, sin, ...) are the driver's builtins in
// both, so they agree too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/dtype.h"

namespace cairn::gpu {

// What a generated shader depends on: the program (3 ints per step), the dtype, the number of
// inputs and which of them hold one element. Bindings: inputs 0..n-1, the output n; push
// constant: the element count (uint).
struct FusedProgram {
  const int64_t* program = nullptr;
  size_t n_ints = 0;
  DType dtype = DType::Float32;
  int num_inputs = 0;
  std::vector<bool> scalar;  // per input
};

// A step's op in elementwise_ops.glsl: unary_float or binary_float, and its op_codes.h code.
struct StepCode {
  bool binary;
  uint32_t code;
  const char* name;  // "UOP_EXP"
};
// The code of graph::FusedStep `step`, or nullptr for an unknown step.
const StepCode* step_code(int64_t step);

// A key naming the shader (and its pipeline) uniquely: the hash map key of the pipeline cache.
std::string fused_shader_key(const FusedProgram& p);

// The GLSL source. Throws Internal for a malformed program and Unimplemented for a dtype without
// fused shaders (float32 only: float16 tensors would round each step to half, which registers
// do not).
std::string fused_shader_source(const FusedProgram& p);

// Compiles the shader (throws as compile_compute_shader) and counts the compile.
std::vector<uint32_t> compile_fused_shader(const FusedProgram& p);

// Fused shaders compiled by this process (tests check the pipeline cache with it).
uint64_t fused_shader_compiles();

}  // namespace cairn::gpu
