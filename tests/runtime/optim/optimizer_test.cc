// Optimizers: every update rule against a scalar reference written out here (3 steps, float32 and
// float64, slots included), a few steps worked by hand, slot naming and laziness, iterations,
// hyperparameter edges, bad options, bad pairs, and convergence with a GradientTape.
#include <cmath>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/optim/optimizer.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using optim::Kind;
using optim::Optimizer;
using optim::OptimizerOptions;

Ref<Variable> var(DType dt, const std::vector<double>& v, const std::string& name = "w", bool trainable = true) {
  VariableOptions o;
  o.name = name;
  o.trainable = trainable;
  return Variable::create(ctx(), make_as(dt, v, Shape{static_cast<int64_t>(v.size())}), o);
}

std::vector<double> value(const Variable& v) { return as_doubles(v.read()); }

// Hyperparameters live in float32 variables, so the reference uses their float32 values.
double f32(double x) { return static_cast<double>(static_cast<float>(x)); }

// The update rules written out element by element in double (Keras optimizer_v2 / TF training_ops).
struct Reference {
  OptimizerOptions o;
  std::vector<double> w, m, v, mg;  // m: momentum / Adam m / RMSprop momentum; v: Adam v / RMSprop rms
  int64_t iter = 0;

  Reference(const OptimizerOptions& opts, std::vector<double> init) : o(opts), w(std::move(init)) {
    m.assign(w.size(), 0);
    v.assign(w.size(), 0);
    mg.assign(w.size(), 0);
  }

  void step(const std::vector<double>& g) {
    const double lr = f32(o.learning_rate), mom = f32(o.momentum), eps = f32(o.epsilon);
    for (size_t i = 0; i < w.size(); ++i) {
      switch (o.kind) {
        case Kind::SGD:
          if (o.momentum == 0) {
            w[i] -= lr * g[i];
          } else {
            m[i] = mom * m[i] - lr * g[i];
            w[i] += o.nesterov ? mom * m[i] - lr * g[i] : m[i];
          }
          break;
        case Kind::Adam:
        case Kind::AdamW: {
          const double b1 = f32(o.beta_1), b2 = f32(o.beta_2), t = static_cast<double>(iter + 1);
          if (o.kind == Kind::AdamW) w[i] -= w[i] * f32(o.weight_decay) * lr;
          const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
          m[i] = b1 * m[i] + (1 - b1) * g[i];
          v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
          w[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
          break;
        }
        case Kind::RMSprop: {
          const double rho = f32(o.rho);
          v[i] = rho * v[i] + (1 - rho) * g[i] * g[i];
          double denom = v[i];
          if (o.centered) {
            mg[i] = rho * mg[i] + (1 - rho) * g[i];
            denom -= mg[i] * mg[i];
          }
          if (o.momentum > 0) {
            m[i] = mom * m[i] + lr * g[i] / std::sqrt(denom + eps);
            w[i] -= m[i];
          } else {
            w[i] -= lr * g[i] / (std::sqrt(denom) + eps);
          }
          break;
        }
      }
    }
    ++iter;
  }
};

OptimizerOptions opts(Kind kind, double lr) {
  OptimizerOptions o;
  o.kind = kind;
  o.learning_rate = lr;
  return o;
}

struct Case {
  const char* name;
  OptimizerOptions o;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"sgd", opts(Kind::SGD, 0.1)});
  OptimizerOptions o = opts(Kind::SGD, 0.1);
  o.momentum = 0.9;
  out.push_back({"sgd momentum", o});
  o.nesterov = true;
  out.push_back({"sgd nesterov", o});
  o = opts(Kind::Adam, 0.01);
  out.push_back({"adam", o});
  o.beta_1 = 0.5;
  o.beta_2 = 0.75;
  o.epsilon = 1e-3;
  out.push_back({"adam custom betas", o});
  o = opts(Kind::AdamW, 0.01);
  o.weight_decay = 0.1;
  out.push_back({"adamw", o});
  o = opts(Kind::RMSprop, 0.01);
  out.push_back({"rmsprop", o});
  o.momentum = 0.5;
  out.push_back({"rmsprop momentum", o});
  o.centered = true;
  out.push_back({"rmsprop centered momentum", o});
  o.momentum = 0;
  out.push_back({"rmsprop centered", o});
  return out;
}

