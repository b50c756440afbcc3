// Collectives and MirroredStrategy::run: all-reduce results (sum, mean, min, max) on 2 and 4
// logical CPU devices and 2 logical Vulkan devices, bit-identical on every replica and independent
// of arrival order; the fused list form; traced all-reduces; broadcast, all-gather and barrier;
// timeouts, failing replicas, replicas that skip a collective and mismatched calls all end with
// clear errors, never a hang; bad devices.
#include <atomic>
#include <thread>

#include "runtime/autodiff/tape.h"
#include "runtime/distribute/collective.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "tests/runtime/distribute/distribute_test_util.h"

namespace cairn::test {
namespace {

using distribute::LocalCollective;
using distribute::MirroredOptions;
using distribute::MirroredStrategy;
using distribute::PerReplica;
using distribute::Reduction;
using distribute::ReplicaContext;

// Replica r's value: element i is (r + 1) * 0.1 + i (float32), different on every replica.
Tensor replica_value(ReplicaContext& rc, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (rc.replica_id() + 1) * 0.1f + static_cast<float>(i);
  return tensor_on_device(make<float>(v, Shape{n}), rc.device());
}

void check_all_reduce(Context& c, const std::vector<std::string>& devices) {
  Ref<MirroredStrategy> s = MirroredStrategy::create(c, devices);
  const int n = s->num_replicas();
  REQUIRE(n == static_cast<int>(devices.size()));
  for (Reduction red : {Reduction::Sum, Reduction::Mean, Reduction::Min, Reduction::Max}) {
    CAPTURE(distribute::reduction_name(red));
    PerReplica out = s->run([&](ReplicaContext& rc) {
      Tensor y = rc.all_reduce(red, replica_value(rc, 5));
      CHECK(y.device() == &rc.device());
      return y;
    });
    REQUIRE(out.size() == static_cast<size_t>(n));
    std::vector<float> want(5);
    for (int i = 0; i < 5; ++i) {
      // The reduction in replica order, in float32, as the collective computes it.
      float acc = 0.1f + i;
      for (int r = 1; r < n; ++r) {
        float v = (r + 1) * 0.1f + static_cast<float>(i);
        if (red == Reduction::Sum || red == Reduction::Mean) acc = acc + v;
        if (red == Reduction::Min) acc = std::min(acc, v);
        if (red == Reduction::Max) acc = std::max(acc, v);
      }
      if (red == Reduction::Mean) acc = acc / static_cast<float>(n);
      want[static_cast<size_t>(i)] = acc;
    }
    for (int r = 0; r < n; ++r) {
      CHECK(out[static_cast<size_t>(r)].device()->name() == devices[static_cast<size_t>(r)]);
      CHECK(values<float>(tensor_on_device(out[static_cast<size_t>(r)], c.cpu())) == want);  // bit-equal
    }
  }
}

TEST_CASE("all_reduce on 2 and 4 logical CPU devices: sum, mean, min, max, the same bits on every replica") {
  for (int n : {2, 4}) {
    CAPTURE(n);
    Ref<Context> c = split_cpu(n);
    check_all_reduce(*c, names("cpu", n));
  }
}

TEST_CASE("all_reduce on 2 logical Vulkan devices (host staging)") {
  Ref<Context> c = split_vulkan(2);
  if (!c) return;  // no Vulkan driver
  check_all_reduce(*c, names("vulkan", 2));
}

TEST_CASE("the result does not depend on the order replicas arrive in") {
  Ref<Context> c = split_cpu(4);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 4));
  // Values whose float sum depends on the order: 1e8, 1, -1e8, 1.
  const float vals[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  std::vector<float> first;
  for (int trial = 0; trial < 6; ++trial) {
    std::atomic<int> turn{0};
    PerReplica out = s->run([&](ReplicaContext& rc) {
      // Replicas arrive in a different order each trial: replica (trial + k) % 4 goes k-th.
      const int my_turn = (rc.replica_id() - trial % 4 + 4) % 4;
      Tensor x = tensor_on_device(make<float>({vals[rc.replica_id()]}, Shape{1}), rc.device());
      while (turn.load() != my_turn) std::this_thread::yield();
      // Arrival is registered inside all_reduce; the next replica may go once this one is in.
      std::thread release([&] { turn.store(my_turn + 1); });
      Tensor y = rc.all_reduce(Reduction::Sum, x);
      release.join();
      return y;
    });
    std::vector<float> got;
    for (const Tensor& t : out.values) got.push_back(values<float>(tensor_on_device(t, c->cpu()))[0]);
    if (first.empty()) first = got;
    CHECK(got == first);
    CHECK(got[0] == ((1e8f + 1.0f) + -1e8f) + 1.0f);  // replica order 0, 1, 2, 3
  }
}

TEST_CASE("the list form reduces one buffer per dtype and keeps shapes and empty slots") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  auto out = s->run_multi([&](ReplicaContext& rc) {
    const double k = rc.replica_id() + 1;
    std::vector<Tensor> xs = {tensor_on_device(make_as(DType::Float32, {k, 2 * k, 3 * k, 4 * k}, Shape{2, 2}), rc.device()),
                              Tensor(),
                              tensor_on_device(make_as(DType::Int32, {static_cast<double>(rc.replica_id())}, Shape{}), rc.device()),
                              tensor_on_device(make_as(DType::Float32, {10 * k}, Shape{1}), rc.device())};
    return s->all_reduce_gradients(xs, Reduction::Sum);
  });
  for (const auto& r : out) {
    REQUIRE(r.size() == 4);
    CHECK(r[0].shape() == Shape{2, 2});
    CHECK(as_doubles(r[0]) == std::vector<double>{3, 6, 9, 12});
    CHECK(!r[1].valid());
    CHECK(as_doubles(r[2]) == std::vector<double>{1});
    CHECK(as_doubles(r[3]) == std::vector<double>{30});
  }
  CHECK_THROWS_CODE(s->all_reduce_gradients({}), Code::FailedPrecondition, "inside a step function");
}

