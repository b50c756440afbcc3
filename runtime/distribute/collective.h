// Collectives across the members of a group (tf.distribute's cross-device ops). A Collective is the
// interface: an in-process LocalCollective serves the replicas of a MirroredStrategy, and a
// process-group backend (MPI, issue 17) implements the same calls across processes.
//
// The op "CollectiveAllReduce" (attrs group_key, group_size, reduction) runs a group's all_reduce
// from eager code and from traced functions: it is stateful, so graph passes never prune, merge or
// fuse it. Its kernels (CPU, and Vulkan through host staging) find the group by key in a
// process-wide registry and the calling member by the device the op runs on.
//
// Matching: a member's k-th collective call (all_reduce, broadcast, all_gather or barrier) pairs
// with every other member's k-th call (each member counts its own calls), so members must issue
// collectives in the same order, as in TensorFlow; members that disagree on the kind, dtype, count,
// reduction or root get InvalidArgument.
// Results are deterministic: elements are reduced in member order 0..N-1 whatever the arrival
// order, so every member gets the same bits, run after run.
//
// Split all-reduces (gradient buckets, docs/mpi.md): "CollectiveAllReduceStart" takes a member's
// input and returns a ticket at once; "CollectiveAllReduceDone" waits for the ticket's result.
// A backend with a worker thread (MpiCollective) reduces while the caller computes on; the others
// reduce inside start. Starts count as calls in the order they are made.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/refcount.h"
#include "runtime/tensor/device.h"

namespace cairn::distribute {

enum class Reduction { Sum = 0, Mean = 1, Min = 2, Max = 3 };
const char* reduction_name(Reduction r);  // "sum", "mean", "min", "max"
// Parses a reduction name; InvalidArgument naming `fn` and the valid names otherwise.
Reduction parse_reduction(std::string_view name, std::string_view fn);
// Whether all_reduce supports `dtype` (float16, bfloat16, float32, float64, int32, int64).
bool reducible_dtype(DType dtype);
// Whether broadcast and all_gather support `dtype` (every dtype of fixed size: not string).
bool copyable_dtype(DType dtype);

// The kinds of collective call, for matching members' calls and for messages.
enum class CollectiveKind { AllReduce = 0, Broadcast = 1, AllGather = 2, Barrier = 3 };
const char* collective_kind_name(CollectiveKind kind);  // "all-reduce", "broadcast", ...
// A call for messages: "all-reduce of 4 elements of float32 (sum)", "broadcast of ... from member 0".
std::string collective_call_text(CollectiveKind kind, DType dtype, int64_t count, Reduction reduction, int root);

class Collective : public RefCounted {
 public:
  // How many members the group has.
  virtual int size() const = 0;
  // The member (rank) whose collectives run on `device`, or -1 when none does.
  virtual int rank_of(const Device& device) const = 0;
  // Member `rank`'s index among this process's members (the ReplicaScope index of its replica):
  // the rank itself when every member is in this process.
  virtual int local_index(int rank) const { return rank; }
  // Member `rank`'s all-reduce: `count` elements of `dtype` from every member's `input` (host
  // memory), reduced in rank order, written to `output` (host memory, `count` elements). Blocks
  // until every member has contributed. Throws DeadlineExceeded (naming the collective and the
  // members that did not arrive) after the group's timeout; Aborted / Cancelled (naming the member
  // that failed) after abort(); InvalidArgument when members disagree on dtype, count or reduction.
  virtual void all_reduce(int rank, DType dtype, int64_t count, const void* input, void* output,
                          Reduction reduction) = 0;
  // Member `rank`'s broadcast: member `root`'s `count` elements of `dtype` in `data` (host memory)
  // are written over every other member's `data`. Errors as all_reduce's.
  virtual void broadcast(int rank, int root, DType dtype, int64_t count, void* data) = 0;
  // Member `rank`'s all-gather: every member's `count` elements of `dtype` from `input`, written
  // to `output` (`count` * size() elements, host memory) in rank order. Errors as all_reduce's.
  virtual void all_gather(int rank, DType dtype, int64_t count, const void* input, void* output) = 0;
  // Returns once every member has reached its matching barrier. Errors as all_reduce's.
  virtual void barrier(int rank) = 0;
  // Ends every wait of the group, and every call until reset(), with `code` and `why`.
  virtual void abort(Code code, const std::string& why) = 0;
  // Member `rank` issues no more collectives until reset() (its step ended): members waiting for
  // it fail at once with FailedPrecondition instead of waiting out the timeout.
  virtual void leave(int rank) = 0;
  // Clears an abort, the departures and the call counters, and drops unfinished tickets. Only
  // while no member is in a call.
  virtual void reset() = 0;

