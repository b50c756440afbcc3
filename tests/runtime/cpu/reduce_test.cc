#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {

const std::vector<DType> kNumberTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                         DType::Int8,    DType::Int16,   DType::Int32,   DType::Int64,
                                         DType::UInt8,   DType::Complex64};
const std::vector<DType> kRealTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                                       DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8};

bool is_int(DType t) { return dtype_is_integer(t); }
double tol_for(DType t) { return t == DType::BFloat16 ? 1e-2 : t == DType::Float16 ? 2e-3 : 1e-6; }

Tensor reduce(const char* op, const Tensor& x, const std::vector<int64_t>& axis, bool keep_dims = false) {
  return run1(op, {x}, {attr_ints("axis", axis), attr_bool("keep_dims", keep_dims)});
}

// Naive reference: output element for every combination of kept coordinates, folding the reduced
// ones in row-major order.
std::vector<double> ref_reduce(const std::vector<double>& x, const std::vector<int64_t>& shape,
                               const std::vector<bool>& reduced, double init,
                               const std::function<double(double, double)>& f) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> out_dims;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i]) out_dims.push_back(shape[i]);
  int64_t n_out = 1;
  for (int64_t d : out_dims) n_out *= d;
  std::vector<double> out(static_cast<size_t>(n_out), init);
  std::vector<int64_t> coord(rank, 0);
  for (size_t e = 0; e < x.size(); ++e) {
    int64_t rem = static_cast<int64_t>(e);
    for (int i = rank - 1; i >= 0; --i) {
      coord[i] = rem % shape[i];
      rem /= shape[i];
    }
    int64_t o = 0;
    for (int i = 0; i < rank; ++i)
      if (!reduced[i]) o = o * shape[i] + coord[i];
    out[o] = f(out[o], x[e]);
  }
  return out;
}

std::vector<double> ramp(size_t n, int mod, double offset) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + 3) % mod) + offset;
  return v;
}

}  // namespace

TEST_CASE("Sum, Mean and Prod over every number dtype, with negative axes and keep_dims") {
  for (DType t : kNumberTypes) {
    CAPTURE(dtype_name(t));
    const double tol = tol_for(t);
    Tensor x = make_as(t, {1, 2, 3, 4, 5, 6}, {2, 3});
    Tensor s = reduce("Sum", x, {});
    CHECK(s.dtype() == t);
    CHECK(s.shape() == Shape{});
    check_close(as_doubles(s), {21}, tol);
    check_close(as_doubles(reduce("Sum", x, {0})), {5, 7, 9}, tol);
    check_close(as_doubles(reduce("Sum", x, {1})), {6, 15}, tol);
    check_close(as_doubles(reduce("Sum", x, {-1})), {6, 15}, tol);
    check_close(as_doubles(reduce("Sum", x, {-1, 0})), {21}, tol);
    CHECK(reduce("Sum", x, {0}, true).shape() == Shape{1, 3});
    CHECK(reduce("Sum", x, {-1}, true).shape() == Shape{2, 1});
    CHECK(reduce("Sum", x, {}, true).shape() == Shape{1, 1});
    check_close(as_doubles(reduce("Sum", x, {1, 0}, true)), {21}, tol);

    if (is_int(t)) {
      check_close(as_doubles(reduce("Mean", x, {})), {3}, tol);  // 21 / 6 truncates
      check_close(as_doubles(reduce("Mean", x, {0})), {2, 3, 4}, tol);
    } else {
      check_close(as_doubles(reduce("Mean", x, {})), {3.5}, tol);
      check_close(as_doubles(reduce("Mean", x, {0})), {2.5, 3.5, 4.5}, tol);
    }
    check_close(as_doubles(reduce("Mean", x, {-1}, true)), {2, 5}, tol);
    CHECK(reduce("Mean", x, {-1}, true).shape() == Shape{2, 1});

    check_close(as_doubles(reduce("Prod", x, {0})), {4, 10, 18}, tol);
    check_close(as_doubles(reduce("Prod", x, {1})), {6, 120}, tol);
    check_close(as_doubles(reduce("Prod", make_as(t, {1, 2, 3, 1, 2, 1}, {2, 3}), {})), {12}, tol);
  }
}