TEST_CASE("a traced function runs the all-reduce inside its replayed graph, one trace per replica") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  Ref<graph::Function> f = make_ref<graph::Function>(*c, "allreduce_step", [](Context& ctx, const std::vector<Tensor>& in) {
    Tensor y = ReplicaContext::current()->all_reduce(Reduction::Sum, op::mul(ctx, in[0], in[0]));
    return std::vector<Tensor>{op::add(ctx, y, in[0])};
  });
  for (int step = 0; step < 3; ++step) {
    PerReplica out = s->run([&](ReplicaContext& rc) {
      Tensor x = tensor_on_device(make_as(DType::Float32, {rc.replica_id() + 1.0 + step}, Shape{1}), rc.device());
      return f->call({x})[0];
    });
    const double a = 1 + step, b = 2 + step;
    CHECK(as_doubles(out[0]) == std::vector<double>{a * a + b * b + a});
    CHECK(as_doubles(out[1]) == std::vector<double>{a * a + b * b + b});
    CHECK(out[1].device()->name() == "cpu:1");
  }
  CHECK(f->num_traces() == 2);
}

// Runs fn(rank) on one thread per member of a LocalCollective over n logical CPU devices.
template <class Fn>
void on_members(LocalCollective& g, int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { fn(r); });
  for (std::thread& t : threads) t.join();
}

Ref<LocalCollective> cpu_group(Context& c, int n, int timeout_ms = 5000) {
  std::vector<Device*> devices;
  for (int r = 0; r < n; ++r) devices.push_back(&c.device("cpu:" + std::to_string(r)));
  return make_ref<LocalCollective>(devices, std::chrono::milliseconds(timeout_ms));
}

