// filter: a stream that keeps the elements its predicate accepts. The predicate runs on the
// consumer's thread (the input may compute ahead on its own workers). State: the input's state
// and the count of input elements seen (the element index of errors and random streams).
#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/parallel.h"
#include "runtime/data/parallel_internal.h"

namespace cairn::data {
namespace {

class FilterDataset final : public Dataset {
 public:
  FilterDataset(DatasetPtr in, std::function<bool(const Element&)> pred, std::string name, int64_t seed)
      : Dataset(in->context(), in->spec()),
        in_(std::move(in)),
        pred_(std::move(pred)),
        who_(fmt::format("filter '{}'", name)),
        description_(fmt::format(".filter('{}')", name)),
        stage_(internal::stage_key(in_->context(), seed, in_->describe() + description_)) {}

  std::string describe() const override { return in_->describe() + description_; }
  int64_t cardinality() const override { return in_->cardinality() == 0 ? 0 : kUnknown; }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override {
    return std::make_unique<It>(std::static_pointer_cast<const FilterDataset>(shared_from_this()), epoch);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::shared_ptr<const FilterDataset> ds, uint64_t epoch)
        : ds_(std::move(ds)), epoch_(epoch), input_(ds_->in_->make_iterator(epoch)) {}
    ~It() override { cancel(); }

    bool next(Element& out) override {
      Element x;
      while (input_->next(x)) {
        const int64_t index = seen_++;  // counted first: a failed element is skipped
        const bool keep = with_element_context(ds_->who_, index, [&] {
          RandomStreamScope scope(internal::element_key(ds_->stage_, epoch_, index));
          return ds_->pred_(x);
        });
        if (keep) {
          out = std::move(x);
          return true;
        }
      }
      return false;
    }
    void save(StateWriter& w) override {
      input_->save(w);
      w.put_i64(seen_);
    }
    void restore(StateReader& r) override {
      input_->restore(r);
      const int64_t seen = r.get_i64();
      if (seen < 0) r.corrupt("a negative element count");
      seen_ = seen;
    }
    void cancel() override { input_->cancel(); }

   private:
    const std::shared_ptr<const FilterDataset> ds_;
    const uint64_t epoch_;
    const std::unique_ptr<Iterator> input_;
    int64_t seen_ = 0;
  };

  const DatasetPtr in_;
  const std::function<bool(const Element&)> pred_;
  const std::string who_;
  const std::string description_;
  const uint64_t stage_;
};

}  // namespace

DatasetPtr filter(DatasetPtr in, std::function<bool(const Element&)> pred, std::string name, int64_t seed) {
  if (name.empty()) name = "filter";
  if (!in) raise(Code::InvalidArgument, "filter '{}': the input dataset is null", name);
  if (!pred) raise(Code::InvalidArgument, "filter '{}': the predicate is null", name);
  return std::make_shared<FilterDataset>(std::move(in), std::move(pred), std::move(name), seed);
}

}  // namespace cairn::data
