// Discrete Fourier transforms with TensorFlow's semantics (tf.signal): FFT, IFFT, FFT2D, IFFT2D
// over the innermost one or two dimensions of complex64 tensors, and the real transforms RFFT,
// IRFFT, RFFT2D, IRFFT2D between float32 and complex64. The inverse transforms divide by the
// number of points. TF's `fft_length` input is an attribute here: RFFT crops or zero-pads the
// transformed dimensions to fft_length and keeps fft_length[-1] / 2 + 1 frequencies; IRFFT uses
// the first fft_length[-1] / 2 + 1 frequencies (cropped or zero-padded) and produces fft_length
// points, treating the input as the non-negative half of a Hermitian spectrum.
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void require_rank(ShapeContext& c, int rank) {
  if (c.in(0).rank() < rank)
    raise(Code::InvalidArgument, "{}: input must have rank >= {}, got shape {}", c.op(), rank, c.in(0).str());
}

template <int Rank>
void complex_shape(ShapeContext& c) {
  require_rank(c, Rank);
  c.set_out(0, c.in(0));
}

template <int Rank>
std::vector<int64_t> fft_length(ShapeContext& c) {
  std::vector<int64_t> len = c.attrs.ints("fft_length");
  if (len.size() != Rank)
    raise(Code::InvalidArgument, "{}: fft_length must have {} element(s), got {}", c.op(), Rank, ints_str(len));
  for (int64_t n : len) {
    if (n < 1) raise(Code::InvalidArgument, "{}: fft_length must be positive, got {}", c.op(), ints_str(len));
    // TensorFlow's fft_length is an int32 tensor; the bound also keeps every length a kernel plans
    // (kissfft takes an int) in range. Output sizes are checked for overflow by infer_outputs.
    if (n > INT32_MAX)
      raise(Code::InvalidArgument, "{}: fft_length must be at most 2^31-1, got {}", c.op(), ints_str(len));
  }
  return len;
}

// RFFT: [..., n] float32 -> [..., fft_length / 2 + 1] complex64 (2-D: the last two dimensions).
template <int Rank>
void rfft_shape(ShapeContext& c) {
  require_rank(c, Rank);
  std::vector<int64_t> len = fft_length<Rank>(c);
  Shape out = c.in(0);
  int r = out.rank();
  for (int k = 0; k < Rank; ++k) out.set_dim(r - Rank + k, len[static_cast<size_t>(k)]);
  out.set_dim(r - 1, len[Rank - 1] / 2 + 1);
  c.set_out(0, out);
}

// IRFFT: [..., m] complex64 -> [..., fft_length] float32.
template <int Rank>
void irfft_shape(ShapeContext& c) {
  require_rank(c, Rank);
  std::vector<int64_t> len = fft_length<Rank>(c);
  Shape out = c.in(0);
  int r = out.rank();
  for (int k = 0; k < Rank; ++k) out.set_dim(r - Rank + k, len[static_cast<size_t>(k)]);
  c.set_out(0, out);
}

OpBuilder complex_op(const char* name, const char* summary, ShapeFn shape) {
  return OpBuilder(name).summary(summary).input("input", DType::Complex64).output("output", DType::Complex64).shape(shape);
}

}  // namespace

CAIRN_REGISTER_OP(complex_op("FFT", "Discrete Fourier transform over the innermost dimension (complex64).",
                             complex_shape<1>));
CAIRN_REGISTER_OP(complex_op("IFFT", "Inverse DFT over the innermost dimension, divided by its size.",
                             complex_shape<1>));
CAIRN_REGISTER_OP(complex_op("FFT2D", "2-D discrete Fourier transform over the innermost two dimensions.",
                             complex_shape<2>));
CAIRN_REGISTER_OP(complex_op("IFFT2D", "Inverse 2-D DFT over the innermost two dimensions, divided by their product.",
                             complex_shape<2>));
CAIRN_REGISTER_OP(OpBuilder("RFFT")
                      .summary("DFT of a real signal over the innermost dimension: fft_length / 2 + 1 frequencies.")
                      .input("input", DType::Float32)
                      .output("output", DType::Complex64)
                      .ints_attr_required("fft_length")
                      .shape(rfft_shape<1>));
CAIRN_REGISTER_OP(OpBuilder("IRFFT")
                      .summary("Inverse of RFFT: fft_length real points from the non-negative frequencies.")
                      .input("input", DType::Complex64)
                      .output("output", DType::Float32)
                      .ints_attr_required("fft_length")
                      .shape(irfft_shape<1>));
CAIRN_REGISTER_OP(OpBuilder("RFFT2D")
                      .summary("2-D DFT of a real signal over the innermost two dimensions.")
                      .input("input", DType::Float32)
                      .output("output", DType::Complex64)
                      .ints_attr_required("fft_length")
                      .shape(rfft_shape<2>));
CAIRN_REGISTER_OP(OpBuilder("IRFFT2D")
                      .summary("Inverse of RFFT2D: fft_length[0] x fft_length[1] real points.")
                      .input("input", DType::Complex64)
                      .output("output", DType::Float32)
                      .ints_attr_required("fft_length")
                      .shape(irfft_shape<2>));

// No gradients yet: they are complex-valued (FFT's is IFFT(dy) * n) and the float64
// finite-difference harness cannot check them. Until they exist the tape does not record these
// ops, so a gradient through them is "unconnected" rather than silently wrong.
namespace {
struct FftNotDifferentiable {
  FftNotDifferentiable() {
    for (const char* op : {"FFT", "IFFT", "FFT2D", "IFFT2D", "RFFT", "IRFFT", "RFFT2D", "IRFFT2D"})
      OpRegistry::global().set_not_differentiable(op);
  }
} fft_not_differentiable;
}  // namespace

}  // namespace cairn
