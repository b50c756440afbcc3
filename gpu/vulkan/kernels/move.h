// Strided data movement on Vulkan (strided.comp) for every dtype: the shared recorder behind
// Transpose, Slice, StridedSlice(Grad), Concat, Pack, Split, Unpack, Tile, Pad, Reverse and Fill.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

// One move, in elements: for every coordinate c of `dims`,
//   dst[out_base + sum(c_d * out_strides_d)] = src[in_base + sum((c_d % mods_d) * in_strides_d)].
// mods_d is 0 for "no modulo" (the common case). Input strides may be negative or 0 (broadcast).
struct Move {
  std::vector<int64_t> dims, in_strides, out_strides, mods;
  int64_t in_base = 0, out_base = 0;
  void add(int64_t dim, int64_t in_stride, int64_t out_stride, int64_t mod = 0) {
    dims.push_back(dim);
    in_strides.push_back(in_stride);
    out_strides.push_back(out_stride);
    mods.push_back(mod);
  }
};

// Row-major element strides of `s`.
std::vector<int64_t> row_major(const Shape& s);

// Checks that the device moves elements of `dtype` (8- and 16-bit ones need 8/16-bit storage);
// otherwise falls back (or throws) and returns false.
bool can_move(KernelContext& kc, DType dtype);

// Records `m` from `src` to `dst` (elements of `dtype`). Size-1 dimensions are dropped and
// contiguous runs merged; more than 6 remaining dimensions throw Unimplemented.
void record_move(KernelContext& kc, DType dtype, const Tensor& src, const Tensor& dst, Move m);

// Fills all of `dst` with the element at index 0 of `value` (a tensor of the same dtype).
void record_fill(KernelContext& kc, const Tensor& value, const Tensor& dst);

}  // namespace cairn::gpu
