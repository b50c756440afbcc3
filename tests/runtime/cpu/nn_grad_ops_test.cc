// Conv2DBackpropInput, Conv2DBackpropFilter, MaxPoolGrad, MaxPoolGradGrad and AvgPoolGrad: values
// by hand, against direct loops written from the definitions (scatter of each output's
// gradient over its window), every float dtype, threading, empty shapes and errors.
#include <cmath>
#include <cstring>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
double tol_for(DType t) { return t == DType::BFloat16 ? 3e-2 : t == DType::Float16 ? 3e-3 : 1e-5; }

std::vector<double> wave(size_t n, double scale, double phase = 0.1) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + phase) * scale;
  return v;
}

Shape shape_of(const std::vector<int64_t>& d) { return Shape::from(d.data(), d.size(), "test"); }
size_t count(const std::vector<int64_t>& d) { return static_cast<size_t>(shape_of(d).num_elements()); }

// TensorFlow's output size and padding before, written independently of the runtime.
struct Dim {
  int64_t out, pad;
};
Dim tf_dim(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  const int64_t eff = (k - 1) * dilation + 1;
  if (same) {
    const int64_t out = (in + stride - 1) / stride;
    return {out, std::max<int64_t>((out - 1) * stride + eff - in, 0) / 2};
  }
  return {(in - eff + stride) / stride, 0};
}

struct Conv {
  std::vector<int64_t> xs, fs;  // input [n,h,w,ci] and filter [kh,kw,ci,co] shapes
  int64_t stride, dil;
  bool same;
  std::vector<int64_t> ys() const {
    return {xs[0], tf_dim(xs[1], fs[0], stride, dil, same).out, tf_dim(xs[2], fs[1], stride, dil, same).out, fs[3]};
  }
  // Calls fn(x index, f index, y index) for every multiply of the convolution.
  template <class F>
  void each(F&& fn) const {
    const int64_t h = xs[1], w = xs[2], ci = xs[3], kh = fs[0], kw = fs[1], co = fs[3];
    const Dim dh = tf_dim(h, kh, stride, dil, same), dw = tf_dim(w, kw, stride, dil, same);
    for (int64_t b = 0; b < xs[0]; ++b)
      for (int64_t oy = 0; oy < dh.out; ++oy)
        for (int64_t ox = 0; ox < dw.out; ++ox)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t iy = oy * stride - dh.pad + i * dil, ix = ox * stride - dw.pad + j * dil;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int64_t c = 0; c < ci; ++c)
                for (int64_t o = 0; o < co; ++o)
                  fn(static_cast<size_t>(((b * h + iy) * w + ix) * ci + c), static_cast<size_t>(((i * kw + j) * ci + c) * co + o),
                     static_cast<size_t>(((b * dh.out + oy) * dw.out + ox) * co + o));
            }
  }
  std::vector<NamedAttr> attrs(const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) const {
    return {attr_ints("strides", strides), attr_string("padding", same ? "SAME" : "VALID"),
            attr_ints("dilations", dilations)};
  }
};

// dL/dx for y = conv(x, f): every multiply x*f sends dy*f back to x.
std::vector<double> ref_backprop_input(const Conv& c, const std::vector<double>& f, const std::vector<double>& dy) {
  std::vector<double> dx(count(c.xs), 0.0);
  c.each([&](size_t xi, size_t fi, size_t yi) { dx[xi] += dy[yi] * f[fi]; });
  return dx;
}
std::vector<double> ref_backprop_filter(const Conv& c, const std::vector<double>& x, const std::vector<double>& dy) {
  std::vector<double> df(count(c.fs), 0.0);
  c.each([&](size_t xi, size_t fi, size_t yi) { df[fi] += dy[yi] * x[xi]; });
  return df;
}

