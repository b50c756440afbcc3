// CPU kernels for ops/fft_ops.cc with kissfft (mixed-radix, any length). Every transform is a
// set of 1-D complex transforms along "lines": elements (o * n + k) * inner + i for k < n, one line
// per (o, i). 2-D transforms run the innermost dimension, then the one before it. The real
// transforms go through complex buffers: RFFT keeps the non-negative frequencies; IRFFT extends
// its half spectrum to a Hermitian one (imaginary parts of the DC and Nyquist terms ignored, as
// in NumPy and TensorFlow) and keeps the real part.
#include <kissfft/kiss_fft.h>

#include <unistd.h>

#include <algorithm>
#include <complex>
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

// ---- 1-D plans ----
//
// kissfft is mixed-radix: fast for lengths whose prime factors are small, but a prime factor p
// costs O(n * p) (its generic butterfly), so a prime length is O(n^2): 62,501 points took 9.4 s
// against 4 ms for 65,536. Lengths with a prime factor above kMaxKissPrime go through Bluestein's
// algorithm instead (as TensorFlow's and pocketfft's do): the DFT written as a convolution with a
// chirp, computed by power-of-two FFTs of size m >= 2n - 1, so every length is O(n log n).

// Largest prime factor kissfft handles itself. Around here its O(n * p) generic butterflies start
// to cost more than Bluestein's two size-m transforms (m up to 4n); see bench/fft_bench.cc.
constexpr int64_t kMaxKissPrime = 64;

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  return n > 1 ? n : largest;
}

using cdouble = std::complex<double>;

// An in-place radix-2 FFT of a power-of-two length in double precision, for Bluestein's
// convolution: the chirp products reach magnitudes of n * |x|, and float would lose about
// log2(m) bits of the result to them; double keeps the answer well within float accuracy.
// Forward only (Bluestein's inverse transform is conj(FFT(conj(.)))); each stage's twiddles are
// stored contiguously, so every stage reads them in order.
class Radix2 {
 public:
  explicit Radix2(int64_t m) : m_(m), twiddle_(static_cast<size_t>(std::max<int64_t>(1, m - 1))), rev_(static_cast<size_t>(m)) {
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    // Stage `half` (1, 2, 4, ...) uses e^{-2 pi i k / (2 half)} for k < half, at twiddle_[half - 1 + k].
    for (int64_t half = 1; half < m; half *= 2)
      for (int64_t k = 0; k < half; ++k)
        twiddle_[static_cast<size_t>(half - 1 + k)] =
            std::polar(1.0, -kTwoPi * static_cast<double>(k) / static_cast<double>(2 * half));
    int bits = 0;
    while ((int64_t{1} << bits) < m) ++bits;
    for (int64_t i = 0; i < m; ++i) {
      uint32_t r = 0;
      for (int b = 0; b < bits; ++b) r |= static_cast<uint32_t>((i >> b) & 1) << (bits - 1 - b);
      rev_[static_cast<size_t>(i)] = r;
    }
  }

  // x <- sum_k x_k e^{-2 pi i jk/m}.
  void forward(cdouble* x) const {
    for (int64_t i = 0; i < m_; ++i) {
      const int64_t r = rev_[static_cast<size_t>(i)];
      if (i < r) std::swap(x[i], x[r]);
    }
    // The first stage has the twiddle 1 only.
    for (int64_t i = 0; i + 1 < m_; i += 2) {
      const cdouble t = x[i + 1];
      x[i + 1] = x[i] - t;
      x[i] += t;
    }
    for (int64_t half = 2; half < m_; half *= 2) {
      const cdouble* w = twiddle_.data() + (half - 1);
      for (int64_t start = 0; start < m_; start += 2 * half) {
        cdouble* lo = x + start;
        cdouble* hi = lo + half;
        for (int64_t k = 0; k < half; ++k) {
          // The complex product written out: std::complex's operator* checks for NaN/inf
          // (Annex G) and is several times slower.
          const double tr = w[k].real() * hi[k].real() - w[k].imag() * hi[k].imag();
          const double ti = w[k].real() * hi[k].imag() + w[k].imag() * hi[k].real();
          const cdouble t(tr, ti);
          hi[k] = lo[k] - t;
          lo[k] += t;
        }
      }
    }
  }

  size_t bytes() const { return twiddle_.size() * sizeof(cdouble) + rev_.size() * sizeof(uint32_t); }

 private:
  int64_t m_;
  std::vector<cdouble> twiddle_;
  std::vector<uint32_t> rev_;  // m <= 2^32 (n < 2^31)
};

// One transform length and direction. kissfft only reads its plan and Bluestein's tables are
// constant, so threads share a plan; each thread brings its own Scratch.
class Plan {
 public:
  struct Scratch {
    std::vector<complex64> in, out;
    std::vector<cdouble> conv;
  };

