#include <cmath>
#include <cstring>
#include <limits>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
double tol_for(DType t) { return t == DType::BFloat16 ? 2e-2 : t == DType::Float16 ? 3e-3 : 1e-5; }

std::vector<double> wave(size_t n, double scale) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + 0.1) * scale;
  return v;
}

// TensorFlow's rules, written independently of the runtime: output size and padding before.
struct Dim {
  int64_t out, pad;
};
Dim tf_dim(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  const int64_t eff = (k - 1) * dilation + 1;
  Dim d;
  if (same) {
    d.out = (in + stride - 1) / stride;
    d.pad = std::max<int64_t>((d.out - 1) * stride + eff - in, 0) / 2;
  } else {
    d.out = (in - eff + stride) / stride;
    d.pad = 0;
  }
  return d;
}

// Direct convolution loop in double. x: [n,h,w,ci], f: [kh,kw,ci,co].
std::vector<double> ref_conv(const std::vector<double>& x, const std::vector<int64_t>& xs, const std::vector<double>& f,
                             const std::vector<int64_t>& fs, int64_t stride, int64_t dil, bool same,
                             std::vector<int64_t>* out_shape) {
  const int64_t n = xs[0], h = xs[1], w = xs[2], ci = xs[3], kh = fs[0], kw = fs[1], co = fs[3];
  Dim dh = tf_dim(h, kh, stride, dil, same), dw = tf_dim(w, kw, stride, dil, same);
  *out_shape = {n, dh.out, dw.out, co};
  std::vector<double> y(static_cast<size_t>(n * dh.out * dw.out * co), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < dh.out; ++oy)
      for (int64_t ox = 0; ox < dw.out; ++ox)
        for (int64_t o = 0; o < co; ++o) {
          double s = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t iy = oy * stride - dh.pad + i * dil, ix = ox * stride - dw.pad + j * dil;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int64_t c = 0; c < ci; ++c)
                s += x[((b * h + iy) * w + ix) * ci + c] * f[((i * kw + j) * ci + c) * co + o];
            }
          y[((b * dh.out + oy) * dw.out + ox) * co + o] = s;
        }
  return y;
}

std::vector<double> ref_pool(const std::vector<double>& x, const std::vector<int64_t>& xs, int64_t kh, int64_t kw,
                             int64_t sh, int64_t sw, bool same, bool is_max, std::vector<int64_t>* out_shape) {
  const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
  Dim dh = tf_dim(h, kh, sh, 1, same), dw = tf_dim(w, kw, sw, 1, same);
  *out_shape = {n, dh.out, dw.out, c};
  std::vector<double> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < dh.out; ++oy)
      for (int64_t ox = 0; ox < dw.out; ++ox)
        for (int64_t ch = 0; ch < c; ++ch) {
          double best = -INFINITY, sum = 0;
          int count = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t iy = oy * sh - dh.pad + i, ix = ox * sw - dw.pad + j;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              double v = x[((b * h + iy) * w + ix) * c + ch];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          y.push_back(is_max ? best : sum / count);
        }
  return y;
}

Shape shape_of(const std::vector<int64_t>& d) { return Shape::from(d.data(), d.size(), "test"); }

Tensor conv(const Tensor& x, const Tensor& f, const std::vector<int64_t>& strides, const char* padding,
            const std::vector<int64_t>& dilations = {1, 1, 1, 1}) {
  return run1("Conv2D", {x, f},
              {attr_ints("strides", strides), attr_string("padding", padding), attr_ints("dilations", dilations)});
}

Tensor pool(const char* op, const Tensor& x, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
            const char* padding) {
  return run1(op, {x}, {attr_ints("ksize", ksize), attr_ints("strides", strides), attr_string("padding", padding)});
}

}  // namespace

