// CPU kernels for the reductions in ops/reduce_ops.cc.
//
// The input's axes are collapsed (size-1 axes dropped, neighbours of the same kind merged) into one
// of three layouts:
//   rows     [outer, R]          each output reduces one contiguous row
//   columns  [outer, R, inner]   each output reduces a strided column; a row of outputs at a time
//   generic  anything else       each output walks its reduced elements with an odometer
// Every output's value is a fixed function of the shape: rows and columns are cut into blocks of a
// fixed size, each block is reduced in a fixed order, and block results are combined left to
// right. Threads only decide who computes which block, so results never depend on the thread count.
// Inside a block of a row, element i folds into lane i % kLanes and the lanes combine in a fixed
// tree; float32/float64 Sum, Mean, Prod, Max and Min fold whole xsimd batches of lanes at a time
// (runtime/cpu/simd.h). The lane count is fixed (not the batch width), so results do not depend on
// the instruction set either.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "runtime/cpu/axis.h"
#include "runtime/cpu/elementwise.h"
#include "runtime/cpu/simd.h"
#include "runtime/cpu/wide.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

// Elements per block of a contiguous row, and rows per block of a column reduction.
constexpr int64_t kRowBlock = 4096;
constexpr int64_t kColBlock = 512;
// Columns handled together by one task of a column reduction: 16 KB of float32 per row, so a task
// reads 4 contiguous pages per row (1,024 columns, one page per row, measured 1.5x slower:
// the hardware prefetcher stops at page boundaries).
constexpr int64_t kColChunk = 4096;

// ---------------------------------------------------------------------------------------------
// Reducers: init, step (fold in one element), combine (merge two partial results), finish.
// Sums and products accumulate in wide_t<T> (runtime/cpu/wide.h). A reducer with `simd = true`
// has a combine that also compiles for xsimd batches of Acc, and step(a, v) == combine(a, Acc(v)),
// so a batch of loaded elements folds in with combine.

template <class T>
struct SumR {
  using Acc = wide_t<T>;
  static constexpr bool simd = true;
  static Acc init() { return Acc(0); }
  static Acc step(Acc a, T v) { return a + to_wide(v); }
  template <class V>
  static V combine(V a, V b) { return a + b; }
  static T finish(Acc a, int64_t) { return from_wide<T>(a); }
};

template <class T>
struct MeanR : SumR<T> {
  using Acc = wide_t<T>;
  static T finish(Acc a, int64_t n) {
    if constexpr (is_complex_v<T>) {
      if (n == 0) return complex64(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN());
      return from_wide<T>(a / static_cast<double>(n));
    } else if constexpr (is_float_v<T>) {
      if (n == 0) return convert<T>(std::numeric_limits<double>::quiet_NaN());
      return convert<T>(a / static_cast<double>(n));
    } else {
      if (n == 0) return T(0);
      if constexpr (std::is_signed_v<T>) return static_cast<T>(static_cast<int64_t>(a) / n);  // truncates
      else return static_cast<T>(a / static_cast<uint64_t>(n));
    }
  }
};

template <class T>
struct ProdR {
  using Acc = wide_t<T>;
  static constexpr bool simd = true;
  static Acc init() { return Acc(1); }
  static Acc step(Acc a, T v) { return a * to_wide(v); }
  template <class V>
  static V combine(V a, V b) { return a * b; }
  static T finish(Acc a, int64_t) { return from_wide<T>(a); }
};

template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

// is_nan for a scalar or the lanes of a batch.
template <class V>
auto nan_mask(V v) {
  if constexpr (is_batch_v<V>) return xsimd::isnan(v);
  else return is_nan(v);
}

template <class T>
struct MaxR {
  using Acc = compute_t<T>;
  static Acc init() {
    if constexpr (std::is_floating_point_v<Acc>) return -std::numeric_limits<Acc>::infinity();
    else return std::numeric_limits<Acc>::lowest();
  }
  static constexpr bool simd = true;
  template <class V>
  static V combine(V a, V b) { return pick((b > a) | nan_mask(b), b, a); }  // NaN wins
  static Acc step(Acc a, T v) { return combine(a, widen(v)); }
  static T finish(Acc a, int64_t) { return convert<T>(a); }
};

