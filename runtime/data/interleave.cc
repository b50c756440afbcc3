// interleave: TensorFlow's round-robin over cycle_length inner datasets, block_length elements
// from each in turn; an inner dataset that ends frees its place in the cycle, which the next
// input element takes when the cycle comes back to it.
//
// With num_parallel_calls > 0, worker threads open the inner datasets of free cycle places ahead
// of the consumer (one at a time, in the order the consumer will reach them, so each place gets the
// input element it would get without workers) and read the open inner iterators ahead (a few
// elements each) while the consumer takes them in the same round-robin order, so the order never
// depends on timing. A failure to open (the input's or the function's) waits in its place and is
// thrown when the consumer reaches it. State: the input's state, the cycle position, and for each
// place its failure or its inner dataset's input element (the dataset is rebuilt from it on
// restore), its iterator's state and the elements read ahead of the consumer.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/parallel.h"
#include "runtime/data/parallel_internal.h"

namespace cairn::data {
namespace {

using internal::Failure;

class InterleaveDataset final : public Dataset {
 public:
  InterleaveDataset(DatasetPtr in, ElementSpec spec, DatasetFn fn, InterleaveOptions o, std::string description)
      : Dataset(in->context(), std::move(spec)),
        in_(std::move(in)),
        fn_(std::move(fn)),
        o_(o),
        description_(std::move(description)) {}

  std::string describe() const override {
    return in_->describe() + description_;
  }
  int64_t cardinality() const override { return in_->cardinality() == 0 ? 0 : kUnknown; }
  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

  // The inner dataset of input element `index`, its spec checked against ours.
  DatasetPtr inner(const Element& x, int64_t index) const {
    DatasetPtr ds = with_element_context("interleave", index, [&] { return fn_(x); });
    if (!ds) raise(Code::InvalidArgument, "interleave (element {}): the function returned no dataset", index);
    const ElementSpec& want = spec();
    const ElementSpec& got = ds->spec();
    bool ok = got.size() == want.size();
    for (size_t c = 0; ok && c < want.size(); ++c) {
      const ComponentSpec& w = want.components[c];
      const ComponentSpec& g = got.components[c];
      ok = w.name == g.name && w.dtype == g.dtype && w.dims.size() == g.dims.size();
      for (size_t d = 0; ok && d < w.dims.size(); ++d) ok = w.dims[d] < 0 || w.dims[d] == g.dims[d];
    }
    if (!ok)
      raise(Code::InvalidArgument, "interleave (element {}): the function's dataset has spec {{{}}}, expected {{{}}}",
            index, got.text(), want.text());
    return ds;
  }

  const InterleaveOptions& options() const { return o_; }
  const DatasetPtr& input() const { return in_; }

 private:
  const DatasetPtr in_;
  const DatasetFn fn_;
  const InterleaveOptions o_;  // resolved: no kAutotune left
  const std::string description_;  // with AUTOTUNE as asked (machine-independent)
};

class InterleaveIterator final : public Iterator {
 public:
  InterleaveIterator(std::shared_ptr<const InterleaveDataset> ds, uint64_t epoch)
      : ds_(std::move(ds)),
        epoch_(epoch),
        cycle_(static_cast<size_t>(ds_->options().cycle_length)),
        block_(ds_->options().block_length),
        workers_(ds_->options().num_parallel_calls),
        depth_(static_cast<size_t>(std::max(2, ds_->options().block_length))),
        input_(ds_->input()->make_iterator(epoch)),
        slots_(cycle_) {}
  ~InterleaveIterator() override { cancel(); }

  bool next(Element& out) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (workers_ > 0 && threads_.empty() && !cancelled_)
      for (int k = 0; k < workers_; ++k) threads_.emplace_back([this] { work(); });
    for (;;) {
      if (cancelled_ || (end_of_input_ && open_ == 0)) return false;
      Slot& s = slots_[cycle_index_];
      if (s.opening) {
        cv_.wait(lock, [&] { return cancelled_ || !s.opening; });
        continue;
      }
      if (s.failed) {  // its input element failed to open: thrown at its turn, the place stays free
        const Failure f = std::move(*s.failed);
        close(s);
        cv_.notify_all();
        f.rethrow();
      }
      if (s.it) {
        if (s.buffer.empty() && !s.ended) {
          if (s.busy) {
            cv_.wait(lock, [&] { return cancelled_ || !s.busy; });
          } else {
            read_ahead(s, lock);
          }
          continue;
        }
        if (s.buffer.empty()) {  // this inner dataset is done: its place waits for the next input
          close(s);
          advance();
          continue;
        }
        Item item = std::move(s.buffer.front());
        s.buffer.pop_front();
        cv_.notify_all();
        if (auto* f = std::get_if<Failure>(&item)) f->rethrow();  // the same slot continues next time
        if (++block_index_ == block_) advance();
        out = std::move(std::get<Element>(item));
        return true;
      }
      if (!end_of_input_) {
        if (opening_) cv_.wait(lock, [&] { return cancelled_ || !opening_; });
        else open(s, lock);
        continue;
      }
      advance();
    }
  }