Tensor backprop_input(const Conv& c, const Tensor& f, const Tensor& dy) {
  const std::vector<int64_t> strides = {1, c.stride, c.stride, 1}, dil = {1, c.dil, c.dil, 1};
  std::vector<NamedAttr> attrs = c.attrs(strides, dil);
  attrs.push_back(attr_ints("input_sizes", c.xs));
  return run_op(ctx(), "Conv2DBackpropInput", {f, dy}, attrs).at(0);
}
Tensor backprop_filter(const Conv& c, const Tensor& x, const Tensor& dy, Context& context = ctx()) {
  const std::vector<int64_t> strides = {1, c.stride, c.stride, 1}, dil = {1, c.dil, c.dil, 1};
  std::vector<NamedAttr> attrs = c.attrs(strides, dil);
  attrs.push_back(attr_ints("filter_sizes", c.fs));
  return run_op(context, "Conv2DBackpropFilter", {x, dy}, attrs).at(0);
}

struct Pool {
  std::vector<int64_t> xs;
  int64_t kh, kw, stride;
  bool same;
  std::vector<int64_t> ys() const {
    return {xs[0], tf_dim(xs[1], kh, stride, 1, same).out, tf_dim(xs[2], kw, stride, 1, same).out, xs[3]};
  }
  // Calls fn(y index, x indices of the window's in-bounds elements in row-major order).
  template <class F>
  void each(F&& fn) const {
    const int64_t h = xs[1], w = xs[2], ch = xs[3];
    const Dim dh = tf_dim(h, kh, stride, 1, same), dw = tf_dim(w, kw, stride, 1, same);
    for (int64_t b = 0; b < xs[0]; ++b)
      for (int64_t oy = 0; oy < dh.out; ++oy)
        for (int64_t ox = 0; ox < dw.out; ++ox)
          for (int64_t c = 0; c < ch; ++c) {
            std::vector<size_t> window;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = oy * stride - dh.pad + i, ix = ox * stride - dw.pad + j;
                if (iy >= 0 && iy < h && ix >= 0 && ix < w) window.push_back(static_cast<size_t>(((b * h + iy) * w + ix) * ch + c));
              }
            fn(static_cast<size_t>(((b * dh.out + oy) * dw.out + ox) * ch + c), window);
          }
  }
  std::vector<NamedAttr> attrs(const std::vector<int64_t>& k, const std::vector<int64_t>& s) const {
    return {attr_ints("ksize", k), attr_ints("strides", s), attr_string("padding", same ? "SAME" : "VALID")};
  }
};

// The first window element holding the maximum (strictly greater replaces).
size_t ref_argmax(const std::vector<double>& x, const std::vector<size_t>& window) {
  size_t best = window[0];
  for (size_t i : window)
    if (x[i] > x[best]) best = i;
  return best;
}

std::vector<NamedAttr> pool_call(const Pool& p, std::vector<int64_t>& k, std::vector<int64_t>& s) {
  k = {1, p.kh, p.kw, 1};
  s = {1, p.stride, p.stride, 1};
  return p.attrs(k, s);
}

Tensor max_pool_grad(const Pool& p, const Tensor& x, const Tensor& dy) {
  std::vector<int64_t> k, s;
  std::vector<NamedAttr> attrs = pool_call(p, k, s);
  Tensor y = run_op(ctx(), "MaxPool", {x}, attrs).at(0);
  return run_op(ctx(), "MaxPoolGrad", {x, y, dy}, attrs).at(0);
}
Tensor max_pool_grad_grad(const Pool& p, const Tensor& x, const Tensor& g) {
  std::vector<int64_t> k, s;
  std::vector<NamedAttr> attrs = pool_call(p, k, s);
  Tensor y = run_op(ctx(), "MaxPool", {x}, attrs).at(0);
  return run_op(ctx(), "MaxPoolGradGrad", {x, y, g}, attrs).at(0);
}
Tensor avg_pool_grad(const Pool& p, const Tensor& dy) {
  std::vector<int64_t> k, s;
  std::vector<NamedAttr> attrs = pool_call(p, k, s);
  attrs.push_back(attr_ints("orig_input_shape", p.xs));
  return run_op(ctx(), "AvgPoolGrad", {dy}, attrs).at(0);
}

}  // namespace

