// FFT, IFFT, RFFT, IRFFT and their 2-D forms on the CPU against a direct DFT in double precision,
// with TensorFlow's cropping/padding by fft_length, Hermitian handling in IRFFT, round trips and
// shape errors.
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using cd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// The DFT of each row of `x` ([rows, n]), in double; inverse ones divided by n.
std::vector<cd> dft_rows(const std::vector<cd>& x, int64_t rows, int64_t n, bool inverse) {
  std::vector<cd> y(x.size());
  double sign = inverse ? 1 : -1;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < n; ++k) {
      cd acc = 0;
      for (int64_t t = 0; t < n; ++t) acc += x[r * n + t] * std::polar(1.0, sign * 2 * kPi * double(k * t) / double(n));
      y[r * n + k] = inverse ? acc / double(n) : acc;
    }
  return y;
}

// The same along the columns of [batch, rows, cols].
std::vector<cd> dft_cols(const std::vector<cd>& x, int64_t batch, int64_t rows, int64_t cols, bool inverse) {
  std::vector<cd> y(x.size()), line(static_cast<size_t>(rows));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < cols; ++c) {
      for (int64_t r = 0; r < rows; ++r) line[r] = x[(b * rows + r) * cols + c];
      std::vector<cd> t = dft_rows(line, 1, rows, inverse);
      for (int64_t r = 0; r < rows; ++r) y[(b * rows + r) * cols + c] = t[r];
    }
  return y;
}

std::vector<complex64> random_complex(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<complex64> v(n);
  for (auto& c : v) c = complex64(u(rng), u(rng));
  return v;
}

std::vector<cd> widen(const std::vector<complex64>& v) { return std::vector<cd>(v.begin(), v.end()); }

void check_complex(const Tensor& t, const std::vector<cd>& want, double tol) {
  std::vector<complex64> got = values<complex64>(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(cd(got[i]) - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

TEST_CASE("FFT and IFFT match a direct DFT for power-of-two, odd and prime lengths") {
  for (int64_t n : {1, 2, 8, 12, 15, 17, 64}) {
    CAPTURE(n);
    std::vector<complex64> x = random_complex(static_cast<size_t>(3 * n), static_cast<uint32_t>(n));
    Tensor t = make<complex64>(x, Shape{3, n});
    check_complex(run1("FFT", {t}), dft_rows(widen(x), 3, n, false), 1e-5);
    check_complex(run1("IFFT", {t}), dft_rows(widen(x), 3, n, true), 1e-5);
    // A round trip gives the input back.
    check_complex(run1("IFFT", {run1("FFT", {t})}), widen(x), 1e-5);
  }
  Tensor empty = make<complex64>({}, Shape{0, 4});
  CHECK(run1("FFT", {empty}).shape() == Shape{0, 4});
}

TEST_CASE("FFT2D and IFFT2D transform the innermost two dimensions") {
  std::vector<complex64> x = random_complex(2 * 6 * 5, 3);
  Tensor t = make<complex64>(x, Shape{2, 6, 5});
  check_complex(run1("FFT2D", {t}), dft_cols(dft_rows(widen(x), 12, 5, false), 2, 6, 5, false), 1e-5);
  check_complex(run1("IFFT2D", {t}), dft_cols(dft_rows(widen(x), 12, 5, true), 2, 6, 5, true), 1e-5);
  check_complex(run1("IFFT2D", {run1("FFT2D", {t})}), widen(x), 1e-5);
}

TEST_CASE("RFFT keeps fft_length / 2 + 1 frequencies of the cropped or padded signal") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(2 * 7);
  for (auto& v : x) v = u(rng);
  Tensor t = make<float>(x, Shape{2, 7});
  for (int64_t len : {7, 4, 10, 1}) {
    CAPTURE(len);
    std::vector<cd> padded(static_cast<size_t>(2 * len));
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < len && c < 7; ++c) padded[r * len + c] = x[r * 7 + c];
    std::vector<cd> full = dft_rows(padded, 2, len, false), want;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t k = 0; k < len / 2 + 1; ++k) want.push_back(full[r * len + k]);
    std::vector<int64_t> fft_length = {len};
    Tensor y = run1("RFFT", {t}, {attr_ints("fft_length", fft_length)});
    CHECK(y.shape() == Shape{2, len / 2 + 1});
    check_complex(y, want, 1e-5);
  }
}

