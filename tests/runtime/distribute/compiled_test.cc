// Compiled functions and keras fit under a MirroredStrategy: a graph::Function step traces once per
// replica, runs the all-reduce inside its replayed graph and gives the eager step's weights;
// Model::fit / evaluate / predict compiled in strategy.scope() on 2 logical CPU devices (and 2
// Vulkan ones where a driver exists) match one device on the global batch; fit with small gradient
// buckets gives one bucket's weights, its compiled step starting a bucket mid-backward.
#include <algorithm>
#include <cmath>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/keras/model.h"
#include "tests/runtime/distribute/distribute_test_util.h"

namespace cairn::test {
namespace {

using distribute::MirroredOptions;
using distribute::MirroredStrategy;
using distribute::PerReplica;
using distribute::Reduction;
using distribute::ReplicaContext;

std::pair<Tensor, Tensor> data_xy(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n * 4)), y(static_cast<size_t>(n * 2));
  uint64_t s = 5;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 33) % 2000) / 1000.0f - 1.0f;
  };
  for (auto& v : x) v = next();
  for (int64_t i = 0; i < n; ++i) {
    y[static_cast<size_t>(i * 2)] = x[static_cast<size_t>(i * 4)] + x[static_cast<size_t>(i * 4 + 1)];
    y[static_cast<size_t>(i * 2 + 1)] = x[static_cast<size_t>(i * 4 + 2)] - x[static_cast<size_t>(i * 4 + 3)];
  }
  return {make<float>(x, Shape{n, 4}), make<float>(y, Shape{n, 2})};
}

std::vector<double> flat(Context& c, const std::vector<Ref<Variable>>& vars, int replica = 0) {
  std::vector<double> out;
  for (const Ref<Variable>& v : vars)
    for (double d : host_doubles(c, v->component(replica).read())) out.push_back(d);
  return out;
}

Ref<keras::Model> regressor(Context& c, Device* build_on) {
  Ref<keras::Model> m = keras::Model::create(c, "regressor");
  add_two_dense(c, *m, 6, nn::Activation::Tanh, 2, 3, build_on);
  return m;
}

void compile(keras::Model& m, Context& c, bool eager) {
  optim::OptimizerOptions o;
  o.kind = optim::Kind::Adam;
  o.learning_rate = 0.02;
  keras::CompileOptions co;
  co.optimizer = optim::Optimizer::create(c, o);
  co.loss = "mse";
  co.metrics = {"mae"};
  co.run_eagerly = eager;
  m.compile(co);
}

TEST_CASE("a compiled replicated step traces once per replica and equals the eager step") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  auto [x, y] = data_xy(16);
  std::vector<Tensor> xs = s->split_batch(x), ys = s->split_batch(y);
  std::vector<std::vector<double>> final_weights;
  for (bool compiled : {false, true}) {
    Ref<keras::Model> model;
    Ref<optim::Optimizer> opt;
    {
      auto scope = s->scope();
      model = regressor(*c, s->devices()[0]);
      optim::OptimizerOptions o;
      o.kind = optim::Kind::SGD;
      o.learning_rate = 0.1;
      o.momentum = 0.5;
      opt = optim::Optimizer::create(*c, o);
    }
    std::vector<Ref<Variable>> vars = model->trainable_weights();
    auto body = [&](Context& ctx, const std::vector<Tensor>& in) {
      GradientTape tape(ctx);
      Tensor err = op::square(ctx, op::sub(ctx, (*model)(in[0], true), in[1]));
      Tensor loss = MirroredStrategy::compute_average_loss(ctx, op::mean(ctx, err, {-1}), 16);
      std::vector<Tensor> grads = s->all_reduce_gradients(tape.gradient(loss, vars));
      opt->apply_gradients(grads, vars);
      return std::vector<Tensor>{loss};
    };
    Ref<graph::Function> step = make_ref<graph::Function>(*c, "replica_step", body);
    for (int i = 0; i < 4; ++i) {
      s->run([&](ReplicaContext& rc) {
        const size_t r = static_cast<size_t>(rc.replica_id());
        return compiled ? step->call({xs[r], ys[r]})[0] : body(*c, {xs[r], ys[r]})[0];
      });
    }
    if (compiled) CHECK(step->num_traces() == 2);  // one per replica
    CHECK(opt->iterations_value() == 4);
    CHECK(flat(*c, vars, 1) == flat(*c, vars, 0));  // bit-identical replicas
    final_weights.push_back(flat(*c, vars));
  }
  check_reduction_order_bound(final_weights[1], final_weights[0]);
}