TEST_CASE("Conv2D backprops by hand") {
  // 3x3 input, 2x2 filter, VALID: 2x2 outputs.
  Conv c{{1, 3, 3, 1}, {2, 2, 1, 1}, 1, 1, false};
  Tensor dy = make<float>({1, 2, 3, 4}, {1, 2, 2, 1});
  // Each input pixel collects dy * f over the windows covering it; with f = 1 that is a sum of dy.
  CHECK(values<float>(backprop_input(c, make<float>({1, 1, 1, 1}, {2, 2, 1, 1}), dy)) ==
        std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4});
  // f = [[1,2],[3,4]]: pixel (1,1) is tap (1,1) of output 0, (1,0) of 1, (0,1) of 2, (0,0) of 3.
  CHECK(values<float>(backprop_input(c, make<float>({1, 2, 3, 4}, {2, 2, 1, 1}), dy)) ==
        std::vector<float>{1, 4, 4, 6, 20, 16, 9, 24, 16});
  // The filter gradient with dy = 1 sums each tap's inputs: Conv2D of x with a ones filter.
  Tensor x = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  CHECK(values<float>(backprop_filter(c, x, make<float>({1, 1, 1, 1}, {1, 2, 2, 1}))) ==
        std::vector<float>{12, 16, 24, 28});
  // Stride 2 SAME on 3x3: outputs at (0,0),(0,2),(2,0),(2,2) with the padding after.
  Conv s{{1, 3, 3, 1}, {2, 2, 1, 1}, 2, 1, true};
  CHECK(values<float>(backprop_input(s, make<float>({1, 2, 3, 4}, {2, 2, 1, 1}), dy)) ==
        std::vector<float>{1, 2, 2, 3, 4, 6, 3, 6, 4});
  CHECK(values<float>(backprop_filter(s, x, dy)) == std::vector<float>{1 + 6 + 21 + 36, 2 + 0 + 24 + 0, 4 + 12 + 0 + 0, 5 + 0 + 0 + 0});
  // Dilation 2: a 2x2 filter reads only the corners of the 3x3 input.
  Conv d{{1, 3, 3, 1}, {2, 2, 1, 1}, 1, 2, false};
  CHECK(values<float>(backprop_input(d, make<float>({1, 2, 3, 4}, {2, 2, 1, 1}), make<float>({10}, {1, 1, 1, 1}))) ==
        std::vector<float>{10, 0, 20, 0, 0, 0, 30, 0, 40});
  CHECK(values<float>(backprop_filter(d, x, make<float>({10}, {1, 1, 1, 1}))) == std::vector<float>{10, 30, 70, 90});
}

TEST_CASE("Conv2D backprops match direct loops: SAME/VALID, strides 1 and 2, dilation 1 and 2, every float dtype") {
  for (std::vector<int64_t> fs : {std::vector<int64_t>{3, 2, 3, 4}, std::vector<int64_t>{1, 1, 3, 5},
                                  std::vector<int64_t>{3, 3, 3, 2}})
    for (bool same : {true, false})
      for (int64_t stride : {1, 2})
        for (int64_t dil : {1, 2}) {
          Conv c{{2, 7, 6, 3}, fs, stride, dil, same};
          CAPTURE(same);
          CAPTURE(stride);
          CAPTURE(dil);
          CAPTURE(fs[0]);
          const std::vector<double> x = wave(count(c.xs), 1.0), f = wave(count(c.fs), 0.5, 0.4),
                                    dy = wave(count(c.ys()), 1.0, 0.9);
          for (DType t : kFloatTypes) {
            CAPTURE(dtype_name(t));
            Tensor xt = make_as(t, x, shape_of(c.xs)), ft = make_as(t, f, shape_of(c.fs)), dyt = make_as(t, dy, shape_of(c.ys()));
            Tensor dx = backprop_input(c, ft, dyt);
            Tensor df = backprop_filter(c, xt, dyt);
            CHECK(dx.dtype() == t);
            CHECK(df.dtype() == t);
            CHECK(dx.shape() == shape_of(c.xs));
            CHECK(df.shape() == shape_of(c.fs));
            // 16-bit inputs are rounded first: the loops run on the rounded values.
            check_close(as_doubles(dx), ref_backprop_input(c, as_doubles(ft), as_doubles(dyt)), tol_for(t));
            check_close(as_doubles(df), ref_backprop_filter(c, as_doubles(xt), as_doubles(dyt)), tol_for(t) * 4);
          }
        }
}

