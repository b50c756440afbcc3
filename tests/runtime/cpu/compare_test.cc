#include "tests/util/test_util.h"

namespace cairn {
using namespace test;

namespace {
const std::vector<DType> kReal = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                                  DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8};
}  // namespace

TEST_CASE("Equal and NotEqual on every dtype, bool and complex included") {
  std::vector<DType> all = kReal;
  all.push_back(DType::Complex64);
  for (DType t : all) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {1, 2, 3, 4, 0}, {5});
    Tensor y = make_as(t, {1, 5, 3, 0, 0}, {5});
    Tensor eq = run1("Equal", {x, y});
    CHECK(eq.dtype() == DType::Bool);
    CHECK(eq.shape() == Shape{5});
    CHECK(bools(eq) == std::vector<int>{1, 0, 1, 0, 1});
    CHECK(bools(run1("NotEqual", {x, y})) == std::vector<int>{0, 1, 0, 1, 0});
  }
  Tensor a = make<bool>({false, false, true, true}, {4});
  Tensor b = make<bool>({false, true, false, true}, {4});
  CHECK(bools(run1("Equal", {a, b})) == std::vector<int>{1, 0, 0, 1});
  CHECK(bools(run1("NotEqual", {a, b})) == std::vector<int>{0, 1, 1, 0});
  // Complex equality looks at both parts.
  Tensor c = make<complex64>({{1, 2}, {1, 2}, {3, 0}, {0, 1}}, {4});
  Tensor d = make<complex64>({{1, 2}, {1, -2}, {3, 0}, {0, 0}}, {4});
  CHECK(bools(run1("Equal", {c, d})) == std::vector<int>{1, 0, 1, 0});
  CHECK(bools(run1("NotEqual", {c, d})) == std::vector<int>{0, 1, 0, 1});
}

TEST_CASE("ordering comparisons on every real dtype") {
  for (DType t : kReal) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {1, 2, 3, 0, 200}, {5});
    Tensor y = make_as(t, {2, 2, 2, 1, 100}, {5});
    CHECK(bools(run1("Less", {x, y})) == std::vector<int>{1, 0, 0, 1, 0});
    CHECK(bools(run1("LessEqual", {x, y})) == std::vector<int>{1, 1, 0, 1, 0});
    CHECK(bools(run1("Greater", {x, y})) == std::vector<int>{0, 0, 1, 0, 1});
    CHECK(bools(run1("GreaterEqual", {x, y})) == std::vector<int>{0, 1, 1, 0, 1});
    if (t != DType::UInt8) {
      Tensor n = make_as(t, {-3, -1, 1}, {3});
      CHECK(bools(run1("Less", {n, make_as(t, {-2, -1, -1}, {3})})) == std::vector<int>{1, 0, 0});
      CHECK(bools(run1("GreaterEqual", {n, make_as(t, {-2, -1, -1}, {3})})) == std::vector<int>{0, 1, 1});
    }
  }
  // uint8 compares as unsigned: 200 > 100 above, 255 > 0 here.
  CHECK(bools(run1("Greater", {make<uint8_t>({255}, {1}), make<uint8_t>({0}, {1})})) == std::vector<int>{1});
  // int64 values beyond double precision still compare exactly.
  CHECK(bools(run1("Less", {make<int64_t>({(int64_t{1} << 60) + 1}, {1}), make<int64_t>({(int64_t{1} << 60) + 2}, {1})})) ==
        std::vector<int>{1});
}

TEST_CASE("comparisons with NaN, infinities and signed zeros") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    CAPTURE(dtype_name(t));
    Tensor x = make_as(t, {NAN, NAN, 1, INFINITY, -INFINITY, -0.0}, {6});
    Tensor y = make_as(t, {NAN, 1, NAN, INFINITY, 1, 0.0}, {6});
    CHECK(bools(run1("Equal", {x, y})) == std::vector<int>{0, 0, 0, 1, 0, 1});
    CHECK(bools(run1("NotEqual", {x, y})) == std::vector<int>{1, 1, 1, 0, 1, 0});
    CHECK(bools(run1("Less", {x, y})) == std::vector<int>{0, 0, 0, 0, 1, 0});
    CHECK(bools(run1("LessEqual", {x, y})) == std::vector<int>{0, 0, 0, 1, 1, 1});
    CHECK(bools(run1("Greater", {x, y})) == std::vector<int>{0, 0, 0, 0, 0, 0});
    CHECK(bools(run1("GreaterEqual", {x, y})) == std::vector<int>{0, 0, 0, 1, 0, 1});
  }
}

