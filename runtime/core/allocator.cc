#include "runtime/core/allocator.h"

#include <cstdint>
#include <cstdlib>

namespace cairn {

namespace {
// glibc's aligned_alloc takes a slow path (_int_memalign) and fragments the heap; plain malloc of
// a little more, aligned by hand, stays on the fast thread-cache path. The byte before the
// aligned block records how far it moved (1..alignment), so free can find the malloc'd pointer.
void* system_allocate(void*, size_t size, size_t alignment) {
  if (alignment > 255 || size > SIZE_MAX - alignment) return nullptr;
  auto* raw = static_cast<unsigned char*>(std::malloc(size + alignment));
  if (raw == nullptr) return nullptr;
  size_t shift = alignment - (reinterpret_cast<uintptr_t>(raw) & (alignment - 1));  // 1..alignment
  unsigned char* aligned = raw + shift;
  aligned[-1] = static_cast<unsigned char>(shift - 1);
  return aligned;
}
void system_deallocate(void*, void* ptr, size_t) {
  if (ptr == nullptr) return;
  auto* aligned = static_cast<unsigned char*>(ptr);
  std::free(aligned - (static_cast<size_t>(aligned[-1]) + 1));
}
}  // namespace

AllocatorHooks default_allocator() {
  AllocatorHooks hooks;
  hooks.allocate = system_allocate;
  hooks.deallocate = system_deallocate;
  return hooks;
}

}  // namespace cairn
