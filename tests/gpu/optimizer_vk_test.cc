// The fused optimizer updates on Vulkan (gpu/shaders/training.comp): each op against the CPU
// kernel, the optimizers' fused updates against their unfused Vulkan ops bit for bit (float32 and
// float16, several steps, every kind), and the dispatches a step records. Validation layer on.
#include <cstring>
#include <string>

#include "runtime/eager/ops.h"
#include "runtime/optim/optimizer.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

using optim::Kind;
using optim::Optimizer;
using optim::OptimizerOptions;

Tensor sc(DType dt, double v) { return make_as(dt, {v}, Shape{}); }

TEST_CASE("each fused update op matches the CPU kernel, float32 and float16") {
  for (DType dt : {DType::Float32, DType::Float16})
    for (const Shape& s : {Shape{}, Shape{7}, Shape{300, 257}}) {
      CAPTURE(dtype_name(dt));
      CAPTURE(s.str());
      const double tol = tolerance(dt, false);
      Tensor var = random_tensor(dt, s, -1, 1, 1), a = random_tensor(dt, s, -1, 1, 2);
      Tensor pos = random_tensor(dt, s, 0.5, 1, 3), small = random_tensor(dt, s, -0.5, 0.5, 4);
      Tensor g = random_tensor(dt, s, -1, 1, 5);
      compare("ApplyGradientDescent", {var, sc(dt, 0.1), g}, {}, tol);
      for (bool nesterov : {false, true}) {
        CAPTURE(nesterov);
        std::vector<NamedAttr> attrs = {attr_bool("use_nesterov", nesterov)};
        compare("ApplyMomentum", {var, a, sc(dt, 0.1), g, sc(dt, 0.9)}, attrs, tol);
        compare("ApplyKerasMomentum", {var, a, sc(dt, 0.1), g, sc(dt, 0.9)}, attrs, tol);
        compare("ApplyAdam", {var, a, pos, sc(dt, 0.81), sc(dt, 0.998), sc(dt, 0.01), sc(dt, 0.9), sc(dt, 0.999),
                              sc(dt, 1e-3), g},
                attrs, tol);
      }
      compare("ApplyAdamW", {var, a, pos, sc(dt, 0.9), sc(dt, 0.999), sc(dt, 0.01), sc(dt, 0.9), sc(dt, 0.999),
                             sc(dt, 1e-3), sc(dt, 0.1), g},
              {}, tol);
      compare("ApplyRMSProp", {var, pos, a, sc(dt, 0.01), sc(dt, 0.9), sc(dt, 0.5), sc(dt, 1e-3), g}, {}, tol);
      compare("ApplyCenteredRMSProp",
              {var, small, pos, a, sc(dt, 0.01), sc(dt, 0.9), sc(dt, 0.5), sc(dt, 1e-3), g}, {}, tol);
      compare("ApplyKerasRMSProp", {var, pos, sc(dt, 0.01), sc(dt, 0.9), sc(dt, 1e-3), g}, {}, tol);
      compare("ApplyKerasCenteredRMSProp", {var, small, pos, sc(dt, 0.01), sc(dt, 0.9), sc(dt, 1e-3), g}, {}, tol);
    }
  CHECK_NO_VALIDATION_ERRORS();
}

struct Model {
  Ref<Optimizer> opt;
  std::vector<Ref<Variable>> vars;
};

Model make_model(const OptimizerOptions& o, DType dt, bool fused) {
  Model m;
  m.opt = Optimizer::create(vk_ctx(), o);
  m.opt->set_fused(fused);
  uint32_t seed = 1;
  for (const Shape& s : {Shape{64, 64}, Shape{64}, Shape{64, 10}, Shape{10}}) {
    VariableOptions vo;
    vo.name = "w" + std::to_string(seed);
    m.vars.push_back(Variable::create(vk_ctx(), to_vk(random_tensor(dt, s, -1, 1, seed++)), vo));
  }
  return m;
}

