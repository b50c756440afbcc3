#include "gpu/vulkan/range_allocator.h"

#include "runtime/core/error.h"

namespace cairn::gpu {

std::optional<uint64_t> RangeAllocator::allocate(uint64_t size, uint64_t alignment) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    uint64_t start = it->first, len = it->second;
    uint64_t aligned = (start + alignment - 1) & ~(alignment - 1);
    if (aligned + size > start + len) continue;
    free_.erase(it);
    // Keep the alignment gap in front and the tail behind as free ranges.
    if (aligned > start) free_[start] = aligned - start;
    if (aligned + size < start + len) free_[aligned + size] = start + len - (aligned + size);
    used_ += size;
    return aligned;
  }
  return std::nullopt;
}

void RangeAllocator::free(uint64_t offset, uint64_t size) {
  if (size == 0) return;
  if (offset + size > capacity_ || size > used_)
    raise(Code::Internal, "vulkan allocator: freeing [{}, +{}) outside the block's used ranges", offset, size);
  used_ -= size;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first < offset + size)
    raise(Code::Internal, "vulkan allocator: double free of [{}, +{})", offset, size);
  // Merge with the following free range.
  if (next != free_.end() && next->first == offset + size) {
    size += next->second;
    next = free_.erase(next);
  }
  // Merge with the preceding free range.
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second > offset)
      raise(Code::Internal, "vulkan allocator: double free of [{}, +{})", offset, size);
    if (prev->first + prev->second == offset) {
      prev->second += size;
      return;
    }
  }
  free_[offset] = size;
}

}  // namespace cairn::gpu