TEST_CASE("broadcast, all_gather and barrier on 2 and 4 members of a LocalCollective") {
  for (int n : {2, 4}) {
    CAPTURE(n);
    Ref<Context> c = split_cpu(n);
    Ref<LocalCollective> g = cpu_group(*c, n);
    std::vector<std::vector<int64_t>> data(static_cast<size_t>(n)), gathered(static_cast<size_t>(n));
    on_members(*g, n, [&](int r) {
      std::vector<int64_t>& d = data[static_cast<size_t>(r)];
      d = {r * 10, r * 10 + 1, r * 10 + 2};
      g->barrier(r);
      g->broadcast(r, n - 1, DType::Int64, 3, d.data());
      std::vector<int64_t> mine = {r, -r};
      gathered[static_cast<size_t>(r)].resize(static_cast<size_t>(2 * n));
      g->all_gather(r, DType::Int64, 2, mine.data(), gathered[static_cast<size_t>(r)].data());
      g->barrier(r);
    });
    std::vector<int64_t> expect_gather;
    for (int r = 0; r < n; ++r) expect_gather.insert(expect_gather.end(), {r, -r});
    for (int r = 0; r < n; ++r) {
      CHECK(data[static_cast<size_t>(r)] == std::vector<int64_t>{(n - 1) * 10, (n - 1) * 10 + 1, (n - 1) * 10 + 2});
      CHECK(gathered[static_cast<size_t>(r)] == expect_gather);
    }
  }
}

TEST_CASE("a MirroredStrategy's replicas broadcast, all-gather and meet at a barrier through its collective") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  std::vector<std::vector<float>> seen(2);
  s->run([&](ReplicaContext& rc) {
    const int r = rc.replica_id();
    float mine[2] = {static_cast<float>(r), 10.0f + static_cast<float>(r)};
    s->collective().broadcast(r, 1, DType::Float32, 2, mine);  // replica 1's values everywhere
    std::vector<float>& all = seen[static_cast<size_t>(r)];
    all.resize(4);
    s->collective().all_gather(r, DType::Float32, 2, mine, all.data());
    s->collective().barrier(r);
    return rc.all_reduce(Reduction::Sum, replica_value(rc, 1));  // the op's calls keep counting
  });
  for (const std::vector<float>& all : seen) CHECK(all == std::vector<float>{1, 11, 1, 11});
}

TEST_CASE("members that disagree on the kind of collective or on its root get InvalidArgument") {
  Ref<Context> c = split_cpu(2);
  Ref<LocalCollective> g = cpu_group(*c, 2);
  std::vector<std::string> errors(2);
  on_members(*g, 2, [&](int r) {
    float v = 1;
    try {
      if (r == 0) g->broadcast(0, 0, DType::Float32, 1, &v);
      else g->barrier(1);
    } catch (const Error& e) {
      errors[static_cast<size_t>(r)] = e.message();
    }
  });
  for (const std::string& e : errors) CHECK(e.find("broadcast of 1 elements of float32 from member 0") != std::string::npos);
  CHECK(errors[1].find("barrier") != std::string::npos);
  g->reset();
  float v = 0;
  CHECK_THROWS_CODE(g->broadcast(0, 2, DType::Float32, 1, &v), Code::InvalidArgument, "no root member 2");
  CHECK_THROWS_CODE(g->all_gather(0, DType::String, 1, &v, &v), Code::InvalidArgument, "has no fixed size");
  CHECK_THROWS_CODE(g->barrier(3), Code::InvalidArgument, "no member 3");
}

TEST_CASE("a collective that times out names the replicas that did not arrive") {
  Ref<Context> c = split_cpu(3);
  Ref<LocalCollective> g = make_ref<LocalCollective>(
      std::vector<Device*>{&c->device("cpu:0"), &c->device("cpu:1"), &c->device("cpu:2")},
      std::chrono::milliseconds(50));
  float in = 1, out = 0;
  CHECK_THROWS_CODE(g->all_reduce(0, DType::Float32, 1, &in, &out, Reduction::Sum), Code::DeadlineExceeded,
                    "CollectiveAllReduce: all-reduce #0 across 3 replicas: timed out after 50 ms waiting for replica(s) 1, 2");
  // Late arrivals fail at once with the same status until the group is reset.
  CHECK_THROWS_CODE(g->all_reduce(1, DType::Float32, 1, &in, &out, Reduction::Sum), Code::DeadlineExceeded,
                    "replica(s) 1, 2");
  g->reset();
  CHECK(g->rank_of(c->device("cpu:2")) == 2);
  CHECK(g->rank_of(c->cpu()) == 0);
}

