// tf.distribute.MirroredStrategy in one process: data-parallel replicas, one per device, each
// running the same step on its own part of the batch, with variables mirrored on every device and
// gradients all-reduced so that every replica keeps identical values.
//
//   Ref<MirroredStrategy> s = MirroredStrategy::create(ctx, {"cpu:0", "cpu:1"});
//   Ref<nn::Layer> model; Ref<optim::Optimizer> opt;
//   { auto scope = s->scope(); model = ...; build it; opt = ...; }   // variables mirrored
//   DistributedIterator it = s->distribute(dataset);                 // global batches, split
//   std::vector<data::Element> parts;
//   while (it.next(parts)) {
//     s->run([&](ReplicaContext& rc) {
//       const data::Element& e = parts[rc.replica_id()];
//       GradientTape tape(ctx);
//       Tensor loss = MirroredStrategy::compute_average_loss(ctx, per_example_loss, global_batch);
//       auto grads = rc.all_reduce(Reduction::Sum, tape.gradient(loss, vars));
//       opt->apply_gradients(grads, vars);                            // each replica's components
//       return loss;
//     });
//   }
//
// Threads: each replica runs on its own persistent thread (replicas block in collectives, so they
// never use the shared pools), inside a DeviceScope of its device, a ReplicaScope (mirrored
// variables act on that replica's component) and a MirrorScope (variables made there, such as an
// optimizer's slots, are mirrored). A strategy's run() is serialized: one step at a time.
//
// Multi-worker (tf.distribute.MultiWorkerMirroredStrategy, docs/mpi.md): multi_worker() makes a
// strategy that spans processes, one replica per process (a worker), with the cross-process
// Collective (an MpiCollective) carrying the all-reduces. num_replicas() is then the global count,
// a replica's replica_id() is its worker's rank, and everything that takes or returns one value per
// replica (devices(), run(), split_batch(), PerReplica) is about this process's replicas only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/distribute/collective.h"
#include "runtime/eager/context.h"
#include "runtime/tensor/tensor.h"
#include "runtime/track/mirroring.h"
#include "runtime/track/variable.h"

namespace cairn::distribute {

class MirroredStrategy;

// One value per replica (tf.distribute's PerReplica): values[r] lives on replica r's device.
struct PerReplica {
  std::vector<Tensor> values;
  size_t size() const { return values.size(); }
  const Tensor& operator[](size_t replica) const { return values[replica]; }
};

// What a replica's step function sees (tf.distribute.ReplicaContext).
class ReplicaContext {
 public:
  // `replica`: the index among this process's replicas (devices()).
  ReplicaContext(MirroredStrategy& strategy, int replica);
  // The replica's id in the whole group, 0 .. num_replicas() - 1 (tf's replica_id_in_sync_group):
  // the local index in one process, the worker's rank on a multi-worker strategy.
  int replica_id() const;
  // The index among this process's replicas: into devices(), split_batch()'s parts, run()'s results.
  int local_replica() const { return replica_; }
  int num_replicas() const;
  Device& device() const;
  MirroredStrategy& strategy() const { return strategy_; }
  Context& context() const;

  // The all-reduce of `value` across the replicas (every replica must call it, in the same order
  // as the others); the result is on this replica's device. A value on another device is copied
  // here first. Runs the CollectiveAllReduce op, so a traced function captures it.
  Tensor all_reduce(Reduction reduction, const Tensor& value);
  // The same for a list (gradients), in buckets (plan_buckets: the strategy's bucket_bytes): the
  // tensors of a bucket are flattened into one buffer, reduced, and split again; every bucket's
  // reduction is started before the first is waited for. Results are bit-identical whatever the
  // bucket size (each element is reduced alone, in replica order). Invalid (empty) tensors pass
  // through unchanged; every replica must have them at the same positions.
  std::vector<Tensor> all_reduce(Reduction reduction, const std::vector<Tensor>& values);

  // The replica context of the calling thread, or null outside a replica.
  static ReplicaContext* current();