  Plan(int64_t n, bool inverse) : n_(n), inverse_(inverse), kiss_(nullptr, kiss_fft_free) {
    if (largest_prime_factor(n) <= kMaxKissPrime) {
      kiss_.reset(kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr));
      if (!kiss_) throw std::bad_alloc();
      return;
    }
    // Bluestein: with w_k = e^{s pi i k^2 / n} (s = -1 forward, +1 inverse) and
    // jk = (j^2 + k^2 - (j - k)^2) / 2, X_j = w_j * sum_k (x_k w_k) * conj(w_{j-k}): a linear
    // convolution of n terms with a filter of 2n - 1, done circularly in m >= 2n - 1 points.
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
    radix2_ = std::make_unique<Radix2>(m_);
    chirp_.resize(static_cast<size_t>(n));
    constexpr double kPi = 3.141592653589793238462643383280;
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n keeps the angle exact: pi k^2 / n in double loses digits once k^2 is large.
      // k < 2^31, so k * k fits in int64.
      const int64_t q = (k * k) % (2 * n);
      chirp_[static_cast<size_t>(k)] = std::polar(1.0, sign * kPi * static_cast<double>(q) / static_cast<double>(n));
    }
    // The filter conj(w_t) for t in (-n, n), wrapped around m, transformed once; 1/m of the
    // inverse transform folded in.
    filter_.assign(static_cast<size_t>(m_), cdouble(0));
    const double inv_m = 1.0 / static_cast<double>(m_);
    for (int64_t t = 0; t < n; ++t) {
      const cdouble h = std::conj(chirp_[static_cast<size_t>(t)]) * inv_m;
      filter_[static_cast<size_t>(t)] = h;
      if (t > 0) filter_[static_cast<size_t>(m_ - t)] = h;
    }
    radix2_->forward(filter_.data());
  }

  // y = DFT(x) over n points (x and y may be the same line), reading and writing with `stride`.
  void run(const complex64* x, complex64* y, int64_t stride, Scratch& s) const {
    if (kiss_) {
      s.in.resize(static_cast<size_t>(n_));
      s.out.resize(static_cast<size_t>(n_));
      for (int64_t k = 0; k < n_; ++k) s.in[static_cast<size_t>(k)] = x[k * stride];
      kiss_fft(kiss_.get(), reinterpret_cast<const kiss_fft_cpx*>(s.in.data()),
               reinterpret_cast<kiss_fft_cpx*>(s.out.data()));
      for (int64_t k = 0; k < n_; ++k) y[k * stride] = s.out[static_cast<size_t>(k)];
      return;
    }
    s.conv.assign(static_cast<size_t>(m_), cdouble(0));
    cdouble* a = s.conv.data();
    for (int64_t k = 0; k < n_; ++k) {
      const complex64 v = x[k * stride];
      const cdouble c = chirp_[static_cast<size_t>(k)];
      a[k] = cdouble(v.real() * c.real() - v.imag() * c.imag(), v.real() * c.imag() + v.imag() * c.real());
    }
    radix2_->forward(a);
    // The inverse transform of A * B as conj(FFT(conj(A * B))): one forward routine for both.
    for (int64_t k = 0; k < m_; ++k) {
      const cdouble f = filter_[static_cast<size_t>(k)];
      a[k] = cdouble(a[k].real() * f.real() - a[k].imag() * f.imag(), -(a[k].real() * f.imag() + a[k].imag() * f.real()));
    }
    radix2_->forward(a);
    for (int64_t k = 0; k < n_; ++k) {
      const cdouble v = std::conj(a[k]) * chirp_[static_cast<size_t>(k)];
      y[k * stride] = complex64(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    }
  }

  // Bytes a plan for n points holds, and what each thread needs besides, before building it.
  static size_t plan_bytes(int64_t n) {
    if (largest_prime_factor(n) <= kMaxKissPrime) return static_cast<size_t>(n) * sizeof(complex64) * 2;
    const size_t m = bluestein_size(n);
    return m * (2 * sizeof(cdouble) + sizeof(uint32_t)) + static_cast<size_t>(n) * sizeof(cdouble);
  }
  static size_t scratch_bytes(int64_t n) {
    if (largest_prime_factor(n) <= kMaxKissPrime) return static_cast<size_t>(n) * sizeof(complex64) * 2;
    return bluestein_size(n) * sizeof(cdouble);
  }
  size_t bytes() const {
    return radix2_ ? radix2_->bytes() + (chirp_.size() + filter_.size()) * sizeof(cdouble)
                   : static_cast<size_t>(n_) * sizeof(complex64) * 2;
  }
  bool uses_bluestein() const { return !kiss_; }

 private:
  static size_t bluestein_size(int64_t n) {
    size_t m = 1;
    while (m < static_cast<size_t>(2 * n - 1)) m *= 2;
    return m;
  }

  int64_t n_;
  bool inverse_;
  std::unique_ptr<kiss_fft_state, void (*)(void*)> kiss_;
  int64_t m_ = 0;
  std::unique_ptr<Radix2> radix2_;
  std::vector<cdouble> chirp_;   // w_k, k < n
  std::vector<cdouble> filter_;  // the transformed filter, divided by m
};