TEST_CASE("a strategy's collective timeout ends a step where one replica never joins") {
  Ref<Context> c = split_cpu(2);
  MirroredOptions o;
  o.collective_timeout = std::chrono::milliseconds(50);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2), o);
  // Replica 1 blocks in a second collective group that nobody else joins: replica 0 waits for it
  // in the strategy's group and times out; replica 1 then times out in its own.
  Ref<LocalCollective> other = make_ref<LocalCollective>(std::vector<Device*>{&c->device("cpu:0"), &c->device("cpu:1")},
                                                         std::chrono::milliseconds(2000));
  std::atomic<bool> released{false};
  auto step = [&](ReplicaContext& rc) {
    if (rc.replica_id() == 1) {
      float in = 0, out = 0;
      try {
        other->all_reduce(1, DType::Float32, 1, &in, &out, Reduction::Sum);
      } catch (const Error&) {
        released = true;
        throw;
      }
    }
    return rc.all_reduce(Reduction::Sum, replica_value(rc, 1));
  };
  // Replica 0's timeout comes first; its abort does not reach the other group, so replica 1 waits
  // there until that group's own timeout.
  CHECK_THROWS_CODE(s->run(step), Code::DeadlineExceeded,
                    "MirroredStrategy::run: replica 0 (cpu:0): CollectiveAllReduce: all-reduce #0 across 2 replicas: timed out after "
                    "50 ms waiting for replica(s) 1");
  CHECK(released);
  // The strategy works again afterwards.
  PerReplica ok = s->run([&](ReplicaContext& rc) { return rc.all_reduce(Reduction::Sum, replica_value(rc, 1)); });
  CHECK(as_doubles(ok[1])[0] == doctest::Approx(0.3));
}

TEST_CASE("a replica's tape ends while another replica waits in a collective") {
  // Replica 1 enters the all-reduce while replica 0's tape is installed on the context, so its op
  // goes through the hooks; replica 0 then destroys the tape, which waits until no op holds it.
  // Were the hook list held across the blocking kernel, the two would wait for each other until
  // the collective timed out.
  Ref<Context> c = split_cpu(2);
  MirroredOptions o;
  o.collective_timeout = std::chrono::milliseconds(5000);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2), o);
  std::atomic<bool> tape_installed{false};
  PerReplica out = s->run([&](ReplicaContext& rc) {
    Tensor x = replica_value(rc, 3);
    if (rc.replica_id() == 0) {
      {
        GradientTape tape(*c);
        tape_installed = true;
        // Long enough for replica 1 to be inside the kernel under the tape's hook snapshot.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      return rc.all_reduce(Reduction::Sum, x);
    }
    while (!tape_installed) std::this_thread::yield();
    return rc.all_reduce(Reduction::Sum, x);
  });
  CHECK(as_doubles(out[0])[0] == doctest::Approx(0.3));
  CHECK(as_doubles(out[1])[2] == doctest::Approx(4.3));
}

TEST_CASE("a host variable made in the scope follows each replica on a split CPU") {
  // An optimizer's hyperparameters live on the host; on cpu:1 a replica reads them from cpu:1, so
  // its ops never mix cpu:0 and cpu:1 (eager dispatch refuses that; a replay would run on cpu:0).
  Ref<Context> c = split_cpu(3);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, {"cpu:1", "cpu:2"});
  Ref<Variable> v;
  {
    auto scope = s->scope();
    VariableOptions vo;
    vo.device = &c->cpu();
    v = Variable::create(*c, make<float>({2}, Shape{}), vo);
  }
  CHECK(v->num_components() == 2);
  CHECK(v->component(0).device().name() == "cpu:1");
  CHECK(v->component(1).device().name() == "cpu:2");
  PerReplica out = s->run([&](ReplicaContext& rc) { return op::mul(*c, v->read(), replica_value(rc, 1)); });
  CHECK(out[1].device()->name() == "cpu:2");
  CHECK(as_doubles(out[1])[0] == doctest::Approx(0.4));
}

