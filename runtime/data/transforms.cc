// repeat, concatenate, take, skip and shard, and the helpers of transforms_internal.h.
//
// Over indexable inputs each maps its output index to one input index (and, for repeat, an
// epoch), so the pipeline stays indexable. Over streams:
//  - repeat and concatenate run their parts one after another (repetition r of repeat is
//    iteration derive_epoch(epoch, r) of the input); the state is the part number and the
//    current part's state. A repeat whose pass yields nothing stops (as TensorFlow's), so
//    repeat() of an empty stream ends instead of spinning.
//  - take, skip and shard decide per input position; the state is the input's state and the count
//    of input elements consumed. Errors of elements that skip or shard drop are dropped with them,
//    as the indexable versions never compute those elements.
#include <fmt/format.h>

#include <limits>

#include "runtime/core/error.h"
#include "runtime/data/transforms.h"
#include "runtime/data/transforms_internal.h"

namespace cairn::data {
namespace xform {

const DatasetPtr& require_input(const DatasetPtr& in, const char* who) {
  if (!in) raise(Code::InvalidArgument, "{}: the input dataset is null", who);
  return in;
}

std::string dims_text(const std::vector<int64_t>& dims) { return "[" + fmt::format("{}", fmt::join(dims, ",")) + "]"; }

size_t element_bytes(DType dtype, const char* who) {
  if (!dtype_is_valid(dtype) || dtype == DType::String)
    raise(Code::Unimplemented, "{}: components of dtype {} are not supported", who, dtype_name(dtype));
  return dtype_size(dtype);
}

}  // namespace xform

namespace {

using xform::UnaryDataset;

// Runs parts 0, 1, ... (num_parts of them, or forever for -1) one after another; part k is
// iteration part(k).second of dataset part(k).first.
class ChainIterator final : public Iterator {
 public:
  using Part = std::function<std::pair<const Dataset*, uint64_t>(int64_t)>;
  ChainIterator(DatasetPtr owner, Part part, int64_t num_parts, bool stop_on_empty_part)
      : owner_(std::move(owner)), part_(std::move(part)), num_parts_(num_parts), stop_on_empty_(stop_on_empty_part) {}

  bool next(Element& out) override {
    for (;;) {
      if (done_ || (num_parts_ >= 0 && k_ >= num_parts_)) return false;
      if (!cur_) {
        const auto [ds, epoch] = part_(k_);
        cur_ = ds->make_iterator(epoch);
        got_ = false;
      }
      bool got = false;
      try {
        got = cur_->next(out);
      } catch (...) {
        got_ = true;
        throw;
      }
      if (got) {
        got_ = true;
        return true;
      }
      cur_->cancel();
      cur_.reset();
      if (stop_on_empty_ && !got_) {
        done_ = true;
        return false;
      }
      ++k_;
    }
  }

  void save(StateWriter& w) override {
    w.put_i64(k_);
    w.put_bool(done_);
    w.put_bool(got_);
    w.put_bool(cur_ != nullptr);
    if (cur_) cur_->save(w);
  }

  void restore(StateReader& r) override {
    const int64_t k = r.get_i64();
    const bool done = r.get_bool();
    const bool got = r.get_bool();
    const bool has = r.get_bool();
    if (k < 0 || (num_parts_ >= 0 && k > num_parts_)) r.corrupt("a part number outside the pipeline");
    if (cur_) cur_->cancel();
    cur_.reset();
    k_ = k;
    done_ = done;
    got_ = got;
    if (has) {
      if (num_parts_ >= 0 && k_ >= num_parts_) r.corrupt("a part number outside the pipeline");
      const auto [ds, epoch] = part_(k_);
      cur_ = ds->make_iterator(epoch);
      cur_->restore(r);
    }
  }

  void cancel() override {
    if (cur_) cur_->cancel();
  }

 private:
  const DatasetPtr owner_;  // keeps the datasets part_ returns alive
  const Part part_;
  const int64_t num_parts_;
  const bool stop_on_empty_;
  int64_t k_ = 0;
  bool done_ = false;  // stopped after an empty part
  bool got_ = false;  // the current part has produced (or failed) an element
  std::unique_ptr<Iterator> cur_;
};

// ---- repeat ----

class RepeatDataset final : public UnaryDataset {
 public:
  RepeatDataset(DatasetPtr in, int64_t count) : UnaryDataset(in, in->spec()), count_(count) {}

