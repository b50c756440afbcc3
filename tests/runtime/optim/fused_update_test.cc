// The fused update ops (runtime/ops/training_ops.cc) against the unfused elementwise ops the
// optimizer used before them: every optimizer kind, several steps, float16, float32 and float64,
// bit for bit, eagerly and inside a traced function; TF's ApplyMomentum and Adam's Nesterov form
// against a reference written with ops; and bad inputs, each a clear error naming the op.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/optim/optimizer.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using optim::Kind;
using optim::Optimizer;
using optim::OptimizerOptions;

struct Config {
  const char* label;
  OptimizerOptions o;
  const char* op;  // the fused op expected in a trace
};

std::vector<Config> configs() {
  std::vector<Config> out;
  auto add = [&](const char* label, Kind kind, const char* op, auto&& tweak) {
    Config c{label, {}, op};
    c.o.kind = kind;
    c.o.learning_rate = 0.05;
    tweak(c.o);
    out.push_back(c);
  };
  add("SGD", Kind::SGD, "ApplyGradientDescent", [](OptimizerOptions&) {});
  add("SGD momentum", Kind::SGD, "ApplyKerasMomentum", [](OptimizerOptions& o) { o.momentum = 0.9; });
  add("SGD Nesterov", Kind::SGD, "ApplyKerasMomentum", [](OptimizerOptions& o) {
    o.momentum = 0.7;
    o.nesterov = true;
  });
  add("Adam", Kind::Adam, "ApplyAdam", [](OptimizerOptions& o) { o.epsilon = 1e-3; });
  add("AdamW", Kind::AdamW, "ApplyAdamW", [](OptimizerOptions& o) { o.weight_decay = 0.1; });
  add("RMSprop momentum", Kind::RMSprop, "ApplyRMSProp", [](OptimizerOptions& o) { o.momentum = 0.5; });
  add("RMSprop centered momentum", Kind::RMSprop, "ApplyCenteredRMSProp", [](OptimizerOptions& o) {
    o.momentum = 0.3;
    o.centered = true;
  });
  add("RMSprop", Kind::RMSprop, "ApplyKerasRMSProp", [](OptimizerOptions&) {});
  add("RMSprop centered", Kind::RMSprop, "ApplyKerasCenteredRMSProp", [](OptimizerOptions& o) { o.centered = true; });
  return out;
}

// Deterministic values in [lo, hi) that differ per `seed`.
std::vector<double> ramp(size_t n, int seed, double lo = -1, double hi = 1) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    double u = std::fmod(0.6180339887 * static_cast<double>(i * 7 + seed * 13 + 1), 1.0);
    v[i] = lo + (hi - lo) * u;
  }
  return v;
}

Tensor ramp_tensor(DType dt, const Shape& s, int seed) {
  return make_as(dt, ramp(static_cast<size_t>(s.num_elements()), seed), s);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

struct Model {
  Ref<Optimizer> opt;
  std::vector<Ref<Variable>> vars;
};

Model make_model(const OptimizerOptions& o, DType dt, bool fused) {
  Model m;
  m.opt = Optimizer::create(ctx(), o);
  m.opt->set_fused(fused);
  int seed = 0;
  for (const Shape& s : {Shape{3, 5}, Shape{7}, Shape{}}) {
    VariableOptions vo;
    vo.name = "w" + std::to_string(seed);
    m.vars.push_back(Variable::create(ctx(), ramp_tensor(dt, s, seed++), vo));
  }
  return m;
}

std::vector<Tensor> grads_for(const Model& m, int step) {
  std::vector<Tensor> g;
  for (size_t i = 0; i < m.vars.size(); ++i)
    g.push_back(ramp_tensor(m.vars[i]->dtype(), m.vars[i]->shape(), 100 + step * 10 + static_cast<int>(i)));
  return g;
}

// Variables and slots of both models, bit for bit.
void check_same(const Model& a, const Model& b) {
  for (size_t i = 0; i < a.vars.size(); ++i) {
    CAPTURE(a.vars[i]->name());
    CHECK(same_bits(a.vars[i]->read(), b.vars[i]->read()));
    for (const std::string& slot : a.opt->slot_names()) {
      CAPTURE(slot);
      Ref<Variable> sa = a.opt->get_slot(*a.vars[i], slot), sb = b.opt->get_slot(*b.vars[i], slot);
      REQUIRE(sa);
      REQUIRE(sb);
      CHECK(sa->name() == sb->name());
      CHECK(same_bits(sa->read(), sb->read()));
    }
  }
}

TEST_CASE("fused updates equal the unfused ops bit for bit: every kind, 4 steps, float16/32/64") {
  for (const Config& c : configs())
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
      CAPTURE(c.label);
      CAPTURE(dtype_name(dt));
      Model fused = make_model(c.o, dt, true), unfused = make_model(c.o, dt, false);
      for (int step = 0; step < 4; ++step) {
        fused.opt->apply_gradients(grads_for(fused, step), fused.vars);
        unfused.opt->apply_gradients(grads_for(unfused, step), unfused.vars);
      }
      // The update moved the variables (a no-op on both sides would pass the comparison).
      CHECK(!same_bits(fused.vars[0]->read(), ramp_tensor(dt, Shape{3, 5}, 0)));
      check_same(fused, unfused);
    }
}

