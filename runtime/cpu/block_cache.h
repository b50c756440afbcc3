// Freed large host blocks kept for reuse by the CPU device.
//
// Why: a large block from the system allocator is fresh mmap'd memory, and the first touch of each
// of its pages is a page fault that the kernel answers with a zeroed page. A pipeline that makes a
// 1 MiB tensor per record spent about a third of its time in that path (perf on bench/data_bench
// tfrecord: exc_page_fault, clear_page, unmap_page_range), and a batch of such records (32 MiB,
// past glibc's largest mmap threshold) far more. Handing back a block that was just freed costs
// none of it, and the block is still warm in the cache.
//
// Only blocks of at least kMinBlock bytes are kept here (blocks of at most 1 KiB from the default
// allocator go to per-thread free lists instead: block_cache.cc's SmallBlocks), rounded up to a size class (at most 1/8 extra) so that tensors
// of nearly equal sizes share blocks. At most `capacity` bytes are kept; past it, the blocks kept
// longest ago go back to the system first. Everything goes back when the cache is destroyed.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/allocator.h"

namespace cairn {

class BlockCache {
 public:
  static constexpr size_t kMinBlock = size_t{4} << 10;
  static constexpr size_t kDefaultCapacity = size_t{128} << 20;

  BlockCache(const AllocatorHooks& hooks, size_t capacity = kDefaultCapacity);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The size to ask allocate() for: `size` rounded up to its class (unchanged under kMinBlock, and
  // for sizes so large that rounding would overflow).
  static size_t block_size(size_t size);

  // A block of block_size(size) bytes aligned to kTensorAlignment: a kept one when there is one,
  // else one from the hooks (nullptr when they are out of memory).
  void* allocate(size_t size);
  // Takes back a block from allocate(size): kept when it is large enough and fits, else freed.
  void deallocate(void* block, size_t size);

  // Bytes held for reuse now (for tests and memory reports).
  size_t cached_bytes() const;

 private:
  using Entry = std::pair<size_t, void*>;  // (block size, block)
  void evict_oldest_locked();

  const AllocatorHooks hooks_;
  const size_t capacity_;
  // The hooks are the system allocator's: blocks of at most 1 KiB go to the thread's free lists.
  // Decided once here, not per block (~40 instructions per eager op).
  const bool keeps_small_;
  mutable std::mutex mu_;
  std::list<Entry> kept_;  // newest first
  std::unordered_map<size_t, std::vector<std::list<Entry>::iterator>> by_size_;  // newest last
  size_t cached_ = 0;
};

}  // namespace cairn
