// The Keras mapping over the object graphs Keras writes, transcribed node for node from
// tf.train.Checkpoint(model=m, optimizer=opt).write(...) of a Sequential MLP (Dense 8->16 relu,
// Dense 3) trained with Adam, under TensorFlow 2.21 with Keras 3.15 and with tf_keras 2.21. The
// golden bundles themselves are read in tf_golden_test.cc; this test pins the rules on the graphs
// alone: values land in the equivalent Cairn model and Adam, slots m/v through the slot lists,
// deferred restore when the model is built later, assert_consumed, and what happens without the
// mapping.
#include <map>
#include <sstream>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/tf_object_graph.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/tf_restore/memory_source.h"
#include "tests/runtime/tf_restore/mlp.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using namespace tfckpt;

// Values by key (the graph comes from tf_graph_source).
using Values = MemorySource;

// One node a line: "<id>: <edge>><child> ... | <checkpoint key>" (the part after '|' optional);
// "$<variable>:<slot name>:<slot node>" among the edges is a slot variable of the node.
TfObjectGraph graph_from(const std::string& text) {
  TfObjectGraph g;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(':') == std::string::npos) continue;
    Node n;
    std::string body = line.substr(line.find(':') + 1), key;
    if (size_t bar = body.find('|'); bar != std::string::npos) {
      std::istringstream(body.substr(bar + 1)) >> key;
      body = body.substr(0, bar);
      n.attributes.push_back({"VARIABLE_VALUE", key});
    }
    std::istringstream edges(body);
    std::string edge;
    while (edges >> edge) {
      if (edge[0] == '$') {  // a slot variable: "$<variable node>:<slot name>:<slot node>"
        size_t c1 = edge.find(':'), c2 = edge.rfind(':');
        n.slots.push_back({static_cast<uint32_t>(g.graph.nodes.size()), static_cast<uint32_t>(std::stoul(edge.substr(1, c1 - 1))),
                           edge.substr(c1 + 1, c2 - c1 - 1), static_cast<uint32_t>(std::stoul(edge.substr(c2 + 1)))});
        continue;
      }
      size_t gt = edge.find('>');
      n.children.push_back({edge.substr(0, gt), static_cast<uint32_t>(std::stoul(edge.substr(gt + 1)))});
    }
    REQUIRE(std::stoul(line) == g.graph.nodes.size());
    g.graph.nodes.push_back(std::move(n));
  }
  return g;
}

#define VV "/.ATTRIBUTES/VARIABLE_VALUE"
const char* kKeras3Graph = R"(
0: model>1 optimizer>2
1: _functional>3 optimizer>2 _compiled_trainable_state>4
2: _variables>5 _trainable_variables>6 _trainable_variables_indices>7 _iterations>8 _learning_rate>9 _momentums>10 _velocities>11
3: _tracked>12 _inbound_nodes>13 _outbound_nodes>14 _losses>15 _losses_override>16 call_signature_parameters>17 _call_has_context_arg>18 _operations>19
4:
5: 0>8 1>9 2>20 3>21 4>22 5>23 6>24 7>25 8>26 9>27
6: 0>28 1>29 2>30 3>31
7:
8: | optimizer/_iterations)" VV R"(
9: | optimizer/_learning_rate)" VV R"(
10: 0>20 1>22 2>24 3>26
11: 0>21 1>23 2>25 3>27
12:
13:
14:
15:
16:
17:
18:
19: 0>32 1>33 2>34
20: | optimizer/_variables/2)" VV R"(
21: | optimizer/_variables/3)" VV R"(
22: | optimizer/_variables/4)" VV R"(
23: | optimizer/_variables/5)" VV R"(
24: | optimizer/_variables/6)" VV R"(
25: | optimizer/_variables/7)" VV R"(
26: | optimizer/_variables/8)" VV R"(
27: | optimizer/_variables/9)" VV R"(
28: | optimizer/_trainable_variables/0)" VV R"(
29: | optimizer/_trainable_variables/1)" VV R"(
30: | optimizer/_trainable_variables/2)" VV R"(
31: | optimizer/_trainable_variables/3)" VV R"(
32:
33: _kernel>28 bias>29
34: _kernel>30 bias>31
)";

