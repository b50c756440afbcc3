// Optimizer slots in checkpoints: key naming, SlotRefs, partial saving, deferred restore of slots
// (the slot created after the restore, the variable or the optimizer attached after the restore),
// bit-for-bit resumption, iterations and hyperparameters, assert_consumed over slot values.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using optim::Kind;
using optim::Optimizer;
using optim::OptimizerOptions;

constexpr std::string_view kGraphKey = kObjectGraphKey;

Ref<Variable> var(const std::string& name, const std::vector<float>& v) {
  VariableOptions o;
  o.name = name;
  return Variable::create(ctx(), make<float>(v, Shape{static_cast<int64_t>(v.size())}), o);
}

// A module with trainable variables "w" (2 elements) and "b" (1 element).
struct Model {
  Ref<Module> module = Module::create(ctx(), "net");
  Ref<Variable> w, b;
  explicit Model(bool with_variables = true, float init = 1.0f) {
    if (!with_variables) return;
    w = var("w", {init, -init});
    b = var("b", {0.5f * init});
    module->set("w", w);
    module->set("b", b);
  }
};

Ref<Optimizer> adam(double lr = 0.01) {
  OptimizerOptions o;
  o.kind = Kind::Adam;
  o.learning_rate = lr;
  return Optimizer::create(ctx(), o);
}

Tensor grad_w(int step) { return make<float>({0.5f + step, -1.0f + 0.25f * step}, Shape{2}); }
Tensor grad_b(int step) { return make<float>({2.0f - step}, Shape{1}); }

void train_step(Optimizer& opt, Model& m, int step) {
  opt.apply_gradients({{grad_w(step), m.w.get()}, {grad_b(step), m.b.get()}});
}

std::vector<std::string> keys(const Reader& r) {
  std::vector<std::string> out;
  for (const TensorInfo& e : r.entries())
    if (e.key != kGraphKey) out.push_back(e.key);
  return out;
}

std::vector<std::string> slot_keys(const Reader& r) {
  std::vector<std::string> out;
  for (const std::string& k : keys(r))
    if (k.find(".OPTIMIZER_SLOT") != std::string::npos) out.push_back(k);
  return out;
}

size_t slot_refs(const Reader& r) {
  size_t n = 0;
  for (const Node& node : r.graph().nodes) n += node.slots.size();
  return n;
}

std::string write_to(Checkpoint& c, const std::string& dir, const std::string& name) {
  c.set_options(CheckpointOptions{false, false, false});
  std::string path = dir + "/" + name;
  c.write(path);
  return path;
}

TEST_CASE("slot keys: <variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>, with SlotRefs on the optimizer") {
  Model m;
  Ref<Optimizer> opt = adam();
  train_step(*opt, m, 0);
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}});
  std::string dir = make_temp_dir();
  Reader r = Reader::open(write_to(c, dir, "ck"));
  const std::vector<std::string> want{
      "model/b/.ATTRIBUTES/VARIABLE_VALUE",
      "model/b/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE",
      "model/b/.OPTIMIZER_SLOT/opt/v/.ATTRIBUTES/VARIABLE_VALUE",
      "model/w/.ATTRIBUTES/VARIABLE_VALUE",
      "model/w/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE",
      "model/w/.OPTIMIZER_SLOT/opt/v/.ATTRIBUTES/VARIABLE_VALUE",
      "opt/beta_1/.ATTRIBUTES/VARIABLE_VALUE",
      "opt/beta_2/.ATTRIBUTES/VARIABLE_VALUE",
      "opt/epsilon/.ATTRIBUTES/VARIABLE_VALUE",
      "opt/iter/.ATTRIBUTES/VARIABLE_VALUE",
      "opt/learning_rate/.ATTRIBUTES/VARIABLE_VALUE",
      "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
  };
  CHECK(keys(r) == want);
  CHECK(same_tensor(r.load("model/w/.OPTIMIZER_SLOT/opt/v/.ATTRIBUTES/VARIABLE_VALUE", ctx().cpu()),
                    opt->get_slot(*m.w, "v")->read()));

  // The SlotRefs sit on the optimizer's node and point at the variable's node and a slot node
  // of kind variable that holds the slot's key.
  const ObjectGraph& g = r.graph();
  auto child = [&](uint32_t node, const std::string& name) {
    for (const ChildEdge& e : g.nodes[node].children)
      if (e.name == name) return e.node_id;
    FAIL("no child " << name);
    return 0u;
  };
  uint32_t opt_node = child(0, "opt"), w_node = child(child(0, "model"), "w");
  CHECK(g.nodes[opt_node].kind == static_cast<uint32_t>(ObjectKind::Optimizer));
  REQUIRE(g.nodes[opt_node].slots.size() == 4);
  CHECK(slot_refs(r) == 4);
  bool found = false;
  for (const SlotRef& s : g.nodes[opt_node].slots) {
    CHECK(s.optimizer_node == opt_node);
    const Node& slot = g.nodes[s.slot_node];
    CHECK(slot.kind == static_cast<uint32_t>(ObjectKind::Variable));
    REQUIRE(slot.attributes.size() == 1);
    if (s.variable_node == w_node && s.slot_name == "m") {
      found = true;
      CHECK(slot.attributes[0].key == "model/w/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE");
    }
  }
  CHECK(found);
}

