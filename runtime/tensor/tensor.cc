#include "runtime/tensor/tensor.h"

#include <fmt/format.h>

#include <vector>

namespace cairn {

Tensor Tensor::allocate(Device& device, DType dtype, const Shape& shape) {
  size_t elem = dtype_size(dtype);
  if (elem == 0) raise(Code::InvalidArgument, "tensor: cannot allocate dtype {}", dtype_name(dtype));
  int64_t n = shape.num_elements();
  if (n > 0 && static_cast<uint64_t>(n) > SIZE_MAX / elem)
    raise(Code::ResourceExhausted, "tensor: {} elements of {} do not fit in memory", n, dtype_name(dtype));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = device.allocate(static_cast<size_t>(n) * elem);
  return t;
}

Tensor Tensor::adopt(DType dtype, const Shape& shape, Buffer* buffer) {
  const size_t elem = dtype_size(dtype);
  if (elem == 0 || buffer == nullptr || buffer->device == nullptr ||
      buffer->nbytes != static_cast<size_t>(shape.num_elements()) * elem) {
    if (buffer) buffer->release();
    raise(Code::Internal, "tensor: adopting a buffer that does not hold {} {}", shape.num_elements(), dtype_name(dtype));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = buffer;
  return t;
}

namespace {
// A borrowed buffer is its own allocation (not the device's), carrying the owner of its memory.
struct BorrowedBuffer : Buffer {
  std::shared_ptr<const void> owner;
};
void free_borrowed_buffer(Buffer* b) { delete static_cast<BorrowedBuffer*>(b); }
}  // namespace

Tensor Tensor::borrow_host(Device& host, DType dtype, const Shape& shape, const void* data,
                           std::shared_ptr<const void> owner) {
  if (!host.is_host()) raise(Code::InvalidArgument, "tensor: cannot borrow host memory on device {}", host.name());
  size_t elem = dtype_size(dtype);
  if (elem == 0) raise(Code::InvalidArgument, "tensor: cannot borrow memory for dtype {}", dtype_name(dtype));
  auto* b = new BorrowedBuffer();
  b->owner = std::move(owner);
  b->device = &host;
  b->data = const_cast<void*>(data);  // tensors are immutable: nobody writes through it
  b->nbytes = static_cast<size_t>(shape.num_elements()) * elem;
  b->free_borrowed = free_borrowed_buffer;
  host.retain();
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = b;
  return t;
}

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape.num_elements() != num_elements())
    raise(Code::InvalidArgument, "Reshape: cannot reshape {} elements {} into {}", num_elements(), shape_.str(), shape.str());
  Tensor t(*this);
  t.shape_ = shape;
  return t;
}

Tensor tensor_on_device(const Tensor& t, Device& device) {
  Device* source = t.device();
  if (source == &device) return t;
  // A symbolic tensor (inside a function trace) is placed when the function runs.
  if (source->kind() == DeviceKind::Symbolic) return t;
  Tensor copy = Tensor::allocate(device, t.dtype(), t.shape());
  if (t.nbytes() == 0) return copy;
  if (source->is_host()) {
    device.write(*copy.buffer(), t.raw_data(), t.nbytes());
  } else if (device.is_host()) {
    source->read(*t.buffer(), copy.raw_mutable_data(), t.nbytes());
  } else {
    std::vector<char> staging(t.nbytes());
    source->read(*t.buffer(), staging.data(), staging.size());
    device.write(*copy.buffer(), staging.data(), staging.size());
  }
  return copy;
}

Tensor host_values(const Tensor& t, Device& host, std::string_view fn) {
  if (t.device() && t.device()->kind() == DeviceKind::Symbolic)
    raise(Code::FailedPrecondition, "{}: needs tensor values, which a traced function does not have while it is traced",
          fn);
  return tensor_on_device(t, host);
}

std::string Tensor::debug_string() const {
  return fmt::format("{}{} on {}", dtype_name(dtype_), shape_.str(), device() ? device()->name() : "nothing");
}

}  // namespace cairn
