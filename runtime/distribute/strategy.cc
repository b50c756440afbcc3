#include "runtime/distribute/strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/eager/device_scope.h"
#include "runtime/eager/dispatch.h"
#include "runtime/eager/ops.h"

namespace cairn::distribute {
namespace {

thread_local ReplicaContext* tls_replica = nullptr;
thread_local MirroredStrategy* tls_scope = nullptr;  // the innermost Scope's strategy

const char* kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::CPU: return "cpu";
    case DeviceKind::Vulkan: return "vulkan";
    case DeviceKind::Symbolic: return "symbolic";
  }
  return "unknown";
}

bool symbolic(const Tensor& t) { return t.valid() && t.device()->kind() == DeviceKind::Symbolic; }

}  // namespace

// ---- ReplicaContext ----

ReplicaContext::ReplicaContext(MirroredStrategy& strategy, int replica) : strategy_(strategy), replica_(replica) {}

int ReplicaContext::replica_id() const { return strategy_.first_replica() + replica_; }
int ReplicaContext::num_replicas() const { return strategy_.num_replicas(); }
Device& ReplicaContext::device() const { return *strategy_.devices()[static_cast<size_t>(replica_)]; }
Context& ReplicaContext::context() const { return strategy_.context(); }
ReplicaContext* ReplicaContext::current() { return tls_replica; }

Tensor ReplicaContext::all_reduce(Reduction reduction, const Tensor& value) {
  if (!value.valid()) raise(Code::InvalidArgument, "ReplicaContext::all_reduce: the value is an empty tensor");
  Tensor v = value;
  if (!symbolic(v) && v.device() != &device()) v = tensor_on_device(v, device());
  return run_op(context(), "CollectiveAllReduce", {v},
                {attr_int("group_key", strategy_.group_key()), attr_int("group_size", num_replicas()),
                 attr_string("reduction", reduction_name(reduction))})[0];
}

std::vector<GradientBucket> plan_buckets(const std::vector<Tensor>& values, size_t bucket_bytes) {
  std::vector<GradientBucket> done;
  std::vector<GradientBucket> open;  // one per dtype, in the order the dtypes first appear
  for (size_t i = values.size(); i-- > 0;) {
    const Tensor& v = values[i];
    if (!v.valid()) continue;
    const size_t bytes = v.nbytes();
    auto it = std::find_if(open.begin(), open.end(), [&](const GradientBucket& b) { return b.dtype == v.dtype(); });
    if (it == open.end()) it = open.insert(open.end(), GradientBucket{v.dtype(), {}, 0});
    if (bucket_bytes && !it->indices.empty() && it->bytes + bytes > bucket_bytes) {
      done.push_back(std::move(*it));
      *it = GradientBucket{v.dtype(), {}, 0};
    }
    it->indices.push_back(i);
    it->bytes += bytes;
  }
  for (GradientBucket& b : open) done.push_back(std::move(b));
  return done;
}

namespace {

// A bucket's tensors as one flat buffer on `device` (a single tensor is only flattened).
Tensor flatten_bucket(Context& ctx, Device& device, const std::vector<Tensor>& values, const GradientBucket& b) {
  std::vector<Tensor> flat;
  for (size_t i : b.indices) {
    Tensor v = values[i];
    if (!symbolic(v) && v.device() != &device) v = tensor_on_device(v, device);
    flat.push_back(op::reshape(ctx, v, Shape{v.num_elements()}));
  }
  return flat.size() == 1 ? flat[0] : run_op(ctx, "ConcatV2", flat, {attr_int("axis", 0)})[0];
}

// The reduced buffer of a bucket split back into `out`, in the shapes of `values`.
void split_bucket(Context& ctx, const Tensor& reduced, const std::vector<Tensor>& values, const GradientBucket& b,
                  std::vector<Tensor>& out) {
  if (b.indices.size() == 1) {
    out[b.indices[0]] = op::reshape(ctx, reduced, values[b.indices[0]].shape());
    return;
  }
  int64_t offset = 0;
  for (size_t i : b.indices) {
    const int64_t n = values[i].num_elements();
    std::vector<int64_t> begin{offset}, size{n};
    Tensor part = run_op(ctx, "Slice", {reduced}, {attr_ints("begin", begin), attr_ints("size", size)})[0];
    out[i] = op::reshape(ctx, part, values[i].shape());
    offset += n;
  }
}

}  // namespace

