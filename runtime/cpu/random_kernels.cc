// CPU kernels for ops/random_ops.cc.
//
// Element i of the output comes from Philox block b = i / P (P = 4 for 32-bit-or-smaller floats,
// 2 for float64), slot s = i % P, with counter {b_lo, b_hi, attempt, 0}:
//   RandomUniform         float32: unit_float(w[s]); float16/bfloat16: 11/8 random bits of w[s];
//                         float64: unit_double(w[2s], w[2s+1])
//   RandomStandardNormal  32-bit and smaller: box_muller(w[2(s/2)], w[2(s/2)+1]), cos for even s,
//                         sin for odd s; float64: box_muller_53(w), cos for s = 0, sin for s = 1
//   TruncatedNormal       as RandomStandardNormal with attempt 0; while |x| > 2 the element
//                         recomputes its slot from attempt 1, 2, ...
// Work is split over blocks, so values do not depend on the thread count or chunking.
#include <cmath>

#include "runtime/core/philox.h"
#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

constexpr uint32_t kMaxAttempts = 256;  // P(|x| > 2) ~ 0.0455: 256 misses in a row never happens

template <class T>
constexpr int64_t per_block() {
  return std::is_same_v<T, double> ? 2 : 4;
}

template <class T>
T uniform_value(const philox::Counter& w, int s) {
  if constexpr (std::is_same_v<T, double>) return philox::unit_double(w[2 * s], w[2 * s + 1]);
  else if constexpr (std::is_same_v<T, float>) return philox::unit_float(w[s]);
  else if constexpr (std::is_same_v<T, float16>) return float16(philox::unit_float_bits(w[s], 11));
  else return bfloat16(philox::unit_float_bits(w[s], 8));
}

template <class T>
double normal_value(const philox::Counter& w, int s) {
  double z0, z1;
  if constexpr (std::is_same_v<T, double>) {
    philox::box_muller_53(w, &z0, &z1);
    return s == 0 ? z0 : z1;
  } else {
    const int p = s / 2;
    philox::box_muller(w[2 * p], w[2 * p + 1], &z0, &z1);
    return s % 2 == 0 ? z0 : z1;
  }
}

enum class Dist { Uniform, Normal, Truncated };

template <class T, Dist D>
void generate(KernelContext& kc) {
  Tensor& y = kc.output(0);
  const int64_t n = y.num_elements();
  if (n == 0) return;
  T* out = y.mutable_data<T>();
  const philox::Key key = philox::op_key(kc.attrs.i("seed"), kc.attrs.i("seed2"), kc.random_seed);
  constexpr int64_t P = per_block<T>();
  const int64_t blocks = (n + P - 1) / P;
  kc.pool.parallel_for(blocks, 1024, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const philox::Counter w = philox::philox4x32_10(philox::counter_for(static_cast<uint64_t>(b)), key);
      const int64_t first = b * P;
      const int slots = static_cast<int>(std::min<int64_t>(P, n - first));
      for (int s = 0; s < slots; ++s) {
        if constexpr (D == Dist::Uniform) {
          out[first + s] = uniform_value<T>(w, s);
        } else {
          double z = normal_value<T>(w, s);
          if constexpr (D == Dist::Truncated) {
            for (uint32_t attempt = 1; std::fabs(z) > 2.0; ++attempt) {
              if (attempt == kMaxAttempts) {
                z = 0;
                break;
              }
              z = normal_value<T>(philox::philox4x32_10(philox::counter_for(static_cast<uint64_t>(b), attempt), key), s);
            }
          }
          out[first + s] = convert<T>(z);
        }
      }
    }
  });
}

template <Dist D>
void random_kernel(KernelContext& kc) {
  visit_dtype(kc.output(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) generate<T, D>(kc);
    else throw_unsupported_dtype(kc, kc.output(0).dtype());
  });
}

CAIRN_REGISTER_KERNEL("RandomUniform", DeviceKind::CPU, random_kernel<Dist::Uniform>);
CAIRN_REGISTER_KERNEL("RandomStandardNormal", DeviceKind::CPU, random_kernel<Dist::Normal>);
CAIRN_REGISTER_KERNEL("TruncatedNormal", DeviceKind::CPU, random_kernel<Dist::Truncated>);

}  // namespace
}  // namespace cairn
