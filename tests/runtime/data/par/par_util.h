// Small datasets for the tests of map, filter, interleave, prefetch and cache.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/data/parallel.h"
#include "tests/util/test_util.h"

namespace cairn::test {

// Indexable: element i of iteration `epoch` is {"value": int64 scalar start + i + 1000 * epoch}.
// Fails (InvalidArgument "bad element") at the indexes in `fail`; sleeps `delay` per element.
struct Numbers {
  int64_t n = 10;
  int64_t start = 0;
  std::set<int64_t> fail;
  std::chrono::microseconds delay{0};
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  // Parallelism / prefetch reported by the source itself (tests of the IndexIterator).
  int parallelism = 1;
  int64_t prefetch = 0;
  Context* context = nullptr;  // null: the tests' shared context
};
data::DatasetPtr numbers(const Numbers& spec);
inline data::DatasetPtr numbers(int64_t n) {
  Numbers s;
  s.n = n;
  return numbers(s);
}

// A stream over `in` (not indexable): its iterator pulls in's elements in order; state: count.
data::DatasetPtr as_stream(data::DatasetPtr in);

// The spec of numbers(): one int64 scalar "value".
data::ElementSpec value_spec();
Tensor i64(int64_t v);
int64_t value_of(const data::Element& e, size_t component = 0);

// Every value of iteration `epoch`; failed elements are counted in *errors (or fail the test).
std::vector<int64_t> drain(const data::DatasetPtr& ds, uint64_t epoch = 0, int* errors = nullptr);
std::vector<int64_t> drain(data::Iterator& it, int* errors = nullptr, int64_t limit = -1);

// Saves an iterator's state and restores it into a fresh iterator of the same dataset.
std::unique_ptr<data::Iterator> resumed(const data::DatasetPtr& ds, data::Iterator& it, uint64_t epoch = 0);

std::vector<int64_t> iota(int64_t from, int64_t to);

}  // namespace cairn::test
