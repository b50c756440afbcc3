// FFT, IFFT, FFT2D and IFFT2D with VkFFT on Vulkan against kissfft on the CPU (complex64), and the
// real transforms (RFFT, IRFFT and 2-D) built on them, with the validation layer on.
#include <vector>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

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

Tensor random_real(const Shape& s, uint32_t seed) { return random_tensor(DType::Float32, s, -1, 1, seed); }

TEST_CASE("real transforms (RFFT, IRFFT, RFFT2D, IRFFT2D) match kissfft, cropping and padding") {
  struct Case {
    const char* op;
    Shape s;
    std::vector<int64_t> len;
  };
  std::vector<Case> cases = {
      {"RFFT", Shape{8}, {8}},           {"RFFT", Shape{3, 64}, {64}},        {"RFFT", Shape{4, 30}, {30}},
      {"RFFT", Shape{2, 10}, {16}},      {"RFFT", Shape{2, 20}, {9}},         {"RFFT", Shape{5, 1}, {1}},
      {"RFFT", Shape{0, 8}, {8}},        {"RFFT2D", Shape{2, 8, 16}, {8, 16}}, {"RFFT2D", Shape{6, 10}, {4, 12}},
      {"RFFT2D", Shape{3, 5, 7}, {5, 7}}, {"IRFFT", Shape{3, 33}, {64}},      {"IRFFT", Shape{4, 16}, {30}},
      {"IRFFT", Shape{2, 5}, {9}},       {"IRFFT", Shape{2, 12}, {8}},        {"IRFFT2D", Shape{2, 8, 9}, {8, 16}},
      {"IRFFT2D", Shape{6, 7}, {5, 12}}, {"IRFFT2D", Shape{3, 4, 3}, {5, 5}},
  };
  uint32_t seed = 200;
  for (const auto& c : cases) {
    CAPTURE(c.op);
    CAPTURE(c.s.str());
    bool inverse = c.op[0] == 'I';
    Tensor x = inverse ? random_complex(c.s, seed++) : random_real(c.s, seed++);
    std::vector<NamedAttr> attrs = {attr_ints("fft_length", c.len)};
    Tensor want = run_op(ctx(), c.op, {x}, attrs)[0];
    Tensor got = run_op(vk_ctx(), c.op, {to_vk(x)}, attrs)[0];
    CHECK(got.device()->name() == "vulkan:0");
    REQUIRE(got.shape() == want.shape());
    if (inverse)
      check_close(as_doubles(to_cpu(got)), as_doubles(want), 1e-4);
    else
      check_complex_close(to_cpu(got), want, 1e-4);
  }
  // IRFFT(RFFT(x)) gives x back.
  Tensor x = random_real(Shape{3, 48}, 7);
  const std::vector<int64_t> n = {48};
  std::vector<NamedAttr> len = {attr_ints("fft_length", n)};
  Tensor back = run_op(vk_ctx(), "IRFFT", {run_op(vk_ctx(), "RFFT", {to_vk(x)}, len)[0]}, len)[0];
  check_close(as_doubles(to_cpu(back)), as_doubles(x), 1e-5);
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
