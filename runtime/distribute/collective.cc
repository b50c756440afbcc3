#include "runtime/distribute/collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <unordered_map>

#include "runtime/core/half.h"

namespace cairn::distribute {

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Sum: return "sum";
    case Reduction::Mean: return "mean";
    case Reduction::Min: return "min";
    case Reduction::Max: return "max";
  }
  return "unknown";
}

Reduction parse_reduction(std::string_view name, std::string_view fn) {
  for (Reduction r : {Reduction::Sum, Reduction::Mean, Reduction::Min, Reduction::Max})
    if (name == reduction_name(r)) return r;
  raise(Code::InvalidArgument, "{}: unknown reduction \"{}\"; use sum, mean, min or max", fn, name);
}

bool reducible_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64:
    case DType::Int32:
    case DType::Int64: return true;
    default: return false;
  }
}

bool copyable_dtype(DType dtype) { return dtype_is_valid(dtype) && dtype_size(dtype) > 0; }

const char* collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce: return "all-reduce";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::AllGather: return "all-gather";
    case CollectiveKind::Barrier: return "barrier";
  }
  return "unknown collective";
}

std::string collective_call_text(CollectiveKind kind, DType dtype, int64_t count, Reduction reduction, int root) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return fmt::format("all-reduce of {} elements of {} ({})", count, dtype_name(dtype), reduction_name(reduction));
    case CollectiveKind::Broadcast:
      return fmt::format("broadcast of {} elements of {} from member {}", count, dtype_name(dtype), root);
    case CollectiveKind::AllGather: return fmt::format("all-gather of {} elements of {}", count, dtype_name(dtype));
    case CollectiveKind::Barrier: return "barrier";
  }
  return "unknown collective";
}

namespace {

// Elements [lo, hi) of the reduction of `inputs` (in rank order) into `out`. `A` is the type the
// arithmetic runs in (float for the 16-bit floats, which round once at the end).
template <class T, class A>
void reduce_range(const std::vector<const void*>& inputs, int64_t lo, int64_t hi, Reduction r, void* out) {
  T* o = static_cast<T*>(out);
  const size_t n = inputs.size();
  for (int64_t i = lo; i < hi; ++i) {
    A acc = static_cast<A>(static_cast<const T*>(inputs[0])[i]);
    for (size_t k = 1; k < n; ++k) {
      const A v = static_cast<A>(static_cast<const T*>(inputs[k])[i]);
      switch (r) {
        case Reduction::Sum:
        case Reduction::Mean: acc = acc + v; break;
        case Reduction::Min: acc = v < acc ? v : acc; break;
        case Reduction::Max: acc = v > acc ? v : acc; break;
      }
    }
    if (r == Reduction::Mean) acc = acc / static_cast<A>(n);
    o[i] = T(acc);
  }
}

void reduce_chunk(DType dtype, const std::vector<const void*>& inputs, int64_t lo, int64_t hi, Reduction r,
                  void* out) {
  switch (dtype) {
    case DType::Float16: return reduce_range<float16, float>(inputs, lo, hi, r, out);
    case DType::BFloat16: return reduce_range<bfloat16, float>(inputs, lo, hi, r, out);
    case DType::Float32: return reduce_range<float, float>(inputs, lo, hi, r, out);
    case DType::Float64: return reduce_range<double, double>(inputs, lo, hi, r, out);
    case DType::Int32: return reduce_range<int32_t, int32_t>(inputs, lo, hi, r, out);
    case DType::Int64: return reduce_range<int64_t, int64_t>(inputs, lo, hi, r, out);
    default: break;
  }
}

}  // namespace

LocalCollective::LocalCollective(std::vector<Device*> devices, std::chrono::milliseconds timeout, std::string name)
    : devices_(std::move(devices)),
      timeout_(timeout),
      name_(std::move(name)),
      calls_(devices_.size(), 0),
      left_(devices_.size(), false) {
  if (devices_.empty()) raise(Code::InvalidArgument, "{}: a collective group needs at least one member", name_);
}

