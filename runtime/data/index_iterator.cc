// The iterator of indexable datasets: its state is the next index.
//
// Work is done in chunks of consecutive indexes, so that per-element costs (a system call per
// record, a thread hand-off per element) are paid once per chunk: get_range computes a chunk where
// the dataset can (a TFRecord file's records with one read), get the rest. A chunk grows (doubling,
// from 1, up to 1024) while computing one takes well under ~200 us and its elements hold under
// 256 KiB, and shrinks when it takes more or holds over 1 MiB, so slow elements are still spread
// over the workers one by one and large ones come one at a time.
//
// With parallelism() 1 and prefetch_depth() 0 it computes on the calling thread, keeping the rest
// of a chunk for the next calls. Otherwise a small pool of worker threads owned by the iterator
// claims chunks of the indexes ahead of the consumer: at most parallelism() chunks at once, and at
// most (parallelism() + prefetch_depth()) chunks' worth of indexes past the next one to deliver,
// delivered in index order. The consumer takes a whole chunk at a time, so it locks and waits
// once per chunk, not once per element. Work ahead is never part of the state: a restore (or a fresh iterator
// from a saved state) recomputes it, and get() is a pure function of (index, epoch), so the
// elements are the same. An element that fails is delivered as its error in its turn, after the
// elements before it; the next call continues with the one after it.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/core/error.h"
#include "runtime/data/dataset.h"

namespace cairn::data {
namespace {

using Clock = std::chrono::steady_clock;

// The bytes of a chunk's elements.
template <class Range, class Get>
int64_t chunk_bytes(const Range& elements, Get&& element_of) {
  int64_t n = 0;
  for (const auto& x : elements)
    for (const Tensor& t : element_of(x)) n += static_cast<int64_t>(t.nbytes());
  return n;
}

// The chunk size for the next claim, from the last chunk's size, time and bytes: it grows while a
// chunk is quick and small, and shrinks when one is slow or large (many large fresh tensors at
// once cost page faults as the allocator hands memory back and forth).
int64_t adapt_chunk(int64_t chunk, int64_t done, Clock::duration took, int64_t bytes) {
  constexpr auto kTarget = std::chrono::microseconds(200);
  constexpr int64_t kMaxChunk = 1024;
  constexpr int64_t kSmall = int64_t{1} << 20, kLarge = int64_t{4} << 20;
  if (done < chunk) return chunk;  // cut short (an error, the end): says nothing
  if (took > kTarget * 2 || bytes > kLarge) return std::max<int64_t>(1, chunk / 2);
  if (took < kTarget / 2 && bytes < kSmall) return std::min(kMaxChunk, chunk * 2);
  return chunk;
}

// One computed index: its element or its error.
struct Slot {
  Element element;
  std::exception_ptr error;
};

// Consecutive indexes [begin, end) claimed by one worker; `slots` holds them once `done`.
struct Chunk {
  int64_t end = 0;
  bool done = false;
  std::vector<Slot> slots;
};

// The most chunks computed or ready ahead of the consumer (chunks hold at most 1024 elements).
constexpr int64_t kMaxWindow = int64_t{1} << 20;

class IndexIterator final : public Iterator {
 public:
  IndexIterator(DatasetPtr ds, uint64_t epoch)
      : ds_(std::move(ds)),
        epoch_(epoch),
        end_(ds_->cardinality()),
        workers_(std::max(1, ds_->parallelism())),
        // A prefetch buffer may be any size (2^62 included); read-ahead beyond kMaxWindow chunks
        // would never fit in memory anyway, and capping it keeps window_ * chunk_ in int64.
        window_(workers_ + std::clamp<int64_t>(ds_->prefetch_depth(), 0, kMaxWindow)),
        parallel_(ds_->parallelism() > 1 || ds_->prefetch_depth() > 0) {}

  ~IndexIterator() override { cancel(); }

  bool next(Element& out) override {
    if (!parallel_) return next_here(out);
    if (taken_pos_ == taken_.size() && !take_chunk()) return false;
    Slot slot = std::move(taken_[taken_pos_++]);
    ++next_;
    if (slot.error) std::rethrow_exception(slot.error);
    out = std::move(slot.element);
    return true;
  }

  void save(StateWriter& w) override { w.put_i64(next_); }

  void restore(StateReader& r) override {
    const int64_t i = r.get_i64();
    if (i < 0 || (end_ >= 0 && i > end_)) r.corrupt("an index outside the dataset");
    next_ = i;
    ready_.clear();
    ready_pos_ = 0;
    taken_.clear();
    taken_pos_ = 0;
    std::lock_guard<std::mutex> lock(mu_);
    base_ = i;
    issued_ = i;
    ++generation_;  // chunks in flight belong to the old position: dropped when they finish
    chunks_.clear();
    work_cv_.notify_all();
  }

  void cancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_ && threads_.empty()) return;
      cancelled_ = true;
      work_cv_.notify_all();
      ready_cv_.notify_all();
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  int64_t limit(int64_t i) const { return end_ >= 0 ? std::min(i, end_) : i; }

