// Exported compiled functions: round trips into a new context (plain ops, several signatures, a
// variable read and assign, a captured training step), damaged and hostile files, unknown ops, and
// the GraphDef text dump.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "runtime/autodiff/tape.h"
#include "runtime/checkpoint/writer.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/export.h"
#include "runtime/graph/graphdef.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/losses.h"
#include "runtime/optim/optimizer.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using graph::Function;
using graph::FunctionOptions;

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

Tensor f32s(std::vector<float> v) { return make<float>(v, Shape{static_cast<int64_t>(v.size())}); }

// y = relu(x @ w + b) * 2, with w and b captured constants, and argmax of y as a second output.
Ref<Function> dense_fn(Context& c) {
  Tensor w = make<float>({1, -2, 3, 0.5f, -1, 2}, Shape{2, 3});
  Tensor b = f32s({0.1f, 0.2f, -0.3f});
  return make_ref<Function>(c, "dense", [w, b](Context& cx, const std::vector<Tensor>& in) {
    Tensor y = op::mul(cx, op::relu(cx, op::add(cx, op::matmul(cx, in[0], w), b)), make<float>({2}, Shape{}));
    return std::vector<Tensor>{y, run_op(cx, "ArgMax", {y}, {attr_int("axis", 1)})[0]};
  });
}

TEST_CASE("export and load in a new context: identical outputs for every traced signature") {
  Context& c = ctx();
  Ref<Function> f = dense_fn(c);
  Tensor x1 = make<float>({1, 2, 3, 4}, Shape{2, 2});
  Tensor x3 = make<float>({0.5f, -1, 2, 2, -3, 1}, Shape{3, 2});
  std::vector<Tensor> want1 = f->call({x1}), want3 = f->call({x3});
  std::string path = temp_path("dense.cairnfn");
  graph::export_function(*f, path);

  Ref<Context> other = make_ref<Context>(ContextOptions{});
  graph::LoadedFunction loaded = graph::load_function(*other, path);
  CHECK(loaded.function->name() == "dense");
  CHECK(loaded.loaded->concretes().size() == 2);
  CHECK(loaded.loaded->variables().empty());
  std::vector<Tensor> got1 = loaded.function->call({x1}), got3 = loaded.function->call({x3});
  CHECK(values<float>(got1[0]) == values<float>(want1[0]));
  CHECK(values<int64_t>(got1[1]) == values<int64_t>(want1[1]));
  CHECK(values<float>(got3[0]) == values<float>(want3[0]));
  CHECK(values<int64_t>(got3[1]) == values<int64_t>(want3[1]));
  // The loaded graphs are the traced ones, node for node.
  CHECK(loaded.loaded->concretes()[0]->graph().dump() == f->concretes()[0]->graph().dump());

  // No concrete function for this signature: NotFound listing the ones there are.
  CHECK_THROWS_CODE(loaded.function->call({make<float>({1, 2, 3}, Shape{1, 3})}), Code::NotFound,
                    "it has: (float32[2,2]); (float32[3,2])");
  CHECK_THROWS_CODE(loaded.function->call({make<double>({1, 2, 3, 4}, Shape{2, 2})}), Code::NotFound,
                    "no concrete function for inputs (float64[2,2])");
}

TEST_CASE("an input signature with -1 dimensions survives the round trip") {
  Context& c = ctx();
  FunctionOptions o;
  Shape any{0, 2};
  any.set_dim(0, -1);
  o.input_signature = {{DType::Float32, any}};
  o.has_input_signature = true;
  auto f = make_ref<Function>(
      c, "softplusish", [](Context& cx, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{op::log(cx, op::add(cx, op::exp(cx, in[0]), make<float>({1}, Shape{})))};
      }, o);
  f->call({make<float>({0, 1}, Shape{1, 2})});
  std::string path = temp_path("softplus.cairnfn");
  graph::export_function(*f, path);
  Ref<Context> other = make_ref<Context>(ContextOptions{});
  auto loaded = graph::load_function(*other, path);
  Tensor x = make<float>({-1, 0, 1, 2, 3, 4}, Shape{3, 2});
  CHECK(values<float>(loaded.function->call({x})[0]) == values<float>(f->call({x})[0]));
  CHECK_THROWS_CODE(loaded.function->call({make<float>({1, 2, 3}, Shape{1, 3})}), Code::NotFound, "float32[-1,2]");
}

