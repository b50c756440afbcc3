// The multi-worker strategy (MirroredStrategy::multi_worker over an MpiCollective) under mpirun
// (tests/mpi/run.sh starts it on 2 ranks): one replica per process with the global replica count;
// all-reduce and reduce across the processes; variables broadcast from rank 0 and the replica
// check naming the first variable that differs; batches split by rank and gathered back; keras fit
// from different initial weights ending identical on every rank; the check failing inside fit when
// one rank's weights are changed; a rank that stops training making the others fail with
// DeadlineExceeded within the timeout; split all-reduces in order with the synchronous calls; fit
// with small gradient buckets giving the weights of one bucket; a bucket that times out. Every
// rank runs the cases in file order; the last releases the world communicator.
#include <chrono>

#include "runtime/distribute/mpi_collective.h"
#include "runtime/distribute/strategy.h"
#include "runtime/eager/dispatch.h"
#include "runtime/eager/ops.h"
#include "runtime/keras/model.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using distribute::MirroredStrategy;
using distribute::MpiCollective;
using distribute::MpiOptions;
using distribute::Reduction;
using distribute::ReplicaContext;

Ref<MpiCollective>& world() {
  static Ref<MpiCollective> w;
  if (!w) {
    MpiOptions o;
    o.timeout = std::chrono::milliseconds(30000);
    w = MpiCollective::init_world({&ctx().cpu()}, o);
  }
  return w;
}

Ref<MirroredStrategy> strategy(bool check_replicas = false, size_t bucket_bytes = size_t{25} << 20) {
  distribute::MirroredOptions o;
  o.check_replicas = check_replicas;
  o.bucket_bytes = bucket_bytes;
  return MirroredStrategy::multi_worker(ctx(), world(), "", o);
}

// n samples of 4 features in 3 classes, the same on every rank: class k has feature k raised.
std::pair<Tensor, Tensor> blobs(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n * 4));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    y[static_cast<size_t>(i)] = static_cast<int32_t>(i % 3);
    for (int j = 0; j < 4; ++j)
      x[static_cast<size_t>(i * 4 + j)] = static_cast<float>((i * 7 + j * 3) % 10) / 10.0f + (j == i % 3 ? 1.5f : 0.0f);
  }
  return {make<float>(x, Shape{n, 4}), make<int32_t>(y, Shape{n})};
}

// Dense(8, relu) -> Dense(3), made and compiled in `s`'s scope, its initializers seeded by `seed`.
Ref<keras::Model> classifier(MirroredStrategy& s, uint64_t seed) {
  auto scope = s.scope();
  Ref<keras::Model> m = keras::Model::create(ctx(), "classifier");
  nn::DenseOptions d;
  d.units = 8;
  d.activation = nn::Activation::Relu;
  d.kernel_initializer.seed = seed;
  m->add(nn::dense(ctx(), d));
  d.units = 3;
  d.activation = nn::Activation::Linear;
  d.kernel_initializer.seed = seed + 100;
  m->add(nn::dense(ctx(), d));
  optim::OptimizerOptions o;
  o.kind = optim::Kind::Adam;
  o.learning_rate = 0.05;
  keras::CompileOptions c;
  c.optimizer = optim::Optimizer::create(ctx(), o);
  c.loss = "sparse_categorical_crossentropy";
  c.metrics = {"accuracy"};
  m->compile(c);
  return m;
}

keras::FitOptions quiet(int64_t epochs) {
  keras::FitOptions o;
  o.epochs = epochs;
  o.batch_size = 16;
  o.shuffle = false;
  o.verbose = keras::Verbose::Silent;
  return o;
}

TEST_CASE("one replica per process: the global count, this rank's replica id, collectives across processes") {
  CHECK_THROWS_CODE(MirroredStrategy::multi_worker(ctx(), nullptr), Code::InvalidArgument,
                    "MirroredStrategy::multi_worker: the workers' collective is null");
  Ref<MirroredStrategy> s = strategy();
  const int rank = world()->rank(), size = world()->size();
  CHECK(s->is_multi_worker());
  CHECK(s->num_replicas() == size);
  CHECK(s->num_local_replicas() == 1);
  CHECK(s->first_replica() == rank);
  CHECK(s->is_chief() == (rank == 0));
  distribute::PerReplica ids = s->run([&](ReplicaContext& rc) {
    CHECK(rc.replica_id() == rank);
    CHECK(rc.local_replica() == 0);
    CHECK(rc.num_replicas() == size);
    return rc.all_reduce(Reduction::Sum, make<float>({static_cast<float>(rank + 1)}, Shape{1}));
  });
  REQUIRE(ids.size() == 1);
  CHECK(as_doubles(ids[0]) == std::vector<double>{size * (size + 1) / 2.0});
  Tensor mean = s->reduce(Reduction::Mean, distribute::PerReplica{{make<float>({static_cast<float>(rank)}, Shape{})}});
  CHECK(as_doubles(mean)[0] == doctest::Approx((size - 1) / 2.0));
  CHECK(s->sum_over_workers(1.5) == 1.5 * size);
}