  // Member `rank`'s all-reduce of `count` elements of `dtype` at `input` (host memory, copied
  // before it returns), as all_reduce, started: returns a ticket for finish_all_reduce, which
  // throws the all-reduce's errors.
  uint64_t start_all_reduce(int rank, DType dtype, int64_t count, const void* input, Reduction reduction);
  // Waits for a started all-reduce and writes its `count` elements to `output` (host memory);
  // throws its error (as all_reduce's). Each ticket is finished once; InvalidArgument for an
  // unknown ticket or another count.
  void finish_all_reduce(uint64_t ticket, int64_t count, void* output);

 protected:
  // A started all-reduce: its arguments, its own copy of the input, and, once done, the output or
  // the error.
  struct PendingAllReduce {
    int rank = 0;
    DType dtype = DType::Invalid;
    int64_t count = 0;
    Reduction reduction = Reduction::Sum;
    std::vector<unsigned char> input, output;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Code code = Code::Ok;
    std::string why;
    // Runs `reduce` (the all-reduce, once), keeps its error, and wakes finish_all_reduce.
    void settle(const std::function<void()>& reduce);
  };
  // Reduces `p` now (the default) or queues it for a worker (which calls p->settle).
  virtual void launch(const std::shared_ptr<PendingAllReduce>& p);
  // Waits until `p` is done (finish_all_reduce); a backend may time the wait.
  virtual void await(PendingAllReduce& p);
  // Forgets every unfinished ticket (reset()).
  void drop_pending();

 private:
  std::mutex pending_mu_;
  std::map<uint64_t, std::shared_ptr<PendingAllReduce>> pending_;  // by ticket
  uint64_t next_ticket_ = 1;
};

// The in-process rendezvous for members that are threads of one process, one per device.
class LocalCollective final : public Collective {
 public:
  // `devices[r]` is member r's device (distinct). `name` names the collective in errors.
  LocalCollective(std::vector<Device*> devices, std::chrono::milliseconds timeout,
                  std::string name = "CollectiveAllReduce");
  int size() const override { return static_cast<int>(devices_.size()); }
  int rank_of(const Device& device) const override;
  void all_reduce(int rank, DType dtype, int64_t count, const void* input, void* output,
                  Reduction reduction) override;
  void broadcast(int rank, int root, DType dtype, int64_t count, void* data) override;
  void all_gather(int rank, DType dtype, int64_t count, const void* input, void* output) override;
  void barrier(int rank) override;
  void abort(Code code, const std::string& why) override;
  void leave(int rank) override;
  void reset() override;

 private:
  // What a call must agree on with the other members' matching calls.
  struct Signature {
    CollectiveKind kind = CollectiveKind::Barrier;
    DType dtype = DType::Invalid;
    int64_t count = 0;
    Reduction reduction = Reduction::Sum;
    int root = 0;
    bool operator==(const Signature& o) const {
      return kind == o.kind && dtype == o.dtype && count == o.count && reduction == o.reduction && root == o.root;
    }
  };
  // A member's share of a call's work, given every member's input and output (by rank).
  using Work = std::function<void(const std::vector<const void*>& inputs, const std::vector<void*>& outputs)>;
  struct Instance {
    Signature sig;
    int first = -1;                    // the member that arrived first (its call defines the shape)
    std::vector<const void*> inputs;   // by rank
    std::vector<void*> outputs;        // by rank
    std::vector<char> present;         // by rank: arrived
    int arrived = 0, reduced = 0, departed = 0;
  };
  // Checks a call's arguments; InvalidArgument naming the collective otherwise.
  void check_call(int rank, const Signature& sig) const;
  // Member `rank`'s part of a call: waits until every member has arrived, runs `work` (unlocked),
  // and waits until every member's work is done (the others read its input and write its output).
  void rendezvous(int rank, const Signature& sig, const void* input, void* output, const Work& work);
  // Throws the group's abort status when it is set (mu_ held).
  void check_aborted(CollectiveKind kind, uint64_t seq) const;
  // Sets the abort status (mu_ held) and wakes every waiter.
  void abort_locked(Code code, const std::string& why);
  std::string describe(CollectiveKind kind, uint64_t seq) const;

  std::vector<Device*> devices_;
  std::chrono::milliseconds timeout_;
  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Instance> instances_;  // by call number
  std::vector<uint64_t> calls_;             // by rank: calls made since reset
  std::vector<bool> left_;
  bool aborted_ = false;
  Code abort_code_ = Code::Ok;
  std::string abort_why_;
};

// The process-wide registry the CollectiveAllReduce kernels look groups up in.
// Registers `collective` under a new key (never reused in the process).
int64_t register_collective(Ref<Collective> collective);
void unregister_collective(int64_t group_key);
// The group registered under `group_key`, or null.
Ref<Collective> find_collective(int64_t group_key);

}  // namespace cairn::distribute
