// The golden TensorFlow checkpoints (tests/golden/tf_checkpoint, written by TensorFlow 2.21 with
// Keras 3.15 and tf_keras 2.21) restore by object graph into the equivalent Cairn objects: the
// Keras MLP with Adam (values, iterations, slots m and v, deferred when the model is built after
// the restore, assert_consumed), the tf.Module with nested lists and dicts (through the directory's
// `checkpoint` file), and a TF1 name-based checkpoint refused with a clear error.
#include "runtime/checkpoint/tf_restore.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "runtime/track/containers.h"
#include "tests/runtime/tf_restore/mlp.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using namespace tfckpt;

const std::string kGolden = "tests/golden/tf_checkpoint/";
const std::string kVV = "/.ATTRIBUTES/VARIABLE_VALUE";

using Mlp = CairnMlp;

std::vector<float> golden(const BundleReader& r, const std::string& key) {
  const BundleEntry* e = r.find(key);
  REQUIRE_MESSAGE(e, key);
  return values<float>(r.load(*e, ctx().cpu()));
}

// weights[i], m[i], v[i]: the keys of Keras' variable i (kernel, bias, kernel_1, bias_1).
void check_mlp(const std::string& prefix, const std::vector<std::string>& weights, const std::vector<std::string>& m,
               const std::vector<std::string>& v, bool build_first) {
  auto reader = BundleReader::open(prefix);
  Mlp c;
  if (build_first) c.build();
  auto status = restore_tf(*c.ckpt, prefix);
  CHECK(c.adam->iterations_value() == 4);  // make_golden.py: one epoch of 4 batches
  CHECK(c.adam->learning_rate_value() == doctest::Approx(0.01));
  if (!build_first) {
    CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, weights[0]);
    c.build();
  }
  std::vector<Ref<Variable>> w = c.model->trainable_weights();
  REQUIRE(w.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(values<float>(w[i]->read()) == golden(*reader, weights[i]));
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, m[0]);
  c.zero_step();  // creates m and v, restored from the checkpoint, then scaled by beta_1 and beta_2
  for (size_t i = 0; i < 4; ++i) {
    std::vector<float> want_m = golden(*reader, m[i]), want_v = golden(*reader, v[i]);
    std::vector<float> got_m = values<float>(c.adam->get_slot(*w[i], "m")->read());
    std::vector<float> got_v = values<float>(c.adam->get_slot(*w[i], "v")->read());
    REQUIRE(got_m.size() == want_m.size());
    for (size_t j = 0; j < want_m.size(); ++j) {
      CHECK(got_m[j] == doctest::Approx(0.9 * want_m[j]).epsilon(1e-5));
      CHECK(got_v[j] == doctest::Approx(0.999 * want_v[j]).epsilon(1e-5));
    }
  }
  status->assert_consumed();
}

std::vector<std::string> numbered(const std::string& base, std::initializer_list<int> ids) {
  std::vector<std::string> out;
  for (int i : ids) out.push_back(base + std::to_string(i) + kVV);
  return out;
}

TEST_CASE("golden Keras 3 MLP with Adam restores into Cairn's Sequential and Adam") {
  const std::string prefix = kGolden + "keras3_mlp/ckpt";
  auto w = numbered("optimizer/_trainable_variables/", {0, 1, 2, 3});
  auto m = numbered("optimizer/_variables/", {2, 4, 6, 8});
  auto v = numbered("optimizer/_variables/", {3, 5, 7, 9});
  SUBCASE("built first") { check_mlp(prefix, w, m, v, true); }
  SUBCASE("built after the restore") { check_mlp(prefix, w, m, v, false); }
}

TEST_CASE("golden Keras 2 (tf_keras) MLP with Adam restores into Cairn's Sequential and Adam") {
  const std::string prefix = kGolden + "keras2_mlp/ckpt";
  std::vector<std::string> w{"model/layer_with_weights-0/kernel" + kVV, "model/layer_with_weights-0/bias" + kVV,
                             "model/layer_with_weights-1/kernel" + kVV, "model/layer_with_weights-1/bias" + kVV};
  auto m = numbered("optimizer/_variables/", {1, 3, 5, 7});
  auto v = numbered("optimizer/_variables/", {2, 4, 6, 8});
  SUBCASE("built first") { check_mlp(prefix, w, m, v, true); }
  SUBCASE("built after the restore") { check_mlp(prefix, w, m, v, false); }
}

