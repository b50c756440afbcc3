// Graph passes (dead code, CSE, constant folding), replay buffer reuse and elementwise fusion:
// dumps before/after, and results bitwise equal to the unoptimized, unfused graph.
#include <cmath>
#include <cstring>
#include <random>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/graph/fusion.h"
#include "runtime/graph/passes.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using graph::Function;
using graph::FunctionOptions;
using graph::HostFunction;

FunctionOptions no_passes() {
  FunctionOptions o;
  o.passes.fold_constants = false;
  o.passes.eliminate_common_subexpressions = false;
  o.passes.eliminate_dead_code = false;
  o.passes.fuse_elementwise = false;
  return o;
}

FunctionOptions no_fusion() {
  FunctionOptions o;
  o.passes.fuse_elementwise = false;
  return o;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

Tensor uniform(DType dtype, const Shape& shape, uint32_t seed, double lo = -3, double hi = 3) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (double& x : v) x = dist(gen);
  if (v.size() > 3) {
    v[0] = 0.0;  // edge values the per-element formulas branch on
    v[1] = -0.0;
    v[2] = std::nan("");
  }
  return make_as(dtype, v, shape);
}

std::string dump_of(Function& f) { return f.concretes().back()->graph().dump(); }
std::string fused_dump_of(Function& f) { return f.concretes().back()->fused_graph().dump(); }

TEST_CASE("dead code elimination drops unused ops but keeps writes and random ops") {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, make<float>({1, 2}, Shape{2}), {.name = "dce_v"});
  HostFunction fn = [&](Context& cx, const std::vector<Tensor>& in) {
    Tensor unused = op::exp(cx, op::neg(cx, in[0]));  // nothing reads it
    (void)unused;
    run_op(cx, "RandomUniform", {}, {attr_ints("shape", {2})});  // unread, but advances the seed sequence
    v->assign(op::add(cx, in[0], in[0]));
    return std::vector<Tensor>{op::relu(cx, in[0])};
  };
  auto before = make_ref<Function>(c, "dce", fn, no_passes());
  auto after = make_ref<Function>(c, "dce", fn, no_fusion());
  Tensor x = make<float>({-1, 3}, Shape{2});
  before->call({x});
  after->call({x});
  std::string b = dump_of(*before), a = dump_of(*after);
  CHECK_MESSAGE(count(b, "Exp") == 1, b);
  CHECK_MESSAGE(count(a, "Exp") == 0, a);
  CHECK(count(a, "Neg") == 0);
  CHECK(count(a, "RandomUniform") == 1);
  CHECK(count(a, "AssignVariable 'dce_v:0'") == 1);
  CHECK(count(a, "Input[0]") == 1);
  CHECK(values<float>(v->read()) == std::vector<float>{-2, 6});
}

TEST_CASE("common subexpressions merge: same op, attributes and inputs; equal constants; reads") {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, make<float>({1, 2}, Shape{2}), {.name = "cse_v"});
  HostFunction fn = [&](Context& cx, const std::vector<Tensor>& in) {
    Tensor a = op::exp(cx, in[0]);
    Tensor b = op::exp(cx, in[0]);  // same as a
    Tensor s1 = op::sum(cx, in[0], {0}, false);
    Tensor s2 = op::sum(cx, in[0], {0}, true);  // other attributes: kept apart
    Tensor two1 = op::scalar(cx, cx.cpu(), DType::Float32, 2.0);
    Tensor two2 = op::scalar(cx, cx.cpu(), DType::Float32, 2.0);  // another buffer, equal value
    Tensor r1 = v->read();
    Tensor r2 = v->read();  // no write in between: one read
    v->assign(op::mul(cx, r1, two1));
    Tensor r3 = v->read();  // after the write: a read of its own
    Tensor y = op::add(cx, op::add(cx, op::mul(cx, a, two2), op::mul(cx, b, two1)), op::add(cx, r2, r3));
    return std::vector<Tensor>{y, op::add(cx, s1, op::reshape(cx, s2, Shape{}))};
  };
  auto before = make_ref<Function>(c, "cse", fn, no_passes());
  auto after = make_ref<Function>(c, "cse", fn, no_fusion());
  Tensor x = make<float>({0.5f, -1}, Shape{2});
  std::vector<Tensor> yb = before->call({x});
  v->assign(make<float>({1, 2}, Shape{2}));
  std::vector<Tensor> ya = after->call({x});
  for (size_t i = 0; i < ya.size(); ++i) CHECK(bitwise_equal(ya[i], yb[i]));
  std::string b = dump_of(*before), a = dump_of(*after);
  CHECK_MESSAGE(count(b, "= Exp") == 2, b);
  CHECK_MESSAGE(count(a, "= Exp") == 1, a);
  CHECK(count(a, "= Sum") == 2);
  CHECK(count(a, "= Constant") == 1);
  CHECK(count(b, "ReadVariable") == 3);
  CHECK(count(a, "ReadVariable") == 2);
  // The two products of equal values merged too, once their inputs became one node.
  CHECK(count(b, "= Mul") == 3);
  CHECK(count(a, "= Mul") == 2);
}

