// Readers walk the graph while writers assign variables and replace edges. Bounded by an
// iteration count and a deadline, so it ends well under two seconds even on a loaded machine.
// Run it under --config=tsan to check the locking.
#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/track/track.h"
#include "tests/util/test_util.h"

namespace cairn {
namespace {

using test::ctx;
using Clock = std::chrono::steady_clock;

// Tensors built without doctest's assertions, which the worker threads must not use.
Tensor pair(float x) {
  Tensor t = Tensor::allocate(ctx().cpu(), DType::Float32, Shape{2});
  t.mutable_data<float>()[0] = x;
  t.mutable_data<float>()[1] = x;
  return t;
}

Tensor one() {
  Tensor t = Tensor::allocate(ctx().cpu(), DType::Int64, Shape{});
  *t.mutable_data<int64_t>() = 1;
  return t;
}

TEST_CASE("four threads: two walk the graph while two assign variables and set edges") {
  Ref<Module> root = Module::create(ctx(), "root");
  Ref<List> list = List::create(ctx());
  Ref<Dict> dict = Dict::create(ctx());
  root->set("list", list);
  root->set("dict", dict);
  Ref<Variable> counter = Variable::create(ctx(), test::scalar<int64_t>(0));
  root->set("counter", counter);
  for (int i = 0; i < 4; ++i) list->append(Variable::create(ctx(), pair(0)));

  struct Count : EdgeObserver {
    std::atomic<int> n{0};
    void on_edge_created(Object&, const std::string&, Object&) override { n.fetch_add(1); }
  };
  auto count = std::make_shared<Count>();
  dict->add_edge_observer(count);

  const auto deadline = Clock::now() + std::chrono::milliseconds(800);
  constexpr int kIterations = 2000;
  std::atomic<int> bad_reads{0}, walks{0}, adds{0}, dict_sets{0};

  auto reader = [&] {
    for (int i = 0; i < kIterations && Clock::now() < deadline; ++i) {
      auto all = breadth_first(*root);
      if (all.size() < 8) bad_reads.fetch_add(1);  // root, list, dict, counter and 4 list elements
      auto vars = module_variables(*root, false);
      for (const auto& p : vars) {
        Tensor t = static_cast<Variable&>(*p.object).read();
        if (t.dtype() == DType::Float32) {
          // Each assign writes two equal elements; a torn value would show two different ones.
          if (t.data<float>()[0] != t.data<float>()[1]) bad_reads.fetch_add(1);
        }
      }
      walks.fetch_add(1);
    }
  };
  auto writer = [&](int id) {
    for (int i = 0; i < kIterations && Clock::now() < deadline; ++i) {
      counter->assign_add(one());
      adds.fetch_add(1);
      auto v = static_cast<Variable*>(list->at(static_cast<size_t>(i % 4)).get());
      float x = static_cast<float>(id * 100000 + i);
      v->assign(pair(x));
      std::string key = "k" + std::to_string(id) + "_" + std::to_string(i % 5);
      dict->set(key, Variable::create(ctx(), pair(x)));
      dict_sets.fetch_add(1);
      if (i % 7 == 0) dict->remove(key);
      root->set("scratch" + std::to_string(id), Trackable::create(ctx()));
    }
  };

  auto start = Clock::now();
  std::thread threads[] = {std::thread(reader), std::thread(reader), std::thread(writer, 1), std::thread(writer, 2)};
  for (auto& t : threads) t.join();
  auto elapsed = Clock::now() - start;

  CHECK(bad_reads.load() == 0);
  CHECK(walks.load() > 0);
  CHECK(count->n.load() == dict_sets.load());
  // assign_add is atomic: no increment is lost between the two writers.
  CHECK(test::values<int64_t>(counter->read())[0] == adds.load());
  CHECK(elapsed < std::chrono::seconds(2));
}

}  // namespace
}  // namespace cairn