const char* kKeras2Graph = R"(
0: model>1 optimizer>2
1: layer_with_weights-0>3 layer-0>3 layer_with_weights-1>4 layer-1>4 optimizer>2 train_tf_function>5 train_function>5
2: _variables>6 _iterations>7 _learning_rate>8 _index_dict>9 _momentums>10 _velocities>11
3: kernel>12 bias>13
4: kernel>14 bias>15
5:
6: 0>7 1>16 2>17 3>18 4>19 5>20 6>21 7>22 8>23
7: | optimizer/_iterations)" VV R"(
8: | optimizer/_learning_rate)" VV R"(
9:
10: 0>16 1>18 2>20 3>22
11: 0>17 1>19 2>21 3>23
12: | model/layer_with_weights-0/kernel)" VV R"(
13: | model/layer_with_weights-0/bias)" VV R"(
14: | model/layer_with_weights-1/kernel)" VV R"(
15: | model/layer_with_weights-1/bias)" VV R"(
16: | optimizer/_variables/1)" VV R"(
17: | optimizer/_variables/2)" VV R"(
18: | optimizer/_variables/3)" VV R"(
19: | optimizer/_variables/4)" VV R"(
20: | optimizer/_variables/5)" VV R"(
21: | optimizer/_variables/6)" VV R"(
22: | optimizer/_variables/7)" VV R"(
23: | optimizer/_variables/8)" VV R"(
)";

// tf_keras with its legacy Adam (tf_keras.optimizers.legacy.Adam): TF slot variables, Keras 2 names.
const char* kKeras2LegacyGraph = R"(
0: model>1 optimizer>2
1: layer_with_weights-0>3 layer-0>3 layer_with_weights-1>4 layer-1>4 optimizer>2 train_tf_function>5 train_function>5
2: iter>6 beta_1>7 beta_2>8 decay>9 learning_rate>10 $11:m:15 $12:m:16 $13:m:17 $14:m:18 $11:v:19 $12:v:20 $13:v:21 $14:v:22
3: kernel>11 bias>12
4: kernel>13 bias>14
5:
6: | optimizer/iter)" VV R"(
7: | optimizer/beta_1)" VV R"(
8: | optimizer/beta_2)" VV R"(
9: | optimizer/decay)" VV R"(
10: | optimizer/learning_rate)" VV R"(
11: | model/layer_with_weights-0/kernel)" VV R"(
12: | model/layer_with_weights-0/bias)" VV R"(
13: | model/layer_with_weights-1/kernel)" VV R"(
14: | model/layer_with_weights-1/bias)" VV R"(
15: | model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m)" VV R"(
16: | model/layer_with_weights-0/bias/.OPTIMIZER_SLOT/optimizer/m)" VV R"(
17: | model/layer_with_weights-1/kernel/.OPTIMIZER_SLOT/optimizer/m)" VV R"(
18: | model/layer_with_weights-1/bias/.OPTIMIZER_SLOT/optimizer/m)" VV R"(
19: | model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/v)" VV R"(
20: | model/layer_with_weights-0/bias/.OPTIMIZER_SLOT/optimizer/v)" VV R"(
21: | model/layer_with_weights-1/kernel/.OPTIMIZER_SLOT/optimizer/v)" VV R"(
22: | model/layer_with_weights-1/bias/.OPTIMIZER_SLOT/optimizer/v)" VV R"(
)";

const std::vector<Shape> kShapes{Shape{8, 16}, Shape{16}, Shape{16, 3}, Shape{3}};

Tensor filled(const Shape& s, float base) {
  std::vector<float> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + 0.001f * static_cast<float>(i);
  return make<float>(v, s);
}

// Weights i = 0..3 (kernel, bias, kernel_1, bias_1) hold base 1+i, their m 10+i and v 20+i.
struct Keys {
  std::vector<std::string> weights, m, v;
  std::string iterations, learning_rate;
};

