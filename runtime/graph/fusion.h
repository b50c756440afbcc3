// Elementwise fusion on the CPU. A group of elementwise unary/binary op nodes of one float dtype
// (float32 or float64) and one output shape, where every member except the last is read only by
// other members, becomes one FusedElementwise node. Its kernel walks the elements once, in blocks
// that stay in cache, running a small op program per block: no intermediate tensor is written to
// memory. Each step applies the same per-element arithmetic as the unfused op's CPU kernel, in the
// same order and precision, so fused results are bitwise equal to unfused ones.
//
// Inputs of a member must have the group's shape or hold one element (a scalar broadcast).
// FusedElementwise is an internal op: it is not in the registry (no C API name, no gradient). A
// replay uses a fused graph only on the CPU and with no dispatch hooks installed (see function.cc).
#pragma once

#include "runtime/graph/graph.h"

namespace cairn::graph {

// The op definition of fused nodes (attributes: T, the dtype; program, the encoded steps).
const OpDef& fused_elementwise_def();

// Whether the CPU fusion knows `def` (and so may absorb a node of it).
bool fusible_op(const OpDef& def);

// Fuses every eligible group of at least two nodes; returns the number of op nodes absorbed.
// Groups that read constants or variables living off the CPU are left alone.
int fuse_elementwise(Graph& g);

}  // namespace cairn::graph
