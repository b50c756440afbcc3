#include "tests/runtime/nn/nn_test_util.h"

namespace cairn::test {

Ref<Context> fresh_context(uint64_t seed) {
  ContextOptions o;
  o.num_threads = 2;
  o.seed = seed;
  return make_ref<Context>(o);
}

Variable& weight(const nn::Layer& layer, const std::string& name) {
  Ref<Object> o = layer.get(name);
  REQUIRE(o->kind() == ObjectKind::Variable);
  return static_cast<Variable&>(*o);
}

void set_weight(const nn::Layer& layer, const std::string& name, const std::vector<double>& values) {
  Variable& v = weight(layer, name);
  v.assign(make_as(v.dtype(), values, v.shape()));
}

}  // namespace cairn::test
