#include "tests/runtime/graph/op_cases.h"

#include <fmt/format.h>

#include <cmath>
#include <complex>
#include <limits>

#include "runtime/ops/registry.h"
#include "tests/cases/compare_tables.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

Tensor bools_of(const std::vector<double>& v, const Shape& s) { return make_as(DType::Bool, v, s); }
Tensor i32(const std::vector<double>& v, const Shape& s) { return make_as(DType::Int32, v, s); }
Tensor i64(const std::vector<double>& v, const Shape& s) { return make_as(DType::Int64, v, s); }

Tensor complex_ramp(const Shape& s) {
  std::vector<complex64> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = complex64(std::sin(0.7f * static_cast<float>(i)), std::cos(1.3f * static_cast<float>(i)) - 0.25f);
  return make<complex64>(v, s);
}

// The values gradcheck stays away from: NaN, infinities, signed zeros, halves (rounding ties),
// a tiny and a large magnitude. 16 of them, as a [4, 4] tensor.
const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kSpecial = {NAN, -kInf, kInf, -0.0, 0.0,  -2.5, -1.5, -0.5,
                                      0.5, 1.5,   2.5,  3.7,  -7.25, 1e-30, 88.0, -100.0};
Tensor specials() { return f64(kSpecial, {4, 4}); }
Tensor specials_reversed() { return f64(std::vector<double>(kSpecial.rbegin(), kSpecial.rend()), {4, 4}); }

void add_specials(std::vector<OpCase>& out) {
  for (const char* name : {"Abs", "Neg", "Sign", "Square", "Reciprocal", "Exp", "Log", "Log1p", "Sqrt", "Rsqrt",
                           "Sin", "Cos", "Tanh", "Sigmoid", "Erf", "Relu", "Relu6", "Elu", "Selu", "Softplus",
                           "Gelu", "Floor", "Ceil", "Round", "IsFinite", "IsNan", "Identity", "ZerosLike",
                           "OnesLike", "StopGradient"})
    out.push_back({name, "special values", {specials()}, op_fn(name)});
  out.push_back({"Gelu", "special values, approximate", {specials()}, op_fn("Gelu", {a_bool("approximate", true)})});
  for (const char* name : {"Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum",
                           "SquaredDifference", "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"}) {
    out.push_back({name, "special values pairwise", {specials(), specials_reversed()}, op_fn(name)});
    out.push_back({name, "special values with -0 broadcast", {specials(), f64({-0.0}, {})}, op_fn(name)});
    out.push_back({name, "row broadcast with NaN", {f64({NAN, 2, -3, 0.5}, {4}), specials()}, op_fn(name)});
  }
}

