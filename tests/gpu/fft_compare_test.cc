// FFT, IFFT, FFT2D and IFFT2D with VkFFT on Vulkan against kissfft on the CPU (complex64), with
// the validation layer on; the real transforms fall back to the CPU when the context allows it.
#include <complex>
#include <random>
#include <vector>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

Tensor random_complex(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<complex64> v(static_cast<size_t>(s.num_elements()));
  for (auto& c : v) c = complex64(u(rng), u(rng));
  return make<complex64>(v, s);
}

// |got - want| <= tol * (1 + |want|) elementwise, for complex values.
void check_complex_close(const Tensor& got, const Tensor& want, double tol) {
  std::vector<complex64> g = values<complex64>(got), w = values<complex64>(want);
  REQUIRE(g.size() == w.size());
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (std::abs(std::complex<double>(g[i]) - std::complex<double>(w[i])) > tol * (1 + std::abs(w[i]))) ++bad;
  CHECK(bad == 0);
}

TEST_CASE("VkFFT transforms match kissfft for 1-D and 2-D, forward and inverse") {
  struct Case {
    const char* op;
    Shape s;
  };
  std::vector<Case> cases = {{"FFT", Shape{8}},        {"FFT", Shape{3, 64}},     {"FFT", Shape{5, 12}},
                             {"FFT", Shape{2, 4096}},  {"FFT", Shape{4, 1000}},   {"IFFT", Shape{3, 64}},
                             {"IFFT", Shape{7, 30}},   {"FFT2D", Shape{2, 8, 16}}, {"FFT2D", Shape{6, 10}},
                             {"IFFT2D", Shape{2, 8, 16}}, {"FFT", Shape{0, 8}},   {"FFT", Shape{4, 1}}};
  uint32_t seed = 1;
  for (const auto& c : cases) {
    CAPTURE(c.op);
    CAPTURE(c.s.str());
    Tensor x = random_complex(c.s, seed++);
    Tensor want = run_op(ctx(), c.op, {x})[0];
    Tensor got = run_op(vk_ctx(), c.op, {to_vk(x)})[0];
    CHECK(got.device()->name() == "vulkan:0");
    check_complex_close(to_cpu(got), want, 1e-4);
  }
  // Plans are cached: the same transform again builds nothing new.
  Tensor x = random_complex(Shape{3, 64}, 99);
  run_op(vk_ctx(), "FFT", {to_vk(x)});
  vk_device().synchronize();
  uint64_t pipelines = vk_device().stats().pipelines;
  Tensor y = run_op(vk_ctx(), "IFFT", {run_op(vk_ctx(), "FFT", {to_vk(x)})[0]})[0];
  check_complex_close(to_cpu(y), x, 1e-5);
  CHECK(vk_device().stats().pipelines == pipelines);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("real transforms fall back to the CPU when allowed, and name op and device otherwise") {
  std::vector<int64_t> len = {8};
  Tensor x = to_vk(make<float>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{8}));
  CHECK_THROWS_CODE(run_op(vk_ctx(), "RFFT", {x}, {attr_ints("fft_length", len)}), Code::Unimplemented,
                    "RFFT: no Vulkan kernel for dtype float32 on device vulkan:0");
  ContextOptions o;
  o.device = "vulkan";
  o.gpu.cpu_fallback = true;
  Context c(o);
  auto& dev = static_cast<gpu::VulkanDevice&>(c.default_device());
  Tensor xv = tensor_on_device(make<float>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{8}), dev);
  Tensor y = run_op(c, "RFFT", {xv}, {attr_ints("fft_length", len)})[0];
  Tensor back = run_op(c, "IRFFT", {y}, {attr_ints("fft_length", len)})[0];
  check_close(as_doubles(tensor_on_device(back, c.cpu())), {1, 2, 3, 4, 5, 6, 7, 8}, 1e-5);
  CHECK(dev.fallbacks() == 2);
}

}  // namespace
}  // namespace cairn::test
