// Issue 18: integer MatMul and SquaredDifference wrap around on overflow, by definition (computed
// in unsigned arithmetic). The values are checked here; the absence of signed overflow is what the
// ASan+UBSan run of this test (tag "asan", tools/test) checks.
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("integer MatMul wraps around instead of overflowing (UBSan: no signed overflow)") {
  const int32_t big = std::numeric_limits<int32_t>::max();
  // big * 2 + big * 2 = 2^33 - 4, which is -4 modulo 2^32.
  Tensor a = make<int32_t>({big, big}, Shape{1, 2});
  Tensor b = make<int32_t>({2, 2}, Shape{2, 1});
  CHECK(values<int32_t>(run1("MatMul", {a, b})) == std::vector<int32_t>{-4});
  const int64_t big64 = std::numeric_limits<int64_t>::max();
  Tensor a64 = make<int64_t>({big64, big64}, Shape{1, 2});
  Tensor b64 = make<int64_t>({2, 2}, Shape{2, 1});
  CHECK(values<int64_t>(run1("MatMul", {a64, b64})) == std::vector<int64_t>{-4});
  // Transposed operands take the other loop.
  CHECK(values<int32_t>(run1("MatMul", {b, a}, {attr_bool("transpose_a", true), attr_bool("transpose_b", true)})) ==
        std::vector<int32_t>{-4});
  // Small values are unaffected.
  Tensor x = make<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  CHECK(values<int32_t>(run1("MatMul", {x, x})) == std::vector<int32_t>{7, 10, 15, 22});
}

TEST_CASE("integer SquaredDifference wraps around instead of overflowing") {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  // lo - hi = 1 (mod 2^32); 65536^2 = 0 (mod 2^32); 46341^2 = 2147488281 = -2147479015 (mod 2^32).
  Tensor a = make<int32_t>({lo, 65536, 46341, 3}, Shape{4});
  Tensor b = make<int32_t>({hi, 0, 0, 5}, Shape{4});
  CHECK(values<int32_t>(run1("SquaredDifference", {a, b})) == std::vector<int32_t>{1, 0, -2147479015, 4});
  const int64_t lo64 = std::numeric_limits<int64_t>::min(), hi64 = std::numeric_limits<int64_t>::max();
  Tensor a64 = make<int64_t>({lo64, int64_t{1} << 32}, Shape{2});
  Tensor b64 = make<int64_t>({hi64, 0}, Shape{2});
  CHECK(values<int64_t>(run1("SquaredDifference", {a64, b64})) == std::vector<int64_t>{1, 0});
  Tensor a8 = make<int8_t>({-128, 100}, Shape{2});
  Tensor b8 = make<int8_t>({127, -100}, Shape{2});
  // -255 = 1 (mod 256), 1; 200 = -56 (mod 256), 3136 = 64 (mod 256).
  CHECK(values<int8_t>(run1("SquaredDifference", {a8, b8})) == std::vector<int8_t>{1, 64});
}

}  // namespace
}  // namespace cairn::test
