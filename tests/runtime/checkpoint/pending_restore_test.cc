// Deferred restores live on the objects that receive them (TensorFlow's _deferred_dependencies):
// the one-expression form `Checkpoint(...).restore(path)->expect_partial()` still restores a model
// built later and the optimizer slots created later; the matching state goes once nothing waits
// (no reference cycle with the graph); the "never restored" warning comes when the state goes, and
// expect_partial silences only that warning.
#include <atomic>
#include <thread>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/optim/optimizer.h"
#include "runtime/track/containers.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using optim::Kind;
using optim::Optimizer;
using optim::OptimizerOptions;

// A context whose warnings the test reads.
struct Logged {
  std::vector<std::string> messages;
  Ref<Context> c;
  Logged() {
    ContextOptions co;
    co.num_threads = 1;
    co.log.callback = [](void* user, LogLevel, const char* m) {
      static_cast<std::vector<std::string>*>(user)->push_back(m);
    };
    co.log.user_data = &messages;
    c = make_ref<Context>(co);
  }
  // How many messages say "never restored" and name `key`.
  size_t warnings_naming(const std::string& key) const {
    size_t n = 0;
    for (const std::string& m : messages)
      if (m.find("never restored") != std::string::npos && m.find(key) != std::string::npos) ++n;
    return n;
  }
};

