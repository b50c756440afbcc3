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