TEST_CASE("variables broadcast from rank 0; the replica check names the first variable that differs") {
  Ref<MirroredStrategy> s = strategy();
  const int rank = world()->rank();
  Ref<Variable> same, own;
  {
    auto scope = s->scope();
    VariableOptions o;
    o.name = "same";
    same = Variable::create(ctx(), make<float>({1, 2}, Shape{2}), o);
    o.name = "own";
    own = Variable::create(ctx(), make<float>({static_cast<float>(rank), 5}, Shape{2}), o);
  }
  CHECK_THROWS_CODE(s->check_replicas_identical({same, own}, "my_check"), Code::Internal,
                    "my_check: the workers' weights differ: variable 'own");
  s->broadcast_variables({same, own});
  CHECK(as_doubles(own->read()) == std::vector<double>{0, 5});
  s->check_replicas_identical({same, own});
}

TEST_CASE("split_batch gives each rank its replica's rows; gather_batch joins them in rank order") {
  Ref<MirroredStrategy> s = strategy();
  const int64_t rank = world()->rank(), size = world()->size(), rows = 2 * size + 1;
  std::vector<float> v;
  for (int64_t i = 0; i < rows * 2; ++i) v.push_back(static_cast<float>(i));
  Tensor global = make<float>(v, Shape{rows, 2});
  std::vector<Tensor> mine = s->split_batch(global);
  REQUIRE(mine.size() == 1);
  const int64_t begin = rank * 2 + std::min<int64_t>(rank, 1), count = rank == 0 ? 3 : 2;
  CHECK(mine[0].shape() == Shape{count, 2});
  CHECK(as_doubles(mine[0])[0] == static_cast<double>(begin * 2));
  Tensor back = s->gather_batch(mine, rows);
  CHECK(back.shape() == Shape{rows, 2});
  CHECK(as_doubles(back) == as_doubles(global));
  CHECK_THROWS_CODE(s->split_batch(make<float>({1}, Shape{1})), Code::InvalidArgument,
                    "smaller than the " + std::to_string(size) + " replicas");
}

TEST_CASE("fit: ranks that start from different weights end every step identical") {
  Ref<MirroredStrategy> s = strategy(/*check_replicas=*/true);
  auto [x, y] = blobs(48);
  Ref<keras::Model> m = classifier(*s, 1 + static_cast<uint64_t>(world()->rank()));
  keras::History h = m->fit(keras::Data{nullptr, x, y}, quiet(3));
  REQUIRE(h.get("loss"));
  CHECK(h.get("loss")->back() < h.get("loss")->front());
  s->check_replicas_identical(m->weights());
  keras::EvaluateOptions e;
  e.batch_size = 7;  // a last batch of 6 rows: uneven parts gathered back
  keras::Logs logs = m->evaluate(keras::Data{nullptr, x, y}, e);
  CHECK(s->sum_over_workers(*logs.get("loss")) == doctest::Approx(*logs.get("loss") * world()->size()));
  CHECK(m->predict(keras::Data{nullptr, x, Tensor()}, {}).shape() == Shape{48, 3});
}

// On one rank, bumps the first weight after the first batch: the replicas diverge.
class Diverge final : public keras::Callback {
 public:
  void on_train_batch_end(keras::Model& m, int64_t batch, const keras::Logs&) override {
    if (batch == 0) m.weights()[0]->assign_add(op::ones_like(ctx(), m.weights()[0]->read()));
  }
};

