// CPU kernels for the comparison and logical ops in ops/compare_ops.cc.
#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

struct EqualF {
  template <class T> static constexpr bool supports = true;
  template <class C> bool operator()(C a, C b) const { return a == b; }
};
struct NotEqualF {
  template <class T> static constexpr bool supports = true;
  template <class C> bool operator()(C a, C b) const { return a != b; }
};
struct LessF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> bool operator()(C a, C b) const { return a < b; }
};
struct LessEqualF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> bool operator()(C a, C b) const { return a <= b; }
};
struct GreaterF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> bool operator()(C a, C b) const { return a > b; }
};
struct GreaterEqualF {
  template <class T> static constexpr bool supports = is_real_v<T>;
  template <class C> bool operator()(C a, C b) const { return a >= b; }
};
struct LogicalAndF {
  template <class T> static constexpr bool supports = is_bool_v<T>;
  template <class C> bool operator()(C a, C b) const { return a && b; }
};
struct LogicalOrF {
  template <class T> static constexpr bool supports = is_bool_v<T>;
  template <class C> bool operator()(C a, C b) const { return a || b; }
};

bool broadcastable(const Shape& a, const Shape& b) {
  int rank = a.rank() > b.rank() ? a.rank() : b.rank();
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
  }
  return true;
}

// Equal/NotEqual: shapes that do not broadcast (allowed by incompatible_shape_error=false) give the
// scalar `mismatch` value.
template <class F, bool kMismatch>
void equality_kernel(KernelContext& kc) {
  if (!broadcastable(kc.input(0).shape(), kc.input(1).shape())) {
    kc.output(0).mutable_data<bool>()[0] = kMismatch;
    return;
  }
  compare_kernel<F>(kc);
}

void logical_not_kernel(KernelContext& kc) {
  const bool* x = kc.input(0).data<bool>();
  bool* y = kc.output(0).mutable_data<bool>();
  kc.pool.parallel_for(kc.input(0).num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = !x[i];
  });
}

CAIRN_REGISTER_KERNEL("Equal", DeviceKind::CPU, (equality_kernel<EqualF, false>));
CAIRN_REGISTER_KERNEL("NotEqual", DeviceKind::CPU, (equality_kernel<NotEqualF, true>));
CAIRN_REGISTER_KERNEL("Less", DeviceKind::CPU, compare_kernel<LessF>);
CAIRN_REGISTER_KERNEL("LessEqual", DeviceKind::CPU, compare_kernel<LessEqualF>);
CAIRN_REGISTER_KERNEL("Greater", DeviceKind::CPU, compare_kernel<GreaterF>);
CAIRN_REGISTER_KERNEL("GreaterEqual", DeviceKind::CPU, compare_kernel<GreaterEqualF>);
CAIRN_REGISTER_KERNEL("LogicalAnd", DeviceKind::CPU, compare_kernel<LogicalAndF>);
CAIRN_REGISTER_KERNEL("LogicalOr", DeviceKind::CPU, compare_kernel<LogicalOrF>);
CAIRN_REGISTER_KERNEL("LogicalNot", DeviceKind::CPU, logical_not_kernel);

}  // namespace
}  // namespace cairn
