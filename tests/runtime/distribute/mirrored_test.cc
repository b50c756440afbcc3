// Mirrored variables, optimizers, checkpoints and distributed datasets: a Dense MLP trained with
// SGD and Adam on 2 and 4 logical CPU devices and 2 logical Vulkan devices ends with the weights
// of one device training on the global batch (within the float reduction-order bound below) and
// with bit-identical components on every replica; a checkpoint saved with 4 replicas restores
// into 1, 2 and 4; datasets split each global batch over the replicas.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "runtime/autodiff/tape.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/data/sources.h"
#include "runtime/data/transforms.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/distribute/distribute_test_util.h"

namespace cairn::test {
namespace {

using distribute::DistributedIterator;
using distribute::MirroredStrategy;
using distribute::PerReplica;
using distribute::Reduction;
using distribute::ReplicaContext;

constexpr int64_t kGlobalBatch = 12;
constexpr int64_t kExamples = 36;  // three global batches

// Deterministic regression data: 4 features, 3 targets.
std::pair<Tensor, Tensor> regression_data(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n * 4)), y(static_cast<size_t>(n * 3));
  uint64_t s = 99;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 33) % 2000) / 1000.0f - 1.0f;
  };
  for (auto& v : x) v = next();
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j)
      y[static_cast<size_t>(i * 3 + j)] = x[static_cast<size_t>(i * 4 + j)] - 0.5f * x[static_cast<size_t>(i * 4 + 3)];
  return {make<float>(x, Shape{n, 4}), make<float>(y, Shape{n, 3})};
}

// Dense(8, relu) -> Dense(3), built on a [1, 4] input on `device`.
Ref<nn::Sequential> mlp(Context& c, Device& device) {
  Ref<nn::Sequential> m = nn::Sequential::create(c, "mlp");
  add_two_dense(c, *m, 8, nn::Activation::Relu, 3, 7, &device);
  return m;
}

Ref<optim::Optimizer> optimizer(Context& c, optim::Kind kind) {
  optim::OptimizerOptions o;
  o.kind = kind;
  o.learning_rate = kind == optim::Kind::Adam ? 0.01 : 0.1;
  o.momentum = kind == optim::Kind::SGD ? 0.9 : 0;
  return optim::Optimizer::create(c, o);
}

// Mean squared error per example, [batch].
Tensor per_example_mse(Context& c, const Tensor& pred, const Tensor& y) {
  return op::mean(c, op::square(c, op::sub(c, pred, y)), {-1});
}

// One replica's step: the loss scaled by the global batch, gradients summed over replicas.
Tensor replica_step(Context& c, ReplicaContext& rc, nn::Layer& model, optim::Optimizer& opt, const data::Element& e) {
  std::vector<Ref<Variable>> vars = model.trainable_weights();
  GradientTape tape(c);
  Tensor loss = MirroredStrategy::compute_average_loss(c, per_example_mse(c, model(e[0], true), e[1]), kGlobalBatch);
  std::vector<Tensor> grads = rc.all_reduce(Reduction::Sum, tape.gradient(loss, vars));
  opt.apply_gradients(grads, vars);
  return loss;
}

std::vector<double> flat(const std::vector<Ref<Variable>>& vars) {
  std::vector<double> out;
  for (const Ref<Variable>& v : vars)
    for (double d : host_doubles(v->context(), v->read())) out.push_back(d);
  return out;
}

// Replica r's components of every variable, as raw float bits.
std::vector<float> component_values(const std::vector<Ref<Variable>>& vars, int r, Context& c) {
  std::vector<float> out;
  for (const Ref<Variable>& v : vars)
    for (float f : values<float>(tensor_on_device(v->component(r).read(), c.cpu()))) out.push_back(f);
  return out;
}

