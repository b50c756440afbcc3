// Dtype-agnostic data movement for the CPU array and index kernels. Everything works on raw
// bytes with an element size (1, 2, 4 or 8 bytes), so no kernel needs one instantiation per dtype.
// Contiguous runs go through memcpy; large copies are split across the pool in fixed ranges.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/core/thread_pool.h"

namespace cairn {

// Work per parallel_for chunk, in bytes moved.
constexpr int64_t kCopyGrainBytes = 64 * 1024;

// Writes `v` converted to `dtype` (see convert.h) into `dst` (dtype_size(dtype) bytes).
void convert_scalar(DType dtype, double v, void* dst);

// Row-major element strides of `s`.
void row_major_strides(const Shape& s, int64_t* strides);

// memcpy of `nbytes`, split across the pool when large.
void copy_bytes(ThreadPool& pool, void* dst, const void* src, size_t nbytes);

// Sets `n` elements of `elem` bytes at `dst` to the element at `value`.
void fill_elements(void* dst, int64_t n, const void* value, size_t elem);
// Same, split across the pool when large.
void fill_elements(ThreadPool& pool, void* dst, int64_t n, const void* value, size_t elem);

// Copies the elements of an index space `shape` (rank `rank`) from `src` to `dst`, where element
// (i0, i1, ...) lives at sum(i_k * strides[k]) elements from each base pointer. Strides may be
// negative or zero (src only). Dimensions are merged where both sides are contiguous, inner
// contiguous rows are copied with memcpy, and transposing copies go through cache-sized tiles.
void strided_copy(ThreadPool& pool, size_t elem, int rank, const int64_t* shape, char* dst,
                  const int64_t* dst_strides, const char* src, const int64_t* src_strides);

// Concatenation of `n` row-major blocks: source j is [outer, widths[j]] bytes; the destination is
// [outer, sum(widths)] bytes with the sources side by side in order.
void concat_rows(ThreadPool& pool, int64_t outer, int n, const char* const* srcs, const int64_t* widths,
                 char* dst);
// The inverse: splits [outer, sum(widths)] bytes at `src` into `n` blocks [outer, widths[j]].
void split_rows(ThreadPool& pool, int64_t outer, int n, const char* src, char* const* dsts,
                const int64_t* widths);

}  // namespace cairn