 private:
  MirroredStrategy& strategy_;
  int replica_;
};

// Gradients fused into one collective (Horovod's tensor fusion, PyTorch DDP's buckets).
struct GradientBucket {
  DType dtype = DType::Invalid;
  std::vector<size_t> indices;  // into the list, in the order they are packed
  size_t bytes = 0;
};
// The buckets for `values`: walked from the last to the first (the order a backward pass produces
// a model's gradients: last layer first), each dtype packed into buckets of at most `bucket_bytes`
// (a larger tensor gets a bucket of its own; 0: one bucket per dtype). Buckets come in the order
// they fill up, then the partly filled ones in the order they were opened. Invalid tensors are
// skipped. The same list gives the same plan on every replica, so their collectives pair up.
std::vector<GradientBucket> plan_buckets(const std::vector<Tensor>& values, size_t bucket_bytes);

struct MirroredOptions {
  // How long a replica waits in a collective for the others before DeadlineExceeded.
  // (Not for multi_worker(): its collective's own timeout applies.)
  std::chrono::milliseconds collective_timeout{120000};
  // Multi-worker only: after every training step of keras fit / train_on_batch, compare a checksum
  // of every weight across the workers (one all-gather) and fail with Internal naming the first
  // variable that differs. Also on when the environment has CAIRN_CHECK_REPLICAS=1. A debug aid.
  bool check_replicas = false;
  // The most bytes of gradients fused into one all-reduce (ReplicaContext::all_reduce of a list,
  // keras fit): 0 puts all gradients of a dtype into one. Smaller buckets start reducing while
  // the backward pass of a compiled step still runs (docs/mpi.md); results are the same bits.
  size_t bucket_bytes = size_t{25} << 20;
};

// A DistributedDataset's iterator: each element of the dataset is a global batch; next() splits
// every component along dimension 0 into one part per replica (as even as possible, the first
// replicas taking one more row when it does not divide), each on its replica's device.
class DistributedIterator {
 public:
  DistributedIterator(Ref<MirroredStrategy> strategy, data::DatasetPtr dataset);
  ~DistributedIterator();
  DistributedIterator(DistributedIterator&&) noexcept;
  DistributedIterator& operator=(DistributedIterator&&) noexcept;
  // The next global batch, split: parts[r] is replica r's element. False at the end. A global
  // batch with fewer rows than replicas, or a scalar component, is InvalidArgument.
  bool next(std::vector<data::Element>& parts);

 private:
  Ref<MirroredStrategy> strategy_;
  data::DatasetPtr dataset_;
  std::unique_ptr<data::Iterator> it_;
  int64_t batches_ = 0;
};

class MirroredStrategy : public RefCounted {
 public:
  // `devices`: logical device names ("cpu:0", "vulkan:1"), distinct, all of one type; empty means
  // every logical device of the default device's type. Errors: NotFound for an unknown device,
  // InvalidArgument for a duplicate or for devices of mixed types.
  static Ref<MirroredStrategy> create(Context& ctx, const std::vector<std::string>& devices = {},
                                      const MirroredOptions& options = {});
  // A strategy spanning processes (tf.distribute.MultiWorkerMirroredStrategy): this process runs
  // one replica on `device` (empty: "cpu:0"), and `workers` (an MpiCollective: one member per
  // process, a member on `device`) carries every collective; its size() is the replica count and
  // this process's rank on `device` its replica's id. InvalidArgument when `workers` is null or has
  // no member on `device`.
  static Ref<MirroredStrategy> multi_worker(Context& ctx, Ref<Collective> workers, const std::string& device = {},
                                            const MirroredOptions& options = {});
  // `workers`: null for replicas in one process (a LocalCollective over `devices`), else as in multi_worker().
  MirroredStrategy(Context& ctx, const std::vector<std::string>& devices, const MirroredOptions& options,
                   Ref<Collective> workers = {});
  ~MirroredStrategy() override;

  Context& context() const { return *ctx_; }
  // The replicas of the whole group (every worker's, on a multi-worker strategy).
  int num_replicas() const { return num_replicas_; }
  // This process's replicas, and their devices (all of them in one process).
  int num_local_replicas() const { return static_cast<int>(devices_.size()); }
  const std::vector<Device*>& devices() const { return devices_; }
  // Whether the replicas span processes (multi_worker()).
  bool is_multi_worker() const { return multi_worker_; }
  // The id of this process's first replica (0 in one process, the rank on a multi-worker strategy).
  int first_replica() const { return first_replica_; }
  // Whether this process is the chief (rank 0, or the only process): the one that prints progress
  // and writes events and checkpoints in keras fit.
  bool is_chief() const { return first_replica_ == 0; }
  // Whether check_replicas is on (the option or CAIRN_CHECK_REPLICAS=1).
  bool checks_replicas() const { return check_replicas_; }
  size_t bucket_bytes() const { return bucket_bytes_; }
  std::vector<std::string> device_names() const;
  // The key of this strategy's collective group (the CollectiveAllReduce op's group_key).
  int64_t group_key() const { return group_key_; }
  Collective& collective() const { return *collective_; }

  // While a Scope lives on a thread, variables created on it are mirrored on every replica's
  // device (tf.distribute.Strategy.scope()): make the model and the optimizer inside one.
  class Scope {
   public:
    explicit Scope(MirroredStrategy& s);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    MirrorScope mirror_;
    MirroredStrategy* outer_;
  };
  Scope scope() { return Scope(*this); }
  // The strategy whose scope is innermost on this thread, or whose replica this thread runs; null
  // when none (keras::Model::compile picks the strategy up this way).
  static MirroredStrategy* current();