template <class T>
struct MinR {
  using Acc = compute_t<T>;
  static Acc init() {
    if constexpr (std::is_floating_point_v<Acc>) return std::numeric_limits<Acc>::infinity();
    else return std::numeric_limits<Acc>::max();
  }
  static constexpr bool simd = true;
  template <class V>
  static V combine(V a, V b) { return pick((b < a) | nan_mask(b), b, a); }
  static Acc step(Acc a, T v) { return combine(a, widen(v)); }
  static T finish(Acc a, int64_t) { return convert<T>(a); }
};

template <class T>
struct AllR {
  using Acc = uint8_t;  // not bool: partial results live in std::vector
  static Acc init() { return 1; }
  static Acc step(Acc a, T v) { return a & static_cast<Acc>(v); }
  static Acc combine(Acc a, Acc b) { return a & b; }
  static T finish(Acc a, int64_t) { return a != 0; }
};

template <class T>
struct AnyR {
  using Acc = uint8_t;
  static Acc init() { return 0; }
  static Acc step(Acc a, T v) { return a | static_cast<Acc>(v); }
  static Acc combine(Acc a, Acc b) { return a | b; }
  static T finish(Acc a, int64_t) { return a != 0; }
};

// ---------------------------------------------------------------------------------------------
// Layout

enum class Layout { Rows, Columns, Generic };

struct Plan {
  Layout layout = Layout::Rows;
  int64_t outer = 1, r = 1, inner = 1;  // rows: [outer, r]; columns: [outer, r, inner]
  // generic: collapsed groups with element strides
  int n_kept = 0, n_red = 0;
  int64_t kept_dim[kMaxRank], kept_stride[kMaxRank], red_dim[kMaxRank], red_stride[kMaxRank];
};

Plan make_plan(const Shape& in, const bool* mask) {
  int64_t size[kMaxRank];
  bool red[kMaxRank];
  int n = 0;
  for (int i = 0; i < in.rank(); ++i) {
    if (in[i] == 1) continue;
    if (n > 0 && red[n - 1] == mask[i]) {
      size[n - 1] *= in[i];
    } else {
      size[n] = in[i];
      red[n] = mask[i];
      ++n;
    }
  }
  Plan p;
  if (n == 0) return p;  // one element
  if (n == 1) {
    p.layout = Layout::Rows;
    if (red[0]) p.r = size[0];
    else p.outer = size[0];
    return p;
  }
  if (n == 2 && !red[0]) {
    p.layout = Layout::Rows;
    p.outer = size[0];
    p.r = size[1];
    return p;
  }
  if (n == 2 || (n == 3 && !red[0])) {
    p.layout = Layout::Columns;
    if (n == 2) {
      p.r = size[0];
      p.inner = size[1];
    } else {
      p.outer = size[0];
      p.r = size[1];
      p.inner = size[2];
    }
    return p;
  }
  p.layout = Layout::Generic;
  int64_t stride = 1;
  int64_t strides[kMaxRank];
  for (int g = n - 1; g >= 0; --g) {
    strides[g] = stride;
    stride *= size[g];
  }
  for (int g = 0; g < n; ++g) {
    if (red[g]) {
      p.red_dim[p.n_red] = size[g];
      p.red_stride[p.n_red++] = strides[g];
    } else {
      p.kept_dim[p.n_kept] = size[g];
      p.kept_stride[p.n_kept++] = strides[g];
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Rows: kLanes interleaved lanes inside a block, blocks combined left to right.

// Lanes of a block: enough independent accumulators to hide the add latency, and a multiple of
// every batch width (SSE2 to AVX-512), so the lane a given element folds into is fixed.
constexpr int64_t kLanes = 8;

// Whether float rows and columns of T fold batches with R (see the reducers above).
template <class R, class T>
constexpr bool simd_reduce_v = has_simd_v<R> && is_simd_float_v<T>;

// The kLanes lanes combined pairwise: ((l0 l1) (l2 l3)) ((l4 l5) (l6 l7)).
template <class R, class Acc>
Acc combine_lanes(const Acc* lane) {
  return R::combine(R::combine(R::combine(lane[0], lane[1]), R::combine(lane[2], lane[3])),
                    R::combine(R::combine(lane[4], lane[5]), R::combine(lane[6], lane[7])));
}

template <class R, class T>
typename R::Acc reduce_block(const T* p, int64_t n) {
  using Acc = typename R::Acc;
  alignas(64) Acc lane[kLanes];
  int64_t i = 0;
  if constexpr (simd_reduce_v<R, T>) {
    using V = Batch<Acc>;  // loads convert float32 to a float64 accumulator when Acc is double
    constexpr int64_t kBatches = kLanes / V::size;
    static_assert(kLanes % V::size == 0, "a lane group is whole batches");
    V acc[kBatches];
    for (V& a : acc) a = V(R::init());
    for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 8  // keeps the accumulators in registers
      for (int64_t b = 0; b < kBatches; ++b) acc[b] = R::combine(acc[b], V::load_unaligned(p + i + b * V::size));
    }
    for (int64_t b = 0; b < kBatches; ++b) acc[b].store_aligned(lane + b * V::size);
  } else {
    for (Acc& a : lane) a = R::init();
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t u = 0; u < kLanes; ++u) lane[u] = R::step(lane[u], p[i + u]);
  }
  for (int64_t u = 0; i < n; ++i, ++u) lane[u] = R::step(lane[u], p[i]);
  return combine_lanes<R>(lane);
}

template <class R, class T>
typename R::Acc reduce_row(const T* p, int64_t n) {
  typename R::Acc total = R::init();
  for (int64_t b = 0; b < n; b += kRowBlock) total = R::combine(total, reduce_block<R>(p + b, std::min(kRowBlock, n - b)));
  return total;
}

template <class R, class T>
void reduce_rows(KernelContext& kc, const T* in, T* out, int64_t outer, int64_t r) {
  using Acc = typename R::Acc;
  const int64_t blocks = (r + kRowBlock - 1) / kRowBlock;
  if (outer >= 64 || blocks <= 1) {
    kc.pool.parallel_for(outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, r)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = R::finish(reduce_row<R>(in + o * r, r), r);
    });
    return;
  }
  // Few long rows: blocks in parallel, then each row's blocks combined in order (the same result
  // as reduce_row).
  std::vector<Acc> partial(static_cast<size_t>(outer * blocks));
  kc.pool.parallel_for(outer * blocks, 4, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, k = t % blocks;
      const int64_t start = k * kRowBlock;
      partial[t] = reduce_block<R>(in + o * r + start, std::min(kRowBlock, r - start));
    }
  });
  for (int64_t o = 0; o < outer; ++o) {
    Acc total = R::init();
    for (int64_t k = 0; k < blocks; ++k) total = R::combine(total, partial[o * blocks + k]);
    out[o] = R::finish(total, r);
  }
}