TEST_CASE("Max and Min over every real dtype") {
  for (DType t : kRealTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {3, 9, 1, 4, 2, 8}, {2, 3});
    CHECK(reduce("Max", x, {}).dtype() == t);
    check_close(as_doubles(reduce("Max", x, {})), {9});
    check_close(as_doubles(reduce("Min", x, {})), {1});
    check_close(as_doubles(reduce("Max", x, {0})), {4, 9, 8});
    check_close(as_doubles(reduce("Min", x, {-2})), {3, 2, 1});
    check_close(as_doubles(reduce("Max", x, {1}, true)), {9, 8});
    CHECK(reduce("Min", x, {1}, true).shape() == Shape{2, 1});
    if (dtype_is_signed(t)) {
      Tensor neg = make_as(t, {-5, -3, -7}, {3});
      check_close(as_doubles(reduce("Max", neg, {0})), {-3});
      check_close(as_doubles(reduce("Min", neg, {0})), {-7});
    }
  }
}

TEST_CASE("All and Any over bools") {
  Tensor x = make<bool>({true, false, true, true, true, true}, {2, 3});
  CHECK(bools(reduce("All", x, {})) == std::vector<int>{0});
  CHECK(bools(reduce("Any", x, {})) == std::vector<int>{1});
  CHECK(bools(reduce("All", x, {0})) == std::vector<int>{1, 0, 1});
  CHECK(bools(reduce("All", x, {-1})) == std::vector<int>{0, 1});
  CHECK(bools(reduce("Any", make<bool>({false, false, true, false}, {2, 2}), {1})) == std::vector<int>{0, 1});
  CHECK(reduce("Any", x, {1}, true).shape() == Shape{2, 1});
  CHECK(reduce("All", x, {1}).dtype() == DType::Bool);
}

TEST_CASE("reductions of empty tensors give the identity") {
  for (DType t : kRealTypes) {
    CAPTURE(dtype_name(t));
    Tensor e = make_as(t, {}, {0, 3});
    Tensor s = reduce("Sum", e, {0});
    CHECK(s.shape() == Shape{3});
    check_close(as_doubles(s), {0, 0, 0});
    check_close(as_doubles(reduce("Prod", e, {0})), {1, 1, 1});
    check_close(as_doubles(reduce("Sum", e, {})), {0});
    check_close(as_doubles(reduce("Prod", e, {})), {1});
    // Reducing the non-empty axis leaves an empty result.
    CHECK(reduce("Sum", e, {1}).shape() == Shape{0});
    CHECK(reduce("Max", e, {1}, true).shape() == Shape{0, 1});
    const double lo = dtype_is_floating(t) ? -INFINITY : t == DType::Int8 ? -128.0 : t == DType::Int16 ? -32768.0
                      : t == DType::Int32 ? static_cast<double>(INT32_MIN) : t == DType::Int64 ? static_cast<double>(INT64_MIN) : 0.0;
    const double hi = dtype_is_floating(t) ? INFINITY : t == DType::Int8 ? 127.0 : t == DType::Int16 ? 32767.0
                      : t == DType::Int32 ? static_cast<double>(INT32_MAX) : t == DType::Int64 ? static_cast<double>(INT64_MAX) : 255.0;
    check_close(as_doubles(reduce("Max", e, {0})), {lo, lo, lo});
    check_close(as_doubles(reduce("Min", e, {})), {hi});
    if (dtype_is_floating(t)) check_close(as_doubles(reduce("Mean", e, {0})), {NAN, NAN, NAN});
    else check_close(as_doubles(reduce("Mean", e, {0})), {0, 0, 0});
  }
  auto mc = values<complex64>(reduce("Mean", make<complex64>({}, {0}), {}));
  CHECK(std::isnan(mc[0].real()));
  CHECK(values<complex64>(reduce("Prod", make<complex64>({}, {0}), {}))[0] == complex64(1, 0));
  Tensor eb = make<bool>({}, {2, 0});
  CHECK(bools(reduce("All", eb, {1})) == std::vector<int>{1, 1});
  CHECK(bools(reduce("Any", eb, {1})) == std::vector<int>{0, 0});
}