std::vector<OpCase> comparison_and_logic_cases() {
  std::vector<OpCase> out;
  Tensor x = f64({1, -2, 3, 0.5, 3, -1}, {2, 3});
  Tensor y = f64({1, 3, -1}, {3});  // ties with x in both rows
  for (const char* name : {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"}) {
    out.push_back({name, "row broadcast with ties", {x, y}, op_fn(name)});
    out.push_back({name, "scalar", {f64({0.5}, {}), x}, op_fn(name)});
    out.push_back({name, "empty", {f64({}, {0, 3}), y}, op_fn(name)});
  }
  for (const char* name : {"Equal", "NotEqual"})
    out.push_back({name, "bool", {bools_of({1, 0, 1, 0}, {2, 2}), bools_of({1, 0}, {2})}, op_fn(name)});
  Tensor p = bools_of({1, 0, 1, 1, 0, 0}, {2, 3}), q = bools_of({1, 1, 0}, {3});
  out.push_back({"LogicalAnd", "row broadcast", {p, q}, op_fn("LogicalAnd")});
  out.push_back({"LogicalOr", "row broadcast", {p, q}, op_fn("LogicalOr")});
  out.push_back({"LogicalNot", "", {p}, op_fn("LogicalNot")});
  Tensor b = bools_of({1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1}, {2, 3, 2});
  for (const char* name : {"All", "Any"}) {
    out.push_back({name, "all axes", {b}, op_fn(name)});
    out.push_back({name, "axis 1 keep_dims", {b}, op_fn(name, {a_ints("axis", {1}), a_bool("keep_dims", true)})});
    out.push_back({name, "axes 0 and -1", {b}, op_fn(name, {a_ints("axis", {0, -1})})});
    out.push_back({name, "empty", {bools_of({}, {2, 0})}, op_fn(name, {a_ints("axis", {1})})});
  }
  return out;
}

std::vector<OpCase> rounding_and_index_cases() {
  std::vector<OpCase> out;
  Tensor halves = f64({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.2, 0.7, 3.49, -3.51}, {2, 5});
  for (const char* name : {"Floor", "Ceil", "Round", "Sign"}) out.push_back({name, "halves", {halves}, op_fn(name)});
  out.push_back({"FloorDiv", "both signs", {f64({7, -7, 7.5, -0.5, 3, 0}, {2, 3}), f64({2, -2, 0.75}, {3})},
                 op_fn("FloorDiv")});
  Tensor ties = f64({1, 5, 5, -2, 0, NAN, 3, 3, 2, 2, 2, 2}, {3, 4});
  for (const char* name : {"ArgMax", "ArgMin"}) {
    out.push_back({name, "axis 1, ties and NaN", {ties}, op_fn(name, {a_int("axis", 1)})});
    out.push_back({name, "axis 0, int32 output", {ties},
                   op_fn(name, {a_int("axis", 0), a_dtype("output_type", DType::Int32)})});
    out.push_back({name, "axis -1 of 3-D", {uniform({2, 3, 4})}, op_fn(name, {a_int("axis", -1)})});
  }
  out.push_back({"OneHot", "out-of-range and negative indices", {i32({0, 2, -1, 5, 1}, {5})},
                 op_fn("OneHot", {a_int("depth", 3), a_float("on_value", 1.5), a_float("off_value", -0.5),
                                  a_dtype("dtype", DType::Float32)})});
  out.push_back({"OneHot", "axis 0, int64 indices", {i64({1, 0, 3, 2, 2, 0}, {2, 3})},
                 op_fn("OneHot", {a_int("depth", 4), a_int("axis", 0), a_dtype("dtype", DType::Int32)})});
  out.push_back({"OneHot", "float64", {i32({3, 1}, {2})},
                 op_fn("OneHot", {a_int("depth", 4), a_dtype("dtype", DType::Float64)})});
  for (const char* name : {"ZerosLike", "OnesLike"}) {
    out.push_back({name, "float64", {uniform({2, 3})}, op_fn(name)});
    out.push_back({name, "int32", {i32({4, -1, 7}, {3})}, op_fn(name)});
    out.push_back({name, "bool", {bools_of({1, 0}, {2})}, op_fn(name)});
  }
  out.push_back({"StopGradient", "", {uniform({2, 3})}, op_fn("StopGradient")});
  // Cast between the dtypes every backend has; float -> int truncates, saturates and sends NaN to 0.
  auto cast = [](DType to) { return op_fn("Cast", {a_dtype("DstT", to)}); };
  Tensor special32 = make_as(DType::Float32, kSpecial, {4, 4});
  out.push_back({"Cast", "float32 -> int32, special values", {special32}, cast(DType::Int32)});
  out.push_back({"Cast", "float32 -> bool, special values", {special32}, cast(DType::Bool)});
  out.push_back({"Cast", "float64 -> float32, special values", {specials()}, cast(DType::Float32)});
  out.push_back({"Cast", "int32 -> float32", {i32({-7, 0, 3, 2147483647}, {2, 2})}, cast(DType::Float32)});
  out.push_back({"Cast", "int32 -> bool", {i32({-7, 0, 3, 0}, {4})}, cast(DType::Bool)});
  out.push_back({"Cast", "bool -> float32", {bools_of({1, 0, 1}, {3})}, cast(DType::Float32)});
  out.push_back({"Cast", "bool -> int32", {bools_of({0, 1}, {2})}, cast(DType::Int32)});
  // Range takes no inputs: a traced Range is folded into a constant (or replayed on the default device).
  auto range = [](double start, double limit, double delta, DType dt) {
    return op_fn("Range", {a_float("start", start), a_float("limit", limit), a_float("delta", delta),
                           a_dtype("dtype", dt)});
  };
  out.push_back({"Range", "float32", {}, range(1, 7.5, 1.5, DType::Float32)});
  out.push_back({"Range", "int32 descending", {}, range(10, -2, -3, DType::Int32)});
  out.push_back({"Range", "float64 fractional", {}, range(-1, 1, 0.3, DType::Float64)});
  out.push_back({"Range", "empty", {}, range(3, 3, 1, DType::Int32)});
  return out;
}

std::vector<OpCase> fft_cases() {
  std::vector<OpCase> out;
  out.push_back({"FFT", "3 x 8", {complex_ramp({3, 8})}, op_fn("FFT")});
  out.push_back({"FFT", "odd length", {complex_ramp({2, 12})}, op_fn("FFT")});
  out.push_back({"IFFT", "3 x 8", {complex_ramp({3, 8})}, op_fn("IFFT")});
  out.push_back({"FFT2D", "2 x 4 x 6", {complex_ramp({2, 4, 6})}, op_fn("FFT2D")});
  out.push_back({"IFFT2D", "4 x 8", {complex_ramp({4, 8})}, op_fn("IFFT2D")});
  Tensor real = make_as(DType::Float32, as_doubles(uniform({3, 8})), {3, 8});
  out.push_back({"RFFT", "3 x 8", {real}, op_fn("RFFT", {a_ints("fft_length", {8})})});
  out.push_back({"RFFT", "cropped to 6", {real}, op_fn("RFFT", {a_ints("fft_length", {6})})});
  out.push_back({"IRFFT", "3 x 5 to 8", {complex_ramp({3, 5})}, op_fn("IRFFT", {a_ints("fft_length", {8})})});
  Tensor real2 = make_as(DType::Float32, as_doubles(uniform({2, 4, 6})), {2, 4, 6});
  out.push_back({"RFFT2D", "2 x 4 x 6", {real2}, op_fn("RFFT2D", {a_ints("fft_length", {4, 6})})});
  out.push_back({"IRFFT2D", "2 x 4 x 4 to 4 x 6", {complex_ramp({2, 4, 4})},
                 op_fn("IRFFT2D", {a_ints("fft_length", {4, 6})})});
  return out;
}

std::vector<OpCase> random_cases() {
  std::vector<OpCase> out;
  for (const char* name : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"})
    for (DType dt : {DType::Float32, DType::Float64}) {
      std::string type = dtype_name(dt);
      out.push_back({name, "seeded, " + type, {},
                     op_fn(name, {a_ints("shape", {3, 5}), a_dtype("dtype", dt), a_int("seed", 7), a_int("seed2", 11)})});
      // Odd element count: the normals' Box-Muller pairs do not divide it.
      out.push_back({name, "seeds 0,0, " + type, {},
                     op_fn(name, {a_ints("shape", {2, 7}), a_dtype("dtype", dt)}), /*fresh_draws=*/true});
    }
  return out;
}

// The Vulkan comparison tables (tests/cases/compare_tables.h): large, empty, scalar, odd and
// broadcast shapes, with inputs in each op's domain.
std::vector<OpCase> compare_table_cases() {
  std::vector<OpCase> out;
  auto add = [&](OpCase c, std::string family) {
    c.family = std::move(family);
    out.push_back(std::move(c));
  };
  for (const tables::UnaryRange& u : tables::unary_ranges())
    for (const Shape& s : tables::elementwise_shapes())
      add({u.op, "ops_compare shape " + s.str(), {uniform(s, u.lo, u.hi)}, op_fn(u.op)}, u.op);
  for (const tables::BinaryRange& b : tables::binary_ranges())
    for (const auto& [sx, sy] : tables::broadcast_pairs())
      add({b.op, "ops_compare " + sx.str() + " with " + sy.str(), {uniform(sx, b.lo, b.hi), uniform(sy, b.lo, b.hi)},
           op_fn(b.op)},
          b.op);
  for (const char* op : tables::reduction_ops()) {
    const bool prod = std::string(op) == "Prod";  // values near 1 keep long products finite
    for (const auto& [s, axes] : tables::reduction_axes())
      for (bool keep : {false, true}) {
        std::string attrs = " axis " + fmt::format("[{}]", fmt::join(axes, ",")) + (keep ? " keep_dims" : "");
        add({op, "ops_compare " + s.str() + attrs, {uniform(s, prod ? 0.9 : -5, prod ? 1.1 : 5)},
             op_fn(op, {a_ints("axis", axes), a_bool("keep_dims", keep)})},
            op + attrs);
      }
  }
  for (const tables::MatMulShapes& m : tables::matmul_shapes()) {
    std::string attrs = std::string(m.ta ? " ta" : "") + (m.tb ? " tb" : "");
    add({"MatMul", "ops_compare " + m.a.str() + " x " + m.b.str() + attrs, {uniform(m.a, -2, 2), uniform(m.b, -2, 2)},
         op_fn("MatMul", {a_bool("transpose_a", m.ta), a_bool("transpose_b", m.tb)})},
        "MatMul" + attrs);
  }
  return out;
}

// The fused optimizer updates (ops/training_ops.cc): variable and slots of one shape, scalar
// hyperparameters, accumulators that stay non-negative under the square roots.
std::vector<OpCase> training_cases() {
  std::vector<OpCase> out;
  const Shape s{3, 4};
  Tensor var = uniform(s), slot = uniform(s), pos = uniform(s, 0, 1), pos2 = uniform(s, 0.5, 1), g = uniform(s);
  auto sc = [](double v) { return f64({v}, {}); };
  out.push_back({"ApplyGradientDescent", "", {var, sc(0.1), g}, op_fn("ApplyGradientDescent")});
  for (const char* name : {"ApplyMomentum", "ApplyKerasMomentum"})
    for (bool nesterov : {false, true})
      out.push_back({name, nesterov ? "nesterov" : "", {var, slot, sc(0.1), g, sc(0.9)},
                     op_fn(name, {a_bool("use_nesterov", nesterov)})});
  for (bool nesterov : {false, true})
    out.push_back({"ApplyAdam", nesterov ? "nesterov" : "",
                   {var, slot, pos, sc(0.81), sc(0.998), sc(0.01), sc(0.9), sc(0.999), sc(1e-7), g},
                   op_fn("ApplyAdam", {a_bool("use_nesterov", nesterov)})});
  out.push_back({"ApplyAdamW", "", {var, slot, pos, sc(0.9), sc(0.999), sc(0.01), sc(0.9), sc(0.999), sc(1e-7), sc(0.004), g},
                 op_fn("ApplyAdamW")});
  out.push_back({"ApplyRMSProp", "", {var, pos, slot, sc(0.01), sc(0.9), sc(0.5), sc(1e-7), g}, op_fn("ApplyRMSProp")});
  // ms well above mg^2, so the centered denominator stays positive.
  out.push_back({"ApplyCenteredRMSProp", "", {var, uniform(s, -0.5, 0.5), pos2, slot, sc(0.01), sc(0.9), sc(0.5), sc(1e-7), g},
                 op_fn("ApplyCenteredRMSProp")});
  out.push_back({"ApplyKerasRMSProp", "", {var, pos, sc(0.01), sc(0.9), sc(1e-7), g}, op_fn("ApplyKerasRMSProp")});
  out.push_back({"ApplyKerasCenteredRMSProp", "", {var, uniform(s, -0.5, 0.5), pos2, sc(0.01), sc(0.9), sc(1e-7), g},
                 op_fn("ApplyKerasCenteredRMSProp")});
  return out;
}

// Whether the op's first input may be int32 (the int32 variant of a case is pointless otherwise).
bool accepts_int32(const std::string& op) {
  const OpDef* def = OpRegistry::global().find(op);
  if (!def || def->inputs.empty() || def->inputs[0].type_attr.empty()) return true;
  for (const AttrDef& a : def->attrs)
    if (a.name == def->inputs[0].type_attr) return a.allowed_dtypes == 0 || dtype_in(a.allowed_dtypes, DType::Int32);
  return true;
}

// The gradcheck cases, unchanged: GradCase's op, label, inputs and function.
std::vector<OpCase> gradcheck_cases() {
  std::vector<OpCase> out;
  for (const GradCase& g : grad_cases()) out.push_back({g.op, "gradcheck: " + g.label, g.inputs, g.fn});
  return out;
}

constexpr int64_t kLargeCase = 50000;  // input elements
constexpr double kInt32Bound = 20000;  // (2 * 20000)^2 < 2^31

Tensor converted(const Tensor& t, Variant v) {
  if (t.dtype() != DType::Float64) return t;
  if (v == Variant::Float32) return run_op(ctx(), "Cast", {t}, {attr_dtype("DstT", DType::Float32)})[0];
  // Clipped so that sums, products and squares of two values stay inside int32: signed overflow
  // is undefined behaviour in the kernels (UBSan stops the test).
  Tensor scaled = run_op(ctx(), "Mul", {t, f64({8}, {})})[0];
  Tensor clipped = run_op(ctx(), "ClipByValue", {scaled, f64({-kInt32Bound}, {}), f64({kInt32Bound}, {})})[0];
  return run_op(ctx(), "Cast", {clipped}, {attr_dtype("DstT", DType::Int32)})[0];
}

}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all = gradcheck_cases();
    for (auto make : {comparison_and_logic_cases, rounding_and_index_cases, fft_cases, random_cases,
                      compare_table_cases, training_cases})
      for (OpCase& c : make()) all.push_back(std::move(c));
    add_specials(all);
    all.push_back({"Where", "bool 2-D", {bools_of({1, 0, 1, 1, 0, 0}, {2, 3})}, op_fn("Where")});
    all.push_back({"Where", "float with NaN and -0", {f64({0, -0.0, NAN, 2}, {4})}, op_fn("Where")});
    return all;
  }();
  return cases;
}