// ---------------------------------------------------------------------------------------------
// Columns: [outer, r, inner]. Each task owns up to kColChunk adjacent outputs and one block of
// kColBlock rows; a column's block results are combined in row order.

// Columns [c0, c0 + cols) of rows [r0, r1) of slab `a`, folded into acc[0, cols) in row order. Rows
// are swept whole (the accumulators stay in the L1 cache): reading down a column instead crosses
// a page per element and measured slower.
template <class R, class T>
void column_block(const T* __restrict in, int64_t r, int64_t inner, int64_t a, int64_t c0, int64_t cols, int64_t r0,
                  int64_t r1, typename R::Acc* __restrict acc) {
  for (int64_t j = 0; j < cols; ++j) acc[j] = R::init();
  for (int64_t i = r0; i < r1; ++i) {
    const T* __restrict row = in + (a * r + i) * inner + c0;
    int64_t j = 0;
    if constexpr (simd_reduce_v<R, T>) {
      using V = Batch<typename R::Acc>;
      for (; j + static_cast<int64_t>(V::size) <= cols; j += V::size)
        R::combine(V::load_unaligned(acc + j), V::load_unaligned(row + j)).store_unaligned(acc + j);
    } else {
      for (; j + 8 <= cols; j += 8)  // fixed-size groups so the compiler vectorizes at -O2
        for (int u = 0; u < 8; ++u) acc[j + u] = R::step(acc[j + u], row[j + u]);
    }
    for (; j < cols; ++j) acc[j] = R::step(acc[j], row[j]);
  }
}