TEST_CASE("constant folding runs all-constant ops once; never random ops or variable reads") {
  Context& c = ctx();
  Tensor k1 = make<float>({1, 2, 3}, Shape{3}), k2 = make<float>({10, 20, 30}, Shape{3});
  Ref<Variable> v = Variable::create(c, make<float>({1, 1, 1}, Shape{3}), {.name = "fold_v"});
  HostFunction fn = [&](Context& cx, const std::vector<Tensor>& in) {
    Tensor k = op::sqrt(cx, op::add(cx, k1, k2));  // foldable: only constants
    Tensor r = run_op(cx, "RandomUniform", {}, {attr_ints("shape", {3})})[0];
    Tensor rv = op::add(cx, r, op::exp(cx, v->read()));  // random and variable: replayed
    return std::vector<Tensor>{op::mul(cx, in[0], k), rv};
  };
  auto before = make_ref<Function>(c, "fold", fn, no_passes());
  auto after = make_ref<Function>(c, "fold", fn, no_fusion());
  Tensor x = make<float>({1, 1, 2}, Shape{3});
  before->call({x});
  std::vector<Tensor> y = after->call({x});
  std::string a = dump_of(*after);
  CHECK_MESSAGE(count(a, "= Sqrt") == 0, a);
  CHECK(count(a, "= Add") == 1);  // the random one
  CHECK(count(a, "= RandomUniform") == 1);
  CHECK(count(a, "= Exp") == 1);
  check_close(as_doubles(y[0]), {std::sqrt(11.0), std::sqrt(22.0), 2 * std::sqrt(33.0)}, 1e-6);
  // The variable is still read live.
  v->assign(make<float>({0, 0, 0}, Shape{3}));
  std::vector<double> r = as_doubles(after->call({x})[1]);
  for (double e : r) CHECK((e >= 1.0 && e < 2.0));
}

TEST_CASE("folding leaves ops whose kernels fail to the replay, which reports the error") {
  Context& c = ctx();
  Tensor zero = make<int32_t>({0}, Shape{}), one = make<int32_t>({1}, Shape{});
  auto f = make_ref<Function>(c, "div0", [&](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::add(cx, in[0], op::div(cx, one, zero))};
  });
  CHECK_THROWS_CODE(f->call({make<int32_t>({1}, Shape{})}), Code::InvalidArgument, "division by zero");
  CHECK(count(dump_of(*f), "RealDiv") == 1);
}