TEST_CASE("the replica check fails fit on every rank, naming the variable, when one rank's weights change") {
  Ref<MirroredStrategy> s = strategy(/*check_replicas=*/true);
  auto [x, y] = blobs(48);
  Ref<keras::Model> m = classifier(*s, 1);
  keras::FitOptions o = quiet(1);
  if (world()->rank() == world()->size() - 1) o.callbacks.push_back(make_ref<Diverge>());
  CHECK_THROWS_CODE(m->fit(keras::Data{nullptr, x, y}, o), Code::Internal,
                    "train_step: the workers' weights differ: variable '" + m->weights()[0]->name() + "'");
}

TEST_CASE("a rank that stops training: the others' fit fails with DeadlineExceeded within the timeout") {
  MpiOptions lo;
  lo.timeout = std::chrono::milliseconds(1000);
  lo.name = "late";
  Ref<MpiCollective> late = MpiCollective::init_world({&ctx().cpu()}, lo);
  Ref<MirroredStrategy> s = MirroredStrategy::multi_worker(ctx(), late);
  auto [x, y] = blobs(48);
  Ref<keras::Model> m = classifier(*s, 1);
  m->fit(keras::Data{nullptr, x, y}, quiet(1));
  if (late->rank() != late->size() - 1) {  // the last rank has gone
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_CODE(m->fit(keras::Data{nullptr, x, y}, quiet(1)), Code::DeadlineExceeded,
                      "late: all-reduce #");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
  world()->barrier(world()->rank());
}

TEST_CASE("split all-reduces run in submission order with the synchronous calls between them") {
  const int rank = world()->rank(), size = world()->size();
  const std::vector<float> a(1000, 1.0f + rank);
  const int64_t b = rank;
  const uint64_t ta = world()->start_all_reduce(rank, DType::Float32, 1000, a.data(), Reduction::Sum);
  const uint64_t tb = world()->start_all_reduce(rank, DType::Int64, 1, &b, Reduction::Max);
  double sum = 0;
  const double one = 1;
  world()->all_reduce(rank, DType::Float64, 1, &one, &sum, Reduction::Sum);  // queued behind the two
  std::vector<float> ra(1000);
  int64_t rb = -1;
  world()->finish_all_reduce(tb, 1, &rb);
  world()->finish_all_reduce(ta, 1000, ra.data());
  CHECK(sum == size);
  CHECK(rb == size - 1);
  CHECK(ra == std::vector<float>(1000, static_cast<float>(size * (size + 1) / 2)));
  const distribute::MpiStats st = world()->stats();
  CHECK(st.blocked_seconds > 0);
  CHECK(st.seconds > 0);
}

TEST_CASE("fit with small gradient buckets: the weights of one bucket, bit for bit, on every rank") {
  auto [x, y] = blobs(48);
  std::vector<std::vector<double>> weights[2];
  for (size_t bytes : {size_t{0}, size_t{64}}) {  // one bucket; a bucket per tensor or two
    Ref<MirroredStrategy> s = strategy(/*check_replicas=*/true, bytes);
    Ref<keras::Model> m = classifier(*s, 1 + static_cast<uint64_t>(world()->rank()));
    m->fit(keras::Data{nullptr, x, y}, quiet(2));
    s->check_replicas_identical(m->weights());
    for (const Ref<Variable>& v : m->weights()) weights[bytes != 0].push_back(as_doubles(v->read()));
  }
  REQUIRE(weights[0].size() == 4);
  CHECK(weights[0] == weights[1]);
}

TEST_CASE("a bucket that times out fails with DeadlineExceeded naming the collective") {
  MpiOptions lo;
  lo.timeout = std::chrono::milliseconds(500);
  lo.name = "bucket";
  Ref<MpiCollective> g = MpiCollective::init_world({&ctx().cpu()}, lo);
  if (g->rank() != g->size() - 1) {  // the last rank never starts its part
    const float in = 1;
    float out = 0;
    const uint64_t t = g->start_all_reduce(g->rank(), DType::Float32, 1, &in, Reduction::Sum);
    CHECK_THROWS_CODE(g->finish_all_reduce(t, 1, &out), Code::DeadlineExceeded,
                      "bucket: all-reduce #0 on rank " + std::to_string(g->rank()) + " of " + std::to_string(g->size()) +
                          ": timed out after 500 ms");
  }
  world()->barrier(world()->rank());
}

TEST_CASE("last: the world communicator is released and Cairn's MPI_Init is finalized") {
  world()->barrier(world()->rank());
  world() = nullptr;
}

}  // namespace
}  // namespace cairn::test