TEST_CASE("comparisons broadcast like NumPy") {
  Tensor col = make<int32_t>({1, 2}, {2, 1});
  Tensor row = make<int32_t>({0, 1, 2}, {1, 3});
  Tensor z = run1("Less", {col, row});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(bools(z) == std::vector<int>{0, 0, 1, 0, 0, 0});
  CHECK(bools(run1("Equal", {col, row})) == std::vector<int>{0, 1, 0, 0, 0, 1});
  // scalar against a tensor, both ways
  Tensor v = make<float>({1, 2, 3}, {3});
  CHECK(bools(run1("Greater", {v, scalar(2.0f)})) == std::vector<int>{0, 0, 1});
  CHECK(bools(run1("Greater", {scalar(2.0f), v})) == std::vector<int>{1, 0, 0});
  CHECK(run1("Equal", {scalar(2.0f), scalar(2.0f)}).shape() == Shape{});
  CHECK(bools(run1("Equal", {scalar(2.0f), scalar(2.0f)})) == std::vector<int>{1});
  // rank extension: [2,1,3] against [2,1] -> [2,2,3]
  Tensor a = make<int64_t>({0, 1, 2, 3, 4, 5}, {2, 1, 3});
  Tensor b = make<int64_t>({1, 4}, {2, 1});
  Tensor r = run1("GreaterEqual", {a, b});
  CHECK(r.shape() == Shape{2, 2, 3});
  CHECK(bools(r) == std::vector<int>{0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1});
  // empty
  CHECK(run1("Less", {make<float>({}, {0, 3}), v}).shape() == Shape{0, 3});
  CHECK(run1("Equal", {make<float>({}, {0}), scalar(1.0f)}).shape() == Shape{0});
  CHECK(run1("LogicalAnd", {make<bool>({}, {2, 0}), make<bool>({true}, {1})}).shape() == Shape{2, 0});
}

TEST_CASE("large broadcast comparisons do not depend on threading") {
  std::vector<int32_t> av(300 * 257), bv(257);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<int32_t>(i % 101);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<int32_t>(i % 89);
  Tensor z = run1("LessEqual", {make<int32_t>(av, {300, 257}), make<int32_t>(bv, {257})});
  auto got = bools(z);
  for (size_t i = 0; i < av.size(); ++i) REQUIRE(got[i] == (av[i] <= bv[i % 257] ? 1 : 0));
}

TEST_CASE("Equal and NotEqual with incompatible_shape_error=false") {
  Tensor a = make<float>({1, 2}, {2});
  Tensor b = make<float>({1, 2, 3}, {3});
  NamedAttr lenient = attr_bool("incompatible_shape_error", false);
  Tensor eq = run1("Equal", {a, b}, {lenient});
  CHECK(eq.shape() == Shape{});
  CHECK(bools(eq) == std::vector<int>{0});
  Tensor ne = run1("NotEqual", {a, b}, {lenient});
  CHECK(ne.shape() == Shape{});
  CHECK(bools(ne) == std::vector<int>{1});
  // Shapes that broadcast compare normally.
  Tensor c = make<float>({1, 5}, {2});
  CHECK(bools(run1("Equal", {a, c}, {lenient})) == std::vector<int>{1, 0});
  CHECK(bools(run1("NotEqual", {make<float>({2}, {1}), a}, {lenient})) == std::vector<int>{1, 0});
  // The default is to raise.
  CHECK_THROWS_CODE(run1("Equal", {a, b}), Code::InvalidArgument, "Equal: incompatible shapes [2] and [3]");
  CHECK_THROWS_CODE(run1("NotEqual", {a, b}, {attr_bool("incompatible_shape_error", true)}), Code::InvalidArgument,
                    "NotEqual: incompatible shapes [2] and [3]");
}

