// MpiCollective: the Collective interface across processes over MPI (issue 17), one member per
// process: rank_of(device) is this process's rank for each of its local devices. MPI comes from
// the plugin (mpi_loader.h, docs/mpi.md); this code never touches mpi.h.
//
// Every call first all-reduces a small signature (kind, dtype, count, reduction, root) so that
// ranks that disagree get InvalidArgument instead of MPI's hang or corruption, then runs the
// collective as a nonblocking MPI call polled against the timeout. float16 and bfloat16 reduce in
// float32 (converted here, rounded once at the end); mean is the sum divided by the size (integer
// division for integers, as LocalCollective). Results are the same on every rank.
//
// After a timeout the communicator is unusable: the timed-out call stays pending inside MPI (MPI
// cannot cancel a collective) and may still write its buffers if the missing rank arrives late,
// so every later call fails with FailedPrecondition, and the job should end.
//
// Calls run one at a time in the order they were submitted (MPI_THREAD_SERIALIZED; every rank must
// issue collectives in the same order), on one worker thread per collective: start_all_reduce
// submits and returns, so a bucket of gradients reduces while the caller's backward pass goes on;
// all_reduce, broadcast, all_gather and barrier submit their call and wait for it, or, when
// nothing is queued or running, make it on the caller's thread (no handoff).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/distribute/collective.h"
#include "runtime/distribute/mpi/plugin.h"

namespace cairn::distribute {

struct MpiOptions {
  // How long a call waits for the other ranks before DeadlineExceeded.
  std::chrono::milliseconds timeout{120000};
  // Names the collective in errors.
  std::string name = "MpiCollective";
};

// What this process's calls cost so far: for the share of a training step spent in communication
// (bench/mpi_step_bench). `seconds` is wall time inside the calls, waiting for the other ranks
// included.
struct MpiStats {
  uint64_t calls = 0;
  double seconds = 0;
  // Wall time the callers spent waiting for results (synchronous calls from submission to the end,
  // finish_all_reduce's waits): what communication costs a step once it overlaps the computation.
  double blocked_seconds = 0;
};

class MpiCollective final : public Collective {
 public:
  // Cairn's own communicator: initializes MPI unless the process already has (Cairn then ends MPI
  // when the last MpiCollective that it initialized MPI for is destroyed), over a duplicate of
  // MPI_COMM_WORLD. `local_devices`: the devices this process's rank runs on.
  static Ref<MpiCollective> init_world(std::vector<Device*> local_devices, const MpiOptions& options = {});
  // A host's communicator (its MPI_Comm as a pointer-sized value), duplicated; MPI must be
  // initialized by the host, which also finalizes it.
  static Ref<MpiCollective> adopt(uintptr_t host_comm, std::vector<Device*> local_devices,
                                  const MpiOptions& options = {});
  ~MpiCollective() override;

  int rank() const { return rank_; }
  int size() const override { return size_; }
  int rank_of(const Device& device) const override;
  // This process is one member: its only index is 0.
  int local_index(int) const override { return 0; }
  void all_reduce(int rank, DType dtype, int64_t count, const void* input, void* output,
                  Reduction reduction) override;
  void broadcast(int rank, int root, DType dtype, int64_t count, void* data) override;
  void all_gather(int rank, DType dtype, int64_t count, const void* input, void* output) override;
  void barrier(int rank) override;
  // Makes later calls in this process fail (other processes are not told).
  void abort(Code code, const std::string& why) override;
  // Nothing to do across processes: a rank that skips a collective is found by the timeout.
  void leave(int) override {}
  // Clears abort(); a communicator broken by a timeout or an MPI error stays broken.
  void reset() override;
  MpiStats stats() const;

  // Internal: use init_world() or adopt().
  struct Token;
  MpiCollective(const cairn_mpi_plugin& plugin, cairn_mpi_comm* comm, std::shared_ptr<Token> mpi,
                std::vector<Device*> local_devices, const MpiOptions& options);

 protected:
  // Queues the reduction on the worker thread.
  void launch(const std::shared_ptr<PendingAllReduce>& p) override;
  // Waits, counting the wait as blocked time.
  void await(PendingAllReduce& p) override;

 private:
  struct Signature;
  struct Timed;
  // Runs `job` on the worker thread after every call submitted before it.
  void submit(std::function<void()> job);
  // Runs `body` after every submitted call, on the caller's thread when none is queued or running
  // (claim_idle), else on the worker thread, and waits for it; rethrows its error.
  void call(const std::function<void()>& body);
  struct Inline;
  // Takes the MPI calls for the calling thread when the worker is idle with nothing queued.
  bool claim_idle();
  void release_idle();  // ends claim_idle
  void work();  // the worker thread's loop
  void add_blocked(std::chrono::steady_clock::time_point since);
  // The calls themselves, on the worker thread.
  void all_reduce_now(int rank, DType dtype, int64_t count, const void* input, void* output, Reduction reduction);
  void broadcast_now(int rank, int root, DType dtype, int64_t count, void* data);
  void all_gather_now(int rank, DType dtype, int64_t count, const void* input, void* output);
  void barrier_now(int rank);
  // Checks that the call is this process's and that it is not aborted or broken; returns the
  // call's number and deadline.
  uint64_t begin(int rank, CollectiveKind kind);
  // Fails every rank alike when the ranks' signatures differ.
  void agree(const Signature& sig, uint64_t seq, std::chrono::steady_clock::time_point deadline);
  // Polls `req` until done; DeadlineExceeded (and a broken communicator) at the deadline.
  void wait(cairn_mpi_request* req, CollectiveKind kind, uint64_t seq,
            std::chrono::steady_clock::time_point deadline);
  // InvalidArgument unless 0 <= count <= INT_MAX (MPI's counts are ints).
  void check_count(CollectiveKind kind, uint64_t seq, int64_t count, const char* unit) const;
  // Throws an MPI failure (`err` from the plugin) and marks the communicator broken.
  [[noreturn]] void mpi_failed(CollectiveKind kind, uint64_t seq, const char* err);
  std::string describe(CollectiveKind kind, uint64_t seq) const;
  void reduce_in_float32(DType dtype, int64_t count, const void* input, void* output, Reduction reduction,
                         uint64_t seq, std::chrono::steady_clock::time_point deadline);

  const cairn_mpi_plugin& plugin_;
  cairn_mpi_comm* comm_;
  std::shared_ptr<Token> mpi_;  // ends MPI when the last user of Cairn's MPI_Init goes
  std::vector<Device*> local_devices_;
  MpiOptions options_;
  int rank_ = 0, size_ = 1;
  mutable std::mutex mu_;  // the state below; held by the worker during a call
  uint64_t calls_ = 0;  // calls made (numbers the calls in messages)
  bool aborted_ = false;
  Code abort_code_ = Code::Ok;
  std::string abort_why_;
  std::string broken_;  // why the communicator is unusable, or empty
  std::vector<float> staging_;  // 16-bit floats widened to float32
  mutable std::mutex stats_mu_;
  MpiStats stats_;
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  bool busy_ = false;  // a call runs (on the worker or inline on a caller's thread)
  std::thread worker_;  // last: started once everything above is
};

}  // namespace cairn::distribute