std::vector<Tensor> ReplicaContext::all_reduce(Reduction reduction, const std::vector<Tensor>& values) {
  Context& ctx = context();
  std::vector<Tensor> out(values.size());
  const std::vector<GradientBucket> buckets = plan_buckets(values, strategy_.bucket_bytes());
  if (!device().is_host()) {  // Vulkan: host staging waits anyway
    for (const GradientBucket& b : buckets)
      split_bucket(ctx, all_reduce(reduction, flatten_bucket(ctx, device(), values, b)), values, b, out);
    return out;
  }
  // Every bucket's reduction starts before the first result is waited for.
  const std::vector<NamedAttr> group = {attr_int("group_key", strategy_.group_key()),
                                        attr_int("group_size", num_replicas())};
  std::vector<Tensor> flat, tickets;
  for (const GradientBucket& b : buckets) {
    flat.push_back(flatten_bucket(ctx, device(), values, b));
    std::vector<NamedAttr> attrs = group;
    attrs.push_back(attr_string("reduction", reduction_name(reduction)));
    tickets.push_back(run_op(ctx, "CollectiveAllReduceStart", {flat.back()}, attrs)[0]);
  }
  for (size_t k = 0; k < buckets.size(); ++k)
    split_bucket(ctx, run_op(ctx, "CollectiveAllReduceDone", {tickets[k], flat[k]}, group)[0], values, buckets[k], out);
  return out;
}

// ---- MirroredStrategy ----

Ref<MirroredStrategy> MirroredStrategy::create(Context& ctx, const std::vector<std::string>& devices,
                                               const MirroredOptions& options) {
  return make_ref<MirroredStrategy>(ctx, devices, options);
}

Ref<MirroredStrategy> MirroredStrategy::multi_worker(Context& ctx, Ref<Collective> workers,
                                                     const std::string& device, const MirroredOptions& options) {
  if (!workers) raise(Code::InvalidArgument, "MirroredStrategy::multi_worker: the workers' collective is null");
  return make_ref<MirroredStrategy>(ctx, std::vector<std::string>{device.empty() ? "cpu:0" : device}, options,
                                    std::move(workers));
}

MirroredStrategy::MirroredStrategy(Context& ctx, const std::vector<std::string>& devices,
                                   const MirroredOptions& options, Ref<Collective> workers)
    : ctx_(Ref<Context>::share(&ctx)) {
  constexpr const char* kFn = "MirroredStrategy";
  const char* env = std::getenv("CAIRN_CHECK_REPLICAS");
  check_replicas_ = options.check_replicas || (env && std::string_view(env) == "1");
  bucket_bytes_ = options.bucket_bytes;
  if (options.collective_timeout.count() <= 0)
    raise(Code::InvalidArgument, "{}: collective_timeout must be positive, got {} ms", kFn,
          options.collective_timeout.count());
  std::vector<std::string> names = devices;
  if (names.empty()) {
    const DeviceKind kind = ctx.default_device().kind();
    const std::string prefix = kind_name(kind);
    for (const LogicalDeviceSpec& spec : ctx.logical_devices())
      if (spec.name.compare(0, prefix.size(), prefix) == 0) names.push_back(spec.name);
    if (names.empty()) raise(Code::NotFound, "{}: no logical {} devices", kFn, prefix);
  }
  for (const std::string& name : names) {
    Device* d = nullptr;
    try {
      d = &ctx.device(name);
    } catch (const Error& e) {
      raise(e.code(), "{}: device \"{}\": {}", kFn, name, e.message());
    }
    for (size_t r = 0; r < devices_.size(); ++r)
      if (devices_[r] == d)
        raise(Code::InvalidArgument, "{}: device \"{}\" is given twice (as replica {} and {}); each replica needs "
              "its own device (split one with Context::set_logical_devices)", kFn, name, r, devices_.size());
    if (!devices_.empty() && d->kind() != devices_[0]->kind())
      raise(Code::InvalidArgument, "{}: devices {} and {} are of different types; a strategy's replicas must all "
            "be CPU or all Vulkan devices", kFn, devices_[0]->name(), d->name());
    devices_.push_back(d);
    device_refs_.push_back(Ref<Device>::share(d));
  }
  if (workers) {
    // One replica per process: the collective spans the processes, this one is its member on the device.
    if (devices_.size() != 1)
      raise(Code::InvalidArgument, "{}: a multi-worker strategy runs one replica per process, got {} devices", kFn,
            devices_.size());
    first_replica_ = workers->rank_of(*devices_[0]);
    if (first_replica_ < 0)
      raise(Code::InvalidArgument, "{}: the workers' collective has no member on device {} (give the device the "
            "collective was made for)", kFn, devices_[0]->name());
    multi_worker_ = true;
    num_replicas_ = workers->size();
    collective_ = std::move(workers);
  } else {
    num_replicas_ = static_cast<int>(devices_.size());
    collective_ = make_ref<LocalCollective>(devices_, options.collective_timeout);
  }
  group_key_ = register_collective(collective_);
  results_.resize(devices_.size());
  errors_.resize(devices_.size());
  try {
    for (int r = 0; r < num_local_replicas(); ++r) threads_.emplace_back([this, r] { worker_loop(r); });
  } catch (const std::system_error& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    unregister_collective(group_key_);
    raise(Code::ResourceExhausted, "{}: cannot start a replica thread: {}", kFn, e.what());
  }
}

