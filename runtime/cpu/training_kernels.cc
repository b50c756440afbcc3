// CPU kernels for ops/training_ops.cc: one pass over the elements, each input element read once
// and each output element written once. Every arithmetic step rounds to T (`r`), in the order the
// op's summary gives, so float16/bfloat16 results match the unfused ops that round after each op.
#include <cmath>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "runtime/cpu/elementwise.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

// Rounds a computed value to the storage type T and widens it back (a no-op for float and double).
template <class T>
inline compute_t<T> r(compute_t<T> x) {
  if constexpr (is_half<T>::value) return widen(convert<T>(x));
  else return x;
}

template <class T>
compute_t<T> scalar_in(const KernelContext& kc, int i) {
  return widen(kc.input(i).data<T>()[0]);
}

// Calls body.template operator()<T>() for a floating dtype; other dtypes never pass validation.
template <class Body>
void visit_float(KernelContext& kc, Body&& body) {
  visit_dtype(kc.input(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) body(tag);
    else throw_unsupported_dtype(kc, kc.input(0).dtype());
  });
}

// f(b, e) for ranges of elements, split across the pool in fixed ranges.
template <class F>
void for_ranges(KernelContext& kc, F&& f) {
  kc.pool.parallel_for(kc.input(0).num_elements(), kElementwiseGrain, f);
}

template <class F>
void for_elements(KernelContext& kc, F&& f) {
  for_ranges(kc, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

struct AdamScalars {
  float alpha, one_minus_b1, one_minus_b2, b1, eps, wd, lr;
};

// Adam on float32 four elements at a time from `b`; returns where the scalar loop takes over. The
// same IEEE operations in the same order as the scalar loop (SSE's div and sqrt round correctly,
// and intrinsics are never contracted into fma), so the same bits.
template <bool adamw>
int64_t adam_f32_sse(int64_t b, int64_t e, const AdamScalars& s, bool nesterov, const float* var, const float* m,
                     const float* v, const float* g, float* var_out, float* m_out, float* v_out) {
#if defined(__SSE2__)
  const __m128 alpha = _mm_set1_ps(s.alpha), omb1 = _mm_set1_ps(s.one_minus_b1), omb2 = _mm_set1_ps(s.one_minus_b2);
  const __m128 b1 = _mm_set1_ps(s.b1), eps = _mm_set1_ps(s.eps), wd = _mm_set1_ps(s.wd), lr = _mm_set1_ps(s.lr);
  for (; b + 4 <= e; b += 4) {
    const __m128 gi = _mm_loadu_ps(g + b), mi = _mm_loadu_ps(m + b), vi = _mm_loadu_ps(v + b);
    __m128 x = _mm_loadu_ps(var + b);
    if constexpr (adamw) x = _mm_sub_ps(x, _mm_mul_ps(_mm_mul_ps(x, wd), lr));
    const __m128 m_new = _mm_add_ps(mi, _mm_mul_ps(_mm_sub_ps(gi, mi), omb1));
    const __m128 v_new = _mm_add_ps(vi, _mm_mul_ps(_mm_sub_ps(_mm_mul_ps(gi, gi), vi), omb2));
    _mm_storeu_ps(m_out + b, m_new);
    _mm_storeu_ps(v_out + b, v_new);
    const __m128 num = nesterov ? _mm_add_ps(_mm_mul_ps(m_new, b1), _mm_mul_ps(gi, omb1)) : m_new;
    _mm_storeu_ps(var_out + b, _mm_sub_ps(x, _mm_div_ps(_mm_mul_ps(num, alpha), _mm_add_ps(_mm_sqrt_ps(v_new), eps))));
  }
#endif
  return b;
}

void gradient_descent_kernel(KernelContext& kc) {
  visit_float(kc, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* var = kc.input(0).data<T>();
    const T* g = kc.input(2).data<T>();
    const auto alpha = scalar_in<T>(kc, 1);
    T* var_out = kc.output(0).mutable_data<T>();
    for_elements(kc, [&](int64_t i) { var_out[i] = convert<T>(widen(var[i]) - r<T>(alpha * widen(g[i]))); });
  });
}

// Inputs var, accum, lr, grad, momentum. `keras`: Keras' form (ApplyKerasMomentum), else TF's.
template <bool keras>
void momentum_kernel(KernelContext& kc) {
  const bool nesterov = kc.attrs.b("use_nesterov");
  visit_float(kc, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* var = kc.input(0).data<T>();
    const T* accum = kc.input(1).data<T>();
    const T* g = kc.input(3).data<T>();
    const auto lr = scalar_in<T>(kc, 2), momentum = scalar_in<T>(kc, 4);
    T* var_out = kc.output(0).mutable_data<T>();
    T* accum_out = kc.output(1).mutable_data<T>();
    for_elements(kc, [&](int64_t i) {
      const auto gi = widen(g[i]);
      if constexpr (keras) {
        const auto lr_g = r<T>(lr * gi);
        const auto a = r<T>(r<T>(momentum * widen(accum[i])) - lr_g);
        accum_out[i] = convert<T>(a);
        var_out[i] = convert<T>(widen(var[i]) + (nesterov ? r<T>(r<T>(momentum * a) - lr_g) : a));
      } else {
        const auto a = r<T>(r<T>(widen(accum[i]) * momentum) + gi);
        accum_out[i] = convert<T>(a);
        const auto step = nesterov ? r<T>(r<T>(gi * lr) + r<T>(r<T>(a * momentum) * lr)) : r<T>(lr * a);
        var_out[i] = convert<T>(widen(var[i]) - step);
      }
    });
  });
}

