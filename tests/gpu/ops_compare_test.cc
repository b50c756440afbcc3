// Op-by-op comparison (in the style of ggml's test-backend-ops): each op with a Vulkan kernel,
// each dtype it has there, many shapes (broadcast, empty, scalar, large, odd sizes), Vulkan
// against the CPU within stated tolerances, with the validation layer on.
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/cases/compare_tables.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

const std::vector<DType> kDtypes = {DType::Float32, DType::Float16, DType::Int32};

TEST_CASE("unary ops match the CPU") {
  uint32_t seed = 1;
  for (const auto& c : tables::unary_ranges())
    for (DType dt : kDtypes) {
      if (dt == DType::Int32 && !c.ints) continue;
      for (const Shape& s : tables::elementwise_shapes()) {
        CAPTURE(dtype_name(dt));
        CAPTURE(s.str());
        compare(c.op, {random_tensor(dt, s, c.lo, c.hi, seed++)}, {}, tolerance(dt, c.transcendental));
      }
    }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("binary ops with broadcasting match the CPU") {
  uint32_t seed = 100;
  for (const auto& c : tables::binary_ranges())
    for (DType dt : kDtypes) {
      if (dt == DType::Int32 && !c.ints) continue;
      for (const auto& [sx, sy] : tables::broadcast_pairs()) {
        CAPTURE(dtype_name(dt));
        CAPTURE(sx.str());
        CAPTURE(sy.str());
        compare(c.op, {random_tensor(dt, sx, c.lo, c.hi, seed), random_tensor(dt, sy, c.lo, c.hi, seed + 1)}, {},
                tolerance(dt, std::string(c.op) == "Pow"));
        seed += 2;
      }
    }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("reductions over any axes match the CPU") {
  uint32_t seed = 500;
  for (const char* op : tables::reduction_ops())
    for (DType dt : kDtypes)
      for (const auto& [s, axes] : tables::reduction_axes())
        for (bool keep : {false, true}) {
          CAPTURE(dtype_name(dt));
          CAPTURE(s.str());
          bool prod = std::string(op) == "Prod";
          double lo = prod ? 0.9 : -5, hi = prod ? 1.1 : 5;
          if (prod && dt == DType::Int32) lo = 1, hi = 1;
          // Sums of many float16 values round differently in float and double accumulators.
          double tol = dt == DType::Float16 ? 1e-2 : (dt == DType::Float32 ? 1e-4 : 0);
          compare(op, {random_tensor(dt, s, lo, hi, seed++)}, {attr_ints("axis", axes), attr_bool("keep_dims", keep)},
                  tol);
        }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("MatMul matches the CPU with both shaders: transposes, batches, odd and empty sizes") {
  // The tiled shared-memory shader (GPUs) and the direct one (CPU devices such as this one).
  for (const char* shader : {"tiled", "direct"}) {
    CAPTURE(shader);
    setenv("CAIRN_VULKAN_MATMUL", shader, 1);
    ContextOptions o;
    o.device = "vulkan";
    Context c(o);
    auto& dev = static_cast<gpu::VulkanDevice&>(c.default_device());  // made on first use
    unsetenv("CAIRN_VULKAN_MATMUL");
    CHECK(dev.matmul_direct() == (std::string(shader) == "direct"));
    uint32_t seed = 900;
    for (DType dt : kDtypes)
      for (const auto& mc : tables::matmul_shapes()) {
        CAPTURE(dtype_name(dt));
        CAPTURE(mc.a.str());
        CAPTURE(mc.b.str());
        double tol = dt == DType::Float16 ? 1e-2 : (dt == DType::Float32 ? 1e-4 : 0);
        Tensor a = random_tensor(dt, mc.a, -2, 2, seed), b = random_tensor(dt, mc.b, -2, 2, seed + 1);
        seed += 2;
        std::vector<NamedAttr> attrs = {attr_bool("transpose_a", mc.ta), attr_bool("transpose_b", mc.tb)};
        Tensor want = run_op(ctx(), "MatMul", {a, b}, attrs)[0];
        Tensor got = run_op(c, "MatMul", {tensor_on_device(a, dev), tensor_on_device(b, dev)}, attrs)[0];
        check_close(as_doubles(to_cpu(got)), as_doubles(want), tol);
      }
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("data movement matches the CPU for every dtype width") {
  std::vector<int64_t> perm = {2, 0, 1};
  std::vector<int64_t> shape = {5, 12};
  for (DType dt : {DType::Float32, DType::Int32, DType::Float16, DType::Int64, DType::Float64, DType::UInt8}) {
    CAPTURE(dtype_name(dt));
    Tensor x = random_tensor(dt == DType::UInt8 ? DType::UInt8 : dt, Shape{3, 4, 5}, 0, 100, 7);
    compare("Transpose", {x}, {attr_ints("perm", perm)}, 0);
    compare("Transpose", {random_tensor(dt, Shape{37, 129}, 0, 100, 8)}, {}, 0);
    compare("Reshape", {x}, {attr_ints("shape", shape)}, 0);
    compare("ExpandDims", {x}, {attr_int("axis", 1)}, 0);
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("ClipByValue and AddN match the CPU") {
  for (DType dt : kDtypes) {
    Tensor t = random_tensor(dt, Shape{4, 9}, -5, 5, 3);
    compare("ClipByValue", {t, make_as(dt, {-1}, Shape{}), make_as(dt, {2}, Shape{})}, {}, 0);
    compare("AddN", {t, t, random_tensor(dt, Shape{4, 9}, -5, 5, 4)}, {}, tolerance(dt, false));
  }
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
