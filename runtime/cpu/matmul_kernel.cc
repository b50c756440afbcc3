// MatMul on the CPU: float32, float64 and complex64 go to BLAS (OpenBLAS through xtensor-blas's
// cxxblas layer); 16-bit floats and integers use a blocked loop that accumulates in compute_t.
#include <xtensor-blas/xlinalg.hpp>

#include "runtime/cpu/elementwise.h"
#include "runtime/cpu/wide.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

template <class T>
constexpr bool kBlas = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex64>;

template <class T>
void gemm_one(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  if (m == 0 || n == 0) return;
  if constexpr (kBlas<T>) {
    if (k == 0) {
      std::fill(c, c + m * n, T(0));
      return;
    }
    const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
    cxxblas::gemm<int>(cxxblas::RowMajor, ta ? cxxblas::Trans : cxxblas::NoTrans, tb ? cxxblas::Trans : cxxblas::NoTrans,
                       static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), T(1), a, lda, b, ldb, T(0), c,
                       static_cast<int>(n));
  } else {
    // Integers wrap on overflow (documented), so they accumulate in uint64_t (wide_t), where
    // wrapping is defined: int32/int64 products and sums would be undefined behaviour in T, and
    // narrower types promote to int, where uint16 * uint16 can overflow too. The low bits of the
    // unsigned result are the two's-complement wrap-around in T. 16-bit floats use float.
    using C = std::conditional_t<std::is_integral_v<T>, wide_t<T>, compute_t<T>>;
    auto load = [](T v) -> C {
      if constexpr (std::is_integral_v<T>) return to_wide(v);
      else return widen(v);
    };
    std::vector<C> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), C(0));
      for (int64_t p = 0; p < k; ++p) {
        C av = load(ta ? a[p * m + i] : a[i * k + p]);
        if (av == C(0)) continue;
        if (tb) {
          for (int64_t j = 0; j < n; ++j) row[j] += av * load(b[j * k + p]);
        } else {
          const T* brow = b + p * n;
          for (int64_t j = 0; j < n; ++j) row[j] += av * load(brow[j]);
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (std::is_integral_v<T>) c[i * n + j] = from_wide<T>(row[j]);
        else c[i * n + j] = convert<T>(row[j]);
      }
    }
  }
}

// Offset (in matrices) of batch `index` of the output within an input with batch shape `in`.
int64_t batch_offset(int64_t index, const Shape& out_batch, const Shape& in_batch) {
  int64_t offset = 0, stride = 1, rem = index;
  int shift = out_batch.rank() - in_batch.rank();
  for (int d = out_batch.rank() - 1; d >= 0; --d) {
    int64_t coord = rem % out_batch[d];
    rem /= out_batch[d];
    int j = d - shift;
    if (j < 0) continue;
    if (in_batch[j] != 1) offset += coord * stride;
    stride *= in_batch[j];
  }
  return offset;
}

Shape batch_of(const Shape& s) {
  Shape b;
  for (int i = 0; i < s.rank() - 2; ++i) b.push_back(s[i]);
  return b;
}

template <class T>
void matmul(KernelContext& kc) {
  const Tensor& a = kc.input(0);
  const Tensor& b = kc.input(1);
  Tensor& out = kc.output(0);
  // An empty output is a batch of empty products, however many (float32[2^40,0,1] x [1,1]): the
  // batch loop would run for hours doing nothing.
  if (out.num_elements() == 0) return;
  const bool ta = kc.attrs.b("transpose_a"), tb = kc.attrs.b("transpose_b");
  const int ra = a.rank(), ro = out.rank();
  const int64_t m = out.shape()[ro - 2], n = out.shape()[ro - 1];
  const int64_t k = ta ? a.shape()[ra - 2] : a.shape()[ra - 1];
  const Shape out_batch = batch_of(out.shape()), a_batch = batch_of(a.shape()), b_batch = batch_of(b.shape());
  const int64_t batches = out_batch.num_elements();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.mutable_data<T>();
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      gemm_one(pa + batch_offset(i, out_batch, a_batch) * m * k, pb + batch_offset(i, out_batch, b_batch) * k * n,
               pc + i * m * n, m, n, k, ta, tb);
  };
  // BLAS threads internally; batches of small matrices use the pool instead.
  if (kBlas<T> && m * n * k >= 64 * 64 * 64) run(0, batches);
  else kc.pool.parallel_for(batches, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, m * n * k)), run);
}

void matmul_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_numeric_v<T>) matmul<T>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("MatMul", DeviceKind::CPU, matmul_kernel);

}  // namespace
}  // namespace cairn