TEST_CASE("reductions of scalars and size-1 axes") {
  Tensor s = scalar(4.5f);
  Tensor r = reduce("Sum", s, {});
  CHECK(r.shape() == Shape{});
  CHECK(values<float>(r) == std::vector<float>{4.5f});
  CHECK(reduce("Sum", s, {}, true).shape() == Shape{});
  CHECK(values<float>(reduce("Mean", s, {})) == std::vector<float>{4.5f});
  CHECK(values<float>(reduce("Max", s, {})) == std::vector<float>{4.5f});
  CHECK_THROWS_CODE(reduce("Sum", s, {0}), Code::InvalidArgument, "Sum: axis 0 is out of range for rank 0");
  Tensor ones = make<int32_t>({1, 2, 3}, {1, 3, 1});
  CHECK(values<int32_t>(reduce("Sum", ones, {0, 2})) == std::vector<int32_t>{1, 2, 3});
  CHECK(values<int32_t>(reduce("Sum", ones, {1}, true)) == std::vector<int32_t>{6});
  CHECK(reduce("Sum", ones, {1}, true).shape() == Shape{1, 1, 1});
}

TEST_CASE("every axis subset of a 4-D tensor matches a naive reference") {
  const std::vector<int64_t> dims = {3, 4, 5, 2};
  const Shape shape{3, 4, 5, 2};
  std::vector<double> x = ramp(120, 13, -6);
  Tensor xi = make_as(DType::Int32, x, shape);
  Tensor xd = make_as(DType::Float64, x, shape);
  for (int m = 0; m < 16; ++m) {
    std::vector<int64_t> axis;
    std::vector<bool> red(4);
    for (int i = 0; i < 4; ++i)
      if (m & (1 << i)) {
        axis.push_back(i % 2 ? i - 4 : i);  // mix negative and positive axes
        red[i] = true;
      }
    if (m == 0) red.assign(4, true);  // empty list reduces everything
    CAPTURE(m);
    auto add = [](double a, double b) { return a + b; };
    auto mx = [](double a, double b) { return std::max(a, b); };
    auto mn = [](double a, double b) { return std::min(a, b); };
    auto want_sum = ref_reduce(x, dims, red, 0, add);
    check_close(as_doubles(reduce("Sum", xi, axis)), want_sum);
    check_close(as_doubles(reduce("Sum", xd, axis)), want_sum);
    check_close(as_doubles(reduce("Max", xi, axis)), ref_reduce(x, dims, red, -1e300, mx));
    check_close(as_doubles(reduce("Min", xd, axis)), ref_reduce(x, dims, red, 1e300, mn));
    int64_t count = 1;
    for (int i = 0; i < 4; ++i)
      if (red[i]) count *= dims[i];
    std::vector<double> want_mean = want_sum;
    for (double& v : want_mean) v /= static_cast<double>(count);
    check_close(as_doubles(reduce("Mean", xd, axis)), want_mean);
    Tensor kept = reduce("Sum", xi, axis, true);
    CHECK(kept.rank() == 4);
    for (int i = 0; i < 4; ++i) CHECK(kept.shape()[i] == (red[i] ? 1 : dims[i]));
  }
}