TEST_CASE("variables are saved with their names; a loaded function owns fresh ones") {
  Context& c = ctx();
  Ref<Variable> total = Variable::create(c, f32s({1, 2}), {.name = "acc/total"});
  Ref<Variable> steps = Variable::create(c, make<int64_t>({5}, Shape{}), {.name = "steps", .trainable = false});
  auto f = make_ref<Function>(c, "accumulate", [&](Context& cx, const std::vector<Tensor>& in) {
    total->assign_add(in[0]);
    steps->assign_add(make<int64_t>({1}, Shape{}));
    return std::vector<Tensor>{op::mul(cx, total->read(), make<float>({10}, Shape{})), steps->read()};
  });
  f->call({f32s({1, 1})});  // total = [2, 3], steps = 6
  std::string path = temp_path("accumulate.cairnfn");
  graph::export_function(*f, path);

  Ref<Context> other = make_ref<Context>(ContextOptions{});
  auto loaded = graph::load_function(*other, path);
  const auto& vars = loaded.loaded->variables();
  REQUIRE(vars.size() == 2);
  CHECK(vars[0]->name() == "acc/total:0");
  CHECK(vars[0]->trainable());
  CHECK(vars[1]->name() == "steps:0");
  CHECK_FALSE(vars[1]->trainable());
  CHECK(values<float>(vars[0]->read()) == std::vector<float>{2, 3});

  // Both sides step from the same state and stay in step; neither touches the other's variables.
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> want = f->call({f32s({0.5f, -1})});
    std::vector<Tensor> got = loaded.function->call({f32s({0.5f, -1})});
    CHECK(values<float>(got[0]) == values<float>(want[0]));
    CHECK(values<int64_t>(got[1]) == values<int64_t>(want[1]));
  }
  CHECK(values<int64_t>(vars[1]->read()) == std::vector<int64_t>{9});
  CHECK(values<int64_t>(steps->read()) == std::vector<int64_t>{9});
  total->assign(f32s({0, 0}));
  CHECK(values<float>(vars[0]->read()) == std::vector<float>{3.5f, 0});
}

TEST_CASE("a captured training step exported mid-training continues identically after loading") {
  Context& c = ctx();
  Ref<nn::Sequential> model = nn::Sequential::create(c, "model");
  model->add(nn::dense(c, {.units = 1, .kernel_initializer = {nn::Initializer::Kind::Zeros}}));
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::Adam;
  oo.learning_rate = 0.05;
  Ref<optim::Optimizer> opt = optim::Optimizer::create(c, oo);
  auto train_step = make_ref<Function>(c, "train_step", [&](Context& cx, const std::vector<Tensor>& in) {
    GradientTape tape(cx);
    Tensor loss = nn::mean_squared_error(cx, in[1], (*model)(in[0], true));
    std::vector<Ref<Variable>> weights = model->trainable_weights();
    opt->apply_gradients(tape.gradient(loss, weights), weights);
    return std::vector<Tensor>{loss};
  });
  Tensor x = make<float>({0, 1, 2, 3}, Shape{4, 1}), y = make<float>({1, 3, 5, 7}, Shape{4, 1});
  for (int i = 0; i < 5; ++i) train_step->call({x, y});
  std::string path = temp_path("train_step.cairnfn");
  graph::export_function(*train_step, path);

  Ref<Context> other = make_ref<Context>(ContextOptions{});
  auto loaded = graph::load_function(*other, path);
  // Kernel, bias, Adam's iteration counter and its m and v slots.
  CHECK(loaded.loaded->variables().size() >= 5);
  for (int i = 0; i < 20; ++i) {
    float want = values<float>(train_step->call({x, y})[0])[0];
    float got = values<float>(loaded.function->call({x, y})[0])[0];
    CHECK(got == want);
  }
  std::vector<Ref<Variable>> w = model->weights();
  for (const Ref<Variable>& v : loaded.loaded->variables())
    if (v->name() == w[0]->name()) CHECK(values<float>(v->read()) == values<float>(w[0]->read()));
}