TEST_CASE("a failing replica releases the others and run throws its error, naming it") {
  Ref<Context> c = split_cpu(4);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 4));
  auto step = [&](ReplicaContext& rc) {
    if (rc.replica_id() == 2) raise(Code::InvalidArgument, "my_step: bad batch");
    return rc.all_reduce(Reduction::Sum, replica_value(rc, 3));
  };
  CHECK_THROWS_CODE(s->run(step), Code::InvalidArgument, "MirroredStrategy::run: replica 2 (cpu:2): my_step: bad batch");
  // The others were released with Aborted naming replica 2 (run reports the first failure only);
  // the next step runs normally.
  PerReplica ok = s->run([&](ReplicaContext& rc) { return rc.all_reduce(Reduction::Max, replica_value(rc, 1)); });
  for (const Tensor& t : ok.values) CHECK(as_doubles(t)[0] == doctest::Approx(0.4));
  // A non-cairn exception is reported too.
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) -> Tensor {
                      if (rc.replica_id() == 0) throw std::runtime_error("plain failure");
                      return rc.all_reduce(Reduction::Sum, replica_value(rc, 1));
                    }),
                    Code::Unknown, "replica 0 (cpu:0): plain failure");
}

TEST_CASE("the others see Aborted naming the failing replica") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  std::string seen;
  std::atomic<bool> failed_first{false};
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) -> Tensor {
                      if (rc.replica_id() == 1) raise(Code::NotFound, "lookup: no such key");
                      try {
                        return rc.all_reduce(Reduction::Sum, replica_value(rc, 1));
                      } catch (const Error& e) {
                        seen = e.message();
                        CHECK(e.code() == Code::Aborted);
                        throw;
                      }
                    }),
                    Code::NotFound, "replica 1 (cpu:1): lookup: no such key");
  CHECK(seen == "CollectiveAllReduce: all-reduce #0 across 2 replicas: replica 1 (cpu:1) failed: lookup: no such key");
  (void)failed_first;
}

TEST_CASE("a replica that skips a collective or passes a different size fails fast") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) -> Tensor {
                      if (rc.replica_id() == 1) return replica_value(rc, 1);
                      return rc.all_reduce(Reduction::Sum, replica_value(rc, 1));
                    }),
                    Code::FailedPrecondition, "replica(s) 1 finished the step without joining it");
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) {
                      return rc.all_reduce(Reduction::Sum, replica_value(rc, 1 + rc.replica_id()));
                    }),
                    Code::InvalidArgument, "every replica must issue the same collectives with the same dtype and size");
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) {
                      return rc.all_reduce(Reduction::Sum, make_as(DType::Bool, {1}, Shape{1}));
                    }),
                    Code::InvalidArgument, "CollectiveAllReduce");
  // Nested runs are refused.
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) {
                      s->run([](ReplicaContext& inner) { return replica_value(inner, 1); });
                      return replica_value(rc, 1);
                    }),
                    Code::FailedPrecondition, "called from inside replica");
}

TEST_CASE("the op refuses a tensor on another replica's device and a group that is gone") {
  Ref<Context> c = split_cpu(2);
  int64_t key = 0;
  {
    Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
    key = s->group_key();
    CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) {
                        Tensor on0 = tensor_on_device(make<float>({1}, Shape{1}), c->device("cpu:0"));
                        return run_op(*c, "CollectiveAllReduce", {on0},
                                      {attr_int("group_key", key), attr_int("group_size", 2)})[0];
                      }),
                      Code::InvalidArgument, "replica 1 passed a tensor on cpu:0, replica 0's device");
    CHECK_THROWS_CODE(run_op(*c, "CollectiveAllReduce", {make<float>({1}, Shape{1})},
                             {attr_int("group_key", key), attr_int("group_size", 3)}),
                      Code::InvalidArgument, "has 2 members, the op says group_size 3");
  }
  CHECK_THROWS_CODE(run_op(*c, "CollectiveAllReduce", {make<float>({1}, Shape{1})},
                           {attr_int("group_key", key), attr_int("group_size", 2)}),
                    Code::FailedPrecondition, "no collective group");
}

