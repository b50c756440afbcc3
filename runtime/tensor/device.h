// The device interface every backend implements (CPU here, Vulkan in gpu/). runtime/ never sees a
// backend's own types: a backend subclasses Device and registers a factory (see eager/context.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/refcount.h"

namespace cairn {

// Symbolic: the placeholder device of tensors inside a function being traced (runtime/graph); it
// has no memory and no kernels.
enum class DeviceKind : int { CPU = 0, Vulkan = 1, Symbolic = 2 };
constexpr int kNumDeviceKinds = 3;

class Device;

// What a device's tensors hold now, the most they held since the last reset, and the limit (0: none).
struct MemoryInfo {
  uint64_t current = 0;
  uint64_t peak = 0;
  uint64_t limit = 0;
};

// A block of device memory. Refcounted without a vtable: the last release hands it back to the
// device that made it, and the buffer keeps that device alive.
struct Buffer {
  std::atomic<int32_t> refs{1};
  Device* device = nullptr;  // owns one reference on the device
  void* data = nullptr;      // host pointer on host devices; backend-defined otherwise
  size_t nbytes = 0;
  // Set only on buffers that borrow host memory (Tensor::borrow_host): the last release frees the
  // buffer through it instead of handing it to the device.
  void (*free_borrowed)(Buffer*) = nullptr;

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  inline void release();
};

class Device : public RefCounted {
 public:
  Device(DeviceKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  DeviceKind kind() const { return kind_; }
  const std::string& name() const { return name_; }  // "cpu", "vulkan:0"
  // Whether Buffer::data is a host pointer that kernels may read directly.
  bool is_host() const { return kind_ == DeviceKind::CPU; }

  // A new buffer with refs == 1 whose data is aligned to kTensorAlignment; throws
  // ResourceExhausted when memory runs out.
  virtual Buffer* allocate(size_t nbytes) = 0;
  // Copies to and from host memory, waiting for any queued work that touches the buffer.
  virtual void read(const Buffer& buffer, void* dst, size_t nbytes) = 0;
  virtual void write(Buffer& buffer, const void* src, size_t nbytes) = 0;
  // Waits until all queued work has finished.
  virtual void synchronize() {}

  // Bytes held by this device's tensors (tf.config.experimental.get_memory_info): what backends
  // count with count_allocation / count_free.
  MemoryInfo memory_info() const {
    return {mem_current_.load(std::memory_order_relaxed), mem_peak_.load(std::memory_order_relaxed), mem_limit_};
  }
  // Bytes the device may use now: the driver's live budget on Vulkan (VK_EXT_memory_budget, with
  // fallbacks), the machine's memory on the CPU; 0 when unknown.
  virtual uint64_t memory_budget() const { return 0; }
  // Sets the peak to the current use (tf.config.experimental.reset_memory_stats).
  void reset_peak_memory() { mem_peak_.store(mem_current_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

 protected:
  friend struct Buffer;
  // Frees the memory of a buffer whose count reached zero; the caller then drops the device ref.
  virtual void deallocate(Buffer* buffer) = 0;

  // The limit count_allocation enforces; 0 = none. Set once, before the device hands out memory.
  void set_memory_limit(uint64_t bytes) { mem_limit_ = bytes; }
  // Counts `nbytes` as held; throws ResourceExhausted (naming the device, the limit and the use)
  // when that would pass the limit.
  void count_allocation(uint64_t nbytes);
  void count_free(uint64_t nbytes) { mem_current_.fetch_sub(nbytes, std::memory_order_relaxed); }

 private:
  DeviceKind kind_;
  std::string name_;
  std::atomic<uint64_t> mem_current_{0};
  std::atomic<uint64_t> mem_peak_{0};
  uint64_t mem_limit_ = 0;
};

inline void Buffer::release() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Device* d = device;
    if (free_borrowed) {
      free_borrowed(this);
    } else {
      d->deallocate(this);
    }
    d->release();
  }
}

}  // namespace cairn
