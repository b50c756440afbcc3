// Helpers for runtime tests: build tensors from vectors, run ops, read values back, compare.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/core/convert.h"
#include "runtime/eager/context.h"
#include "runtime/eager/dispatch.h"
#include "runtime/tensor/tensor.h"

namespace cairn::test {

// A CPU context shared by a test binary (2 threads, seed 42).
Context& ctx();

// A tensor of dtype DTypeOf<T> with `shape` holding `values` (sizes must match).
template <class T>
Tensor make(const std::vector<T>& values, const Shape& shape) {
  REQUIRE(static_cast<int64_t>(values.size()) == shape.num_elements());
  Tensor t = Tensor::allocate(ctx().cpu(), DTypeOf<T>::value, shape);
  T* p = t.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

// A tensor of any dtype from double values converted element by element.
Tensor make_as(DType dtype, const std::vector<double>& values, const Shape& shape);

template <class T>
Tensor scalar(T v) { return make<T>({v}, Shape{}); }

// std::vector<bool> is a bitset, so bool tensors come back as uint8_t-backed values.
template <class T>
std::vector<T> values(const Tensor& t) {
  REQUIRE(t.dtype() == DTypeOf<T>::value);
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.num_elements());
}
std::vector<int> bools(const Tensor& t);

// Every element converted to double (complex: the real part).
std::vector<double> as_doubles(const Tensor& t);

// Runs an op and returns its only/first output.
Tensor run1(std::string_view op, std::initializer_list<Tensor> inputs, std::initializer_list<NamedAttr> attrs = {});

// Expects the call to throw cairn::Error with `code` and a message containing `fragment`.
#define CHECK_THROWS_CODE(expr, expected_code, fragment)                                          \
  do {                                                                                   \
    bool cairn_threw = false;                                                            \
    try {                                                                                \
      (void)(expr);                                                                      \
    } catch (const ::cairn::Error& e) {                                                  \
      cairn_threw = true;                                                                \
      CHECK(e.code() == (expected_code));                                                       \
      CHECK_MESSAGE(e.message().find(fragment) != std::string::npos, e.message());       \
    }                                                                                    \
    CHECK_MESSAGE(cairn_threw, "expected an error containing: " << (fragment));          \
  } while (0)

// Element-wise closeness with relative and absolute tolerance; NaNs must match NaNs.
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6);

}  // namespace cairn::test
