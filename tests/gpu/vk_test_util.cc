#include "tests/gpu/vk_test_util.h"

#include <cmath>
#include <complex>
#include <cstdlib>
#include <random>

#include "runtime/core/refcount.h"

namespace cairn::test {

namespace {
struct EnableValidation {
  EnableValidation() { setenv("CAIRN_VULKAN_VALIDATION", "1", 0); }
} enable_validation;
}  // namespace

Context& vk_ctx() {
  static Context* c = [] {
    ContextOptions o;
    o.device = "vulkan";
    o.num_threads = 2;
    o.seed = 42;
    return new Context(o);
  }();
  return *c;
}

gpu::VulkanDevice& vk_device() { return static_cast<gpu::VulkanDevice&>(vk_ctx().default_device()); }

Tensor to_vk(const Tensor& t) { return tensor_on_device(t, vk_ctx().default_device()); }
Tensor to_cpu(const Tensor& t) { return tensor_on_device(t, ctx().cpu()); }

double tolerance(DType dt, bool transcendental) {
  if (dt == DType::Int32) return 0;
  if (dt == DType::Float16) return 2e-3;
  return transcendental ? 1e-4 : 1e-5;
}

Tensor random_tensor(DType dt, const Shape& s, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(s.num_elements()));
  bool integral = dt != DType::Float32 && dt != DType::Float16 && dt != DType::Float64;
  for (auto& x : v) x = integral ? std::round(u(rng)) : u(rng);
  return make_as(dt, v, s);
}

Tensor random_complex(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<complex64> v(static_cast<size_t>(s.num_elements()));
  for (auto& c : v) c = complex64(u(rng), u(rng));
  return make<complex64>(v, s);
}

void check_complex_close(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  std::vector<complex64> g = values<complex64>(got), w = values<complex64>(want);
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (std::abs(std::complex<double>(g[i]) - std::complex<double>(w[i])) > tol * (1 + std::abs(w[i]))) ++bad;
  CHECK(bad == 0);
}

void compare(const std::string& op, const std::vector<Tensor>& inputs, const std::vector<NamedAttr>& attrs,
             double tol) {
  CAPTURE(op);
  std::vector<Tensor> on_vk;
  for (const auto& t : inputs) on_vk.push_back(to_vk(t));
  std::vector<Tensor> want = run_op(ctx(), op, inputs, attrs);
  std::vector<Tensor> got = run_op(vk_ctx(), op, on_vk, attrs);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].device()->name() == "vulkan:0");
    Tensor host = to_cpu(got[i]);
    REQUIRE(host.shape() == want[i].shape());
    REQUIRE(host.dtype() == want[i].dtype());
    check_close(as_doubles(host), as_doubles(want[i]), tol);
  }
}

}  // namespace cairn::test
