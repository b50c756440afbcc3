// Gradient buckets: the plan (reverse order, per dtype, the size bound) and bucketed all-reduces
// that give the same bits as one buffer per dtype, on 2 and 4 logical CPU replicas.
#include <cstring>
#include <thread>

#include "runtime/autodiff/tape.h"
#include "runtime/distribute/collective.h"
#include "runtime/eager/dispatch.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "tests/runtime/distribute/distribute_test_util.h"

namespace cairn::test {
namespace {

using distribute::GradientBucket;
using distribute::MirroredOptions;
using distribute::MirroredStrategy;
using distribute::Reduction;
using distribute::ReplicaContext;
using distribute::plan_buckets;

Tensor zeros(DType dtype, int64_t n) { return make_as(dtype, std::vector<double>(static_cast<size_t>(n)), Shape{n}); }

std::vector<std::vector<size_t>> indices(const std::vector<GradientBucket>& plan) {
  std::vector<std::vector<size_t>> out;
  for (const GradientBucket& b : plan) out.push_back(b.indices);
  return out;
}

TEST_CASE("buckets: last tensor first, per dtype, at most bucket_bytes unless one tensor is larger") {
  // float32 of 4, 8, 2, 16 elements (16, 32, 8, 64 bytes), an int32 pair and an empty slot.
  std::vector<Tensor> v = {zeros(DType::Float32, 4), zeros(DType::Int32, 1), zeros(DType::Float32, 8), Tensor(),
                           zeros(DType::Float32, 2), zeros(DType::Int32, 3), zeros(DType::Float32, 16)};
  using L = std::vector<std::vector<size_t>>;
  CHECK(indices(plan_buckets(v, 0)) == L{{6, 4, 2, 0}, {5, 1}});
  // 40 bytes: 64 alone (larger than a bucket), then 8 + 32 = 40, then 16; the int32 (16 bytes) in one.
  std::vector<GradientBucket> plan = plan_buckets(v, 40);
  CHECK(indices(plan) == L{{6}, {4, 2}, {0}, {5, 1}});
  CHECK(plan[1].bytes == 40);
  CHECK(plan[1].dtype == DType::Float32);
  CHECK(plan[3].dtype == DType::Int32);
  CHECK(indices(plan_buckets(v, 1)) == L{{6}, {4}, {5}, {2}, {0}, {1}});  // in the order they fill up
  CHECK(plan_buckets({Tensor(), Tensor()}, 8).empty());
}

// Replica r's gradients: float32, float64 and int32 tensors of several shapes whose float sums
// round differently in another order, the same list on every replica.
std::vector<Tensor> gradients(ReplicaContext& rc) {
  const double k = rc.replica_id() + 1;
  std::vector<Tensor> g;
  for (int64_t n : {3, 64, 1, 17, 256, 5}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = (k * 1e7 + 0.1 * static_cast<double>(i)) / (k + 0.3 * i);
    g.push_back(tensor_on_device(make_as(n == 17 ? DType::Float64 : DType::Float32, v, Shape{n}), rc.device()));
  }
  g.push_back(tensor_on_device(make_as(DType::Int32, {k, -k, 7 * k, 9}, Shape{2, 2}), rc.device()));
  g.push_back(Tensor());
  g.push_back(tensor_on_device(make_as(DType::Float32, std::vector<double>(12, 0.1 * k), Shape{3, 4}), rc.device()));
  return g;
}

std::vector<std::vector<Tensor>> reduce_in_buckets(int replicas, size_t bucket_bytes, Reduction reduction) {
  Ref<Context> c = split_cpu(replicas);
  MirroredOptions o;
  o.bucket_bytes = bucket_bytes;
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", replicas), o);
  return s->run_multi([&](ReplicaContext& rc) { return rc.all_reduce(reduction, gradients(rc)); });
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.valid() != b.valid()) return false;
  if (!a.valid()) return true;
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST_CASE("bucketed all-reduces give the bits of one buffer per dtype, on every replica") {
  for (int replicas : {2, 4})
    for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
      CAPTURE(replicas);
      const std::vector<std::vector<Tensor>> one = reduce_in_buckets(replicas, 0, r);
      for (size_t bytes : {size_t{1}, size_t{64}, size_t{300}, size_t{25} << 20}) {
        CAPTURE(bytes);
        const std::vector<std::vector<Tensor>> got = reduce_in_buckets(replicas, bytes, r);
        for (size_t rep = 0; rep < got.size(); ++rep) {
          REQUIRE(got[rep].size() == one[0].size());
          for (size_t i = 0; i < got[rep].size(); ++i) {
            CAPTURE(i);
            CHECK(same_bits(got[rep][i], one[0][i]));
          }
        }
      }
    }
}

TEST_CASE("split all-reduces: started in order, finished in any order, errors at the finish") {
  Ref<Context> c = split_cpu(2);
  Ref<distribute::LocalCollective> g = make_ref<distribute::LocalCollective>(
      std::vector<Device*>{&c->device("cpu:0"), &c->device("cpu:1")}, std::chrono::milliseconds(2000));
  std::vector<float> got[2][2];
  auto member = [&](int rank) {
    const float a[2] = {1.0f + rank, 2.0f}, b[3] = {10.0f * rank, 1, 1};
    const uint64_t ta = g->start_all_reduce(rank, DType::Float32, 2, a, Reduction::Sum);
    const uint64_t tb = g->start_all_reduce(rank, DType::Float32, 3, b, Reduction::Max);
    got[rank][1].resize(3);
    got[rank][0].resize(2);
    g->finish_all_reduce(tb, 3, got[rank][1].data());
    g->finish_all_reduce(ta, 2, got[rank][0].data());
  };
  std::thread other(member, 1);
  member(0);
  other.join();
  for (int rank : {0, 1}) {
    CHECK(got[rank][0] == std::vector<float>{3, 4});
    CHECK(got[rank][1] == std::vector<float>{10, 1, 1});
  }
  CHECK_THROWS_CODE(g->finish_all_reduce(12345, 1, nullptr), Code::InvalidArgument,
                    "CollectiveAllReduceDone: no started all-reduce has ticket 12345");
}

TEST_CASE("the split ops refuse a bad ticket and a group that is gone") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  const std::vector<NamedAttr> group = {attr_int("group_key", s->group_key()), attr_int("group_size", 2)};
  Device& member0 = c->device("cpu:0");
  Tensor x = tensor_on_device(make<float>({1, 2}, Shape{2}), member0);
  Tensor pair = tensor_on_device(make<int64_t>({1, 2}, Shape{2}), member0);
  CHECK_THROWS_CODE(run_op(*c, "CollectiveAllReduceDone", {pair, x}, group),
                    Code::InvalidArgument, "CollectiveAllReduceDone: the ticket must be CollectiveAllReduceStart's scalar");
  CHECK_THROWS_CODE(run_op(*c, "CollectiveAllReduceDone", {tensor_on_device(make<int64_t>({7}, Shape{}), member0), x}, group),
                    Code::InvalidArgument,
                    "no started all-reduce has ticket 7");
  const std::vector<NamedAttr> gone = {attr_int("group_key", 999999), attr_int("group_size", 2)};
  CHECK_THROWS_CODE(run_op(*c, "CollectiveAllReduceStart", {x}, gone), Code::FailedPrecondition,
                    "CollectiveAllReduceStart: no collective group 999999");
}

