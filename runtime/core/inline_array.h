// A fixed-length array that lives on the stack when short and constructs only the elements asked
// for. Eager dispatch uses it for per-call scratch (inputs, outputs, attribute values): zeroing a
// worst-case-sized array on every call would cost more than the rest of the dispatch.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace cairn {

template <class T, size_t N>
class InlineArray {
 public:
  explicit InlineArray(size_t n) : size_(n) {
    data_ = n <= N ? reinterpret_cast<T*>(storage_) : static_cast<T*>(::operator new(n * sizeof(T)));
    size_t i = 0;
    try {
      for (; i < n; ++i) new (data_ + i) T();
    } catch (...) {
      destroy(i);
      throw;
    }
  }
  ~InlineArray() { destroy(size_); }
  InlineArray(const InlineArray&) = delete;
  InlineArray& operator=(const InlineArray&) = delete;

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* data() { return data_; }
  size_t size() const { return size_; }

 private:
  void destroy(size_t constructed) {
    for (size_t i = 0; i < constructed; ++i) data_[i].~T();
    if (data_ != reinterpret_cast<T*>(storage_)) ::operator delete(data_);
  }

  alignas(T) unsigned char storage_[N * sizeof(T)];
  T* data_;
  size_t size_;
};

}  // namespace cairn
