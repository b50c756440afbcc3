// Buffers a restore has replaced, kept for the values it restores next. A fresh buffer can cost a
// page fault and the kernel zeroing a page for every 4 KiB it touches (when glibc has handed large
// freed blocks back to the kernel), and malloc work and cache misses when it has not. Reading the
// next value of the same dtype and element count into a replaced buffer skips that.
//
// Reuse never changes what anyone can see: a buffer is kept only when the replaced tensor was its
// last holder (a tensor read from the variable before the restore keeps its buffer and values), and
// a value is read into a spare before it replaces anything, so a damaged value leaves the variable
// as it was. Memory stays bounded: at most one spare per (dtype, element count), and only while a
// value still to come has that size (expect() counts them). Not thread-safe; the restore's lock
// guards it.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "runtime/tensor/tensor.h"

namespace cairn::ckpt {

class SpareBuffers {
 public:
  // Smaller buffers come back from malloc's free lists without faults; not worth keeping.
  static constexpr size_t kMinBytes = size_t{64} << 10;

  // Counts a value of this dtype and element count that the restore will read later.
  void expect(DType dtype, int64_t elements, size_t nbytes);
  // A spare for a value of `dtype` and `shape` on `device` (reshaped to `shape`), or an empty
  // tensor. Either way the value is no longer expected.
  Tensor take(DType dtype, const Shape& shape, Device& device);
  // Offers a replaced value's buffer; kept only as described above.
  void give(Tensor replaced);
  // Frees every spare and forgets what was expected (the restore's synchronous part is over).
  void clear() { slots_.clear(); }

  // Bytes of values read into spares since the process started (for tests and benchmarks).
  static uint64_t reused_bytes();

 private:
  struct Slot {
    int64_t expected = 0;  // values of this size still to be read
    Tensor spare;
  };
  std::map<std::pair<DType, int64_t>, Slot> slots_;
};

}  // namespace cairn::ckpt
