// The iterator of indexable datasets: its state is the next index.
//
// With parallelism() 1 and prefetch_depth() 0 it computes each element on the calling thread.
// Otherwise a small pool of worker threads owned by the iterator computes get(i, epoch) for the
// indexes ahead of the consumer: at most parallelism() at once, and at most
// parallelism() + prefetch_depth() indexes past the next one to deliver, delivered in index order.
// Work ahead is never part of the state: a restore (or a fresh iterator from a saved state)
// recomputes it, and get() is a pure function of (index, epoch), so the elements are the same.
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/core/error.h"
#include "runtime/data/dataset.h"

namespace cairn::data {
namespace {

class IndexIterator final : public Iterator {
 public:
  IndexIterator(DatasetPtr ds, uint64_t epoch)
      : ds_(std::move(ds)),
        epoch_(epoch),
        end_(ds_->cardinality()),
        workers_(std::max(1, ds_->parallelism())),
        window_(workers_ + std::max<int64_t>(0, ds_->prefetch_depth())),
        parallel_(ds_->parallelism() > 1 || ds_->prefetch_depth() > 0) {}

  ~IndexIterator() override { cancel(); }

  bool next(Element& out) override {
    if (!parallel_) {
      if (end_ >= 0 && next_ >= end_) return false;
      const int64_t i = next_++;  // a failed element is skipped: the next call moves on
      ds_->get(i, epoch_, out);
      return true;
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (cancelled_ || (end_ >= 0 && next_ >= end_)) return false;
    if (threads_.empty()) start();
    auto it = slots_.end();
    cv_.wait(lock, [&] {
      it = slots_.find(next_);
      return cancelled_ || (it != slots_.end() && it->second.done);
    });
    if (cancelled_) return false;
    Slot slot = std::move(it->second);
    slots_.erase(it);
    ++next_;
    cv_.notify_all();  // room in the window
    lock.unlock();
    if (slot.error) std::rethrow_exception(slot.error);
    out = std::move(slot.element);
    return true;
  }

  void save(StateWriter& w) override {
    std::lock_guard<std::mutex> lock(mu_);
    w.put_i64(next_);
  }

  void restore(StateReader& r) override {
    const int64_t i = r.get_i64();
    if (i < 0 || (end_ >= 0 && i > end_)) r.corrupt("an index outside the dataset");
    std::lock_guard<std::mutex> lock(mu_);
    next_ = i;
    issued_ = i;
    ++generation_;  // elements in flight belong to the old position: dropped when they finish
    slots_.clear();
    cv_.notify_all();
  }

  void cancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_ && threads_.empty()) return;
      cancelled_ = true;
      cv_.notify_all();
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  struct Slot {
    bool done = false;
    Element element;
    std::exception_ptr error;
  };

  void start() {
    for (int k = 0; k < workers_; ++k) threads_.emplace_back([this] { work(); });
  }

  // Whether a worker may claim index issued_ now.
  bool can_issue() const {
    return in_flight_ < workers_ && issued_ - next_ < window_ && (end_ < 0 || issued_ < end_);
  }

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return cancelled_ || can_issue(); });
      if (cancelled_) return;
      const int64_t i = issued_++;
      const uint64_t generation = generation_;
      slots_[i];  // reserved: next() waits for it to be done
      ++in_flight_;
      lock.unlock();
      Slot result;
      try {
        ds_->get(i, epoch_, result.element);
      } catch (...) {
        result.error = std::current_exception();
      }
      result.done = true;
      lock.lock();
      --in_flight_;
      if (generation == generation_) slots_[i] = std::move(result);
      cv_.notify_all();
    }
  }

  const DatasetPtr ds_;
  const uint64_t epoch_;
  const int64_t end_;  // cardinality, or kInfinite
  const int workers_;
  const int64_t window_;  // indexes computed or ready past next_, at most
  const bool parallel_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t next_ = 0;    // the next index to deliver: the whole state
  int64_t issued_ = 0;  // the next index a worker claims
  int in_flight_ = 0;
  uint64_t generation_ = 0;
  bool cancelled_ = false;
  std::map<int64_t, Slot> slots_;  // claimed indexes >= next_, done or in flight
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Iterator> make_index_iterator(DatasetPtr ds, uint64_t epoch) {
  return std::make_unique<IndexIterator>(std::move(ds), epoch);
}

}  // namespace cairn::data