  std::string describe() const override {
    return count_ < 0 ? in_->describe() + ".repeat()" : fmt::format("{}.repeat({})", in_->describe(), count_);
  }

  int64_t cardinality() const override {
    const int64_t n = in_->cardinality();
    if (count_ == 0 || n == 0) return 0;
    if (n < 0) return n;
    return count_ < 0 ? kInfinite : n * count_;
  }

  bool random_access() const override { return input_indexable(); }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    const int64_t n = in_->cardinality();
    if (n == kInfinite) return in_->get(index, derive_epoch(epoch, 0), out);
    in_->get(index % n, derive_epoch(epoch, static_cast<uint64_t>(index / n)), out);
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override {
    if (random_access()) return Dataset::make_iterator(epoch);
    const Dataset* in = in_.get();
    return std::make_unique<ChainIterator>(
        shared_from_this(),
        [in, epoch](int64_t r) { return std::make_pair(in, derive_epoch(epoch, static_cast<uint64_t>(r))); }, count_,
        true);
  }

 private:
  const int64_t count_;
};

// ---- concatenate ----

class ConcatenateDataset final : public Dataset {
 public:
  ConcatenateDataset(DatasetPtr a, DatasetPtr b, ElementSpec spec)
      : Dataset(a->context(), std::move(spec)), a_(std::move(a)), b_(std::move(b)) {}

  std::string describe() const override { return a_->describe() + ".concatenate(" + b_->describe() + ")"; }

  int64_t cardinality() const override {
    const int64_t na = a_->cardinality(), nb = b_->cardinality();
    if (na == kInfinite) return kInfinite;
    if (na == kUnknown || nb == kUnknown) return kUnknown;
    if (nb == kInfinite) return kInfinite;
    return na + nb;
  }

  bool random_access() const override {
    return a_->random_access() && a_->cardinality() >= 0 && b_->random_access() && b_->cardinality() != kUnknown;
  }
  int parallelism() const override { return std::max(a_->parallelism(), b_->parallelism()); }
  int64_t prefetch_depth() const override { return std::max(a_->prefetch_depth(), b_->prefetch_depth()); }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    const int64_t na = a_->cardinality();
    if (index < na) return a_->get(index, epoch, out);
    b_->get(index - na, epoch, out);
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override {
    if (random_access()) return Dataset::make_iterator(epoch);
    const Dataset* a = a_.get();
    const Dataset* b = b_.get();
    return std::make_unique<ChainIterator>(
        shared_from_this(), [a, b, epoch](int64_t k) { return std::make_pair(k == 0 ? a : b, epoch); }, 2, false);
  }

 private:
  const DatasetPtr a_, b_;
};

// ---- take, skip, shard ----

enum class Action { Take, Drop, End };

class SliceDataset final : public UnaryDataset {
 public:
  enum Kind { kTake, kSkip, kShard };
  SliceDataset(DatasetPtr in, Kind kind, int64_t a, int64_t b)
      : UnaryDataset(in, in->spec()), kind_(kind), a_(a), b_(b) {}

  std::string describe() const override {
    switch (kind_) {
      case kTake: return fmt::format("{}.take({})", in_->describe(), a_);
      case kSkip: return fmt::format("{}.skip({})", in_->describe(), a_);
      default: return fmt::format("{}.shard({}, {})", in_->describe(), a_, b_);
    }
  }

  int64_t cardinality() const override {
    const int64_t n = in_->cardinality();
    switch (kind_) {
      case kTake:
        if (a_ < 0) return n;
        if (n == kInfinite) return a_;
        return n == kUnknown ? kUnknown : std::min(n, a_);
      case kSkip:
        if (a_ < 0) return 0;
        return n < 0 ? n : std::max<int64_t>(0, n - a_);
      default:
        if (n < 0) return n;
        return n <= b_ ? 0 : (n - b_ + a_ - 1) / a_;
    }
  }

  bool random_access() const override { return input_indexable(); }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    const int64_t i = kind_ == kTake ? index : kind_ == kSkip ? index + a_ : index * a_ + b_;
    in_->get(i, epoch, out);
  }

