// The CollectiveAllReduce op: a group's all-reduce as a registered, stateful op, so eager code and
// traced functions (where graph passes keep it and replays run it in trace order) both reach the
// group's Collective. CPU kernel: the collective reads and writes the tensors' host memory. Vulkan
// kernel: through host staging (read the input, reduce on the host, write the output).
#include <vector>

#include "runtime/autodiff/gradient.h"
#include "runtime/distribute/collective.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"
#include "runtime/track/mirroring.h"

namespace cairn::distribute {
namespace {

constexpr DTypeSet kReducible = dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16) |
                                dtype_bit(DType::Float32) | dtype_bit(DType::Float64) | dtype_bit(DType::Int32) |
                                dtype_bit(DType::Int64);

// The attributes of every all-reduce op: the dtype and the group, and the reduction where it has one.
OpBuilder& group_attrs(OpBuilder& b, bool reduction = true) {
  b.type_attr("T", kReducible).int_attr_required("group_key", 1).int_attr_required("group_size", 1);
  if (reduction) b.string_attr("reduction", "sum", {"sum", "mean", "min", "max"});
  return b;
}

OpBuilder all_reduce_op() {
  OpBuilder b("CollectiveAllReduce");
  b.summary(
       "The all-reduce of `input` across the members of collective group `group_key` (a MirroredStrategy's "
       "replicas): every member gets the reduction (sum, mean, min or max) of all members' inputs, reduced in "
       "member order. Stateful: graph passes keep every call, in order.")
      .input("input", "T")
      .output("output", "T");
  group_attrs(b).shape(shapes::unchanged).stateful();
  return b;
}

CAIRN_REGISTER_OP(all_reduce_op());

// The group and this call's member, checked against the attributes.
std::pair<Ref<Collective>, int> member(KernelContext& kc) {
  const int64_t key = kc.attrs.i("group_key");
  const int64_t size = kc.attrs.i("group_size");
  Ref<Collective> group = find_collective(key);
  if (!group)
    raise(Code::FailedPrecondition,
          "{}: no collective group {} (its strategy was destroyed; a function traced under it cannot run)", kc.op(),
          key);
  if (group->size() != size)
    raise(Code::InvalidArgument, "{}: group {} has {} members, the op says group_size {}", kc.op(), key,
          group->size(), size);
  const int rank = group->rank_of(kc.device);
  if (rank < 0)
    raise(Code::InvalidArgument, "{}: device {} is not a member of collective group {} (pass a tensor on the "
          "replica's device)", kc.op(), kc.device.name(), key);
  const int replica = ReplicaScope::current();
  if (replica >= 0 && replica != group->local_index(rank))
    raise(Code::InvalidArgument,
          "{}: replica {} passed a tensor on {}, replica {}'s device; each replica all-reduces its own values",
          kc.op(), replica, kc.device.name(), rank);
  return {group, rank};
}

void all_reduce_kernel(KernelContext& kc) {
  auto [group, rank] = member(kc);
  const Reduction reduction = parse_reduction(kc.attrs.s("reduction"), kc.op());
  const Tensor& in = kc.input(0);
  Tensor& out = kc.output(0);
  const DType dtype = in.dtype();
  const int64_t count = in.num_elements();
  if (kc.device.is_host()) {
    group->all_reduce(rank, dtype, count, in.valid() ? in.raw_data() : nullptr,
                      out.valid() ? out.raw_mutable_data() : nullptr, reduction);
    return;
  }
  // Host staging (Vulkan): the device's read waits for the work producing the input.
  const size_t nbytes = in.nbytes();
  std::vector<unsigned char> host_in(nbytes), host_out(nbytes);
  if (nbytes) kc.device.read(*in.buffer(), host_in.data(), nbytes);
  group->all_reduce(rank, dtype, count, host_in.data(), host_out.data(), reduction);
  if (nbytes) kc.device.write(*out.buffer(), host_out.data(), nbytes);
}

CAIRN_REGISTER_KERNEL("CollectiveAllReduce", DeviceKind::CPU, all_reduce_kernel);
CAIRN_REGISTER_KERNEL("CollectiveAllReduce", DeviceKind::Vulkan, all_reduce_kernel);

// The split form (gradient buckets): Start hands the input to the group and returns a ticket;
// Done waits for the ticket's result. A graph pass (order_split_collectives) moves the Starts
// early and the Dones late so a compiled step's backward pass runs between them. CPU only: a
// Vulkan replica's buffers go through host staging, which waits anyway.
OpBuilder all_reduce_start_op() {
  OpBuilder b("CollectiveAllReduceStart");
  b.summary(
       "Starts the all-reduce of `input` across collective group `group_key` (as CollectiveAllReduce) and returns "
       "a ticket for CollectiveAllReduceDone; the group may reduce while later ops run. Stateful.")
      .input("input", "T")
      .output("ticket", DType::Int64);
  group_attrs(b).shape(shapes::scalar).stateful();
  return b;
}

CAIRN_REGISTER_OP(all_reduce_start_op());

// output 0 has the dtype and shape of input 1 (the started all-reduce's input).
void like_input_1(ShapeContext& c) { c.set_out(0, c.in(1)); }

OpBuilder all_reduce_done_op() {
  OpBuilder b("CollectiveAllReduceDone");
  b.summary(
       "Waits for the all-reduce that CollectiveAllReduceStart returned `ticket` for, and returns its result, shaped "
       "as `like` (that Start's input; only its shape is read). Stateful.")
      .input("ticket", DType::Int64)
      .input("like", "T")
      .output("output", "T");
  group_attrs(b, /*reduction=*/false).shape(like_input_1).stateful();
  return b;
}

CAIRN_REGISTER_OP(all_reduce_done_op());

void all_reduce_start_kernel(KernelContext& kc) {
  auto [group, rank] = member(kc);
  const Tensor& in = kc.input(0);
  kc.output(0).mutable_data<int64_t>()[0] = static_cast<int64_t>(group->start_all_reduce(
      rank, in.dtype(), in.num_elements(), in.valid() ? in.raw_data() : nullptr,
      parse_reduction(kc.attrs.s("reduction"), kc.op())));
}

void all_reduce_done_kernel(KernelContext& kc) {
  const Tensor& ticket = kc.input(0);
  if (ticket.num_elements() != 1)
    raise(Code::InvalidArgument, "{}: the ticket must be CollectiveAllReduceStart's scalar, got shape {}", kc.op(),
          ticket.shape().str());
  auto [group, rank] = member(kc);
  Tensor& out = kc.output(0);
  group->finish_all_reduce(static_cast<uint64_t>(ticket.data<int64_t>()[0]), out.num_elements(),
                           out.valid() ? out.raw_mutable_data() : nullptr);
}

CAIRN_REGISTER_KERNEL("CollectiveAllReduceStart", DeviceKind::CPU, all_reduce_start_kernel);
CAIRN_REGISTER_KERNEL("CollectiveAllReduceDone", DeviceKind::CPU, all_reduce_done_kernel);

// y_r = reduce over replicas q of x_q, so dL/dx_r = sum over q of dL_q/dy_q (sum), or that over N
// (mean): the all-reduce of the upstream gradients with the same reduction (TensorFlow's rule).
// Every replica computes its gradient in the same order, so the gradient's collectives pair up.
// Min and max have no gradient here.
void all_reduce_grad(GradContext& g) {
  const std::string_view reduction = g.attrs.s("reduction");
  if (reduction != "sum" && reduction != "mean")
    raise(Code::Unimplemented, "CollectiveAllReduce: no gradient for reduction \"{}\" (only sum and mean)",
          reduction);
  g.set(0, run_op(g.ctx, "CollectiveAllReduce", {g.dy()},
                  {attr_int("group_key", g.attrs.i("group_key")), attr_int("group_size", g.attrs.i("group_size")),
                   attr_string("reduction", reduction)})[0]);
}

CAIRN_REGISTER_GRADIENT("CollectiveAllReduce", all_reduce_grad);

}  // namespace
}  // namespace cairn::distribute
