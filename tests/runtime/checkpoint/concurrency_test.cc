// Four threads at once on one object graph (run under TSan in CI): two mutate variables and edges,
// one saves a checkpoint of the graph over and over, one reads back what was saved.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/track/containers.h"
#include "tests/util/test_util.h"

namespace fs = std::filesystem;

namespace cairn::ckpt {

TEST_CASE("saving while other threads assign variables and change edges") {
  Context& ctx = test::ctx();
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp ? tmp : "/tmp") / ("concurrency_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "ckpt").string();

  Ref<Variable> counter = Variable::create(ctx, test::scalar<int64_t>(0));
  Ref<Trackable> bag = Trackable::create(ctx);
  Ref<List> list = List::create(ctx);
  Checkpoint c(ctx, {{"counter", counter}, {"bag", bag}, {"list", list}});
  c.set_options(CheckpointOptions{false, false, false});

  std::atomic<bool> stop{false};
  std::atomic<int> saves{0}, reads{0};
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  std::thread assigner([&] {
    Tensor one = test::scalar<int64_t>(1);
    while (!stop) counter->assign_add(one);
  });
  std::thread editor([&] {
    for (int i = 0; !stop; ++i) {
      std::string name = "v" + std::to_string(i % 8);
      if (i % 3 == 2) {
        try {
          bag->remove(name);
        } catch (const Error&) {  // not there yet
        }
      } else {
        bag->set(name, Variable::create(ctx, test::scalar<float>(static_cast<float>(i))));
      }
      if (list->size() < 64) list->append(Trackable::create(ctx));
    }
  });
  std::thread saver([&] {
    while (std::chrono::steady_clock::now() < until) {
      c.write(path);
      ++saves;
    }
    stop = true;
  });
  std::thread reader([&] {
    while (!stop) {
      try {
        Reader r = Reader::open(path);
        for (const TensorInfo& e : r.entries()) r.verify(e);
        ++reads;
      } catch (const Error& e) {
        CHECK(e.code() == Code::NotFound);  // before the first save only; never a torn file
      }
    }
  });
  for (std::thread* t : {&assigner, &editor, &saver, &reader}) t->join();
  CHECK(saves > 0);
  // The last file restores into the live graph (edges may have changed since: expect_partial).
  auto status = c.restore(path);
  status->expect_partial();
  MESSAGE("saves: " << saves.load() << ", verified reads: " << reads.load());
  fs::remove_all(dir);
}

}  // namespace cairn::ckpt
