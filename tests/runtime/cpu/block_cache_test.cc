#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "runtime/cpu/block_cache.h"
#include "runtime/cpu/cpu_device.h"

namespace cairn {
namespace {

// Hooks that count what reaches the system allocator.
struct Counts {
  int allocs = 0;
  int frees = 0;
  size_t last_size = 0;
};

AllocatorHooks counting_hooks(Counts& c) {
  AllocatorHooks h;
  h.user_data = &c;
  h.allocate = [](void* u, size_t size, size_t alignment) -> void* {
    auto* c = static_cast<Counts*>(u);
    ++c->allocs;
    c->last_size = size;
    return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  };
  h.deallocate = [](void* u, void* p, size_t) {
    ++static_cast<Counts*>(u)->frees;
    std::free(p);
  };
  return h;
}

TEST_CASE("block_size rounds large sizes up by at most an eighth and leaves small ones") {
  CHECK(BlockCache::block_size(100) == 100);
  CHECK(BlockCache::block_size(BlockCache::kMinBlock - 1) == BlockCache::kMinBlock - 1);
  CHECK(BlockCache::block_size(BlockCache::kMinBlock) == BlockCache::kMinBlock);
  for (size_t size : {size_t{4097}, size_t{16448}, size_t{1} << 20, (size_t{1} << 20) + 64, size_t{33554496},
                      size_t{3} << 30}) {
    const size_t b = BlockCache::block_size(size);
    CHECK(b >= size);
    CHECK(b - size <= size / 8);
    CHECK(BlockCache::block_size(b) == b);  // a class is its own class
  }
  CHECK(BlockCache::block_size(SIZE_MAX - 3) == SIZE_MAX - 3);  // no overflow
}

TEST_CASE("a freed large block is handed out again for the same class, the newest first") {
  Counts c;
  {
    BlockCache cache(counting_hooks(c), size_t{8} << 20);
    const size_t size = (1 << 20) + 64;  // a tensor of 1 MiB and its header
    void* a = cache.allocate(size);
    void* b = cache.allocate(size);
    CHECK(c.allocs == 2);
    CHECK(c.last_size == BlockCache::block_size(size));
    cache.deallocate(a, size);
    cache.deallocate(b, size);
    CHECK(cache.cached_bytes() == 2 * BlockCache::block_size(size));
    CHECK(cache.allocate(size + 1000) == b);  // the same class, the newest first
    CHECK(cache.allocate(size) == a);
    CHECK(c.allocs == 2);
    CHECK(cache.cached_bytes() == 0);
    void* other = cache.allocate(2 << 20);  // another class: from the system
    CHECK(c.allocs == 3);
    cache.deallocate(a, size);
    cache.deallocate(b, size + 1000);
    cache.deallocate(other, 2 << 20);
    CHECK(c.frees == 0);
  }
  CHECK(c.frees == 3);  // everything kept goes back when the cache goes
}

TEST_CASE("small blocks are never kept, and the capacity evicts the oldest") {
  Counts c;
  const size_t mib = size_t{1} << 20;
  BlockCache cache(counting_hooks(c), 3 * BlockCache::block_size(mib));
  void* small = cache.allocate(100);
  cache.deallocate(small, 100);
  CHECK(c.frees == 1);
  CHECK(cache.cached_bytes() == 0);

  std::set<void*> blocks;
  std::vector<void*> order;
  for (int i = 0; i < 4; ++i) order.push_back(cache.allocate(mib));
  for (void* p : order) cache.deallocate(p, mib);  // the 4th pushes out the 1st
  CHECK(c.frees == 2);
  CHECK(cache.cached_bytes() == 3 * BlockCache::block_size(mib));
  for (int i = 0; i < 3; ++i) blocks.insert(cache.allocate(mib));
  CHECK(blocks == std::set<void*>(order.begin() + 1, order.end()));
  for (void* p : blocks) cache.deallocate(p, mib);

  void* huge = cache.allocate(64 * mib);  // larger than the whole capacity: never kept
  cache.deallocate(huge, 64 * mib);
  CHECK(c.frees == 3);
}

TEST_CASE("with the system allocator, a freed small block goes to the thread's list for the next one of its class") {
  BlockCache cache(default_allocator());
  void* a = cache.allocate(64 + 64);  // a 16-float tensor and its header
  cache.deallocate(a, 64 + 64);
  CHECK(cache.allocate(64 + 60) == a);  // the same 64-byte class
  CHECK(cache.cached_bytes() == 0);     // per-thread lists are not the cache's kept bytes
  void* other = cache.allocate(64 + 200);
  CHECK(other != a);
  // Another thread's frees join that thread's list: this one hands out fresh blocks meanwhile.
  std::thread([&] { cache.deallocate(other, 64 + 200); }).join();
  void* fresh = cache.allocate(64 + 200);
  CHECK(fresh != nullptr);
  // A class keeps a bounded number of blocks; the rest go back to the system.
  std::vector<void*> many;
  for (int i = 0; i < 100; ++i) many.push_back(cache.allocate(1000));
  for (void* p : many) cache.deallocate(p, 1000);
  cache.deallocate(a, 64 + 64);
  cache.deallocate(fresh, 64 + 200);
}

TEST_CASE("the CPU device keeps large blocks only with the default allocator") {
  Ref<CpuDevice> plain = Ref<CpuDevice>::adopt(new CpuDevice(default_allocator()));
  Buffer* b = plain->allocate(1 << 20);
  void* data = b->data;
  b->release();
#if defined(__SANITIZE_ADDRESS__)
  (void)data;
  CHECK(plain->cached_bytes() == 0);  // AddressSanitizer sees every free (cpu_device.cc)
#else
  CHECK(plain->cached_bytes() > 0);
  Buffer* again = plain->allocate(1 << 20);
  CHECK(again->data == data);
  again->release();
#endif

  Counts c;
  Ref<CpuDevice> hooked = Ref<CpuDevice>::adopt(new CpuDevice(counting_hooks(c)));
  hooked->allocate(1 << 20)->release();
  hooked->allocate(1 << 20)->release();
  CHECK(c.allocs == 2);  // an embedder's hooks see every allocation
  CHECK(c.frees == 2);
  CHECK(hooked->cached_bytes() == 0);
}

}  // namespace
}  // namespace cairn
