// The CPU device: host memory through the context's allocator hooks.
#pragma once

#include "runtime/core/allocator.h"
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

 protected:
  void deallocate(Buffer* buffer) override;

 private:
  AllocatorHooks hooks_;
};

}  // namespace cairn