void check_training(Context& c, const std::vector<std::string>& devices, optim::Kind kind) {
  Ref<MirroredStrategy> s = MirroredStrategy::create(c, devices);
  const int n = s->num_replicas();
  Ref<nn::Sequential> model;
  Ref<optim::Optimizer> opt;
  {
    auto scope = s->scope();
    model = mlp(c, *s->devices()[0]);
    opt = optimizer(c, kind);
  }
  std::vector<Ref<Variable>> vars = model->trainable_weights();
  REQUIRE(vars.size() == 4);
  for (const Ref<Variable>& v : vars) {
    CHECK(v->mirrored());
    CHECK(v->num_components() == n);
    for (int r = 0; r < n; ++r) CHECK(&v->component(r).device() == s->devices()[static_cast<size_t>(r)]);
  }
  // The single-device reference starts from the same weights.
  Device& ref_device = *s->devices()[0];
  Ref<nn::Sequential> ref = mlp(c, ref_device);
  Ref<optim::Optimizer> ref_opt = optimizer(c, kind);
  std::vector<Ref<Variable>> ref_vars = ref->trainable_weights();
  for (size_t i = 0; i < vars.size(); ++i) ref_vars[i]->assign(vars[i]->read());
  CHECK(!ref_vars[0]->mirrored());

  auto [x, y] = regression_data(kExamples);
  data::DatasetPtr ds = data::batch(data::from_tensor_slices(c, {"x", "y"}, {x, y}), kGlobalBatch, false);
  DistributedIterator it = s->distribute(ds);
  std::vector<data::Element> parts;
  int steps = 0;
  while (it.next(parts)) {
    REQUIRE(parts.size() == static_cast<size_t>(n));
    int64_t rows = 0;
    for (int r = 0; r < n; ++r) {
      CHECK(parts[static_cast<size_t>(r)][0].device() == s->devices()[static_cast<size_t>(r)]);
      rows += parts[static_cast<size_t>(r)][0].shape().dim(0);
    }
    CHECK(rows == kGlobalBatch);
    PerReplica losses = s->run([&](ReplicaContext& rc) {
      return replica_step(c, rc, *model, *opt, parts[static_cast<size_t>(rc.replica_id())]);
    });
    // The reference: the global batch on one device.
    Tensor gx = op::run1(c, "Slice", {tensor_on_device(x, ref_device)},
                         {attr_ints("begin", {steps * kGlobalBatch, 0}), attr_ints("size", {kGlobalBatch, 4})});
    Tensor gy = op::run1(c, "Slice", {tensor_on_device(y, ref_device)},
                         {attr_ints("begin", {steps * kGlobalBatch, 0}), attr_ints("size", {kGlobalBatch, 3})});
    GradientTape tape(c);
    Tensor loss = MirroredStrategy::compute_average_loss(c, per_example_mse(c, (*ref)(gx, true), gy), kGlobalBatch);
    ref_opt->apply_gradients(tape.gradient(loss, ref_vars), ref_vars);
    const double summed = host_doubles(c, s->reduce(Reduction::Sum, losses))[0];
    CHECK(summed == doctest::Approx(host_doubles(c, loss)[0]).epsilon(1e-5));
    ++steps;
  }
  CHECK(steps == 3);
  CHECK(opt->iterations_value() == 3);
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    CHECK(component_values(vars, r, c) == component_values(vars, 0, c));  // bit-identical replicas
    if (kind == optim::Kind::Adam) {
      Ref<Variable> m = opt->get_slot(*vars[0], "m");
      REQUIRE(m);
      CHECK(m->num_components() == n);
      CHECK(values<float>(tensor_on_device(m->component(r).read(), c.cpu())) ==
            values<float>(tensor_on_device(m->component(0).read(), c.cpu())));
      CHECK(&m->component(r).device() == s->devices()[static_cast<size_t>(r)]);
    }
  }
  check_reduction_order_bound(flat(vars), flat(ref_vars));
}

TEST_CASE("mirrored training on 2 and 4 logical CPU devices matches one device on the global batch") {
  for (int n : {2, 4}) {
    for (optim::Kind kind : {optim::Kind::SGD, optim::Kind::Adam}) {
      CAPTURE(n);
      CAPTURE(static_cast<int>(kind));
      Ref<Context> c = split_cpu(n);
      check_training(*c, names("cpu", n), kind);
    }
  }
}

TEST_CASE("mirrored training on 2 logical Vulkan devices matches one device") {
  for (optim::Kind kind : {optim::Kind::SGD, optim::Kind::Adam}) {
    Ref<Context> c = split_vulkan(2);
    if (!c) return;  // no Vulkan driver
    check_training(*c, names("vulkan", 2), kind);
  }
}

