// Shape functions shared by many ops. Each validates and throws InvalidArgument naming the op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ops/op_def.h"

namespace cairn {

// NumPy broadcasting of two shapes; throws "<op>: incompatible shapes [2,3] and [4]".
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// The reduced shape for `axes` (normalized, deduplicated). An empty axis list reduces everything.
Shape reduced_shape(const Shape& in, const int64_t* axes, size_t n_axes, bool keep_dims, const char* op);
// Marks which axes a reduction removes; `out` has in.rank() entries.
void reduction_axes_mask(const Shape& in, const int64_t* axes, size_t n_axes, const char* op, bool* out);

// "[1,-2,3]": a list of integers as error messages print it (Shape::str's format, any length).
std::string ints_str(const int64_t* v, size_t n);
inline std::string ints_str(const std::vector<int64_t>& v) { return ints_str(v.data(), v.size()); }

namespace shapes {
void unchanged(ShapeContext& c);   // output 0 = input 0
void broadcast(ShapeContext& c);   // output 0 = broadcast of all inputs
void scalar(ShapeContext& c);      // output 0 is a scalar
void reduce(ShapeContext& c);      // uses attributes `axis` (INTS) and `keep_dims` (BOOL)
}  // namespace shapes

}  // namespace cairn
