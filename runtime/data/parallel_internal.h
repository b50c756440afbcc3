// Pieces shared by map, filter, interleave, prefetch and cache (runtime/data/parallel.h).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/data/dataset.h"

namespace cairn::data::internal {

// A failed element kept for later: thrown at its turn, saved in a state as (code, message).
struct Failure {
  Code code = Code::Internal;
  std::string message;
  [[noreturn]] void rethrow() const;
  void save(StateWriter& w) const;
  static Failure load(StateReader& r);
};
// The exception being handled (call inside a catch block) as a Failure.
Failure current_failure();

// The random stream key of one stage: `seed`, or the context's seed for 0, mixed with the stage's
// identity (its pipeline text without parallelism or prefetches, see stable_identity), so two maps
// with seed 0 draw different numbers and no parallelism setting anywhere changes them.
uint64_t stage_key(const Context& ctx, int64_t seed, std::string_view stage);
// `pipeline` (describe() text) without its ", parallel=N" and prefetch stages.
std::string stable_identity(std::string_view pipeline);
// The key of element `index` of iteration `epoch` of that stage.
uint64_t element_key(uint64_t stage, uint64_t epoch, int64_t index);

// An iterator over a stream that pulls input elements in order and runs `work` on each (in place),
// on `workers` threads (0: on the caller's thread, one element at a time). It holds at most
// `capacity` elements pulled and not yet delivered; it delivers them in input order when
// `deterministic`, else as they finish. State: the input's state, the count of inputs pulled, and
// the inputs pulled but not yet delivered (their results are recomputed after a restore).
class StreamWorkIterator final : public Iterator {
 public:
  using Work = std::function<void(Element& x, int64_t index)>;  // index: of x at this stage's input
  StreamWorkIterator(std::unique_ptr<Iterator> input, Work work, int workers, int64_t capacity, bool deterministic,
                     std::string what);
  ~StreamWorkIterator() override;

  bool next(Element& out) override;
  void save(StateWriter& w) override;
  void restore(StateReader& r) override;
  void cancel() override;

 private:
  enum class Stage { Waiting, Running, Done };
  struct Slot {
    int64_t index = 0;
    Element input;  // kept until delivered: the state saves it
    Element result;
    std::optional<Failure> failure;
    Stage stage = Stage::Waiting;
  };
  using SlotPtr = std::shared_ptr<Slot>;

  void run(Slot& s);  // work on s.input into s.result (or s.failure)
  void worker();
  bool can_pull() const;
  // Pulls the next input into a new slot (input_done_ at the end); mu_ is held on entry and exit.
  void pull(std::unique_lock<std::mutex>& lock);
  bool deliver(Slot& s, Element& out);  // takes s's result or throws its failure
  // Runs f under mu_ with no pull in flight and none starting (save, restore).
  void paused(const std::function<void()>& f);

  std::unique_ptr<Iterator> input_;
  const Work work_;
  const int workers_;
  const size_t capacity_;
  const bool deterministic_;
  const std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SlotPtr> pending_;  // pulled, not delivered, in input order
  int64_t pulled_ = 0;
  bool input_done_ = false;
  bool pulling_ = false;
  int paused_ = 0;
  bool cancelled_ = false;
  std::vector<std::thread> threads_;
};

// Copies `e`'s components to `device` (shared when already there).
Element to_device(const Element& e, Device& device);

}  // namespace cairn::data::internal