// A set of functions over one float input: optimized (and fused) replays must give exactly what
// the unoptimized graph gives.
std::vector<std::pair<const char*, HostFunction>> function_set() {
  std::vector<std::pair<const char*, HostFunction>> fs;
  auto k = [](Context& cx, const Tensor& like, double v) { return op::scalar(cx, cx.cpu(), like.dtype(), v); };
  fs.push_back({"chain", [=](Context& cx, const std::vector<Tensor>& in) {
                  Tensor x = in[0];
                  Tensor y = op::tanh(cx, op::add(cx, op::mul(cx, x, k(cx, x, 1.5)), k(cx, x, 0.25)));
                  y = op::sigmoid(cx, op::sub(cx, op::exp(cx, op::neg(cx, op::square(cx, y))), x));
                  return std::vector<Tensor>{op::maximum(cx, y, op::relu(cx, x))};
                }});
  fs.push_back({"diamond", [=](Context& cx, const std::vector<Tensor>& in) {
                  Tensor a = run_op(cx, "Sin", {in[0]})[0];
                  Tensor b = op::mul(cx, a, a);
                  Tensor c2 = op::add(cx, op::exp(cx, a), b);
                  return std::vector<Tensor>{op::div(cx, c2, op::add(cx, op::square(cx, a), k(cx, a, 2)))};
                }});
  fs.push_back({"shared_intermediate", [=](Context& cx, const std::vector<Tensor>& in) {
                  Tensor h = op::tanh(cx, op::mul(cx, in[0], in[0]));  // also a result
                  Tensor s = op::sum(cx, h, {}, false);                // read outside the group
                  return std::vector<Tensor>{op::add(cx, op::neg(cx, h), k(cx, h, 1)), h, s};
                }});
  fs.push_back({"unary_zoo", [=](Context& cx, const std::vector<Tensor>& in) {
                  Tensor x = in[0];
                  std::vector<const char*> ops = {"Abs", "Sign", "Log1p", "Sqrt", "Rsqrt", "Cos", "Erf", "Relu6",
                                                  "Elu", "Selu", "Softplus", "Floor", "Ceil", "Round", "Reciprocal",
                                                  "Log"};
                  Tensor acc = x;
                  for (const char* name : ops) {
                    Tensor t = run_op(cx, name, {run_op(cx, "Abs", {x})[0]})[0];
                    acc = op::add(cx, acc, t);
                  }
                  return std::vector<Tensor>{acc};
                }});
  fs.push_back({"binary_zoo", [=](Context& cx, const std::vector<Tensor>& in) {
                  Tensor x = in[0], y = run_op(cx, "Cos", {in[0]})[0];
                  Tensor acc = op::pow(cx, run_op(cx, "Abs", {x})[0], k(cx, x, 0.5));
                  for (const char* name : {"Minimum", "SquaredDifference", "Maximum", "Sub", "RealDiv"})
                    acc = run_op(cx, name, {acc, y})[0];
                  return std::vector<Tensor>{acc, op::mul(cx, k(cx, x, 3), acc)};
                }});
  fs.push_back({"with_matmul", [=](Context& cx, const std::vector<Tensor>& in) {
                  Tensor x = op::reshape(cx, in[0], Shape{4, in[0].num_elements() / 4});
                  Tensor h = op::relu(cx, op::add(cx, op::matmul(cx, x, op::transpose(cx, x, {1, 0})), k(cx, x, 0.1)));
                  return std::vector<Tensor>{op::sum(cx, op::exp(cx, op::neg(cx, h)), {1}, false)};
                }});
  return fs;
}

TEST_CASE("optimized and fused replays equal the unoptimized graph bitwise, float32 and float64") {
  Context& c = ctx();
  int fused_functions = 0;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (Shape shape : {Shape{64}, Shape{40000}, Shape{8, 4}}) {
      for (auto& [name, fn] : function_set()) {
        CAPTURE(name);
        CAPTURE(dtype_name(dtype));
        CAPTURE(shape.str());
        auto plain = make_ref<Function>(c, name, fn, no_passes());
        auto unfused = make_ref<Function>(c, name, fn, no_fusion());
        auto fused = make_ref<Function>(c, name, fn);
        for (uint32_t seed = 1; seed <= 2; ++seed) {
          Tensor x = uniform(dtype, shape, seed);
          std::vector<Tensor> want = plain->call({x});
          std::vector<Tensor> got_unfused = unfused->call({x});
          std::vector<Tensor> got = fused->call({x});
          got = fused->call({x});  // a second replay runs on recycled buffers
          REQUIRE(got.size() == want.size());
          for (size_t i = 0; i < want.size(); ++i) {
            CHECK(bitwise_equal(got_unfused[i], want[i]));
            CHECK(bitwise_equal(got[i], want[i]));
          }
        }
        if (count(fused_dump_of(*fused), "FusedElementwise") > 0) ++fused_functions;
      }
    }
  }
  CHECK(fused_functions == 2 * 3 * 6);  // every function fuses something, per dtype and shape
}

