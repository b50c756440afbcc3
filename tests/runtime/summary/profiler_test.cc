// The profiler's recorder under threads (per-thread buffers, the cap and its dropped count, clearing
// on start) and the Chrome trace JSON's shape. tools/test runs it under ThreadSanitizer.
#include "runtime/summary/profiler.h"

#include <set>
#include <thread>

#include "runtime/eager/ops.h"
#include "tests/tensorboard/tools/graph_sample.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

void add_ops(int n) {
  Context& c = ctx();
  Tensor x = make<float>({1, 2}, Shape{2});
  for (int i = 0; i < n; ++i) op::add(c, x, x);
}

TEST_CASE("threads record into their own buffers; the cap keeps max_events and counts the rest") {
  constexpr int kThreads = 4, kOps = 200;
  summary::Profiler::start({});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(add_ops, kOps);
  for (auto& t : threads) t.join();
  auto p = summary::Profiler::stop();
  CHECK(p->events.size() == kThreads * kOps);
  CHECK(p->dropped == 0);
  std::set<uint32_t> ids;
  for (const prof::Event& e : p->events) {
    ids.insert(e.thread);
    CHECK(std::string(e.category) == "eager");
    CHECK(e.name == "Add");
  }
  CHECK(ids.size() == kThreads);
  for (size_t i = 1; i < p->events.size(); ++i) CHECK(p->events[i - 1].start_ns <= p->events[i].start_ns);

  summary::ProfilerOptions capped;
  capped.max_events = 100;
  summary::Profiler::start(capped);
  threads.clear();
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(add_ops, kOps);
  for (auto& t : threads) t.join();
  p = summary::Profiler::stop();
  CHECK(p->events.size() == 100);
  CHECK(p->dropped == kThreads * kOps - 100);

  // A new start clears what a stopped profile left behind.
  summary::Profiler::start({});
  p = summary::Profiler::stop();
  CHECK(p->events.empty());
}

TEST_CASE("start twice and stop while off are FAILED_PRECONDITION; the JSON is one trace object") {
  CHECK_THROWS_CODE(summary::Profiler::stop(), Code::FailedPrecondition, "off");
  summary::Profiler::start({});
  CHECK_THROWS_CODE(summary::Profiler::start({}), Code::FailedPrecondition, "already on");
  add_ops(2);
  auto p = summary::Profiler::stop();
  std::string json = summary::chrome_trace_json(*p);
  CHECK(json.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0);
  CHECK(json.find("\"ph\":\"X\",\"cat\":\"eager\",\"name\":\"Add\"") != std::string::npos);
  CHECK(json.find("\"thread_name\"") != std::string::npos);
  CHECK(json.find("\"otherData\":{\"dropped_events\":0") != std::string::npos);
  int depth = 0;
  for (char ch : json) {
    depth += ch == '{' || ch == '[' ? 1 : ch == '}' || ch == ']' ? -1 : 0;
    REQUIRE(depth >= 0);
  }
  CHECK(depth == 0);
}

TEST_CASE("a replay records its nodes, control-flow nodes around their branches' nodes") {
  Context& c = ctx();
  Ref<graph::Function> f = graph_sample(c);  // traced (While over a body holding an If)
  std::vector<Tensor> inputs{op::scalar(c, c.cpu(), DType::Int32, 6), op::scalar(c, c.cpu(), DType::Int32, 0)};
  summary::Profiler::start({});
  f->call(inputs);
  auto p = summary::Profiler::stop();
  const prof::Event* loop = nullptr;
  int ifs = 0, functions = 0;
  for (const prof::Event& e : p->events) {
    const std::string cat = e.category;
    CHECK(cat != "eager");  // nodes are recorded once, as nodes
    if (cat == "function") ++functions;
    if (cat == "graph" && e.name.rfind("While_", 0) == 0) loop = &e;
    if (cat == "graph" && e.name.rfind("If_", 0) == 0) ++ifs;
  }
  REQUIRE(loop != nullptr);
  CHECK(ifs == 8);  // Collatz from 6: 8 steps, one If each
  CHECK(functions > 1);  // the function and its branches' replays
  for (const prof::Event& e : p->events)
    if (e.name.rfind("If_", 0) == 0) {
      CHECK(e.start_ns >= loop->start_ns);
      CHECK(e.start_ns + e.duration_ns <= loop->start_ns + loop->duration_ns);
    }
}

}  // namespace
}  // namespace cairn::test