TEST_CASE("Conv2D backprops over several tiles with large channel counts; same bits for any thread count") {
  // k = 3*3*64 = 576 taps: tiles of 455 rows, which cross the 360-row image boundaries.
  Conv c{{3, 20, 18, 64}, {3, 3, 64, 24}, 1, 1, true};
  const std::vector<double> x = wave(count(c.xs), 1.0), f = wave(count(c.fs), 0.1, 0.4), dy = wave(count(c.ys()), 1.0, 0.9);
  Tensor xt = make_as(DType::Float32, x, shape_of(c.xs)), ft = make_as(DType::Float32, f, shape_of(c.fs)),
         dyt = make_as(DType::Float32, dy, shape_of(c.ys()));
  check_close(as_doubles(backprop_input(c, ft, dyt)), ref_backprop_input(c, f, dy), 1e-4);
  check_close(as_doubles(backprop_filter(c, xt, dyt)), ref_backprop_filter(c, x, dy), 1e-4);
  ContextOptions o1;
  o1.num_threads = 1;
  Ref<Context> c1 = make_ref<Context>(o1);
  auto a = values<float>(backprop_filter(c, xt, dyt, *c1));
  auto b = values<float>(backprop_filter(c, xt, dyt));
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  const std::vector<int64_t> one = {1, 1, 1, 1};
  std::vector<NamedAttr> attrs = c.attrs(one, one);
  attrs.push_back(attr_ints("input_sizes", c.xs));
  auto d1 = values<float>(run_op(*c1, "Conv2DBackpropInput", {ft, dyt}, attrs).at(0));
  auto d2 = values<float>(run_op(ctx(), "Conv2DBackpropInput", {ft, dyt}, attrs).at(0));
  CHECK(std::memcmp(d1.data(), d2.data(), d1.size() * sizeof(float)) == 0);
}

TEST_CASE("Conv2D backprops with empty dimensions") {
  // No batch: the filter gradient is all zeros.
  Conv nb{{0, 5, 5, 3}, {2, 2, 3, 4}, 1, 1, true};
  Tensor df = backprop_filter(nb, make<float>({}, {0, 5, 5, 3}), make<float>({}, {0, 5, 5, 4}));
  CHECK(df.shape() == Shape{2, 2, 3, 4});
  check_close(as_doubles(df), std::vector<double>(48, 0.0));
  CHECK(backprop_input(nb, make<float>(std::vector<float>(48, 1.0f), {2, 2, 3, 4}), make<float>({}, {0, 5, 5, 4})).shape() ==
        Shape{0, 5, 5, 3});
  // No output channels: the input gradient is all zeros.
  Conv no{{1, 2, 2, 3}, {1, 1, 3, 0}, 1, 1, false};
  Tensor dx = backprop_input(no, make<float>({}, {1, 1, 3, 0}), make<float>({}, {1, 2, 2, 0}));
  CHECK(dx.shape() == Shape{1, 2, 2, 3});
  check_close(as_doubles(dx), std::vector<double>(12, 0.0));
  // VALID with a window larger than the input by less than a stride: no outputs, zero gradients.
  Conv z{{1, 2, 5, 1}, {2, 1, 1, 1}, 1, 2, false};
  check_close(as_doubles(backprop_input(z, make<float>({1, 1}, {2, 1, 1, 1}), make<float>({}, {1, 0, 5, 1}))),
              std::vector<double>(10, 0.0));
}