TEST_CASE("bad devices: unknown, duplicate, mixed types; the default is every device of the default type") {
  Ref<Context> c = split_cpu(2);
  CHECK_THROWS_CODE(MirroredStrategy::create(*c, {"cpu:0", "cpu:7"}), Code::NotFound, "MirroredStrategy: device \"cpu:7\"");
  CHECK_THROWS_CODE(MirroredStrategy::create(*c, {"cpu:1", "cpu:1"}), Code::InvalidArgument, "is given twice");
  CHECK_THROWS_CODE(MirroredStrategy::create(*c, {"cpu:0", "tpu:0"}), Code::NotFound, "tpu:0");
  MirroredOptions bad;
  bad.collective_timeout = std::chrono::milliseconds(0);
  CHECK_THROWS_CODE(MirroredStrategy::create(*c, {}, bad), Code::InvalidArgument, "collective_timeout");
  Ref<MirroredStrategy> all = MirroredStrategy::create(*c);
  CHECK(all->device_names() == names("cpu", 2));
  Ref<MirroredStrategy> one = MirroredStrategy::create(*c, {"cpu:1"});
  CHECK(one->num_replicas() == 1);
  PerReplica single = one->run([](ReplicaContext& rc) { return rc.all_reduce(Reduction::Mean, replica_value(rc, 2)); });
  CHECK(as_doubles(single[0]) == std::vector<double>{static_cast<double>(0.1f), static_cast<double>(1.1f)});

  Ref<Context> v = split_vulkan(1);
  if (v) {
    CHECK_THROWS_CODE(MirroredStrategy::create(*v, {"cpu", "vulkan:0"}), Code::InvalidArgument,
                      "are of different types");
  }
}

TEST_CASE("the gradient of a sum or mean all-reduce is the all-reduce of the upstream gradients") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  for (Reduction red : {Reduction::Sum, Reduction::Mean}) {
    CAPTURE(distribute::reduction_name(red));
    PerReplica grads = s->run([&](ReplicaContext& rc) {
      Tensor x = replica_value(rc, 2);
      GradientTape tape(*c);
      tape.watch(x);
      // Replica r's loss: (r + 1) * sum(all_reduce(x)); d/dx_r of the total loss sums over replicas.
      Tensor y = rc.all_reduce(red, x);
      Tensor loss = op::mul(*c, op::all_sum(*c, y), op::scalar_like(*c, y, rc.replica_id() + 1.0));
      return tape.gradient(loss, std::vector<Tensor>{x})[0];
    });
    const double want = red == Reduction::Sum ? 3 : 1.5;  // (1 + 2), or (1 + 2) / 2
    for (const Tensor& g : grads.values) CHECK(as_doubles(g) == std::vector<double>{want, want});
  }
  CHECK_THROWS_CODE(s->run([&](ReplicaContext& rc) {
                      Tensor x = replica_value(rc, 1);
                      GradientTape tape(*c);
                      tape.watch(x);
                      Tensor y = rc.all_reduce(Reduction::Max, x);
                      return tape.gradient(op::all_sum(*c, y), std::vector<Tensor>{x})[0];
                    }),
                    Code::Unimplemented, "no gradient for reduction \"max\"");
}

TEST_CASE("reduce and compute_average_loss") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  PerReplica pr = s->run([](ReplicaContext& rc) { return replica_value(rc, 2); });
  CHECK(as_doubles(s->reduce(Reduction::Sum, pr)) == std::vector<double>{static_cast<double>(0.1f + 0.2f), static_cast<double>(1.1f + 1.2f)});
  CHECK(s->reduce(Reduction::Mean, pr).device() == &c->device("cpu:0"));
  CHECK(as_doubles(s->reduce(Reduction::Max, pr))[1] == static_cast<double>(1.2f));
  CHECK(as_doubles(s->reduce(Reduction::Min, pr))[0] == static_cast<double>(0.1f));
  CHECK_THROWS_CODE(s->reduce(Reduction::Sum, PerReplica{{pr[0]}}), Code::InvalidArgument, "1 values for 2 replicas");
  Tensor avg = MirroredStrategy::compute_average_loss(*c, make<float>({1, 2, 3}, Shape{3}), 12);
  CHECK(as_doubles(avg) == std::vector<double>{0.5});
  CHECK_THROWS_CODE(MirroredStrategy::compute_average_loss(*c, make<float>({1}, Shape{1}), 0), Code::InvalidArgument,
                    "global_batch_size must be positive");
}

}  // namespace
}  // namespace cairn::test
