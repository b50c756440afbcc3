#include "tests/runtime/data/par/par_util.h"

#include <thread>

namespace cairn::test {
namespace {

class NumbersDataset final : public data::Dataset {
 public:
  explicit NumbersDataset(Numbers s) : Dataset(s.context ? *s.context : ctx(), value_spec()), s_(std::move(s)) {}
  std::string describe() const override { return "numbers(" + std::to_string(s_.n) + ")"; }
  int64_t cardinality() const override { return s_.n; }
  bool random_access() const override { return true; }
  int parallelism() const override { return s_.parallelism; }
  int64_t prefetch_depth() const override { return s_.prefetch; }
  void get(int64_t i, uint64_t epoch, data::Element& out) const override {
    s_.calls->fetch_add(1);
    if (s_.delay.count()) std::this_thread::sleep_for(s_.delay);
    if (s_.fail.count(i)) raise(Code::InvalidArgument, "bad element");
    out = {i64(s_.start + i + 1000 * static_cast<int64_t>(epoch))};
  }

 private:
  Numbers s_;
};

class StreamDataset final : public data::Dataset {
 public:
  explicit StreamDataset(data::DatasetPtr in) : Dataset(in->context(), in->spec()), in_(std::move(in)) {}
  std::string describe() const override { return in_->describe() + ".stream()"; }
  int64_t cardinality() const override { return in_->cardinality(); }
  std::unique_ptr<data::Iterator> make_iterator(uint64_t epoch) const override {
    return std::make_unique<It>(in_, epoch);
  }

 private:
  class It final : public data::Iterator {
   public:
    It(data::DatasetPtr in, uint64_t epoch) : in_(std::move(in)), epoch_(epoch) {}
    bool next(data::Element& out) override {
      if (i_ >= in_->cardinality()) return false;
      in_->get(i_++, epoch_, out);
      return true;
    }
    void save(data::StateWriter& w) override { w.put_i64(i_); }
    void restore(data::StateReader& r) override { i_ = r.get_i64(); }

   private:
    data::DatasetPtr in_;
    uint64_t epoch_;
    int64_t i_ = 0;
  };
  data::DatasetPtr in_;
};

}  // namespace

data::ElementSpec value_spec() { return data::ElementSpec{{{"value", DType::Int64, {}}}}; }
Tensor i64(int64_t v) { return scalar<int64_t>(v); }
int64_t value_of(const data::Element& e, size_t component) {
  REQUIRE(e.size() > component);
  return e[component].data<int64_t>()[0];
}

data::DatasetPtr numbers(const Numbers& spec) { return std::make_shared<NumbersDataset>(spec); }
data::DatasetPtr as_stream(data::DatasetPtr in) { return std::make_shared<StreamDataset>(std::move(in)); }

std::vector<int64_t> drain(data::Iterator& it, int* errors, int64_t limit) {
  std::vector<int64_t> out;
  data::Element e;
  for (;;) {
    if (limit >= 0 && static_cast<int64_t>(out.size()) >= limit) break;
    try {
      if (!it.next(e)) break;
      out.push_back(value_of(e));
    } catch (const Error& err) {
      if (!errors) FAIL(err.message());
      ++*errors;
    }
  }
  return out;
}

std::vector<int64_t> drain(const data::DatasetPtr& ds, uint64_t epoch, int* errors) {
  auto it = ds->make_iterator(epoch);
  return drain(*it, errors);
}

std::unique_ptr<data::Iterator> resumed(const data::DatasetPtr& ds, data::Iterator& it, uint64_t epoch) {
  data::StateWriter w;
  it.save(w);
  auto fresh = ds->make_iterator(epoch);
  data::StateReader r(w.bytes(), ds->describe(), ds->context());
  fresh->restore(r);
  CHECK(r.done());
  return fresh;
}

std::vector<int64_t> iota(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

}  // namespace cairn::test