// The gradient of step k: varied signs and sizes, one element zero at k = 0.
std::vector<double> grad_at(int k) { return {0.5 * (k + 1), -0.25 + 0.1 * k, 0.3 * k, 2.0 - k}; }

// The reference's slot values in slot_names() order.
std::vector<std::vector<double>> reference_slots(const Reference& r) {
  switch (r.o.kind) {
    case Kind::SGD:
      if (r.o.momentum > 0) return {r.m};
      return {};
    case Kind::Adam:
    case Kind::AdamW: return {r.m, r.v};
    case Kind::RMSprop: {
      std::vector<std::vector<double>> s{r.v};
      if (r.o.momentum > 0) s.push_back(r.m);
      if (r.o.centered) s.push_back(r.mg);
      return s;
    }
  }
  return {};
}

TEST_CASE("every update rule matches the reference for three steps, float32 and float64") {
  const std::vector<double> init{1.0, -2.0, 0.5, 3.0};
  for (const Case& c : cases()) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      CAPTURE(c.name);
      CAPTURE(dtype_name(dt));
      Ref<Optimizer> opt = Optimizer::create(ctx(), c.o);
      Ref<Variable> w = var(dt, init);
      Reference ref(c.o, init);
      const double tol = dt == DType::Float32 ? 2e-6 : 1e-13;
      for (int k = 0; k < 3; ++k) {
        Tensor g = make_as(dt, grad_at(k), w->shape());
        opt->apply_gradients({{g, w.get()}});
        ref.step(grad_at(k));
        check_close(value(*w), ref.w, tol);
        std::vector<std::string> names = opt->slot_names();
        std::vector<std::vector<double>> want = reference_slots(ref);
        REQUIRE(names.size() == want.size());
        for (size_t s = 0; s < names.size(); ++s) {
          CAPTURE(names[s]);
          Ref<Variable> slot = opt->get_slot(*w, names[s]);
          REQUIRE(slot);
          CHECK(slot->dtype() == dt);
          check_close(value(*slot), want[s], tol);
        }
      }
      CHECK(opt->iterations_value() == 3);
    }
  }
}

TEST_CASE("apply_gradients takes gradients and variables side by side") {
  Ref<Optimizer> opt = Optimizer::create(ctx(), opts(Kind::SGD, 0.1));
  Ref<Variable> a = var(DType::Float64, {1.0}), b = var(DType::Float64, {2.0});
  opt->apply_gradients({make<double>({1.0}, Shape{1}), Tensor()}, {a, b});  // an empty gradient skips b
  check_close(value(*a), {0.9}, 1e-7);  // the learning rate is a float32 variable
  check_close(value(*b), {2.0}, 1e-12);
  CHECK_THROWS_CODE(opt->apply_gradients({make<double>({1.0}, Shape{1})}, {a, b}), Code::InvalidArgument,
                    "1 gradients for 2 variables");
}

