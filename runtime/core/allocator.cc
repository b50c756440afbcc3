#include "runtime/core/allocator.h"

#include <cstdlib>

namespace cairn {

namespace {
void* system_allocate(void*, size_t size, size_t alignment) {
  size_t rounded = (size + alignment - 1) & ~(alignment - 1);  // aligned_alloc wants a multiple
  return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}
void system_deallocate(void*, void* ptr, size_t) { std::free(ptr); }
}  // namespace

AllocatorHooks default_allocator() {
  AllocatorHooks hooks;
  hooks.allocate = system_allocate;
  hooks.deallocate = system_deallocate;
  return hooks;
}

}  // namespace cairn
