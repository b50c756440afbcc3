// RestoreState over a ValueSource other than a Cairn file: the values come from the source, the
// source's slot-name translation reaches the optimizer, and children it declares to keep their
// own values count as matched for assert_consumed (and only those).
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/tf_restore/memory_source.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;

Ref<Variable> var(const std::string& name, const std::vector<float>& v) {
  VariableOptions o;
  o.name = name;
  return Variable::create(ctx(), make<float>(v, Shape{static_cast<int64_t>(v.size())}), o);
}

uint32_t add_node(ObjectGraph& g, std::vector<ChildEdge> children = {}, std::vector<Attribute> attrs = {}) {
  Node n;
  n.children = std::move(children);
  n.attributes = std::move(attrs);
  g.nodes.push_back(std::move(n));
  return static_cast<uint32_t>(g.nodes.size() - 1);
}

TEST_CASE("a memory source restores values, translates slot names and keeps declared live values") {
  // Graph: root {net: {w}, opt: {step}} with a slot "_first" of w owned by opt.
  auto src = std::make_shared<MemorySource>();
  ObjectGraph& g = src->g;
  add_node(g, {{"net", 1}, {"opt", 2}, {"save_counter", 6}});
  add_node(g, {{"w", 3}});
  add_node(g, {{"iter", 4}});
  add_node(g, {}, {{"VARIABLE_VALUE", "W"}});
  add_node(g, {}, {{"VARIABLE_VALUE", "STEP"}});
  add_node(g, {}, {{"VARIABLE_VALUE", "W_M"}});
  add_node(g, {}, {{"VARIABLE_VALUE", "COUNTER"}});
  g.nodes[2].slots.push_back({2, 3, "_first", 5});
  src->values.emplace("W", make<float>({3, 4}, Shape{2}));
  src->values.emplace("STEP", scalar<int64_t>(7));
  src->values.emplace("W_M", make<float>({0.5f, 0.25f}, Shape{2}));
  src->values.emplace("COUNTER", scalar<int64_t>(2));
  src->slot_names["_first"] = "m";

  Ref<Module> net = Module::create(ctx(), "net");
  Ref<Variable> w = var("w", {0, 0});
  net->set("w", w);
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::Adam;
  Ref<optim::Optimizer> opt = optim::Optimizer::create(ctx(), oo);
  Checkpoint ckpt(ctx(), {{"net", net}, {"opt", opt}});

  SUBCASE("without kept values, Adam's hyperparameters are unmatched") {
    auto status = ckpt.restore(src);
    CHECK(values<float>(w->read()) == std::vector<float>{3, 4});
    CHECK(opt->iterations_value() == 7);
    CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "opt/beta_1");
    // The slot is created on the first step and restored then, under its translated name.
    CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "W_M");
    opt->apply_gradients({{make<float>({0, 0}, Shape{2}), w.get()}});
    Ref<Variable> m = opt->get_slot(*w, "m");
    REQUIRE(m);
    // One zero-gradient Adam step scales m by beta_1.
    CHECK(values<float>(m->read()) == std::vector<float>{0.5f * 0.9f, 0.25f * 0.9f});
    CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "beta_2");
    status->expect_partial();
  }
  SUBCASE("kept values count as matched; an edge not declared is still reported") {
    for (const char* e : {"learning_rate", "beta_1", "beta_2"}) src->kept.emplace_back(2, e);
    auto status = ckpt.restore(src);
    opt->apply_gradients({{make<float>({0, 0}, Shape{2}), w.get()}});
    CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "live objects not matched: opt/epsilon");
    status->expect_partial();
    src->kept.emplace_back(2, "epsilon");
    auto again = ckpt.restore(src);
    opt->apply_gradients({{make<float>({0, 0}, Shape{2}), w.get()}});
    again->assert_consumed();
  }
  SUBCASE("a value the source lacks is NotFound naming the source and key") {
    src->values.erase("W");
    CHECK_THROWS_CODE(ckpt.restore(src), Code::NotFound, "memory: no key named 'W'");
  }
}

}  // namespace
}  // namespace cairn::test

namespace cairn::test {
namespace {

TEST_CASE("a source without a root node is not a checkpoint: DataLoss, not a read past the graph") {
  // The op fuzzer's capi target restored an exported function file (a Cairn container with an
  // empty object graph) and read node 0 of nothing.
  auto src = std::make_shared<MemorySource>();
  Ref<Module> m = Module::create(ctx(), "m");
  Checkpoint c(ctx(), {{"m", m}});
  CHECK_THROWS_CODE(c.restore(src), Code::DataLoss, "the object graph has no root node");
}

}  // namespace
}  // namespace cairn::test
