#include "runtime/tensor/device.h"

#include "runtime/core/error.h"

namespace cairn {

void Device::count_allocation(uint64_t nbytes) {
  const uint64_t now = mem_current_.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  if (mem_limit_ != 0 && now > mem_limit_) {
    mem_current_.fetch_sub(nbytes, std::memory_order_relaxed);
    raise(Code::ResourceExhausted,
          "{}: allocating {} bytes would pass the device's memory limit of {} bytes ({} in use); raise the "
          "logical device's memory_limit or free tensors",
          name_, nbytes, mem_limit_, now - nbytes);
  }
  uint64_t peak = mem_peak_.load(std::memory_order_relaxed);
  while (now > peak && !mem_peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace cairn
