// IteratorObject: threads pulling from one iterator, epochs of new iterators, close, states, and
// iterators in checkpoints (save, restore, deferred restore, `cairn ckpt show`).
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/data/iterator_object.h"
#include "runtime/data/sources.h"
#include "tests/runtime/data/core/core_util.h"

namespace cairn::test {
namespace {

using data::IteratorObject;

int64_t value(const data::Element& e) { return *e.at(0).data<int64_t>(); }

TEST_CASE("four threads pulling from one iterator get every element exactly once") {
  auto it = IteratorObject::create(data::range(ctx(), 0, 4000, 1));
  std::mutex mu;
  std::multiset<int64_t> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      data::Element e;
      while (it->next(e)) {
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(value(e));
      }
    });
  for (auto& th : threads) th.join();
  CHECK(seen.size() == 4000);
  CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == 4000);
  CHECK(it->position() == 4000);
}

TEST_CASE("each new iterator of a dataset runs the next epoch; the state carries it") {
  data::DatasetPtr ds = data::range(ctx(), 0, 3, 1);
  auto a = IteratorObject::create(ds);
  auto b = IteratorObject::create(ds);
  CHECK(b->epoch() == a->epoch() + 1);
  data::Element e;
  REQUIRE(b->next(e));
  const std::string s = b->state();
  auto c = IteratorObject::create(ds);
  c->restore_state(s);
  CHECK(c->epoch() == b->epoch());
  CHECK(c->position() == 1);
  REQUIRE(c->next(e));
  CHECK(value(e) == 1);
  CHECK(c->kind() == ObjectKind::Iterator);
  CHECK(std::string(object_kind_name(c->kind())) == "iterator");
  CHECK(c->describe() == "iterator over range(0, 3, 1)");
}

TEST_CASE("close: later nexts fail, the state still saves, closing again does nothing") {
  data::DatasetPtr ds = data::range(ctx(), 0, 5, 1);
  auto it = IteratorObject::create(ds);
  data::Element e;
  REQUIRE(it->next(e));
  REQUIRE(it->next(e));
  it->close();
  it->close();
  CHECK_THROWS_CODE(it->next(e), Code::FailedPrecondition, "closed");
  auto fresh = IteratorObject::create(ds);
  fresh->restore_state(it->state());
  REQUIRE(fresh->next(e));
  CHECK(value(e) == 2);
  CHECK_THROWS_CODE(it->restore_state(fresh->state()), Code::FailedPrecondition, "closed");
  // Closed before it started: its state is the start.
  auto unused = IteratorObject::create(ds);
  unused->close();
  auto again = IteratorObject::create(ds);
  REQUIRE(again->next(e));
  again->restore_state(unused->state());
  REQUIRE(again->next(e));
  CHECK(value(e) == 0);
}

TEST_CASE("states: another pipeline is InvalidArgument naming both, damage is DataLoss") {
  auto it = IteratorObject::create(data::range(ctx(), 0, 5, 1));
  auto other = IteratorObject::create(data::range(ctx(), 0, 6, 1));
  std::string s = it->state();
  CHECK(s.size() == 64 + std::string("range(0, 5, 1)").size() + 8);  // docs/data.md gives the sizes
  CHECK_THROWS_CODE(other->restore_state(s), Code::InvalidArgument,
                    "the state is of pipeline range(0, 5, 1)");
  CHECK_THROWS_CODE(other->restore_state(s), Code::InvalidArgument, "this iterator's pipeline range(0, 6, 1)");
  for (size_t i = 0; i < s.size(); i += 7) {
    std::string d = s;
    d[i] ^= 0x10;
    CHECK_THROWS_CODE(it->restore_state(d), Code::DataLoss, "corrupt iterator state");
  }
  CHECK_THROWS_CODE(it->restore_state(s.substr(0, s.size() - 1)), Code::DataLoss, "corrupt iterator state");
  CHECK_THROWS_CODE(it->restore_state(""), Code::DataLoss, "corrupt iterator state");
}

TEST_CASE("a file error comes at the first read, and again at the next one") {
  auto it = IteratorObject::create(data::text_lines(ctx(), {"/no/such/file.txt"}));
  data::Element e;
  CHECK_THROWS_CODE(it->next(e), Code::NotFound, "/no/such/file.txt");
  CHECK_THROWS_CODE(it->next(e), Code::NotFound, "/no/such/file.txt");
}

std::string temp_dir_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Runs `cairn <args>` (the built tool): its stdout, after checking it exited with 0.
std::string cli(const std::string& args) {
  const std::string out = temp_dir_path("cli_out.txt");
  const int raw = std::system(("tools/cli/cairn " + args + " > " + out).c_str());
  REQUIRE(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 0);
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST_CASE("checkpoints: save beside a variable, restore, deferred restore, ckpt show") {
  data::DatasetPtr ds = data::range(ctx(), 0, 8, 1);
  auto it = IteratorObject::create(ds);
  auto var = Variable::create(ctx(), make<float>({1, 2}, Shape{2}));
  data::Element e;
  for (int i = 0; i < 3; ++i) REQUIRE(it->next(e));
  const std::string path = temp_dir_path("iter_ckpt");
  {
    ckpt::Checkpoint ck(ctx(), {{"it", it}, {"w", var}});
    ck.write(path);
  }
  // Restore into a fresh iterator.
  auto it2 = IteratorObject::create(ds);
  {
    ckpt::Checkpoint ck(ctx(), {{"it", it2}, {"w", Variable::create(ctx(), make<float>({0, 0}, Shape{2}))}});
    auto rs = ck.restore(path);
    rs->assert_consumed();
  }
  REQUIRE(it2->next(e));
  CHECK(value(e) == 3);
  // Deferred: the edge appears after the restore.
  auto it3 = IteratorObject::create(ds);
  {
    ckpt::Checkpoint ck(ctx(), {{"w", Variable::create(ctx(), make<float>({0, 0}, Shape{2}))}});
    auto rs = ck.restore(path);
    CHECK_THROWS_CODE(rs->assert_consumed(), Code::FailedPrecondition, "it/.ATTRIBUTES/ITERATOR_STATE");
    ck.root().set("it", it3);
    rs->assert_consumed();
  }
  REQUIRE(it3->next(e));
  CHECK(value(e) == 3);
  // The command-line tool shows the node's kind and attribute.
  const std::string graph = cli("ckpt show " + path + " _CHECKPOINTABLE_OBJECT_GRAPH");
  CHECK(graph.find("(iterator)") != std::string::npos);
  CHECK(graph.find("attribute ITERATOR_STATE = it/.ATTRIBUTES/ITERATOR_STATE") != std::string::npos);
  CHECK(cli("ckpt ls " + path).find("it/.ATTRIBUTES/ITERATOR_STATE") != std::string::npos);
}

TEST_CASE("checkpoints: a node of a kind this build does not know still prints") {
  ckpt::ObjectGraph g;
  g.nodes.resize(2);
  g.nodes[0].children.push_back({"future", 1});
  g.nodes[1].kind = 99;
  const std::string path = temp_dir_path("unknown_kind_ckpt");
  ckpt::write_checkpoint(path, g, {}, ckpt::Metadata{});
  CHECK(cli("ckpt show " + path + " _CHECKPOINTABLE_OBJECT_GRAPH").find("node 1 (kind 99)") != std::string::npos);
}

}  // namespace
}  // namespace cairn::test