int LocalCollective::rank_of(const Device& device) const {
  for (size_t r = 0; r < devices_.size(); ++r)
    if (devices_[r] == &device) return static_cast<int>(r);
  return -1;
}

std::string LocalCollective::describe(CollectiveKind kind, uint64_t seq) const {
  return fmt::format("{}: {} #{} across {} replicas", name_, collective_kind_name(kind), seq, devices_.size());
}

void LocalCollective::check_aborted(CollectiveKind kind, uint64_t seq) const {
  if (aborted_) throw Error(abort_code_, fmt::format("{}: {}", describe(kind, seq), abort_why_));
}

void LocalCollective::abort_locked(Code code, const std::string& why) {
  if (aborted_) return;  // the first cause wins
  aborted_ = true;
  abort_code_ = code;
  abort_why_ = why;
  cv_.notify_all();
}

void LocalCollective::abort(Code code, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_locked(code, why);
}

void LocalCollective::leave(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rank >= 0 && rank < size()) left_[static_cast<size_t>(rank)] = true;
  cv_.notify_all();
}

void LocalCollective::reset() {
  drop_pending();
  std::lock_guard<std::mutex> lock(mu_);
  instances_.clear();
  std::fill(calls_.begin(), calls_.end(), 0);
  std::fill(left_.begin(), left_.end(), false);
  aborted_ = false;
  abort_code_ = Code::Ok;
  abort_why_.clear();
}


void LocalCollective::check_call(int rank, const Signature& sig) const {
  const int n = size();
  const char* what = collective_kind_name(sig.kind);
  if (rank < 0 || rank >= n) raise(Code::InvalidArgument, "{}: {}: no member {} in a group of {}", name_, what, rank, n);
  if (sig.count < 0) raise(Code::InvalidArgument, "{}: {}: negative element count {}", name_, what, sig.count);
  if (sig.kind == CollectiveKind::AllReduce && !reducible_dtype(sig.dtype))
    raise(Code::InvalidArgument, "{}: cannot reduce dtype {}; use float16, bfloat16, float32, float64, int32 or int64",
          name_, dtype_name(sig.dtype));
  if ((sig.kind == CollectiveKind::Broadcast || sig.kind == CollectiveKind::AllGather) && !copyable_dtype(sig.dtype))
    raise(Code::InvalidArgument, "{}: {}: dtype {} has no fixed size", name_, what, dtype_name(sig.dtype));
  if (sig.kind == CollectiveKind::Broadcast && (sig.root < 0 || sig.root >= n))
    raise(Code::InvalidArgument, "{}: broadcast: no root member {} in a group of {}", name_, sig.root, n);
}

