#include "runtime/cpu/cpu_device.h"

#include <unistd.h>

#include <cstring>
#include <new>

#include "runtime/core/error.h"

namespace cairn {

// The Buffer header and its data share one allocation: the header takes the first
// kTensorAlignment bytes, so the data stays aligned and a new tensor costs one allocation.
static_assert(sizeof(Buffer) <= kTensorAlignment, "Buffer header must fit in the alignment padding");

namespace {
// Under AddressSanitizer every free goes back to it, so that a use after free is caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kKeepBlocks = false;
#else
constexpr bool kKeepBlocks = true;
#endif
#else
constexpr bool kKeepBlocks = true;
#endif
}  // namespace

CpuDevice::CpuDevice(const AllocatorHooks& hooks, std::string name, uint64_t memory_limit, Ref<Device> owner)
    : Device(DeviceKind::CPU, std::move(name)), hooks_(hooks), owner_(std::move(owner)) {
  if (owner_) hooks_.release = nullptr;
  set_memory_limit(memory_limit);
  if (kKeepBlocks && hooks.allocate == default_allocator().allocate &&
      hooks.deallocate == default_allocator().deallocate)
    cache_ = std::make_unique<BlockCache>(hooks);
}

// Every buffer holds a reference on its device, so this runs after the last deallocate.
CpuDevice::~CpuDevice() {
  if (hooks_.release) hooks_.release(hooks_.user_data);
}

Buffer* CpuDevice::allocate(size_t nbytes) {
  if (nbytes > SIZE_MAX - kTensorAlignment) raise(Code::ResourceExhausted, "cpu: cannot allocate {} bytes", nbytes);
  const size_t size = kTensorAlignment + nbytes;
  count_allocation(nbytes);
  void* block = cache_ ? cache_->allocate(size) : hooks_.allocate(hooks_.user_data, size, kTensorAlignment);
  if (block == nullptr) {
    count_free(nbytes);
    raise(Code::ResourceExhausted, "{}: out of memory allocating {} bytes", name(), nbytes);
  }
  Buffer* b = new (block) Buffer();
  b->device = this;
  b->data = static_cast<char*>(block) + kTensorAlignment;
  b->nbytes = nbytes;
  retain();
  return b;
}

void CpuDevice::deallocate(Buffer* buffer) {
  size_t size = kTensorAlignment + buffer->nbytes;
  count_free(buffer->nbytes);
  buffer->~Buffer();
  if (cache_)
    cache_->deallocate(buffer, size);
  else
    hooks_.deallocate(hooks_.user_data, buffer, size);
}

uint64_t host_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t CpuDevice::memory_budget() const { return host_memory_bytes(); }

void CpuDevice::read(const Buffer& buffer, void* dst, size_t nbytes) {
  if (nbytes) std::memcpy(dst, buffer.data, nbytes);
}

void CpuDevice::write(Buffer& buffer, const void* src, size_t nbytes) {
  if (nbytes) std::memcpy(buffer.data, src, nbytes);
}

}  // namespace cairn
