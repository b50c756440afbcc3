// The built-in callbacks, and fit's contract with callbacks (order, errors, stop_training).
#include "tests/runtime/keras/keras_test_util.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/keras/callbacks.h"
#include "tests/runtime/summary/event_reader.h"

namespace cairn::test {
namespace {

using keras::Data;
using keras::FitOptions;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Records the hooks it sees; optionally stops training or throws at a batch.
class Recorder final : public keras::Callback {
 public:
  std::vector<std::string> calls;
  int64_t stop_at = -1, throw_at = -1;
  void on_train_begin(keras::Model&) override { calls.push_back("train_begin"); }
  void on_train_end(keras::Model&, const keras::Logs&) override { calls.push_back("train_end"); }
  void on_train_error(keras::Model&) override { calls.push_back("train_error"); }
  void on_epoch_begin(keras::Model&, int64_t e) override { calls.push_back("epoch_begin " + std::to_string(e)); }
  void on_epoch_end(keras::Model&, int64_t e, const keras::Logs& l) override {
    calls.push_back("epoch_end " + std::to_string(e) + " " + std::to_string(l.items().size()));
  }
  void on_train_batch_end(keras::Model& m, int64_t b, const keras::Logs&) override {
    calls.push_back("batch_end " + std::to_string(b));
    if (m.iterations() == stop_at) m.stop_training();
    if (m.iterations() == throw_at) raise(Code::Aborted, "Recorder: stop here");
  }
  void on_test_begin(keras::Model&) override { calls.push_back("test_begin"); }
  void on_test_end(keras::Model&, const keras::Logs&) override { calls.push_back("test_end"); }
};

TEST_CASE("hooks run in Keras' order; stop_training ends after the batch; an error ends fit") {
  Blobs b = blobs(32);
  auto rec = make_ref<Recorder>();
  Ref<keras::Model> m = classifier();
  FitOptions o = quiet(2, {rec});
  o.validation = Data{nullptr, b.x, b.y};
  m->fit(Data{nullptr, b.x, b.y}, o);
  CHECK(rec->calls == std::vector<std::string>{"train_begin", "epoch_begin 0", "batch_end 0", "batch_end 1",
                                               "test_begin", "test_end", "epoch_end 0 4", "epoch_begin 1",
                                               "batch_end 0", "batch_end 1", "test_begin", "test_end",
                                               "epoch_end 1 4", "train_end"});
  rec->calls.clear();
  rec->stop_at = m->iterations() + 3;
  keras::History h = m->fit(Data{nullptr, b.x, b.y}, quiet(5, {rec}));
  CHECK(h.epochs == std::vector<int64_t>{0, 1});
  CHECK(m->iterations() == rec->stop_at);

  rec->calls.clear();
  rec->stop_at = -1;
  rec->throw_at = m->iterations() + 1;
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, b.y}, quiet(2, {rec})), Code::Aborted, "Recorder: stop here");
  CHECK(rec->calls.back() == "train_error");
}

TEST_CASE("ModelCheckpoint keeps max_to_keep, saves the best only, and restores into a fresh model") {
  Blobs b = blobs(48);
  const std::string dir = fresh_dir("model_checkpoint");
  keras::ModelCheckpointOptions mo;
  mo.directory = dir;
  mo.max_to_keep = 2;
  Ref<keras::Model> m = classifier();
  m->fit(Data{nullptr, b.x, b.y}, quiet(4, {keras::model_checkpoint(ctx(), mo)}));
  CHECK(std::filesystem::exists(dir + "/ckpt-4"));
  CHECK(std::filesystem::exists(dir + "/ckpt-3"));
  CHECK(!std::filesystem::exists(dir + "/ckpt-2"));

  // The one-expression restore (TF's Checkpoint(model=fresh).restore(path).expect_partial()), then
  // the model is built: its weights and the optimizer's step arrive.
  Ref<keras::Model> fresh = classifier();
  ckpt::Checkpoint(ctx(), {{"model", fresh}}).restore(dir + "/ckpt-4")->expect_partial();
  fresh->predict(Data{nullptr, b.x, {}}, {});
  CHECK(weights_of(*fresh) == weights_of(*m));
  CHECK(fresh->iterations() == m->iterations());

  // save_best_only on "loss" (decreasing here): every epoch improves; with an unreachable min
  // delta... mode max on the loss saves only the first epoch.
  const std::string best = fresh_dir("model_checkpoint_best");
  keras::ModelCheckpointOptions bo;
  bo.directory = best;
  bo.monitor = "loss";
  bo.mode = keras::Mode::Max;
  bo.save_best_only = true;
  classifier()->fit(Data{nullptr, b.x, b.y}, quiet(3, {keras::model_checkpoint(ctx(), bo)}));
  CHECK(std::filesystem::exists(best + "/ckpt-1"));
  CHECK(!std::filesystem::exists(best + "/ckpt-2"));
  CHECK(!std::filesystem::exists(best + "/ckpt-3"));

  keras::ModelCheckpointOptions bad;
  CHECK_THROWS_CODE(keras::model_checkpoint(ctx(), bad), Code::InvalidArgument, "ModelCheckpoint: the directory");
}