void LocalCollective::rendezvous(int rank, const Signature& sig, const void* input, void* output, const Work& work) {
  const int n = size();
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t seq = calls_[static_cast<size_t>(rank)]++;
  check_aborted(sig.kind, seq);
  Instance& in = instances_[seq];
  if (in.first < 0) {
    in.first = rank;
    in.sig = sig;
    in.inputs.assign(static_cast<size_t>(n), nullptr);
    in.outputs.assign(static_cast<size_t>(n), nullptr);
    in.present.assign(static_cast<size_t>(n), 0);
  } else if (!(in.sig == sig)) {
    const Signature& f = in.sig;
    std::string why = fmt::format(
        "replica {} called {}, replica {} called {}; every replica must issue the same collectives with the same "
        "dtype and size, in the same order",
        in.first, collective_call_text(f.kind, f.dtype, f.count, f.reduction, f.root), rank,
        collective_call_text(sig.kind, sig.dtype, sig.count, sig.reduction, sig.root));
    abort_locked(Code::InvalidArgument, why);
    check_aborted(sig.kind, seq);
  }
  in.inputs[static_cast<size_t>(rank)] = input;
  in.outputs[static_cast<size_t>(rank)] = output;
  in.present[static_cast<size_t>(rank)] = 1;
  if (++in.arrived == n) cv_.notify_all();

  // Phase 1: every member is there.
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (in.arrived < n) {
    check_aborted(sig.kind, seq);
    std::vector<int> gone;
    for (int r = 0; r < n; ++r)
      if (!in.present[static_cast<size_t>(r)] && left_[static_cast<size_t>(r)]) gone.push_back(r);
    if (!gone.empty()) {
      std::string why = fmt::format("replica(s) {} finished the step without joining it (replicas must issue the "
                                    "same collectives in the same order)",
                                    fmt::join(gone, ", "));
      abort_locked(Code::FailedPrecondition, why);
      check_aborted(sig.kind, seq);
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && in.arrived < n) {
      std::vector<int> missing;
      for (int r = 0; r < n; ++r)
        if (!in.present[static_cast<size_t>(r)]) missing.push_back(r);
      std::string why = fmt::format("timed out after {} ms waiting for replica(s) {} to arrive", timeout_.count(),
                                    fmt::join(missing, ", "));
      abort_locked(Code::DeadlineExceeded, why);
      check_aborted(sig.kind, seq);
    }
  }

  // Phase 2: this member's share of the work. No member leaves before every share is done (the
  // others read its input and write its output), and this wait ends by arithmetic alone, so it
  // needs no abort path.
  const std::vector<const void*> inputs = in.inputs;
  const std::vector<void*> outputs = in.outputs;
  lock.unlock();
  work(inputs, outputs);
  lock.lock();
  if (++in.reduced == n) cv_.notify_all();
  cv_.wait(lock, [&] { return in.reduced == n; });
  if (++in.departed == n) instances_.erase(seq);
}

void LocalCollective::all_reduce(int rank, DType dtype, int64_t count, const void* input, void* output,
                                 Reduction reduction) {
  const Signature sig{CollectiveKind::AllReduce, dtype, count, reduction, 0};
  check_call(rank, sig);
  // Each member reduces its share of the elements, reading every member's input in rank order,
  // into its own output, and copies that share into every other member's output.
  const int n = size();
  const size_t esize = dtype_size(dtype);
  const int64_t lo = count * rank / n, hi = count * (rank + 1) / n;
  rendezvous(rank, sig, input, output, [&](const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
    if (hi <= lo) return;
    reduce_chunk(dtype, inputs, lo, hi, reduction, output);
    const size_t offset = static_cast<size_t>(lo) * esize, bytes = static_cast<size_t>(hi - lo) * esize;
    for (int r = 0; r < n; ++r)
      if (r != rank && outputs[static_cast<size_t>(r)] != output)
        std::memcpy(static_cast<unsigned char*>(outputs[static_cast<size_t>(r)]) + offset,
                    static_cast<const unsigned char*>(output) + offset, bytes);
  });
}

void LocalCollective::broadcast(int rank, int root, DType dtype, int64_t count, void* data) {
  const Signature sig{CollectiveKind::Broadcast, dtype, count, Reduction::Sum, root};
  check_call(rank, sig);
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
  // Each non-root member copies from the root's buffer into its own.
  rendezvous(rank, sig, data, data, [&](const std::vector<const void*>& inputs, const std::vector<void*>&) {
    const void* from = inputs[static_cast<size_t>(root)];
    if (rank != root && bytes && from != data) std::memcpy(data, from, bytes);
  });
}

void LocalCollective::all_gather(int rank, DType dtype, int64_t count, const void* input, void* output) {
  const Signature sig{CollectiveKind::AllGather, dtype, count, Reduction::Sum, 0};
  check_call(rank, sig);
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
  // Each member copies every member's input into its own output.
  rendezvous(rank, sig, input, output, [&](const std::vector<const void*>& inputs, const std::vector<void*>&) {
    if (!bytes) return;
    for (size_t r = 0; r < inputs.size(); ++r)
      std::memcpy(static_cast<unsigned char*>(output) + r * bytes, inputs[r], bytes);
  });
}

