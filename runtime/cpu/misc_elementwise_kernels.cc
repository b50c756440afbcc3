// CPU kernels for ops/misc_elementwise_ops.cc.
#include <cmath>
#include <cstring>

#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

template <class T> constexpr bool kFloatStorage = std::is_floating_point_v<T> || is_half<T>::value;

// The next representable value toward zero from a finite non-zero or infinite `v`.
template <class T>
T step_toward_zero(T v) {
  if constexpr (is_half<T>::value) {
    v.bits = static_cast<uint16_t>(v.bits - 1);  // sign-magnitude: one ulp less magnitude
    return v;
  } else {
    return std::nextafter(v, T(0));
  }
}

// Float-to-float conversion rounding toward zero (TF's Cast with Truncate=true).
template <class To, class From>
To convert_truncating(From v) {
  To r = convert<To>(v);
  double exact = convert<double>(v);
  if (std::isfinite(exact) && std::fabs(convert<double>(r)) > std::fabs(exact)) r = step_toward_zero(r);
  return r;
}

void copy_bytes(const Tensor& from, Tensor& to) {
  size_t n = from.nbytes();
  if (n > 0) std::memcpy(to.raw_mutable_data(), from.raw_data(), n);
}

void cast_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (x.dtype() == y.dtype()) {
    copy_bytes(x, y);
    return;
  }
  const bool truncate = kc.attrs.b("Truncate");
  visit_dtype(x.dtype(), [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    visit_dtype(y.dtype(), [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* px = x.data<S>();
      D* py = y.mutable_data<D>();
      if constexpr (kFloatStorage<S> && kFloatStorage<D>) {
        if (truncate) {
          kc.pool.parallel_for(x.num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) py[i] = convert_truncating<D>(px[i]);
          });
          return;
        }
      }
      if constexpr (is_complex_v<S> && is_bool_v<D>) {
        // Unlike convert<> (real part only), a complex value is true when either part is non-zero.
        kc.pool.parallel_for(x.num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) py[i] = px[i] != S(0);
        });
        return;
      }
      kc.pool.parallel_for(x.num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) py[i] = convert<D>(px[i]);
      });
    });
  });
}

void identity_kernel(KernelContext& kc) { copy_bytes(kc.input(0), kc.output(0)); }

template <int kValue>
void fill_like_kernel(KernelContext& kc) {
  Tensor& y = kc.output(0);
  visit_dtype(y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = convert<T>(kValue);
    T* p = y.mutable_data<T>();
    kc.pool.parallel_for(y.num_elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = v;
    });
  });
}

void clip_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_v<T>) {
      using C = compute_t<T>;
      const T* pt = kc.input(0).data<T>();
      const T* plo = kc.input(1).data<T>();
      const T* phi = kc.input(2).data<T>();
      T* po = kc.output(0).mutable_data<T>();
      const Shape* shapes[3] = {&kc.input(0).shape(), &kc.input(1).shape(), &kc.input(2).shape()};
      broadcast_loop<3>(kc.pool, kc.output(0).shape(), shapes, [&](int64_t o, const int64_t* i) {
        C v = widen(pt[i[0]]);
        C hi = widen(phi[i[2]]);
        C lo = widen(plo[i[1]]);
        if (v > hi) v = hi;  // comparisons with NaN are false: a NaN t stays NaN
        if (v < lo) v = lo;
        po[o] = convert<T>(v);
      });
    } else {
      throw_unsupported_dtype(kc, kc.input(0).dtype());
    }
  });
}

// SelectV2 whose condition picks whole blocks: the condition has the output's rank, its dims match
// the output's up to some axis and are 1 after it, and each branch is either the output's shape
// or one block (a TensorArray write: a [size, 1, ...] mask over [1, element] and [size, element]).
// Then each block is one copy instead of a broadcast loop per element.
struct BlockSelect {
  int64_t rows = 0, inner = 1;
  bool then_full = false, else_full = false;
};