  void save(StateWriter& w) override {
    std::unique_lock<std::mutex> lock(mu_);
    Paused paused(*this, lock);
    input_->save(w);
    w.put_i64(pulled_);
    w.put_bool(end_of_input_);
    w.put_u64(cycle_index_);
    w.put_i64(block_index_);
    for (Slot& s : slots_) {
      w.put_bool(s.it != nullptr || s.failed);
      if (!s.it && !s.failed) continue;
      w.put_bool(s.failed.has_value());
      if (s.failed) {
        s.failed->save(w);
        continue;
      }
      w.put_i64(s.index);
      w.put_element(s.input);
      StateWriter inner;
      s.it->save(inner);
      w.put_bytes(inner.bytes());
      w.put_bool(s.ended);
      w.put_u64(s.buffer.size());
      for (const Item& item : s.buffer) {
        const Failure* f = std::get_if<Failure>(&item);
        w.put_bool(f != nullptr);
        if (f) f->save(w);
        else w.put_element(std::get<Element>(item));
      }
    }
  }

  void restore(StateReader& r) override {
    std::unique_lock<std::mutex> lock(mu_);
    Paused paused(*this, lock);
    input_->restore(r);
    const int64_t pulled = r.get_i64();
    const bool end = r.get_bool();
    const uint64_t cycle_index = r.get_u64();
    const int64_t block_index = r.get_i64();
    if (pulled < 0 || cycle_index >= cycle_ || block_index < 0 || block_index >= block_) r.corrupt("a bad cycle position");
    std::vector<Slot> slots(cycle_);
    for (Slot& s : slots) {
      if (!r.get_bool()) continue;
      if (r.get_bool()) {
        s.failed = Failure::load(r);
        continue;
      }
      s.index = r.get_i64();
      s.input = r.get_element();
      const std::string inner = r.get_bytes();
      s.it = ds_->inner(s.input, s.index)->make_iterator(inner_epoch(s.index));
      StateReader sub(inner, ds_->describe(), ds_->context());
      s.it->restore(sub);
      s.ended = r.get_bool();
      const uint64_t n = r.get_u64();
      if (n > depth_ + 1) r.corrupt("too many elements read ahead");
      for (uint64_t k = 0; k < n; ++k) {
        if (r.get_bool()) s.buffer.emplace_back(Failure::load(r));
        else s.buffer.emplace_back(r.get_element());
      }
    }
    for (Slot& s : slots_) close(s);
    slots_ = std::move(slots);
    open_ = static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.it != nullptr || s.failed; }));
    pulled_ = pulled;
    end_of_input_ = end;
    cycle_index_ = cycle_index;
    block_index_ = block_index;
  }

  void cancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      cv_.notify_all();
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    for (Slot& s : slots_) close(s);
    input_->cancel();
  }

 private:
  using Item = std::variant<Element, Failure>;
  struct Slot {
    int64_t index = 0;  // of its input element
    Element input;
    std::unique_ptr<Iterator> it;  // null: the place is free
    std::deque<Item> buffer;       // read ahead, not delivered
    bool ended = false;            // it returned false
    bool busy = false;             // a thread is in it->next()
    bool opening = false;          // a thread is opening this place (pulling its input element)
    std::optional<Failure> failed;  // opening failed: thrown when the consumer comes here
  };

  // Stops workers from starting reads and waits for those in flight (save and restore).
  class Paused {
   public:
    Paused(InterleaveIterator& it, std::unique_lock<std::mutex>& lock) : it_(it) {
      ++it_.paused_;
      it_.cv_.wait(lock, [&] {
        return it_.cancelled_ || (!it_.opening_ && std::none_of(it_.slots_.begin(), it_.slots_.end(),
                                                                 [](const Slot& s) { return s.busy; }));
      });
      if (it_.cancelled_) {
        --it_.paused_;
        raise(Code::FailedPrecondition, "{}: the iterator is closed", it_.ds_->describe());
      }
    }
    ~Paused() {
      --it_.paused_;
      it_.cv_.notify_all();
    }

   private:
    InterleaveIterator& it_;
  };

  uint64_t inner_epoch(int64_t index) const { return derive_epoch(epoch_, static_cast<uint64_t>(index)); }

  void advance() {
    block_index_ = 0;
    cycle_index_ = (cycle_index_ + 1) % cycle_;
  }

  void close(Slot& s) {
    if (s.it) s.it->cancel();
    if (s.it || s.failed) --open_;
    s = Slot();
  }

  // Opens the next input element's dataset in the free place `s`, or records why it failed there
  // (mu_ held on entry and exit; one opening at a time, as the input is read in order).
  void open(Slot& s, std::unique_lock<std::mutex>& lock) {
    opening_ = true;
    s.opening = true;
    lock.unlock();
    Element x;
    bool got = true;
    int64_t index = -1;
    std::unique_ptr<Iterator> it;
    std::optional<Failure> failed;
    try {
      got = input_->next(x);
      if (got) {
        index = pulled_++;  // only this thread touches pulled_ while opening_ (a failed element is skipped)
        it = ds_->inner(x, index)->make_iterator(inner_epoch(index));
      }
    } catch (...) {
      failed = internal::current_failure();
    }
    lock.lock();
    opening_ = false;
    s.opening = false;
    if (failed) {
      s.failed = std::move(failed);
      ++open_;
    } else if (!got) {
      end_of_input_ = true;
    } else {
      s.index = index;
      s.input = std::move(x);
      s.it = std::move(it);
      ++open_;
    }
    cv_.notify_all();
  }

  // Reads one element of `s` into its buffer (mu_ held on entry and exit).
  void read_ahead(Slot& s, std::unique_lock<std::mutex>& lock) {
    s.busy = true;
    Iterator* it = s.it.get();
    lock.unlock();
    Element x;
    Item item;
    bool got = true;
    try {
      got = it->next(x);
      item = std::move(x);
    } catch (...) {
      item = internal::current_failure();
    }
    lock.lock();
    s.busy = false;
    if (got) s.buffer.push_back(std::move(item));
    else s.ended = true;
    cv_.notify_all();
  }

  // The next place a worker should serve, in cycle order from the consumer's position: an open
  // one that is idle and not full (read it ahead), or a free one (open it). The first free place
  // is the one the consumer will fill first, unless a failed place comes before it: the consumer
  // fills that one again once it has thrown the failure.
  Slot* wanted() {
    if (paused_ > 0) return nullptr;
    bool may_open = !end_of_input_ && !opening_;
    for (size_t k = 0; k < cycle_; ++k) {
      Slot& s = slots_[(cycle_index_ + k) % cycle_];
      if (s.it && !s.busy && !s.ended && s.buffer.size() < depth_) return &s;
      if (s.failed || s.opening) may_open = false;
      if (!s.it && !s.failed && !s.opening) {
        if (may_open) return &s;
        may_open = false;
      }
    }
    return nullptr;
  }

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      Slot* s = nullptr;
      cv_.wait(lock, [&] { return cancelled_ || (s = wanted()) != nullptr; });
      if (cancelled_) return;
      if (s->it) read_ahead(*s, lock);
      else open(*s, lock);
    }
  }

  const std::shared_ptr<const InterleaveDataset> ds_;
  const uint64_t epoch_;
  const size_t cycle_;
  const int block_;
  const int workers_;
  const size_t depth_;  // elements each inner iterator is read ahead
  const std::unique_ptr<Iterator> input_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  int64_t pulled_ = 0;
  bool end_of_input_ = false;
  size_t cycle_index_ = 0;
  int block_index_ = 0;
  int open_ = 0;
  int paused_ = 0;
  bool opening_ = false;  // a thread is reading the input (opening a place)
  bool cancelled_ = false;
  std::vector<std::thread> threads_;
};