void LocalCollective::barrier(int rank) {
  const Signature sig{CollectiveKind::Barrier, DType::Invalid, 0, Reduction::Sum, 0};
  check_call(rank, sig);
  rendezvous(rank, sig, nullptr, nullptr, [](const std::vector<const void*>&, const std::vector<void*>&) {});
}

// ---- split all-reduces ----

void Collective::PendingAllReduce::settle(const std::function<void()>& reduce) {
  Code c = Code::Ok;
  std::string message;
  try {
    reduce();
  } catch (const Error& e) {
    c = e.code();
    message = e.message();
  } catch (const std::exception& e) {
    c = Code::Internal;
    message = e.what();
  }
  std::lock_guard<std::mutex> lock(mu);
  code = c;
  why = std::move(message);
  done = true;
  cv.notify_all();
}

void Collective::launch(const std::shared_ptr<PendingAllReduce>& p) {
  p->settle([&] { all_reduce(p->rank, p->dtype, p->count, p->input.data(), p->output.data(), p->reduction); });
}

void Collective::await(PendingAllReduce& p) {
  std::unique_lock<std::mutex> lock(p.mu);
  p.cv.wait(lock, [&] { return p.done; });
}

uint64_t Collective::start_all_reduce(int rank, DType dtype, int64_t count, const void* input, Reduction reduction) {
  auto p = std::make_shared<PendingAllReduce>();
  p->rank = rank;
  p->dtype = dtype;
  p->count = count;
  p->reduction = reduction;
  const size_t bytes = reducible_dtype(dtype) && count > 0 ? static_cast<size_t>(count) * dtype_size(dtype) : 0;
  p->input.assign(static_cast<const unsigned char*>(input), static_cast<const unsigned char*>(input) + bytes);
  p->output.resize(bytes);
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    ticket = next_ticket_++;
    pending_.emplace(ticket, p);
  }
  launch(p);
  return ticket;
}

void Collective::finish_all_reduce(uint64_t ticket, int64_t count, void* output) {
  std::shared_ptr<PendingAllReduce> p;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    auto it = pending_.find(ticket);
    if (it == pending_.end())
      raise(Code::InvalidArgument, "CollectiveAllReduceDone: no started all-reduce has ticket {} (finished already, "
            "or dropped by the group's reset)", ticket);
    p = std::move(it->second);
    pending_.erase(it);
  }
  if (p->count != count)
    raise(Code::InvalidArgument, "CollectiveAllReduceDone: ticket {} reduces {} elements, the output has {}", ticket,
          p->count, count);
  await(*p);  // ends: every collective call ends by its timeout at the latest
  std::lock_guard<std::mutex> lock(p->mu);
  if (p->code != Code::Ok) throw Error(p->code, p->why);
  if (!p->output.empty()) std::memcpy(output, p->output.data(), p->output.size());
}

void Collective::drop_pending() {
  std::lock_guard<std::mutex> lock(pending_mu_);
  pending_.clear();
}

// ---- registry ----

namespace {
struct Registry {
  std::mutex mu;
  std::unordered_map<int64_t, Ref<Collective>> groups;
  int64_t next = 1;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: kernels may run during static destruction
  return *r;
}
}  // namespace

int64_t register_collective(Ref<Collective> collective) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const int64_t key = r.next++;
  r.groups.emplace(key, std::move(collective));
  return key;
}

void unregister_collective(int64_t group_key) {
  Ref<Collective> gone;  // released outside the lock
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.groups.find(group_key);
  if (it == r.groups.end()) return;
  gone = std::move(it->second);
  r.groups.erase(it);
}

Ref<Collective> find_collective(int64_t group_key) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.groups.find(group_key);
  return it == r.groups.end() ? Ref<Collective>() : it->second;
}

}  // namespace cairn::distribute
