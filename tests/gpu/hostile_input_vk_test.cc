// Issue 18 on Vulkan: inputs the CPU answers must get the same answer here (Equal/NotEqual on
// shapes that do not broadcast, 2-D FFTs with a transformed dimension of 1), and inputs the device
// cannot take must get a status that says why, never INTERNAL.
#include <vector>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

TEST_CASE("Equal and NotEqual with incompatible_shape_error=false match the CPU on shapes that do not broadcast") {
  NamedAttr lenient = attr_bool("incompatible_shape_error", false);
  struct Case {
    DType dtype;
    Shape a, b;
  };
  // float32/int32 run the compare shaders, bool and uint8 the byte ones; [2,3] vs [3,2] and
  // [4,2,3] vs [3,3] do not broadcast either; [0] vs [3] has nothing to compare.
  std::vector<Case> cases = {{DType::Float32, Shape{2}, Shape{3}},       {DType::Int32, Shape{2}, Shape{3}},
                             {DType::Bool, Shape{2}, Shape{3}},          {DType::UInt8, Shape{4}, Shape{5}},
                             {DType::Float32, Shape{2, 3}, Shape{3, 2}}, {DType::Float32, Shape{4, 2, 3}, Shape{3, 3}},
                             {DType::Float32, Shape{0}, Shape{3}}};
  uint32_t seed = 1;
  for (const auto& c : cases) {
    CAPTURE(dtype_name(c.dtype));
    CAPTURE(c.a.str());
    CAPTURE(c.b.str());
    Tensor a = random_tensor(c.dtype, c.a, 0, 1, seed++), b = random_tensor(c.dtype, c.b, 0, 1, seed++);
    for (const char* op : {"Equal", "NotEqual"}) {
      CAPTURE(op);
      Tensor want = run_op(ctx(), op, {a, b}, {lenient})[0];
      Tensor got = run_op(vk_ctx(), op, {to_vk(a), to_vk(b)}, {lenient})[0];
      CHECK(got.device()->name() == "vulkan:0");
      Tensor host = to_cpu(got);
      REQUIRE(host.shape() == Shape{});
      CHECK(bools(host) == bools(want));
      CHECK(bools(host) == std::vector<int>{op[0] == 'N' ? 1 : 0});
    }
  }
  // Shapes that broadcast still compare element by element, and the default still raises.
  Tensor a = make<float>({1, 2}, Shape{2}), c = make<float>({1, 5}, Shape{2});
  CHECK(bools(to_cpu(run_op(vk_ctx(), "Equal", {to_vk(a), to_vk(c)}, {lenient})[0])) == std::vector<int>{1, 0});
  CHECK(bools(to_cpu(run_op(vk_ctx(), "NotEqual", {to_vk(make<float>({2}, Shape{1})), to_vk(a)}, {lenient})[0])) ==
        std::vector<int>{1, 0});
  Tensor b = make<float>({1, 2, 3}, Shape{3});
  CHECK_THROWS_CODE(run_op(vk_ctx(), "Equal", {to_vk(a), to_vk(b)}), Code::InvalidArgument,
                    "Equal: incompatible shapes [2] and [3]");
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("2-D FFTs with a transformed dimension of 1 match the CPU") {
  const std::vector<Shape> shapes = {Shape{1, 4}, Shape{4, 1}, Shape{3, 1}, Shape{1, 7},  Shape{2, 1, 6},
                                     Shape{2, 5, 1}, Shape{1, 1}, Shape{3, 1, 1}, Shape{1, 64}, Shape{64, 1}};
  uint32_t seed = 10;
  for (const char* op : {"FFT2D", "IFFT2D"}) {
    for (const Shape& s : shapes) {
      CAPTURE(op);
      CAPTURE(s.str());
      Tensor x = random_complex(s, seed++);
      Tensor want = run_op(ctx(), op, {x})[0];
      Tensor got = run_op(vk_ctx(), op, {to_vk(x)})[0];
      CHECK(got.device()->name() == "vulkan:0");
      check_complex_close(to_cpu(got), want, 1e-4);
    }
  }
  // The real 2-D transforms run the same complex plans: fft_length with a 1.
  struct Case {
    const char* op;
    Shape s;
    std::vector<int64_t> len;
  };
  std::vector<Case> real = {{"RFFT2D", Shape{1, 8}, {1, 8}},   {"RFFT2D", Shape{4, 1}, {4, 1}},
                            {"RFFT2D", Shape{2, 3, 1}, {3, 1}}, {"IRFFT2D", Shape{1, 5}, {1, 8}},
                            {"IRFFT2D", Shape{4, 1}, {4, 1}},   {"IRFFT2D", Shape{2, 3, 1}, {3, 1}}};
  for (const auto& c : real) {
    CAPTURE(c.op);
    CAPTURE(c.s.str());
    bool inverse = c.op[0] == 'I';
    Tensor x = inverse ? random_complex(c.s, seed++) : random_tensor(DType::Float32, c.s, -1, 1, seed++);
    std::vector<NamedAttr> attrs = {attr_ints("fft_length", c.len)};
    Tensor want = run_op(ctx(), c.op, {x}, attrs)[0];
    Tensor got = to_cpu(run_op(vk_ctx(), c.op, {to_vk(x)}, attrs)[0]);
    REQUIRE(got.shape() == want.shape());
    if (inverse)
      check_close(as_doubles(got), as_doubles(want), 1e-4);
    else
      check_complex_close(got, want, 1e-4);
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Vulkan allocation limits are ResourceExhausted with the sizes, never INTERNAL") {
  // A tensor larger than maxStorageBufferRange: refused before any memory is taken.
  uint64_t range = vk_device().info().max_storage_buffer_range;
  std::vector<int64_t> too_many = {static_cast<int64_t>(range / 4 + 1)};
  CHECK_THROWS_CODE(run_op(vk_ctx(), "Fill", {to_vk(scalar<float>(1))}, {attr_ints("dims", too_many)}),
                    Code::ResourceExhausted, "Fill: vulkan:0: a tensor of");
  // The context's memory limit.
  ContextOptions o;
  o.device = "vulkan";
  o.gpu.memory_limit = 1 << 20;
  Context c(o);
  std::vector<int64_t> two_mib = {1 << 19};  // of float32
  CHECK_THROWS_CODE(run_op(c, "Fill", {tensor_on_device(scalar<float>(1), c.default_device())}, {attr_ints("dims", two_mib)}),
                    Code::ResourceExhausted, "Fill: vulkan:0: allocating 2097152 bytes exceeds the memory limit of 1048576 bytes");
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