TEST_CASE("Softmax and LogSoftmax of a vector for every float dtype") {
  for (DType t : kFloatTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {1, 2, 3}, {3});
    Tensor s = run1("Softmax", {x});
    CHECK(s.dtype() == t);
    CHECK(s.shape() == Shape{3});
    check_close(as_doubles(s), {0.09003057317038046, 0.24472847105479764, 0.6652409557748219}, tol_for(t));
    check_close(as_doubles(run1("LogSoftmax", {x})), {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806},
                tol_for(t));
    // Large logits do not overflow (bfloat16 rounds 1001 to 1000, so the expectation uses the stored values).
    Tensor big = make_as(t, {1000, 1001}, {2});
    auto bv = as_doubles(big);
    const double d = bv[1] - bv[0];
    check_close(as_doubles(run1("Softmax", {big})), {1 / (1 + std::exp(d)), 1 / (1 + std::exp(-d))}, tol_for(t));
    check_close(as_doubles(run1("LogSoftmax", {big})), {-std::log1p(std::exp(d)), -std::log1p(std::exp(-d))}, tol_for(t));
  }
}

TEST_CASE("Softmax along other axes matches a reference") {
  // [2,3]: axis 0 (strided) and axis -1 (rows)
  Tensor x = make<float>({1, 2, 3, 3, 2, 5}, {2, 3});
  const double a = 1 / (1 + std::exp(2.0)), b = 1 / (1 + std::exp(-2.0));
  check_close(as_doubles(run1("Softmax", {x}, {attr_int("axis", 0)})), {a, 0.5, a, b, 0.5, b});
  check_close(as_doubles(run1("Softmax", {x}, {attr_int("axis", -2)})), {a, 0.5, a, b, 0.5, b});
  check_close(as_doubles(run1("LogSoftmax", {x}, {attr_int("axis", 0)})),
              {std::log(a), std::log(0.5), std::log(a), std::log(b), std::log(0.5), std::log(b)});
  // A wide inner dimension (more than one column chunk), every dtype, against a loop in double.
  const int64_t outer = 3, n = 5, inner = 300;
  std::vector<double> v = wave(outer * n * inner, 4.0);
  std::vector<double> want(v.size()), want_log(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, v[(o * n + i) * inner + j]);
      for (int64_t i = 0; i < n; ++i) s += std::exp(v[(o * n + i) * inner + j] - m);
      for (int64_t i = 0; i < n; ++i) {
        size_t k = static_cast<size_t>((o * n + i) * inner + j);
        want[k] = std::exp(v[k] - m) / s;
        want_log[k] = v[k] - m - std::log(s);
      }
    }
  for (DType t : kFloatTypes) {
    CAPTURE(dtype_name(t));
    if (t == DType::Float16 || t == DType::BFloat16) continue;  // inputs would be rounded first
    Tensor xt = make_as(t, v, {outer, n, inner});
    check_close(as_doubles(run1("Softmax", {xt}, {attr_int("axis", 1)})), want, 1e-5);
    check_close(as_doubles(run1("LogSoftmax", {xt}, {attr_int("axis", -2)})), want_log, 1e-5);
  }
}

TEST_CASE("Softmax edge cases: -inf, NaN, empty, size-1 axis") {
  check_close(as_doubles(run1("Softmax", {make<float>({-INFINITY, 0, -INFINITY}, {3})})), {0, 1, 0});
  check_close(as_doubles(run1("LogSoftmax", {make<double>({-INFINITY, 0}, {2})})), {-INFINITY, 0});
  check_close(as_doubles(run1("Softmax", {make<float>({NAN, 1, 1, 2}, {2, 2})})), {NAN, NAN, 0.2689414213699951, 0.7310585786300049});
  CHECK(run1("Softmax", {make<float>({}, {0, 4})}).shape() == Shape{0, 4});
  CHECK(run1("LogSoftmax", {make<float>({}, {3, 0})}).shape() == Shape{3, 0});
  check_close(as_doubles(run1("Softmax", {make<float>({5, -7}, {2, 1})})), {1, 1});
  check_close(as_doubles(run1("LogSoftmax", {make<float>({5, -7}, {2, 1})})), {0, 0});
}