TEST_CASE("Conv2D backprop errors") {
  Tensor f = make<float>(std::vector<float>(2 * 2 * 3 * 4, 1.0f), {2, 2, 3, 4});
  Tensor x = make<float>(std::vector<float>(5 * 5 * 3, 1.0f), {1, 5, 5, 3});
  Tensor dy = make<float>(std::vector<float>(4 * 4 * 4, 1.0f), {1, 4, 4, 4});
  const std::vector<int64_t> one = {1, 1, 1, 1};
  auto input = [&](const Tensor& ft, const Tensor& g, const std::vector<int64_t>& sizes) {
    return run_op(ctx(), "Conv2DBackpropInput", {ft, g},
                  {attr_ints("strides", one), attr_string("padding", "VALID"), attr_ints("input_sizes", sizes)});
  };
  auto filter = [&](const Tensor& xt, const Tensor& g, const std::vector<int64_t>& sizes) {
    return run_op(ctx(), "Conv2DBackpropFilter", {xt, g},
                  {attr_ints("strides", one), attr_string("padding", "VALID"), attr_ints("filter_sizes", sizes)});
  };
  CHECK(input(f, dy, {1, 5, 5, 3}).at(0).shape() == Shape{1, 5, 5, 3});
  CHECK_THROWS_CODE(input(f, dy, {1, 5, 5}), Code::InvalidArgument,
                    "Conv2DBackpropInput: input_sizes must have 4 elements, got [1,5,5]");
  CHECK_THROWS_CODE(input(f, dy, {1, -5, 5, 3}), Code::InvalidArgument,
                    "Conv2DBackpropInput: input_sizes must be non-negative, got [1,-5,5,3]");
  CHECK_THROWS_CODE(input(f, dy, {1, 6, 5, 3}), Code::InvalidArgument,
                    "Conv2DBackpropInput: out_backprop has shape [1,4,4,4] but Conv2D of input [1,6,5,3] with filter "
                    "[2,2,3,4] gives [1,5,4,4]");
  CHECK_THROWS_CODE(input(f, dy, {2, 5, 5, 3}), Code::InvalidArgument, "gives [2,4,4,4]");
  CHECK_THROWS_CODE(input(f, dy, {1, 5, 5, 2}), Code::InvalidArgument,
                    "Conv2DBackpropInput: input has 2 channels but the filter expects 3");
  CHECK_THROWS_CODE(input(make<float>({1, 2, 3}, {3}), dy, {1, 5, 5, 3}), Code::InvalidArgument,
                    "Conv2DBackpropInput: filter must be 4-D, got shape [3]");
  CHECK_THROWS_CODE(input(f, make<float>({1}, {1}), {1, 5, 5, 3}), Code::InvalidArgument,
                    "Conv2DBackpropInput: out_backprop must be 4-D");
  CHECK_THROWS_CODE(input(f, dy, {1, 0, 5, 3}), Code::InvalidArgument,
                    "Conv2DBackpropInput: with VALID padding the height window (2) is larger than the input height (0)");
  CHECK_THROWS_CODE(input(f, make<double>(std::vector<double>(64, 1.0), {1, 4, 4, 4}), {1, 5, 5, 3}),
                    Code::InvalidArgument, "Conv2DBackpropInput: input 'out_backprop' has dtype float64 but 'filter' has float32");
  CHECK_THROWS_CODE(input(make<int32_t>({1}, {1, 1, 1, 1}), make<int32_t>({1}, {1, 1, 1, 1}), {1, 1, 1, 1}),
                    Code::InvalidArgument, "which Conv2DBackpropInput does not accept");
  CHECK_THROWS_CODE(run_op(ctx(), "Conv2DBackpropInput", {f, dy}, {attr_ints("strides", one), attr_string("padding", "VALID")}),
                    Code::InvalidArgument, "Conv2DBackpropInput: missing required attribute 'input_sizes'");
  CHECK(filter(x, dy, {2, 2, 3, 4}).at(0).shape() == Shape{2, 2, 3, 4});
  CHECK_THROWS_CODE(filter(x, dy, {2, 2, 3}), Code::InvalidArgument,
                    "Conv2DBackpropFilter: filter_sizes must have 4 elements, got [2,2,3]");
  CHECK_THROWS_CODE(filter(x, dy, {0, 2, 3, 4}), Code::InvalidArgument,
                    "Conv2DBackpropFilter: filter height and width must be positive, got filter [0,2,3,4]");
  CHECK_THROWS_CODE(filter(x, dy, {2, 2, 3, 5}), Code::InvalidArgument,
                    "Conv2DBackpropFilter: out_backprop has shape [1,4,4,4] but Conv2D of input [1,5,5,3] with filter "
                    "[2,2,3,5] gives [1,4,4,5]");
  CHECK_THROWS_CODE(run_op(ctx(), "Conv2DBackpropFilter", {x, dy},
                           {attr_ints("strides", {1, 1, 1}), attr_string("padding", "VALID"),
                            attr_ints("filter_sizes", {2, 2, 3, 4})}),
                    Code::InvalidArgument, "Conv2DBackpropFilter: strides must have 4 elements (NHWC), got 3");
  CHECK_THROWS_CODE(run_op(ctx(), "Conv2DBackpropFilter", {x, dy},
                           {attr_ints("strides", one), attr_string("padding", "VALID"), attr_ints("dilations", {2, 1, 1, 1}),
                            attr_ints("filter_sizes", {2, 2, 3, 4})}),
                    Code::InvalidArgument, "Conv2DBackpropFilter: dilations in the batch and depth dimensions must be 1");
}

