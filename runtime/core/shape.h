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
  // Validates rank <= kMaxRank, dims >= 0 and no element-count overflow; `what` prefixes errors.
  static Shape from(const int64_t* dims, size_t rank, const char* what);

  int rank() const { return rank_; }
  int64_t dim(int axis) const { return dims_[axis]; }
  int64_t operator[](int axis) const { return dims_[axis]; }
  void set_dim(int axis, int64_t v) { dims_[axis] = v; }
  const int64_t* dims() const { return dims_; }
  int64_t num_elements() const;
  bool is_scalar() const { return rank_ == 0; }
  void push_back(int64_t d);  // throws past kMaxRank
  void resize(int rank);      // new dims are 1

  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(dims_, dims_ + rank_); }
  std::string str() const;  // "[2,3]", "[]" for scalars
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  int64_t dims_[kMaxRank];
  int32_t rank_;
};

// Resolves a possibly negative axis against `rank`; throws InvalidArgument naming `op`.
int normalize_axis(int64_t axis, int rank, const char* op);

}  // namespace cairn
