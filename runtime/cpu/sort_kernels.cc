// CPU kernels for ops/sort_ops.cc. Each line along the scanned/sorted axis is handled by one task,
// so results never depend on the thread count.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

#include "runtime/cpu/axis.h"
#include "runtime/cpu/elementwise.h"
#include "runtime/cpu/wide.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

// ---------------------------------------------------------------------------------------------
// Cumsum: sums accumulate in wide_t<T> (runtime/cpu/wide.h).

template <class T>
void cumsum(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (x.num_elements() == 0) return;
  const AxisSplit l = split_at_axis(x.shape(), kc.attrs.i("axis"), kc.op());
  const bool exclusive = kc.attrs.b("exclusive"), reverse = kc.attrs.b("reverse");
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  using A = wide_t<T>;
  constexpr int64_t kCols = 512;
  const int64_t chunks = (l.inner + kCols - 1) / kCols;
  const int64_t cols_max = std::min(l.inner, kCols);
  kc.pool.parallel_for(l.outer * chunks, std::max<int64_t>(1, 32768 / (l.n * cols_max)), [&](int64_t b, int64_t e) {
    std::vector<A> acc(static_cast<size_t>(cols_max));
    for (int64_t t = b; t < e; ++t) {
      const int64_t a = t / chunks, c0 = (t % chunks) * kCols, cols = std::min(kCols, l.inner - c0);
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t step = 0; step < l.n; ++step) {
        const int64_t i = reverse ? l.n - 1 - step : step;
        const int64_t off = (a * l.n + i) * l.inner + c0;
        for (int64_t j = 0; j < cols; ++j) {
          const A v = to_wide(in[off + j]);
          if (exclusive) {
            out[off + j] = from_wide<T>(acc[j]);
            acc[j] += v;
          } else {
            acc[j] += v;
            out[off + j] = from_wide<T>(acc[j]);
          }
        }
      }
    }
  });
}

void cumsum_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_numeric_v<T>) cumsum<T>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("Cumsum", DeviceKind::CPU, cumsum_kernel);

// ---------------------------------------------------------------------------------------------
// Orderings: NaN is larger than every number and equal to other NaNs.

template <class C>
bool nan_last_less(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// ---------------------------------------------------------------------------------------------
// TopKV2 along the last axis.

template <class T>
void top_k(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& values = kc.output(0);
  Tensor& indices = kc.output(1);
  if (values.num_elements() == 0) return;
  const int64_t n = x.shape()[x.rank() - 1];
  const int64_t k = values.shape()[values.rank() - 1];
  const int64_t rows = x.num_elements() / n;
  const T* in = x.data<T>();
  T* vo = values.mutable_data<T>();
  int32_t* io = indices.mutable_data<int32_t>();
  using C = compute_t<T>;
  kc.pool.parallel_for(rows, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
    std::vector<int32_t> idx(static_cast<size_t>(n));
    std::vector<C> v(static_cast<size_t>(n));
    for (int64_t r = b; r < e; ++r) {
      const T* row = in + r * n;
      for (int64_t i = 0; i < n; ++i) v[i] = widen(row[i]);
      std::iota(idx.begin(), idx.end(), 0);
      // Larger first; equal values by index: a strict total order, so the result is unique.
      auto before = [&](int32_t i, int32_t j) {
        if (nan_last_less(v[j], v[i])) return true;
        if (nan_last_less(v[i], v[j])) return false;
        return i < j;
      };
      if (k == n) std::sort(idx.begin(), idx.end(), before);
      else std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), before);
      for (int64_t i = 0; i < k; ++i) {
        vo[r * k + i] = row[idx[i]];
        io[r * k + i] = idx[i];
      }
    }
  });
}

void top_k_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_v<T>) top_k<T>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("TopKV2", DeviceKind::CPU, top_k_kernel);

// ---------------------------------------------------------------------------------------------
// Sort: a stable sort of each line; descending reverses the comparison, not the order of ties.

template <class T>
void sort(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (x.num_elements() == 0) return;
  const AxisSplit l = split_at_axis(x.shape(), kc.attrs.i("axis"), kc.op());
  const bool descending = kc.attrs.b("descending");
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  auto asc = [](const T& a, const T& b) { return nan_last_less(widen(a), widen(b)); };
  auto desc = [](const T& a, const T& b) { return nan_last_less(widen(b), widen(a)); };
  kc.pool.parallel_for(l.outer * l.inner, std::max<int64_t>(1, 8192 / l.n), [&](int64_t b, int64_t e) {
    std::vector<T> line(static_cast<size_t>(l.n));
    for (int64_t t = b; t < e; ++t) {
      const int64_t a = t / l.inner, j = t % l.inner;
      const int64_t base = a * l.n * l.inner + j;
      for (int64_t i = 0; i < l.n; ++i) line[i] = in[base + i * l.inner];
      if (descending) std::stable_sort(line.begin(), line.end(), desc);
      else std::stable_sort(line.begin(), line.end(), asc);
      for (int64_t i = 0; i < l.n; ++i) out[base + i * l.inner] = line[i];
    }
  });
}

void sort_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_v<T>) sort<T>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("Sort", DeviceKind::CPU, sort_kernel);

}  // namespace
}  // namespace cairn