TEST_CASE("MaxPoolGrad and MaxPoolGradGrad by hand: argmax routing, ties, NaN") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  Pool valid{{1, 3, 3, 1}, 2, 2, 1, false};
  CHECK(values<float>(max_pool_grad(valid, x, make<float>({1, 2, 3, 4}, {1, 2, 2, 1}))) ==
        std::vector<float>{0, 0, 0, 0, 1, 2, 0, 3, 4});
  // SAME 2x2: windows at the right and bottom edges are clipped; 9 collects four windows.
  Pool same{{1, 3, 3, 1}, 2, 2, 1, true};
  CHECK(values<float>(max_pool_grad(same, x, make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1}))) ==
        std::vector<float>{0, 0, 0, 0, 1, 5, 0, 11, 28});
  CHECK(values<float>(max_pool_grad_grad(same, x, make<float>({10, 20, 30, 40, 50, 60, 70, 80, 90}, {1, 3, 3, 1}))) ==
        std::vector<float>{50, 60, 60, 80, 90, 90, 80, 90, 90});
  // Ties: the first element of the window (row-major) takes the gradient.
  Tensor tied = make<float>({7, 7, 7, 7}, {1, 2, 2, 1});
  Pool p22{{1, 2, 2, 1}, 2, 2, 1, false};
  CHECK(values<float>(max_pool_grad(p22, tied, make<float>({5}, {1, 1, 1, 1}))) == std::vector<float>{5, 0, 0, 0});
  CHECK(values<float>(max_pool_grad_grad(p22, tied, make<float>({1, 2, 3, 4}, {1, 2, 2, 1}))) == std::vector<float>{1});
  // NaN wins in MaxPool, so it takes the gradient.
  CHECK(values<float>(max_pool_grad(p22, make<float>({1, NAN, 3, 4}, {1, 2, 2, 1}), make<float>({5}, {1, 1, 1, 1}))) ==
        std::vector<float>{0, 5, 0, 0});
  // Negative values next to padding: padding never wins.
  Pool big{{1, 2, 2, 1}, 3, 3, 1, true};
  CHECK(values<float>(max_pool_grad(big, make<float>({-4, -1, -3, -2}, {1, 2, 2, 1}), make<float>({1, 2, 3, 4}, {1, 2, 2, 1}))) ==
        std::vector<float>{0, 10, 0, 0});
}

