// What Cairn writes as a TensorFlow checkpoint: with Keras naming, a Sequential MLP and Adam get
// exactly the keys Keras 3 gives the same model (listed from TensorFlow 2.21 / Keras 3.15's
// tf.train.Checkpoint(model=m, optimizer=opt).write), and the graph restores back into a fresh
// Cairn model; without Keras naming the keys are Cairn's paths. Real TensorFlow reading these
// bundles is tf_roundtrip_test.cc.
#include "runtime/checkpoint/tf_object_graph.h"
#include "runtime/track/containers.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/tf_restore/memory_source.h"
#include "tests/runtime/tf_restore/mlp.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using namespace tfckpt;

using Mlp = BuiltMlp;

// Exact equality (bit for bit for finite floats).
bool same_bits(const Tensor& a, const Tensor& b) { return values<float>(a) == values<float>(b); }

std::shared_ptr<MemorySource> values_of(const TfSnapshot& s) {
  auto src = std::make_shared<MemorySource>();
  for (auto& [k, v] : s.values) src->values.emplace(k, v);
  return src;
}

TEST_CASE("a Cairn MLP with Adam gets Keras 3's keys and graph, and restores back") {
  Mlp a(1);
  a.step(0.5f);
  a.step(-0.25f);
  TfSnapshot s = tf_snapshot(*a.ckpt);
  std::vector<std::string> keys;
  for (auto& [k, _] : s.values) keys.push_back(k);
  const std::string vv = "/.ATTRIBUTES/VARIABLE_VALUE";
  std::vector<std::string> want{"optimizer/_iterations" + vv, "optimizer/_learning_rate" + vv};
  for (int i = 0; i < 4; ++i) want.push_back("optimizer/_trainable_variables/" + std::to_string(i) + vv);
  for (int i = 2; i < 10; ++i) want.push_back("optimizer/_variables/" + std::to_string(i) + vv);
  want.push_back("save_counter" + vv);  // TensorFlow's restore expects it (tf_object_graph.h)
  CHECK(keys == want);
  // Keras 3's layout: model/_functional/_operations/{0: InputLayer, 1, 2}, Dense "_kernel".
  const ObjectGraph& g = s.graph.graph;
  CHECK(g.nodes[0].children == std::vector<ChildEdge>{{"model", 1}, {"optimizer", 2}, {"save_counter", 3}});
  REQUIRE(g.nodes[1].children.size() == 1);
  CHECK(g.nodes[1].children[0].name == "_functional");
  // Full names are the variables' names.
  bool kernel_named = false;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& f : s.graph.full_names[i]) kernel_named |= f == "sequential/dense/kernel" || f.find("kernel") != std::string::npos;
  CHECK(kernel_named);

  // The bytes parse back to the same graph, and it restores into another Cairn MLP exactly.
  TfObjectGraph parsed = parse_trackable_object_graph(serialize_trackable_object_graph(s.graph), "written");
  CHECK(parsed.graph == g);
  Mlp b(7);
  auto status = b.ckpt->restore(tf_graph_source(parsed, values_of(s)));
  std::vector<Ref<Variable>> wa = a.model->trainable_weights(), wb = b.model->trainable_weights();
  for (size_t i = 0; i < wa.size(); ++i) CHECK(same_bits(wa[i]->read(), wb[i]->read()));
  CHECK(b.adam->iterations_value() == 2);
  // The slots restore when b's Adam creates them; then both take the same step bit for bit.
  a.step(1.0f);
  b.step(1.0f);
  for (size_t i = 0; i < wa.size(); ++i) {
    CHECK(same_bits(wa[i]->read(), wb[i]->read()));
    CHECK(same_bits(a.adam->get_slot(*wa[i], "v")->read(), b.adam->get_slot(*wb[i], "v")->read()));
  }
  status->assert_consumed();
}

TEST_CASE("without Keras naming the keys are Cairn's paths and a tf.Module-like graph restores") {
  Ref<Module> root = Module::create(ctx(), "m");
  Ref<List> list = List::create(ctx());
  VariableOptions vo;
  vo.name = "a.b";
  Ref<Variable> v = Variable::create(ctx(), make<float>({1, 2}, Shape{2}), vo);
  list->append(v);
  root->set("items", list);
  Checkpoint c(ctx(), {{"net", root}});
  TfSaveOptions o;
  o.keras_names = false;
  o.save_counter = false;
  TfSnapshot s = tf_snapshot(c, o);
  std::vector<std::string> keys;
  for (auto& [k, _] : s.values) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"net/items/0/.ATTRIBUTES/VARIABLE_VALUE"});
  CHECK(escape_local_name("a.b/c") == "a..b.Sc");

  Ref<Module> root2 = Module::create(ctx(), "m");
  Ref<List> list2 = List::create(ctx());
  root2->set("items", list2);
  Checkpoint c2(ctx(), {{"net", root2}});
  TfRestoreOptions ro;
  ro.keras_names = false;
  auto status = c2.restore(tf_graph_source(s.graph, values_of(s), ro));
  // Deferred: the list item appears after the restore.
  list2->append(Variable::create(ctx(), make<float>({0, 0}, Shape{2}), vo));
  CHECK(values<float>(static_cast<Variable&>(*list2->get("0")).read()) == std::vector<float>{1, 2});
  status->assert_consumed();
}

TEST_CASE("without Keras naming, optimizer slots are TensorFlow slot variables under .OPTIMIZER_SLOT") {
  Mlp a(2);
  a.step(1.0f);
  TfSaveOptions o;
  o.keras_names = false;
  TfSnapshot s = tf_snapshot(*a.ckpt, o);
  const std::string key = "model/layer-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE";
  bool found = false;
  for (auto& [k, _] : s.values) found |= k == key;
  CHECK_MESSAGE(found, key);
  size_t refs = 0;
  for (const Node& n : s.graph.graph.nodes) refs += n.slots.size();
  CHECK(refs == 8);  // m and v of four variables, as SlotVariableReferences
  // Restored without the mapping: Cairn's own names match, the slots restore on the first step.
  Mlp b(9);
  TfRestoreOptions ro;
  ro.keras_names = false;
  auto status = b.ckpt->restore(tf_graph_source(parse_trackable_object_graph(serialize_trackable_object_graph(s.graph), "w"),
                                                values_of(s), ro));
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, key);
  a.step(0.5f);
  b.step(0.5f);
  std::vector<Ref<Variable>> wa = a.model->trainable_weights(), wb = b.model->trainable_weights();
  for (size_t i = 0; i < wa.size(); ++i) CHECK(same_bits(wa[i]->read(), wb[i]->read()));
  status->assert_consumed();
}

}  // namespace
}  // namespace cairn::test
