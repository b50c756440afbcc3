// Model: compile, fit, evaluate, predict, train_on_batch and test_on_batch, compiled and eager.
#include "tests/runtime/keras/keras_test_util.h"

#include "runtime/data/sources.h"
#include "runtime/data/transforms.h"
#include "runtime/keras/callbacks.h"

namespace cairn::test {
namespace {

using keras::Data;
using keras::FitOptions;
using keras::Verbose;

TEST_CASE("fit learns, and the history has one value per epoch for the loss and each metric") {
  Blobs b = blobs(96);
  Ref<keras::Model> m = classifier();
  keras::History h = m->fit(Data{nullptr, b.x, b.y}, quiet(8));
  REQUIRE(h.epochs == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  const std::vector<double>* loss = h.get("loss");
  const std::vector<double>* acc = h.get("accuracy");
  REQUIRE(loss);
  REQUIRE(acc);
  CHECK(loss->size() == 8);
  CHECK(loss->back() < loss->front() * 0.5);
  CHECK(acc->back() > 0.9);
  CHECK(m->iterations() == 8 * 6);  // 96 samples in batches of 16
  CHECK(m->train_function()->num_traces() == 1);

  keras::EvaluateOptions eo;
  keras::Logs l = m->evaluate(Data{nullptr, b.x, b.y}, eo);
  CHECK(l.items().size() == 2);
  CHECK(*l.get("accuracy") > 0.9);
  Tensor p = m->predict(Data{nullptr, b.x, {}}, {});
  CHECK(p.shape() == Shape{96, 3});
}

TEST_CASE("the compiled step and run_eagerly give the same weights, bit for bit") {
  Blobs b = blobs(40);  // batches of 16, 16 and 8: two traces
  Ref<keras::Model> compiled = classifier(false);
  Ref<keras::Model> eager = classifier(true);
  FitOptions o = quiet(3);
  o.seed = 5;
  keras::History hc = compiled->fit(Data{nullptr, b.x, b.y}, o);
  keras::History he = eager->fit(Data{nullptr, b.x, b.y}, o);
  CHECK(weights_of(*compiled) == weights_of(*eager));
  CHECK(*hc.get("loss") == *he.get("loss"));
  CHECK(eager->train_function() == nullptr);
}

TEST_CASE("fit over a dataset, with validation data and steps_per_epoch over a repeated dataset") {
  Blobs b = blobs(64);
  data::DatasetPtr ds = data::batch(data::from_tensor_slices(ctx(), {"x", "y"}, {b.x, b.y}), 16, false);
  Ref<keras::Model> m = classifier();
  FitOptions o = quiet(2);
  o.validation = Data{ds, {}, {}};
  keras::History h = m->fit(Data{ds, {}, {}}, o);
  REQUIRE(h.get("val_loss"));
  CHECK(h.get("val_loss")->size() == 2);
  CHECK(h.values.size() == 4);  // loss, accuracy, val_loss, val_accuracy
  CHECK(h.values[2].first == "val_loss");

  Ref<keras::Model> r = classifier();
  FitOptions ro = quiet(3);
  ro.steps_per_epoch = 3;
  r->fit(Data{data::repeat(ds, -1), {}, {}}, ro);
  CHECK(r->iterations() == 9);
  FitOptions bad = quiet(1);
  CHECK_THROWS_CODE(r->fit(Data{data::repeat(ds, -1), {}, {}}, bad), Code::InvalidArgument, "steps_per_epoch");
}

TEST_CASE("steps_per_epoch past the end of a finite dataset stops training") {
  Blobs b = blobs(32);
  data::DatasetPtr ds = data::batch(data::from_tensor_slices(ctx(), {"x", "y"}, {b.x, b.y}), 16, false);
  Ref<keras::Model> m = classifier();
  FitOptions o = quiet(5);
  o.steps_per_epoch = 3;
  keras::History h = m->fit(Data{ds, {}, {}}, o);
  CHECK(m->iterations() == 2);
  CHECK(h.epochs.size() == 1);
}

TEST_CASE("train_on_batch and test_on_batch report that batch") {
  Blobs b = blobs(16);
  Ref<keras::Model> m = classifier();
  keras::Logs first = m->train_on_batch(b.x, b.y);
  for (int i = 0; i < 30; ++i) m->train_on_batch(b.x, b.y);
  keras::Logs t = m->test_on_batch(b.x, b.y);
  CHECK(*t.get("loss") < *first.get("loss"));
  CHECK(m->iterations() == 31);
}

TEST_CASE("bad calls are clear errors naming the call") {
  Blobs b = blobs(16);
  Ref<keras::Model> m = keras::Model::create(ctx());
  nn::DenseOptions d;
  d.units = 3;
  m->add(nn::dense(ctx(), d));
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, b.y}, quiet(1)), Code::FailedPrecondition, "fit: ");
  keras::CompileOptions c;
  c.loss = "mse";
  CHECK_THROWS_CODE(m->compile(c), Code::InvalidArgument, "optimizer is null");
  c.optimizer = optim::Optimizer::create(ctx(), {});
  c.loss = "hinge";
  CHECK_THROWS_CODE(m->compile(c), Code::InvalidArgument, "unknown loss 'hinge'");
  c.loss = "sparse_categorical_crossentropy";
  c.metrics = {"auc"};
  CHECK_THROWS_CODE(m->compile(c), Code::InvalidArgument, "unknown metric 'auc'");
  c.metrics = {"accuracy"};
  m->compile(c);
  FitOptions o = quiet(1);
  o.batch_size = 0;
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, b.y}, o), Code::InvalidArgument, "batch_size");
  o = quiet(2);
  o.initial_epoch = 2;
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, b.y}, o), Code::InvalidArgument, "initial_epoch");
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, blobs(8).y}, quiet(1)), Code::InvalidArgument, "16 samples");
  CHECK_THROWS_CODE(m->fit(Data{}, quiet(1)), Code::InvalidArgument, "no data");
}

}  // namespace
}  // namespace cairn::test
