#include "runtime/distribute/mpi_collective.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <limits>

#include "runtime/core/half.h"
#include "runtime/distribute/mpi_loader.h"

namespace cairn::distribute {

using Clock = std::chrono::steady_clock;

// Cairn's MPI_Init: finalized when the last collective that relies on it is destroyed.
struct MpiCollective::Token {
  explicit Token(const cairn_mpi_plugin& p) : plugin(p) {}
  ~Token() {
    char err[CAIRN_MPI_ERROR_SIZE] = {0};
    plugin.finalize(err);  // nothing to report to from a destructor
  }
  const cairn_mpi_plugin& plugin;
};

// What every rank's matching call must agree on, as all-reduced by agree().
struct MpiCollective::Signature {
  CollectiveKind kind;
  DType dtype;
  int64_t count;
  Reduction reduction;
  int root;
  std::array<int64_t, 5> fields() const {
    return {static_cast<int64_t>(kind), static_cast<int64_t>(dtype), count, static_cast<int64_t>(reduction), root};
  }
};

namespace {

std::mutex token_mu;
std::weak_ptr<MpiCollective::Token> cairn_init;  // while Cairn's MPI_Init has users

int plugin_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return CAIRN_MPI_FLOAT32;
    case DType::Float64: return CAIRN_MPI_FLOAT64;
    case DType::Int32: return CAIRN_MPI_INT32;
    case DType::Int64: return CAIRN_MPI_INT64;
    default: return CAIRN_MPI_BYTE;
  }
}

int plugin_op(Reduction r) {
  switch (r) {
    case Reduction::Min: return CAIRN_MPI_MIN;
    case Reduction::Max: return CAIRN_MPI_MAX;
    default: return CAIRN_MPI_SUM;  // mean divides the sum afterwards
  }
}

// out[i] = in[i] / n for the mean of `count` elements of T.
template <class T>
void divide(void* data, int64_t count, int n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] = p[i] / static_cast<T>(n);
}

void divide_by(DType dtype, void* data, int64_t count, int n) {
  switch (dtype) {
    case DType::Float32: return divide<float>(data, count, n);
    case DType::Float64: return divide<double>(data, count, n);
    case DType::Int32: return divide<int32_t>(data, count, n);
    case DType::Int64: return divide<int64_t>(data, count, n);
    default: return;
  }
}

template <class H>
void widen(const void* in, int64_t count, float* out) {
  const H* p = static_cast<const H*>(in);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(p[i]);
}

template <class H>
void narrow(const float* in, int64_t count, void* out) {
  H* p = static_cast<H*>(out);
  for (int64_t i = 0; i < count; ++i) p[i] = H(in[i]);
}

// The range of one signature field across ranks, for the mismatch message.
std::string field_range(size_t field, int64_t lo, int64_t hi) {
  auto text = [&](int64_t v) -> std::string {
    switch (field) {
      case 0: return collective_kind_name(static_cast<CollectiveKind>(v));
      case 1: return dtype_name(static_cast<DType>(v));
      case 3: return reduction_name(static_cast<Reduction>(v));
      default: return std::to_string(v);
    }
  };
  static const char* const names[] = {"kind", "dtype", "element count", "reduction", "root"};
  return fmt::format("{} from {} to {}", names[field], text(lo), text(hi));
}

}  // namespace

Ref<MpiCollective> MpiCollective::init_world(std::vector<Device*> local_devices, const MpiOptions& options) {
  const cairn_mpi_plugin& p = mpi_plugin();
  std::lock_guard<std::mutex> lock(token_mu);
  cairn_mpi_comm* comm = nullptr;
  int initialized_here = 0;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (p.init_world(&comm, &initialized_here, err))
    raise(Code::FailedPrecondition, "{}: cannot start MPI: {}", options.name, err);
  std::shared_ptr<Token> token = cairn_init.lock();
  if (initialized_here) {
    token = std::make_shared<Token>(p);
    cairn_init = token;
  }
  return make_ref<MpiCollective>(p, comm, std::move(token), std::move(local_devices), options);
}

Ref<MpiCollective> MpiCollective::adopt(uintptr_t host_comm, std::vector<Device*> local_devices,
                                        const MpiOptions& options) {
  const cairn_mpi_plugin& p = mpi_plugin();
  cairn_mpi_comm* comm = nullptr;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (p.adopt(host_comm, &comm, err))
    raise(Code::FailedPrecondition, "{}: cannot use the host's communicator: {}", options.name, err);
  return make_ref<MpiCollective>(p, comm, nullptr, std::move(local_devices), options);
}