Keys keras3_keys() {
  Keys k;
  for (int i = 0; i < 4; ++i) {
    k.weights.push_back("optimizer/_trainable_variables/" + std::to_string(i) + VV);
    k.m.push_back("optimizer/_variables/" + std::to_string(2 + 2 * i) + VV);
    k.v.push_back("optimizer/_variables/" + std::to_string(3 + 2 * i) + VV);
  }
  k.iterations = "optimizer/_iterations" VV;
  k.learning_rate = "optimizer/_learning_rate" VV;
  return k;
}

Keys keras2_keys() {
  Keys k = keras3_keys();
  const char* w[] = {"model/layer_with_weights-0/kernel" VV, "model/layer_with_weights-0/bias" VV,
                     "model/layer_with_weights-1/kernel" VV, "model/layer_with_weights-1/bias" VV};
  for (int i = 0; i < 4; ++i) {
    k.weights[i] = w[i];
    k.m[i] = "optimizer/_variables/" + std::to_string(1 + 2 * i) + VV;
    k.v[i] = "optimizer/_variables/" + std::to_string(2 + 2 * i) + VV;
  }
  return k;
}

std::shared_ptr<Values> values_for(const Keys& k) {
  auto v = std::make_shared<Values>();
  v->name = "keras.ckpt";
  for (int i = 0; i < 4; ++i) {
    v->values.emplace(k.weights[i], filled(kShapes[i], 1.0f + i));
    v->values.emplace(k.m[i], filled(kShapes[i], 10.0f + i));
    v->values.emplace(k.v[i], filled(kShapes[i], 20.0f + i));
  }
  v->values.emplace(k.iterations, scalar<int64_t>(4));
  v->values.emplace(k.learning_rate, scalar<float>(0.001f));
  return v;
}

void check_restored(CairnMlp& c, const Keys& k, const Values& v, bool stepped) {
  std::vector<Ref<Variable>> w = c.model->trainable_weights();
  REQUIRE(w.size() == 4);
  for (int i = 0; i < 4; ++i) {
    if (!stepped) CHECK(values<float>(w[i]->read()) == values<float>(v.values.at(k.weights[i])));
    if (!stepped) continue;
    Ref<Variable> m = c.adam->get_slot(*w[i], "m");
    Ref<Variable> vv = c.adam->get_slot(*w[i], "v");
    REQUIRE(m);
    REQUIRE(vv);
    std::vector<float> want_m = values<float>(v.values.at(k.m[i])), got_m = values<float>(m->read());
    std::vector<float> want_v = values<float>(v.values.at(k.v[i])), got_v = values<float>(vv->read());
    for (size_t j = 0; j < want_m.size(); ++j) {
      CHECK(got_m[j] == doctest::Approx(0.9 * want_m[j]).epsilon(1e-5));
      CHECK(got_v[j] == doctest::Approx(0.999 * want_v[j]).epsilon(1e-5));
    }
  }
}

void restore_and_check(const char* graph_text, const Keys& k, bool build_first) {
  std::shared_ptr<Values> v = values_for(k);
  CairnMlp c;
  if (build_first) c.build();
  auto status = c.ckpt->restore(tf_graph_source(graph_from(graph_text), v));
  CHECK(c.adam->iterations_value() == 4);
  CHECK(c.adam->learning_rate_value() == doctest::Approx(0.001));
  if (!build_first) {
    // Deferred: the layers have no weights yet; the values wait for their edges.
    CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, k.weights[0]);
    c.build();
  }
  check_restored(c, k, *v, false);
  // Adam's m and v wait for the slots, created on the first step.
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, k.m[0]);
  c.zero_step();
  check_restored(c, k, *v, true);
  status->assert_consumed();
}

TEST_CASE("a Keras 3 MLP with Adam restores into the equivalent Cairn model and Adam") {
  SUBCASE("model built before the restore") { restore_and_check(kKeras3Graph, keras3_keys(), true); }
  SUBCASE("model built after the restore (deferred)") { restore_and_check(kKeras3Graph, keras3_keys(), false); }
}

