#include "runtime/cpu/elementwise.h"

namespace cairn {

void throw_unsupported_dtype(const KernelContext& kc, DType t) {
  raise(Code::Unimplemented, "{}: no {} kernel for dtype {}", kc.op(), kc.device.name(), dtype_name(t));
}

void reject_integer_zeros(const KernelContext& kc, int input) {
  const Tensor& t = kc.input(input);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_int_v<T>) {
      const T* p = t.data<T>();
      for (int64_t i = 0, n = t.num_elements(); i < n; ++i)
        if (p[i] == T(0)) raise(Code::InvalidArgument, "{}: integer division by zero", kc.op());
    }
  });
}

void reject_negative_integer_exponents(const KernelContext& kc) {
  const Tensor& t = kc.input(1);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_int_v<T> && std::is_signed_v<T>) {
      const T* p = t.data<T>();
      for (int64_t i = 0, n = t.num_elements(); i < n; ++i)
        if (p[i] < 0) raise(Code::InvalidArgument, "{}: integers to negative integer powers are not allowed", kc.op());
    }
  });
}

}  // namespace cairn
