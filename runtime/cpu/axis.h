// Shapes seen around one axis: the [outer, n, inner] view that per-axis CPU kernels
// (softmax, arg reductions, cumsum, sort, concat/split, gather) iterate over.
#pragma once

#include <cstdint>

#include "runtime/core/shape.h"

namespace cairn {

// Product of dimensions [from, to) of `s`; 1 when the range is empty.
inline int64_t product(const Shape& s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= s[i];
  return p;
}

// `s` as [outer, n, inner] around `axis`: outer is the product of the dimensions before it,
// n its size, inner the product of those after it.
struct AxisSplit {
  int axis = 0;
  int64_t outer = 1, n = 1, inner = 1;
};

// Normalizes a possibly negative `axis` against s.rank() (throws InvalidArgument naming `op`,
// as normalize_axis does) and splits `s` around it.
inline AxisSplit split_at_axis(const Shape& s, int64_t axis, const char* op) {
  AxisSplit r;
  r.axis = normalize_axis(axis, s.rank(), op);
  r.outer = product(s, 0, r.axis);
  r.n = s[r.axis];
  r.inner = product(s, r.axis + 1, s.rank());
  return r;
}

}  // namespace cairn
