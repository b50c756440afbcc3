// An immutable value: dtype, shape and a shared device buffer. Copying a Tensor shares the buffer.
// Only the kernel that allocated an output writes into it, before anyone else can see it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/shape.h"
#include "runtime/tensor/device.h"

namespace cairn {

class Tensor {
 public:
  Tensor() = default;
  Tensor(const Tensor& o) : dtype_(o.dtype_), shape_(o.shape_), buffer_(o.buffer_) { if (buffer_) buffer_->retain(); }
  Tensor(Tensor&& o) noexcept : dtype_(o.dtype_), shape_(o.shape_), buffer_(std::exchange(o.buffer_, nullptr)) {}
  // Each assignment copies the shape once (a swap would copy it three times: eager dispatch
  // assigns every output it allocates).
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) assign(o.dtype_, o.shape_, std::exchange(o.buffer_, nullptr));
    return *this;
  }
  Tensor& operator=(const Tensor& o) noexcept {
    if (o.buffer_) o.buffer_->retain();
    assign(o.dtype_, o.shape_, o.buffer_);
    return *this;
  }
  ~Tensor() { if (buffer_) buffer_->release(); }

  // A new, uninitialised tensor on `device`. String tensors are not made this way.
  static Tensor allocate(Device& device, DType dtype, const Shape& shape);
  // A tensor over `buffer`, a device's buffer made by other means than allocate() (an engine's
  // VkBuffer range that the Vulkan device wraps): it takes the buffer's one reference. `buffer`
  // holds shape.num_elements() elements of `dtype` (nbytes says so) and has its `device` set.
  static Tensor adopt(DType dtype, const Shape& shape, Buffer* buffer);
  // A tensor on the host device `host` over `data`, memory it does not own (a mapped file, say):
  // no copy. `owner` keeps that memory alive; the tensor and its copies hold it until the last one
  // goes. `data` holds shape.num_elements() elements of `dtype` and must not change meanwhile.
  static Tensor borrow_host(Device& host, DType dtype, const Shape& shape, const void* data,
                            std::shared_ptr<const void> owner);
  // Same data, new shape (element counts must match); no copy.
  Tensor reshaped(const Shape& shape) const;

  bool valid() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t nbytes() const { return buffer_ ? buffer_->nbytes : 0; }
  Device* device() const { return buffer_ ? buffer_->device : nullptr; }
  Buffer* buffer() const { return buffer_; }

  // Host access for CPU kernels; the tensor must live on a host device.
  template <class T> const T* data() const { return static_cast<const T*>(buffer_->data); }
  template <class T> T* mutable_data() const { return static_cast<T*>(buffer_->data); }
  const void* raw_data() const { return buffer_->data; }
  void* raw_mutable_data() const { return buffer_->data; }

  std::string debug_string() const;  // "float32[2,3] on cpu"

 private:
  // Takes `buffer`'s reference and drops the old one (after the copy: `shape` may be this one's).
  void assign(DType dtype, const Shape& shape, Buffer* buffer) noexcept {
    Buffer* old = buffer_;
    dtype_ = dtype;
    shape_ = shape;
    buffer_ = buffer;
    if (old) old->release();
  }

  DType dtype_ = DType::Invalid;
  Shape shape_;
  Buffer* buffer_ = nullptr;  // one reference
};

// `t` on `device`: shared when it is already there, copied (through host memory) otherwise. A
// symbolic tensor (graph capture) is returned as it is: a replay runs on its inputs' device.
Tensor tensor_on_device(const Tensor& t, Device& device);

// `t`'s values in memory of `host` (a host device), for code that reads them. A symbolic tensor
// (inside a function trace) has no values: FailedPrecondition naming `fn`.
Tensor host_values(const Tensor& t, Device& host, std::string_view fn);

}  // namespace cairn
