// A thread's list of freed blocks of one size, handed out again for the next allocation of that
// size. Why: a small eager op allocates and frees a tensor handle and a small buffer every call,
// and malloc plus free cost ~100-250 instructions per block where popping a list costs a few
// (bench/callgrind_dispatch.sh). Used as a thread_local member: no locks; a block freed on
// another thread simply joins that thread's list. Under ASan a kept block is poisoned past its
// link, so a use after free is still reported; the link itself stays readable because
// LeakSanitizer ignores pointers held in poisoned memory, and would report every block after
// the first as leaked while the list holds them (it did, in capi_fuzzer_smoke_test).
#pragma once

#include <cstddef>
#include <new>

#include <sanitizer/asan_interface.h>

namespace cairn {

// Keeps at most kCapacity blocks.
template <int kCapacity>
class FreeList {
 public:
  // A kept block of `size` bytes (the size every block of this list has), or nullptr.
  void* take(size_t size) {
    Node* n = head_;
    if (n == nullptr) return nullptr;
    head_ = n->next;
    ASAN_UNPOISON_MEMORY_REGION(n, size);
    --count_;
    return n;
  }

  // Keeps `p`, a block of `size` bytes; false (the caller frees it) when the list is full or closed.
  bool keep(void* p, size_t size) {
    if (closed_ || count_ >= kCapacity) return false;
    head_ = new (p) Node{head_};
    ++count_;
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(p) + sizeof(Node), size - sizeof(Node));
    return true;
  }

  // Frees every kept block with `free_block(void*)` and keeps none from now on: for the owning
  // thread_local's destructor, since a tensor freed later in the thread's exit must not be kept.
  template <class Free>
  void close(size_t size, Free free_block) {
    closed_ = true;
    while (void* p = take(size)) free_block(p);
  }

 private:
  struct Node {
    Node* next;
  };
  Node* head_ = nullptr;
  int count_ = 0;
  bool closed_ = false;
};

}  // namespace cairn
