// Issue 18: dtype_bit for values that are not dtypes (a DTYPE attribute carries any int32 from the
// C API): no undefined shift, no aliasing of t % 32, and Cast names the op and the bad value.
#include <cstdint>
#include <limits>

#include "runtime/core/dtype.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("dtype_bit has no bit for values that are not dtypes, and Cast names a bad DstT") {
  for (int v : {-1, 11, 32, 35, 64, 1 << 30, std::numeric_limits<int>::min()}) {
    CAPTURE(v);
    const DType t = static_cast<DType>(v);
    if (v >= 32 || v < 0) CHECK(dtype_bit(t) == 0);
    CHECK_FALSE(dtype_in(dtypes::kAll, t));
  }
  // 35 % 32 == 3 (int32): before the fix, 35 passed the allowed-dtype check as int32.
  CHECK(dtype_bit(DType::Int32) == 8u);
  CHECK_FALSE(dtype_in(dtypes::kAll, static_cast<DType>(35)));
  CHECK_THROWS_CODE(run1("Cast", {scalar<float>(1)}, {attr_dtype("DstT", static_cast<DType>(35))}),
                    Code::InvalidArgument, "Cast: attribute 'DstT' does not accept dtype 35 (not a dtype; allowed: ");
  CHECK_THROWS_CODE(run1("Cast", {scalar<float>(1)}, {attr_dtype("DstT", static_cast<DType>(-7))}),
                    Code::InvalidArgument, "Cast: attribute 'DstT' does not accept dtype -7 (not a dtype");
  // A real dtype outside the allowed set keeps its name in the message.
  CHECK_THROWS_CODE(run1("Cast", {scalar<float>(1)}, {attr_dtype("DstT", DType::String)}), Code::InvalidArgument,
                    "Cast: attribute 'DstT' does not accept dtype string");
}

}  // namespace
}  // namespace cairn::test