// ---- Damaged and hostile files ----

std::string exported_bytes(const std::string& name) {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, f32s({1, 2, 3}), {.name = "v"});
  auto f = make_ref<Function>(c, "f", [v](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::add(cx, op::mul(cx, in[0], v->read()), f32s({7, 8, 9}))};
  });
  f->call({f32s({1, 1, 1})});
  std::string path = temp_path(name);
  graph::export_function(*f, path);
  return read_bytes(path);
}

// Loads `bytes`; true when it loaded and ran, false when it raised DataLoss or InvalidArgument.
// Anything else (another code, a crash) fails the test.
bool loads(const std::string& bytes, const std::string& name, std::string* message = nullptr) {
  std::string path = temp_path(name);
  write_bytes(path, bytes);
  Ref<Context> other = make_ref<Context>(ContextOptions{});
  try {
    auto loaded = graph::load_function(*other, path);
    loaded.function->call({f32s({1, 1, 1})});
    return true;
  } catch (const Error& e) {
    CHECK_MESSAGE((e.code() == Code::DataLoss || e.code() == Code::InvalidArgument), e.message());
    if (message) *message = e.message();
    return false;
  }
}

TEST_CASE("truncated files are refused naming the part") {
  std::string good = exported_bytes("good.cairnfn");
  CHECK(loads(good, "good_copy.cairnfn"));
  for (size_t cut : {size_t{0}, size_t{10}, size_t{64}, good.size() / 2, good.size() - 41, good.size() - 1}) {
    std::string message;
    CHECK_FALSE(loads(good.substr(0, cut), "truncated.cairnfn", &message));
    CHECK_MESSAGE(message.find("truncated.cairnfn") != std::string::npos, message);
  }
}

constexpr size_t graph_header_bytes = 64;

TEST_CASE("every single-bit flip is refused, or lands in padding; never a crash") {
  std::string good = exported_bytes("flip_src.cairnfn");
  std::vector<size_t> accepted;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 << (i % 8)));
    if (loads(bad, "flipped.cairnfn")) accepted.push_back(i);
  }
  // Only the zero padding between 64-byte aligned payloads is outside every checksum (an entry
  // that no node reads, the container's empty object graph, is verified too).
  for (size_t i : accepted) {
    CHECK_MESSAGE(good[i] == 0, "flip of byte ", i, " was accepted");
    CHECK(i >= graph_header_bytes);
    CHECK(i < good.size() - 40);
  }
  CHECK(accepted.size() < good.size() / 4);
}

TEST_CASE("a checkpoint that is not a function file, and a missing file") {
  Ref<Context> other = make_ref<Context>(ContextOptions{});
  CHECK_THROWS_CODE(graph::load_function(*other, temp_path("no-such-file")), Code::NotFound, "no-such-file");
  std::string path = temp_path("plain.ckpt");
  ckpt::write_checkpoint(path, ckpt::ObjectGraph{}, {ckpt::SaveEntry("w", f32s({1}))}, ckpt::Metadata{});
  CHECK_THROWS_CODE(graph::load_function(*other, path), Code::InvalidArgument, "not an exported function");
}

