// Fused elementwise chains on Vulkan: a replay runs each fused group as one generated compute
// shader (gpu/vulkan/fused_shader.h), and its results equal the unfused replay's bit for bit.
// Validation layer on (vk_test_util).
#include <cstring>
#include <functional>

#include "gpu/vulkan/fused_shader.h"
#include "gpu/vulkan/glsl_compiler.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/graph/fusion.h"
#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

using Body = std::function<Tensor(Context&, const std::vector<Tensor>&)>;

Tensor U(Context& c, const char* op, const Tensor& x) { return op::run1(c, op, {x}); }
Tensor B(Context& c, const char* op, const Tensor& x, const Tensor& y) { return op::run1(c, op, {x, y}); }
// A float32 constant on the default device (Vulkan), captured by the trace as a one-element input.
// Made eagerly: op::scalar traced inside a function makes a CPU constant, which a Vulkan replay
// cannot read (see docs/vulkan.md).
Tensor k(Context& c, const Tensor&, double v) {
  EagerScope eager;
  return op::scalar(c, c.default_device(), DType::Float32, v);
}

Ref<graph::Function> function(const char* name, const Body& body, bool fuse) {
  graph::FunctionOptions fo;
  fo.passes.fuse_elementwise = fuse;
  return make_ref<graph::Function>(
      vk_ctx(), name, [body](Context& c, const std::vector<Tensor>& in) { return std::vector<Tensor>{body(c, in)}; },
      fo);
}

size_t fused_nodes(const graph::Function& f) {
  size_t n = 0;
  for (const graph::Node& node : f.concretes().at(0)->fused_graph().nodes)
    n += node.kind == graph::NodeKind::Op && node.def == &graph::fused_elementwise_def();
  return n;
}

uint64_t dispatches() {
  vk_ctx().default_device().synchronize();
  return vk_device().stats().dispatches;
}

// The bits of a float32 tensor (NaNs compare by their bits).
std::vector<uint32_t> bits(const Tensor& t) {
  Tensor h = to_cpu(t);
  std::vector<uint32_t> out(static_cast<size_t>(h.num_elements()));
  std::memcpy(out.data(), h.raw_data(), out.size() * 4);
  return out;
}

struct Outcome {
  uint64_t fused_dispatches = 0, unfused_dispatches = 0;
  size_t fused_groups = 0;
};

// Replays `body` fused and unfused on Vulkan (after a trace and a warm-up call each) and checks
// the results are bitwise equal.
Outcome check_fused_equals_unfused(std::string name, const Body& body, const std::vector<Tensor>& host_inputs) {
  CAPTURE(name);
  std::vector<Tensor> in;
  for (const Tensor& t : host_inputs) in.push_back(to_vk(t));
  auto fused = function(name.c_str(), body, true), unfused = function(name.c_str(), body, false);
  for (int i = 0; i < 2; ++i) {
    fused->call(in);
    unfused->call(in);
  }
  Outcome o;
  o.fused_groups = fused_nodes(*fused);
  uint64_t d0 = dispatches();
  Tensor got = fused->call(in).at(0);
  uint64_t d1 = dispatches();
  Tensor want = unfused->call(in).at(0);
  uint64_t d2 = dispatches();
  o.fused_dispatches = d1 - d0;
  o.unfused_dispatches = d2 - d1;
  CHECK(got.device()->name() == "vulkan:0");
  REQUIRE(got.shape() == want.shape());
  std::vector<uint32_t> g = bits(got), w = bits(want);
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i] != w[i] && mismatches++ == 0) first = i;
  CAPTURE(first);
  if (mismatches) {
    float gf, wf;
    std::memcpy(&gf, &g[first], 4);
    std::memcpy(&wf, &w[first], 4);
    MESSAGE(name, ": element ", first, " fused ", gf, " unfused ", wf, " (",
            static_cast<int64_t>(g[first]) - static_cast<int64_t>(w[first]), " ulps)");
  }
  CHECK(mismatches == 0);
  CHECK_NO_VALIDATION_ERRORS();
  return o;
}

