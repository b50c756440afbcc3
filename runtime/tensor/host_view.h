// xtensor views over host tensors, for kernels and tests that want array expressions.
// They never own memory: the Tensor must outlive the view.
#pragma once

#include <vector>

#include <xtensor/xadapt.hpp>

#include "runtime/tensor/tensor.h"

namespace cairn {

inline std::vector<size_t> xshape(const Shape& s) {
  return std::vector<size_t>(s.dims(), s.dims() + s.rank());
}

template <class T>
auto host_view(const Tensor& t) {
  return xt::adapt(t.data<T>(), static_cast<size_t>(t.num_elements()), xt::no_ownership(), xshape(t.shape()));
}

template <class T>
auto mutable_host_view(const Tensor& t) {
  return xt::adapt(t.mutable_data<T>(), static_cast<size_t>(t.num_elements()), xt::no_ownership(), xshape(t.shape()));
}

}  // namespace cairn