MirroredStrategy::~MirroredStrategy() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  unregister_collective(group_key_);
}

MirroredStrategy::Scope::Scope(MirroredStrategy& s) : mirror_(s.devices_), outer_(tls_scope) { tls_scope = &s; }
MirroredStrategy::Scope::~Scope() { tls_scope = outer_; }

MirroredStrategy* MirroredStrategy::current() {
  if (tls_scope) return tls_scope;
  return tls_replica ? &tls_replica->strategy() : nullptr;
}

std::vector<std::string> MirroredStrategy::device_names() const {
  std::vector<std::string> out;
  for (Device* d : devices_) out.push_back(d->name());
  return out;
}

// Runs one replica's step and catches what it throws, as the code and message run() raises.
MirroredStrategy::Failure MirroredStrategy::run_replica_job(
    const std::function<std::vector<Tensor>(ReplicaContext&)>& job, ReplicaContext& rc, std::vector<Tensor>& out) {
  try {
    out = job(rc);
    return {};
  } catch (const Error& e) {
    return {e.code(), e.message()};
  } catch (const std::bad_alloc&) {
    return {Code::ResourceExhausted, "out of memory"};
  } catch (const std::exception& e) {
    return {Code::Unknown, e.what()};
  } catch (...) {
    return {Code::Unknown, "unknown exception"};
  }
}

void MirroredStrategy::worker_loop(int replica) {
  Device& device = *devices_[static_cast<size_t>(replica)];
  ReplicaScope replica_scope(replica);
  MirrorScope mirror(devices_);
  DeviceScope device_scope(*ctx_, device);
  ReplicaContext rc(*this, replica);
  tls_replica = &rc;
  uint64_t seen = 0;
  for (;;) {
    const std::function<std::vector<Tensor>(ReplicaContext&)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) break;
      seen = generation_;
      job = job_;
    }
    std::vector<Tensor> out;
    Failure failure = run_replica_job(*job, rc, out);
    if (failure.code != Code::Ok) {
      // Claim "first failure" before the abort wakes the others with errors of their own.
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (first_error_ < 0) first_error_ = replica;
      }
      collective_->abort(Code::Aborted,
                         fmt::format("replica {} ({}) failed: {}", replica, device.name(), failure.message));
    } else {
      collective_->leave(first_replica_ + replica);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      results_[static_cast<size_t>(replica)] = std::move(out);
      errors_[static_cast<size_t>(replica)] = std::move(failure);
      if (--pending_ == 0) cv_.notify_all();
    }
  }
  tls_replica = nullptr;
}

std::vector<std::vector<Tensor>> MirroredStrategy::run_multi(
    const std::function<std::vector<Tensor>(ReplicaContext&)>& fn) {
  if (ReplicaContext* rc = ReplicaContext::current())
    raise(Code::FailedPrecondition, "MirroredStrategy::run: called from inside replica {}; a step function must "
          "not start another step", rc->replica_id());
  if (!fn) raise(Code::InvalidArgument, "MirroredStrategy::run: the step function is empty");
  std::lock_guard<std::mutex> one_run(run_mu_);
  collective_->reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    for (auto& r : results_) r.clear();
    for (auto& e : errors_) e = Failure{};
    first_error_ = -1;
    pending_ = num_local_replicas();
    ++generation_;
  }
  cv_.notify_all();
  std::vector<std::vector<Tensor>> results;
  int failed = -1;
  Failure failure;
  {
    // Waits for the step functions themselves; every collective wait inside them has a timeout.
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    failed = first_error_;
    if (failed >= 0) failure = errors_[static_cast<size_t>(failed)];
    results.swap(results_);
    results_.resize(devices_.size());
  }
  if (failed < 0) return results;
  raise(failure.code, "MirroredStrategy::run: replica {} ({}): {}", failed,
        devices_[static_cast<size_t>(failed)]->name(), failure.message);
}