TEST_CASE("mirrored variables: reads, writes and updates inside and outside replicas") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  Ref<Variable> v, shared, plain;
  {
    auto scope = s->scope();
    v = Variable::create(*c, make<float>({1, 2}, Shape{2}));
    VariableOptions not_mirrored;
    not_mirrored.mirrored = false;
    shared = Variable::create(*c, make<float>({0}, Shape{1}), not_mirrored);
  }
  plain = Variable::create(*c, make<float>({5}, Shape{1}));
  CHECK(v->mirrored());
  CHECK(!shared->mirrored());
  CHECK(!plain->mirrored());
  CHECK(&v->component(1).primary() == v.get());
  CHECK_THROWS_CODE(v->component(2), Code::OutOfRange, "has 2 component(s), no replica 2");
  // Inside replicas each acts on its own component; the shared one adds up.
  PerReplica seen = s->run([&](ReplicaContext& rc) {
    CHECK(&v->device() == &rc.device());
    v->assign_add(tensor_on_device(make<float>({10.0f * (rc.replica_id() + 1), 0}, Shape{2}), rc.device()));
    shared->assign_add(make<float>({1}, Shape{1}));
    return v->read();
  });
  CHECK(as_doubles(seen[0]) == std::vector<double>{11, 2});
  CHECK(as_doubles(seen[1]) == std::vector<double>{21, 2});
  CHECK(seen[1].device()->name() == "cpu:1");
  CHECK(as_doubles(shared->read()) == std::vector<double>{2});
  // Outside replicas: a read is replica 0's, a write goes to every component.
  CHECK(as_doubles(v->read()) == std::vector<double>{11, 2});
  v->assign(make<float>({7, 8}, Shape{2}));
  CHECK(as_doubles(v->component(1).read()) == std::vector<double>{7, 8});
  v->assign_add(make<float>({1, 1}, Shape{2}));
  CHECK(as_doubles(v->component(1).read()) == std::vector<double>{8, 9});
  CHECK(v->component(1).read().device()->name() == "cpu:1");
  // A variable made inside a replica is mirrored too (every replica makes its own here).
  PerReplica made = s->run([&](ReplicaContext& rc) {
    Ref<Variable> local = Variable::create(*c, make<float>({3}, Shape{1}));
    CHECK(local->mirrored());
    return local->read();
  });
  CHECK(made[1].device()->name() == "cpu:1");
}

TEST_CASE("a checkpoint saved with 4 replicas stores one copy and restores into 1, 2 and 4 replicas and no strategy") {
  const std::string dir = make_dir();
  auto [x, y] = regression_data(kExamples);
  std::vector<double> saved_weights, after_step;
  {
    Ref<Context> c = split_cpu(4);
    Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 4));
    Ref<nn::Sequential> model;
    Ref<optim::Optimizer> opt;
    {
      auto scope = s->scope();
      model = mlp(*c, *s->devices()[0]);
      opt = optimizer(*c, optim::Kind::Adam);
    }
    DistributedIterator it = s->distribute(data::batch(data::from_tensor_slices(*c, {"x", "y"}, {x, y}), kGlobalBatch, false));
    std::vector<data::Element> parts;
    for (int step = 0; step < 2; ++step) {
      REQUIRE(it.next(parts));
      s->run([&](ReplicaContext& rc) { return replica_step(*c, rc, *model, *opt, parts[static_cast<size_t>(rc.replica_id())]); });
    }
    ckpt::Checkpoint checkpoint(*c, {{"model", model}, {"optimizer", opt}});
    checkpoint.write(dir + "/ckpt");
    saved_weights = flat(model->trainable_weights());
    // One more step, for the restored runs to reproduce.
    REQUIRE(it.next(parts));
    s->run([&](ReplicaContext& rc) { return replica_step(*c, rc, *model, *opt, parts[static_cast<size_t>(rc.replica_id())]); });
    after_step = flat(model->trainable_weights());
  }
  for (int n : {1, 2, 4}) {
    CAPTURE(n);
    Ref<Context> c = split_cpu(4);
    std::vector<std::string> devices = names("cpu", n);
    Ref<MirroredStrategy> s = MirroredStrategy::create(*c, devices);
    Ref<nn::Sequential> model;
    Ref<optim::Optimizer> opt;
    {
      auto scope = s->scope();
      model = mlp(*c, *s->devices()[0]);
      opt = optimizer(*c, optim::Kind::Adam);
    }
    ckpt::Checkpoint checkpoint(*c, {{"model", model}, {"optimizer", opt}});
    checkpoint.restore(dir + "/ckpt");
    std::vector<Ref<Variable>> vars = model->trainable_weights();
    CHECK(flat(vars) == saved_weights);
    for (int r = 1; r < n; ++r) CHECK(component_values(vars, r, *c) == component_values(vars, 0, *c));
    CHECK(opt->iterations_value() == 2);
    // The third global batch continues where the saved run did (Adam's slots restored on first use,
    // into every replica's component).
    DistributedIterator it = s->distribute(data::batch(data::from_tensor_slices(*c, {"x", "y"}, {x, y}), kGlobalBatch, false));
    std::vector<data::Element> parts;
    for (int skip = 0; skip < 3; ++skip) REQUIRE(it.next(parts));
    s->run([&](ReplicaContext& rc) { return replica_step(*c, rc, *model, *opt, parts[static_cast<size_t>(rc.replica_id())]); });
    CHECK(opt->iterations_value() == 3);
    for (int r = 1; r < n; ++r) CHECK(component_values(vars, r, *c) == component_values(vars, 0, *c));
    check_reduction_order_bound(flat(vars), after_step);
    Ref<Variable> m = opt->get_slot(*vars[0], "m");
    REQUIRE(m);
    CHECK(m->num_components() == n);
  }
  // And into a model without any strategy: plain variables, the third batch on one device.
  Ref<Context> c = split_cpu(1);
  Ref<nn::Sequential> model = mlp(*c, c->cpu());
  Ref<optim::Optimizer> opt = optimizer(*c, optim::Kind::Adam);
  ckpt::Checkpoint checkpoint(*c, {{"model", model}, {"optimizer", opt}});
  checkpoint.restore(dir + "/ckpt");
  std::vector<Ref<Variable>> vars = model->trainable_weights();
  CHECK(!vars[0]->mirrored());
  CHECK(flat(vars) == saved_weights);
  CHECK(opt->iterations_value() == 2);
  Tensor gx = op::run1(*c, "Slice", {tensor_on_device(x, c->cpu())},
                       {attr_ints("begin", {2 * kGlobalBatch, 0}), attr_ints("size", {kGlobalBatch, 4})});
  Tensor gy = op::run1(*c, "Slice", {tensor_on_device(y, c->cpu())},
                       {attr_ints("begin", {2 * kGlobalBatch, 0}), attr_ints("size", {kGlobalBatch, 3})});
  GradientTape tape(*c);
  Tensor loss = MirroredStrategy::compute_average_loss(*c, per_example_mse(*c, (*model)(gx, true), gy), kGlobalBatch);
  opt->apply_gradients(tape.gradient(loss, vars), vars);
  check_reduction_order_bound(flat(vars), after_step);
}