Ref<Variable> zeros(DType dtype, const Shape& shape) {
  return Variable::create(ctx(), make_as(dtype, std::vector<double>(static_cast<size_t>(shape.num_elements()), 0.0), shape));
}

TEST_CASE("golden tf.Module with nested lists and dicts restores into a Cairn structure") {
  // make_golden.py: tf.train.Checkpoint(root=root), saved twice; the directory's `checkpoint`
  // file names ckpt-2, where scalar is 4.5.
  Ref<Module> root = Module::create(ctx(), "root");
  Ref<List> blocks = List::create(ctx());
  for (int i = 0; i < 2; ++i) {
    Ref<Module> b = Module::create(ctx(), "block");
    b->set("w", zeros(DType::Float32, Shape{2, 3}));
    b->set("b", zeros(DType::Float32, Shape{3}));
    blocks->append(b);
  }
  root->set("blocks", blocks);
  Ref<Dict> table = Dict::create(ctx());
  table->set("alpha", zeros(DType::Float32, Shape{2}));
  Ref<Dict> nested = Dict::create(ctx());
  Ref<List> deep = List::create(ctx());
  nested->set("deep", deep);
  table->set("nested", nested);
  root->set("table", table);
  Ref<Variable> scalar_var = zeros(DType::Float64, Shape{});
  root->set("scalar", scalar_var);
  Checkpoint c(ctx(), {{"root", root}});
  auto status = restore_tf(c, kGolden + "nested_module");
  CHECK(c.save_counter_value() == 2);
  CHECK(values<double>(scalar_var->read()) == std::vector<double>{4.5});
  CHECK(values<float>(static_cast<Variable&>(*static_cast<Module&>(*blocks->get("1")).get("w")).read()) ==
        std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(values<float>(static_cast<Variable&>(*table->get("alpha")).read()) == std::vector<float>{1.5f, 2.5f});
  // The deep list's items appear after the restore: deferred, on append.
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "table/nested/deep/0");
  Ref<Variable> deep0 = zeros(DType::Int32, Shape{});
  Ref<Variable> deep1 = zeros(DType::Bool, Shape{1, 2});
  deep->append(deep0);
  deep->append(deep1);
  CHECK(values<int32_t>(deep0->read()) == std::vector<int32_t>{7});
  CHECK(bools(deep1->read()) == std::vector<int>{1, 0});
  status->assert_consumed();
}

TEST_CASE("a TF1 name-based checkpoint has no object graph: NotFound says to read it by name") {
  Ref<Module> m = Module::create(ctx(), "m");
  Checkpoint c(ctx(), {{"m", m}});
  CHECK_THROWS_CODE(restore_tf(c, kGolden + "tf1_saver/model.ckpt"), Code::NotFound,
                    "no _CHECKPOINTABLE_OBJECT_GRAPH: a name-based (TF1) checkpoint");
}

TEST_CASE("the Keras golden into the model alone: existing objects match, the optimizer's values are reported") {
  CairnMlp c;
  c.build();
  Checkpoint model_only(ctx(), {{"model", c.model}});
  auto status = restore_tf(model_only, kGolden + "keras3_mlp/ckpt");
  status->assert_existing_objects_matched();
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition, "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE");
  status->expect_partial();  // no warning about the optimizer's values when the status goes
  auto reader = BundleReader::open(kGolden + "keras3_mlp/ckpt");
  CHECK(values<float>(c.model->trainable_weights()[3]->read()) ==
        golden(*reader, "optimizer/_trainable_variables/3" + kVV));
}

TEST_CASE("a Keras golden into a mismatched model names the key and both shapes") {
  Mlp c;
  nn::DenseOptions d;
  d.units = 4;
  Ref<nn::Sequential> other = nn::Sequential::create(ctx(), "other");
  other->add(nn::dense(ctx(), d));
  (*other)(make<float>(std::vector<float>(8, 0.0f), Shape{1, 8}));
  Checkpoint wrong(ctx(), {{"model", other}, {"optimizer", c.adam}});
  CHECK_THROWS_CODE(restore_tf(wrong, kGolden + "keras3_mlp/ckpt"), Code::InvalidArgument,
                    "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE' is float32[8,16] in the checkpoint");
}

}  // namespace
}  // namespace cairn::test