TEST_CASE("IRFFT inverts RFFT for even and odd lengths and ignores the DC/Nyquist imaginary parts") {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t len : {8, 9, 1, 2}) {
    CAPTURE(len);
    std::vector<float> x(static_cast<size_t>(3 * len));
    for (auto& v : x) v = u(rng);
    std::vector<int64_t> fft_length = {len};
    Tensor spectrum = run1("RFFT", {make<float>(x, Shape{3, len})}, {attr_ints("fft_length", fft_length)});
    check_close(as_doubles(run1("IRFFT", {spectrum}, {attr_ints("fft_length", fft_length)})),
                std::vector<double>(x.begin(), x.end()), 1e-5);
  }
  // Imaginary parts of the DC and Nyquist terms do not reach a real signal.
  Tensor h = make<complex64>({complex64(4, 3), complex64(1, 1), complex64(2, 5)}, Shape{3});
  std::vector<int64_t> four = {4};
  std::vector<double> got = as_doubles(run1("IRFFT", {h}, {attr_ints("fft_length", four)}));
  // x[t] = (4 + 2 Re(e^{i pi t/2}(1+i)) + 2 (-1)^t) / 4
  std::vector<double> want = {(4 + 2 + 2) / 4.0, (4 - 2 - 2) / 4.0, (4 - 2 + 2) / 4.0, (4 + 2 - 2) / 4.0};
  check_close(got, want, 1e-6);
}

TEST_CASE("RFFT2D and IRFFT2D over the innermost two dimensions, with cropping and padding") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(2 * 5 * 6);
  for (auto& v : x) v = u(rng);
  Tensor t = make<float>(x, Shape{2, 5, 6});
  std::vector<int64_t> len = {4, 8};
  Tensor y = run1("RFFT2D", {t}, {attr_ints("fft_length", len)});
  CHECK(y.shape() == Shape{2, 4, 5});
  std::vector<cd> padded(2 * 4 * 8);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 6; ++c) padded[(b * 4 + r) * 8 + c] = x[(b * 5 + r) * 6 + c];
  std::vector<cd> full = dft_cols(dft_rows(padded, 8, 8, false), 2, 4, 8, false), want;
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t k = 0; k < 5; ++k) want.push_back(full[row * 8 + k]);
  check_complex(y, want, 1e-5);
  // The round trip gives back the cropped and padded signal.
  std::vector<double> back = as_doubles(run1("IRFFT2D", {y}, {attr_ints("fft_length", len)}));
  std::vector<double> expect;
  for (const cd& v : padded) expect.push_back(v.real());
  check_close(back, expect, 1e-5);
}