TEST_CASE("AvgPoolGrad by hand: each window's share over its in-bounds elements") {
  Pool same{{1, 3, 3, 1}, 2, 2, 1, true};
  // Window sizes 4 4 2 / 4 4 2 / 2 2 1; each pixel sums 1/size over the windows covering it.
  check_close(as_doubles(avg_pool_grad(same, make<float>(std::vector<float>(9, 1.0f), {1, 3, 3, 1}))),
              {0.25, 0.5, 0.75, 0.5, 1, 1.5, 0.75, 1.5, 2.25});
  Pool valid{{1, 3, 3, 1}, 2, 2, 1, false};
  check_close(as_doubles(avg_pool_grad(valid, make<float>({4, 8, 12, 16}, {1, 2, 2, 1}))), {1, 3, 2, 4, 10, 6, 3, 7, 4});
  // A window larger than the input: one output, every element gets a quarter.
  Pool huge{{1, 2, 2, 1}, 50, 50, 1, true};
  check_close(as_doubles(avg_pool_grad(huge, make<float>({4, 8, 12, 16}, {1, 2, 2, 1}))), {10, 10, 10, 10});
}

TEST_CASE("pool gradients match direct loops for every float dtype") {
  for (auto [kh, kw] : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {3, 3}, {3, 2}, {1, 1}})
    for (int64_t stride : {1, 2})
      for (bool same : {true, false}) {
        // 19 channels: a full block of 16 and a partial one.
        Pool p{{2, 7, 6, 19}, kh, kw, stride, same};
        CAPTURE(kh);
        CAPTURE(kw);
        CAPTURE(stride);
        CAPTURE(same);
        // Distinct values (wave with an irrational step) so the argmax is unambiguous in float32/64.
        const std::vector<double> x = wave(count(p.xs), 3.0), dy = wave(count(p.ys()), 1.0, 0.7),
                                  g = wave(count(p.xs), 1.0, 1.3);
        for (DType t : kFloatTypes) {
          CAPTURE(dtype_name(t));
          Tensor xt = make_as(t, x, shape_of(p.xs)), dyt = make_as(t, dy, shape_of(p.ys())), gt = make_as(t, g, shape_of(p.xs));
          const std::vector<double> xr = as_doubles(xt), dyr = as_doubles(dyt), gr = as_doubles(gt);
          std::vector<double> want_max(xr.size(), 0.0), want_avg(xr.size(), 0.0), want_gg(dyr.size());
          p.each([&](size_t yi, const std::vector<size_t>& window) {
            want_max[ref_argmax(xr, window)] += dyr[yi];
            want_gg[yi] = gr[ref_argmax(xr, window)];
            for (size_t i : window) want_avg[i] += dyr[yi] / static_cast<double>(window.size());
          });
          Tensor dmax = max_pool_grad(p, xt, dyt), davg = avg_pool_grad(p, dyt), gg = max_pool_grad_grad(p, xt, gt);
          CHECK(dmax.dtype() == t);
          CHECK(davg.dtype() == t);
          CHECK(dmax.shape() == shape_of(p.xs));
          CHECK(davg.shape() == shape_of(p.xs));
          CHECK(gg.shape() == shape_of(p.ys()));
          check_close(as_doubles(dmax), want_max, tol_for(t));
          check_close(as_doubles(davg), want_avg, tol_for(t));
          check_close(as_doubles(gg), want_gg, 0);
        }
      }
}

