// The Distribution section of the C API: mirrored strategies (runtime/distribute), their scopes,
// replicated runs with all-reduces, and batches split over the replicas.
#include <memory>
#include <string>
#include <vector>

#include "capi/internal/handles.h"
#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"
#include "capi/internal/reduction.h"
#include "runtime/data/iterator_object.h"
#include "runtime/distribute/strategy.h"

using namespace cairn;
using cairn::capi::new_tensor;
using cairn::capi::reduction_of;
using cairn::capi::require;
using distribute::MirroredStrategy;
using distribute::ReplicaContext;

struct cairn_strategy {
  Ref<MirroredStrategy> s;
  std::vector<std::string> names;  // device names handed out by cairn_strategy_device
};

struct cairn_replica_context {
  ReplicaContext* rc;
  const char* device;
};

namespace {

MirroredStrategy& require_strategy(cairn_strategy* s, const char* fn) { return *require(s, fn, "strategy")->s; }

// Strategy scopes entered through the C API on this thread, innermost last.
struct CScope {
  MirroredStrategy* strategy;
  std::unique_ptr<MirroredStrategy::Scope> scope;
};
thread_local std::vector<CScope> t_scopes;

std::vector<Tensor> tensors_of(cairn_tensor* const* values, size_t n, const char* fn, const char* what) {
  if (n > 0) require(values, fn, what);
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    if (!values[i]) raise(Code::InvalidArgument, "{}: {}[{}] is NULL", fn, what, i);
    out.push_back(values[i]->t);
  }
  return out;
}

}  // namespace

extern "C" {

cairn_status* cairn_mirrored_strategy_create(cairn_context* ctx, const char* const* devices, size_t n,
                                             const cairn_mirrored_options* user_opts, cairn_strategy** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mirrored_strategy_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  if (n > 0) require(devices, fn, "devices");
  const cairn_mirrored_options opts = capi::read_options(user_opts, fn);
  if (opts.collective_timeout_ms < 1)
    raise(Code::InvalidArgument, "{}: collective_timeout_ms must be at least 1, got {}", fn, opts.collective_timeout_ms);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    if (!devices[i]) raise(Code::InvalidArgument, "{}: devices[{}] is NULL", fn, i);
    names.emplace_back(devices[i]);
  }
  distribute::MirroredOptions o;
  o.collective_timeout = std::chrono::milliseconds(opts.collective_timeout_ms);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*ctx->ctx, names, o);
  *out = new cairn_strategy{s, s->device_names()};
  CAIRN_API_END
}

void cairn_strategy_free(cairn_strategy* s) { delete s; }

size_t cairn_strategy_num_replicas(const cairn_strategy* s) { return s ? s->names.size() : 0; }

const char* cairn_strategy_device(const cairn_strategy* s, size_t replica) {
  return s && replica < s->names.size() ? s->names[replica].c_str() : nullptr;
}

cairn_status* cairn_strategy_scope_enter(cairn_strategy* s) {
  CAIRN_API_BEGIN
  MirroredStrategy& strategy = require_strategy(s, "cairn_strategy_scope_enter");
  t_scopes.push_back({&strategy, std::make_unique<MirroredStrategy::Scope>(strategy)});
  CAIRN_API_END
}

cairn_status* cairn_strategy_scope_exit(cairn_strategy* s) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_strategy_scope_exit";
  MirroredStrategy& strategy = require_strategy(s, fn);
  if (t_scopes.empty())
    raise(Code::FailedPrecondition, "{}: this thread has no strategy scope open (enter one with cairn_strategy_scope_enter)",
          fn);
  if (t_scopes.back().strategy != &strategy)
    raise(Code::FailedPrecondition,
          "{}: the innermost strategy scope of this thread belongs to another strategy; exit scopes in the reverse "
          "order of entering them",
          fn);
  t_scopes.pop_back();
  CAIRN_API_END
}

cairn_status* cairn_strategy_run(cairn_strategy* s, cairn_replica_fn fn_user, void* user_data, cairn_tensor** outputs,
                                 size_t n_outputs) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_strategy_run";
  MirroredStrategy& strategy = require_strategy(s, fn);
  require(fn_user, fn, "fn");
  if (n_outputs > 0) require(outputs, fn, "outputs");
  const size_t replicas = static_cast<size_t>(strategy.num_replicas());
  if (n_outputs % replicas != 0)
    raise(Code::InvalidArgument, "{}: n_outputs is {}, not a multiple of the {} replicas (one slot per output of each)",
          fn, n_outputs, replicas);
  const size_t per_replica = n_outputs / replicas;
  auto results = strategy.run_multi([&](ReplicaContext& rc) {
    cairn_context handle{Ref<Context>::share(&rc.context())};
    cairn_replica_context replica{&rc, s->names[static_cast<size_t>(rc.replica_id())].c_str()};
    std::vector<cairn_tensor*> outs(per_replica, nullptr);
    cairn_status* st = fn_user(user_data, &handle, &replica, outs.data(), per_replica);
    std::vector<std::unique_ptr<cairn_tensor>> owned;
    for (cairn_tensor* t : outs) owned.emplace_back(t);
    if (st) capi::raise_user_status(st);
    std::vector<Tensor> values;
    for (size_t k = 0; k < per_replica; ++k) {
      if (!owned[k]) raise(Code::InvalidArgument, "the replica function left output {} of {} unset", k, per_replica);
      values.push_back(owned[k]->t);
    }
    return values;
  });
  for (size_t r = 0; r < results.size(); ++r)
    for (size_t k = 0; k < per_replica; ++k) outputs[r * per_replica + k] = new_tensor(results[r][k]);
  CAIRN_API_END
}