  // Runs `fn` once per replica, in parallel, and returns each replica's outputs
  // (results[replica][output]). When a replica throws, the others' collectives end (Aborted,
  // naming it) and run rethrows the first error with its code, prefixed "MirroredStrategy::run:
  // replica R (device):". FailedPrecondition when called from inside a replica.
  std::vector<std::vector<Tensor>> run_multi(const std::function<std::vector<Tensor>(ReplicaContext&)>& fn);
  // The same for a step with one output.
  PerReplica run(const std::function<Tensor(ReplicaContext&)>& fn);

  // The reduction of per-replica values, computed in replica order on replica 0's device
  // (tf.distribute.Strategy.reduce with axis=None). Multi-worker: `values` holds this process's
  // replica's value, combined with the other workers' (every worker must call it).
  Tensor reduce(Reduction reduction, const PerReplica& values);
  // Inside a replica: the all-reduce of `grads` (one collective per dtype); FailedPrecondition
  // outside a replica.
  std::vector<Tensor> all_reduce_gradients(const std::vector<Tensor>& grads, Reduction reduction = Reduction::Sum);
  // sum(per_example_loss) / global_batch_size (tf.nn.compute_average_loss): each replica's loss
  // scaled so that summing the replicas' gradients gives the gradient of the global batch's mean.
  static Tensor compute_average_loss(Context& ctx, const Tensor& per_example_loss, int64_t global_batch_size);

  // Global batches split over the replicas (strategy.experimental_distribute_dataset). On a
  // multi-worker strategy every worker iterates the same dataset of global batches and keeps the
  // rows of its own replicas (tf.data's auto-shard by DATA): every worker's dataset must yield the
  // same global batches (the same data, shuffled with the same seed).
  DistributedIterator distribute(const data::DatasetPtr& dataset);
  // One global batch split over the group's replicas: the parts of this process's replicas (what
  // DistributedIterator::next does per component). Replica r's part is rows [begin, begin + n) with
  // n = rows / replicas, one more for the first rows % replicas replicas.
  std::vector<Tensor> split_batch(const Tensor& global, std::string_view fn = "MirroredStrategy::split_batch") const;
  // The inverse: this process's replicas' parts of a global batch of `global_rows` rows joined with
  // the other workers' (one all-gather) in replica order, on the CPU. Outside replicas.
  Tensor gather_batch(const std::vector<Tensor>& local_parts, int64_t global_rows,
                      std::string_view fn = "MirroredStrategy::gather_batch");
  // The sum of `value` over the workers (itself in one process). Outside replicas.
  double sum_over_workers(double value, std::string_view fn = "MirroredStrategy::sum_over_workers");

  // Multi-worker: every variable gets rank 0's value (one broadcast each), so that workers that
  // initialized them from different random seeds start identical; nothing in one process. Every
  // worker must call it with the same variables in the same order. Outside replicas.
  void broadcast_variables(const std::vector<Ref<Variable>>& vars,
                           std::string_view fn = "MirroredStrategy::broadcast_variables");
  // Multi-worker: compares a checksum of each variable's value across the workers (one all-gather)
  // and throws Internal naming `fn`, the first variable that differs and the workers' checksums.
  // Nothing in one process. Outside replicas.
  void check_replicas_identical(const std::vector<Ref<Variable>>& vars,
                                std::string_view fn = "MirroredStrategy::check_replicas_identical");

 private:
  // A failed replica's error as code and message. Not an exception_ptr: its reference count lives in
  // uninstrumented libstdc++, so a replica thread dropping its copy after run() took one reads as a race.
  struct Failure {
    Code code = Code::Ok;
    std::string message;
  };
  static Failure run_replica_job(const std::function<std::vector<Tensor>(ReplicaContext&)>& job, ReplicaContext& rc,
                                 std::vector<Tensor>& out);
  void worker_loop(int replica);
  // FailedPrecondition naming `fn` when called from a replica's thread.
  static void require_outside_replicas(std::string_view fn);

  Ref<Context> ctx_;
  std::vector<Device*> devices_;
  std::vector<Ref<Device>> device_refs_;
  Ref<Collective> collective_;
  int64_t group_key_ = 0;
  bool multi_worker_ = false;
  int first_replica_ = 0;
  int num_replicas_ = 0;
  bool check_replicas_ = false;
  size_t bucket_bytes_ = 0;

  std::mutex run_mu_;  // one run at a time
  std::mutex mu_;      // the job below
  std::condition_variable cv_;
  uint64_t generation_ = 0;  // bumped per job
  bool stopping_ = false;
  const std::function<std::vector<Tensor>(ReplicaContext&)>* job_ = nullptr;
  int pending_ = 0;
  std::vector<std::vector<Tensor>> results_;
  std::vector<Failure> errors_;
  int first_error_ = -1;
  std::vector<std::thread> threads_;
};

}  // namespace cairn::distribute