TEST_CASE("a bucket that times out fails its finish with DeadlineExceeded naming the collective") {
  Ref<Context> c = split_cpu(2);
  Ref<distribute::LocalCollective> g = make_ref<distribute::LocalCollective>(
      std::vector<Device*>{&c->device("cpu:0"), &c->device("cpu:1")}, std::chrono::milliseconds(50));
  const float in[1] = {1};
  float out[1] = {0};
  const uint64_t t = g->start_all_reduce(0, DType::Float32, 1, in, Reduction::Sum);  // member 1 never comes
  CHECK_THROWS_CODE(g->finish_all_reduce(t, 1, out), Code::DeadlineExceeded,
                    "CollectiveAllReduce: all-reduce #0 across 2 replicas: timed out after 50 ms waiting for replica(s) 1");
  g->reset();
  const uint64_t again = g->start_all_reduce(0, DType::Float32, 1, in, Reduction::Sum);
  CHECK_THROWS_CODE(g->finish_all_reduce(again, 2, out), Code::InvalidArgument, "reduces 1 elements, the output has 2");
}

TEST_CASE("a strategy step whose bucket times out fails with DeadlineExceeded") {
  Ref<Context> c = split_cpu(2);
  MirroredOptions o;
  o.collective_timeout = std::chrono::milliseconds(100);
  o.bucket_bytes = 4;
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2), o);
  CHECK_THROWS_CODE(s->run_multi([&](ReplicaContext& rc) {
                      std::vector<Tensor> g = gradients(rc);
                      if (rc.replica_id() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(400));
                      return rc.all_reduce(Reduction::Sum, g);
                    }),
                    Code::DeadlineExceeded,
                    "all-reduce #0 across 2 replicas: timed out after 100 ms waiting for replica(s) 1");
}

