// Shared machinery of the parallel transformations: failures kept for later, random stream keys,
// and the worker iterator over streams (parallel_internal.h).
#include <algorithm>
#include <regex>
#include <thread>

#include "runtime/core/philox.h"
#include "runtime/data/parallel.h"
#include "runtime/data/parallel_internal.h"

namespace cairn::data {

int autotune_parallelism(const Context& ctx) {
  if (ctx.inter_op_threads() > 0) return ctx.inter_op_threads();
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace internal {

void Failure::rethrow() const { throw Error(code, message); }

void Failure::save(StateWriter& w) const {
  w.put_i64(static_cast<int64_t>(code));
  w.put_bytes(message);
}

Failure Failure::load(StateReader& r) {
  Failure f;
  const int64_t code = r.get_i64();
  if (code <= 0 || code > static_cast<int64_t>(Code::DataLoss)) r.corrupt("a bad error code");
  f.code = static_cast<Code>(code);
  f.message = r.get_bytes();
  return f;
}

Failure current_failure() {
  try {
    throw;
  } catch (const Error& e) {
    return {e.code(), e.message()};
  } catch (const std::bad_alloc&) {
    return {Code::ResourceExhausted, "out of memory"};
  } catch (const std::exception& e) {
    return {Code::Internal, e.what()};
  } catch (...) {
    return {Code::Internal, "an unknown exception"};
  }
}

std::string stable_identity(std::string_view pipeline) {
  // Parallelism and prefetching never change an element's value: leave them out of the key.
  static const std::regex knobs(R"(, parallel=[^,)]*|\.prefetch\([^)]*\)|\.prefetch_to_device\('[^']*', [^)]*\))");
  return std::regex_replace(std::string(pipeline), knobs, "");
}

uint64_t stage_key(const Context& ctx, int64_t seed, std::string_view stage) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the stage's text: the same in every process
  for (unsigned char c : stable_identity(stage)) h = (h ^ c) * 0x100000001b3ull;
  const uint64_t base = seed != 0 ? static_cast<uint64_t>(seed) : ctx.seed();
  return philox::mix64(philox::mix64(base) ^ h);
}

uint64_t element_key(uint64_t stage, uint64_t epoch, int64_t index) {
  return philox::mix64(philox::mix64(stage ^ (epoch * 0x9e3779b97f4a7c15ull)) + static_cast<uint64_t>(index));
}

Element to_device(const Element& e, Device& device) {
  Element out;
  out.reserve(e.size());
  for (const Tensor& t : e) out.push_back(tensor_on_device(t, device));
  return out;
}

// ---- StreamWorkIterator ----

StreamWorkIterator::StreamWorkIterator(std::unique_ptr<Iterator> input, Work work, int workers, int64_t capacity,
                                       bool deterministic, std::string what)
    : input_(std::move(input)),
      work_(std::move(work)),
      workers_(std::max(0, workers)),
      capacity_(static_cast<size_t>(std::max<int64_t>(1, capacity))),
      deterministic_(deterministic),
      what_(std::move(what)) {}

StreamWorkIterator::~StreamWorkIterator() { cancel(); }

void StreamWorkIterator::run(Slot& s) {
  try {
    s.result = s.input;
    if (work_) work_(s.result, s.index);
  } catch (...) {
    s.result.clear();
    s.failure = current_failure();
  }
}

bool StreamWorkIterator::can_pull() const {
  return !pulling_ && paused_ == 0 && !input_done_ && pending_.size() < capacity_;
}

void StreamWorkIterator::pull(std::unique_lock<std::mutex>& lock) {
  pulling_ = true;
  lock.unlock();
  auto s = std::make_shared<Slot>();
  bool got = false;
  try {
    got = input_->next(s->input);
  } catch (...) {
    got = true;  // the input failed this element (and skips it): deliver its error in its place
    s->failure = current_failure();
    s->stage = Stage::Done;
  }
  lock.lock();
  pulling_ = false;
  if (!got) {
    input_done_ = true;
  } else {
    s->index = pulled_++;
    pending_.push_back(std::move(s));
  }
  cv_.notify_all();
}

void StreamWorkIterator::worker(bool puller) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    SlotPtr todo;
    cv_.wait(lock, [&] {
      if (cancelled_) return true;
      if (puller) return can_pull();
      for (const SlotPtr& s : pending_)
        if (s->stage == Stage::Waiting) {
          todo = s;
          return true;
        }
      return false;
    });
    if (cancelled_) return;
    if (!todo) {
      pull(lock);
      continue;
    }
    todo->stage = Stage::Running;
    lock.unlock();
    Slot work;  // computed outside the lock: a restore may drop `todo` meanwhile
    work.index = todo->index;
    work.input = todo->input;
    run(work);
    lock.lock();
    todo->result = std::move(work.result);
    todo->failure = std::move(work.failure);
    todo->stage = Stage::Done;
    cv_.notify_all();
  }
}

