#include "tests/util/test_util.h"

namespace cairn::test {

Context& ctx() {
  static Context* c = [] {
    ContextOptions o;
    o.num_threads = 2;
    o.seed = 42;
    Context* p = new Context(o);
    return p;
  }();
  return *c;
}

Tensor make_as(DType dtype, const std::vector<double>& vals, const Shape& shape) {
  REQUIRE(static_cast<int64_t>(vals.size()) == shape.num_elements());
  Tensor t = Tensor::allocate(ctx().cpu(), dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.mutable_data<T>();
    for (size_t i = 0; i < vals.size(); ++i) p[i] = convert<T>(vals[i]);
  });
  return t;
}

std::vector<int> bools(const Tensor& t) {
  REQUIRE(t.dtype() == DType::Bool);
  const bool* p = t.data<bool>();
  return std::vector<int>(p, p + t.num_elements());
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert<double>(p[i]);
  });
  return out;
}

Tensor run1(std::string_view op, std::initializer_list<Tensor> inputs, std::initializer_list<NamedAttr> attrs) {
  return run_op(ctx(), op, inputs, attrs).at(0);
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      CHECK_MESSAGE(std::isnan(got[i]), "element " << i << ": got " << got[i] << ", want NaN");
      continue;
    }
    if (std::isinf(want[i])) {
      CHECK_MESSAGE(got[i] == want[i], "element " << i << ": got " << got[i] << ", want " << want[i]);
      continue;
    }
    double err = std::fabs(got[i] - want[i]);
    CHECK_MESSAGE(err <= tol * (1.0 + std::fabs(want[i])), "element " << i << ": got " << got[i] << ", want " << want[i]);
  }
}

}  // namespace cairn::test
