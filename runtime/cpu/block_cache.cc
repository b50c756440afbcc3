#include "runtime/cpu/block_cache.h"

#include <cstdint>

#include "runtime/core/free_list.h"

namespace cairn {

namespace {
// Freed small blocks, kept per thread for the next small tensor. An eager op on a few elements
// spent about 250 of its ~1,900 instructions in malloc and free (bench/callgrind_dispatch.sh).
// Only the default allocator's blocks come here (they are interchangeable between devices), a
// block goes to the list of the thread that frees it, and each size class keeps at most
// kPerClass, so a thread holds at most ~140 KiB.
class SmallBlocks {
 public:
  static constexpr size_t kStep = 64;
  static constexpr size_t kMax = 1024;
  static constexpr int kPerClass = 16;

  // `size` rounded up to its class, or 0 when it is no small block.
  static size_t class_size(size_t size) { return size == 0 || size > kMax ? 0 : (size + kStep - 1) / kStep * kStep; }

  void* take(size_t rounded) { return lists_[index(rounded)].take(rounded); }
  // Keeps `p`; false (the caller frees it) when its class is full or the thread is exiting.
  bool keep(void* p, size_t rounded) { return lists_[index(rounded)].keep(p, rounded); }

  ~SmallBlocks() {
    const AllocatorHooks system = default_allocator();
    for (size_t c = 0; c < kClasses; ++c) {
      const size_t size = (c + 1) * kStep;
      lists_[c].close(size, [&](void* p) { system.deallocate(system.user_data, p, size); });
    }
  }

 private:
  static constexpr size_t kClasses = kMax / kStep;
  static size_t index(size_t rounded) { return rounded / kStep - 1; }

  FreeList<kPerClass> lists_[kClasses];
};

thread_local SmallBlocks small_blocks;

// Whether these are the system allocator's hooks, whose small blocks go to SmallBlocks.
bool keeps_small(const AllocatorHooks& hooks) {
  const AllocatorHooks system = default_allocator();
  return hooks.allocate == system.allocate && hooks.deallocate == system.deallocate;
}
}  // namespace

BlockCache::BlockCache(const AllocatorHooks& hooks, size_t capacity)
    : hooks_(hooks), capacity_(capacity), keeps_small_(keeps_small(hooks)) {}

BlockCache::~BlockCache() {
  for (const Entry& e : kept_) hooks_.deallocate(hooks_.user_data, e.second, e.first);
}

size_t BlockCache::block_size(size_t size) {
  if (size < kMinBlock) return size;
  // Classes step by 1/8 of the power of two at or below the size: 256 KiB, 288 KiB, ... 512 KiB,
  // 576 KiB, ... so a block is at most 1/8 larger than asked.
  size_t top = kMinBlock;
  while (top <= size / 2) top *= 2;
  const size_t step = top / 8;
  if (size > SIZE_MAX - step) return size;
  return (size + step - 1) / step * step;
}

void* BlockCache::allocate(size_t size) {
  if (const size_t small = keeps_small_ ? SmallBlocks::class_size(size) : 0) {
    if (void* p = small_blocks.take(small)) return p;
    return hooks_.allocate(hooks_.user_data, small, kTensorAlignment);
  }
  const size_t block = block_size(size);
  if (block >= kMinBlock) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_size_.find(block);
    if (it != by_size_.end() && !it->second.empty()) {
      auto entry = it->second.back();  // the newest: the likeliest to be in the CPU's caches
      it->second.pop_back();
      void* p = entry->second;
      kept_.erase(entry);
      cached_ -= block;
      return p;
    }
  }
  return hooks_.allocate(hooks_.user_data, block, kTensorAlignment);
}

void BlockCache::deallocate(void* p, size_t size) {
  if (p == nullptr) return;
  if (const size_t small = keeps_small_ ? SmallBlocks::class_size(size) : 0) {
    if (!small_blocks.keep(p, small)) hooks_.deallocate(hooks_.user_data, p, small);
    return;
  }
  const size_t block = block_size(size);
  if (block < kMinBlock || block > capacity_) {
    hooks_.deallocate(hooks_.user_data, p, block);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  while (cached_ + block > capacity_) evict_oldest_locked();
  kept_.emplace_front(block, p);
  by_size_[block].push_back(kept_.begin());
  cached_ += block;
}

void BlockCache::evict_oldest_locked() {
  const Entry oldest = kept_.back();
  auto& same = by_size_[oldest.first];
  // The oldest block of its size is the first in its list (they are kept in order).
  same.erase(same.begin());
  if (same.empty()) by_size_.erase(oldest.first);
  kept_.pop_back();
  cached_ -= oldest.first;
  hooks_.deallocate(hooks_.user_data, oldest.second, oldest.first);
}

size_t BlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

}  // namespace cairn
