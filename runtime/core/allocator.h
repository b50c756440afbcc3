// Host memory hooks. A context routes every host tensor allocation through one of these, so an
// embedding engine can hand in its own allocator (cairn_allocator in the C header mirrors it).
#pragma once

#include <cstddef>

namespace cairn {

constexpr size_t kTensorAlignment = 64;

struct AllocatorHooks {
  // Returns `size` bytes aligned to `alignment` (a power of two), or NULL when out of memory.
  void* (*allocate)(void* user_data, size_t size, size_t alignment) = nullptr;
  // Frees a block from `allocate`; `size` is the size that was asked for.
  void (*deallocate)(void* user_data, void* ptr, size_t size) = nullptr;
  void* user_data = nullptr;
  // Called once after the last deallocate (when the device that uses the hooks is destroyed).
  void (*release)(void* user_data) = nullptr;
};

// aligned_alloc/free.
AllocatorHooks default_allocator();

}  // namespace cairn