TEST_CASE("pool gradients with empty shapes and errors") {
  Pool empty{{0, 4, 4, 2}, 2, 2, 1, true};
  CHECK(max_pool_grad(empty, make<float>({}, {0, 4, 4, 2}), make<float>({}, {0, 4, 4, 2})).shape() == Shape{0, 4, 4, 2});
  CHECK(avg_pool_grad(empty, make<float>({}, {0, 4, 4, 2})).shape() == Shape{0, 4, 4, 2});
  Pool no_rows{{1, 0, 4, 1}, 2, 2, 2, true};
  CHECK(avg_pool_grad(no_rows, make<float>({}, {1, 0, 2, 1})).shape() == Shape{1, 0, 4, 1});

  Tensor x = make<float>(std::vector<float>(16, 1.0f), {1, 4, 4, 1});
  Tensor y = make<float>(std::vector<float>(4, 1.0f), {1, 2, 2, 1});
  const std::vector<int64_t> k = {1, 2, 2, 1}, s = {1, 2, 2, 1};
  auto attrs = [&](const char* padding) {
    return std::vector<NamedAttr>{attr_ints("ksize", k), attr_ints("strides", s), attr_string("padding", padding)};
  };
  CHECK(run_op(ctx(), "MaxPoolGrad", {x, y, y}, attrs("VALID")).at(0).shape() == Shape{1, 4, 4, 1});
  CHECK_THROWS_CODE(run_op(ctx(), "MaxPoolGrad", {x, y, x}, attrs("VALID")), Code::InvalidArgument,
                    "MaxPoolGrad: grad has shape [1,4,4,1] but pooling input [1,4,4,1] gives [1,2,2,1]");
  CHECK_THROWS_CODE(run_op(ctx(), "MaxPoolGrad", {x, x, y}, attrs("VALID")), Code::InvalidArgument,
                    "MaxPoolGrad: orig_output has shape [1,4,4,1]");
  CHECK_THROWS_CODE(run_op(ctx(), "MaxPoolGrad", {y, y, y}, std::vector<NamedAttr>{attr_ints("ksize", {1, 4, 4, 1}),
                                                                                  attr_ints("strides", {1, 1, 1, 1}),
                                                                                  attr_string("padding", "VALID")}),
                    Code::InvalidArgument, "MaxPoolGrad: with VALID padding the height window (4) is larger than the input height (2)");
  CHECK_THROWS_CODE(run_op(ctx(), "MaxPoolGrad", {make<float>({1}, {1}), y, y}, attrs("VALID")), Code::InvalidArgument,
                    "MaxPoolGrad: orig_input must be 4-D, got shape [1]");
  CHECK_THROWS_CODE(run_op(ctx(), "MaxPoolGradGrad", {x, y, y}, attrs("VALID")), Code::InvalidArgument,
                    "MaxPoolGradGrad: grad has shape [1,2,2,1] but orig_input has [1,4,4,1]");
  CHECK_THROWS_CODE(run_op(ctx(), "MaxPoolGrad", {x, y, make<double>({1, 1, 1, 1}, {1, 2, 2, 1})}, attrs("VALID")),
                    Code::InvalidArgument, "MaxPoolGrad: input 'grad' has dtype float64 but 'orig_input' has float32");
  auto avg = [&](const Tensor& g, const std::vector<int64_t>& shape, const char* padding = "VALID") {
    std::vector<NamedAttr> a = attrs(padding);
    a.push_back(attr_ints("orig_input_shape", shape));
    return run_op(ctx(), "AvgPoolGrad", {g}, a);
  };
  CHECK(avg(y, {1, 4, 4, 1}).at(0).shape() == Shape{1, 4, 4, 1});
  CHECK(avg(y, {1, 3, 3, 1}, "SAME").at(0).shape() == Shape{1, 3, 3, 1});
  CHECK_THROWS_CODE(avg(y, {1, 4, 4}), Code::InvalidArgument, "AvgPoolGrad: orig_input_shape must have 4 elements, got [1,4,4]");
  CHECK_THROWS_CODE(avg(y, {1, 4, -4, 1}), Code::InvalidArgument, "AvgPoolGrad: orig_input_shape must be non-negative");
  CHECK_THROWS_CODE(avg(y, {1, 6, 4, 1}), Code::InvalidArgument,
                    "AvgPoolGrad: grad has shape [1,2,2,1] but pooling input [1,6,4,1] gives [1,3,2,1]");
  CHECK_THROWS_CODE(avg(make<int32_t>({1, 1, 1, 1}, {1, 2, 2, 1}), {1, 4, 4, 1}), Code::InvalidArgument,
                    "which AvgPoolGrad does not accept");
  CHECK_THROWS_CODE(run_op(ctx(), "AvgPoolGrad", {y}, attrs("VALID")), Code::InvalidArgument,
                    "AvgPoolGrad: missing required attribute 'orig_input_shape'");
}

}  // namespace cairn
