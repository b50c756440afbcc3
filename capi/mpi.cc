// The C API's collectives across processes (cairn_mpi_*): MpiCollective (docs/mpi.md) on tensors.
// Every call stages through host memory: a CPU tensor is used where it lies, a Vulkan tensor is
// read to the host first, and the result is written back to the input's device.
#include <chrono>
#include <cstring>
#include <vector>

#include "capi/internal/handles.h"
#include "capi/internal/reduction.h"
#include "runtime/distribute/mpi_collective.h"

using namespace cairn;
using cairn::capi::new_tensor;
using cairn::capi::require;
using distribute::MpiCollective;

struct cairn_mpi {
  Ref<Context> ctx;
  Ref<MpiCollective> group;
};

namespace {

distribute::MpiOptions options_of(int64_t timeout_ms, const char* fn) {
  if (timeout_ms < 1) raise(Code::InvalidArgument, "{}: timeout_ms must be at least 1, got {}", fn, timeout_ms);
  distribute::MpiOptions o;
  o.timeout = std::chrono::milliseconds(timeout_ms);
  o.name = fn;
  return o;
}

// The input's values in host memory, and the host device.
Tensor on_host(cairn_mpi& m, const cairn_tensor* value, const char* fn) {
  require(value, fn, "value");
  return host_values(value->t, m.ctx->cpu(), fn);
}

// `host` back on `like`'s device.
cairn_tensor* like_input(const Tensor& host, const cairn_tensor* like) {
  Device* device = like->t.device();
  return new_tensor(device ? tensor_on_device(host, *device) : host);
}

}  // namespace

extern "C" {

cairn_status* cairn_mpi_init(cairn_context* ctx, int64_t timeout_ms, cairn_mpi** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mpi_init";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  Ref<MpiCollective> group = MpiCollective::init_world({&ctx->ctx->cpu()}, options_of(timeout_ms, fn));
  *out = new cairn_mpi{ctx->ctx, group};
  CAIRN_API_END
}

cairn_status* cairn_mpi_adopt(cairn_context* ctx, void* mpi_comm, int64_t timeout_ms, cairn_mpi** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mpi_adopt";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  Ref<MpiCollective> group = MpiCollective::adopt(reinterpret_cast<uintptr_t>(mpi_comm), {&ctx->ctx->cpu()},
                                                  options_of(timeout_ms, fn));
  *out = new cairn_mpi{ctx->ctx, group};
  CAIRN_API_END
}

void cairn_mpi_free(cairn_mpi* mpi) { delete mpi; }

int32_t cairn_mpi_rank(const cairn_mpi* mpi) { return mpi ? mpi->group->rank() : -1; }

int32_t cairn_mpi_size(const cairn_mpi* mpi) { return mpi ? mpi->group->size() : 0; }

cairn_status* cairn_mpi_all_reduce(cairn_mpi* mpi, cairn_reduction reduction, const cairn_tensor* value,
                                   cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mpi_all_reduce";
  require(out, fn, "out");
  *out = nullptr;
  cairn_mpi& m = *require(mpi, fn, "mpi");
  const distribute::Reduction r = capi::reduction_of(reduction, fn);
  const Tensor in = on_host(m, value, fn);
  Tensor result = Tensor::allocate(m.ctx->cpu(), in.dtype(), in.shape());
  m.group->all_reduce(m.group->rank(), in.dtype(), in.num_elements(), in.raw_data(), result.raw_mutable_data(),
                      r);
  *out = like_input(result, value);
  CAIRN_API_END
}

cairn_status* cairn_mpi_broadcast(cairn_mpi* mpi, int32_t root, const cairn_tensor* value, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mpi_broadcast";
  require(out, fn, "out");
  *out = nullptr;
  cairn_mpi& m = *require(mpi, fn, "mpi");
  const Tensor in = on_host(m, value, fn);
  Tensor result = Tensor::allocate(m.ctx->cpu(), in.dtype(), in.shape());
  if (in.nbytes()) std::memcpy(result.raw_mutable_data(), in.raw_data(), in.nbytes());
  m.group->broadcast(m.group->rank(), root, in.dtype(), in.num_elements(), result.raw_mutable_data());
  *out = like_input(result, value);
  CAIRN_API_END
}

cairn_status* cairn_mpi_all_gather(cairn_mpi* mpi, const cairn_tensor* value, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mpi_all_gather";
  require(out, fn, "out");
  *out = nullptr;
  cairn_mpi& m = *require(mpi, fn, "mpi");
  const Tensor in = on_host(m, value, fn);
  const Shape& s = in.shape();
  std::vector<int64_t> dims(s.dims(), s.dims() + s.rank());
  if (dims.empty()) dims.push_back(1);
  dims[0] *= m.group->size();
  Tensor result = Tensor::allocate(m.ctx->cpu(), in.dtype(), Shape::from(dims.data(), dims.size(), fn));
  m.group->all_gather(m.group->rank(), in.dtype(), in.num_elements(), in.raw_data(), result.raw_mutable_data());
  *out = like_input(result, value);
  CAIRN_API_END
}

cairn_status* cairn_mpi_barrier(cairn_mpi* mpi) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_mpi_barrier";
  cairn_mpi& m = *require(mpi, fn, "mpi");
  m.group->barrier(m.group->rank());
  CAIRN_API_END
}

}  // extern "C"