// Plans are built once per (length, direction) and kept, up to kCachedPlanBytes in all; a longer
// transform's plan (a hostile fft_length of 2^31 - 1 needs gigabytes) lives only for its call.
constexpr size_t kCachedPlanBytes = size_t{256} << 20;

std::shared_ptr<const Plan> plan(int64_t n, bool inverse) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, bool>, std::shared_ptr<const Plan>> plans;
  static size_t cached_bytes = 0;
  const auto key = std::make_pair(n, inverse);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  auto p = std::make_shared<const Plan>(n, inverse);
  std::lock_guard<std::mutex> lock(mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;  // another thread built it meanwhile
  if (cached_bytes + p->bytes() <= kCachedPlanBytes) {
    cached_bytes += p->bytes();
    plans.emplace(key, p);
  }
  return p;
}

// The physical memory of this machine. A transform whose plan and scratch would not fit is
// refused up front with RESOURCE_EXHAUSTED: with overcommit, the allocation itself may succeed
// and the process be killed when the pages are touched.
size_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
}

// Refuses `bytes` of temporaries when they exceed half of physical memory.
void require_memory(const char* op, size_t bytes, const char* what) {
  if (bytes > physical_memory() / 2)
    raise(Code::ResourceExhausted, "{}: {} needs {} bytes of working memory, more than half of this machine's {}", op,
          what, bytes, physical_memory());
}

// In-place 1-D transforms of every line of `data` viewed as [outer, n, inner].
void fft_lines(KernelContext& kc, complex64* data, int64_t outer, int64_t n, int64_t inner, bool inverse) {
  if (n <= 1 || outer * inner == 0) return;
  if (n > INT32_MAX) raise(Code::InvalidArgument, "{}: a transformed dimension of {} exceeds 2^31-1 points", kc.op(), n);
  const int64_t threads = std::min<int64_t>(outer * inner, kc.pool.num_threads());
  const size_t working = Plan::plan_bytes(n) + Plan::scratch_bytes(n) * static_cast<size_t>(threads);
  require_memory(kc.op(), working, fmt::format("a transform of {} points", n).c_str());
  std::shared_ptr<const Plan> p = plan(n, inverse);
  kc.pool.parallel_for(outer * inner, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
    Plan::Scratch scratch;
    for (int64_t line = b; line < e; ++line) {
      complex64* base = data + (line / inner) * n * inner + line % inner;
      p->run(base, base, inner, scratch);
    }
  });
}

// Transforms the innermost `rank` dimensions of `data` (shape `s`); inverse ones are scaled.
void fft_nd(KernelContext& kc, complex64* data, const Shape& s, int rank, bool inverse) {
  int r = s.rank();
  int64_t total = s.num_elements();
  for (int k = 0; k < rank; ++k) {
    int axis = r - 1 - k;
    fft_lines(kc, data, product(s, 0, axis), s[axis], product(s, axis + 1, r), inverse);
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
  fft_nd(kc, out, x.shape(), Rank, Inverse);
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
  // At most twice the output's size (checked by infer_outputs), but a long fft_length on a short
  // signal may still ask for more than the machine has: refuse before touching it.
  require_memory(kc.op(), static_cast<size_t>(in.outer * rows * cols) * sizeof(complex64), "the padded signal");
  std::vector<complex64> full(static_cast<size_t>(in.outer * rows * cols));
  resize_inner(x.data<float>(), in.outer, in.rows, in.cols, full.data(), rows, cols);
  Shape fs = y.shape();
  fs.set_dim(fs.rank() - 1, cols);
  fft_nd(kc, full.data(), fs, Rank, false);
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
  // The half spectrum, cropped or padded; 2-D: the inverse along the rows first. With the full
  // spectrum below, about 1.5 times the output's element count in complex64 (see rfft_kernel).
  require_memory(kc.op(), static_cast<size_t>(in.outer * rows * (half + cols)) * sizeof(complex64),
                 "the Hermitian spectrum");
  std::vector<complex64> spec(static_cast<size_t>(in.outer * rows * half));
  resize_inner(x.data<complex64>(), in.outer, in.rows, in.cols, spec.data(), rows, half);
  if (Rank == 2) fft_lines(kc, spec.data(), in.outer, rows, half, true);
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
  fft_lines(kc, full.data(), in.outer * rows, cols, 1, true);
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
