// Pieces shared by the files of transforms.h (batch.cc, shuffle.cc, structure.cc, transforms.cc).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/data/dataset.h"

namespace cairn::data::xform {

// InvalidArgument "<who>: the input dataset is null" for a null input.
const DatasetPtr& require_input(const DatasetPtr& in, const char* who);

// "[2,-1,3]".
std::string dims_text(const std::vector<int64_t>& dims);

// Bytes of one element of `dtype`; Unimplemented naming `who` for dtypes whose values are not
// plain bytes (strings).
size_t element_bytes(DType dtype, const char* who);

// A dataset with one input; passes the input's parallelism and prefetch depth on.
class UnaryDataset : public Dataset {
 public:
  UnaryDataset(DatasetPtr in, ElementSpec spec) : Dataset(in->context(), std::move(spec)), in_(std::move(in)) {}
  int parallelism() const override { return in_->parallelism(); }
  int64_t prefetch_depth() const override { return in_->prefetch_depth(); }
  const DatasetPtr& input() const { return in_; }

 protected:
  // The input can serve get(): indexable with a known (or infinite) cardinality.
  bool input_indexable() const { return indexable(*in_); }
  static bool indexable(const Dataset& d) { return d.random_access() && d.cardinality() != kUnknown; }

  const DatasetPtr in_;
};

// Pulls from an input iterator while keeping count of the input elements consumed (successful or
// failed), which stream iterators use to name elements in errors. The count is saved with the state.
class CountingInput {
 public:
  CountingInput(const Dataset& in, uint64_t epoch) : it_(in.make_iterator(epoch)) {}
  // The next input element; false at the end. A failed element counts and its error propagates.
  bool next(Element& out) {
    if (ended_) return false;
    ++count_;  // a failed element counts too: its error propagates and the input skips it
    if (it_->next(out)) return true;
    --count_;
    ended_ = true;
    return false;
  }
  int64_t count() const { return count_; }
  bool ended() const { return ended_; }
  void save(StateWriter& w) {
    w.put_i64(count_);
    w.put_bool(ended_);
    it_->save(w);
  }
  void restore(StateReader& r) {
    count_ = r.get_i64();
    ended_ = r.get_bool();
    if (count_ < 0) r.corrupt("a negative element count");
    it_->restore(r);
  }
  void cancel() { it_->cancel(); }

 private:
  std::unique_ptr<Iterator> it_;
  int64_t count_ = 0;
  bool ended_ = false;
};

// An iterator over one input pulled through a CountingInput; its state is the input's (subclasses
// that keep more save it after calling these).
template <class D>
class InputIterator : public Iterator {
 public:
  InputIterator(std::shared_ptr<const D> ds, uint64_t epoch) : ds_(std::move(ds)), input_(*ds_->input(), epoch) {}
  void save(StateWriter& w) override { input_.save(w); }
  void restore(StateReader& r) override { input_.restore(r); }
  void cancel() override { input_.cancel(); }

 protected:
  const std::shared_ptr<const D> ds_;
  CountingInput input_;
};

// The IndexIterator when `ds` is indexable, else the stream iterator It(ds, epoch).
template <class It, class D>
std::unique_ptr<Iterator> iterator_for(const D& ds, uint64_t epoch) {
  if (ds.random_access()) return make_index_iterator(ds.shared_from_this(), epoch);
  return std::make_unique<It>(std::static_pointer_cast<const D>(ds.shared_from_this()), epoch);
}

}  // namespace cairn::data::xform
