#include <limits>

#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

TEST_CASE("Add broadcasts like NumPy") {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = make<float>({10, 20, 30}, {3});
  Tensor z = run1("Add", {a, b});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(values<float>(z) == std::vector<float>{11, 22, 33, 14, 25, 36});
  Tensor col = make<float>({100, 200}, {2, 1});
  CHECK(values<float>(run1("Add", {a, col})) == std::vector<float>{101, 102, 103, 204, 205, 206});
  // [2,1] + [1,3] -> [2,3]
  Tensor row = make<float>({1, 2, 3}, {1, 3});
  CHECK(values<float>(run1("Add", {col, row})) == std::vector<float>{101, 102, 103, 201, 202, 203});
  // scalar + tensor, tensor + scalar
  CHECK(values<float>(run1("Add", {scalar(1.0f), b})) == std::vector<float>{11, 21, 31});
  CHECK(values<float>(run1("Add", {b, scalar(1.0f)})) == std::vector<float>{11, 21, 31});
  // empty tensors broadcast to empty results
  Tensor e = make<float>({}, {0, 3});
  CHECK(run1("Add", {e, b}).shape() == Shape{0, 3});
  CHECK(run1("Add", {make<float>({}, {0}), scalar(1.0f)}).shape() == Shape{0});
}

TEST_CASE("Add rejects incompatible shapes and mixed dtypes, naming both") {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = make<float>({1, 2, 3, 4}, {4});
  CHECK_THROWS_CODE(run1("Add", {a, b}), Code::InvalidArgument, "Add: incompatible shapes [2,3] and [4]");
  Tensor i = make<int32_t>({1, 2, 3}, {3});
  CHECK_THROWS_CODE(run1("Add", {a, i}), Code::InvalidArgument, "Add: input 'y' has dtype int32 but 'x' has float32");
  CHECK_THROWS_CODE(run1("Add", {a}), Code::InvalidArgument, "Add: expected 2 inputs, got 1");
  Tensor bl = make<bool>({true}, {1});
  CHECK_THROWS_CODE(run1("Add", {bl, bl}), Code::InvalidArgument, "which Add does not accept");
  CHECK_THROWS_CODE(run1("Add", {a, a}, {attr_int("foo", 1)}), Code::InvalidArgument, "Add: unknown attribute 'foo'");
  CHECK_THROWS_CODE(run1("Nope", {a}), Code::NotFound, "unknown op 'Nope'");
}

TEST_CASE("arithmetic on every numeric dtype") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::Int16,
                  DType::Int32, DType::Int64, DType::UInt8, DType::Complex64}) {
    CAPTURE(dtype_name(t));
    Tensor a = make_as(t, {6, 8, 9}, {3});
    Tensor b = make_as(t, {2, 4, 3}, {3});
    check_close(as_doubles(run1("Add", {a, b})), {8, 12, 12});
    check_close(as_doubles(run1("Sub", {a, b})), {4, 4, 6});
    check_close(as_doubles(run1("Mul", {a, b})), {12, 32, 27});
    check_close(as_doubles(run1("RealDiv", {a, b})), {3, 2, 3});
    check_close(as_doubles(run1("Pow", {b, make_as(t, {2, 2, 2}, {3})})), {4, 16, 9});
    check_close(as_doubles(run1("SquaredDifference", {a, b})), {16, 16, 36});
    if (t != DType::Complex64) {
      check_close(as_doubles(run1("Maximum", {a, b})), {6, 8, 9});
      check_close(as_doubles(run1("Minimum", {a, b})), {2, 4, 3});
      check_close(as_doubles(run1("FloorDiv", {a, make_as(t, {4, 3, 2}, {3})})), {1, 2, 4});
      check_close(as_doubles(run1("FloorMod", {a, make_as(t, {4, 3, 2}, {3})})), {2, 2, 1});
    }
  }
}