const std::map<std::string, std::string>& untraceable_ops() {
  static const std::map<std::string, std::string> ops = {
      {"Where", "its output shape (the number of true elements) depends on the input values; tracing raises "
                "Unimplemented until graphs have data-dependent shapes"},
  };
  return ops;
}

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::AsWritten: return "as written";
    case Variant::Float32: return "float32";
    case Variant::Int32: return "int32";
  }
  return "?";
}

std::optional<OpCase> variant_of(const OpCase& c, Variant v) {
  if (v == Variant::AsWritten) return c;
  bool changed = false;
  OpCase out = c;
  for (Tensor& t : out.inputs) {
    changed = changed || t.dtype() == DType::Float64;
    t = converted(t, v);
  }
  if (!changed) return std::nullopt;
  out.label += std::string(" (") + variant_name(v) + ")";
  return out;
}

std::vector<OpCase> variants(const OpCase& c, bool float64_kernels) {
  int64_t elements = 0;
  for (const Tensor& t : c.inputs) elements += t.num_elements();
  // Large cases (ops_compare's 300001-element and 1000 x 513 shapes) run in float32 only, which
  // keeps the test's time down; the small shapes cover the other dtypes.
  const bool large = elements > kLargeCase;
  std::vector<OpCase> out;
  for (Variant v : {Variant::Float32, Variant::Int32}) {
    if (v == Variant::Int32 && (large || !accepts_int32(c.op))) continue;
    if (std::optional<OpCase> converted = variant_of(c, v)) out.push_back(std::move(*converted));
  }
  if ((float64_kernels && !large) || out.empty()) out.insert(out.begin(), c);
  return out;
}

}  // namespace cairn::test
