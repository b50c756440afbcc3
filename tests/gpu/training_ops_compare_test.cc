// Op-by-op comparison against the CPU for the ops training needs: comparisons, logical ops,
// Select, Cast, Softmax/LogSoftmax, ArgMax/ArgMin, Cumsum, OneHot, GatherV2, UnsortedSegmentSum,
// the data-movement family (Slice, StridedSlice(Grad), Concat, Pack, Unpack, Split, Tile, Pad,
// Reverse, Fill), Range and the Philox random ops. Validation layer on.
#include <string>
#include <vector>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

const std::vector<DType> kNumeric = {DType::Float32, DType::Float16, DType::Int32};
// Every element width strided.comp moves: 4 (f32, i32), 2 (f16), 1 (bool, uint8), 8 (i64, f64).
const std::vector<DType> kAllWidths = {DType::Float32, DType::Int32, DType::Float16, DType::Bool,
                                       DType::UInt8,   DType::Int64, DType::Float64};

Tensor values_for(DType dt, const Shape& s, uint32_t seed) {
  if (dt == DType::Bool) return random_tensor(dt, s, 0, 1, seed);
  return random_tensor(dt, s, dt == DType::UInt8 ? 0 : -50, 50, seed);
}

TEST_CASE("comparisons give bools that match the CPU, with broadcasting and NaN") {
  std::vector<std::pair<Shape, Shape>> shapes = {{Shape{}, Shape{}},       {Shape{7}, Shape{7}},
                                                 {Shape{3, 5}, Shape{5}},  {Shape{3, 1}, Shape{1, 4}},
                                                 {Shape{0, 3}, Shape{3}},  {Shape{1000, 33}, Shape{33}}};
  uint32_t seed = 1;
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"})
    for (DType dt : {DType::Float32, DType::Float16, DType::Int32, DType::UInt8})
      for (const auto& [sx, sy] : shapes) {
        CAPTURE(dtype_name(dt));
        CAPTURE(sx.str());
        // Few distinct values so that equality is common.
        compare(op, {random_tensor(dt, sx, 0, 4, seed), random_tensor(dt, sy, 0, 4, seed + 1)}, {}, 0);
        seed += 2;
      }
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = make<float>({nan, 1, nan, 2}, Shape{4});
  Tensor b = make<float>({nan, nan, 1, 2}, Shape{4});
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) compare(op, {a, b}, {}, 0);
  for (const char* op : {"Equal", "NotEqual"})
    compare(op, {values_for(DType::Bool, Shape{5, 3}, 7), values_for(DType::Bool, Shape{3}, 8)}, {}, 0);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("logical ops, IsNan and IsFinite match the CPU") {
  Tensor x = values_for(DType::Bool, Shape{4, 9}, 1), y = values_for(DType::Bool, Shape{9}, 2);
  compare("LogicalAnd", {x, y}, {}, 0);
  compare("LogicalOr", {x, y}, {}, 0);
  compare("LogicalNot", {x}, {}, 0);
  compare("LogicalNot", {values_for(DType::Bool, Shape{0}, 3)}, {}, 0);
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (DType dt : {DType::Float32, DType::Float16}) {
    Tensor t = make_as(dt, {nan, inf, -inf, 0, 1.5, -2}, Shape{2, 3});
    compare("IsNan", {t}, {}, 0);
    compare("IsFinite", {t}, {}, 0);
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("All and Any over any axes match the CPU, empty inputs included") {
  std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {Shape{}, {}}, {Shape{7}, {}}, {Shape{3, 5}, {1}}, {Shape{4, 6, 5}, {0, 2}}, {Shape{2, 0, 3}, {1}},
      {Shape{2, 0, 3}, {0}}, {Shape{0}, {}}, {Shape{300, 513}, {1}}};
  uint32_t seed = 30;
  for (const char* op : {"All", "Any"})
    for (const auto& [s, axes] : cases)
      for (bool keep : {false, true}) {
        CAPTURE(s.str());
        // Mostly true (for All) or mostly false (for Any), so both answers occur.
        Tensor x = random_tensor(DType::Float32, s, 0, 1, seed++);
        Tensor b = run_op(ctx(), std::string(op) == "All" ? "Less" : "Greater",
                          {x, make<float>({0.98f}, Shape{})})[0];
        compare(op, {b}, {attr_ints("axis", axes), attr_bool("keep_dims", keep)}, 0);
      }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("SelectV2 broadcasts condition and branches for every element width") {
  struct Case {
    Shape c, t, e;
  };
  std::vector<Case> cases = {{Shape{}, Shape{}, Shape{}},          {Shape{6}, Shape{6}, Shape{6}},
                             {Shape{3, 1}, Shape{1, 4}, Shape{4}}, {Shape{2, 3, 4}, Shape{}, Shape{3, 4}},
                             {Shape{0, 2}, Shape{2}, Shape{2}},    {Shape{513, 7}, Shape{513, 7}, Shape{7}}};
  uint32_t seed = 10;
  for (DType dt : kAllWidths)
    for (const auto& c : cases) {
      CAPTURE(dtype_name(dt));
      CAPTURE(c.c.str());
      compare("SelectV2",
              {values_for(DType::Bool, c.c, seed), values_for(dt, c.t, seed + 1), values_for(dt, c.e, seed + 2)}, {}, 0);
      seed += 3;
    }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Cast between float32, float16, int32, uint8, bool and int64 matches the CPU") {
  std::vector<DType> types = {DType::Float32, DType::Float16, DType::Int32, DType::UInt8, DType::Bool, DType::Int64};
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (DType src : types)
    for (DType dst : types) {
      if (src == DType::Int64 && (dst == DType::Float32 || dst == DType::Float16)) continue;
      CAPTURE(dtype_name(src));
      CAPTURE(dtype_name(dst));
      std::vector<NamedAttr> attrs = {attr_dtype("DstT", dst)};
      compare("Cast", {values_for(src, Shape{5, 7}, 3)}, attrs, 0);
      compare("Cast", {values_for(src, Shape{0}, 4)}, attrs, 0);
      if (src == DType::Float32 || src == DType::Float16) {
        // Truncation toward zero, saturation, NaN -> 0, and values that need rounding.
        std::vector<double> edge = {nan, inf, -inf, 2.5, -2.5, 3e9, -3e9, 300, -1, 0.1, 1e5};
        if (src == DType::Float16) edge = {nan, inf, -inf, 2.5, -2.5, 60000, -60000, 300, -1, 0.1, 1e3};
        compare("Cast", {make_as(src, edge, Shape{11})}, attrs, 0);
      }
    }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Softmax and LogSoftmax along any axis match the CPU") {
  std::vector<std::pair<Shape, int64_t>> cases = {{Shape{7}, -1},       {Shape{3, 5}, -1}, {Shape{3, 5}, 0},
                                                  {Shape{4, 6, 5}, 1},  {Shape{2, 0, 3}, 1}, {Shape{64, 1000}, -1},
                                                  {Shape{1, 1}, -1}};
  uint32_t seed = 40;
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (DType dt : {DType::Float32, DType::Float16})
      for (const auto& [s, axis] : cases) {
        CAPTURE(dtype_name(dt));
        CAPTURE(s.str());
        compare(op, {random_tensor(dt, s, -8, 8, seed++)}, {attr_int("axis", axis)}, tolerance(dt, true));
      }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("ArgMax and ArgMin (int32 and int64 outputs, ties, NaN) match the CPU") {
  std::vector<std::pair<Shape, int64_t>> cases = {{Shape{7}, 0}, {Shape{3, 5}, 1}, {Shape{3, 5}, 0},
                                                  {Shape{4, 6, 5}, -2}, {Shape{300, 77}, 1}, {Shape{2, 1}, 1}};
  uint32_t seed = 60;
  for (const char* op : {"ArgMax", "ArgMin"})
    for (DType dt : kNumeric)
      for (DType out : {DType::Int32, DType::Int64})
        for (const auto& [s, axis] : cases) {
          CAPTURE(dtype_name(dt));
          CAPTURE(s.str());
          // Few distinct values: ties are common and the first index must win.
          compare(op, {random_tensor(dt, s, 0, 5, seed++)}, {attr_int("axis", axis), attr_dtype("output_type", out)}, 0);
        }
  float nan = std::numeric_limits<float>::quiet_NaN();
  compare("ArgMax", {make<float>({1, nan, 3, nan}, Shape{4})}, {}, 0);
  compare("ArgMin", {make<float>({1, 0, nan, -1}, Shape{4})}, {}, 0);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Cumsum (exclusive, reverse, any axis) matches the CPU") {
  uint32_t seed = 80;
  for (DType dt : kNumeric)
    for (const auto& [s, axis] : std::vector<std::pair<Shape, int64_t>>{
             {Shape{9}, 0}, {Shape{4, 6}, 1}, {Shape{4, 6}, 0}, {Shape{3, 4, 5}, 1}, {Shape{0, 3}, 0}, {Shape{2000}, 0}})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          CAPTURE(dtype_name(dt));
          CAPTURE(s.str());
          // float accumulators here, double ones on the CPU: long float32 sums drift by ~1e-5.
          double tol = dt == DType::Float16 ? 1e-2 : (dt == DType::Float32 ? 1e-4 : 0);
          compare("Cumsum", {random_tensor(dt, s, -3, 3, seed++)},
                  {attr_int("axis", axis), attr_bool("exclusive", exclusive), attr_bool("reverse", reverse)}, tol);
        }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("OneHot, GatherV2 and UnsortedSegmentSum match the CPU with int32 and int64 indices") {
  for (DType it : {DType::Int32, DType::Int64}) {
    CAPTURE(dtype_name(it));
    Tensor idx = random_tensor(it, Shape{4, 3}, 0, 4, 1);
    for (DType dt : kNumeric)
      for (int64_t axis : {-1, 0, 1}) {
        CAPTURE(dtype_name(dt));
        compare("OneHot", {idx},
                {attr_int("depth", 5), attr_int("axis", axis), attr_float("on_value", 3), attr_float("off_value", -1),
                 attr_dtype("dtype", dt)},
                0);
      }
    for (DType dt : kAllWidths)
      for (int64_t axis : {0, 1, 2}) {
        CAPTURE(dtype_name(dt));
        CAPTURE(axis);
        Tensor params = values_for(dt, Shape{5, 6, 5}, 2);
        compare("GatherV2", {params, idx}, {attr_int("axis", axis)}, 0);
      }
    compare("GatherV2", {values_for(DType::Float32, Shape{1000, 64}, 3), random_tensor(it, Shape{777}, 0, 999, 4)}, {}, 0);
    compare("GatherV2", {values_for(DType::Float32, Shape{5}, 3), random_tensor(it, Shape{}, 0, 4, 4)}, {}, 0);
    for (DType dt : kNumeric) {
      CAPTURE(dtype_name(dt));
      Tensor ids = random_tensor(it, Shape{40}, 0, 9, 5);
      compare("UnsortedSegmentSum", {random_tensor(dt, Shape{40, 6}, -4, 4, 6), ids}, {attr_int("num_segments", 12)},
              tolerance(dt, false));
      compare("UnsortedSegmentSum", {random_tensor(dt, Shape{40}, -4, 4, 7), ids}, {attr_int("num_segments", 10)},
              tolerance(dt, false));
    }
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("data movement ops match the CPU for every element width") {
  for (DType dt : kAllWidths) {
    CAPTURE(dtype_name(dt));
    Tensor x = values_for(dt, Shape{4, 5, 6}, 11);
    compare("Slice", {x}, {attr_ints("begin", {1, 0, 2}), attr_ints("size", {2, 5, 3})}, 0);
    compare("Slice", {x}, {attr_ints("begin", {1, 0, 2}), attr_ints("size", {0, 5, 3})}, 0);
    compare("StridedSlice", {x},
            {attr_ints("begin", {3, 0, 1}), attr_ints("end", {0, 5, 6}), attr_ints("strides", {-1, 2, 2})}, 0);
    compare("StridedSlice", {x},
            {attr_ints("begin", {1, 0, 0}), attr_ints("end", {2, 0, 0}), attr_ints("strides", {1, 1, 1}),
             attr_int("end_mask", 6), attr_int("shrink_axis_mask", 1)},
            0);
    compare("StridedSliceGrad", {values_for(dt, Shape{3, 3, 3}, 12)},
            {attr_ints("shape", {4, 5, 6}), attr_ints("begin", {3, 0, 1}), attr_ints("end", {0, 5, 6}),
             attr_ints("strides", {-1, 2, 2})},
            0);
    compare("ConcatV2", {x, values_for(dt, Shape{4, 2, 6}, 13), values_for(dt, Shape{4, 0, 6}, 14)},
            {attr_int("axis", 1)}, 0);
    compare("ConcatV2", {x, x}, {attr_int("axis", -1)}, 0);
    compare("Pack", {x, values_for(dt, Shape{4, 5, 6}, 15)}, {attr_int("axis", 2)}, 0);
    compare("Pack", {values_for(dt, Shape{}, 16), values_for(dt, Shape{}, 17)}, {}, 0);
    compare("Unpack", {x}, {attr_int("num", 5), attr_int("axis", 1)}, 0);
    compare("Split", {x}, {attr_int("num_split", 3), attr_int("axis", 2)}, 0);
    compare("Tile", {x}, {attr_ints("multiples", {2, 1, 3})}, 0);
    compare("Tile", {values_for(dt, Shape{3}, 18)}, {attr_ints("multiples", {0})}, 0);
    compare("Pad", {x}, {attr_ints("paddings", {1, 2, 0, 0, 3, 1}), attr_float("constant_values", 1)}, 0);
    compare("Pad", {values_for(dt, Shape{0, 2}, 19)}, {attr_ints("paddings", {1, 1, 0, 1})}, 0);
    compare("Reverse", {x}, {attr_ints("axis", {0, 2})}, 0);
    compare("Fill", {values_for(dt, Shape{}, 20)}, {attr_ints("dims", {3, 1, 7})}, 0);
  }
  // Large and odd sizes take the grid-stride path.
  compare("Tile", {values_for(DType::Float32, Shape{1, 300001}, 21)}, {attr_ints("multiples", {3, 1})}, 0);
  compare("ConcatV2", {values_for(DType::Float32, Shape{333, 257}, 22), values_for(DType::Float32, Shape{333, 1}, 23)},
          {attr_int("axis", 1)}, 0);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Range matches the CPU") {
  for (DType dt : kNumeric) {
    CAPTURE(dtype_name(dt));
    compare("Range", {}, {attr_float("start", 3), attr_float("limit", 40), attr_float("delta", 3), attr_dtype("dtype", dt)},
            dt == DType::Float16 ? 1e-3 : 1e-6);
    compare("Range", {}, {attr_float("start", 10), attr_float("limit", -5), attr_float("delta", -2), attr_dtype("dtype", dt)},
            dt == DType::Float16 ? 1e-3 : 1e-6);
    compare("Range", {}, {attr_float("start", 1), attr_float("limit", 1), attr_dtype("dtype", dt)}, 0);
  }
  compare("Range", {}, {attr_float("start", -0.5), attr_float("limit", 1000), attr_float("delta", 0.25)}, 1e-6);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Conv2D and its backprop ops match the CPU: strides, dilations, SAME and VALID") {
  struct Case {
    Shape x, f;
    std::vector<int64_t> strides, dilations;
    const char* padding;
  };
  std::vector<Case> cases = {{Shape{2, 7, 6, 3}, Shape{3, 3, 3, 4}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"},
                             {Shape{2, 7, 6, 3}, Shape{3, 2, 3, 5}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"},
                             {Shape{1, 9, 8, 2}, Shape{2, 3, 2, 3}, {1, 2, 1, 1}, {1, 2, 2, 1}, "SAME"},
                             {Shape{3, 5, 5, 1}, Shape{1, 1, 1, 2}, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME"},
                             {Shape{1, 16, 16, 8}, Shape{5, 5, 8, 16}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"}};
  uint32_t seed = 300;
  for (DType dt : {DType::Float32, DType::Float16})
    for (const auto& c : cases) {
      CAPTURE(dtype_name(dt));
      CAPTURE(c.x.str());
      CAPTURE(c.f.str());
      double tol = dt == DType::Float16 ? 1e-2 : 1e-4;
      std::vector<NamedAttr> attrs = {attr_ints("strides", c.strides), attr_ints("dilations", c.dilations),
                                      attr_string("padding", c.padding)};
      Tensor x = random_tensor(dt, c.x, -1, 1, seed), f = random_tensor(dt, c.f, -1, 1, seed + 1);
      seed += 3;
      compare("Conv2D", {x, f}, attrs, tol);
      Tensor y = run_op(ctx(), "Conv2D", {x, f}, attrs)[0];
      Tensor dy = random_tensor(dt, y.shape(), -1, 1, seed);
      std::vector<int64_t> xs(c.x.dims(), c.x.dims() + 4), fs(c.f.dims(), c.f.dims() + 4);
      std::vector<NamedAttr> in_attrs = attrs, f_attrs = attrs;
      in_attrs.push_back(attr_ints("input_sizes", xs));
      f_attrs.push_back(attr_ints("filter_sizes", fs));
      compare("Conv2DBackpropInput", {f, dy}, in_attrs, tol);
      compare("Conv2DBackpropFilter", {x, dy}, f_attrs, tol);
    }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("pools and their gradients match the CPU, ties and NaN included") {
  struct Case {
    Shape x;
    std::vector<int64_t> ksize, strides;
    const char* padding;
  };
  std::vector<Case> cases = {{Shape{2, 6, 6, 3}, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"},
                             {Shape{2, 7, 5, 3}, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME"},
                             {Shape{1, 5, 5, 2}, {1, 3, 2, 1}, {1, 1, 1, 1}, "SAME"},
                             {Shape{1, 4, 4, 1}, {1, 4, 4, 1}, {1, 1, 1, 1}, "VALID"}};
  uint32_t seed = 400;
  for (DType dt : {DType::Float32, DType::Float16})
    for (const auto& c : cases) {
      CAPTURE(dtype_name(dt));
      CAPTURE(c.x.str());
      double tol = dt == DType::Float16 ? 2e-3 : 1e-5;
      std::vector<NamedAttr> attrs = {attr_ints("ksize", c.ksize), attr_ints("strides", c.strides),
                                      attr_string("padding", c.padding)};
      // Few distinct values: ties decide MaxPool's argmax.
      Tensor x = random_tensor(dt, c.x, 0, 3, seed++);
      compare("MaxPool", {x}, attrs, 0);
      compare("AvgPool", {x}, attrs, tol);
      Tensor y = run_op(ctx(), "MaxPool", {x}, attrs)[0];
      Tensor dy = random_tensor(dt, y.shape(), -1, 1, seed++);
      compare("MaxPoolGrad", {x, y, dy}, attrs, tol);
      compare("MaxPoolGradGrad", {x, y, random_tensor(dt, c.x, -1, 1, seed++)}, attrs, 0);
      std::vector<int64_t> xs(c.x.dims(), c.x.dims() + 4);
      std::vector<NamedAttr> avg_attrs = attrs;
      avg_attrs.push_back(attr_ints("orig_input_shape", xs));
      compare("AvgPoolGrad", {dy}, avg_attrs, tol);
    }
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = make<float>({1, nan, 3, 2, 5, nan, 0, 1, 2}, Shape{1, 3, 3, 1});
  // attr_ints keeps a view: the vectors must outlive the attributes.
  std::vector<int64_t> ksize = {1, 2, 2, 1}, ones = {1, 1, 1, 1};
  std::vector<NamedAttr> attrs = {attr_ints("ksize", ksize), attr_ints("strides", ones), attr_string("padding", "VALID")};
  compare("MaxPool", {x}, attrs, 0);
  compare("MaxPoolGrad", {x, run_op(ctx(), "MaxPool", {x}, attrs)[0], make<float>({1, 2, 3, 4}, Shape{1, 2, 2, 1})},
          attrs, 0);
  CHECK_NO_VALIDATION_ERRORS();
}

// The Vulkan result of a random op with explicit seeds against the CPU's (op runs without inputs
// on each context's default device).
void compare_random(const char* op, DType dt, const Shape& s, double tol) {
  std::vector<int64_t> dims(s.dims(), s.dims() + s.rank());
  std::vector<NamedAttr> attrs = {attr_ints("shape", dims), attr_dtype("dtype", dt), attr_int("seed", 7),
                                  attr_int("seed2", 3)};
  Tensor want = run_op(ctx(), op, {}, attrs)[0];
  Tensor got = run_op(vk_ctx(), op, {}, attrs)[0];
  CHECK(got.device()->name() == "vulkan:0");
  check_close(as_doubles(to_cpu(got)), as_doubles(want), tol);
}

TEST_CASE("random ops give the CPU's Philox numbers") {
  for (DType dt : {DType::Float32, DType::Float16}) {
    CAPTURE(dtype_name(dt));
    // Uniform bits map to floats exactly on both devices.
    compare_random("RandomUniform", dt, Shape{1001}, 0);
    compare_random("RandomUniform", dt, Shape{0}, 0);
    // Box-Muller runs in float on the GPU and in double on the CPU.
    compare_random("RandomStandardNormal", dt, Shape{7, 33}, dt == DType::Float16 ? 2e-3 : 2e-4);
    compare_random("TruncatedNormal", dt, Shape{501}, dt == DType::Float16 ? 2e-3 : 2e-4);
  }
  // Without explicit seeds, each context follows its own seed: equal seeds, equal streams.
  ContextOptions o;
  o.device = "vulkan";
  o.seed = 42;
  Context a(o), b(o);
  std::vector<int64_t> shape = {100};
  std::vector<NamedAttr> attrs = {attr_ints("shape", shape)};
  CHECK(values<float>(to_cpu(run_op(a, "RandomUniform", {}, attrs)[0])) ==
        values<float>(to_cpu(run_op(b, "RandomUniform", {}, attrs)[0])));
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