TEST_CASE("signed division floors toward negative infinity and modulo takes the divisor's sign") {
  Tensor a = make<int32_t>({7, -7, 7, -7}, {4});
  Tensor b = make<int32_t>({2, 2, -2, -2}, {4});
  CHECK(values<int32_t>(run1("FloorDiv", {a, b})) == std::vector<int32_t>{3, -4, -4, 3});
  CHECK(values<int32_t>(run1("FloorMod", {a, b})) == std::vector<int32_t>{1, 1, -1, -1});
  CHECK(values<int32_t>(run1("RealDiv", {a, b})) == std::vector<int32_t>{3, -3, -3, 3});
  Tensor fa = make<float>({7, -7, 7, -7}, {4});
  Tensor fb = make<float>({2, 2, -2, -2}, {4});
  CHECK(values<float>(run1("FloorMod", {fa, fb})) == std::vector<float>{1, 1, -1, -1});
  CHECK(values<float>(run1("FloorDiv", {fa, fb})) == std::vector<float>{3, -4, -4, 3});
  // INT_MIN / -1 wraps instead of trapping.
  Tensor mn = make<int32_t>({INT32_MIN}, {1});
  Tensor m1 = make<int32_t>({-1}, {1});
  CHECK(values<int32_t>(run1("RealDiv", {mn, m1})) == std::vector<int32_t>{INT32_MIN});
  CHECK(values<int32_t>(run1("FloorMod", {mn, m1})) == std::vector<int32_t>{0});
}

TEST_CASE("integer division by zero and negative integer powers are errors") {
  Tensor a = make<int64_t>({1, 2}, {2});
  Tensor z = make<int64_t>({1, 0}, {2});
  CHECK_THROWS_CODE(run1("RealDiv", {a, z}), Code::InvalidArgument, "RealDiv: integer division by zero");
  CHECK_THROWS_CODE(run1("FloorMod", {a, z}), Code::InvalidArgument, "FloorMod: integer division by zero");
  CHECK_THROWS_CODE(run1("Pow", {a, make<int64_t>({-1, 2}, {2})}), Code::InvalidArgument, "negative integer powers");
  // float division by zero is IEEE
  check_close(as_doubles(run1("RealDiv", {make<float>({1, -1, 0}, {3}), make<float>({0, 0, 0}, {3})})),
              {INFINITY, -INFINITY, NAN});
}

TEST_CASE("Maximum and Minimum propagate NaN") {
  Tensor a = make<double>({NAN, 1}, {2});
  Tensor b = make<double>({0, NAN}, {2});
  check_close(as_doubles(run1("Maximum", {a, b})), {NAN, NAN});
  check_close(as_doubles(run1("Minimum", {a, b})), {NAN, NAN});
}

TEST_CASE("large broadcast results do not depend on threading") {
  std::vector<float> av(300 * 257), bv(257);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 97) * 0.5f;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i);
  Tensor z = run1("Mul", {make<float>(av, {300, 257}), make<float>(bv, {257})});
  const float* p = z.data<float>();
  for (size_t i = 0; i < av.size(); ++i) REQUIRE(p[i] == av[i] * bv[i % 257]);
}

TEST_CASE("complex arithmetic") {
  Tensor a = make<complex64>({{1, 2}, {3, -1}}, {2});
  Tensor b = make<complex64>({{0, 1}, {2, 2}}, {2});
  auto m = values<complex64>(run1("Mul", {a, b}));
  CHECK(m[0] == complex64(-2, 1));
  CHECK(m[1] == complex64(8, 4));
  auto sd = values<complex64>(run1("SquaredDifference", {a, b}));
  CHECK(sd[0] == complex64(2, 0));  // |1+1i|^2
}

TEST_CASE("signed integer Add, Sub and Mul wrap around on overflow (no undefined behaviour)") {
  const int32_t max32 = std::numeric_limits<int32_t>::max(), min32 = std::numeric_limits<int32_t>::min();
  CHECK(values<int32_t>(run1("Add", {make<int32_t>({max32}, {1}), make<int32_t>({1}, {1})})) ==
        std::vector<int32_t>{min32});
  CHECK(values<int32_t>(run1("Sub", {make<int32_t>({min32}, {1}), make<int32_t>({1}, {1})})) ==
        std::vector<int32_t>{max32});
  CHECK(values<int32_t>(run1("Mul", {make<int32_t>({65536}, {1}), make<int32_t>({65536}, {1})})) ==
        std::vector<int32_t>{0});
  const int64_t max64 = std::numeric_limits<int64_t>::max();
  CHECK(values<int64_t>(run1("Add", {make<int64_t>({max64}, {1}), make<int64_t>({1}, {1})})) ==
        std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
  CHECK(values<int16_t>(run1("Mul", {make<int16_t>({300}, {1}), make<int16_t>({300}, {1})})) ==
        std::vector<int16_t>{static_cast<int16_t>(90000 - 65536)});
}

}  // namespace cairn