TEST_CASE("large reductions use blocked partial sums and stay exact for integers") {
  // Shapes chosen to exercise: long rows split into blocks, tall columns split into row blocks,
  // many short columns, and the generic odometer.
  struct Case {
    std::vector<int64_t> dims;
    std::vector<int64_t> axis;
  };
  const std::vector<Case> cases = {
      {{3, 50000}, {1}},         // few long rows
      {{200, 3000}, {1}},        // many rows
      {{64, 5000}, {1}},         // many rows of two blocks each
      {{100, 1000, 2}, {1}},     // many columns of two row blocks each
      {{50000, 3}, {0}},         // few tall columns
      {{4, 3000, 300}, {1}},     // many column chunks
      {{520, 4100}, {0}},        // two column chunks (one ragged) of two row blocks each
      {{20000}, {}},             // everything
      {{30, 7, 40, 5}, {0, 2}},  // generic
      {{6, 3000, 2, 5}, {1, 3}}, // generic, long inner walk
  };
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int64_t d : c.dims) n *= d;
    std::vector<double> x = ramp(static_cast<size_t>(n), 1000, -500);
    std::vector<bool> red(c.dims.size(), c.axis.empty());
    for (int64_t a : c.axis) red[a] = true;
    Shape shape = Shape::from(c.dims.data(), c.dims.size(), "test");
    CAPTURE(shape.str());
    auto want = ref_reduce(x, c.dims, red, 0, [](double a, double b) { return a + b; });
    check_close(as_doubles(reduce("Sum", make_as(DType::Int64, x, shape), c.axis)), want, 0);
    check_close(as_doubles(reduce("Sum", make_as(DType::Float64, x, shape), c.axis)), want, 1e-12);
    check_close(as_doubles(reduce("Sum", make_as(DType::Float32, x, shape), c.axis)), want, 1e-6);
    auto want_max = ref_reduce(x, c.dims, red, -1e300, [](double a, double b) { return std::max(a, b); });
    check_close(as_doubles(reduce("Max", make_as(DType::Int16, x, shape), c.axis)), want_max, 0);
  }
}

TEST_CASE("float32 sums accumulate in double") {
  // 2^22 copies of 0.1f: a float accumulator would drift far from the exact sum.
  const int64_t n = int64_t{1} << 22;
  Tensor x = make<float>(std::vector<float>(static_cast<size_t>(n), 0.1f), {n});
  const double exact = static_cast<double>(0.1f) * static_cast<double>(n);
  CHECK(values<float>(reduce("Sum", x, {}))[0] == static_cast<float>(exact));
  CHECK(values<float>(reduce("Mean", x, {}))[0] == 0.1f);
  // 1 followed by many tiny values that a float accumulator would drop one by one.
  std::vector<float> v(100001, 1e-8f);
  v[0] = 1.0f;
  CHECK(values<float>(reduce("Sum", make<float>(v, {100001}), {}))[0] == doctest::Approx(1.001).epsilon(1e-6));
}