// fit / evaluate / predict with a strategy against one device (no strategy) on the same data.
void check_fit(Context& c, const std::vector<std::string>& devices, bool eager) {
  Ref<MirroredStrategy> s = MirroredStrategy::create(c, devices);
  auto [x, y] = data_xy(30);  // batches of 12, 12 and 6 rows
  keras::Data d{nullptr, x, y};
  keras::FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 12;
  fo.shuffle = false;
  fo.verbose = keras::Verbose::Silent;

  Ref<keras::Model> fresh_single = regressor(c, s->devices()[0]);
  compile(*fresh_single, c, eager);
  Ref<keras::Model> fresh_mirrored;
  {
    auto scope = s->scope();
    fresh_mirrored = regressor(c, s->devices()[0]);
    compile(*fresh_mirrored, c, eager);
  }
  std::vector<Ref<Variable>> a = fresh_mirrored->trainable_weights(), b = fresh_single->trainable_weights();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i]->num_components() == s->num_replicas());
    b[i]->assign(a[i]->read());  // the same starting point
  }
  keras::History hs = fresh_single->fit(d, fo);
  keras::History hm = fresh_mirrored->fit(d, fo);
  CHECK(fresh_mirrored->iterations() == 6);
  for (int r = 1; r < s->num_replicas(); ++r) CHECK(flat(c, a, r) == flat(c, a, 0));
  check_reduction_order_bound(flat(c, a), flat(c, b));
  const std::vector<double>* lm = hm.get("loss");
  const std::vector<double>* ls = hs.get("loss");
  REQUIRE(lm);
  REQUIRE(ls);
  for (size_t e = 0; e < ls->size(); ++e) CHECK((*lm)[e] == doctest::Approx((*ls)[e]).epsilon(1e-4));
  CHECK((*hm.get("mae"))[1] == doctest::Approx((*hs.get("mae"))[1]).epsilon(1e-4));

  keras::EvaluateOptions eo;
  eo.batch_size = 29;  // a last batch of 1 row, fewer than the replicas: run on replica 0's weights
  keras::Logs em = fresh_mirrored->evaluate(d, eo), es = fresh_single->evaluate(d, eo);
  CHECK(*em.get("loss") == doctest::Approx(*es.get("loss")).epsilon(1e-4));
  keras::PredictOptions po;
  po.batch_size = 29;
  Tensor pm = fresh_mirrored->predict(d, po), ps = fresh_single->predict(d, po);
  CHECK(pm.shape() == Shape{30, 2});
  // Outputs of weights that differ within the bound above differ a little more: 1e-4 * max |y|.
  std::vector<double> vm = host_doubles(c, pm), vs = host_doubles(c, ps);
  double max_y = 0, max_dy = 0;
  for (size_t i = 0; i < vs.size(); ++i) {
    max_y = std::max(max_y, std::fabs(vs[i]));
    max_dy = std::max(max_dy, std::fabs(vm[i] - vs[i]));
  }
  CHECK(max_dy <= 1e-4 * max_y);
}

// Where the first bucket's all-reduce starts in a compiled step's graph against its last MatMul.
bool starts_before_last_matmul(const graph::Graph& g) {
  int first_start = -1, last_matmul = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != graph::NodeKind::Op) continue;
    const std::string& op = g.nodes[i].def->name;
    if (op == "CollectiveAllReduceStart" && first_start < 0) first_start = static_cast<int>(i);
    if (op == "MatMul") last_matmul = static_cast<int>(i);
  }
  return first_start >= 0 && first_start < last_matmul;
}