TEST_CASE("cairn ckpt ls and show list the slot keys and SlotRefs the slot keys and SlotRefs") {
  Model m;
  Ref<Optimizer> opt = adam();
  train_step(*opt, m, 0);
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}});
  std::string dir = make_temp_dir();
  std::string path = write_to(c, dir, "ck");
  int raw = std::system(("tools/cli/cairn ckpt ls " + path + " >" + dir + "/ls && tools/cli/cairn ckpt show " + path +
                         " _CHECKPOINTABLE_OBJECT_GRAPH >" + dir + "/graph")
                            .c_str());
  REQUIRE(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 0);
  std::string ls = read_file(dir + "/ls");
  size_t at = ls.find("model/w/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE ");
  REQUIRE(at != std::string::npos);
  std::string line = ls.substr(at, ls.find('\n', at) - at);
  CHECK(line.find(" float32 ") != std::string::npos);
  CHECK(line.find(" [2] ") != std::string::npos);
  CHECK(read_file(dir + "/graph").find("slot v: optimizer node") != std::string::npos);
}

TEST_CASE("a slot is saved only when both its variable and its optimizer are") {
  Model m;
  Ref<Optimizer> opt = adam();
  train_step(*opt, m, 0);
  std::string dir = make_temp_dir();

  Checkpoint model_only(ctx(), {{"model", m.module}});
  Reader r1 = Reader::open(write_to(model_only, dir, "model_only"));
  CHECK(slot_keys(r1).empty());
  CHECK(slot_refs(r1) == 0);

  Checkpoint opt_only(ctx(), {{"opt", opt}});
  Reader r2 = Reader::open(write_to(opt_only, dir, "opt_only"));
  CHECK(slot_keys(r2).empty());
  CHECK(slot_refs(r2) == 0);
  std::vector<std::string> k2 = keys(r2);
  CHECK(std::count(k2.begin(), k2.end(), "opt/iter/.ATTRIBUTES/VARIABLE_VALUE") == 1);

  Checkpoint one_variable(ctx(), {{"b", m.b}, {"opt", opt}});
  Reader r3 = Reader::open(write_to(one_variable, dir, "one_variable"));
  CHECK(slot_keys(r3) == std::vector<std::string>{"b/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE",
                                                  "b/.OPTIMIZER_SLOT/opt/v/.ATTRIBUTES/VARIABLE_VALUE"});
  CHECK(slot_refs(r3) == 2);
}

TEST_CASE("a slot variable tracked as an object of the graph is refused") {
  Model m;
  Ref<Optimizer> opt = adam();
  train_step(*opt, m, 0);
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}, {"stray", opt->get_slot(*m.w, "m")}});
  CHECK_THROWS_CODE(c.snapshot(), Code::FailedPrecondition, "slot 'm' of variable 'w:0'");
}

// Two steps, a checkpoint, then a third step: the uninterrupted run.
struct Uninterrupted {
  std::string path;
  std::vector<float> w_after_3, b_after_3;
  Uninterrupted() {
    Model m;
    Ref<Optimizer> opt = adam();
    train_step(*opt, m, 0);
    train_step(*opt, m, 1);
    Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}});
    path = write_to(c, make_temp_dir(), "ck");
    train_step(*opt, m, 2);
    w_after_3 = values<float>(m.w->read());
    b_after_3 = values<float>(m.b->read());
  }
};

TEST_CASE("restore into a fresh optimizer before its first step: slots restored on creation, bit for bit") {
  Uninterrupted run;
  Model m(true, 7.0f);  // other initial values: the restore must replace them
  Ref<Optimizer> opt = adam(0.5);
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}});
  auto status = c.restore(run.path);
  CHECK(opt->iterations_value() == 2);
  CHECK(opt->learning_rate_value() == doctest::Approx(0.01));
  CHECK(opt->slots_for(*m.w).empty());
  // The slot values are not restored yet, and assert_consumed says so.
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition,
                    "model/w/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE");
  status->assert_existing_objects_matched();

  train_step(*opt, m, 2);
  CHECK(values<float>(m.w->read()) == run.w_after_3);
  CHECK(values<float>(m.b->read()) == run.b_after_3);
  CHECK(opt->iterations_value() == 3);
  status->assert_consumed();
}