TEST_CASE("results do not depend on the thread count") {
  ContextOptions o1, o4;
  o1.num_threads = 1;
  o4.num_threads = 4;
  Ref<Context> c1 = make_ref<Context>(o1), c4 = make_ref<Context>(o4);
  std::vector<float> v(3 * 70001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 1000.0f + 0.001f * static_cast<float>(i % 7);
  for (auto [shape, axis] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{3, 70001}, {1}}, {{70001, 3}, {0}}, {{3 * 70001}, {}}, {{3, 70001}, {}}}) {
    Tensor x = make<float>(v, shape);
    for (const char* op : {"Sum", "Mean", "Min", "Max"}) {
      CAPTURE(op);
      auto a = values<float>(run_op(*c1, op, {x}, {attr_ints("axis", axis)}).at(0));
      auto b = values<float>(run_op(*c4, op, {x}, {attr_ints("axis", axis)}).at(0));
      auto c = values<float>(run1(op, {x}, {attr_ints("axis", axis)}));
      REQUIRE(a.size() == b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        CHECK(std::memcmp(&a[i], &b[i], sizeof(float)) == 0);
        CHECK(std::memcmp(&a[i], &c[i], sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("every dtype and layout: bit-identical on 1, 2 and 4 threads, close to a double reference") {
  // Layouts: long rows split into blocks (inner axis), tall columns split into row blocks (outer
  // axis), a middle axis, everything, the generic odometer, an empty axis and a size-1 axis. Lengths
  // are not multiples of the 8 lanes or of a batch, so the ragged ends are covered.
  struct Case {
    std::vector<int64_t> dims;
    std::vector<int64_t> axis;
  };
  const std::vector<Case> cases = {
      {{5, 9001}, {1}},  {{9001, 5}, {0}},  {{3, 1103, 7}, {1}}, {{45001}, {}},    {{3, 20003}, {}},
      {{6, 701, 5}, {0, 2}}, {{2, 0, 3}, {1}}, {{4, 1, 6}, {1}},  {{7}, {0}},       {{1}, {}},
  };
  std::vector<Ref<Context>> contexts;
  for (int threads : {1, 2, 4}) {
    ContextOptions o;
    o.num_threads = threads;
    contexts.push_back(make_ref<Context>(o));
  }
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int64_t d : c.dims) n *= d;
    std::vector<bool> red(c.dims.size(), c.axis.empty());
    for (int64_t a : c.axis) red[a] = true;
    const Shape shape = Shape::from(c.dims.data(), c.dims.size(), "test");
    // Values with fractional parts for the sums and extrema (small ones for float16, whose sums
    // would overflow); near 1 for products.
    std::vector<double> x(static_cast<size_t>(n)), small(x.size()), near_one(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = std::sin(static_cast<double>(i) * 0.37) * 50.0 + static_cast<double>(i % 13);
      small[i] = x[i] * 1e-3;
      near_one[i] = 1.0 + 1e-4 * std::sin(static_cast<double>(i));
    }
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64}) {
      for (const char* op : {"Sum", "Mean", "Prod", "Max", "Min"}) {
        CAPTURE(shape.str());
        CAPTURE(dtype_name(dt));
        CAPTURE(op);
        const std::string o(op);
        const bool prod = o == "Prod", extremum = o == "Max" || o == "Min";
        if (prod && dtype_is_integer(dt)) continue;  // wraps: covered by the integer test below
        const std::vector<double>& data = prod ? near_one : dt == DType::Float16 ? small : x;
        const Tensor t = make_as(dt, data, shape);
        std::vector<Tensor> got;
        for (const Ref<Context>& cx : contexts) got.push_back(run_op(*cx, op, {t}, {attr_ints("axis", c.axis)}).at(0));
        const size_t bytes = dtype_size(dt) * static_cast<size_t>(got[0].num_elements());
        for (size_t k = 1; k < got.size(); ++k) {
          REQUIRE(got[k].num_elements() == got[0].num_elements());
          CHECK(std::memcmp(got[0].raw_data(), got[k].raw_data(), bytes) == 0);
        }
        // Integer extrema of nothing are the type's limits (tested above with the identities).
        if (n == 0 && extremum && dtype_is_integer(dt)) continue;
        // The reference folds the values as the kernel reads them (converted to the dtype).
        const std::vector<double> in = as_doubles(t);
        std::vector<double> want;
        if (extremum) {
          const bool mx = o == "Max";
          want = ref_reduce(in, c.dims, red, mx ? -INFINITY : INFINITY,
                            [mx](double a, double b) { return mx ? std::max(a, b) : std::min(a, b); });
        } else if (prod) {
          want = ref_reduce(in, c.dims, red, 1, [](double a, double b) { return a * b; });
        } else {
          want = ref_reduce(in, c.dims, red, 0, [](double a, double b) { return a + b; });
          double count = 1;
          for (size_t i = 0; i < c.dims.size(); ++i)
            if (red[i]) count *= c.dims[i];
          if (o == "Mean")
            for (double& w : want)
              w = count == 0 ? NAN : dtype_is_integer(dt) ? std::trunc(w / count) : w / count;
        }
        if (dtype_is_integer(dt) && o == "Mean")
          for (double& w : want)
            if (std::isnan(w)) w = 0;
        const double tol = dt == DType::Float16 ? 2e-3 : dt == DType::Float32 ? 1e-6 : dtype_is_integer(dt) ? 0 : 1e-10;
        check_close(as_doubles(got[0]), want, tol);
      }
    }
  }
}

TEST_CASE("integer sums wrap; integer means use a 64-bit sum and truncate toward zero") {
  Tensor x = make<int8_t>({100, 100}, {2});
  CHECK(values<int8_t>(reduce("Sum", x, {})) == std::vector<int8_t>{-56});
  CHECK(values<int8_t>(reduce("Mean", x, {})) == std::vector<int8_t>{100});
  CHECK(values<int32_t>(reduce("Mean", make<int32_t>({-1, -2}, {2}), {})) == std::vector<int32_t>{-1});
  CHECK(values<uint8_t>(reduce("Sum", make<uint8_t>({200, 100}, {2}), {})) == std::vector<uint8_t>{44});
  CHECK(values<int64_t>(reduce("Sum", make<int64_t>({INT64_MAX, 1}, {2}), {})) == std::vector<int64_t>{INT64_MIN});
  CHECK(values<int16_t>(reduce("Prod", make<int16_t>({256, 256, 3}, {3}), {})) == std::vector<int16_t>{0});
  CHECK(values<int32_t>(reduce("Prod", make<int32_t>({-3, 5, -2}, {3}), {})) == std::vector<int32_t>{30});
}

TEST_CASE("Max and Min propagate NaN; complex reductions") {
  Tensor x = make<float>({1, NAN, 3, 4, 5, 6}, {2, 3});
  check_close(as_doubles(reduce("Max", x, {})), {NAN});
  check_close(as_doubles(reduce("Min", x, {0})), {1, NAN, 3});
  check_close(as_doubles(reduce("Max", x, {1})), {NAN, 6});
  check_close(as_doubles(reduce("Max", make<double>({-INFINITY, -INFINITY}, {2}), {})), {-INFINITY});
  Tensor c = make<complex64>({{1, 2}, {3, -1}, {0, 1}}, {3});
  CHECK(values<complex64>(reduce("Sum", c, {}))[0] == complex64(4, 2));
  CHECK(values<complex64>(reduce("Prod", c, {}))[0] == complex64(-5, 5));  // (1+2i)(3-i) = 5+5i, times i
  auto m = values<complex64>(reduce("Mean", c, {}))[0];
  CHECK(m.real() == doctest::Approx(4.0 / 3));
  CHECK(m.imag() == doctest::Approx(2.0 / 3));
}

TEST_CASE("reduction errors name the op") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THROWS_CODE(reduce("Sum", x, {1, -1}), Code::InvalidArgument, "Sum: axis 1 appears more than once in axis [1,-1]");
  CHECK_THROWS_CODE(reduce("Max", x, {0, 0}), Code::InvalidArgument, "Max: axis 0 appears more than once");
  CHECK_THROWS_CODE(reduce("Mean", x, {2}), Code::InvalidArgument, "Mean: axis 2 is out of range for rank 2");
  CHECK_THROWS_CODE(reduce("Prod", x, {-3}), Code::InvalidArgument, "Prod: axis -3 is out of range for rank 2");
  CHECK_THROWS_CODE(reduce("Max", make<complex64>({{1, 0}}, {1}), {}), Code::InvalidArgument,
                    "input 'input' has dtype complex64, which Max does not accept");
  CHECK_THROWS_CODE(reduce("Sum", make<bool>({true}, {1}), {}), Code::InvalidArgument, "which Sum does not accept");
  CHECK_THROWS_CODE(reduce("All", x, {}), Code::InvalidArgument, "which All does not accept");
  CHECK_THROWS_CODE(run1("Any", {make<bool>({true}, {1})}, {attr_int("axis", 0)}), Code::InvalidArgument,
                    "Any: attribute 'axis' must be INTS, got INT");
}