// A graph naming an op this library does not have (as a file from a newer Cairn would): the
// traced graph is copied with its op node pointing at a renamed OpDef, then exported.
TEST_CASE("unknown op names give a clear error naming the op and the node") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "neg", [](Context& cx, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{op::neg(cx, in[0])};
  });
  f->call({f32s({1, 2})});
  // An OpDef this library's registry does not know (as if written by a newer Cairn).
  OpDef future = *f->concretes()[0]->graph().nodes[1].def;
  future.name = "NegV9";
  graph::Graph g;
  for (const graph::Node& n : f->concretes()[0]->graph().nodes) {
    graph::Node copy;
    copy.kind = n.kind;
    copy.def = n.kind == graph::NodeKind::Op ? &future : nullptr;
    if (n.attrs) copy.attrs = std::make_unique<AttrStore>(n.attrs->attrs());
    copy.inputs = n.inputs;
    copy.outputs = n.outputs;
    copy.index = n.index;
    g.add(std::move(copy));
  }
  g.outputs = f->concretes()[0]->graph().outputs;
  g.num_inputs = 1;
  auto concrete = std::make_shared<const graph::ConcreteFunction>("neg", f->concretes()[0]->signature(), std::move(g));
  std::string path = temp_path("future.cairnfn");
  graph::export_concretes("neg", {concrete}, path);
  Ref<Context> other = make_ref<Context>(ContextOptions{});
  CHECK_THROWS_CODE(graph::load_function(*other, path), Code::InvalidArgument,
                    "concrete function 0 node 1 (NegV9): unknown op 'NegV9'");
}

TEST_CASE("export needs at least one trace") {
  Context& c = ctx();
  auto f = make_ref<Function>(c, "idle", [](Context&, const std::vector<Tensor>& in) { return in; });
  CHECK_THROWS_CODE(graph::export_function(*f, temp_path("idle.cairnfn")), Code::FailedPrecondition, "no traces yet");
}

// ---- GraphDef ----

TEST_CASE("GraphDef text: placeholders, ops with attributes, variables, results") {
  Context& c = ctx();
  Ref<Variable> v = Variable::create(c, make<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}), {.name = "dense/kernel"});
  auto f = make_ref<Function>(c, "g", [v](Context& cx, const std::vector<Tensor>& in) {
    Tensor y = run_op(cx, "MatMul", {in[0], v->read()}, {attr_bool("transpose_a", false)})[0];
    v->assign(op::mul(cx, v->read(), make<float>({0.5f}, Shape{})));
    return std::vector<Tensor>{run_op(cx, "Sum", {y}, {attr_ints("axis", {1})})[0]};
  });
  f->call({make<float>({1, 0, 0, 1}, Shape{2, 2})});
  std::string text = graph::graphdef_text(f->concretes()[0]->graph());
  CHECK_MESSAGE(text.find("node {\n  name: \"input_0\"\n  op: \"Placeholder\"\n") == 0, text);
  CHECK(text.find("value { type: DT_FLOAT }") != std::string::npos);
  CHECK(text.find("value { shape { dim { size: 2 } dim { size: 2 } } }") != std::string::npos);
  CHECK(text.find("name: \"dense/kernel\"\n  op: \"VarHandleOp\"") != std::string::npos);
  CHECK(text.find("op: \"ReadVariableOp\"\n  input: \"dense/kernel\"\n") != std::string::npos);
  CHECK(text.find("op: \"AssignVariableOp\"\n  input: \"dense/kernel\"\n") != std::string::npos);
  CHECK(text.find("op: \"MatMul\"\n  input: \"input_0\"\n  input: \"dense/kernel/Read_1\"\n") != std::string::npos);
  CHECK(text.find("key: \"transpose_a\"\n    value { b: false }") != std::string::npos);
  CHECK(text.find("key: \"axis\"\n    value { list { i: 1 } }") != std::string::npos);
  CHECK(text.find("key: \"_output_shapes\"") != std::string::npos);
  CHECK(text.find("name: \"output_0\"\n  op: \"Identity\"\n  input: \"Sum_") != std::string::npos);
  CHECK(text.find("input: \"^dense/kernel/Read_1\"") != std::string::npos);  // the write after the read
  CHECK(text.substr(text.size() - 30).find("versions {\n  producer: 27\n}\n") != std::string::npos);
  // Braces balance: the text is one well-formed message.
  int depth = 0;
  for (char ch : text) {
    depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
    REQUIRE(depth >= 0);
  }
  CHECK(depth == 0);
}

}  // namespace
}  // namespace cairn::test