TEST_CASE("restore into an optimizer whose slots exist: restored at once") {
  Uninterrupted run;
  Model m(true, 7.0f);
  Ref<Optimizer> opt = adam(0.5);
  train_step(*opt, m, 5);  // slots exist, with other values
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}});
  auto status = c.restore(run.path);
  status->assert_consumed();
  CHECK(opt->iterations_value() == 2);
  train_step(*opt, m, 2);
  CHECK(values<float>(m.w->read()) == run.w_after_3);
}

TEST_CASE("the variable appears after the optimizer was restored") {
  Uninterrupted run;
  Model m(false);
  Ref<Optimizer> opt = adam();
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", opt}});
  auto status = c.restore(run.path);
  // Created and attached later: the deferred restore matches them, and their slots follow.
  m.w = var("w", {0, 0});
  m.b = var("b", {0});
  m.module->set("w", m.w);
  m.module->set("b", m.b);
  train_step(*opt, m, 2);
  CHECK(values<float>(m.w->read()) == run.w_after_3);
  CHECK(values<float>(m.b->read()) == run.b_after_3);
  status->assert_consumed();
}

TEST_CASE("the optimizer is attached after the variables were restored") {
  Uninterrupted run;
  Model m(true, 3.0f);
  Checkpoint c(ctx(), {{"model", m.module}});
  auto status = c.restore(run.path);
  Ref<Optimizer> opt = adam(0.7);
  c.root().set("opt", opt);
  CHECK(opt->iterations_value() == 2);
  train_step(*opt, m, 2);
  CHECK(values<float>(m.w->read()) == run.w_after_3);
  status->assert_consumed();
}

TEST_CASE("hyperparameters, iterations and a schedule's parameters are restored") {
  std::string dir = make_temp_dir();
  OptimizerOptions o;
  o.kind = Kind::RMSprop;
  o.learning_rate = 0.125;
  o.rho = 0.75;
  o.momentum = 0.5;
  Ref<Optimizer> saved = Optimizer::create(ctx(), o);
  Model m;
  train_step(*saved, m, 0);
  Checkpoint c(ctx(), {{"model", m.module}, {"opt", saved}});
  std::string path = write_to(c, dir, "rms");

  OptimizerOptions fresh_options = o;
  fresh_options.learning_rate = 1.0;
  fresh_options.rho = 0.5;
  Ref<Optimizer> fresh = Optimizer::create(ctx(), fresh_options);
  Model m2;
  Checkpoint c2(ctx(), {{"model", m2.module}, {"opt", fresh}});
  c2.restore(path);
  CHECK(fresh->iterations_value() == 1);
  CHECK(fresh->learning_rate_value() == 0.125);
  CHECK(as_doubles(static_cast<Variable&>(*fresh->get_child("rho")).read())[0] == 0.75);
  train_step(*saved, m, 1);
  train_step(*fresh, m2, 1);
  CHECK(values<float>(m2.w->read()) == values<float>(m.w->read()));
  CHECK(values<float>(fresh->get_slot(*m2.w, "momentum")->read()) ==
        values<float>(saved->get_slot(*m.w, "momentum")->read()));

  OptimizerOptions s;
  s.kind = Kind::SGD;
  s.schedule = optim::exponential_decay(ctx(), 0.5, 10, 0.25);
  Ref<Optimizer> scheduled = Optimizer::create(ctx(), s);
  Checkpoint c3(ctx(), {{"opt", scheduled}});
  std::string spath = write_to(c3, dir, "sched");
  std::vector<std::string> skeys = keys(Reader::open(spath));
  CHECK(std::count(skeys.begin(), skeys.end(), "opt/learning_rate/decay_rate/.ATTRIBUTES/VARIABLE_VALUE") == 1);
  s.schedule = optim::exponential_decay(ctx(), 2.0, 10, 0.9);
  Ref<Optimizer> scheduled2 = Optimizer::create(ctx(), s);
  Checkpoint c4(ctx(), {{"opt", scheduled2}});
  c4.restore(spath)->assert_consumed();
  CHECK(scheduled2->learning_rate_value() == doctest::Approx(0.5));
  CHECK(s.schedule->value_at(10) == doctest::Approx(0.125));
}

}  // namespace
}  // namespace cairn::test
