#include "runtime/tensor/tensor.h"

#include <fmt/format.h>

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

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape.num_elements() != num_elements())
    raise(Code::InvalidArgument, "Reshape: cannot reshape {} elements {} into {}", num_elements(), shape_.str(), shape.str());
  Tensor t(*this);
  t.shape_ = shape;
  return t;
}

std::string Tensor::debug_string() const {
  return fmt::format("{}{} on {}", dtype_name(dtype_), shape_.str(), device() ? device()->name() : "nothing");
}

}  // namespace cairn
