#include "runtime/cpu/cpu_device.h"

#include <cstring>
#include <new>

#include "runtime/core/error.h"

namespace cairn {

// The Buffer header and its data share one allocation: the header takes the first
// kTensorAlignment bytes, so the data stays aligned and a new tensor costs one allocation.
static_assert(sizeof(Buffer) <= kTensorAlignment, "Buffer header must fit in the alignment padding");

CpuDevice::CpuDevice(const AllocatorHooks& hooks) : Device(DeviceKind::CPU, "cpu"), hooks_(hooks) {}

// Every buffer holds a reference on its device, so this runs after the last deallocate.
CpuDevice::~CpuDevice() {
  if (hooks_.release) hooks_.release(hooks_.user_data);
}

Buffer* CpuDevice::allocate(size_t nbytes) {
  if (nbytes > SIZE_MAX - kTensorAlignment) raise(Code::ResourceExhausted, "cpu: cannot allocate {} bytes", nbytes);
  void* block = hooks_.allocate(hooks_.user_data, kTensorAlignment + nbytes, kTensorAlignment);
  if (block == nullptr) raise(Code::ResourceExhausted, "cpu: out of memory allocating {} bytes", nbytes);
  Buffer* b = new (block) Buffer();
  b->device = this;
  b->data = static_cast<char*>(block) + kTensorAlignment;
  b->nbytes = nbytes;
  retain();
  return b;
}

void CpuDevice::deallocate(Buffer* buffer) {
  size_t size = kTensorAlignment + buffer->nbytes;
  buffer->~Buffer();
  hooks_.deallocate(hooks_.user_data, buffer, size);
}

void CpuDevice::read(const Buffer& buffer, void* dst, size_t nbytes) {
  if (nbytes) std::memcpy(dst, buffer.data, nbytes);
}

void CpuDevice::write(Buffer& buffer, const void* src, size_t nbytes) {
  if (nbytes) std::memcpy(buffer.data, src, nbytes);
}

}  // namespace cairn