PerReplica MirroredStrategy::run(const std::function<Tensor(ReplicaContext&)>& fn) {
  if (!fn) raise(Code::InvalidArgument, "MirroredStrategy::run: the step function is empty");
  std::vector<std::vector<Tensor>> all = run_multi([&](ReplicaContext& rc) { return std::vector<Tensor>{fn(rc)}; });
  PerReplica out;
  for (auto& r : all) out.values.push_back(r.empty() ? Tensor() : std::move(r[0]));
  return out;
}

Tensor MirroredStrategy::reduce(Reduction reduction, const PerReplica& values) {
  constexpr const char* kFn = "MirroredStrategy::reduce";
  if (values.size() != devices_.size())
    raise(Code::InvalidArgument, "{}: {} values for {} replicas", kFn, values.size(), devices_.size());
  Context& ctx = *ctx_;
  Device& dev0 = *devices_[0];
  Tensor acc;
  for (size_t r = 0; r < values.size(); ++r) {
    const Tensor& v = values[r];
    if (!v.valid()) raise(Code::InvalidArgument, "{}: replica {}'s value is an empty tensor", kFn, r);
    if (r > 0 && (v.dtype() != acc.dtype() || v.shape() != acc.shape()))
      raise(Code::InvalidArgument, "{}: replica {}'s value is {}{}, replica 0's {}{}", kFn, r, dtype_name(v.dtype()),
            v.shape().str(), dtype_name(acc.dtype()), acc.shape().str());
    Tensor here = tensor_on_device(v, dev0);
    if (r == 0) {
      acc = here;
      continue;
    }
    switch (reduction) {
      case Reduction::Sum:
      case Reduction::Mean: acc = op::add(ctx, acc, here); break;
      case Reduction::Min: acc = op::run1(ctx, "Minimum", {acc, here}); break;
      case Reduction::Max: acc = op::maximum(ctx, acc, here); break;
    }
  }
  if (reduction == Reduction::Mean)
    acc = op::div(ctx, acc, op::scalar(ctx, dev0, acc.dtype(), static_cast<double>(values.size())));
  if (multi_worker_) {
    // One local replica: the workers' values combine across processes with the same reduction.
    require_outside_replicas(kFn);
    Tensor host = host_values(acc, ctx.cpu(), kFn);
    Tensor out = Tensor::allocate(ctx.cpu(), host.dtype(), host.shape());
    collective_->all_reduce(first_replica_, host.dtype(), host.num_elements(), host.raw_data(), out.raw_mutable_data(),
                            reduction);
    acc = tensor_on_device(out, dev0);
  }
  return acc;
}

std::vector<Tensor> MirroredStrategy::all_reduce_gradients(const std::vector<Tensor>& grads, Reduction reduction) {
  ReplicaContext* rc = ReplicaContext::current();
  if (!rc || &rc->strategy() != this)
    raise(Code::FailedPrecondition,
          "MirroredStrategy::all_reduce_gradients: call it inside a step function run by this strategy's run()");
  return rc->all_reduce(reduction, grads);
}

Tensor MirroredStrategy::compute_average_loss(Context& ctx, const Tensor& per_example_loss, int64_t global_batch_size) {
  constexpr const char* kFn = "MirroredStrategy::compute_average_loss";
  if (!per_example_loss.valid()) raise(Code::InvalidArgument, "{}: the loss is an empty tensor", kFn);
  if (global_batch_size <= 0)
    raise(Code::InvalidArgument, "{}: global_batch_size must be positive, got {}", kFn, global_batch_size);
  if (!dtype_is_floating(per_example_loss.dtype()))
    raise(Code::InvalidArgument, "{}: the loss must be floating, got {}", kFn, dtype_name(per_example_loss.dtype()));
  return op::div(ctx, op::all_sum(ctx, per_example_loss),
                 op::scalar_like(ctx, per_example_loss, static_cast<double>(global_batch_size)));
}