std::vector<Tensor> grads_for(const Model& m, int step) {
  std::vector<Tensor> g;
  for (size_t i = 0; i < m.vars.size(); ++i)
    g.push_back(to_vk(random_tensor(m.vars[i]->dtype(), m.vars[i]->shape(), -1, 1,
                                    static_cast<uint32_t>(100 + step * 10 + i))));
  return g;
}

bool same_bits(const Tensor& vk_a, const Tensor& vk_b) {
  Tensor a = to_cpu(vk_a), b = to_cpu(vk_b);
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::vector<std::pair<const char*, OptimizerOptions>> configs() {
  std::vector<std::pair<const char*, OptimizerOptions>> out;
  auto add = [&](const char* label, Kind kind, double momentum, bool nesterov, bool centered) {
    OptimizerOptions o;
    o.kind = kind;
    o.learning_rate = 0.05;
    o.momentum = momentum;
    o.nesterov = nesterov;
    o.centered = centered;
    if (kind != Kind::SGD) o.epsilon = 1e-3;
    out.emplace_back(label, o);
  };
  add("SGD", Kind::SGD, 0, false, false);
  add("SGD momentum", Kind::SGD, 0.9, false, false);
  add("SGD Nesterov", Kind::SGD, 0.7, true, false);
  add("Adam", Kind::Adam, 0, false, false);
  add("AdamW", Kind::AdamW, 0, false, false);
  add("RMSprop momentum", Kind::RMSprop, 0.5, false, false);
  add("RMSprop centered momentum", Kind::RMSprop, 0.3, false, true);
  add("RMSprop", Kind::RMSprop, 0, false, false);
  add("RMSprop centered", Kind::RMSprop, 0, false, true);
  return out;
}

TEST_CASE("fused updates on Vulkan equal the unfused Vulkan ops bit for bit, without CPU fallback") {
  const uint64_t fallbacks = vk_device().fallbacks();
  for (const auto& [label, o] : configs())
    for (DType dt : {DType::Float32, DType::Float16}) {
      CAPTURE(label);
      CAPTURE(dtype_name(dt));
      Model fused = make_model(o, dt, true), unfused = make_model(o, dt, false);
      for (int step = 0; step < 3; ++step) {
        fused.opt->apply_gradients(grads_for(fused, step), fused.vars);
        unfused.opt->apply_gradients(grads_for(unfused, step), unfused.vars);
      }
      for (size_t i = 0; i < fused.vars.size(); ++i) {
        CHECK(fused.vars[i]->device().kind() == DeviceKind::Vulkan);
        CHECK(same_bits(fused.vars[i]->read(), unfused.vars[i]->read()));
        for (const std::string& slot : fused.opt->slot_names())
          CHECK(same_bits(fused.opt->get_slot(*fused.vars[i], slot)->read(),
                          unfused.opt->get_slot(*unfused.vars[i], slot)->read()));
      }
    }
  CHECK(vk_device().fallbacks() == fallbacks);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("an Adam step on four Vulkan variables records under half the dispatches of the unfused ops") {
  OptimizerOptions o;
  o.kind = Kind::Adam;
  uint64_t per_step[2] = {0, 0};
  for (bool fused : {false, true}) {
    Model m = make_model(o, DType::Float32, fused);
    m.opt->apply_gradients(grads_for(m, 0), m.vars);  // slots made
    std::vector<Tensor> g = grads_for(m, 1);
    vk_device().synchronize();
    const uint64_t before = vk_device().stats().dispatches;
    m.opt->apply_gradients(g, m.vars);
    vk_device().synchronize();
    per_step[fused] = vk_device().stats().dispatches - before;
  }
  MESSAGE("Adam on 4 variables: " << per_step[0] << " dispatches unfused, " << per_step[1] << " fused");
  CHECK(per_step[1] > 0);
  CHECK(2 * per_step[1] <= per_step[0]);
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