TEST_CASE("Softmax errors") {
  CHECK_THROWS_CODE(run1("Softmax", {scalar(1.0f)}), Code::InvalidArgument, "Softmax: logits must have rank >= 1, got shape []");
  CHECK_THROWS_CODE(run1("LogSoftmax", {make<float>({1, 2}, {2})}, {attr_int("axis", 1)}), Code::InvalidArgument,
                    "LogSoftmax: axis 1 is out of range for rank 1");
  CHECK_THROWS_CODE(run1("Softmax", {make<int32_t>({1, 2}, {2})}), Code::InvalidArgument, "which Softmax does not accept");
}

TEST_CASE("Conv2D by hand: VALID and SAME") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  Tensor f = make<float>({1, 1, 1, 1}, {2, 2, 1, 1});
  Tensor v = conv(x, f, {1, 1, 1, 1}, "VALID");
  CHECK(v.shape() == Shape{1, 2, 2, 1});
  CHECK(values<float>(v) == std::vector<float>{12, 16, 24, 28});
  // SAME pads one row/column after (TF puts the odd padding at the end).
  Tensor s = conv(x, f, {1, 1, 1, 1}, "SAME");
  CHECK(s.shape() == Shape{1, 3, 3, 1});
  CHECK(values<float>(s) == std::vector<float>{12, 16, 9, 24, 28, 15, 15, 17, 9});
  // Stride 2 SAME on 3x3: ceil(3/2) = 2 outputs, padding (2-1)*2+2-3 = 1 after.
  CHECK(values<float>(conv(x, f, {1, 2, 2, 1}, "SAME")) == std::vector<float>{12, 9, 15, 9});
  // Dilation 2 with a 2x2 filter spans 3x3: only the four corners.
  CHECK(values<float>(conv(x, f, {1, 1, 1, 1}, "VALID", {1, 2, 2, 1})) == std::vector<float>{20});
  // Two output channels, two input channels.
  Tensor x2 = make<float>({1, 10, 2, 20}, {1, 1, 2, 2});
  Tensor f2 = make<float>({1, 0, 0, 1}, {1, 1, 2, 2});  // identity 1x1
  CHECK(values<float>(conv(x2, f2, {1, 1, 1, 1}, "VALID")) == std::vector<float>{1, 10, 2, 20});
}

TEST_CASE("Conv2D matches a direct loop: SAME/VALID, strides 1 and 2, dilation 1 and 2, every float dtype") {
  const std::vector<int64_t> xs = {2, 7, 6, 3};
  std::vector<double> x = wave(2 * 7 * 6 * 3, 1.0);
  for (std::vector<int64_t> fs : {std::vector<int64_t>{3, 2, 3, 4}, std::vector<int64_t>{1, 1, 3, 5},
                                  std::vector<int64_t>{3, 3, 3, 2}}) {
    std::vector<double> f = wave(static_cast<size_t>(fs[0] * fs[1] * fs[2] * fs[3]), 0.5);
    for (const char* padding : {"SAME", "VALID"})
      for (int64_t stride : {1, 2})
        for (int64_t dil : {1, 2}) {
          CAPTURE(padding);
          CAPTURE(stride);
          CAPTURE(dil);
          CAPTURE(fs[0]);
          std::vector<int64_t> ys;
          auto want = ref_conv(x, xs, f, fs, stride, dil, std::string(padding) == "SAME", &ys);
          for (DType t : kFloatTypes) {
            CAPTURE(dtype_name(t));
            Tensor y = conv(make_as(t, x, shape_of(xs)), make_as(t, f, shape_of(fs)), {1, stride, stride, 1}, padding,
                            {1, dil, dil, 1});
            CHECK(y.dtype() == t);
            CHECK(y.shape() == shape_of(ys));
            if (t == DType::Float32 || t == DType::Float64) check_close(as_doubles(y), want, 1e-5);
            else {
              // 16-bit inputs are rounded first; compare against the loop on the rounded values.
              std::vector<int64_t> ys2;
              auto want16 = ref_conv(as_doubles(make_as(t, x, shape_of(xs))), xs, as_doubles(make_as(t, f, shape_of(fs))),
                                     fs, stride, dil, std::string(padding) == "SAME", &ys2);
              check_close(as_doubles(y), want16, t == DType::BFloat16 ? 1e-2 : 2e-3);
            }
          }
        }
  }
}

