// The CPU device: host memory through the context's allocator hooks. With the default hooks, freed
// large blocks are kept for reuse (block_cache.h); hooks an embedder hands in see every allocation.
#pragma once

#include <memory>

#include "runtime/core/allocator.h"
#include "runtime/cpu/block_cache.h"
#include "runtime/tensor/device.h"

namespace cairn {

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(const AllocatorHooks& hooks);
  ~CpuDevice() override;
  // Forgets the allocator's release hook: a context whose creation failed hands user_data back
  // to the caller untouched.
  void disarm_release() { hooks_.release = nullptr; }
  Buffer* allocate(size_t nbytes) override;
  void read(const Buffer& buffer, void* dst, size_t nbytes) override;
  void write(Buffer& buffer, const void* src, size_t nbytes) override;
  // Bytes of freed large blocks kept for reuse (0 with an embedder's hooks).
  size_t cached_bytes() const { return cache_ ? cache_->cached_bytes() : 0; }

 protected:
  void deallocate(Buffer* buffer) override;

 private:
  AllocatorHooks hooks_;
  std::unique_ptr<BlockCache> cache_;  // only with the default hooks
};

}  // namespace cairn
