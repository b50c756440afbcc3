// Intrusive reference counting: one atomic in the object, no control block, so handing a tensor
// across the C API costs one allocation, not two.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace cairn {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;

  void retain() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Deletes the object through its virtual destructor when the last reference goes.
  void release() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }
  int32_t ref_count() const { return refs_.load(std::memory_order_relaxed); }

 protected:
  virtual ~RefCounted() = default;
  virtual void destroy() const { delete this; }

 private:
  mutable std::atomic<int32_t> refs_{1};
};

// A smart pointer over a RefCounted object. Ref<T>::adopt takes over the creation reference.
template <class T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  Ref(const Ref& o) : p_(o.p_) { if (p_) p_->retain(); }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U>
  Ref(const Ref<U>& o) : p_(o.get()) { if (p_) p_->retain(); }
  ~Ref() { if (p_) p_->release(); }
  Ref& operator=(Ref o) noexcept { std::swap(p_, o.p_); return *this; }

  static Ref adopt(T* p) { Ref r; r.p_ = p; return r; }
  static Ref share(T* p) { if (p) p->retain(); return adopt(p); }
  T* release_ownership() { return std::exchange(p_, nullptr); }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>::adopt(new T(std::forward<Args>(args)...));
}

}  // namespace cairn
