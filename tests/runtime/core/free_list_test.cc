#include <cstdlib>
#include <set>

#include <doctest/doctest.h>

#include "runtime/core/free_list.h"

namespace cairn {

TEST_CASE("a free list hands kept blocks out again, newest first, up to its capacity") {
  constexpr size_t kSize = 64;
  FreeList<2> list;
  CHECK(list.take(kSize) == nullptr);
  void* a = std::malloc(kSize);
  void* b = std::malloc(kSize);
  void* c = std::malloc(kSize);
  CHECK(list.keep(a, kSize));
  CHECK(list.keep(b, kSize));
  CHECK_FALSE(list.keep(c, kSize));  // full: the caller frees it
  std::free(c);
  CHECK(list.take(kSize) == b);
  CHECK(list.keep(b, kSize));
  std::set<void*> freed;
  list.close(kSize, [&](void* p) {
    freed.insert(p);
    std::free(p);
  });
  CHECK(freed == std::set<void*>{a, b});
  CHECK(list.take(kSize) == nullptr);
  void* d = std::malloc(kSize);
  CHECK_FALSE(list.keep(d, kSize));  // closed: nothing is kept any more
  std::free(d);
}

}  // namespace cairn