// Every unary step in [-3, 3]-ish ranges, mixed with full/full and full/scalar binary steps.
Tensor bounded_chain(Context& c, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  Tensor t = U(c, "Sin", x);
  t = U(c, "Cos", t);
  t = U(c, "Tanh", B(c, "Mul", t, x));
  t = U(c, "Sigmoid", B(c, "Sub", t, x));
  t = U(c, "Erf", B(c, "Add", t, x));
  t = U(c, "Relu", B(c, "Sub", t, k(c, x, 0.2)));
  t = U(c, "Relu6", B(c, "Mul", B(c, "Add", t, x), k(c, x, 4)));
  t = U(c, "Elu", B(c, "Sub", t, k(c, x, 1.5)));
  t = U(c, "Selu", t);
  t = U(c, "Softplus", B(c, "Sub", t, x));
  return U(c, "Neg", t);
}

// Steps that need positive operands, and every remaining binary step.
Tensor positive_chain(Context& c, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  Tensor a = B(c, "Add", U(c, "Abs", x), k(c, x, 0.1));
  Tensor t = U(c, "Log", a);
  t = U(c, "Log1p", U(c, "Abs", t));
  t = U(c, "Sqrt", B(c, "Add", t, a));
  t = U(c, "Rsqrt", t);
  t = U(c, "Exp", U(c, "Neg", t));
  t = U(c, "Reciprocal", t);
  t = U(c, "Square", t);
  t = B(c, "RealDiv", t, B(c, "Add", a, k(c, x, 1)));
  t = B(c, "Pow", t, k(c, x, 1.5));
  t = B(c, "SquaredDifference", t, x);
  t = B(c, "Maximum", t, k(c, x, 0.5));
  t = B(c, "Minimum", k(c, x, 4), t);
  return B(c, "Pow", B(c, "Sub", k(c, x, 0), t), k(c, x, 3));  // a negative base, an odd integer exponent
}

// Rounding and sign steps on values with exact halves, sharing one intermediate (a DAG).
Tensor rounding_chain(Context& c, const std::vector<Tensor>& in) {
  Tensor t = B(c, "Mul", in[0], k(c, in[0], 2.5));
  Tensor s = B(c, "Add", U(c, "Sign", t), U(c, "Floor", t));
  return B(c, "Sub", B(c, "Add", s, U(c, "Ceil", t)), U(c, "Round", t));
}

TEST_CASE("fused == unfused on Vulkan: every fusible step, one dispatch per fused group") {
  struct Case {
    const char* name;
    Tensor (*body)(Context&, const std::vector<Tensor>&);
    double lo, hi;
  };
  for (const Case& cs : {Case{"bounded", bounded_chain, -3, 3}, Case{"positive", positive_chain, -4, 4},
                         Case{"rounding", rounding_chain, -5, 5}}) {
    Tensor x = random_tensor(DType::Float32, Shape{3, 341}, cs.lo, cs.hi, 11);
    if (std::string(cs.name) == "rounding") {  // exact halves after * 2.5: ties for Round
      float* p = x.mutable_data<float>();
      for (int64_t i = 0; i < x.num_elements(); i += 3) p[i] = static_cast<float>(i % 17) * 0.2f - 1.0f;
    }
    Outcome o = check_fused_equals_unfused(cs.name, cs.body, {x});
    CAPTURE(std::string(cs.name));
    CHECK(o.fused_groups == 1);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches >= 8);
  }
}