template <class R, class T>
void reduce_columns(KernelContext& kc, const T* in, T* out, int64_t outer, int64_t r, int64_t inner) {
  using Acc = typename R::Acc;
  const int64_t chunks = (inner + kColChunk - 1) / kColChunk;
  const int64_t tasks = outer * chunks;
  const int64_t blocks = (r + kColBlock - 1) / kColBlock;
  auto task_cols = [&](int64_t t, int64_t* a, int64_t* c0) {
    *a = t / chunks;
    *c0 = (t % chunks) * kColChunk;
    return std::min(kColChunk, inner - *c0);
  };
  if (tasks >= 64 || blocks <= 1) {
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, r * std::min(kColChunk, inner)));
    kc.pool.parallel_for(tasks, grain, [&](int64_t b, int64_t e) {
      std::vector<Acc> total(kColChunk), acc(kColChunk);
      for (int64_t t = b; t < e; ++t) {
        int64_t a, c0;
        const int64_t cols = task_cols(t, &a, &c0);
        for (int64_t j = 0; j < cols; ++j) total[j] = R::init();
        for (int64_t k = 0; k < blocks; ++k) {
          column_block<R>(in, r, inner, a, c0, cols, k * kColBlock, std::min(r, (k + 1) * kColBlock), acc.data());
          for (int64_t j = 0; j < cols; ++j) total[j] = R::combine(total[j], acc[j]);
        }
        for (int64_t j = 0; j < cols; ++j) out[a * inner + c0 + j] = R::finish(total[j], r);
      }
    });
    return;
  }
  // Few tall columns: row blocks in parallel, combined in order afterwards.
  std::vector<Acc> partial(static_cast<size_t>(tasks * blocks * kColChunk));
  kc.pool.parallel_for(tasks * blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t t = u / blocks, k = u % blocks;
      int64_t a, c0;
      const int64_t cols = task_cols(t, &a, &c0);
      column_block<R>(in, r, inner, a, c0, cols, k * kColBlock, std::min(r, (k + 1) * kColBlock),
                      partial.data() + u * kColChunk);
    }
  });
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t a, c0;
    const int64_t cols = task_cols(t, &a, &c0);
    for (int64_t j = 0; j < cols; ++j) {
      Acc total = R::init();
      for (int64_t k = 0; k < blocks; ++k) total = R::combine(total, partial[(t * blocks + k) * kColChunk + j]);
      out[a * inner + c0 + j] = R::finish(total, r);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Generic: each output walks its reduced elements in row-major order.

template <class R, class T>
void reduce_generic(KernelContext& kc, const T* in, T* out, const Plan& p, int64_t num_out, int64_t r) {
  kc.pool.parallel_for(num_out, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, r)), [&](int64_t b, int64_t e) {
    int64_t coord[kMaxRank];
    for (int64_t o = b; o < e; ++o) {
      int64_t base = 0, rem = o;
      for (int g = p.n_kept - 1; g >= 0; --g) {
        base += (rem % p.kept_dim[g]) * p.kept_stride[g];
        rem /= p.kept_dim[g];
      }
      for (int g = 0; g < p.n_red; ++g) coord[g] = 0;
      const int last = p.n_red - 1;
      const int64_t last_dim = p.red_dim[last], last_stride = p.red_stride[last];
      typename R::Acc acc = R::init();
      int64_t offset = base;
      for (;;) {
        for (int64_t i = 0; i < last_dim; ++i) acc = R::step(acc, in[offset + i * last_stride]);
        int g = last - 1;
        for (; g >= 0; --g) {
          offset += p.red_stride[g];
          if (++coord[g] < p.red_dim[g]) break;
          offset -= coord[g] * p.red_stride[g];
          coord[g] = 0;
        }
        if (g < 0) break;
      }
      out[o] = R::finish(acc, r);
    }
  });
}

template <class R, class T>
void reduce(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  const int64_t num_out = y.num_elements();
  if (num_out == 0) return;
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  const int64_t r = x.num_elements() / num_out;  // when the input is empty, every output is empty too
  if (x.num_elements() == 0) {
    const T v = R::finish(R::init(), 0);
    std::fill(out, out + num_out, v);
    return;
  }
  const AttrValue& axis = kc.attrs.get("axis");
  bool mask[kMaxRank];
  reduction_axes_mask(x.shape(), axis.ints, axis.n_ints, kc.op(), mask);
  const Plan p = make_plan(x.shape(), mask);
  switch (p.layout) {
    case Layout::Rows: reduce_rows<R>(kc, in, out, p.outer, p.r); break;
    case Layout::Columns: reduce_columns<R>(kc, in, out, p.outer, p.r, p.inner); break;
    case Layout::Generic: reduce_generic<R>(kc, in, out, p, num_out, r); break;
  }
}