std::unique_ptr<Iterator> InterleaveDataset::make_iterator(uint64_t epoch) const {
  return std::make_unique<InterleaveIterator>(std::static_pointer_cast<const InterleaveDataset>(shared_from_this()),
                                              epoch);
}

}  // namespace

DatasetPtr interleave(DatasetPtr in, ElementSpec out_spec, DatasetFn fn, InterleaveOptions o) {
  if (!in) raise(Code::InvalidArgument, "interleave: the input dataset is null");
  if (!fn) raise(Code::InvalidArgument, "interleave: the function is null");
  if (out_spec.size() == 0) raise(Code::InvalidArgument, "interleave: the output spec has no components");
  auto text = [](int n) { return n == kAutotune ? std::string("AUTOTUNE") : std::to_string(n); };
  std::string description = fmt::format(".interleave(cycle={}, block={}, parallel={})", text(o.cycle_length),
                                        o.block_length, text(o.num_parallel_calls));
  if (o.cycle_length == kAutotune) o.cycle_length = autotune_parallelism(in->context());
  if (o.cycle_length < 1)
    raise(Code::InvalidArgument, "interleave: cycle_length is {} (expected >= 1, or AUTOTUNE = -1)", o.cycle_length);
  if (o.block_length < 1) raise(Code::InvalidArgument, "interleave: block_length is {} (expected >= 1)", o.block_length);
  if (o.num_parallel_calls == kAutotune) o.num_parallel_calls = o.cycle_length;
  if (o.num_parallel_calls < 0 || o.num_parallel_calls > kMaxParallelism)
    raise(Code::InvalidArgument, "interleave: num_parallel_calls is {} (expected 0 to {}, or AUTOTUNE = -1)",
          o.num_parallel_calls, kMaxParallelism);
  o.num_parallel_calls = std::min(o.num_parallel_calls, o.cycle_length);
  return std::make_shared<InterleaveDataset>(std::move(in), std::move(out_spec), std::move(fn), o, std::move(description));
}

}  // namespace cairn::data