MpiCollective::MpiCollective(const cairn_mpi_plugin& plugin, cairn_mpi_comm* comm, std::shared_ptr<Token> mpi,
                             std::vector<Device*> local_devices, const MpiOptions& options)
    : plugin_(plugin),
      comm_(comm),
      mpi_(std::move(mpi)),
      local_devices_(std::move(local_devices)),
      options_(options),
      rank_(plugin.comm_rank(comm)),
      size_(plugin.comm_size(comm)),
      worker_([this] { work(); }) {}

MpiCollective::~MpiCollective() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  worker_.join();  // after the queued calls: each ends by its timeout at the latest
  // A broken communicator has a call pending inside MPI: freeing it would wait for that call.
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (broken_.empty()) plugin_.free_comm(comm_, err);
}

int MpiCollective::rank_of(const Device& device) const {
  for (const Device* d : local_devices_)
    if (d == &device) return rank_;
  return -1;
}

std::string MpiCollective::describe(CollectiveKind kind, uint64_t seq) const {
  return fmt::format("{}: {} #{} on rank {} of {}", options_.name, collective_kind_name(kind), seq, rank_, size_);
}

void MpiCollective::abort(Code code, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_) return;  // the first cause wins
  aborted_ = true;
  abort_code_ = code;
  abort_why_ = why;
}

void MpiCollective::reset() {
  drop_pending();
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = false;
  abort_code_ = Code::Ok;
  abort_why_.clear();
}

// Adds a call's wall time to the stats when it ends, failed calls included (they waited too).
struct MpiCollective::Timed {
  explicit Timed(MpiCollective& c) : c_(c), start_(Clock::now()) {}
  ~Timed() {
    std::lock_guard<std::mutex> lock(c_.stats_mu_);
    ++c_.stats_.calls;
    c_.stats_.seconds += std::chrono::duration<double>(Clock::now() - start_).count();
  }
  MpiCollective& c_;
  Clock::time_point start_;
};

MpiStats MpiCollective::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void MpiCollective::add_blocked(Clock::time_point since) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.blocked_seconds += std::chrono::duration<double>(Clock::now() - since).count();
}

void MpiCollective::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return !busy_ && (stopping_ || !queue_.empty()); });
      if (queue_.empty()) return;  // stopping, and every submitted call has run
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    job();  // never throws: each job keeps its error for its waiter
    std::lock_guard<std::mutex> lock(queue_mu_);
    busy_ = false;
  }
}

bool MpiCollective::claim_idle() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  if (busy_ || !queue_.empty()) return false;
  busy_ = true;
  return true;
}

void MpiCollective::release_idle() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    busy_ = false;
  }
  queue_cv_.notify_all();  // calls submitted meanwhile
}

void MpiCollective::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back(std::move(job));
  }
  queue_cv_.notify_one();
}

// Ends a call made on the caller's thread: blocked time, and the worker may go on.
struct MpiCollective::Inline {
  MpiCollective& c;
  Clock::time_point start;
  ~Inline() {
    c.add_blocked(start);
    c.release_idle();
  }
};

void MpiCollective::call(const std::function<void()>& body) {
  const Clock::time_point start = Clock::now();
  if (claim_idle()) {  // nothing queued: no handoff to the worker (it costs small calls 10s of us)
    const Inline done{*this, start};
    body();
    return;
  }
  auto p = std::make_shared<PendingAllReduce>();  // only its completion: the call's own buffers are the caller's
  submit([p, &body] { p->settle(body); });
  Collective::await(*p);
  add_blocked(start);
  std::lock_guard<std::mutex> lock(p->mu);
  if (p->code != Code::Ok) throw Error(p->code, p->why);
}

void MpiCollective::launch(const std::shared_ptr<PendingAllReduce>& p) {
  submit([this, p] {
    p->settle([&] { all_reduce_now(p->rank, p->dtype, p->count, p->input.data(), p->output.data(), p->reduction); });
  });
}

void MpiCollective::await(PendingAllReduce& p) {
  const Clock::time_point start = Clock::now();
  Collective::await(p);
  add_blocked(start);
}

void MpiCollective::all_reduce(int rank, DType dtype, int64_t count, const void* input, void* output,
                               Reduction reduction) {
  call([&] { all_reduce_now(rank, dtype, count, input, output, reduction); });
}

void MpiCollective::broadcast(int rank, int root, DType dtype, int64_t count, void* data) {
  call([&] { broadcast_now(rank, root, dtype, count, data); });
}