// Where each op of `g` is: the positions of every node running `op`.
std::vector<int> positions(const graph::Graph& g, const std::string& op) {
  std::vector<int> out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == graph::NodeKind::Op && g.nodes[i].def->name == op) out.push_back(static_cast<int>(i));
  return out;
}

// A two-layer net's gradients reduced in one bucket per weight, in a traced replica step with the
// ordering pass on or off; returns the reduced gradients and checks the replicas agree.
std::vector<std::vector<double>> traced_step(bool order, std::shared_ptr<const graph::ConcreteFunction>* trace) {
  Ref<Context> c = split_cpu(2);
  MirroredOptions o;
  o.bucket_bytes = 1;
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2), o);
  Ref<Variable> w1, w2;
  {
    auto scope = s->scope();
    std::vector<float> a(24), b(12);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.2f * static_cast<float>(i % 5) - 0.4f;
    w1 = Variable::create(*c, make<float>(a, Shape{4, 6}));
    w2 = Variable::create(*c, make<float>(b, Shape{6, 2}));
  }
  graph::FunctionOptions fo;
  fo.passes.order_split_collectives = order;
  Ref<graph::Function> f = make_ref<graph::Function>(*c, "step", [&](Context& ctx, const std::vector<Tensor>& in) {
    GradientTape tape(ctx);
    Tensor h = op::tanh(ctx, op::matmul(ctx, in[0], w1->read()));
    Tensor loss = op::mean(ctx, op::square(ctx, op::matmul(ctx, h, w2->read())), {});
    return ReplicaContext::current()->all_reduce(Reduction::Sum, tape.gradient(loss, {w1, w2}));
  }, fo);
  auto out = s->run_multi([&](ReplicaContext& rc) {
    std::vector<double> x(12);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (rc.replica_id() + 1) * 0.25 * static_cast<double>(i % 4) - 0.5;
    return f->call({tensor_on_device(make_as(DType::Float32, x, Shape{3, 4}), rc.device())});
  });
  *trace = f->concretes()[0];
  std::vector<std::vector<double>> got;
  for (const Tensor& t : out[0]) got.push_back(as_doubles(t));
  for (size_t i = 0; i < out[1].size(); ++i) CHECK(same_bits(out[1][i], out[0][i]));
  return got;
}

TEST_CASE("the ordering pass starts a bucket's all-reduce before the rest of the backward pass, same results") {
  std::shared_ptr<const graph::ConcreteFunction> plain, ordered;
  const std::vector<std::vector<double>> a = traced_step(false, &plain), b = traced_step(true, &ordered);
  CHECK(a == b);
  // Without the pass the trace starts both buckets after the whole backward pass (its last MatMul,
  // w1's gradient); with it, w2's bucket starts before that MatMul, and each Done follows every Start.
  for (const auto* t : {&plain, &ordered}) {
    const graph::Graph& g = (*t)->graph();
    const std::vector<int> starts = positions(g, "CollectiveAllReduceStart");
    const std::vector<int> dones = positions(g, "CollectiveAllReduceDone"), matmuls = positions(g, "MatMul");
    REQUIRE(starts.size() == 2);
    REQUIRE(dones.size() == 2);
    REQUIRE(matmuls.size() >= 3);
    CHECK((starts[0] < matmuls.back()) == (t == &ordered));
    CHECK(starts[1] < dones[0]);
  }
}

}  // namespace
}  // namespace cairn::test