TEST_CASE("fit with small gradient buckets: one bucket's weights bit for bit, reductions started mid-backward") {
  Ref<Context> c = split_cpu(2);
  auto [x, y] = data_xy(24);
  keras::FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 12;
  fo.shuffle = false;
  fo.verbose = keras::Verbose::Silent;
  std::vector<std::vector<double>> weights;
  std::vector<Tensor> start;  // the first model's initial weights, copied
  for (size_t bytes : {size_t{0}, size_t{16}}) {  // one bucket; four (a bucket per weight)
    MirroredOptions o;
    o.bucket_bytes = bytes;
    Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2), o);
    Ref<keras::Model> m;
    {
      auto scope = s->scope();
      m = regressor(*c, s->devices()[0]);
      compile(*m, *c, /*eager=*/false);
    }
    std::vector<Ref<Variable>> vars = m->trainable_weights();
    if (start.empty()) {
      for (const Ref<Variable>& v : vars)
        start.push_back(make_as(DType::Float32, host_doubles(*c, v->read()), v->read().shape()));
      weights.push_back(flat(*c, vars));
    }
    for (size_t i = 0; i < vars.size(); ++i) vars[i]->assign(start[i]);  // the same starting point
    m->fit(keras::Data{nullptr, x, y}, fo);
    CHECK(flat(*c, vars, 1) == flat(*c, vars, 0));
    weights.push_back(flat(*c, vars));
    REQUIRE(m->train_function());
    const graph::Graph& g = m->train_function()->concretes()[0]->graph();
    CHECK(starts_before_last_matmul(g) == (bytes != 0));  // one bucket needs every gradient first
  }
  REQUIRE(weights.size() == 3);
  CHECK(weights[1] != weights[0]);  // trained
  CHECK(weights[2] == weights[1]);
}

TEST_CASE("Model::fit, evaluate and predict on 2 logical CPU replicas match one device") {
  for (bool eager : {false, true}) {
    CAPTURE(eager);
    Ref<Context> c = split_cpu(2);
    check_fit(*c, names("cpu", 2), eager);
  }
}

TEST_CASE("Model::fit on 2 logical Vulkan replicas matches one device") {
  Ref<Context> c = split_vulkan(2, true);
  if (!c) return;
  // The data comes from host tensors and the single-device model lives on vulkan:0: soft placement
  // copies the batches (and a trace's host constants) to the device.
  c->set_soft_placement(true);
  check_fit(*c, names("vulkan", 2), false);
}

TEST_CASE("a model or optimizer made outside the strategy's scope is refused") {
  Ref<Context> c = split_cpu(2);
  Ref<MirroredStrategy> s = MirroredStrategy::create(*c, names("cpu", 2));
  auto [x, y] = data_xy(8);
  Ref<keras::Model> outside = regressor(*c, &c->device("cpu:0"));
  optim::OptimizerOptions o;
  keras::CompileOptions co;
  co.loss = "mse";
  co.strategy = s;
  co.optimizer = optim::Optimizer::create(*c, o);
  outside->compile(co);
  CHECK_THROWS_CODE(outside->train_on_batch(x, y), Code::FailedPrecondition, "inside strategy.scope()");
  Ref<keras::Model> inside;
  {
    auto scope = s->scope();
    inside = regressor(*c, nullptr);
  }
  inside->compile(co);  // the optimizer is still the one made outside
  CHECK_THROWS_CODE(inside->train_on_batch(x, y), Code::FailedPrecondition, "the optimizer was made outside");
  // A batch smaller than the replica count.
  {
    auto scope = s->scope();
    co.optimizer = optim::Optimizer::create(*c, o);
  }
  inside->compile(co);
  CHECK_THROWS_CODE(inside->train_on_batch(make<float>({1, 2, 3, 4}, Shape{1, 4}), make<float>({1, 2}, Shape{1, 2})),
                    Code::InvalidArgument, "smaller than the 2 replicas");
  keras::Logs ok = inside->train_on_batch(x, y);
  CHECK(ok.get("loss").has_value());
}

}  // namespace
}  // namespace cairn::test