void MpiCollective::all_gather(int rank, DType dtype, int64_t count, const void* input, void* output) {
  call([&] { all_gather_now(rank, dtype, count, input, output); });
}

void MpiCollective::barrier(int rank) {
  call([&] { barrier_now(rank); });
}

uint64_t MpiCollective::begin(int rank, CollectiveKind kind) {
  const uint64_t seq = calls_;
  if (rank != rank_)
    raise(Code::InvalidArgument, "{}: member {} called, but this process is rank {} (one member per process)",
          describe(kind, seq), rank, rank_);
  if (aborted_) throw Error(abort_code_, fmt::format("{}: {}", describe(kind, seq), abort_why_));
  if (!broken_.empty())
    raise(Code::FailedPrecondition, "{}: the communicator is unusable: {}; end the job and restart it",
          describe(kind, seq), broken_);
  ++calls_;
  return seq;
}

void MpiCollective::check_count(CollectiveKind kind, uint64_t seq, int64_t count, const char* unit) const {
  if (count < 0) raise(Code::InvalidArgument, "{}: negative {} count {}", describe(kind, seq), unit, count);
  if (count > std::numeric_limits<int>::max())
    raise(Code::InvalidArgument, "{}: {} {} in one call, MPI's limit is {}; split the tensor", describe(kind, seq),
          count, unit, std::numeric_limits<int>::max());
}

void MpiCollective::mpi_failed(CollectiveKind kind, uint64_t seq, const char* err) {
  broken_ = fmt::format("{} #{} failed in MPI ({})", collective_kind_name(kind), seq, err);
  raise(Code::Internal, "{}: {}", describe(kind, seq), err);
}

void MpiCollective::wait(cairn_mpi_request* req, CollectiveKind kind, uint64_t seq, Clock::time_point deadline) {
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  for (;;) {
    int done = 0;
    if (plugin_.test(req, &done, err)) mpi_failed(kind, seq, err);
    if (done) return;
    if (Clock::now() >= deadline) {
      broken_ = fmt::format("{} #{} timed out and is still pending inside MPI", collective_kind_name(kind), seq);
      raise(Code::DeadlineExceeded,
            "{}: timed out after {} ms waiting for the other ranks (one never made this call, or is that late); "
            "the communicator is unusable now: end the job and restart it",
            describe(kind, seq), options_.timeout.count());
    }
    sched_yield();  // on shared cores, let the other ranks run (MPI progresses inside test)
  }
}

void MpiCollective::agree(const Signature& sig, uint64_t seq, Clock::time_point deadline) {
  const std::array<int64_t, 5> mine = sig.fields();
  std::array<int64_t, 10> both{};  // max of the fields, then max of their negations (the min)
  for (size_t i = 0; i < 5; ++i) {
    both[i] = mine[i];
    both[5 + i] = -mine[i];
  }
  cairn_mpi_request* req = nullptr;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (plugin_.start_all_reduce(comm_, CAIRN_MPI_INT64, CAIRN_MPI_MAX, 10, both.data(), both.data(), &req, err))
    mpi_failed(sig.kind, seq, err);
  wait(req, sig.kind, seq, deadline);
  std::vector<std::string> differ;
  for (size_t i = 0; i < 5; ++i)
    if (both[i] != -both[5 + i]) differ.push_back(field_range(i, -both[5 + i], both[i]));
  if (differ.empty()) return;
  // Every rank saw the same maxima, so every rank fails here alike and the communicator stays in step.
  raise(Code::InvalidArgument,
        "{}: the ranks' calls differ ({}); this rank called {}. Every rank must issue the same collectives with the "
        "same dtype and size, in the same order",
        describe(sig.kind, seq), fmt::join(differ, ", "),
        collective_call_text(sig.kind, sig.dtype, sig.count, sig.reduction, sig.root));
}

void MpiCollective::all_reduce_now(int rank, DType dtype, int64_t count, const void* input, void* output,
                                   Reduction reduction) {
  std::lock_guard<std::mutex> lock(mu_);
  const Timed timed(*this);
  const uint64_t seq = begin(rank, CollectiveKind::AllReduce);
  if (!reducible_dtype(dtype))
    raise(Code::InvalidArgument, "{}: cannot reduce dtype {}; use float16, bfloat16, float32, float64, int32 or int64",
          describe(CollectiveKind::AllReduce, seq), dtype_name(dtype));
  check_count(CollectiveKind::AllReduce, seq, count, "elements");
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  agree({CollectiveKind::AllReduce, dtype, count, reduction, 0}, seq, deadline);
  if (dtype == DType::Float16 || dtype == DType::BFloat16)
    return reduce_in_float32(dtype, count, input, output, reduction, seq, deadline);
  cairn_mpi_request* req = nullptr;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (plugin_.start_all_reduce(comm_, plugin_type(dtype), plugin_op(reduction), count, input, output, &req, err))
    mpi_failed(CollectiveKind::AllReduce, seq, err);
  wait(req, CollectiveKind::AllReduce, seq, deadline);
  if (reduction == Reduction::Mean) divide_by(dtype, output, count, size_);
}

