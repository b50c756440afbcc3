// First-fit allocation of byte ranges inside one memory block, with neighbours coalesced on free.
// Pure bookkeeping (no Vulkan), so it is tested on its own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace cairn::gpu {

class RangeAllocator {
 public:
  explicit RangeAllocator(uint64_t capacity) : capacity_(capacity) {
    if (capacity > 0) free_[0] = capacity;
  }
  // The offset of a new range of `size` bytes aligned to `alignment` (a power of two), or nothing.
  std::optional<uint64_t> allocate(uint64_t size, uint64_t alignment);
  // Returns a range from allocate (same offset and size).
  void free(uint64_t offset, uint64_t size);

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_; }
  bool empty() const { return used_ == 0; }
  size_t num_free_ranges() const { return free_.size(); }

 private:
  uint64_t capacity_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> size, disjoint and never adjacent
};

}  // namespace cairn::gpu