TEST_CASE("EarlyStopping stops after patience and restores the best weights") {
  Blobs b = blobs(48);
  keras::EarlyStoppingOptions eo;
  eo.monitor = "loss";
  eo.min_delta = 1e9;  // nothing after the first epoch counts as an improvement
  eo.patience = 1;
  eo.restore_best_weights = true;
  Ref<keras::Model> m = classifier();
  keras::History h = m->fit(Data{nullptr, b.x, b.y}, quiet(10, {keras::early_stopping(eo)}));
  CHECK(h.epochs == std::vector<int64_t>{0, 1});
  Ref<keras::Model> one = classifier();
  one->fit(Data{nullptr, b.x, b.y}, quiet(1));
  CHECK(weights_of(*m) == weights_of(*one));  // the first epoch's weights came back
  eo.patience = -1;
  CHECK_THROWS_CODE(keras::early_stopping(eo), Code::InvalidArgument, "patience");
}

TEST_CASE("LearningRateScheduler and ReduceLROnPlateau set the optimizer's learning rate") {
  Blobs b = blobs(32);
  Ref<keras::Model> m = classifier();
  std::vector<std::pair<int64_t, double>> seen;
  auto sched = keras::learning_rate_scheduler([&](int64_t epoch, double lr) {
    seen.emplace_back(epoch, lr);
    return 0.01 * static_cast<double>(epoch + 1);
  });
  m->fit(Data{nullptr, b.x, b.y}, quiet(3, {sched}));
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].second == doctest::Approx(0.05));
  CHECK(seen[2].second == doctest::Approx(0.02));
  CHECK(m->optimizer()->learning_rate_value() == doctest::Approx(0.03));
  auto bad = keras::learning_rate_scheduler([](int64_t, double) { return -1.0; });
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, b.y}, quiet(1, {bad})), Code::InvalidArgument,
                    "LearningRateScheduler: the schedule gave -1");

  keras::ReduceLROnPlateauOptions ro;
  ro.monitor = "loss";
  ro.min_delta = 1e9;
  ro.patience = 1;
  ro.factor = 0.5;
  Ref<keras::Model> r = classifier(false, 0.04);
  r->fit(Data{nullptr, b.x, b.y}, quiet(3, {keras::reduce_lr_on_plateau(ro)}));
  CHECK(r->optimizer()->learning_rate_value() == doctest::Approx(0.01));
  ro.factor = 1;
  CHECK_THROWS_CODE(keras::reduce_lr_on_plateau(ro), Code::InvalidArgument, "factor");
}

TEST_CASE("CSVLogger writes a header and one row per epoch, and appends") {
  Blobs b = blobs(32);
  const std::string path = fresh_dir("csv") + ".csv";
  Ref<keras::Model> m = classifier();
  FitOptions o = quiet(2, {keras::csv_logger(path)});
  o.validation = Data{nullptr, b.x, b.y};
  keras::History h = m->fit(Data{nullptr, b.x, b.y}, o);
  std::string text = slurp(path);
  CHECK(text.rfind("epoch,loss,accuracy,val_loss,val_accuracy\n0,", 0) == 0);
  CHECK(text.find(fmt::format("\n1,{},", (*h.get("loss"))[1])) != std::string::npos);
  m->fit(Data{nullptr, b.x, b.y}, quiet(1, {keras::csv_logger(path, ';', true)}));
  text = slurp(path);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);
  CHECK(text.find("epoch", 10) == std::string::npos);
  CHECK_THROWS_CODE(m->fit(Data{nullptr, b.x, b.y}, quiet(1, {keras::csv_logger("/nonexistent/dir/x.csv")})),
                    Code::InvalidArgument, "CSVLogger: cannot open '/nonexistent/dir/x.csv'");
}