TEST_CASE("Conv2D with large channel counts takes the threaded BLAS path") {
  const std::vector<int64_t> xs = {1, 20, 18, 64}, fs = {3, 3, 64, 48};
  std::vector<double> x = wave(20 * 18 * 64, 1.0), f = wave(3 * 3 * 64 * 48, 0.1);
  for (int64_t stride : {1, 2}) {
    std::vector<int64_t> ys;
    auto want = ref_conv(x, xs, f, fs, stride, 1, true, &ys);
    Tensor y = conv(make_as(DType::Float32, x, shape_of(xs)), make_as(DType::Float32, f, shape_of(fs)),
                    {1, stride, stride, 1}, "SAME");
    CHECK(y.shape() == shape_of(ys));
    check_close(as_doubles(y), want, 1e-4);
  }
  // Results are identical across thread counts.
  ContextOptions o1;
  o1.num_threads = 1;
  Ref<Context> c1 = make_ref<Context>(o1);
  Tensor xt = make_as(DType::Float32, x, shape_of(xs)), ft = make_as(DType::Float32, f, shape_of(fs));
  auto a = values<float>(run_op(*c1, "Conv2D", {xt, ft}, {attr_ints("strides", {1, 1, 1, 1}), attr_string("padding", "SAME")}).at(0));
  auto b = values<float>(conv(xt, ft, {1, 1, 1, 1}, "SAME"));
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("Conv2D with empty dimensions") {
  Tensor f = make<float>(std::vector<float>(2 * 2 * 3 * 4, 1.0f), {2, 2, 3, 4});
  CHECK(conv(make<float>({}, {0, 5, 5, 3}), f, {1, 1, 1, 1}, "SAME").shape() == Shape{0, 5, 5, 4});
  CHECK(conv(make<float>({}, {1, 0, 5, 3}), f, {1, 1, 1, 1}, "SAME").shape() == Shape{1, 0, 5, 4});
  // Input 2 high, filter 2 dilated to 3: VALID gives (2 - 3 + 1) / 1 = 0 rows, like TF.
  CHECK(conv(make<float>(std::vector<float>(2 * 5 * 3, 1.0f), {1, 2, 5, 3}), f, {1, 1, 1, 1}, "VALID", {1, 2, 1, 1})
            .shape() == Shape{1, 0, 4, 4});
  // No input channels: every output is 0.
  Tensor y = conv(make<float>({}, {1, 2, 2, 0}), make<float>({}, {1, 1, 0, 3}), {1, 1, 1, 1}, "VALID");
  CHECK(y.shape() == Shape{1, 2, 2, 3});
  check_close(as_doubles(y), std::vector<double>(12, 0.0));
  CHECK(conv(make<float>(std::vector<float>(12, 1.0f), {1, 2, 2, 3}), make<float>({}, {1, 1, 3, 0}), {1, 1, 1, 1}, "SAME")
            .shape() == Shape{1, 2, 2, 0});
}

TEST_CASE("Conv2D errors") {
  Tensor x = make<float>(std::vector<float>(2 * 5 * 5 * 3, 1.0f), {2, 5, 5, 3});
  Tensor f = make<float>(std::vector<float>(2 * 2 * 3 * 4, 1.0f), {2, 2, 3, 4});
  const std::vector<int64_t> one = {1, 1, 1, 1};
  CHECK_THROWS_CODE(conv(x, f, one, "EXPLICIT"), Code::InvalidArgument,
                    "Conv2D: attribute 'padding' must be one of SAME/VALID, got \"EXPLICIT\"");
  CHECK_THROWS_CODE(conv(x, f, {1, 1, 1}, "SAME"), Code::InvalidArgument, "Conv2D: strides must have 4 elements (NHWC), got 3");
  CHECK_THROWS_CODE(conv(x, f, {2, 1, 1, 1}, "SAME"), Code::InvalidArgument,
                    "Conv2D: strides in the batch and depth dimensions must be 1, got [2,1,1,1]");
  CHECK_THROWS_CODE(conv(x, f, {1, 0, 1, 1}, "SAME"), Code::InvalidArgument, "Conv2D: strides must be positive, got [1,0,1,1]");
  CHECK_THROWS_CODE(conv(x, f, one, "SAME", {1, 1}), Code::InvalidArgument, "Conv2D: dilations must have 4 elements");
  CHECK_THROWS_CODE(conv(x, f, one, "SAME", {1, 2, 2, 2}), Code::InvalidArgument,
                    "Conv2D: dilations in the batch and depth dimensions must be 1");
  CHECK_THROWS_CODE(conv(make<float>(std::vector<float>(25, 1.0f), {5, 5, 1}), f, one, "SAME"), Code::InvalidArgument,
                    "Conv2D: input must be 4-D [batch, height, width, channels], got shape [5,5,1]");
  CHECK_THROWS_CODE(conv(x, make<float>(std::vector<float>(12, 1.0f), {2, 2, 3}), one, "SAME"), Code::InvalidArgument,
                    "Conv2D: filter must be 4-D");
  CHECK_THROWS_CODE(conv(x, make<float>(std::vector<float>(16, 1.0f), {2, 2, 1, 4}), one, "SAME"), Code::InvalidArgument,
                    "Conv2D: input has 3 channels but the filter expects 1");
  CHECK_THROWS_CODE(conv(x, make<float>({}, {0, 2, 3, 4}), one, "SAME"), Code::InvalidArgument,
                    "Conv2D: filter height and width must be positive");
  // A 2x2 filter dilated by 5 spans 6 > 5 + ... : (5 - 6 + 1) = 0 rows is allowed; dilated by 9 spans 10: negative.
  CHECK(conv(x, f, one, "VALID", {1, 5, 1, 1}).shape() == Shape{2, 0, 4, 4});
  CHECK_THROWS_CODE(conv(x, f, one, "VALID", {1, 9, 1, 1}), Code::InvalidArgument,
                    "Conv2D: with VALID padding the height window (10) is larger than the input height (5)");
  CHECK_THROWS_CODE(run1("Conv2D", {x, f}, {attr_ints("strides", one), attr_string("padding", "SAME"),
                                            attr_string("data_format", "NCHW")}),
                    Code::InvalidArgument, "Conv2D: attribute 'data_format' must be one of NHWC");
  CHECK_THROWS_CODE(run1("Conv2D", {x, f}, {attr_ints("strides", one)}), Code::InvalidArgument,
                    "Conv2D: missing required attribute 'padding'");
  CHECK_THROWS_CODE(conv(make<int32_t>({1}, {1, 1, 1, 1}), make<int32_t>({1}, {1, 1, 1, 1}), one, "SAME"),
                    Code::InvalidArgument, "which Conv2D does not accept");
  CHECK_THROWS_CODE(conv(x, make<double>(std::vector<double>(48, 1.0), {2, 2, 3, 4}), one, "SAME"), Code::InvalidArgument,
                    "Conv2D: input 'filter' has dtype float64 but 'input' has float32");
}

TEST_CASE("AvgPool divides by the number of in-bounds elements; MaxPool by hand") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  Tensor a = pool("AvgPool", x, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME");
  CHECK(a.shape() == Shape{1, 3, 3, 1});
  check_close(as_doubles(a), {3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9});
  check_close(as_doubles(pool("AvgPool", x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID")), {3, 4, 6, 7});
  check_close(as_doubles(pool("MaxPool", x, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME")), {5, 6, 6, 8, 9, 9, 8, 9, 9});
  check_close(as_doubles(pool("MaxPool", x, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME")), {5, 6, 8, 9});
  check_close(as_doubles(pool("MaxPool", x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID")), {5});
  // Negative values: padding never contributes (a zero pad would win the max).
  Tensor neg = make<float>({-1, -2, -3, -4}, {1, 2, 2, 1});
  check_close(as_doubles(pool("MaxPool", neg, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME")), {-1, -1, -1, -1});
  // NaN wins in MaxPool.
  check_close(as_doubles(pool("MaxPool", make<float>({1, NAN, 3, 4}, {1, 2, 2, 1}), {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID")),
              {NAN});
}

TEST_CASE("pools match a direct loop for every float dtype") {
  const std::vector<int64_t> xs = {2, 7, 6, 3};
  std::vector<double> x = wave(2 * 7 * 6 * 3, 3.0);
  for (auto [kh, kw] : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {3, 3}, {3, 2}, {1, 1}})
    for (int64_t stride : {1, 2})
      for (const char* padding : {"SAME", "VALID"})
        for (bool is_max : {true, false}) {
          CAPTURE(kh);
          CAPTURE(kw);
          CAPTURE(stride);
          CAPTURE(padding);
          CAPTURE(is_max);
          for (DType t : kFloatTypes) {
            CAPTURE(dtype_name(t));
            Tensor xt = make_as(t, x, shape_of(xs));
            std::vector<int64_t> ys;
            auto want = ref_pool(as_doubles(xt), xs, kh, kw, stride, stride, std::string(padding) == "SAME", is_max, &ys);
            Tensor y = pool(is_max ? "MaxPool" : "AvgPool", xt, {1, kh, kw, 1}, {1, stride, stride, 1}, padding);
            CHECK(y.dtype() == t);
            CHECK(y.shape() == shape_of(ys));
            check_close(as_doubles(y), want, tol_for(t));
          }
        }
}

TEST_CASE("pools with empty inputs and pool errors") {
  CHECK(pool("MaxPool", make<float>({}, {0, 4, 4, 2}), {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME").shape() == Shape{0, 4, 4, 2});
  CHECK(pool("AvgPool", make<float>({}, {1, 4, 4, 0}), {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID").shape() == Shape{1, 2, 2, 0});
  CHECK(pool("AvgPool", make<float>({}, {1, 0, 4, 1}), {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME").shape() == Shape{1, 0, 2, 1});
  // A window much larger than the input under SAME: one output covering everything.
  check_close(as_doubles(pool("AvgPool", make<float>({1, 2, 3, 4}, {1, 2, 2, 1}), {1, 50, 50, 1}, {1, 1, 1, 1}, "SAME")),
              {2.5, 2.5, 2.5, 2.5});
  Tensor x = make<float>(std::vector<float>(16, 1.0f), {1, 4, 4, 1});
  CHECK_THROWS_CODE(pool("MaxPool", x, {1, 2, 2}, {1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
                    "MaxPool: ksize must have 4 elements (NHWC), got 3");
  CHECK_THROWS_CODE(pool("AvgPool", x, {1, 2, 2, 1}, {1, 1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
                    "AvgPool: strides must have 4 elements (NHWC), got 5");
  CHECK_THROWS_CODE(pool("MaxPool", x, {2, 2, 2, 1}, {1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
                    "MaxPool: ksize in the batch and depth dimensions must be 1, got [2,2,2,1]");
  CHECK_THROWS_CODE(pool("MaxPool", x, {1, 0, 2, 1}, {1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
                    "MaxPool: ksize must be positive");
  CHECK_THROWS_CODE(pool("AvgPool", x, {1, 2, 2, 1}, {1, 1, 1, 2}, "SAME"), Code::InvalidArgument,
                    "AvgPool: strides in the batch and depth dimensions must be 1");
  CHECK_THROWS_CODE(pool("AvgPool", x, {1, 2, 2, 1}, {1, 1, 1, 1}, "same"), Code::InvalidArgument,
                    "AvgPool: attribute 'padding' must be one of SAME/VALID, got \"same\"");
  CHECK_THROWS_CODE(pool("MaxPool", x, {1, 9, 2, 1}, {1, 1, 1, 1}, "VALID"), Code::InvalidArgument,
                    "MaxPool: with VALID padding the height window (9) is larger than the input height (4)");
  CHECK_THROWS_CODE(pool("MaxPool", make<float>({1}, {1, 1, 1}), {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"),
                    Code::InvalidArgument, "MaxPool: input must be 4-D");
  CHECK_THROWS_CODE(pool("AvgPool", make<int32_t>({1}, {1, 1, 1, 1}), {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"),
                    Code::InvalidArgument, "which AvgPool does not accept");
}

}  // namespace cairn
