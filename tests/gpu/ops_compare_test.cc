// Op-by-op comparison (in the style of ggml's test-backend-ops): each op with a Vulkan kernel,
// each dtype it has there, many shapes (broadcast, empty, scalar, large, odd sizes), Vulkan
// against the CPU within stated tolerances, with the validation layer on.
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

const std::vector<Shape> kShapes = {Shape{}, Shape{1}, Shape{7}, Shape{0}, Shape{3, 5}, Shape{2, 0, 3},
                                    Shape{4, 33, 9}, Shape{300001}};
const std::vector<DType> kDtypes = {DType::Float32, DType::Float16, DType::Int32};

struct UnaryCase {
  const char* op;
  double lo, hi;
  bool ints;
  bool transcendental;
};

TEST_CASE("unary ops match the CPU") {
  std::vector<UnaryCase> cases = {
      {"Neg", -5, 5, true, false},       {"Abs", -5, 5, true, false},       {"Sign", -2, 2, true, false},
      {"Square", -5, 5, true, false},    {"Reciprocal", 0.5, 4, false, false}, {"Exp", -5, 5, false, true},
      {"Log", 0.01, 10, false, true},    {"Log1p", -0.5, 5, false, true},   {"Sqrt", 0, 10, false, true},
      {"Rsqrt", 0.1, 10, false, true},   {"Sin", -4, 4, false, true},       {"Cos", -4, 4, false, true},
      {"Tanh", -6, 6, false, true},      {"Sigmoid", -10, 10, false, true}, {"Erf", -3, 3, false, true},
      {"Relu", -5, 5, true, false},      {"Relu6", -3, 9, true, false},     {"Elu", -3, 3, false, true},
      {"Selu", -3, 3, false, true},      {"Softplus", -10, 10, false, true}, {"Gelu", -4, 4, false, true},
      {"Floor", -5, 5, false, false},    {"Ceil", -5, 5, false, false},     {"Round", -5, 5, false, false},
      {"ZerosLike", -5, 5, true, false}, {"OnesLike", -5, 5, true, false},  {"Identity", -5, 5, true, false},
  };
  uint32_t seed = 1;
  for (const auto& c : cases)
    for (DType dt : kDtypes) {
      if (dt == DType::Int32 && !c.ints) continue;
      for (const Shape& s : kShapes) {
        CAPTURE(dtype_name(dt));
        CAPTURE(s.str());
        compare(c.op, {random_tensor(dt, s, c.lo, c.hi, seed++)}, {}, tolerance(dt, c.transcendental));
      }
    }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("binary ops with broadcasting match the CPU") {
  struct Case {
    const char* op;
    double lo, hi;
    bool ints;
  };
  std::vector<Case> cases = {{"Add", -5, 5, true},     {"Sub", -5, 5, true},     {"Mul", -5, 5, true},
                             {"RealDiv", 0.5, 5, false}, {"FloorDiv", 0.5, 5, false}, {"FloorMod", 0.5, 5, false},
                             {"Pow", 0.5, 2, false},   {"Maximum", -5, 5, true}, {"Minimum", -5, 5, true},
                             {"SquaredDifference", -5, 5, true}};
  std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape{}, Shape{}},         {Shape{7}, Shape{7}},       {Shape{3, 5}, Shape{5}},     {Shape{3, 1}, Shape{1, 4}},
      {Shape{2, 3, 4}, Shape{3, 1}}, {Shape{0, 3}, Shape{3}}, {Shape{5, 1, 3, 1, 2, 1, 3}, Shape{4, 3, 1, 2, 3, 1}},
      {Shape{1000, 301}, Shape{301}}, {Shape{}, Shape{4, 4}}};
  uint32_t seed = 100;
  for (const auto& c : cases)
    for (DType dt : kDtypes) {
      if (dt == DType::Int32 && !c.ints) continue;
      for (const auto& [sx, sy] : shapes) {
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
  std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {Shape{}, {}},         {Shape{7}, {}},           {Shape{3, 5}, {1}},     {Shape{3, 5}, {0}},
      {Shape{4, 6, 5}, {0, 2}}, {Shape{4, 6, 5}, {1}},  {Shape{2, 0, 3}, {1}},  {Shape{2, 0, 3}, {0}},
      {Shape{1000, 513}, {1}}, {Shape{513, 1000}, {0}}, {Shape{100000}, {}}, {Shape{3, 4, 5, 6}, {-1, 1}}};
  uint32_t seed = 500;
  for (const char* op : {"Sum", "Mean", "Prod", "Max", "Min"})
    for (DType dt : kDtypes)
      for (const auto& [s, axes] : cases)
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
  struct Case {
    Shape a, b;
    bool ta, tb;
  };
  std::vector<Case> cases = {{Shape{1, 1}, Shape{1, 1}, false, false},  {Shape{3, 5}, Shape{5, 7}, false, false},
                             {Shape{5, 3}, Shape{5, 7}, true, false},   {Shape{3, 5}, Shape{7, 5}, false, true},
                             {Shape{5, 3}, Shape{7, 5}, true, true},    {Shape{67, 130}, Shape{130, 65}, false, false},
                             {Shape{2, 3, 33, 17}, Shape{2, 3, 17, 9}, false, false},
                             {Shape{4, 20, 8}, Shape{8, 12}, false, false}, {Shape{0, 4}, Shape{4, 3}, false, false},
                             {Shape{3, 0}, Shape{0, 4}, false, false},   {Shape{128, 128}, Shape{128, 128}, false, false},
                             {Shape{33, 600}, Shape{600, 515}, false, false}};
  // The tiled shared-memory shader (GPUs) and the direct one (CPU devices such as this one).
  for (const char* shader : {"tiled", "direct"}) {
    CAPTURE(shader);
    setenv("CAIRN_VULKAN_MATMUL", shader, 1);
    ContextOptions o;
    o.device = "vulkan";
    Context c(o);
    unsetenv("CAIRN_VULKAN_MATMUL");
    auto& dev = static_cast<gpu::VulkanDevice&>(c.default_device());
    CHECK(dev.matmul_direct() == (std::string(shader) == "direct"));
    uint32_t seed = 900;
    for (DType dt : kDtypes)
      for (const auto& mc : cases) {
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