TEST_CASE("fused == unfused on Vulkan: odd sizes, scalar inputs, NaN and infinities") {
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000003}}) {
    CAPTURE(n);
    Tensor x = random_tensor(DType::Float32, Shape{n}, -3, 3, 5);
    if (n >= 7) {
      float* p = x.mutable_data<float>();
      p[1] = std::numeric_limits<float>::quiet_NaN();
      p[2] = std::numeric_limits<float>::infinity();
      p[3] = -std::numeric_limits<float>::infinity();
      p[4] = 0.0f;
      p[5] = -0.0f;
    }
    Outcome o = check_fused_equals_unfused("bounded", bounded_chain, {x});
    CHECK(o.fused_dispatches == 1);
    check_fused_equals_unfused("positive", positive_chain, {x});
  }
  // A scalar function input broadcast against a full one, on both sides of the binary steps.
  Body scalar_input = [](Context& c, const std::vector<Tensor>& in) {
    Tensor t = B(c, "Mul", in[0], in[1]);
    t = B(c, "Sub", in[1], U(c, "Exp", t));
    return B(c, "Maximum", U(c, "Tanh", t), in[1]);
  };
  Tensor full = random_tensor(DType::Float32, Shape{4, 5}, -2, 2, 3);
  Outcome o = check_fused_equals_unfused("scalar_input", scalar_input, {full, make<float>({0.75f}, Shape{})});
  CHECK(o.fused_dispatches == 1);
}

// Every ordered pair of adjacent steps: a compiler must not contract or reassociate across them
// (elementwise_ops.glsl is `precise`), e.g. (x + 0.75) - x stays rounded.
TEST_CASE("fused == unfused on Vulkan: every ordered pair of adjacent steps") {
  const char* unary[] = {"Neg",  "Abs",     "Sign", "Square", "Reciprocal", "Exp",   "Log",   "Log1p",
                         "Sqrt", "Rsqrt",   "Sin",  "Cos",    "Tanh",       "Sigmoid", "Erf", "Relu",
                         "Relu6", "Elu",    "Selu", "Softplus", "Floor",    "Ceil",  "Round"};
  const char* binary[] = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow", "SquaredDifference"};
  Tensor x = random_tensor(DType::Float32, Shape{4096}, 0.1, 3, 21);
  for (const char* u : unary)
    for (const char* b : binary) {
      check_fused_equals_unfused(std::string(u) + "->" + b, [u, b](Context& c, const std::vector<Tensor>& in) {
        return B(c, b, U(c, u, in[0]), in[0]);
      }, {x});
      check_fused_equals_unfused(std::string(b) + "->" + u, [u, b](Context& c, const std::vector<Tensor>& in) {
        return U(c, u, B(c, b, in[0], k(c, in[0], 0.75)));
      }, {x});
    }
  for (const char* a : binary)
    for (const char* b : binary)
      check_fused_equals_unfused(std::string(a) + "->" + b, [a, b](Context& c, const std::vector<Tensor>& in) {
        return B(c, b, B(c, a, in[0], k(c, in[0], 0.75)), in[0]);
      }, {x});
}