TEST_CASE("logical ops") {
  Tensor x = make<bool>({false, false, true, true}, {4});
  Tensor y = make<bool>({false, true, false, true}, {4});
  CHECK(bools(run1("LogicalAnd", {x, y})) == std::vector<int>{0, 0, 0, 1});
  CHECK(bools(run1("LogicalOr", {x, y})) == std::vector<int>{0, 1, 1, 1});
  Tensor n = run1("LogicalNot", {x});
  CHECK(n.dtype() == DType::Bool);
  CHECK(bools(n) == std::vector<int>{1, 1, 0, 0});
  // broadcasting: [2,1] with [2]
  Tensor col = make<bool>({true, false}, {2, 1});
  Tensor row = make<bool>({true, false}, {2});
  Tensor a = run1("LogicalAnd", {col, row});
  CHECK(a.shape() == Shape{2, 2});
  CHECK(bools(a) == std::vector<int>{1, 0, 0, 0});
  CHECK(bools(run1("LogicalOr", {col, row})) == std::vector<int>{1, 1, 1, 0});
  CHECK(bools(run1("LogicalOr", {scalar(false), row})) == std::vector<int>{1, 0});
  CHECK(bools(run1("LogicalAnd", {row, scalar(true)})) == std::vector<int>{1, 0});
  // scalars and empties
  CHECK(run1("LogicalNot", {scalar(true)}).shape() == Shape{});
  CHECK(bools(run1("LogicalNot", {scalar(true)})) == std::vector<int>{0});
  CHECK(run1("LogicalNot", {make<bool>({}, {0, 2})}).shape() == Shape{0, 2});
}

TEST_CASE("comparison errors") {
  Tensor f = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g = make<float>({1, 2, 3, 4}, {4});
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
    CAPTURE(op);
    CHECK_THROWS_CODE(run1(op, {f, g}), Code::InvalidArgument, std::string(op) + ": incompatible shapes [2,3] and [4]");
    CHECK_THROWS_CODE(run1(op, {f, make<int32_t>({1}, {1})}), Code::InvalidArgument,
                      "input 'y' has dtype int32 but 'x' has float32");
    CHECK_THROWS_CODE(run1(op, {f}), Code::InvalidArgument, "expected 2 inputs, got 1");
  }
  Tensor c = make<complex64>({{1, 0}}, {1});
  Tensor b = make<bool>({true}, {1});
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual"}) {
    CAPTURE(op);
    CHECK_THROWS_CODE(run1(op, {c, c}), Code::InvalidArgument, "has dtype complex64, which");
    CHECK_THROWS_CODE(run1(op, {b, b}), Code::InvalidArgument, "has dtype bool, which");
  }
  CHECK_THROWS_CODE(run1("LogicalAnd", {f, f}), Code::InvalidArgument, "LogicalAnd: input 'x' must be bool, got float32");
  CHECK_THROWS_CODE(run1("LogicalOr", {b, make<int32_t>({1}, {1})}), Code::InvalidArgument,
                    "LogicalOr: input 'y' must be bool, got int32");
  CHECK_THROWS_CODE(run1("LogicalNot", {make<uint8_t>({1}, {1})}), Code::InvalidArgument,
                    "LogicalNot: input 'x' must be bool, got uint8");
  CHECK_THROWS_CODE(run1("LogicalAnd", {make<bool>({true, false}, {2}), make<bool>({true, false, true}, {3})}),
                    Code::InvalidArgument, "LogicalAnd: incompatible shapes [2] and [3]");
  CHECK_THROWS_CODE(run1("Less", {f, f}, {attr_bool("incompatible_shape_error", false)}), Code::InvalidArgument,
                    "Less: unknown attribute 'incompatible_shape_error'");
}

}  // namespace cairn
