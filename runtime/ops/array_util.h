// Shape-side helpers shared by the array op schemas (ops/array_ops.cc) and their CPU kernels.
#pragma once

#include <cstdint>

#include "runtime/ops/op_def.h"

namespace cairn {

// StridedSlice resolved against an input shape (TensorFlow's dense spec): for every input
// dimension the first element taken, the step, and how many elements are taken. `out` is the
// op's output shape (new axes added, shrunk axes removed); the elements are laid out exactly as
// in the `size` shape.
struct StridedSliceSpec {
  int rank = 0;  // the input's rank
  int64_t begin[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
  int64_t size[kMaxRank] = {};
  Shape out;
};

// Validates the StridedSlice attributes (begin, end, strides and the five masks) against `in`
// and resolves them; throws InvalidArgument naming `op`.
StridedSliceSpec strided_slice_spec(const Shape& in, const Attrs& attrs, const char* op);

}  // namespace cairn
