// The event file writer: names, framing, the first record, scalars with steps and metadata, the
// default writer and step, flushing by timer, and errors of the background thread.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "runtime/summary/values.h"
#include "runtime/summary/writer.h"
#include "tests/runtime/summary/event_reader.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace cairn::summary;
namespace fs = std::filesystem;

TEST_CASE("a writer creates its log directory and a TF2-named event file starting with brain.Event:2") {
  const std::string dir = fresh_dir("naming") + "/a/b";
  auto w = SummaryWriter::create(dir);
  REQUIRE(fs::is_directory(dir));
  const std::string name = fs::path(w->path()).filename().string();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::regex pattern("events\\.out\\.tfevents\\.[0-9]{10}\\." + std::string(host) + "\\." +
                           std::to_string(getpid()) + "\\.[0-9]+\\.v2");
  CHECK_MESSAGE(std::regex_match(name, pattern), name);
  // The file and its version record exist once create returns.
  std::vector<DecodedEvent> events = read_events(w->path());
  REQUIRE(events.size() == 1);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[0].wall_time > 1.7e9);
  w->close();

  WriterOptions o;
  o.filename_suffix = "run1";
  auto w2 = SummaryWriter::create(dir, o);
  CHECK(w2->path().size() > 5);
  CHECK(w2->path().substr(w2->path().size() - 5) == ".run1");
  CHECK(w2->id() != w->id());
}

TEST_CASE("scalars: tags, steps, float32 values, metadata on each tag's first value") {
  const std::string dir = fresh_dir("scalars");
  auto w = SummaryWriter::create(dir);
  for (int i = 0; i < 25; ++i) {
    w->scalar("loss", 1.0f / static_cast<float>(i + 1), i);
    if (i % 5 == 0) w->scalar("acc", 0.5f, i * 10);
  }
  w->write(text_value("notes", "hello"), 3);
  w->write_graph(7, std::string("\x0a\x03", 2));
  w->close();
  std::vector<DecodedEvent> events = read_events(w->path());
  REQUIRE(events.size() == 1 + 25 + 5 + 2);
  int loss = 0, acc = 0;
  for (size_t i = 1; i < events.size(); ++i) {
    const DecodedEvent& e = events[i];
    if (e.has_graph) {
      CHECK(e.step == 7);
      CHECK(e.graph_def == std::string("\x0a\x03", 2));
      continue;
    }
    REQUIRE(e.values.size() == 1);
    const DecodedValue& v = e.values[0];
    if (v.tag == "loss") {
      CHECK(e.step == loss);
      CHECK(scalar_of(v) == 1.0f / static_cast<float>(loss + 1));
      CHECK(v.has_metadata == (loss == 0));
      if (loss == 0) {
        CHECK(v.plugin_name == "scalars");
        CHECK(v.data_class == 1);
      }
      ++loss;
    } else if (v.tag == "acc") {
      CHECK(e.step == acc * 50);
      CHECK(v.has_metadata == (acc == 0));
      ++acc;
    } else {
      CHECK(v.tag == "notes");
      CHECK(v.plugin_name == "text");
      CHECK(v.dtype == 7);
      CHECK(v.strings == std::vector<std::string>{"hello"});
    }
  }
  CHECK(loss == 25);
  CHECK(acc == 5);
  CHECK_THROWS_CODE(w->scalar("loss", 1, 0), Code::FailedPrecondition, "closed");
}

TEST_CASE("the default step and the default writer") {
  set_default_step(kDefaultStep);
  const std::string dir = fresh_dir("defaults");
  auto w = SummaryWriter::create(dir);
  CHECK_THROWS_CODE(w->scalar("x", 1, kDefaultStep), Code::InvalidArgument, "scalar 'x': no step given");
  set_default_step(42);
  w->scalar("x", 1, kDefaultStep);
  CHECK(find_writer(0) == nullptr);
  set_default_writer(w);
  CHECK(find_writer(0) == w);
  CHECK(find_writer(w->id()) == w);
  set_default_writer(nullptr);
  set_default_step(kDefaultStep);
  w->flush();
  std::vector<DecodedEvent> events = read_events(w->path());
  REQUIRE(events.size() == 2);
  CHECK(events[1].step == 42);
  const int64_t id = w->id();
  w.reset();
  CHECK(find_writer(id) == nullptr);
}

