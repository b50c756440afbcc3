// Several threads log scalars to one writer (and swap the default writer and step) while its
// background thread drains and flushes: every event arrives once, in each thread's order. Run
// under ThreadSanitizer (tools/test's tsan stage).
#include <filesystem>
#include <map>
#include <thread>

#include "runtime/summary/writer.h"
#include "tests/runtime/summary/event_reader.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace cairn::summary;

TEST_CASE("concurrent scalar calls from several threads") {
  const std::string dir = fresh_dir("stress");
  WriterOptions o;
  o.max_queue = 4;
  o.flush_millis = 1;
  auto w = SummaryWriter::create(dir, o);
  constexpr int kThreads = 4, kCalls = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const std::string tag = "thread" + std::to_string(t);
      for (int i = 0; i < kCalls; ++i) {
        w->scalar(tag, static_cast<float>(i), i);
        if (i % 100 == 0) w->flush();
        if (t == 0 && i % 50 == 0) {
          set_default_writer(i % 100 == 0 ? w : nullptr);
          set_default_step(i);
          (void)find_writer(0);
        }
      }
    });
  for (std::thread& th : threads) th.join();
  set_default_writer(nullptr);
  set_default_step(kDefaultStep);
  w->close();
  std::map<std::string, int64_t> next;
  std::vector<DecodedEvent> events = read_events(w->path());
  REQUIRE(events.size() == 1 + kThreads * kCalls);
  for (size_t i = 1; i < events.size(); ++i) {
    const DecodedValue& v = events[i].values.at(0);
    CHECK(events[i].step == next[v.tag]);
    CHECK(scalar_of(v) == static_cast<float>(next[v.tag]));
    ++next[v.tag];
  }
  CHECK(next.size() == kThreads);
}

}  // namespace
}  // namespace cairn::test