TEST_CASE("fused shaders compile once per program and device: later replays and functions hit the cache") {
  Body body = [](Context& c, const std::vector<Tensor>& in) {
    return U(c, "Relu", B(c, "Add", B(c, "Mul", in[0], k(c, in[0], 0.625)), k(c, in[0], -0.125)));
  };
  Tensor x = to_vk(random_tensor(DType::Float32, Shape{257}, -1, 1, 8));
  uint64_t before = gpu::fused_shader_compiles();
  auto f = function("cache", body, true);
  f->call({x});
  f->call({x});
  uint64_t after_first = gpu::fused_shader_compiles();
  CHECK(after_first - before == 1);
  for (int i = 0; i < 3; ++i) f->call({x});
  CHECK(gpu::fused_shader_compiles() == after_first);
  // Another function with the same program (new constants, same values or not) reuses the pipeline.
  auto g = function("cache_again", body, true);
  g->call({x});
  g->call({x});
  CHECK(gpu::fused_shader_compiles() == after_first);
  // A different program compiles once more.
  Body other = [](Context& c, const std::vector<Tensor>& in) { return U(c, "Exp", U(c, "Neg", in[0])); };
  auto h = function("cache_other", other, true);
  h->call({x});
  h->call({x});
  CHECK(gpu::fused_shader_compiles() == after_first + 1);
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("a fused group with more inputs than a dispatch binds runs step by step, still bitwise equal") {
  const uint32_t limit = vk_device().max_bindings();
  const int constants = static_cast<int>(limit) + 3;
  Body many = [constants](Context& c, const std::vector<Tensor>& in) {
    Tensor t = in[0];
    for (int i = 0; i < constants; ++i) t = B(c, i % 2 ? "Add" : "Mul", t, k(c, in[0], 1.0 + 0.01 * i));
    return U(c, "Sigmoid", t);
  };
  uint64_t before = gpu::fused_shader_compiles();
  Outcome o = check_fused_equals_unfused("many_inputs", many, {random_tensor(DType::Float32, Shape{1000}, -1, 1, 2)});
  CHECK(o.fused_groups == 1);
  CHECK(o.fused_dispatches == o.unfused_dispatches);
  CHECK(gpu::fused_shader_compiles() == before);
}

TEST_CASE("fused plans run on the device kind of the values they capture") {
  const unsigned cpu = 1u << static_cast<int>(DeviceKind::CPU), vulkan = 1u << static_cast<int>(DeviceKind::Vulkan);
  auto kinds = [](Context& c, const Body& body, const Tensor& x) {
    auto f = make_ref<graph::Function>(c, "kinds", [body](Context& cx, const std::vector<Tensor>& in) {
      return std::vector<Tensor>{body(cx, in)};
    });
    return graph::fused_device_kinds(f->concrete({x})->fused_graph());
  };
  Body captures = [](Context& c, const std::vector<Tensor>& in) {
    return U(c, "Exp", B(c, "Mul", in[0], k(c, in[0], 2)));
  };
  Body captures_nothing = [](Context& c, const std::vector<Tensor>& in) { return U(c, "Exp", U(c, "Neg", in[0])); };
  Tensor x32 = random_tensor(DType::Float32, Shape{8}, -1, 1, 4);
  Tensor x64 = random_tensor(DType::Float64, Shape{8}, -1, 1, 4);
  CHECK(kinds(vk_ctx(), captures, to_vk(x32)) == vulkan);  // a constant on Vulkan
  CHECK(kinds(ctx(), captures, x32) == cpu);               // a constant on the CPU
  CHECK(kinds(vk_ctx(), captures_nothing, to_vk(x32)) == (cpu | vulkan));
  CHECK(kinds(ctx(), captures_nothing, x64) == cpu);  // no float64 shaders
}

TEST_CASE("generated source: one line per step naming its op; malformed programs and compile errors are Internal") {
  const int64_t program[] = {graph::kStepMul, 0, 1, graph::kStepExp, 2, -1};
  gpu::FusedProgram p;
  p.program = program;
  p.n_ints = 6;
  p.num_inputs = 2;
  p.scalar = {false, true};
  std::string src = gpu::fused_shader_source(p);
  CHECK(src.find("float r1 = x1[0];  // broadcast") != std::string::npos);
  CHECK(src.find("float r2 = binary_float(BOP_MUL, r0, r1);  // Mul") != std::string::npos);
  CHECK(src.find("float r3 = unary_float(UOP_EXP, r2, 0.0, 0.0);  // Exp") != std::string::npos);
  CHECK(src.find("y[i] = r3;") != std::string::npos);

  const int64_t forward_ref[] = {graph::kStepExp, 3, -1};
  p.program = forward_ref;
  p.n_ints = 3;
  CHECK_THROWS_CODE(gpu::fused_shader_source(p), Code::Internal, "undefined register");
  const int64_t unknown[] = {999, 0, -1};
  p.program = unknown;
  CHECK_THROWS_CODE(gpu::fused_shader_source(p), Code::Internal, "unknown code 999");
  p.program = program;
  p.n_ints = 6;
  p.dtype = DType::Float16;
  CHECK_THROWS_CODE(gpu::fused_shader_source(p), Code::Unimplemented, "float16");

  std::string broken = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  float v = undefined_name;\n}\n";
  CHECK_THROWS_CODE(gpu::compile_compute_shader(broken, "broken.comp"), Code::Internal,
                    "line 4: \"  float v = undefined_name;\"");
}

}  // namespace
}  // namespace cairn::test