TEST_CASE("a Keras 2 (tf_keras) MLP with Adam restores into the equivalent Cairn model and Adam") {
  SUBCASE("model built before the restore") { restore_and_check(kKeras2Graph, keras2_keys(), true); }
  SUBCASE("model built after the restore (deferred)") { restore_and_check(kKeras2Graph, keras2_keys(), false); }
}

TEST_CASE("a tf_keras legacy Adam matches Cairn's names directly; decay and epsilon are left over") {
  Keys k = keras2_keys();
  const char* slot[] = {"model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/", "model/layer_with_weights-0/bias/.OPTIMIZER_SLOT/optimizer/",
                        "model/layer_with_weights-1/kernel/.OPTIMIZER_SLOT/optimizer/", "model/layer_with_weights-1/bias/.OPTIMIZER_SLOT/optimizer/"};
  for (int i = 0; i < 4; ++i) {
    k.m[i] = std::string(slot[i]) + "m" VV;
    k.v[i] = std::string(slot[i]) + "v" VV;
  }
  k.iterations = "optimizer/iter" VV;
  k.learning_rate = "optimizer/learning_rate" VV;
  std::shared_ptr<Values> v = values_for(k);
  v->values.emplace("optimizer/beta_1" VV, scalar<float>(0.9f));
  v->values.emplace("optimizer/beta_2" VV, scalar<float>(0.999f));
  v->values.emplace("optimizer/decay" VV, scalar<float>(0.0f));
  CairnMlp c;
  c.build();
  auto status = c.ckpt->restore(tf_graph_source(graph_from(kKeras2LegacyGraph), v));
  CHECK(c.adam->iterations_value() == 4);
  c.zero_step();
  check_restored(c, k, *v, true);
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition,
                    "checkpoint values not restored: optimizer/decay/.ATTRIBUTES/VARIABLE_VALUE; live objects not matched: optimizer/epsilon");
  status->expect_partial();
}

TEST_CASE("a model of another shape is refused naming the key") {
  std::shared_ptr<Values> v = values_for(keras3_keys());
  CairnMlp c(0.5, std::nullopt, 32);
  c.build();
  CHECK_THROWS_CODE(c.ckpt->restore(tf_graph_source(graph_from(kKeras3Graph), v)), Code::InvalidArgument,
                    "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE' is float32[8,16] in the checkpoint");
}

TEST_CASE("without the mapping, Keras' names do not match Cairn's and assert_consumed says so") {
  std::shared_ptr<Values> v = values_for(keras3_keys());
  CairnMlp c;
  c.build();
  TfRestoreOptions o;
  o.keras_names = false;
  auto status = c.ckpt->restore(tf_graph_source(graph_from(kKeras3Graph), v, o));
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "live objects not matched: model/layer-0");
  status->expect_partial();
}

TEST_CASE("Keras 2 slot lists that do not pair with the model's variables stay unrestored") {
  Keys k = keras2_keys();
  std::shared_ptr<Values> v = values_for(k);
  // m of the first kernel with the shape of a bias: no pairing, so no slot restores.
  v->values.erase(k.m[0]);
  v->values.emplace(k.m[0], filled(Shape{16}, 0));
  CairnMlp c;
  c.build();
  auto status = c.ckpt->restore(tf_graph_source(graph_from(kKeras2Graph), v));
  c.zero_step();
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, k.m[1]);
  status->expect_partial();
}

}  // namespace
}  // namespace cairn::test

namespace cairn::test {
namespace {

using namespace ckpt;
using namespace tfckpt;

TEST_CASE("damaged Keras graphs restore or fail with a cairn error, never crash") {
  const std::string bytes = serialize_trackable_object_graph(graph_from(kKeras3Graph));
  std::shared_ptr<Values> v = values_for(keras3_keys());
  size_t restored = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int flip : {0x01, 0x04, 0x80}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      CairnMlp c;
      try {
        auto status = c.ckpt->restore(tf_graph_source(parse_trackable_object_graph(bad, "flipped"), v));
        c.build();
        c.zero_step();
        status->expect_partial();
        ++restored;
      } catch (const Error&) {
        ++refused;
      }
    }
  CHECK(restored > 0);
  CHECK(refused > 0);
}

}  // namespace
}  // namespace cairn::test