  // On the calling thread: the rest of the last get_range chunk, else a new chunk, else get().
  bool next_here(Element& out) {
    if (end_ >= 0 && next_ >= end_) return false;
    if (ready_pos_ == ready_.size()) {
      // Timed once the dataset has shown it computes ranges (a clock read per element costs too).
      const auto t0 = ranged_ ? Clock::now() : Clock::time_point();
      ds_->get_range(next_, limit(next_ + chunk_), epoch_, ready_);
      ready_pos_ = 0;
      if (!ready_.empty() && ranged_)
        chunk_ = adapt_chunk(chunk_, static_cast<int64_t>(ready_.size()), Clock::now() - t0,
                             chunk_bytes(ready_, [](const Element& e) -> const Element& { return e; }));
      ranged_ = ranged_ || !ready_.empty();
    }
    if (ready_pos_ < ready_.size()) {
      out = std::move(ready_[ready_pos_++]);
      ++next_;
      return true;
    }
    const int64_t i = next_++;  // a failed element is skipped: the next call moves on
    ds_->get(i, epoch_, out);
    return true;
  }

  void start() {
    for (int k = 0; k < workers_; ++k) threads_.emplace_back([this] { work(); });
  }

  // Whether a worker may claim a chunk from index issued_ now.
  bool can_issue() const {
    return in_flight_ < workers_ && issued_ - base_ < window_ * chunk_ && (end_ < 0 || issued_ < end_);
  }

  // Elements [begin, end) into out, in order: get_range where it computes them, get for the rest
  // (an error is kept in its slot).
  void compute(int64_t begin, int64_t end, std::vector<Slot>& out) {
    std::vector<Element> batch;
    for (int64_t i = begin; i < end;) {
      ds_->get_range(i, end, epoch_, batch);
      for (Element& e : batch) out.push_back(Slot{std::move(e), nullptr});
      i += static_cast<int64_t>(batch.size());
      if (i == end) break;
      Slot s;
      try {
        ds_->get(i, epoch_, s.element);
      } catch (...) {
        s.error = std::current_exception();
      }
      out.push_back(std::move(s));
      ++i;
    }
  }

  // Waits for the chunk that starts at base_ and takes all of it: the consumer pays for the lock
  // and the hand-off once per chunk, not once per element.
  bool take_chunk() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cancelled_ || (end_ >= 0 && base_ >= end_)) return false;
    if (threads_.empty()) start();
    auto it = chunks_.end();
    ready_cv_.wait(lock, [&] {
      it = chunks_.find(base_);
      return cancelled_ || (it != chunks_.end() && it->second.done);
    });
    if (cancelled_) return false;
    taken_ = std::move(it->second.slots);
    taken_pos_ = 0;
    base_ = it->second.end;
    chunks_.erase(it);
    if (can_issue()) work_cv_.notify_one();  // room in the window
    return true;
  }

  void work() {
    std::vector<Slot> results;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return cancelled_ || can_issue(); });
      if (cancelled_) return;
      const int64_t begin = issued_;
      const int64_t end = limit(begin + std::min(chunk_, window_ * chunk_ - (issued_ - base_)));
      issued_ = end;
      const uint64_t generation = generation_;
      chunks_[begin].end = end;  // reserved: take_chunk() waits for it to be done
      ++in_flight_;
      lock.unlock();
      results.clear();
      const auto t0 = Clock::now();
      compute(begin, end, results);
      const auto took = Clock::now() - t0;
      const int64_t bytes = chunk_bytes(results, [](const Slot& x) -> const Element& { return x.element; });
      lock.lock();
      --in_flight_;
      if (generation == generation_) {
        Chunk& c = chunks_[begin];
        c.slots = std::move(results);
        c.done = true;
        chunk_ = adapt_chunk(chunk_, end - begin, took, bytes);
        if (begin == base_) ready_cv_.notify_one();  // the chunk the consumer waits for
      }
      if (can_issue()) work_cv_.notify_one();  // this worker's slot, or a bigger chunk_, freed room
    }
  }

  const DatasetPtr ds_;
  const uint64_t epoch_;
  const int64_t end_;  // cardinality, or kInfinite
  const int workers_;
  const int64_t window_;  // chunks computed or ready past next_, at most
  const bool parallel_;
  // The consumer's side: next(), save() and restore() are called by one thread at a time.
  int64_t next_ = 0;           // the next index to deliver: the whole state
  std::vector<Slot> taken_;    // the chunk being delivered: indexes next_ - taken_pos_ ... base_ - 1
  size_t taken_pos_ = 0;
  // Shared with the workers, under mu_.
  std::mutex mu_;
  std::condition_variable work_cv_;   // workers wait for room to claim a chunk
  std::condition_variable ready_cv_;  // the consumer waits for the chunk at base_
  int64_t base_ = 0;    // the first index not yet taken by the consumer: the window starts here
  int64_t issued_ = 0;  // the next index a worker claims
  int64_t chunk_ = 1;   // indexes per claim (adapt_chunk)
  int in_flight_ = 0;
  uint64_t generation_ = 0;
  bool cancelled_ = false;
  std::map<int64_t, Chunk> chunks_;  // claimed chunks by first index, done or in flight
  std::vector<std::thread> threads_;
  std::vector<Element> ready_;  // on the calling thread: elements next_ - ready_pos_ ... of the last chunk
  size_t ready_pos_ = 0;
  bool ranged_ = false;  // get_range has computed elements
};

}  // namespace

std::unique_ptr<Iterator> make_index_iterator(DatasetPtr ds, uint64_t epoch) {
  return std::make_unique<IndexIterator>(std::move(ds), epoch);
}

}  // namespace cairn::data