void MpiCollective::reduce_in_float32(DType dtype, int64_t count, const void* input, void* output,
                                      Reduction reduction, uint64_t seq, Clock::time_point deadline) {
  staging_.resize(static_cast<size_t>(count));
  if (dtype == DType::Float16) widen<float16>(input, count, staging_.data());
  else widen<bfloat16>(input, count, staging_.data());
  cairn_mpi_request* req = nullptr;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (plugin_.start_all_reduce(comm_, CAIRN_MPI_FLOAT32, plugin_op(reduction), count, staging_.data(),
                               staging_.data(), &req, err))
    mpi_failed(CollectiveKind::AllReduce, seq, err);
  wait(req, CollectiveKind::AllReduce, seq, deadline);
  if (reduction == Reduction::Mean) divide_by(DType::Float32, staging_.data(), count, size_);
  if (dtype == DType::Float16) narrow<float16>(staging_.data(), count, output);
  else narrow<bfloat16>(staging_.data(), count, output);
}

void MpiCollective::broadcast_now(int rank, int root, DType dtype, int64_t count, void* data) {
  std::lock_guard<std::mutex> lock(mu_);
  const Timed timed(*this);
  const uint64_t seq = begin(rank, CollectiveKind::Broadcast);
  if (!copyable_dtype(dtype))
    raise(Code::InvalidArgument, "{}: dtype {} has no fixed size", describe(CollectiveKind::Broadcast, seq),
          dtype_name(dtype));
  if (root < 0 || root >= size_)
    raise(Code::InvalidArgument, "{}: no root rank {} in a group of {}", describe(CollectiveKind::Broadcast, seq), root,
          size_);
  check_count(CollectiveKind::Broadcast, seq, count, "elements");
  const int64_t bytes = count * static_cast<int64_t>(dtype_size(dtype));
  check_count(CollectiveKind::Broadcast, seq, bytes, "bytes");
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  agree({CollectiveKind::Broadcast, dtype, count, Reduction::Sum, root}, seq, deadline);
  cairn_mpi_request* req = nullptr;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (plugin_.start_broadcast(comm_, root, CAIRN_MPI_BYTE, bytes, data, &req, err))
    mpi_failed(CollectiveKind::Broadcast, seq, err);
  wait(req, CollectiveKind::Broadcast, seq, deadline);
}

void MpiCollective::all_gather_now(int rank, DType dtype, int64_t count, const void* input, void* output) {
  std::lock_guard<std::mutex> lock(mu_);
  const Timed timed(*this);
  const uint64_t seq = begin(rank, CollectiveKind::AllGather);
  if (!copyable_dtype(dtype))
    raise(Code::InvalidArgument, "{}: dtype {} has no fixed size", describe(CollectiveKind::AllGather, seq),
          dtype_name(dtype));
  check_count(CollectiveKind::AllGather, seq, count, "elements");
  const int64_t bytes = count * static_cast<int64_t>(dtype_size(dtype));
  check_count(CollectiveKind::AllGather, seq, bytes, "bytes");
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  agree({CollectiveKind::AllGather, dtype, count, Reduction::Sum, 0}, seq, deadline);
  cairn_mpi_request* req = nullptr;
  char err[CAIRN_MPI_ERROR_SIZE] = {0};
  if (plugin_.start_all_gather(comm_, CAIRN_MPI_BYTE, bytes, input, output, &req, err))
    mpi_failed(CollectiveKind::AllGather, seq, err);
  wait(req, CollectiveKind::AllGather, seq, deadline);
}

void MpiCollective::barrier_now(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  const Timed timed(*this);
  const uint64_t seq = begin(rank, CollectiveKind::Barrier);
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  // The signature's all-reduce is itself a barrier; agreeing on the kind is all a barrier needs.
  agree({CollectiveKind::Barrier, DType::Invalid, 0, Reduction::Sum, 0}, seq, deadline);
}

}  // namespace cairn::distribute