TEST_CASE("ArgMax and ArgMin over every real dtype") {
  for (DType t : kRealTypes) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {3, 9, 1, 4, 2, 8}, {2, 3});
    Tensor a0 = run1("ArgMax", {x});
    CHECK(a0.dtype() == DType::Int64);
    CHECK(a0.shape() == Shape{3});
    CHECK(values<int64_t>(a0) == std::vector<int64_t>{1, 0, 1});
    CHECK(values<int64_t>(run1("ArgMin", {x})) == std::vector<int64_t>{0, 1, 0});
    CHECK(values<int64_t>(run1("ArgMax", {x}, {attr_int("axis", 1)})) == std::vector<int64_t>{1, 2});
    CHECK(values<int64_t>(run1("ArgMin", {x}, {attr_int("axis", -1)})) == std::vector<int64_t>{2, 1});
    Tensor i32 = run1("ArgMax", {x}, {attr_int("axis", -1), attr_dtype("output_type", DType::Int32)});
    CHECK(i32.dtype() == DType::Int32);
    CHECK(values<int32_t>(i32) == std::vector<int32_t>{1, 2});
    // Ties take the first index.
    Tensor tie = make_as(t, {5, 7, 7, 5, 1, 1}, {6});
    CHECK(values<int64_t>(run1("ArgMax", {tie})) == std::vector<int64_t>{1});
    CHECK(values<int64_t>(run1("ArgMin", {tie})) == std::vector<int64_t>{4});
  }
}