// The op names of a function's first concrete graph.
std::vector<std::string> op_names(const graph::Function& f) {
  std::vector<std::string> out;
  for (const graph::Node& n : f.concretes()[0]->graph().nodes)
    if (n.kind == graph::NodeKind::Op) out.push_back(n.def->name);
  return out;
}

TEST_CASE("inside a traced function the update is one fused node per variable and equals eager") {
  for (const Config& c : configs()) {
    CAPTURE(c.label);
    Model traced = make_model(c.o, DType::Float32, true), eager = make_model(c.o, DType::Float32, false);
    auto fn = make_ref<graph::Function>(ctx(), "train", [&](Context&, const std::vector<Tensor>& in) {
      traced.opt->apply_gradients(in, traced.vars);
      return std::vector<Tensor>{};
    });
    for (int step = 0; step < 4; ++step) {
      fn->call(grads_for(traced, step));
      eager.opt->apply_gradients(grads_for(eager, step), eager.vars);
    }
    CHECK(fn->num_traces() == 1);
    CHECK(traced.opt->iterations_value() == 4);
    check_same(traced, eager);
    std::vector<std::string> ops = op_names(*fn);
    CHECK(std::count(ops.begin(), ops.end(), std::string(c.op)) == 3);  // one per variable
    CHECK(std::count(ops.begin(), ops.end(), std::string("Sqrt")) == 0);
  }
}

// TF's ApplyMomentum (not what Keras' SGD uses) and Adam's Nesterov form, against the same steps
// written with ops.
TEST_CASE("ApplyMomentum and ApplyAdam with use_nesterov match their formulas written with ops") {
  Context& c = ctx();
  using namespace op;
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
    CAPTURE(dtype_name(dt));
    const Shape s{4, 3};
    auto sc = [&](double v) { return op::scalar(c, c.cpu(), dt, v); };
    for (bool nesterov : {false, true}) {
      CAPTURE(nesterov);
      Tensor var = ramp_tensor(dt, s, 1), accum = ramp_tensor(dt, s, 2);
      Tensor lr = sc(0.1), momentum = sc(0.9);
      for (int step = 0; step < 3; ++step) {
        Tensor g = ramp_tensor(dt, s, 10 + step);
        std::vector<Tensor> out =
            run_op(c, "ApplyMomentum", {var, accum, lr, g, momentum}, {attr_bool("use_nesterov", nesterov)});
        Tensor accum_want = add(c, mul(c, accum, momentum), g);
        Tensor var_want = nesterov ? sub(c, var, add(c, mul(c, g, lr), mul(c, mul(c, accum_want, momentum), lr)))
                                   : sub(c, var, mul(c, lr, accum_want));
        CHECK(same_bits(out[0], var_want));
        CHECK(same_bits(out[1], accum_want));
        var = out[0];
        accum = out[1];
      }
    }
    Tensor var = ramp_tensor(dt, s, 3), m = ramp_tensor(dt, s, 4), v = make_as(dt, ramp(12, 5, 0, 1), s);
    Tensor b1 = sc(0.9), b2 = sc(0.999), lr = sc(0.01), eps = sc(1e-3), one = sc(1);
    for (int step = 1; step <= 3; ++step) {
      Tensor g = ramp_tensor(dt, s, 20 + step);
      Tensor b1p = pow(c, b1, sc(step)), b2p = pow(c, b2, sc(step));
      std::vector<Tensor> out = run_op(c, "ApplyAdam", {var, m, v, b1p, b2p, lr, b1, b2, eps, g},
                                       {attr_bool("use_nesterov", true)});
      Tensor alpha = mul(c, lr, div(c, sqrt(c, sub(c, one, b2p)), sub(c, one, b1p)));
      Tensor m_want = add(c, m, mul(c, sub(c, g, m), sub(c, one, b1)));
      Tensor v_want = add(c, v, mul(c, sub(c, square(c, g), v), sub(c, one, b2)));
      Tensor num = add(c, mul(c, m_want, b1), mul(c, g, sub(c, one, b1)));
      Tensor var_want = sub(c, var, div(c, mul(c, num, alpha), add(c, sqrt(c, v_want), eps)));
      CHECK(same_bits(out[0], var_want));
      CHECK(same_bits(out[1], m_want));
      CHECK(same_bits(out[2], v_want));
      var = out[0];
      m = out[1];
      v = out[2];
    }
  }
}