enum class Domain { Number, Real, Bool };

template <template <class> class R, Domain D>
void reduce_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr bool ok = D == Domain::Bool ? is_bool_v<T> : D == Domain::Real ? is_real_v<T> : is_numeric_v<T>;
    if constexpr (ok) reduce<R<T>, T>(kc);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("Sum", DeviceKind::CPU, (reduce_kernel<SumR, Domain::Number>));
CAIRN_REGISTER_KERNEL("Mean", DeviceKind::CPU, (reduce_kernel<MeanR, Domain::Number>));
CAIRN_REGISTER_KERNEL("Prod", DeviceKind::CPU, (reduce_kernel<ProdR, Domain::Number>));
CAIRN_REGISTER_KERNEL("Max", DeviceKind::CPU, (reduce_kernel<MaxR, Domain::Real>));
CAIRN_REGISTER_KERNEL("Min", DeviceKind::CPU, (reduce_kernel<MinR, Domain::Real>));
CAIRN_REGISTER_KERNEL("All", DeviceKind::CPU, (reduce_kernel<AllR, Domain::Bool>));
CAIRN_REGISTER_KERNEL("Any", DeviceKind::CPU, (reduce_kernel<AnyR, Domain::Bool>));

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin along one axis: [outer, n, inner]. The first index of the best value wins; a NaN
// beats every number (the first NaN wins), like NumPy.

template <bool kMax, class C>
bool better(C v, C best) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  return kMax ? v > best : v < best;
}

template <bool kMax, class T, class I>
void arg_reduce(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0) return;
  const AxisSplit sp = split_at_axis(x.shape(), kc.attrs.i("axis"), kc.op());
  const int64_t outer = sp.outer, n = sp.n, inner = sp.inner;
  const T* in = x.data<T>();
  I* out = y.mutable_data<I>();
  using C = compute_t<T>;
  if (inner == 1) {
    kc.pool.parallel_for(outer, std::max<int64_t>(1, 32768 / n), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = in + o * n;
        C best = widen(row[0]);
        int64_t at = 0;
        for (int64_t i = 1; i < n; ++i) {
          C v = widen(row[i]);
          if (better<kMax>(v, best)) {
            best = v;
            at = i;
          }
        }
        out[o] = static_cast<I>(at);
      }
    });
    return;
  }
  const int64_t chunks = (inner + kColChunk - 1) / kColChunk;
  kc.pool.parallel_for(outer * chunks, std::max<int64_t>(1, 32768 / (n * std::min(inner, kColChunk))),
                       [&](int64_t b, int64_t e) {
                         std::vector<C> best(kColChunk);
                         std::vector<int64_t> at(kColChunk);
                         for (int64_t t = b; t < e; ++t) {
                           const int64_t a = t / chunks, c0 = (t % chunks) * kColChunk;
                           const int64_t cols = std::min(kColChunk, inner - c0);
                           const T* base = in + a * n * inner + c0;
                           for (int64_t j = 0; j < cols; ++j) {
                             best[j] = widen(base[j]);
                             at[j] = 0;
                           }
                           for (int64_t i = 1; i < n; ++i) {
                             const T* row = base + i * inner;
                             for (int64_t j = 0; j < cols; ++j) {
                               C v = widen(row[j]);
                               if (better<kMax>(v, best[j])) {
                                 best[j] = v;
                                 at[j] = i;
                               }
                             }
                           }
                           for (int64_t j = 0; j < cols; ++j) out[a * inner + c0 + j] = static_cast<I>(at[j]);
                         }
                       });
}

template <bool kMax>
void arg_kernel(KernelContext& kc) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_v<T>) {
      if (kc.output(0).dtype() == DType::Int32) arg_reduce<kMax, T, int32_t>(kc);
      else arg_reduce<kMax, T, int64_t>(kc);
    } else {
      throw_unsupported_dtype(kc, kc.input(0).dtype());
    }
  });
}

CAIRN_REGISTER_KERNEL("ArgMax", DeviceKind::CPU, arg_kernel<true>);
CAIRN_REGISTER_KERNEL("ArgMin", DeviceKind::CPU, arg_kernel<false>);

}  // namespace
}  // namespace cairn