int32_t cairn_replica_id(const cairn_replica_context* replica) { return replica ? replica->rc->replica_id() : -1; }

const char* cairn_replica_device(const cairn_replica_context* replica) { return replica ? replica->device : nullptr; }

cairn_status* cairn_replica_all_reduce(cairn_replica_context* replica, cairn_reduction reduction,
                                       cairn_tensor* const* values, size_t n, cairn_tensor** outputs) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_replica_all_reduce";
  require(replica, fn, "replica");
  const distribute::Reduction r = reduction_of(reduction, fn);
  std::vector<Tensor> in = tensors_of(values, n, fn, "values");
  if (n > 0) require(outputs, fn, "outputs");
  std::vector<Tensor> reduced = replica->rc->all_reduce(r, in);
  for (size_t i = 0; i < n; ++i) outputs[i] = new_tensor(std::move(reduced[i]));
  CAIRN_API_END
}

cairn_status* cairn_strategy_reduce(cairn_strategy* s, cairn_reduction reduction, cairn_tensor* const* values,
                                    size_t n, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_strategy_reduce";
  require(out, fn, "out");
  *out = nullptr;
  MirroredStrategy& strategy = require_strategy(s, fn);
  const distribute::Reduction r = reduction_of(reduction, fn);
  if (n != static_cast<size_t>(strategy.num_replicas()))
    raise(Code::InvalidArgument, "{}: {} values for {} replicas; give one per replica", fn, n, strategy.num_replicas());
  distribute::PerReplica per{tensors_of(values, n, fn, "values")};
  *out = new_tensor(strategy.reduce(r, per));
  CAIRN_API_END
}

cairn_status* cairn_strategy_split_batch(cairn_strategy* s, const cairn_tensor* global, cairn_tensor** parts,
                                         size_t n_parts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_strategy_split_batch";
  MirroredStrategy& strategy = require_strategy(s, fn);
  require(global, fn, "global");
  require(parts, fn, "parts");
  if (n_parts != static_cast<size_t>(strategy.num_replicas()))
    raise(Code::InvalidArgument, "{}: n_parts is {}, but the strategy has {} replicas (one part each)", fn, n_parts,
          strategy.num_replicas());
  std::vector<Tensor> split = strategy.split_batch(global->t, fn);
  for (size_t r = 0; r < split.size(); ++r) parts[r] = new_tensor(std::move(split[r]));
  CAIRN_API_END
}

cairn_status* cairn_strategy_iterator_next(cairn_strategy* s, cairn_object* it, cairn_tensor** parts,
                                           size_t n_parts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_strategy_iterator_next";
  MirroredStrategy& strategy = require_strategy(s, fn);
  auto& iter = capi::require_as<data::IteratorObject>(it, fn, "it", "an iterator");
  const size_t n = iter.dataset()->spec().size();
  const size_t replicas = static_cast<size_t>(strategy.num_replicas());
  if (n_parts != n * replicas)
    raise(Code::InvalidArgument, "{}: n_parts is {}, but {} replicas of {} ({} components: {}) need {}", fn, n_parts,
          replicas, iter.dataset()->describe(), n, iter.dataset()->spec().text(), n * replicas);
  require(parts, fn, "parts");
  data::Element e;
  if (!iter.next(e)) raise(Code::OutOfRange, "{}: end of data", iter.dataset()->describe());
  std::vector<std::vector<Tensor>> split;
  for (size_t c = 0; c < n; ++c) split.push_back(strategy.split_batch(e[c], fn));
  for (size_t r = 0; r < replicas; ++r)
    for (size_t c = 0; c < n; ++c) parts[r * n + c] = new_tensor(split[c][r]);
  CAIRN_API_END
}

cairn_status* cairn_compute_average_loss(cairn_context* ctx, const cairn_tensor* per_example_loss,
                                         int64_t global_batch_size, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_compute_average_loss";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  require(per_example_loss, fn, "per_example_loss");
  if (global_batch_size < 1)
    raise(Code::InvalidArgument, "{}: global_batch_size must be at least 1, got {}", fn, global_batch_size);
  *out = new_tensor(MirroredStrategy::compute_average_loss(*ctx->ctx, per_example_loss->t, global_batch_size));
  CAIRN_API_END
}

}  // extern "C"