bool block_select(const Shape& cond, const Shape& then_shape, const Shape& else_shape, const Shape& out,
                  BlockSelect& b) {
  const int r = out.rank();
  if (cond.rank() != r || r == 0) return false;
  int split = r;  // dims from `split` on are 1 in the condition
  while (split > 0 && cond.dim(split - 1) == 1) --split;
  for (int d = 0; d < split; ++d)
    if (cond.dim(d) != out.dim(d)) return false;
  for (int d = split; d < r; ++d) b.inner *= out.dim(d);
  if (b.inner < 64) return false;  // small blocks: the broadcast loop is as fast
  b.rows = b.inner == 0 ? 0 : out.num_elements() / b.inner;
  auto classify = [&](const Shape& s, bool& full) {
    if (s == out) return full = true;
    full = false;
    if (s.num_elements() != b.inner || s.rank() > r) return false;
    for (int d = 0; d < s.rank(); ++d)  // right-aligned, the block's dims must be the output's
      if (s.dim(s.rank() - 1 - d) != out.dim(r - 1 - d) && r - 1 - d >= split) return false;
    return true;
  };
  return classify(then_shape, b.then_full) && classify(else_shape, b.else_full);
}

void select_kernel(KernelContext& kc) {
  visit_dtype(kc.input(1).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* pc = kc.input(0).data<bool>();
    const T* pt = kc.input(1).data<T>();
    const T* pe = kc.input(2).data<T>();
    T* po = kc.output(0).mutable_data<T>();
    BlockSelect b;
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (block_select(kc.input(0).shape(), kc.input(1).shape(), kc.input(2).shape(), kc.output(0).shape(), b)) {
        kc.pool.parallel_for(b.rows, std::max<int64_t>(1, kElementwiseGrain / b.inner), [&](int64_t lo, int64_t hi) {
          for (int64_t row = lo; row < hi; ++row) {
            const T* src = pc[row] ? pt + (b.then_full ? row * b.inner : 0) : pe + (b.else_full ? row * b.inner : 0);
            std::memcpy(po + row * b.inner, src, static_cast<size_t>(b.inner) * sizeof(T));
          }
        });
        return;
      }
    }
    const Shape* shapes[3] = {&kc.input(0).shape(), &kc.input(1).shape(), &kc.input(2).shape()};
    broadcast_loop<3>(kc.pool, kc.output(0).shape(), shapes,
                      [&](int64_t o, const int64_t* i) { po[o] = pc[i[0]] ? pt[i[1]] : pe[i[2]]; });
  });
}

void add_n_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_numeric_v<T>) {
      using C = compute_t<T>;
      const int n_in = kc.num_inputs;
      std::vector<const T*> ins(static_cast<size_t>(n_in));
      for (int k = 0; k < n_in; ++k) ins[k] = kc.input(k).data<T>();
      T* po = kc.output(0).mutable_data<T>();
      kc.pool.parallel_for(kc.output(0).num_elements(), std::max<int64_t>(1, kElementwiseGrain / n_in),
                           [&](int64_t b, int64_t e) {
                             for (int64_t i = b; i < e; ++i) {
                               C s = widen(ins[0][i]);
                               for (int k = 1; k < n_in; ++k) {
                                 if constexpr (std::is_integral_v<C>)
                                   s = static_cast<C>(static_cast<uint64_t>(s) + static_cast<uint64_t>(ins[k][i]));
                                 else
                                   s += widen(ins[k][i]);
                               }
                               po[i] = convert<T>(s);
                             }
                           });
    } else {
      throw_unsupported_dtype(kc, kc.input(0).dtype());
    }
  });
}

CAIRN_REGISTER_KERNEL("Cast", DeviceKind::CPU, cast_kernel);
CAIRN_REGISTER_KERNEL("Identity", DeviceKind::CPU, identity_kernel);
CAIRN_REGISTER_KERNEL("StopGradient", DeviceKind::CPU, identity_kernel);
CAIRN_REGISTER_KERNEL("ZerosLike", DeviceKind::CPU, fill_like_kernel<0>);
CAIRN_REGISTER_KERNEL("OnesLike", DeviceKind::CPU, fill_like_kernel<1>);
CAIRN_REGISTER_KERNEL("ClipByValue", DeviceKind::CPU, clip_kernel);
CAIRN_REGISTER_KERNEL("SelectV2", DeviceKind::CPU, select_kernel);
CAIRN_REGISTER_KERNEL("AddN", DeviceKind::CPU, add_n_kernel);

}  // namespace
}  // namespace cairn