TEST_CASE("TensorBoard writes epoch and batch scalars, the graph, histograms and a profile") {
  Blobs b = blobs(32);
  const std::string logdir = fresh_dir("tensorboard_cb");
  keras::TensorBoardOptions to;
  to.logdir = logdir;
  to.update_freq = 1;
  to.histogram_freq = 1;
  to.profile_batch_begin = 0;
  to.profile_batch_end = 1;
  Ref<keras::Model> m = classifier();
  FitOptions o = quiet(2, {keras::tensorboard(to)});
  o.validation = Data{nullptr, b.x, b.y};
  m->fit(Data{nullptr, b.x, b.y}, o);

  std::map<std::string, std::vector<int64_t>> train, validation;
  bool graph = false;
  for (const std::string& f : event_files(logdir + "/train"))
    for (const DecodedEvent& e : read_events(f)) {
      graph = graph || e.has_graph;
      for (const DecodedValue& v : e.values) train[v.tag].push_back(e.step);
    }
  for (const std::string& f : event_files(logdir + "/validation"))
    for (const DecodedEvent& e : read_events(f))
      for (const DecodedValue& v : e.values) validation[v.tag].push_back(e.step);
  CHECK(graph);
  CHECK(train["epoch_loss"] == std::vector<int64_t>{0, 1});
  CHECK(train["epoch_accuracy"] == std::vector<int64_t>{0, 1});
  CHECK(train["epoch_learning_rate"] == std::vector<int64_t>{0, 1});
  CHECK(train["batch_loss"] == std::vector<int64_t>{1, 2, 3, 4});
  std::string kernel = m->weights()[0]->name();  // "classifier/dense/kernel:0" -> tag ".../kernel_0"
  kernel[kernel.find(':')] = '_';
  CHECK(train[kernel] == std::vector<int64_t>{0, 1});
  CHECK(validation["epoch_loss"] == std::vector<int64_t>{0, 1});
  CHECK(std::filesystem::exists(logdir + "/plugins/profile/train"));
}

// Trains `epochs` epochs of batch 8 over 48 samples (6 steps an epoch), with a backup every
// `save_freq` batches; `crash_at` throws from a callback after that global step.
std::vector<std::vector<double>> train_with_backup(const std::string& dir, int64_t save_freq, int64_t crash_at,
                                                   bool* crashed) {
  Blobs b = blobs(48);
  Ref<keras::Model> m = classifier();  // fresh objects each time, as after a restart
  keras::BackupAndRestoreOptions bo;
  bo.directory = dir;
  bo.save_freq = save_freq;
  auto rec = make_ref<Recorder>();
  rec->throw_at = crash_at;
  FitOptions o = quiet(3, {keras::backup_and_restore(ctx(), bo), rec});
  o.batch_size = 8;
  o.seed = 3;
  try {
    m->fit(Data{nullptr, b.x, b.y}, o);
    *crashed = false;
  } catch (const Error&) {
    *crashed = true;
  }
  return weights_of(*m);
}

TEST_CASE("BackupAndRestore resumes mid-epoch at the exact batch: the weights equal an uninterrupted run") {
  bool crashed = false;
  const std::vector<std::vector<double>> want = train_with_backup(fresh_dir("backup_none"), 1, -1, &crashed);
  CHECK(!crashed);
  for (int64_t crash_at : {4, 6, 7, 13}) {
    CAPTURE(crash_at);
    const std::string dir = fresh_dir("backup_" + std::to_string(crash_at));
    train_with_backup(dir, 1, crash_at, &crashed);
    REQUIRE(crashed);
    CHECK(std::filesystem::exists(dir + "/checkpoint"));
    CHECK(train_with_backup(dir, 1, -1, &crashed) == want);
    CHECK(!crashed);
    CHECK(!std::filesystem::exists(dir));  // deleted after a normal end
  }
  // Per-epoch backups: a crash mid-epoch 1 redoes that epoch from its start, also exactly.
  const std::string dir = fresh_dir("backup_epoch");
  train_with_backup(dir, 0, 9, &crashed);
  REQUIRE(crashed);
  CHECK(train_with_backup(dir, 0, -1, &crashed) == want);
}

TEST_CASE("the progress output: one line per epoch when not a terminal") {
  Blobs b = blobs(32);
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  Ref<keras::Model> m = classifier();
  m->fit(Data{nullptr, b.x, b.y}, quiet(2, {keras::progress_bar(keras::Verbose::EpochLines, f)}));
  std::rewind(f);
  char buf[4096] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string text(buf, n);
  CHECK(text.rfind("Epoch 1/2\n2/2 - ", 0) == 0);
  CHECK(text.find("s/step - loss: ") != std::string::npos);
  CHECK(text.find("Epoch 2/2\n2/2 - ") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);
}

TEST_CASE("the progress bar on a terminal: redrawn in place with an ETA, then the epoch's summary") {
  Blobs b = blobs(64);
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  Ref<keras::Model> m = classifier();
  FitOptions o = quiet(1, {keras::progress_bar(keras::Verbose::Bar, f)});
  o.batch_size = 8;  // 8 batches
  m->fit(Data{nullptr, b.x, b.y}, o);
  std::rewind(f);
  char buf[8192] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string text(buf, n);
  CHECK(text.rfind("Epoch 1/1\n", 0) == 0);
  // The first batch is always drawn (more may be, at most one per 50 ms), then the final line.
  CHECK(text.find("\r1/8 [===>..........................] - ETA: ") != std::string::npos);
  CHECK(text.find("\r8/8 [==============================] - ") != std::string::npos);
  CHECK(text.back() == '\n');
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK_THROWS_CODE(keras::progress_bar(keras::Verbose::Silent), Code::InvalidArgument, "Bar or EpochLines");
}

}  // namespace
}  // namespace cairn::test