std::vector<Tensor> MirroredStrategy::split_batch(const Tensor& global, std::string_view fn) const {
  const int64_t n = num_replicas_;
  if (!global.valid()) raise(Code::InvalidArgument, "{}: the batch is an empty tensor", fn);
  if (global.rank() == 0)
    raise(Code::InvalidArgument, "{}: cannot split a scalar over {} replicas; batch the dataset first", fn, n);
  if (global.dtype() == DType::String)
    raise(Code::Unimplemented, "{}: string components cannot be split over replicas yet", fn);
  const int64_t rows = global.shape().dim(0);
  if (rows < n)
    raise(Code::InvalidArgument,
          "{}: a global batch of {} rows is smaller than the {} replicas; use a global batch of at least {} rows "
          "(or batch with drop_remainder)",
          fn, rows, n, n);
  Device& cpu = ctx_->cpu();
  Tensor host = tensor_on_device(global, cpu);
  const size_t row_bytes = rows ? host.nbytes() / static_cast<size_t>(rows) : 0;
  std::vector<Tensor> parts;
  for (size_t local = 0; local < devices_.size(); ++local) {
    const int64_t r = first_replica_ + static_cast<int64_t>(local);
    const int64_t begin = r * (rows / n) + std::min(r, rows % n);
    const int64_t count = rows / n + (r < rows % n);
    std::vector<int64_t> dims(global.shape().dims(), global.shape().dims() + global.rank());
    dims[0] = count;
    Device& device = *devices_[local];
    Tensor part = Tensor::allocate(device, global.dtype(), Shape::from(dims.data(), dims.size(), fn.data()));
    const unsigned char* src = static_cast<const unsigned char*>(host.raw_data()) + static_cast<size_t>(begin) * row_bytes;
    const size_t bytes = static_cast<size_t>(count) * row_bytes;
    if (device.is_host()) {
      if (bytes) std::memcpy(part.raw_mutable_data(), src, bytes);
    } else if (bytes) {
      device.write(*part.buffer(), src, bytes);
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

void MirroredStrategy::require_outside_replicas(std::string_view fn) {
  if (ReplicaContext* rc = ReplicaContext::current())
    raise(Code::FailedPrecondition, "{}: called from inside replica {}; call it outside the step function", fn,
          rc->replica_id());
}

Tensor MirroredStrategy::gather_batch(const std::vector<Tensor>& local_parts, int64_t global_rows,
                                      std::string_view fn) {
  require_outside_replicas(fn);
  if (local_parts.size() != devices_.size())
    raise(Code::InvalidArgument, "{}: {} parts for {} local replicas", fn, local_parts.size(), devices_.size());
  Context& ctx = *ctx_;
  std::vector<Tensor> host;
  for (const Tensor& p : local_parts) {
    if (!p.valid() || p.rank() == 0) raise(Code::InvalidArgument, "{}: a part is empty or a scalar", fn);
    host.push_back(tensor_on_device(p, ctx.cpu()));
  }
  if (!multi_worker_)
    return host.size() == 1 ? host[0] : run_op(ctx, "ConcatV2", host, {attr_int("axis", 0)})[0];
  // Parts differ by at most one row: each worker pads its part to the largest, all-gathers, and
  // the padding is dropped again.
  const Tensor& mine = host[0];
  if (!copyable_dtype(mine.dtype())) raise(Code::InvalidArgument, "{}: cannot gather {} parts", fn, dtype_name(mine.dtype()));
  const int64_t n = num_replicas_;
  const int64_t most = global_rows / n + (global_rows % n != 0);
  const int64_t rows_of_mine = mine.shape().dim(0);
  const int64_t row_elems = rows_of_mine ? mine.num_elements() / rows_of_mine : 0;
  const size_t row_bytes = static_cast<size_t>(row_elems) * dtype_size(mine.dtype());
  if (rows_of_mine > most) raise(Code::InvalidArgument, "{}: a part of {} rows for a global batch of {} rows over {} replicas", fn, rows_of_mine, global_rows, n);
  std::vector<unsigned char> padded(static_cast<size_t>(most) * row_bytes, 0), all(padded.size() * static_cast<size_t>(n));
  if (!padded.empty()) std::memcpy(padded.data(), mine.raw_data(), static_cast<size_t>(rows_of_mine) * row_bytes);
  collective_->all_gather(first_replica_, mine.dtype(), most * row_elems, padded.data(), all.data());
  std::vector<int64_t> dims(mine.shape().dims(), mine.shape().dims() + mine.rank());
  dims[0] = global_rows;
  Tensor out = Tensor::allocate(ctx.cpu(), mine.dtype(), Shape::from(dims.data(), dims.size(), fn.data()));
  unsigned char* dst = static_cast<unsigned char*>(out.raw_mutable_data());
  for (int64_t r = 0; r < n; ++r) {
    const size_t bytes = static_cast<size_t>(global_rows / n + (r < global_rows % n)) * row_bytes;
    if (bytes) std::memcpy(dst, all.data() + static_cast<size_t>(r) * padded.size(), bytes);
    dst += bytes;
  }
  return out;
}

double MirroredStrategy::sum_over_workers(double value, std::string_view fn) {
  if (!multi_worker_) return value;
  require_outside_replicas(fn);
  double sum = 0;
  collective_->all_reduce(first_replica_, DType::Float64, 1, &value, &sum, Reduction::Sum);
  return sum;
}

void MirroredStrategy::broadcast_variables(const std::vector<Ref<Variable>>& vars, std::string_view fn) {
  if (!multi_worker_) return;
  require_outside_replicas(fn);
  for (const Ref<Variable>& v : vars) {
    Tensor host = host_values(v->read(), ctx_->cpu(), fn);
    Tensor mine = Tensor::allocate(ctx_->cpu(), host.dtype(), host.shape());
    if (host.nbytes()) std::memcpy(mine.raw_mutable_data(), host.raw_data(), host.nbytes());
    collective_->broadcast(first_replica_, 0, mine.dtype(), mine.num_elements(), mine.raw_mutable_data());
    v->assign(mine, fn);
  }
}

namespace {

// FNV-1a over a value's bytes: equal values give equal checksums on every worker.
int64_t checksum(const Tensor& host) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char* p = static_cast<const unsigned char*>(host.raw_data());
  for (size_t i = 0; i < host.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return static_cast<int64_t>(h);
}

}  // namespace

void MirroredStrategy::check_replicas_identical(const std::vector<Ref<Variable>>& vars, std::string_view fn) {
  if (!multi_worker_ || vars.empty()) return;
  require_outside_replicas(fn);
  std::vector<int64_t> mine;
  for (const Ref<Variable>& v : vars) mine.push_back(checksum(host_values(v->read(), ctx_->cpu(), fn)));
  const size_t k = mine.size();
  std::vector<int64_t> all(k * static_cast<size_t>(num_replicas_));
  collective_->all_gather(first_replica_, DType::Int64, static_cast<int64_t>(k), mine.data(), all.data());
  for (size_t i = 0; i < k; ++i)
    for (int r = 1; r < num_replicas_; ++r) {
      const int64_t theirs = all[static_cast<size_t>(r) * k + i];
      if (theirs != all[i])
        raise(Code::Internal,
              "{}: the workers' weights differ: variable '{}' (#{} of {}) has checksum {:016x} on rank {} and {:016x} "
              "on rank 0 (this is rank {}); the replicas diverged",
              fn, vars[i]->name(), i, k, static_cast<uint64_t>(theirs), r, static_cast<uint64_t>(all[i]), first_replica_);
    }
}

DistributedIterator MirroredStrategy::distribute(const data::DatasetPtr& dataset) {
  return DistributedIterator(Ref<MirroredStrategy>::share(this), dataset);
}

// ---- DistributedIterator ----

DistributedIterator::DistributedIterator(Ref<MirroredStrategy> strategy, data::DatasetPtr dataset)
    : strategy_(std::move(strategy)), dataset_(std::move(dataset)) {
  if (!dataset_) raise(Code::InvalidArgument, "MirroredStrategy::distribute: the dataset is null");
  if (&dataset_->context() != &strategy_->context())
    raise(Code::InvalidArgument, "MirroredStrategy::distribute: the dataset belongs to another context");
  it_ = dataset_->make_iterator(dataset_->take_iteration());
}

DistributedIterator::~DistributedIterator() {
  if (it_) it_->cancel();
}
DistributedIterator::DistributedIterator(DistributedIterator&&) noexcept = default;
DistributedIterator& DistributedIterator::operator=(DistributedIterator&&) noexcept = default;

bool DistributedIterator::next(std::vector<data::Element>& parts) {
  data::Element global;
  if (!it_ || !it_->next(global)) return false;
  const std::string fn = fmt::format("DistributedIterator::next (global batch {})", batches_++);
  const size_t n = static_cast<size_t>(strategy_->num_local_replicas());
  parts.assign(n, data::Element(global.size()));
  for (size_t c = 0; c < global.size(); ++c) {
    std::vector<Tensor> split = strategy_->split_batch(global[c], fn);
    for (size_t r = 0; r < n; ++r) parts[r][c] = std::move(split[r]);
  }
  return true;
}

}  // namespace cairn::distribute
