#include "runtime/core/shape.h"

#include "runtime/core/error.h"

namespace cairn {

Shape::Shape(std::initializer_list<int64_t> dims) : rank_(0) {
  for (int64_t d : dims) push_back(d);
}

Shape Shape::from(const int64_t* dims, size_t rank, const char* what) {
  if (rank > static_cast<size_t>(kMaxRank)) raise(Code::InvalidArgument, "{}: rank {} exceeds the maximum of {}", what, rank, kMaxRank);
  if (rank > 0 && dims == nullptr) raise(Code::InvalidArgument, "{}: shape is NULL but rank is {}", what, rank);
  Shape s;
  for (size_t i = 0; i < rank; ++i) s.dims_[i] = dims[i];
  s.rank_ = static_cast<int32_t>(rank);
  s.check(what);
  return s;
}

int64_t checked_elements(const int64_t* dims, int rank) noexcept {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) return -1;
    if (dims[i] == 0) continue;
    n = checked_mul(n, dims[i]);
    if (n < 0) return -1;
  }
  return n;
}

void Shape::check(const char* what) const {
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] < 0) raise(Code::InvalidArgument, "{}: dimension {} is negative ({})", what, i, dims_[i]);
  if (checked_elements(dims_, rank_) < 0)
    raise(Code::InvalidArgument, "{}: the element count of shape {} overflows int64", what, str());
}

void Shape::raise_unchecked() const {
  check("shape");
  raise(Code::Internal, "shape: num_elements of {} failed although check passed", str());  // unreachable
}

void Shape::push_back(int64_t d) {
  if (rank_ >= kMaxRank) raise(Code::InvalidArgument, "shape: rank exceeds the maximum of {}", kMaxRank);
  dims_[rank_++] = d;
}

void Shape::resize(int rank) {
  if (rank > kMaxRank) raise(Code::InvalidArgument, "shape: rank {} exceeds the maximum of {}", rank, kMaxRank);
  for (int i = rank_; i < rank; ++i) dims_[i] = 1;
  rank_ = rank;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ',';
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

int normalize_axis(int64_t axis, int rank, const char* op) {
  if (axis < -rank || axis >= rank)
    raise(Code::InvalidArgument, "{}: axis {} is out of range for rank {}", op, axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace cairn
