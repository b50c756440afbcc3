// A tensor shape: up to kMaxRank dimensions, stored inline so shapes never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace cairn {

constexpr int kMaxRank = 8;

class Shape {
 public:
  // User-provided so that value-initialisation (`Shape()`, `new (p) Shape()`) does not zero the
  // unused dimensions: eager dispatch builds several shapes per op. Only the first rank() dims
  // are ever read.
  Shape() : rank_(0) {}
  Shape(std::initializer_list<int64_t> dims);
  // Validates rank <= kMaxRank, dims >= 0 and no element-count overflow (see check()); `what`
  // prefixes errors.
  static Shape from(const int64_t* dims, size_t rank, const char* what);

  int rank() const { return rank_; }
  int64_t dim(int axis) const { return dims_[axis]; }
  int64_t operator[](int axis) const { return dims_[axis]; }
  void set_dim(int axis, int64_t v) { dims_[axis] = v; }
  const int64_t* dims() const { return dims_; }
  // The product of the dimensions. Every shape a tensor or a shape function hands out has passed
  // check(), so this cannot overflow; if it would (a shape built with set_dim/push_back and never
  // checked), it throws InvalidArgument instead of wrapping around: a wrapped count is how an
  // overflowing shape became a small allocation that a kernel then overran.
  int64_t num_elements() const {  // inline: eager dispatch asks several times per op
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i)
      if (__builtin_mul_overflow(n, dims_[i], &n) || dims_[i] < 0) raise_unchecked();
    return n;
  }
  // Throws InvalidArgument "<what>: ..." unless every dimension is >= 0 and the product of the
  // non-zero dimensions fits in int64 (see checked_elements). Used by Shape::from and, for every
  // op's outputs, by infer_outputs (runtime/ops/validate.cc).
  void check(const char* what) const;
  bool is_scalar() const { return rank_ == 0; }
  void push_back(int64_t d);  // throws past kMaxRank
  void resize(int rank);      // new dims are 1

  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(dims_, dims_ + rank_); }
  std::string str() const;  // "[2,3]", "[]" for scalars
  bool operator==(const Shape& o) const {  // inline: kernels compare input shapes on every call
    if (rank_ != o.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  // num_elements' failure: check("shape"), out of line (it throws).
  [[noreturn, gnu::cold, gnu::noinline]] void raise_unchecked() const;

  int64_t dims_[kMaxRank];
  int32_t rank_;
};

// The product of the non-zero entries of dims[0..rank), or -1 when a dimension is negative or the
// product overflows int64. A zero dimension does not excuse an overflow elsewhere: kernels compute
// partial products (outer * inner, rows * cols) that would overflow even when the total is 0, so
// a shape is valid only if the product of every subset of its dimensions fits, which is exactly
// when the product of the non-zero ones does. The one place where shape arithmetic is checked.
int64_t checked_elements(const int64_t* dims, int rank) noexcept;
// a * b for non-negative a, b, or -1 when it overflows int64.
inline int64_t checked_mul(int64_t a, int64_t b) noexcept {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? -1 : r;
}

// Resolves a possibly negative axis against `rank`; throws InvalidArgument naming `op`.
int normalize_axis(int64_t axis, int rank, const char* op);

}  // namespace cairn