// Polls (briefly) until `pred` holds; the timer under test runs every 50 ms.
template <class P>
bool eventually(P pred) {
  for (int i = 0; i < 200; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TEST_CASE("the flush timer pushes a short run's events to the file without flush()") {
  const std::string dir = fresh_dir("timer");
  WriterOptions o;
  o.flush_millis = 50;
  auto w = SummaryWriter::create(dir, o);
  const auto size0 = fs::file_size(w->path());
  // Let the writer thread go idle (nothing to flush), as between the epochs of a slow run.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  w->scalar("loss", 3, 1);  // one event: below max_queue, so only the timer writes it
  CHECK(eventually([&] { return fs::file_size(w->path()) > size0; }));
  CHECK(read_events(w->path()).size() == 2);

  // Without the timer, nothing reaches the file before flush().
  WriterOptions off;
  off.flush_millis = 0;
  auto quiet = SummaryWriter::create(fresh_dir("no_timer"), off);
  const auto quiet0 = fs::file_size(quiet->path());
  quiet->scalar("loss", 3, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(fs::file_size(quiet->path()) == quiet0);
  quiet->flush();
  CHECK(fs::file_size(quiet->path()) > quiet0);
}

TEST_CASE("a deleted log directory is reported naming the file, then writing goes on in a new file") {
  const std::string dir = fresh_dir("deleted");
  auto w = SummaryWriter::create(dir);
  w->scalar("loss", 1, 0);
  w->flush();
  const std::string old = w->path();
  fs::remove_all(dir);
  w->scalar("loss", 2, 1);
  CHECK_THROWS_CODE(w->flush(), Code::NotFound, old);
  // The error is reported once; the writer recreated the directory and a new file.
  CHECK(w->path() != old);
  w->scalar("loss", 3, 2);
  w->flush();
  std::vector<DecodedEvent> events = read_events(w->path());
  REQUIRE(events.size() == 2);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[1].step == 2);
  CHECK(events[1].values.at(0).has_metadata);  // a new file: the tag's metadata again
}

TEST_CASE("an unusable log directory fails at creation, naming it") {
  const std::string dir = fresh_dir("blocked");
  fs::create_directories(dir);
  std::ofstream(dir + "/file") << "x";
  CHECK_THROWS_CODE(SummaryWriter::create(dir + "/file/logs"), Code::FailedPrecondition, dir + "/file/logs");
  WriterOptions bad;
  bad.max_queue = 0;
  CHECK_THROWS_CODE(SummaryWriter::create(dir, bad), Code::InvalidArgument, "max_queue");
}

TEST_CASE("a full disk surfaces on the next call, and the program goes on") {
  const std::string dir = fresh_dir("full");
  WriterOptions o;
  o.flush_millis = 0;
  auto w = SummaryWriter::create(dir, o);
  // RLIMIT_FSIZE makes writes 4 KiB past the file's end fail with EFBIG, as a full disk fails them.
  signal(SIGXFSZ, SIG_IGN);
  rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = fs::file_size(w->path()) + 4096;
  std::vector<uint8_t> noise(64 * 64 * 3);  // incompressible: each PNG is about 12 KiB
  uint32_t x = 2463534242u;
  for (uint8_t& b : noise) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  Tensor img = make<uint8_t>(noise, Shape{1, 64, 64, 3});
  bool threw = false;
  std::string message;
  try {
    for (int i = 0; i < 3; ++i) w->write(image_value("big", img), i);
    w->flush();
  } catch (const Error& e) {
    threw = true;
    message = e.message();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  CHECK(threw);
  CHECK_MESSAGE(message.find(dir) != std::string::npos, message);
  // Reported once: the next calls work.
  w->scalar("loss", 1, 5);
  CHECK_NOTHROW(w->flush());
}

}  // namespace
}  // namespace cairn::test
