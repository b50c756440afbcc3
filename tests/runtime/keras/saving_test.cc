// Whole-model save and load, and layer configs (get_config / from_config).
#include "tests/runtime/keras/keras_test_util.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "runtime/graph/export.h"
#include "runtime/keras/saving.h"
#include "tests/runtime/summary/event_reader.h"

namespace cairn::test {
namespace {

using keras::Data;
using json = nlohmann::json;

TEST_CASE("a saved model loads without its code, predicts the same and continues training the same") {
  Blobs b = blobs(48);
  Ref<keras::Model> m = classifier();
  m->fit(Data{nullptr, b.x, b.y}, quiet(3, {}, false));
  const std::string dir = fresh_dir("saved_model");
  keras::save_model(*m, dir);
  CHECK(std::filesystem::exists(dir + "/model.json"));
  CHECK(std::filesystem::exists(dir + "/weights.ckpt"));

  Ref<keras::Model> loaded = keras::load_model(ctx(), dir);
  CHECK(loaded->compiled());
  CHECK(loaded->name() == m->name());
  const std::vector<double> saved = as_doubles(m->predict(Data{nullptr, b.x, {}}, {}));
  CHECK(as_doubles(loaded->predict(Data{nullptr, b.x, {}}, {})) == saved);
  CHECK(loaded->iterations() == m->iterations());
  // The optimizer's slots came back too: two more epochs give the same weights on both.
  m->fit(Data{nullptr, b.x, b.y}, quiet(2, {}, false));
  loaded->fit(Data{nullptr, b.x, b.y}, quiet(2, {}, false));
  CHECK(weights_of(*loaded) == weights_of(*m));

  // The serving function runs without any model: only the exported graph and its variables.
  graph::LoadedFunction serving = graph::load_function(ctx(), dir + "/serving.cairnfn");
  std::vector<Tensor> out = serving.function->call({b.x});
  CHECK(as_doubles(out[0]) == saved);
}

TEST_CASE("a failed save leaves the earlier save whole; a save replaces it") {
  Blobs b = blobs(16);
  const std::string dir = fresh_dir("saved_twice");
  Ref<keras::Model> m = classifier();
  m->fit(Data{nullptr, b.x, b.y}, quiet(1, {}, false));
  keras::save_model(*m, dir);
  const std::vector<double> first = as_doubles(keras::load_model(ctx(), dir)->predict(Data{nullptr, b.x, {}}, {}));

  Ref<keras::Model> unbuilt = classifier();
  CHECK_THROWS_CODE(keras::save_model(*unbuilt, dir), Code::FailedPrecondition, "was never called");
  CHECK(as_doubles(keras::load_model(ctx(), dir)->predict(Data{nullptr, b.x, {}}, {})) == first);

  m->fit(Data{nullptr, b.x, b.y}, quiet(1, {}, false));
  keras::save_model(*m, dir);
  CHECK(as_doubles(keras::load_model(ctx(), dir)->predict(Data{nullptr, b.x, {}}, {})) ==
        as_doubles(m->predict(Data{nullptr, b.x, {}}, {})));
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(dir).parent_path()))
    CHECK(e.path().filename().string().find("saved_twice.") == std::string::npos);  // no staging left
}

TEST_CASE("every built-in layer's config makes the same layer again") {
  Ref<nn::Sequential> s = nn::Sequential::create(ctx(), "net");
  nn::Conv2DOptions c;
  c.filters = 4;
  c.padding = "SAME";
  c.activation = nn::Activation::Relu;
  c.kernel_initializer.seed = 3;
  s->add(nn::conv2d(ctx(), c));
  nn::Pool2DOptions p;
  s->add(nn::max_pool2d(ctx(), p));
  s->add(nn::avg_pool2d(ctx(), p));
  nn::NormOptions n;
  n.epsilon = 0.01;
  s->add(nn::batch_norm(ctx(), n));
  s->add(nn::layer_norm(ctx(), n));
  s->add(nn::flatten(ctx()));
  s->add(nn::dropout(ctx(), 0.25, 9));
  nn::DenseOptions d;
  d.units = 5;
  d.bias_initializer = nn::parse_initializer("ones");
  s->add(nn::dense(ctx(), d));
  s->add(nn::activation(ctx(), nn::Activation::Softmax));
  Ref<nn::Sequential> inner = nn::Sequential::create(ctx(), "inner");
  nn::EmbeddingOptions e;
  e.input_dim = 10;
  e.output_dim = 3;
  inner->add(nn::embedding(ctx(), e));
  s->add(inner);

  const json config = s->config();
  Ref<nn::Layer> again = nn::layer_from_config(ctx(), config);
  CHECK(again->config() == config);
  CHECK(config["config"]["layers"][0]["config"]["kernel_initializer"]["config"]["seed"] == 3);

  CHECK_THROWS_CODE(nn::layer_from_config(ctx(), json{{"class_name", "Conv3D"}}), Code::InvalidArgument,
                    "unknown layer class \"Conv3D\"");
  CHECK_THROWS_CODE(nn::layer_from_config(ctx(), json{{"class_name", "Dense"}, {"config", {{"name", "d"}}}}),
                    Code::InvalidArgument, "Dense 'd': no field \"units\"");
  CHECK_THROWS_CODE(
      nn::layer_from_config(ctx(), json{{"class_name", "Dense"}, {"config", {{"units", "many"}}}}),
      Code::InvalidArgument, "field \"units\" is \"many\"");
}

TEST_CASE("load_model refuses what is not a saved model") {
  CHECK_THROWS_CODE(keras::load_model(ctx(), fresh_dir("nothing_here")), Code::NotFound, "no saved model");
  const std::string dir = fresh_dir("bad_json");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/model.json") << "{not json";
  CHECK_THROWS_CODE(keras::load_model(ctx(), dir), Code::InvalidArgument, "is not JSON");
  std::ofstream(dir + "/model.json") << R"({"format": "cairn.model", "version": 7})";
  CHECK_THROWS_CODE(keras::load_model(ctx(), dir), Code::InvalidArgument, "not a cairn.model file of version 1");
}

}  // namespace
}  // namespace cairn::test