Tensor floats(Context& c, const std::vector<float>& v) {
  Tensor t = Tensor::allocate(c.cpu(), DType::Float32, Shape{static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

std::vector<float> read(Variable& v) { return values<float>(v.read()); }

Ref<Variable> var(Context& c, const std::string& name, const std::vector<float>& v) {
  VariableOptions o;
  o.name = name;
  return Variable::create(c, floats(c, v), o);
}

Ref<Optimizer> adam(Context& c) {
  OptimizerOptions o;
  o.kind = Kind::Adam;
  o.learning_rate = 0.01;
  return Optimizer::create(c, o);
}

// A model: "dense" (a module with kernel and bias) and "extra", a list holding one variable.
struct Net {
  Ref<Module> model;
  Ref<Module> dense;
  Ref<List> extra;
  Ref<Variable> kernel, bias, item;
  // `built`: the variables exist and are attached. Otherwise only the empty containers exist, as
  // in a Keras model before its first call.
  Net(Context& c, bool built, float init) {
    model = Module::create(c, "net");
    dense = Module::create(c, "dense", model.get());
    extra = List::create(c);
    model->set("dense", dense);
    model->set("extra", extra);
    if (built) build(c, init);
  }
  void build(Context& c, float init) {
    kernel = var(c, "kernel", {init, -init, 2 * init});
    bias = var(c, "bias", {init / 2});
    item = var(c, "item", {init, init});
    dense->set("kernel", kernel);
    dense->set("bias", bias);
    extra->append(item);
  }
  void step(Context& c, Optimizer& opt, int n) {
    opt.apply_gradients({{floats(c, {0.5f + n, -1.0f, 0.25f * n}), kernel.get()}, {floats(c, {2.0f - n}), bias.get()}});
  }
};

// A trained net and optimizer saved after two steps, and their values after a third.
struct Saved {
  std::string path;
  std::vector<float> kernel_after_2, kernel_after_3, bias_after_3, m_after_3, v_after_3, item;
  explicit Saved(Context& c) {
    Net net(c, true, 1.0f);
    Ref<Optimizer> opt = adam(c);
    net.step(c, *opt, 0);
    net.step(c, *opt, 1);
    Checkpoint ck(c, {{"model", net.model}, {"opt", opt}});
    ck.set_options(CheckpointOptions{false, false, false});
    path = make_temp_dir() + "/ckpt";
    ck.write(path);
    item = read(*net.item);
    kernel_after_2 = read(*net.kernel);
    net.step(c, *opt, 2);
    kernel_after_3 = read(*net.kernel);
    bias_after_3 = read(*net.bias);
    m_after_3 = read(*opt->get_slot(*net.kernel, "m"));
    v_after_3 = read(*opt->get_slot(*net.kernel, "v"));
  }
};

// A trained net saved to a file, and a fresh net (not built) and optimizer to restore it into.
struct Restoring {
  Logged log;
  Context& c = *log.c;
  Saved saved{c};
  const int64_t base = live_restores();
  Net fresh{c, false, 0.0f};
  Ref<Optimizer> opt = adam(c);
};

TEST_CASE_FIXTURE(Restoring,
                  "the one-expression form restores a model built and slots created after the checkpoint is gone") {
  // TensorFlow's Checkpoint(model=fresh, opt=opt).restore(path).expect_partial(): the checkpoint
  // and the status are temporaries, gone at the end of the statement.
  Checkpoint(c, {{"model", fresh.model}, {"opt", opt}}).restore(saved.path)->expect_partial();
  // Only the waiting objects hold the restore now: the dense module (kernel, bias) and the list
  // (item), and the optimizer once its variables exist.
  CHECK(live_restores() == base + 1);
  CHECK(fresh.dense->num_held_edge_observers() == 1);
  CHECK(fresh.extra->num_held_edge_observers() == 1);
  CHECK(opt->iterations_value() == 2);

  fresh.build(c, 9.0f);  // other initial values: the restore must replace them
  CHECK(read(*fresh.item) == saved.item);
  // Built: nothing waits on the containers any more; the optimizer waits for its slots.
  CHECK(fresh.dense->num_held_edge_observers() == 0);
  CHECK(fresh.extra->num_held_edge_observers() == 0);
  CHECK(live_restores() == base + 1);
  CHECK(opt->get_slot(*fresh.kernel, "m") == nullptr);

  fresh.step(c, *opt, 2);  // creates the slots: restored on creation, then updated
  CHECK(read(*fresh.kernel) == saved.kernel_after_3);
  CHECK(read(*fresh.bias) == saved.bias_after_3);
  CHECK(read(*opt->get_slot(*fresh.kernel, "m")) == saved.m_after_3);
  CHECK(read(*opt->get_slot(*fresh.kernel, "v")) == saved.v_after_3);
  // Nothing pending anywhere: the state is gone, though the model and optimizer live on.
  CHECK(live_restores() == base);
  CHECK(log.messages.empty());
}

TEST_CASE_FIXTURE(Restoring, "without expect_partial, a restore that ends fully restored logs nothing") {
  Checkpoint(c, {{"model", fresh.model}, {"opt", opt}}).restore(saved.path);
  fresh.build(c, 0.0f);
  fresh.step(c, *opt, 2);
  CHECK(read(*fresh.kernel) == saved.kernel_after_3);
  CHECK(live_restores() == base);
  CHECK(log.messages.empty());
}

TEST_CASE("the state holds no waiting object: dropping the model frees both, and the warning comes then") {
  for (bool partial : {false, true}) {
    CAPTURE(partial);
    Logged log;
    Context& c = *log.c;
    Saved saved(c);
    const int64_t base = live_restores();
    Net fresh(c, false, 0.0f);
    {
      Checkpoint ck(c, {{"model", fresh.model}});
      auto status = ck.restore(saved.path);
      if (partial) status->expect_partial();
    }
    // The checkpoint and its status are gone: the values wait on the model, and nothing is
    // reported yet (the model may still be built).
    CHECK(live_restores() == base + 1);
    CHECK(log.messages.empty());
    // The state holds none of the model's objects: the test's references are the only ones.
    CHECK(fresh.model->ref_count() == 1);
    CHECK(fresh.dense->ref_count() == 2);  // the test's and the model's edge
    CHECK(fresh.extra->ref_count() == 2);
    fresh.model = nullptr;
    fresh.dense = nullptr;
    fresh.extra = nullptr;
    // The last waiting object is gone: so is the state, and with it the report of what it never
    // restored (the optimizer was not in this checkpoint, so its values were never wanted either).
    CHECK(live_restores() == base);
    CHECK(log.warnings_naming("model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE") == (partial ? 0 : 1));
    CHECK(log.warnings_naming("model/extra/0/.ATTRIBUTES/VARIABLE_VALUE") == (partial ? 0 : 1));
    CHECK(log.warnings_naming("opt/iter/.ATTRIBUTES/VARIABLE_VALUE") == (partial ? 0 : 1));
  }
}

TEST_CASE_FIXTURE(Restoring, "the status outlives the checkpoint; its assertions see later restores") {
  std::shared_ptr<RestoreState> status;
  {
    Checkpoint ck(c, {{"model", fresh.model}, {"opt", opt}});
    status = ck.restore(saved.path);
  }
  status->assert_existing_objects_matched();
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition,
                    "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  fresh.build(c, 0.0f);
  CHECK_THROWS_CODE(status->assert_consumed(), Code::FailedPrecondition,
                    "model/dense/kernel/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE");
  fresh.step(c, *opt, 2);
  status->assert_consumed();
  status.reset();
  CHECK(log.messages.empty());
}

TEST_CASE_FIXTURE(Restoring, "a matched object that dies while the restore waits elsewhere is forgotten, not touched") {
  Checkpoint(c, {{"model", fresh.model}, {"opt", opt}}).restore(saved.path)->expect_partial();
  // The optimizer was matched (by address, not held) and dies before its variables appear. The
  // state must not reach for it when they do (ASan sees a use after free if it does).
  opt = nullptr;
  fresh.build(c, 0.0f);
  CHECK(read(*fresh.kernel) == saved.kernel_after_2);
  CHECK(live_restores() == base);  // nothing can wait any more: no optimizer, the model is built
  CHECK(log.messages.empty());
}

TEST_CASE("an optimizer dropped on one thread while its variables appear on another") {
  // The variables' match reaches for their slot owner while the owner may be dying: the owner's
  // destruction waits for the state's lock, so the state either restores into a whole optimizer
  // or finds it forgotten (TSan and ASan runs check both orders).
  Logged log;
  Context& c = *log.c;
  Saved saved(c);
  const int64_t base = live_restores();
  for (int round = 0; round < 20; ++round) {
    Net fresh(c, false, 0.0f);
    Ref<Optimizer> opt = adam(c);
    Checkpoint(c, {{"model", fresh.model}, {"opt", opt}}).restore(saved.path)->expect_partial();
    std::atomic<bool> go{false};
    std::thread dropper([&] {
      while (!go.load()) std::this_thread::yield();
      opt = nullptr;
    });
    go.store(true);
    fresh.build(c, 0.0f);
    dropper.join();
    CHECK(read(*fresh.kernel) == saved.kernel_after_2);
    CHECK(live_restores() == base);
  }
  CHECK(log.messages.empty());
}

TEST_CASE("a newer restore of the same checkpoint takes over the waiting objects") {
  Logged log;
  Context& c = *log.c;
  const int64_t base = live_restores();
  std::string dir = make_temp_dir();
  std::vector<std::string> paths;
  for (float value : {1.0f, 2.0f}) {
    Net net(c, true, value);
    Checkpoint ck(c, {{"model", net.model}});
    ck.set_options(CheckpointOptions{false, false, false});
    paths.push_back(dir + "/v" + std::to_string(static_cast<int>(value)));
    ck.write(paths.back());
  }
  Net fresh(c, false, 0.0f);
  {
    Checkpoint ck(c, {{"model", fresh.model}});
    ck.restore(paths[0])->expect_partial();
    ck.restore(paths[1])->expect_partial();
  }
  CHECK(fresh.dense->num_held_edge_observers() == 1);  // the first restore let go
  CHECK(live_restores() == base + 1);
  fresh.build(c, 0.0f);
  CHECK(read(*fresh.bias) == std::vector<float>{1.0f});  // the second file's value (2 / 2)
  CHECK(read(*fresh.item) == std::vector<float>{2.0f, 2.0f});
  CHECK(live_restores() == base);
}

TEST_CASE("a failed restore leaves nothing waiting") {
  Logged log;
  Context& c = *log.c;
  Saved saved(c);
  const int64_t base = live_restores();
  Net fresh(c, false, 0.0f);
  // The list's item has another shape: the error comes while the dense module still waits.
  fresh.extra->append(var(c, "item", {1.0f, 2.0f, 3.0f}));
  {
    Checkpoint ck(c, {{"model", fresh.model}});
    CHECK_THROWS_CODE(ck.restore(saved.path), Code::InvalidArgument, "model/extra/0/.ATTRIBUTES/VARIABLE_VALUE");
  }
  CHECK(fresh.dense->num_held_edge_observers() == 0);
  CHECK(live_restores() == base);
  fresh.dense->set("kernel", var(c, "kernel", {5, 5, 5}));
  CHECK(read(static_cast<Variable&>(*fresh.dense->get_child("kernel"))) == std::vector<float>{5, 5, 5});
  CHECK(log.messages.empty());
}

TEST_CASE("edges created on several threads after the checkpoint is gone are all restored") {
  Logged log;
  Context& c = *log.c;
  const int64_t base = live_restores();
  constexpr int kThreads = 8;
  std::string path = make_temp_dir() + "/many";
  {
    Ref<Dict> saved = Dict::create(c);
    for (int i = 0; i < kThreads; ++i) saved->set("v" + std::to_string(i), var(c, "v", {float(i), float(-i)}));
    Checkpoint ck(c, {{"d", saved}});
    ck.set_options(CheckpointOptions{false, false, false});
    ck.write(path);
  }
  Ref<Dict> fresh = Dict::create(c);
  Checkpoint(c, {{"d", fresh}}).restore(path);
  std::vector<Ref<Variable>> vars(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      vars[i] = var(c, "v", {0, 0});
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      fresh->set("v" + std::to_string(i), vars[i]);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) CHECK(read(*vars[i]) == std::vector<float>{float(i), float(-i)});
  CHECK(fresh->num_held_edge_observers() == 0);
  CHECK(live_restores() == base);
  CHECK(log.messages.empty());
}

}  // namespace
}  // namespace cairn::test