TEST_CASE("steps worked by hand") {
  SUBCASE("sgd momentum: m = 0.9 m - 0.1 g; w += m") {
    OptimizerOptions o = opts(Kind::SGD, 0.1);
    o.momentum = 0.9;
    Ref<Optimizer> opt = Optimizer::create(ctx(), o);
    Ref<Variable> w = var(DType::Float64, {1.0});
    opt->apply_gradients({{make<double>({2.0}, Shape{1}), w.get()}});
    check_close(value(*w), {0.8}, 1e-7);  // m = -0.2
    opt->apply_gradients({{make<double>({2.0}, Shape{1}), w.get()}});
    check_close(value(*w), {0.42}, 1e-7);  // m = -0.18 - 0.2 = -0.38
  }
  SUBCASE("sgd nesterov: w += 0.9 m - 0.1 g") {
    OptimizerOptions o = opts(Kind::SGD, 0.1);
    o.momentum = 0.9;
    o.nesterov = true;
    Ref<Optimizer> opt = Optimizer::create(ctx(), o);
    Ref<Variable> w = var(DType::Float64, {1.0});
    opt->apply_gradients({{make<double>({2.0}, Shape{1}), w.get()}});
    check_close(value(*w), {0.62}, 1e-7);  // m = -0.2; w += -0.18 - 0.2
  }
  SUBCASE("adam's first step moves by about lr against the gradient's sign") {
    Ref<Optimizer> opt = Optimizer::create(ctx(), opts(Kind::Adam, 0.001));
    Ref<Variable> w = var(DType::Float32, {1.0, 1.0});
    opt->apply_gradients({{make<float>({2.0f, -0.5f}, Shape{2}), w.get()}});
    check_close(value(*w), {0.999, 1.001}, 1e-6);
    check_close(value(*opt->get_slot(*w, "m")), {0.2, -0.05}, 1e-6);
    check_close(value(*opt->get_slot(*w, "v")), {0.004, 0.00025}, 1e-6);
  }
  SUBCASE("adamw decays the weight by lr * wd * w before the adam step") {
    OptimizerOptions o = opts(Kind::AdamW, 0.5);
    o.weight_decay = 0.2;
    Ref<Optimizer> opt = Optimizer::create(ctx(), o);
    Ref<Variable> w = var(DType::Float64, {10.0});
    opt->apply_gradients({{make<double>({1.0}, Shape{1}), w.get()}});
    check_close(value(*w), {10.0 - 1.0 - 0.5}, 1e-6);  // decay 10 * 0.2 * 0.5 = 1, adam step ~ lr
  }
  SUBCASE("rmsprop: rms = 0.1 g^2; w -= lr g / (sqrt(rms) + eps)") {
    Ref<Optimizer> opt = Optimizer::create(ctx(), opts(Kind::RMSprop, 0.01));
    Ref<Variable> w = var(DType::Float64, {1.0});
    opt->apply_gradients({{make<double>({3.0}, Shape{1}), w.get()}});
    check_close(value(*opt->get_slot(*w, "rms")), {0.9}, 1e-6);  // rho is a float32 0.9
    check_close(value(*w), {1.0 - 0.03 / std::sqrt(0.9)}, 1e-6);
  }
}

TEST_CASE("slots: created lazily, named after the variable, zero-initialised, not trainable") {
  Ref<Optimizer> opt = Optimizer::create(ctx(), opts(Kind::Adam, 0.01));
  Ref<Module> scope = Module::create(ctx(), "dense");
  VariableOptions vo;
  vo.name = "kernel";
  vo.scope = scope.get();
  Ref<Variable> w = Variable::create(ctx(), make<float>({1, 2, 3, 4}, Shape{2, 2}), vo);
  CHECK(opt->slot_names() == std::vector<std::string>{"m", "v"});
  CHECK_FALSE(opt->get_slot(*w, "m"));
  CHECK(opt->slots_for(*w).empty());
  opt->apply_gradients({{make<float>({0, 0, 0, 0}, Shape{2, 2}), w.get()}});
  auto slots = opt->slots_for(*w);
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].first == "m");
  CHECK(slots[0].second->name() == "dense/kernel/m:0");
  CHECK(slots[1].second->name() == "dense/kernel/v:0");
  CHECK_FALSE(slots[0].second->trainable());
  CHECK(slots[0].second->shape() == Shape{2, 2});
  check_close(value(*slots[1].second), {0, 0, 0, 0});
  CHECK_FALSE(opt->get_slot(*w, "momentum"));
  // The same slot objects on the next step.
  opt->apply_gradients({{make<float>({1, 1, 1, 1}, Shape{2, 2}), w.get()}});
  CHECK(opt->get_slot(*w, "m").get() == slots[0].second.get());

  CHECK(Optimizer::create(ctx(), opts(Kind::SGD, 0.1))->slot_names().empty());
  OptimizerOptions r = opts(Kind::RMSprop, 0.1);
  r.momentum = 0.5;
  r.centered = true;
  CHECK(Optimizer::create(ctx(), r)->slot_names() == std::vector<std::string>{"rms", "momentum", "mg"});
}

std::vector<std::string> edge_names(const Object& o) {
  std::vector<std::string> names;
  for (const Edge& e : o.children()) names.push_back(e.name);
  return names;
}

