// Elementwise fusion. A group of elementwise unary/binary op nodes of one float dtype
// (float32 or float64) and one output shape, where every member except the last is read only by
// other members, becomes one FusedElementwise node. Its kernel walks the elements once, in blocks
// that stay in cache, running a small op program per block: no intermediate tensor is written to
// memory. Each step runs the same functor and SIMD loop as the unfused op's CPU kernel (both are
// instantiated from runtime/cpu/elementwise_ops.h), so fused results are bitwise equal to unfused ones.
//
// Inputs of a member must have the group's shape or hold one element (a scalar broadcast).
// FusedElementwise is an internal op: it is not in the registry (no C API name, no gradient). A
// replay uses a fused graph only with no dispatch hooks installed, on a device kind whose backend
// has registered a FusedElementwise kernel (the CPU here; Vulkan generates one compute shader per
// program, gpu/vulkan/fused_shader.h) and can run every fused node (see fused_device_kinds).
//
// Where captured values live: a group may read constants and variables, which the fused kernel
// reads in place, so they must live on the device the replay runs on. Rather than fusing once per
// replay device, the pass fuses each group whose captured values all live on one device kind (or
// that captures none) and records nothing: fused_device_kinds() reads the kinds back from the
// fused graph, once per function. A graph traced on Vulkan (its constants on Vulkan) thus fuses
// for Vulkan replays, one traced on the CPU for CPU replays, and a graph capturing nothing fuses
// for both. Deciding per replay device instead would cost a second fused plan per device kind
// for the rare graph replayed on several kinds. The price: a graph whose groups capture values
// on different kinds has a fused plan no kind can run, and always replays unfused.
#pragma once

#include <cstdint>

#include "runtime/cpu/fused_elementwise.h"  // FusedStep
#include "runtime/graph/graph.h"

namespace cairn {
class Context;
}

namespace cairn::graph {

// The program of a FusedElementwise node (attribute `program`): three ints per step (FusedStep,
// operand a, operand b or -1). Registers 0..num_inputs-1 are the node's inputs; step j writes
// register num_inputs + j; the last step is the output. The steps are the rows of the elementwise
// table (runtime/cpu/elementwise_table.h); the CPU kernel is runtime/cpu/fused_elementwise.h.

// The registered op a step stands for ("Add", "Sigmoid"), or nullptr for an unknown step.
const char* fused_step_op(int64_t step);

// The op definition of fused nodes (attributes: T, the dtype; program, the encoded steps).
const OpDef& fused_elementwise_def();

// Whether the CPU fusion knows `def` (and so may absorb a node of it).
bool fusible_op(const OpDef& def);

// Fuses every eligible group of at least two nodes; returns the number of op nodes absorbed.
// Groups that read constants or variables living on more than one device kind are left alone.
int fuse_elementwise(Graph& g);

// A backend's FusedElementwise kernel. `dtypes` lists the dtypes it runs; `ready` (optional) says
// whether it can run on `device` now, and is called once per replay (Vulkan: whether shaderc
// could be loaded; it logs why not once, on the context's log).
struct FusedBackend {
  KernelFn kernel = nullptr;
  std::vector<DType> dtypes;
  bool (*ready)(Context& ctx, Device& device) = nullptr;
};
// Installs `backend` for `kind` (from a backend's static initializer).
void register_fused_backend(DeviceKind kind, FusedBackend backend);

// The device kinds (bit 1 << kind) whose backend can run every FusedElementwise node of `g`: a
// kernel for the node's dtype, and the node's captured values (constants, variables) on that kind.
unsigned fused_device_kinds(const Graph& g);
// Whether `device`'s backend can run fused kernels now (see FusedBackend::ready).
bool fused_backend_ready(Context& ctx, Device& device);

}  // namespace cairn::graph
