#include "runtime/cpu/block_cache.h"

#include <cstdint>

namespace cairn {

BlockCache::BlockCache(const AllocatorHooks& hooks, size_t capacity) : hooks_(hooks), capacity_(capacity) {}

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
  const size_t block = block_size(size);
  if (p == nullptr) return;
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
