// CPU kernels for the unary math ops in ops/unary_ops.cc; the functors are in elementwise_ops.h.
#include <cmath>
#include <cstdint>

#include "runtime/cpu/elementwise_ops.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

template <class C>
C gelu_exact(C x) {
  // x * Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2: no cancellation for negative x.
  if (std::isinf(x)) return x > C(0) ? x : C(0);
  return x * C(0.5) * std::erfc(-x * static_cast<C>(0.70710678118654752440));
}

template <class C>
C gelu_tanh(C x) {
  // 0.5 * x * (1 + tanh(u)) == x * sigmoid(2u), which avoids 1 + tanh(u) cancelling for negative x.
  if (std::isinf(x)) return x > C(0) ? x : C(0);
  const C k = static_cast<C>(0.79788456080286535588);  // sqrt(2 / pi)
  C u = k * (x + C(0.044715) * x * x * x);
  return x * stable_sigmoid(C(2) * u);
}

void gelu_kernel(KernelContext& kc) {
  const bool approximate = kc.attrs.b("approximate");
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using C = compute_t<T>;
      if (approximate) unary_apply<T, T>(kc, [](C x) { return gelu_tanh(x); });
      else unary_apply<T, T>(kc, [](C x) { return gelu_exact(x); });
    } else {
      throw_unsupported_dtype(kc, kc.input(0).dtype());
    }
  });
}

#define CAIRN_REGISTER_UNARY(name, step, F, ...) CAIRN_REGISTER_KERNEL(name, DeviceKind::CPU, unary_kernel<F>);
CAIRN_FUSIBLE_UNARY_OPS(CAIRN_REGISTER_UNARY)
#undef CAIRN_REGISTER_UNARY
CAIRN_REGISTER_KERNEL("Gelu", DeviceKind::CPU, gelu_kernel);
CAIRN_REGISTER_KERNEL("IsNan", DeviceKind::CPU, unary_predicate_kernel<IsNanF>);
CAIRN_REGISTER_KERNEL("IsFinite", DeviceKind::CPU, unary_predicate_kernel<IsFiniteF>);

}  // namespace
}  // namespace cairn