TEST_CASE("lengths with a large prime factor (Bluestein) match a direct DFT, primes and composites alike") {
  // Prime factors above 64 take Bluestein's algorithm; the rest stay on kissfft. Both sides of the
  // boundary, primes, prime powers and mixed composites, 1-D and along the rows of a 2-D transform.
  for (int64_t n : {61, 67, 97, 101, 127, 134, 210, 251, 257, 509, 1009, 2 * 3 * 5 * 67, 64 * 67, 67 * 71, 2003}) {
    CAPTURE(n);
    std::vector<complex64> x = random_complex(static_cast<size_t>(2 * n), static_cast<uint32_t>(n));
    Tensor t = make<complex64>(x, Shape{2, n});
    // Errors grow like sqrt(n) * eps relative to the spectrum's scale, sqrt(n) here.
    const double tol = 2e-6 * std::sqrt(double(n));
    check_complex(run1("FFT", {t}), dft_rows(widen(x), 2, n, false), tol);
    check_complex(run1("IFFT", {t}), dft_rows(widen(x), 2, n, true), 1e-5);
    check_complex(run1("IFFT", {run1("FFT", {t})}), widen(x), 1e-5);
  }
  // A 2-D transform whose both axes take Bluestein, and the real transforms with such a length.
  std::vector<complex64> x = random_complex(67 * 71, 5);
  Tensor t = make<complex64>(x, Shape{67, 71});
  check_complex(run1("FFT2D", {t}), dft_cols(dft_rows(widen(x), 67, 71, false), 1, 67, 71, false), 1e-4);
  std::vector<float> re(2 * 101);
  for (size_t i = 0; i < re.size(); ++i) re[i] = x[i].real();
  std::vector<int64_t> len = {101};
  Tensor spectrum = run1("RFFT", {make<float>(re, Shape{2, 101})}, {attr_ints("fft_length", len)});
  CHECK(spectrum.shape() == Shape{2, 51});
  std::vector<cd> full = dft_rows(std::vector<cd>(re.begin(), re.end()), 2, 101, false), want;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t k = 0; k < 51; ++k) want.push_back(full[r * 101 + k]);
  check_complex(spectrum, want, 1e-5 * std::sqrt(101.0));
  check_close(as_doubles(run1("IRFFT", {spectrum}, {attr_ints("fft_length", len)})),
              std::vector<double>(re.begin(), re.end()), 1e-5);
}

TEST_CASE("a 62,501-point FFT (prime) is accurate: spot bins against a direct DFT, and a round trip") {
  // The example: 9.4 s with kissfft's O(n * p) butterfly, milliseconds with Bluestein
  // (bench/fft_bench.cc prints the timings). A full direct DFT is O(n^2); a few bins are O(n) each.
  const int64_t n = 62501;
  std::vector<complex64> x = random_complex(static_cast<size_t>(n), 62501);
  Tensor t = make<complex64>(x, Shape{n});
  std::vector<complex64> y = values<complex64>(run1("FFT", {t}));
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{12345}, int64_t{31250}, int64_t{31251}, n - 1}) {
    CAPTURE(k);
    cd acc = 0;
    for (int64_t j = 0; j < n; ++j)
      acc += cd(x[static_cast<size_t>(j)]) * std::polar(1.0, -2 * kPi * double((k * j) % n) / double(n));
    // |X_k| is about sqrt(n) = 250 for random input; float keeps about 1e-6 of the spectrum's scale.
    CHECK(std::abs(cd(y[static_cast<size_t>(k)]) - acc) <= 1e-6 * std::sqrt(double(n)) * 10);
  }
  check_complex(run1("IFFT", {run1("FFT", {t})}), widen(x), 1e-5);
}

TEST_CASE("FFT ops reject bad ranks, dtypes and fft_length") {
  std::vector<int64_t> zero = {0}, two = {4, 4}, one = {4};
  CHECK_THROWS_CODE(run1("FFT", {make<complex64>({complex64(1, 0)}, Shape{})}), Code::InvalidArgument, "rank >= 1");
  CHECK_THROWS_CODE(run1("FFT2D", {make<complex64>({complex64(1, 0)}, Shape{1})}), Code::InvalidArgument, "rank >= 2");
  CHECK_THROWS_CODE(run1("FFT", {make<float>({1}, Shape{1})}), Code::InvalidArgument, "FFT");
  CHECK_THROWS_CODE(run1("RFFT", {make<float>({1, 2}, Shape{2})}, {attr_ints("fft_length", zero)}),
                    Code::InvalidArgument, "fft_length must be positive");
  CHECK_THROWS_CODE(run1("RFFT", {make<float>({1, 2}, Shape{2})}, {attr_ints("fft_length", two)}),
                    Code::InvalidArgument, "fft_length must have 1 element");
  CHECK_THROWS_CODE(run1("IRFFT2D", {make<complex64>({complex64(1, 0)}, Shape{1, 1})}, {attr_ints("fft_length", one)}),
                    Code::InvalidArgument, "fft_length must have 2 element");
}

}  // namespace
}  // namespace cairn::test