  // What a stream does with input element `pos`.
  Action action(int64_t pos) const {
    switch (kind_) {
      case kTake: return a_ < 0 || pos < a_ ? Action::Take : Action::End;
      case kSkip: return a_ < 0 || pos < a_ ? Action::Drop : Action::Take;
      default: return pos % a_ == b_ ? Action::Take : Action::Drop;
    }
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

 private:
  const Kind kind_;
  const int64_t a_, b_;
};

class SliceIterator final : public xform::InputIterator<SliceDataset> {
 public:
  using InputIterator::InputIterator;

  bool next(Element& out) override {
    for (;;) {
      switch (ds_->action(input_.count())) {
        case Action::End: return false;
        case Action::Take: return input_.next(out);
        case Action::Drop:
          try {
            if (!input_.next(out)) return false;
          } catch (const Error&) {
            // a dropped element's error goes with it
          }
      }
    }
  }
};

std::unique_ptr<Iterator> SliceDataset::make_iterator(uint64_t epoch) const {
  return xform::iterator_for<SliceIterator>(*this, epoch);
}

void check_count(int64_t count, const char* who) {
  if (count < -1) raise(Code::InvalidArgument, "{}: count is {}, expected >= -1 (-1: {})", who, count,
                        std::string_view(who) == "repeat" ? "forever" : std::string_view(who) == "take" ? "all" : "everything");
}

}  // namespace

DatasetPtr repeat(DatasetPtr in, int64_t count) {
  xform::require_input(in, "repeat");
  check_count(count, "repeat");
  const int64_t n = in->cardinality();
  if (count > 0 && n > 0 && n > std::numeric_limits<int64_t>::max() / count)
    raise(Code::InvalidArgument, "repeat: {} repetitions of {} elements overflow int64", count, n);
  return std::make_shared<RepeatDataset>(std::move(in), count);
}

DatasetPtr take(DatasetPtr in, int64_t n) {
  xform::require_input(in, "take");
  check_count(n, "take");
  return std::make_shared<SliceDataset>(std::move(in), SliceDataset::kTake, n, 0);
}

DatasetPtr skip(DatasetPtr in, int64_t n) {
  xform::require_input(in, "skip");
  check_count(n, "skip");
  return std::make_shared<SliceDataset>(std::move(in), SliceDataset::kSkip, n, 0);
}

DatasetPtr shard(DatasetPtr in, int64_t num_shards, int64_t index) {
  xform::require_input(in, "shard");
  if (num_shards < 1) raise(Code::InvalidArgument, "shard: num_shards is {}, expected >= 1", num_shards);
  if (index < 0 || index >= num_shards)
    raise(Code::InvalidArgument, "shard: index is {}, expected in [0, {})", index, num_shards);
  return std::make_shared<SliceDataset>(std::move(in), SliceDataset::kShard, num_shards, index);
}

DatasetPtr concatenate(DatasetPtr a, DatasetPtr b) {
  xform::require_input(a, "concatenate");
  xform::require_input(b, "concatenate");
  const ElementSpec& sa = a->spec();
  const ElementSpec& sb = b->spec();
  if (sa.size() != sb.size())
    raise(Code::InvalidArgument, "concatenate: the first input has {} components ({}), the second {} ({})", sa.size(),
          sa.text(), sb.size(), sb.text());
  ElementSpec spec;
  for (size_t c = 0; c < sa.size(); ++c) {
    const ComponentSpec& x = sa.components[c];
    const ComponentSpec& y = sb.components[c];
    if (x.name != y.name || x.dtype != y.dtype || x.dims.size() != y.dims.size())
      raise(Code::InvalidArgument,
            "concatenate: component {} is '{}' {}{} in the first input but '{}' {}{} in the second (names, dtypes and "
            "ranks must match)",
            c, x.name, dtype_name(x.dtype), xform::dims_text(x.dims), y.name, dtype_name(y.dtype),
            xform::dims_text(y.dims));
    ComponentSpec m = x;
    for (size_t d = 0; d < m.dims.size(); ++d)
      if (x.dims[d] != y.dims[d]) m.dims[d] = -1;
    spec.components.push_back(std::move(m));
  }
  return std::make_shared<ConcatenateDataset>(std::move(a), std::move(b), std::move(spec));
}

}  // namespace cairn::data
