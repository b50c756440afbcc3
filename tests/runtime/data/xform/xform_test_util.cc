#include "tests/runtime/data/xform/xform_test_util.h"

#include <fmt/format.h>

#include "runtime/core/error.h"

namespace cairn::data::test {
namespace {

class Table final : public Dataset {
 public:
  Table(ElementSpec spec, std::vector<Element> rows, bool indexable, std::set<int64_t> failing, bool epoch_offset)
      : Dataset(ctx(), std::move(spec)),
        rows_(std::move(rows)),
        indexable_(indexable),
        failing_(std::move(failing)),
        epoch_offset_(epoch_offset) {}

  std::string describe() const override { return fmt::format("table({}{})", rows_.size(), indexable_ ? "" : ", stream"); }
  int64_t cardinality() const override { return indexable_ ? static_cast<int64_t>(rows_.size()) : kUnknown; }
  bool random_access() const override { return indexable_; }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    if (failing_.count(index)) raise(Code::InvalidArgument, "table (element {}): broken", index);
    out = rows_.at(static_cast<size_t>(index));
    if (epoch_offset_) {
      Tensor t = Tensor::allocate(ctx().cpu(), DType::Int64, out[0].shape());
      for (int64_t i = 0; i < t.num_elements(); ++i)
        t.mutable_data<int64_t>()[i] =  // wraps for the large epochs of nested repeats
            static_cast<int64_t>(static_cast<uint64_t>(out[0].data<int64_t>()[i]) + 100 * epoch);
      out[0] = t;
    }
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override {
    if (indexable_) return Dataset::make_iterator(epoch);
    return std::make_unique<It>(std::static_pointer_cast<const Table>(shared_from_this()), epoch);
  }

  int64_t size() const { return static_cast<int64_t>(rows_.size()); }

 private:
  class It final : public Iterator {
   public:
    It(std::shared_ptr<const Table> t, uint64_t epoch) : t_(std::move(t)), epoch_(epoch) {}
    bool next(Element& out) override {
      if (pos_ >= t_->size()) return false;
      t_->get(pos_++, epoch_, out);
      return true;
    }
    void save(StateWriter& w) override { w.put_i64(pos_); }
    void restore(StateReader& r) override { pos_ = r.get_i64(); }

   private:
    std::shared_ptr<const Table> t_;
    uint64_t epoch_;
    int64_t pos_ = 0;
  };

  std::vector<Element> rows_;
  bool indexable_;
  std::set<int64_t> failing_;
  bool epoch_offset_;
};

class Endless final : public Dataset {
 public:
  Endless() : Dataset(ctx(), ElementSpec{{{"x", DType::Int64, {}}}}) {}
  std::string describe() const override { return "endless()"; }
  int64_t cardinality() const override { return kInfinite; }
  bool random_access() const override { return true; }
  void get(int64_t index, uint64_t, Element& out) const override { out = {cairn::test::scalar<int64_t>(index)}; }
};

}  // namespace

DatasetPtr table(ElementSpec spec, std::vector<Element> rows, bool indexable, std::set<int64_t> failing,
                 bool epoch_offset) {
  return std::make_shared<Table>(std::move(spec), std::move(rows), indexable, std::move(failing), epoch_offset);
}

DatasetPtr ints(int64_t n, bool indexable, std::set<int64_t> failing, bool epoch_offset) {
  if (n == kInfinite) return std::make_shared<Endless>();
  std::vector<Element> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back({cairn::test::scalar<int64_t>(i)});
  return table(ElementSpec{{{"x", DType::Int64, {}}}}, std::move(rows), indexable, std::move(failing), epoch_offset);
}

DatasetPtr vectors(const std::vector<int64_t>& lens, const std::vector<int64_t>& values, bool indexable) {
  std::vector<Element> rows;
  for (size_t i = 0; i < lens.size(); ++i)
    rows.push_back({make<int64_t>(std::vector<int64_t>(static_cast<size_t>(lens[i]), values[i]), Shape{lens[i]})});
  return table(ElementSpec{{{"v", DType::Int64, {-1}}}}, std::move(rows), indexable);
}

std::string show(const Element& e) {
  std::string out;
  for (const Tensor& t : e) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{}{}", t.shape().str(), fmt::format("{}", fmt::join(cairn::test::as_doubles(t), ",")));
  }
  return out;
}

std::string bits(const Element& e) {
  std::string out;
  for (const Tensor& t : e) {
    out += fmt::format("{}{}:", static_cast<int>(t.dtype()), t.shape().str());
    out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
    out += '|';
  }
  return out;
}

namespace {

// Next element as render(e), "error: ..." for a failed one, or "" at the end.
template <class Render>
std::string pull(Iterator& it, Render render) {
  Element e;
  try {
    if (!it.next(e)) return "";
  } catch (const Error& err) {
    return "error: " + err.message();
  }
  return render(e);
}

}  // namespace

std::vector<std::string> run(const DatasetPtr& ds, size_t limit, uint64_t epoch) {
  auto it = ds->make_iterator(epoch);
  std::vector<std::string> out;
  while (out.size() < limit) {
    std::string s = pull(*it, show);
    if (s.empty()) break;
    out.push_back(std::move(s));
  }
  return out;
}

size_t check_every_cut(const DatasetPtr& ds, size_t limit) {
  std::vector<std::string> all;
  {
    auto it = ds->make_iterator(0);
    while (all.size() < limit) {
      std::string s = pull(*it, bits);
      if (s.empty()) break;
      all.push_back(std::move(s));
    }
  }
  const bool ends = all.size() < limit;
  size_t largest = 0;
  for (size_t k = 0; k <= all.size(); ++k) {
    auto it = ds->make_iterator(0);
    for (size_t i = 0; i < k; ++i) REQUIRE(pull(*it, bits) == all[i]);
    StateWriter w;
    it->save(w);
    const std::string state = w.take();
    largest = std::max(largest, state.size());
    auto fresh = ds->make_iterator(0);
    StateReader r(state, ds->describe(), ctx());
    fresh->restore(r);
    CHECK(r.done());
    for (size_t j = k; j < all.size(); ++j) {
      const std::string got = pull(*fresh, bits);
      CHECK_MESSAGE(got == all[j], ds->describe() << ": restored after " << k << " elements, element " << j
                                                  << " differs");
      // the original keeps going too: saving does not disturb it
      if (j == k && k < all.size()) CHECK(pull(*it, bits) == all[j]);
    }
    if (ends) CHECK_MESSAGE(pull(*fresh, bits).empty(), ds->describe() << ": restored after " << k << " does not end");
  }
  return largest;
}

}  // namespace cairn::data::test