TEST_CASE("hyperparameters and iterations are float32 and int64 variable edges") {
  Ref<Optimizer> sgd = Optimizer::create(ctx(), opts(Kind::SGD, 0.1));
  CHECK(sgd->kind() == ObjectKind::Optimizer);
  CHECK(std::string(sgd->kind_name()) == "SGD");
  CHECK(edge_names(*sgd) == std::vector<std::string>{"iter", "learning_rate", "momentum"});
  CHECK(edge_names(*Optimizer::create(ctx(), opts(Kind::AdamW, 0.1))) ==
        std::vector<std::string>{"iter", "learning_rate", "beta_1", "beta_2", "epsilon", "weight_decay"});
  CHECK(edge_names(*Optimizer::create(ctx(), opts(Kind::RMSprop, 0.1))) ==
        std::vector<std::string>{"iter", "learning_rate", "rho", "momentum", "epsilon"});
  auto lr = sgd->get_child("learning_rate");
  REQUIRE(lr->kind() == ObjectKind::Variable);
  CHECK(static_cast<Variable&>(*lr).dtype() == DType::Float32);
  CHECK_FALSE(static_cast<Variable&>(*lr).trainable());
  CHECK(sgd->iterations().dtype() == DType::Int64);
  CHECK(sgd->iterations_value() == 0);
  CHECK(sgd->learning_rate_value() == doctest::Approx(0.1));
  sgd->set_learning_rate(0.25);
  CHECK(sgd->learning_rate_value() == 0.25);
  Ref<Variable> w = var(DType::Float32, {1.0});
  sgd->apply_gradients({{make<float>({1.0f}, Shape{1}), w.get()}});
  check_close(value(*w), {0.75});
  CHECK(sgd->iterations_value() == 1);
  CHECK_THROWS_CODE(sgd->set_learning_rate(-1), Code::InvalidArgument, "learning_rate");
}

TEST_CASE("a schedule is the learning_rate edge and is evaluated at the iterations before the update") {
  OptimizerOptions o = opts(Kind::SGD, 0);
  o.schedule = optim::exponential_decay(ctx(), 1.0, 1, 0.5);
  Ref<Optimizer> opt = Optimizer::create(ctx(), o);
  CHECK(opt->get_child("learning_rate").get() == o.schedule.get());
  Ref<Variable> w = var(DType::Float64, {0.0});
  for (int k = 0; k < 3; ++k) opt->apply_gradients({{make<double>({1.0}, Shape{1}), w.get()}});
  check_close(value(*w), {-(1.0 + 0.5 + 0.25)}, 1e-12);
  CHECK(opt->learning_rate_value() == 0.125);
  CHECK_THROWS_CODE(opt->set_learning_rate(0.1), Code::FailedPrecondition, "schedule");
}

TEST_CASE("bad options name the option") {
  auto bad = [](OptimizerOptions o, const char* fragment) {
    CHECK_THROWS_CODE(Optimizer::create(ctx(), o), Code::InvalidArgument, fragment);
  };
  bad(opts(Kind::SGD, -0.1), "learning_rate");
  bad(opts(Kind::Adam, NAN), "learning_rate");
  OptimizerOptions o = opts(Kind::SGD, 0.1);
  o.momentum = 1.5;
  bad(o, "momentum");
  o = opts(Kind::Adam, 0.1);
  o.beta_1 = 1.0;
  bad(o, "beta_1");
  o = opts(Kind::Adam, 0.1);
  o.beta_2 = -0.1;
  bad(o, "beta_2");
  o = opts(Kind::Adam, 0.1);
  o.epsilon = -1;
  bad(o, "epsilon");
  o = opts(Kind::AdamW, 0.1);
  o.weight_decay = -0.5;
  bad(o, "weight_decay");
  o = opts(Kind::RMSprop, 0.1);
  o.rho = 1.0;
  bad(o, "rho");
  o = opts(Kind::Adam, 0.1);
  o.nesterov = true;
  bad(o, "nesterov");
  o = opts(Kind::SGD, 0.1);
  o.centered = true;
  bad(o, "centered");
  o = opts(static_cast<Kind>(17), 0.1);
  bad(o, "kind");
}