TEST_CASE("distributed datasets: uneven splits, and a global batch smaller than the replica count") {
  Ref<Context> c = split_cpu(4);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 4));
  std::vector<int32_t> xs(11);
  for (int i = 0; i < 11; ++i) xs[static_cast<size_t>(i)] = i;
  // Batches of 6 and 5: rows split 2,2,1,1 and 2,1,1,1; then a batch of 3 rows (too few).
  data::DatasetPtr ds = data::batch(data::from_tensor_slices(*c, {"x"}, {make<int32_t>(xs, Shape{11})}), 6, false);
  DistributedIterator it = s->distribute(ds);
  std::vector<data::Element> parts;
  REQUIRE(it.next(parts));
  std::vector<std::vector<int32_t>> got;
  for (const auto& p : parts) got.push_back(values<int32_t>(tensor_on_device(p[0], c->cpu())));
  CHECK(got == std::vector<std::vector<int32_t>>{{0, 1}, {2, 3}, {4}, {5}});
  CHECK(parts[3][0].device()->name() == "cpu:3");
  REQUIRE(it.next(parts));
  CHECK(values<int32_t>(tensor_on_device(parts[0][0], c->cpu())) == std::vector<int32_t>{6, 7});
  CHECK(values<int32_t>(tensor_on_device(parts[3][0], c->cpu())) == std::vector<int32_t>{10});
  CHECK(!it.next(parts));

  data::DatasetPtr small = data::batch(data::from_tensor_slices(*c, {"x"}, {make<int32_t>(xs, Shape{11})}), 3, false);
  DistributedIterator it2 = s->distribute(small);
  CHECK_THROWS_CODE(it2.next(parts), Code::InvalidArgument,
                    "DistributedIterator::next (global batch 0): a global batch of 3 rows is smaller than the 4 replicas");
  CHECK_THROWS_CODE(s->split_batch(make<int32_t>({1}, Shape{})), Code::InvalidArgument, "cannot split a scalar");
}

}  // namespace
}  // namespace cairn::test