TEST_CASE("fusion: a chain becomes one node; values read outside a group stay separate") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "shared", function_set()[2].second);
  f->call({uniform(DType::Float32, Shape{16}, 3)});
  std::string d = fused_dump_of(*f);
  // Mul+Tanh is one group (Tanh is a result and is read by Sum: it ends its group), Neg+Add another.
  CHECK_MESSAGE(count(d, "FusedElementwise") == 2, d);
  CHECK(count(d, "= Tanh") == 0);
  CHECK(count(d, "= Sum") == 1);
  CHECK(count(dump_of(*f), "= Tanh") == 1);  // graph() stays unfused: what hooks see

  // Different shapes (a broadcast beyond scalars) do not fuse.
  auto g = make_ref<Function>(c, "bcast", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::exp(cx, op::add(cx, in[0], in[1]))};
  });
  g->call({uniform(DType::Float32, Shape{4, 3}, 1), uniform(DType::Float32, Shape{3}, 2)});
  d = fused_dump_of(*g);
  CHECK_MESSAGE(count(d, "FusedElementwise") == 0, d);  // Add broadcasts [3]; Exp alone is no group
  CHECK(count(d, "= Add") == 1);
}

TEST_CASE("a call under a tape gives the same gradients with and without fusion (the backward differentiates the unfused graph)") {
  Context& c = ctx();
  auto fused = make_ref<Function>(c, "chain", function_set()[0].second);
  auto plain = make_ref<Function>(c, "chain", function_set()[0].second, no_passes());
  Tensor x = make<double>({-2, -0.5, 0, 0.25, 1, 1.5, 2, 3}, Shape{8});
  fused->call({x});  // traced
  plain->call({x});
  REQUIRE(count(fused_dump_of(*fused), "FusedElementwise") > 0);
  std::vector<Tensor> grads;
  for (Function* f : {fused.get(), plain.get()}) {
    GradientTape tape(c);
    tape.watch(x);
    Tensor y = op::all_sum(c, f->call({x})[0]);
    grads.push_back(tape.gradient(y, {x})[0]);
  }
  CHECK(bitwise_equal(grads[0], grads[1]));
  double norm = 0;
  for (double g : as_doubles(grads[0])) norm += std::fabs(g);
  CHECK(norm > 0);
}

// Counts host allocations through the context's allocator hooks.
struct Counter {
  int64_t allocations = 0;
};

TEST_CASE("replays reuse intermediate buffers: only returned results allocate in steady state") {
  Counter counter;
  ContextOptions o;
  o.num_threads = 2;
  o.allocator.user_data = &counter;
  o.allocator.allocate = [](void* user, size_t size, size_t alignment) -> void* {
    ++static_cast<Counter*>(user)->allocations;
    return default_allocator().allocate(nullptr, size, alignment);
  };
  o.allocator.deallocate = [](void*, void* p, size_t size) { default_allocator().deallocate(nullptr, p, size); };
  Ref<Context> c = make_ref<Context>(o);
  Ref<Variable> w = Variable::create(*c, op::filled(*c, c->cpu(), DType::Float32, Shape{64, 64}, 0.01), {.name = "w"});
  for (bool fuse : {false, true}) {
    CAPTURE(fuse);
    FunctionOptions fo;
    fo.passes.fuse_elementwise = fuse;
    // A dozen intermediates of three sizes, and a variable update each call.
    auto step = make_ref<Function>(
        *c, "step",
        [&](Context& cx, const std::vector<Tensor>& in) {
          Tensor h = op::tanh(cx, op::matmul(cx, in[0], w->read()));
          Tensor g = op::matmul(cx, in[0], op::mul(cx, h, op::sub(cx, op::scalar(cx, cx.cpu(), DType::Float32, 1), h)), true);
          w->assign(op::sub(cx, w->read(), op::mul(cx, g, op::scalar(cx, cx.cpu(), DType::Float32, 1e-3))));
          Tensor loss = op::all_mean(cx, op::square(cx, op::exp(cx, op::neg(cx, h))));
          return std::vector<Tensor>{loss};
        },
        fo);
    Tensor x = uniform(DType::Float32, Shape{32, 64}, 9, -1, 1);
    // uniform() allocated on the test context; bring x to this one.
    Tensor xc = Tensor::allocate(c->cpu(), DType::Float32, x.shape());
    std::memcpy(xc.raw_mutable_data(), x.raw_data(), x.nbytes());
    for (int i = 0; i < 3; ++i) step->call({xc});  // trace, then warm-up replays fill the pool
    int64_t before = counter.allocations;
    for (int i = 0; i < 100; ++i) step->call({xc});
    // One allocation per replay: the returned loss. Intermediates and the variable's new value
    // come from the pool.
    CHECK(counter.allocations - before == 100);
  }
}

}  // namespace
}  // namespace cairn::test