TEST_CASE("bad inputs to the fused ops are clear errors naming the op") {
  Context& c = ctx();
  Tensor x = make<float>({1, 2, 3}, Shape{3}), x2 = make<float>({1, 2}, Shape{2});
  Tensor s = scalar<float>(0.5f), v1 = make<float>({0.5f}, Shape{1});
  Tensor xd = make<double>({1, 2, 3}, Shape{3}), xi = make<int32_t>({1, 2, 3}, Shape{3}), si = scalar<int32_t>(1);
  // A slot or the gradient of another shape.
  CHECK_THROWS_CODE(run_op(c, "ApplyAdam", {x, x2, x, s, s, s, s, s, s, x}), Code::InvalidArgument,
                    "ApplyAdam: m has shape [2], var has shape [3]");
  CHECK_THROWS_CODE(run_op(c, "ApplyKerasMomentum", {x, x, s, x2, s}), Code::InvalidArgument,
                    "ApplyKerasMomentum: grad has shape [2], var has shape [3]");
  CHECK_THROWS_CODE(run_op(c, "ApplyCenteredRMSProp", {x, x, x, x2, s, s, s, s, x}), Code::InvalidArgument,
                    "ApplyCenteredRMSProp: mom has shape [2]");
  // A hyperparameter that is not a scalar (TF rejects a one-element vector too).
  CHECK_THROWS_CODE(run_op(c, "ApplyRMSProp", {x, x, x, v1, s, s, s, x}), Code::InvalidArgument,
                    "ApplyRMSProp: lr must be a scalar, got shape [1]");
  CHECK_THROWS_CODE(run_op(c, "ApplyGradientDescent", {x, x, x}), Code::InvalidArgument,
                    "ApplyGradientDescent: alpha must be a scalar");
  // Mixed dtypes, integer dtypes, a wrong number of inputs.
  CHECK_THROWS_CODE(run_op(c, "ApplyAdamW", {x, x, x, s, s, s, s, s, s, s, xd}), Code::InvalidArgument,
                    "ApplyAdamW");
  CHECK_THROWS_CODE(run_op(c, "ApplyMomentum", {xi, xi, si, xi, si}), Code::InvalidArgument, "ApplyMomentum");
  CHECK_THROWS_CODE(run_op(c, "ApplyAdam", {x, x, x, s, s, s, s, s, s}), Code::InvalidArgument, "ApplyAdam");
  // An unknown attribute (TF's use_locking is not taken: variable writes are atomic swaps).
  CHECK_THROWS_CODE(run_op(c, "ApplyGradientDescent", {x, s, x}, {attr_bool("use_locking", true)}),
                    Code::InvalidArgument, "ApplyGradientDescent");
}

// The variable's update holds its write lock as assign_sub did: another thread's assign_add never
// lands between the fused op's read and its write (integers: every order gives the same sum).
TEST_CASE("a fused update is atomic with respect to other writes of the variable") {
  OptimizerOptions o;
  o.kind = Kind::SGD;
  o.learning_rate = 1;
  Ref<Optimizer> opt = Optimizer::create(ctx(), o);
  Ref<Variable> v = Variable::create(ctx(), make<float>({0, 0, 0, 0}, Shape{4}), {.name = "shared"});
  const int n = 3000;
  Tensor one = make<float>({1, 1, 1, 1}, Shape{4});
  std::thread adder([&] {
    for (int i = 0; i < n; ++i) v->assign_add(one);
  });
  for (int i = 0; i < n; ++i) opt->apply_gradients({{one, v.get()}});
  adder.join();
  CHECK(values<float>(v->read()) == std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("empty variables update to empty results") {
  Context& c = ctx();
  Tensor e = Tensor::allocate(c.cpu(), DType::Float32, Shape{0, 4});
  Tensor s = scalar<float>(0.5f);
  std::vector<Tensor> out = run_op(c, "ApplyAdam", {e, e, e, s, s, s, s, s, s, e});
  REQUIRE(out.size() == 3);
  for (const Tensor& t : out) CHECK(t.shape() == Shape{0, 4});
}

}  // namespace
}  // namespace cairn::test
