// Issue 18: an allocation failure names the op it served ("Fill: cpu: out of memory ..."); eager
// dispatch adds the name in one place for every op and device.
#include <cstdint>
#include <string>
#include <vector>

#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("allocation failures carry the op's name") {
  // 2^42 bytes (4 TiB): a valid shape no allocator here can serve.
  std::vector<int64_t> dims = {int64_t{1} << 40};
  CHECK_THROWS_CODE(run1("Fill", {scalar<float>(1)}, {attr_ints("dims", dims)}), Code::ResourceExhausted,
                    "Fill: cpu: out of memory allocating 4398046511104 bytes");
  // An error that already names the op is left alone.
  CHECK_THROWS_CODE(run1("Fill", {scalar<float>(1)}, {attr_ints("dims", dims)}), Code::ResourceExhausted, "Fill: cpu");
  try {
    run1("Fill", {scalar<float>(1)}, {attr_ints("dims", dims)});
  } catch (const Error& e) {
    CHECK(e.message().rfind("Fill: cpu:", 0) == 0);
    CHECK(e.message().find("Fill: Fill") == std::string::npos);
  }
}

}  // namespace
}  // namespace cairn::test