TEST_CASE("ArgMax over a middle axis, NaNs, and empty outputs") {
  // [2,3,2]: reduce axis 1
  Tensor x = make<int32_t>({1, 6, 5, 2, 5, 9, 0, 0, 7, 7, 3, 7}, {2, 3, 2});
  CHECK(values<int64_t>(run1("ArgMax", {x}, {attr_int("axis", 1)})) == std::vector<int64_t>{1, 2, 1, 1});
  CHECK(values<int64_t>(run1("ArgMin", {x}, {attr_int("axis", 1)})) == std::vector<int64_t>{0, 1, 0, 0});
  CHECK(run1("ArgMin", {x}, {attr_int("axis", 1)}).shape() == Shape{2, 2});
  // Wide inner dimension (more than one column chunk), checked against a loop.
  std::vector<double> w = ramp(3 * 5 * 300, 17, 0);
  Tensor wx = make_as(DType::Float32, w, {3, 5, 300});
  auto got = values<int64_t>(run1("ArgMax", {wx}, {attr_int("axis", 1)}));
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 300; ++c) {
      int best = 0;
      for (int i = 1; i < 5; ++i)
        if (w[(a * 5 + i) * 300 + c] > w[(a * 5 + best) * 300 + c]) best = i;
      REQUIRE(got[a * 300 + c] == best);
    }
  // NaN wins, the first one.
  Tensor n = make<float>({1, NAN, 5, NAN, 2, 0}, {2, 3});
  CHECK(values<int64_t>(run1("ArgMax", {n}, {attr_int("axis", 1)})) == std::vector<int64_t>{1, 0});
  CHECK(values<int64_t>(run1("ArgMin", {n}, {attr_int("axis", 1)})) == std::vector<int64_t>{1, 0});
  CHECK(values<int64_t>(run1("ArgMin", {n}, {attr_int("axis", 0)})) == std::vector<int64_t>{1, 0, 1});
  CHECK(values<int64_t>(run1("ArgMax", {make<double>({3, NAN, NAN}, {3})})) == std::vector<int64_t>{1});
  // Empty along another axis: an empty result.
  CHECK(run1("ArgMax", {make<float>({}, {0, 3})}, {attr_int("axis", 1)}).shape() == Shape{0});
  // A vector gives a scalar.
  Tensor s = run1("ArgMax", {make<uint8_t>({3, 200, 7}, {3})});
  CHECK(s.shape() == Shape{});
  CHECK(values<int64_t>(s) == std::vector<int64_t>{1});
}

TEST_CASE("ArgMax errors") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THROWS_CODE(run1("ArgMax", {x}, {attr_int("axis", 2)}), Code::InvalidArgument,
                    "ArgMax: axis 2 is out of range for rank 2");
  CHECK_THROWS_CODE(run1("ArgMin", {x}, {attr_int("axis", -3)}), Code::InvalidArgument,
                    "ArgMin: axis -3 is out of range for rank 2");
  CHECK_THROWS_CODE(run1("ArgMax", {scalar(1.0f)}), Code::InvalidArgument, "ArgMax: axis 0 is out of range for rank 0");
  CHECK_THROWS_CODE(run1("ArgMax", {make<float>({}, {0, 3})}), Code::InvalidArgument,
                    "ArgMax: cannot reduce over axis 0, which is empty in shape [0,3]");
  CHECK_THROWS_CODE(run1("ArgMax", {x}, {attr_dtype("output_type", DType::Float32)}), Code::InvalidArgument,
                    "ArgMax: attribute 'output_type' does not accept dtype float32");
  CHECK_THROWS_CODE(run1("ArgMax", {make<complex64>({{1, 0}}, {1})}), Code::InvalidArgument, "which ArgMax does not accept");
  CHECK_THROWS_CODE(run1("ArgMin", {make<bool>({true}, {1})}), Code::InvalidArgument, "which ArgMin does not accept");
}

}  // namespace cairn
