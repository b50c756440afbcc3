// The CPU device: host memory through the context's allocator hooks. With the default hooks, freed
// large blocks are kept for reuse (block_cache.h); hooks an embedder hands in see every allocation.
#pragma once

#include <memory>
#include <string>

#include "runtime/core/allocator.h"
#include "runtime/cpu/block_cache.h"
#include "runtime/tensor/device.h"

namespace cairn {

// The machine's physical memory in bytes (0 when the system does not say).
uint64_t host_memory_bytes();

class CpuDevice final : public Device {
 public:
  // `name` is "cpu", or "cpu:N" for one logical device of a split CPU; `memory_limit` bounds the
  // bytes its tensors hold (0: none). The logical devices after the first share the first one's
  // hooks and pass it as `owner`: only the owner calls the hooks' release, after the last of them.
  explicit CpuDevice(const AllocatorHooks& hooks, std::string name = "cpu", uint64_t memory_limit = 0,
                     Ref<Device> owner = {});
  ~CpuDevice() override;
  Buffer* allocate(size_t nbytes) override;
  void read(const Buffer& buffer, void* dst, size_t nbytes) override;
  void write(Buffer& buffer, const void* src, size_t nbytes) override;
  uint64_t memory_budget() const override;
  // Bytes of freed large blocks kept for reuse (0 with an embedder's hooks).
  size_t cached_bytes() const { return cache_ ? cache_->cached_bytes() : 0; }

 protected:
  void deallocate(Buffer* buffer) override;

 private:
  AllocatorHooks hooks_;
  std::unique_ptr<BlockCache> cache_;  // only with the default hooks
  Ref<Device> owner_;                  // the split CPU's first device, which owns the hooks
};

}  // namespace cairn