TEST_CASE("bad pairs name the variable and change nothing") {
  Ref<Optimizer> opt = Optimizer::create(ctx(), opts(Kind::Adam, 0.1));
  Ref<Variable> a = var(DType::Float32, {1, 2}, "a");
  Ref<Variable> b = var(DType::Float32, {3}, "b");
  Tensor ga = make<float>({1, 1}, Shape{2});
  Tensor gb = make<float>({1}, Shape{1});
  auto unchanged = [&] {
    check_close(value(*a), {1, 2});
    CHECK(opt->iterations_value() == 0);
    CHECK(opt->slots_for(*a).empty());
  };
  CHECK_THROWS_CODE(opt->apply_gradients({{ga, a.get()}, {make<double>({1}, Shape{1}), b.get()}}),
                    Code::InvalidArgument, "'b:0' has dtype float64");
  unchanged();
  CHECK_THROWS_CODE(opt->apply_gradients({{ga, a.get()}, {ga, b.get()}}), Code::InvalidArgument, "'b:0' has shape [2]");
  unchanged();
  CHECK_THROWS_CODE(opt->apply_gradients({{ga, a.get()}, {ga, a.get()}}), Code::InvalidArgument,
                    "'a:0' is given more than once");
  unchanged();
  Ref<Variable> frozen = var(DType::Float32, {1}, "frozen", false);
  CHECK_THROWS_CODE(opt->apply_gradients({{ga, a.get()}, {gb, frozen.get()}}), Code::InvalidArgument,
                    "'frozen:0' is not trainable");
  unchanged();
  Ref<Variable> ints = Variable::create(ctx(), make<int32_t>({1}, Shape{1}), VariableOptions{"ints"});
  CHECK_THROWS_CODE(opt->apply_gradients({{ga, a.get()}, {make<int32_t>({1}, Shape{1}), ints.get()}}),
                    Code::InvalidArgument, "'ints:0' has dtype int32");
  unchanged();
  CHECK_THROWS_CODE(opt->apply_gradients({{ga, nullptr}}), Code::InvalidArgument, "no variable");
  CHECK_THROWS_CODE(opt->apply_gradients({{Tensor(), a.get()}, {Tensor(), b.get()}}), Code::InvalidArgument,
                    "no gradients provided for any variable: [a:0, b:0]");
  CHECK_THROWS_CODE(opt->apply_gradients({}), Code::InvalidArgument, "no gradients");
  unchanged();

  // An empty gradient is skipped: its variable keeps its value and gets no slots.
  opt->apply_gradients({{Tensor(), a.get()}, {gb, b.get()}});
  check_close(value(*a), {1, 2});
  CHECK(opt->slots_for(*a).empty());
  CHECK(opt->slots_for(*b).size() == 2);
  CHECK(value(*b)[0] < 3);
  CHECK(opt->iterations_value() == 1);
}

TEST_CASE("gradient descent with a tape converges on a quadratic") {
  for (Kind kind : {Kind::SGD, Kind::Adam, Kind::AdamW, Kind::RMSprop}) {
    CAPTURE(static_cast<int>(kind));
    OptimizerOptions o = opts(kind, kind == Kind::SGD ? 0.1 : 0.05);
    o.weight_decay = 0;
    if (kind == Kind::SGD) o.momentum = 0.5;
    Ref<Optimizer> opt = Optimizer::create(ctx(), o);
    Ref<Variable> w = var(DType::Float32, {4.0, -3.0, 0.5}, "w");
    Tensor target = make<float>({1.0f, 2.0f, -1.0f}, Shape{3});
    Tensor weights = make<float>({1.0f, 2.0f, 0.5f}, Shape{3});
    double first_loss = 0, loss_value = 0;
    for (int step = 0; step < 400; ++step) {
      GradientTape tape(ctx());
      // loss = sum(weights * (w - target)^2)
      Tensor loss = op::all_sum(ctx(), op::mul(ctx(), weights, op::square(ctx(), op::sub(ctx(), w->read(), target))));
      loss_value = as_doubles(loss)[0];
      if (step == 0) first_loss = loss_value;
      std::vector<Tensor> grads = tape.gradient(loss, std::vector<const Variable*>{w.get()});
      opt->apply_gradients({{grads[0], w.get()}});
    }
    CHECK(first_loss > 10);
    CHECK(loss_value < 1e-3);
    check_close(value(*w), {1.0, 2.0, -1.0}, 0.03);
    CHECK(opt->iterations_value() == 400);
  }
}

}  // namespace
}  // namespace cairn::test
