// The iterator of indexable datasets: its state is the next index.
//
// This first version computes one element at a time on the calling thread; parallelism() and
// prefetch_depth() are honoured by the parallel version (workers computing indexes ahead and
// delivering in order), which keeps the same state.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/data/dataset.h"

namespace cairn::data {
namespace {

class IndexIterator final : public Iterator {
 public:
  IndexIterator(DatasetPtr ds, uint64_t epoch) : ds_(std::move(ds)), epoch_(epoch), end_(ds_->cardinality()) {}

  bool next(Element& out) override {
    if (end_ >= 0 && next_ >= end_) return false;
    const int64_t i = next_++;  // a failed element is skipped: the next call moves on
    ds_->get(i, epoch_, out);
    return true;
  }

  void save(StateWriter& w) override { w.put_i64(next_); }

  void restore(StateReader& r) override {
    const int64_t i = r.get_i64();
    if (i < 0 || (end_ >= 0 && i > end_)) r.corrupt("an index outside the dataset");
    next_ = i;
  }

 private:
  const DatasetPtr ds_;
  const uint64_t epoch_;
  const int64_t end_;  // cardinality, or kInfinite
  int64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Iterator> make_index_iterator(DatasetPtr ds, uint64_t epoch) {
  return std::make_unique<IndexIterator>(std::move(ds), epoch);
}

}  // namespace cairn::data