// Inputs var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, [weight_decay,] grad.
template <bool adamw>
void adam_kernel(KernelContext& kc) {
  const bool nesterov = !adamw && kc.attrs.b("use_nesterov");
  visit_float(kc, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* var = kc.input(0).data<T>();
    const T* m = kc.input(1).data<T>();
    const T* v = kc.input(2).data<T>();
    const T* g = kc.input(adamw ? 10 : 9).data<T>();
    const C b1p = scalar_in<T>(kc, 3), b2p = scalar_in<T>(kc, 4), lr = scalar_in<T>(kc, 5);
    const C b1 = scalar_in<T>(kc, 6), b2 = scalar_in<T>(kc, 7), eps = scalar_in<T>(kc, 8);
    const C wd = adamw ? scalar_in<T>(kc, 9) : C(0);
    const C alpha = r<T>(lr * r<T>(r<T>(std::sqrt(r<T>(C(1) - b2p))) / r<T>(C(1) - b1p)));
    const C one_minus_b1 = r<T>(C(1) - b1), one_minus_b2 = r<T>(C(1) - b2);
    T* var_out = kc.output(0).mutable_data<T>();
    T* m_out = kc.output(1).mutable_data<T>();
    T* v_out = kc.output(2).mutable_data<T>();
    for_ranges(kc, [&](int64_t b, int64_t e) {
      int64_t i = b;
      if constexpr (std::is_same_v<T, float>)
        i = adam_f32_sse<adamw>(b, e, {alpha, one_minus_b1, one_minus_b2, b1, eps, wd, lr}, nesterov, var, m, v, g,
                                var_out, m_out, v_out);
      for (; i < e; ++i) {
        const C gi = widen(g[i]), mi = widen(m[i]), vi = widen(v[i]);
        C x = widen(var[i]);
        if constexpr (adamw) x = r<T>(x - r<T>(r<T>(x * wd) * lr));
        const C m_new = r<T>(mi + r<T>(r<T>(gi - mi) * one_minus_b1));
        const C v_new = r<T>(vi + r<T>(r<T>(r<T>(gi * gi) - vi) * one_minus_b2));
        m_out[i] = convert<T>(m_new);
        v_out[i] = convert<T>(v_new);
        const C num = nesterov ? r<T>(r<T>(m_new * b1) + r<T>(gi * one_minus_b1)) : m_new;
        var_out[i] = convert<T>(x - r<T>(r<T>(num * alpha) / r<T>(r<T>(std::sqrt(v_new)) + eps)));
      }
    });
  });
}

