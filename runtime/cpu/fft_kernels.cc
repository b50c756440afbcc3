// CPU kernels for ops/fft_ops.cc with kissfft (mixed-radix, any length). Every transform is a
// set of 1-D complex transforms along "lines": elements (o * n + k) * inner + i for k < n, one line
// per (o, i). 2-D transforms run the innermost dimension, then the one before it. The real
// transforms go through complex buffers: RFFT keeps the non-negative frequencies; IRFFT extends
// its half spectrum to a Hermitian one (imaginary parts of the DC and Nyquist terms ignored, as
// in NumPy and TensorFlow) and keeps the real part.
#include <kissfft/kiss_fft.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/cpu/axis.h"
#include "runtime/ops/registry.h"
#include "runtime/tensor/tensor.h"

namespace cairn {
namespace {

static_assert(sizeof(kiss_fft_cpx) == sizeof(complex64), "kissfft's complex is two floats");

// kissfft plans hold twiddle factors; they are built once per (length, direction) and shared
// (kiss_fft only reads the plan, so threads may use one plan at once).
kiss_fft_cfg plan(int64_t n, bool inverse) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, bool>, std::unique_ptr<void, void (*)(void*)>> plans;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(n, inverse);
  auto it = plans.find(key);
  if (it == plans.end()) {
    kiss_fft_cfg cfg = kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr);
    if (!cfg) raise(Code::ResourceExhausted, "FFT: cannot allocate a kissfft plan of length {}", n);
    it = plans.emplace(key, std::unique_ptr<void, void (*)(void*)>(cfg, kiss_fft_free)).first;
  }
  return static_cast<kiss_fft_cfg>(it->second.get());
}

// In-place 1-D transforms of every line of `data` viewed as [outer, n, inner].
void fft_lines(ThreadPool& pool, complex64* data, int64_t outer, int64_t n, int64_t inner, bool inverse) {
  if (n <= 1 || outer * inner == 0) return;
  kiss_fft_cfg cfg = plan(n, inverse);
  pool.parallel_for(outer * inner, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
    std::vector<complex64> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
    for (int64_t line = b; line < e; ++line) {
      complex64* base = data + (line / inner) * n * inner + line % inner;
      for (int64_t k = 0; k < n; ++k) in[static_cast<size_t>(k)] = base[k * inner];
      kiss_fft(cfg, reinterpret_cast<const kiss_fft_cpx*>(in.data()), reinterpret_cast<kiss_fft_cpx*>(out.data()));
      for (int64_t k = 0; k < n; ++k) base[k * inner] = out[static_cast<size_t>(k)];
    }
  });
}

// Transforms the innermost `rank` dimensions of `data` (shape `s`); inverse ones are scaled.
void fft_nd(ThreadPool& pool, complex64* data, const Shape& s, int rank, bool inverse) {
  int r = s.rank();
  int64_t total = s.num_elements();
  for (int k = 0; k < rank; ++k) {
    int axis = r - 1 - k;
    fft_lines(pool, data, product(s, 0, axis), s[axis], product(s, axis + 1, r), inverse);
  }
  if (inverse && total > 0) {
    float scale = 1.0f / static_cast<float>(product(s, r - rank, r));
    for (int64_t i = 0; i < total; ++i) data[i] *= scale;
  }
}

// Copies the innermost two dimensions of `src` (shape [outer, rows_in, cols_in]) into `dst`
// ([outer, rows_out, cols_out]), cropping or padding with zeros. 1-D data has one row.
template <class S, class D>
void resize_inner(const S* src, int64_t outer, int64_t rows_in, int64_t cols_in, D* dst, int64_t rows_out,
                  int64_t cols_out) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < rows_out; ++r) {
      D* row = dst + (o * rows_out + r) * cols_out;
      for (int64_t c = 0; c < cols_out; ++c)
        row[c] = (r < rows_in && c < cols_in) ? D(src[(o * rows_in + r) * cols_in + c]) : D(0);
    }
}