bool StreamWorkIterator::deliver(Slot& s, Element& out) {
  if (s.failure) s.failure->rethrow();
  out = std::move(s.result);
  return true;
}

bool StreamWorkIterator::next(Element& out) {
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return false;
  if (workers_ == 0) {  // on this thread: one element at a time
    if (pending_.empty()) {
      if (input_done_) return false;
      pull(lock);
      if (pending_.empty()) return false;
    }
    SlotPtr s = pending_.front();
    pending_.pop_front();
    lock.unlock();
    if (s->stage == Stage::Waiting) run(*s);
    return deliver(*s, out);
  }
  if (threads_.empty())
    for (int k = 0; k <= workers_; ++k) threads_.emplace_back([this, k] { worker(k == 0); });
  SlotPtr s;
  cv_.wait(lock, [&] {
    if (cancelled_) return true;
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if ((*it)->stage == Stage::Done) {
        s = *it;
        pending_.erase(it);
        return true;
      }
      if (deterministic_) break;
    }
    return pending_.empty() && input_done_;
  });
  if (!s) return false;  // the end, or cancelled
  cv_.notify_all();      // room for another pull
  lock.unlock();
  return deliver(*s, out);
}

void StreamWorkIterator::paused(const std::function<void()>& f) {
  std::unique_lock<std::mutex> lock(mu_);
  ++paused_;
  struct Resume {
    StreamWorkIterator* it;
    ~Resume() {
      --it->paused_;
      it->cv_.notify_all();
    }
  } resume{this};
  cv_.wait(lock, [&] { return !pulling_ || cancelled_; });
  if (cancelled_) raise(Code::FailedPrecondition, "{}: the iterator is closed", what_);
  f();
}

void StreamWorkIterator::save(StateWriter& w) {
  paused([&] {
    input_->save(w);
    w.put_i64(pulled_);
    w.put_bool(input_done_);
    w.put_u64(pending_.size());
    for (const SlotPtr& s : pending_) {
      w.put_i64(s->index);
      const bool input_failed = s->failure && s->input.empty();
      w.put_bool(input_failed);
      if (input_failed) s->failure->save(w);
      else w.put_element(s->input);
    }
  });
}

void StreamWorkIterator::restore(StateReader& r) {
  paused([&] {
    input_->restore(r);
    const int64_t pulled = r.get_i64();
    const bool done = r.get_bool();
    const uint64_t n = r.get_u64();
    if (pulled < 0 || n > static_cast<uint64_t>(pulled) || n > (uint64_t{1} << 24)) r.corrupt("bad buffer counts");
    std::deque<SlotPtr> pending;
    for (uint64_t k = 0; k < n; ++k) {
      auto s = std::make_shared<Slot>();
      s->index = r.get_i64();
      if (r.get_bool()) {
        s->failure = Failure::load(r);
        s->stage = Stage::Done;
      } else {
        s->input = r.get_element();
      }
      pending.push_back(std::move(s));
    }
    pending_ = std::move(pending);  // work in flight on the old slots is dropped
    pulled_ = pulled;
    input_done_ = done;
  });
}

void StreamWorkIterator::cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  if (input_) input_->cancel();
}

}  // namespace internal
}  // namespace cairn::data