// Inputs var, [mg,] ms, [mom,] lr, rho, [momentum,] epsilon, grad; outputs var, [mg,] ms, [mom].
// Without momentum (Keras' own formula) epsilon is added outside the root.
template <bool centered, bool with_momentum>
void rmsprop_kernel(KernelContext& kc) {
  constexpr int k = centered ? 1 : 0;       // inputs after var shift by one when mg is there
  constexpr int km = with_momentum ? 1 : 0;  // and after ms by one more when mom is
  visit_float(kc, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* var = kc.input(0).data<T>();
    const T* mg = centered ? kc.input(1).data<T>() : nullptr;
    const T* ms = kc.input(1 + k).data<T>();
    const T* mom = with_momentum ? kc.input(2 + k).data<T>() : nullptr;
    const T* g = kc.input(kc.num_inputs - 1).data<T>();
    const C lr = scalar_in<T>(kc, 2 + k + km), rho = scalar_in<T>(kc, 3 + k + km);
    const C momentum = with_momentum ? scalar_in<T>(kc, 4 + k + km) : C(0);
    const C eps = scalar_in<T>(kc, kc.num_inputs - 2);
    const C one_minus_rho = r<T>(C(1) - rho);
    T* var_out = kc.output(0).mutable_data<T>();
    T* mg_out = centered ? kc.output(1).mutable_data<T>() : nullptr;
    T* ms_out = kc.output(1 + k).mutable_data<T>();
    T* mom_out = with_momentum ? kc.output(2 + k).mutable_data<T>() : nullptr;
    for_elements(kc, [&](int64_t i) {
      const C gi = widen(g[i]);
      const C ms_new = r<T>(r<T>(rho * widen(ms[i])) + r<T>(one_minus_rho * r<T>(gi * gi)));
      ms_out[i] = convert<T>(ms_new);
      C denom = ms_new;
      if constexpr (centered) {
        const C mg_new = r<T>(r<T>(rho * widen(mg[i])) + r<T>(one_minus_rho * gi));
        mg_out[i] = convert<T>(mg_new);
        denom = r<T>(ms_new - r<T>(mg_new * mg_new));
      }
      if constexpr (with_momentum) {
        const C scaled = r<T>(r<T>(lr * gi) / r<T>(std::sqrt(r<T>(denom + eps))));
        const C mom_new = r<T>(r<T>(momentum * widen(mom[i])) + scaled);
        mom_out[i] = convert<T>(mom_new);
        var_out[i] = convert<T>(widen(var[i]) - mom_new);
      } else {
        var_out[i] = convert<T>(widen(var[i]) - r<T>(r<T>(lr * gi) / r<T>(r<T>(std::sqrt(denom)) + eps)));
      }
    });
  });
}

CAIRN_REGISTER_KERNEL("ApplyGradientDescent", DeviceKind::CPU, gradient_descent_kernel);
CAIRN_REGISTER_KERNEL("ApplyMomentum", DeviceKind::CPU, momentum_kernel<false>);
CAIRN_REGISTER_KERNEL("ApplyKerasMomentum", DeviceKind::CPU, momentum_kernel<true>);
CAIRN_REGISTER_KERNEL("ApplyAdam", DeviceKind::CPU, adam_kernel<false>);
CAIRN_REGISTER_KERNEL("ApplyAdamW", DeviceKind::CPU, adam_kernel<true>);
CAIRN_REGISTER_KERNEL("ApplyRMSProp", DeviceKind::CPU, (rmsprop_kernel<false, true>));
CAIRN_REGISTER_KERNEL("ApplyCenteredRMSProp", DeviceKind::CPU, (rmsprop_kernel<true, true>));
CAIRN_REGISTER_KERNEL("ApplyKerasRMSProp", DeviceKind::CPU, (rmsprop_kernel<false, false>));
CAIRN_REGISTER_KERNEL("ApplyKerasCenteredRMSProp", DeviceKind::CPU, (rmsprop_kernel<true, false>));

}  // namespace
}  // namespace cairn