// The innermost (rows, cols) of a shape for a `rank`-D transform (rows = 1 for 1-D).
struct Inner {
  int64_t outer, rows, cols;
};
Inner inner_of(const Shape& s, int rank) {
  int r = s.rank();
  return {product(s, 0, r - rank), rank == 2 ? s[r - 2] : 1, s[r - 1]};
}

template <int Rank, bool Inverse>
void complex_fft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (x.num_elements() == 0) return;
  complex64* out = y.mutable_data<complex64>();
  std::memcpy(out, x.data<complex64>(), x.nbytes());
  fft_nd(kc.pool, out, x.shape(), Rank, Inverse);
}

template <int Rank>
void rfft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0) return;
  std::vector<int64_t> len = kc.attrs.ints("fft_length");
  Inner in = inner_of(x.shape(), Rank);
  int64_t rows = Rank == 2 ? len[0] : 1, cols = len[Rank - 1];
  // The full complex spectrum of the cropped or padded signal, then its first cols / 2 + 1 columns.
  std::vector<complex64> full(static_cast<size_t>(in.outer * rows * cols));
  resize_inner(x.data<float>(), in.outer, in.rows, in.cols, full.data(), rows, cols);
  Shape fs = y.shape();
  fs.set_dim(fs.rank() - 1, cols);
  fft_nd(kc.pool, full.data(), fs, Rank, false);
  resize_inner(full.data(), in.outer * rows, 1, cols, y.mutable_data<complex64>(), 1, cols / 2 + 1);
}

template <int Rank>
void irfft_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  if (y.num_elements() == 0) return;
  std::vector<int64_t> len = kc.attrs.ints("fft_length");
  Inner in = inner_of(x.shape(), Rank);
  int64_t rows = Rank == 2 ? len[0] : 1, cols = len[Rank - 1], half = cols / 2 + 1;
  // The half spectrum, cropped or padded; 2-D: the inverse along the rows first.
  std::vector<complex64> spec(static_cast<size_t>(in.outer * rows * half));
  resize_inner(x.data<complex64>(), in.outer, in.rows, in.cols, spec.data(), rows, half);
  if (Rank == 2) fft_lines(kc.pool, spec.data(), in.outer, rows, half, true);
  // Each row: Hermitian extension to cols points, inverse transform, real part.
  std::vector<complex64> full(static_cast<size_t>(in.outer * rows * cols));
  for (int64_t line = 0; line < in.outer * rows; ++line) {
    const complex64* h = spec.data() + line * half;
    complex64* f = full.data() + line * cols;
    for (int64_t k = 0; k < half; ++k) f[k] = h[k];
    f[0] = complex64(h[0].real(), 0.0f);
    if (cols % 2 == 0) f[cols / 2] = complex64(h[cols / 2].real(), 0.0f);
    for (int64_t k = half; k < cols; ++k) f[k] = std::conj(f[cols - k]);
  }
  fft_lines(kc.pool, full.data(), in.outer * rows, cols, 1, true);
  float scale = 1.0f / static_cast<float>(rows * cols);
  float* out = y.mutable_data<float>();
  for (int64_t i = 0; i < in.outer * rows * cols; ++i) out[i] = full[static_cast<size_t>(i)].real() * scale;
}

}  // namespace

CAIRN_REGISTER_KERNEL("FFT", DeviceKind::CPU, (complex_fft_kernel<1, false>));
CAIRN_REGISTER_KERNEL("IFFT", DeviceKind::CPU, (complex_fft_kernel<1, true>));
CAIRN_REGISTER_KERNEL("FFT2D", DeviceKind::CPU, (complex_fft_kernel<2, false>));
CAIRN_REGISTER_KERNEL("IFFT2D", DeviceKind::CPU, (complex_fft_kernel<2, true>));
CAIRN_REGISTER_KERNEL("RFFT", DeviceKind::CPU, rfft_kernel<1>);
CAIRN_REGISTER_KERNEL("IRFFT", DeviceKind::CPU, irfft_kernel<1>);
CAIRN_REGISTER_KERNEL("RFFT2D", DeviceKind::CPU, rfft_kernel<2>);
CAIRN_REGISTER_KERNEL("IRFFT2D", DeviceKind::CPU, irfft_kernel<2>);

}  // namespace cairn
