// Deferred build meets deferred restore: a checkpoint of a built model restored into a fresh,
// unbuilt one applies each weight the moment the first call creates it.
#include <unistd.h>

#include <cstdlib>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/nn/layer.h"
#include "tests/runtime/nn/nn_test_util.h"

namespace cairn::nn {
namespace {

using test::as_doubles;
using test::make_as;
using test::weight;

Context& c() { return test::ctx(); }

std::string temp_dir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/nn-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  REQUIRE(::mkdtemp(buf.data()) != nullptr);
  return std::string(buf.data());
}

Ref<Sequential> make_model() {
  Ref<Sequential> m = Sequential::create(c());
  Conv2DOptions co;
  co.filters = 3;
  co.activation = Activation::Relu;
  m->add(conv2d(c(), co));
  m->add(batch_norm(c(), {}));
  m->add(max_pool2d(c(), {}));
  m->add(flatten(c()));
  m->add(dropout(c(), 0.3, 5));
  DenseOptions d;
  d.units = 4;
  d.activation = Activation::Tanh;
  m->add(dense(c(), d));
  m->add(layer_norm(c(), {}));
  d.units = 2;
  d.activation = Activation::Softmax;
  m->add(dense(c(), d));
  return m;
}

Tensor inputs() {
  std::vector<double> v(2 * 6 * 6 * 1);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7) % 11) / 5.0 - 1;
  return make_as(DType::Float32, v, Shape{2, 6, 6, 1});
}

ckpt::CheckpointOptions scratch_options() {
  ckpt::CheckpointOptions o;
  o.fsync = false;
  return o;
}

TEST_CASE("save a built model, restore into an unbuilt one, identical outputs on the first call") {
  Ref<Sequential> trained = make_model();
  Tensor x = inputs();
  (*trained)(x, true);  // builds, moves the BatchNorm statistics, runs dropout
  (*trained)(x, true);
  Tensor want = (*trained)(x);
  auto bn = trained->layers()[1];
  const std::vector<double> moving_mean = as_doubles(weight(*bn, "moving_mean").read());
  const std::vector<double> moving_variance = as_doubles(weight(*bn, "moving_variance").read());
  CHECK(moving_mean != std::vector<double>(3, 0.0));

  ckpt::Checkpoint saver(c(), {{"model", trained}});
  saver.set_options(scratch_options());
  const std::string path = saver.save(temp_dir() + "/ckpt");

  Ref<Sequential> fresh = make_model();
  ckpt::Checkpoint loader(c(), {{"model", fresh}});
  std::shared_ptr<ckpt::RestoreState> status = loader.restore(path);
  CHECK(!fresh->built());
  CHECK(fresh->weights().empty());
  Tensor got = (*fresh)(x);
  CHECK(as_doubles(got) == as_doubles(want));
  CHECK(fresh->count_params() == trained->count_params());
  // Non-trainable moving statistics came back too.
  auto fresh_bn = fresh->layers()[1];
  CHECK(as_doubles(weight(*fresh_bn, "moving_mean").read()) == moving_mean);
  CHECK(as_doubles(weight(*fresh_bn, "moving_variance").read()) == moving_variance);
  status->assert_existing_objects_matched();

  // Weights differ without the restore, so the equality above is the checkpoint's doing.
  Ref<Sequential> unrestored = make_model();
  CHECK(as_doubles((*unrestored)(x)) != as_doubles(want));
}

TEST_CASE("restore into an already built model assigns immediately; BatchNorm statistics round-trip") {
  Ref<Layer> bn = batch_norm(c(), {});
  Tensor x = make_as(DType::Float64, {1, 2, 3, 6, 5, 4}, Shape{3, 2});
  (*bn)(x, true);
  const std::vector<double> saved_mean = as_doubles(weight(*bn, "moving_mean").read());
  ckpt::Checkpoint saver(c(), {{"bn", bn}});
  saver.set_options(scratch_options());
  const std::string path = saver.save(temp_dir() + "/bn");

  (*bn)(x, true);  // moves the statistics on
  CHECK(as_doubles(weight(*bn, "moving_mean").read()) != saved_mean);
  ckpt::Checkpoint loader(c(), {{"bn", bn}});
  loader.restore(path);
  CHECK(as_doubles(weight(*bn, "moving_mean").read()) == saved_mean);

  // Checkpoint keys follow the weight edges.
  ckpt::Reader reader = ckpt::Reader::open(path);
  CHECK(reader.find("bn/moving_variance/.ATTRIBUTES/VARIABLE_VALUE") != nullptr);
  CHECK(reader.find("bn/gamma/.ATTRIBUTES/VARIABLE_VALUE") != nullptr);
}

}  // namespace
}  // namespace cairn::nn
