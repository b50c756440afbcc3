// Sharded checkpoints (shard_index.h, CheckpointManager::save_sharded): 4 "ranks" (threads over a
// LocalCollective) save; restores with 2 ranks, 1 rank and a plain single-process reader see the
// same values; a failed shard write or index commit leaves the previous checkpoint intact and every
// rank's list correct; retention and orphan cleanup remove shards with their index.
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/collective_group.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/checkpoint/sharded_save.h"
#include "runtime/checkpoint/weights_file.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace fs = std::filesystem;

namespace cairn::test {
namespace {

using namespace ckpt;

constexpr const char* kNames[] = {"big", "mid", "small", "tiny", "step", "bias"};

// The value of variable `i` at save `step`: the same on every rank (data parallelism).
Tensor value(int i, int step) {
  const Shape shapes[] = {Shape{64, 64}, Shape{1000}, Shape{7, 3}, Shape{2}, Shape{}, Shape{33}};
  return pattern_tensor(i == 4 ? DType::Int64 : DType::Float32, shapes[i], 2, 100 * step + i);
}

// One rank's process: its context, variables, checkpoint and manager over the shared directory.
struct Rank {
  Rank(const std::string& dir, int max_to_keep) {
    ContextOptions o;
    o.num_threads = 1;
    ctx = make_ref<Context>(o);
    std::vector<std::pair<std::string, Ref<Object>>> children;
    for (int i = 0; i < 6; ++i) {
      vars.push_back(Variable::create(*ctx, value(i, 0)));
      children.emplace_back(kNames[i], vars.back());
    }
    ckpt = std::make_unique<Checkpoint>(*ctx, children);
    ManagerOptions mo;
    mo.max_to_keep = max_to_keep;
    manager = std::make_unique<CheckpointManager>(dir, mo, is_intact_checkpoint);
  }
  void set_step(int step) {
    for (int i = 0; i < 6; ++i) vars[i]->assign(value(i, step));
  }
  void check_step(int step) {
    for (int i = 0; i < 6; ++i) {
      CAPTURE(kNames[i]);
      CHECK(same_tensor(vars[i]->read(), value(i, step)));
    }
  }
  Ref<Context> ctx;
  std::vector<Ref<Variable>> vars;
  std::unique_ptr<Checkpoint> ckpt;
  std::unique_ptr<CheckpointManager> manager;
};

// Runs fn(rank) on `n` threads; returns each rank's error message ("" when it returned).
std::vector<std::string> on_ranks(int n, const std::function<void(int)>& fn) {
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

struct Group {
  explicit Group(std::vector<std::unique_ptr<Rank>>& ranks) {
    std::vector<Device*> devices;
    for (auto& r : ranks) devices.push_back(&r->ctx->cpu());
    collective = make_ref<distribute::LocalCollective>(devices, std::chrono::milliseconds(20000), "sharded_test");
  }
  Ref<distribute::LocalCollective> collective;
};

std::vector<std::unique_ptr<Rank>> make_ranks(int n, const std::string& dir, int max_to_keep = 2) {
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<Rank>(dir, max_to_keep));
  return ranks;
}

// Every rank saves checkpoint `number` holding step `step`.
void save_step(std::vector<std::unique_ptr<Rank>>& ranks, Group& g, int number, int step) {
  auto errors = on_ranks(static_cast<int>(ranks.size()), [&](int r) {
    ranks[r]->set_step(step);
    CollectiveShardGroup group(g.collective, r);
    save_sharded(*ranks[r]->ckpt, *ranks[r]->manager, group, number);
  });
  for (const auto& e : errors) REQUIRE(e == "");
}

std::vector<std::string> names(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

size_t count_shards(const std::string& dir) {
  size_t n = 0;
  for (const auto& f : list_dir(dir)) n += is_shard_file_name(f, "ckpt");
  return n;
}

TEST_CASE("the assignment balances bytes, deterministically") {
  std::vector<std::pair<std::string, uint64_t>> sized = {{"a", 100}, {"b", 60}, {"c", 50}, {"d", 40}, {"e", 10}, {"f", 0}};
  std::vector<int> owner = assign_shards(sized, 2);
  CHECK(owner == std::vector<int>{0, 1, 1, 0, 1, 1});  // 140 and 120 bytes
  CHECK(assign_shards(sized, 2) == owner);
  CHECK(assign_shards(sized, 8) == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK_THROWS_WITH(assign_shards(sized, 0), doctest::Contains("0 shards"));
}

TEST_CASE("the index round-trips any key and refuses damage") {
  ShardIndex index;
  index.shards = {{"ckpt-1.shard-0-of-2-00", 640, 0x1234}, {"ckpt-1.shard-1-of-2-00", 704, 0xabcdef}};
  index.keys = {{"a b/%c", 1}, {"line\nbreak", 0}, {"x", 1}};
  std::string text = encode_shard_index(index);
  ShardIndex back = parse_shard_index(text, "idx");
  CHECK(back.shards == index.shards);
  CHECK(back.keys == index.keys);
  std::string flipped = text;
  flipped[20] ^= 1;
  CHECK_THROWS_WITH(parse_shard_index(flipped, "idx"), doctest::Contains("idx: damaged shard index"));
  CHECK_THROWS_WITH(parse_shard_index(text.substr(0, text.size() - 3), "idx"), doctest::Contains("damaged"));
}

TEST_CASE("4 ranks save; 2 ranks, 1 rank and a plain reader restore") {
  const std::string dir = make_temp_dir();
  auto four = make_ranks(4, dir);
  Group g4(four);
  save_step(four, g4, 1, 1);
  save_step(four, g4, 2, 2);
  save_step(four, g4, 3, 3);  // max_to_keep 2: checkpoint 1's index and shards go
  for (auto& r : four) CHECK(names(r->manager->checkpoints()) == std::vector<std::string>{"ckpt-2", "ckpt-3"});
  CHECK(count_shards(dir) == 8);
  CHECK_FALSE(fs::exists(dir + "/ckpt-1"));
  const std::string latest = *four[0]->manager->latest();
  ShardIndex index = read_shard_index(latest);
  CHECK(index.shards.size() == 4);
  CHECK(index.keys.size() == 7);  // six variables and the save counter

  SUBCASE("2 ranks") {
    auto two = make_ranks(2, dir);
    auto errors = on_ranks(2, [&](int r) {
      two[r]->ckpt->restore(*two[r]->manager->latest())->assert_consumed();
      two[r]->check_step(3);
      CHECK(two[r]->ckpt->save_counter_value() == 3);
    });
    for (const auto& e : errors) CHECK(e == "");
    // Saving with 2 ranks replaces the 4-rank checkpoints as retention goes on.
    Group g2(two);
    save_step(two, g2, 4, 4);
    save_step(two, g2, 5, 5);
    CHECK(count_shards(dir) == 4);
  }
  SUBCASE("1 rank") {
    Rank one(dir, 2);
    one.ckpt->restore(latest)->assert_consumed();
    one.check_step(3);
  }
  SUBCASE("a plain reader") {
    auto f = WeightsFile::open(latest);
    CHECK(f->format() == WeightsFormat::Cairn);
    CHECK(f->entries().size() == 8);
    for (const WeightsEntry& e : f->entries()) CHECK(f->verify(e));
    CHECK(same_tensor(f->load(f->entry("big/.ATTRIBUTES/VARIABLE_VALUE")), value(0, 3)));
    ObjectGraph g = parse_object_graph(f->load_strings(f->entry(std::string(kObjectGraphKey)))[0]);
    size_t attributes = 0;
    for (const Node& n : g.nodes) attributes += n.attributes.size();
    CHECK(attributes == 7);
  }
}

TEST_CASE("a failed shard write or index commit keeps the previous checkpoint") {
  const std::string dir = make_temp_dir();
  auto ranks = make_ranks(4, dir);
  Group g(ranks);
  save_step(ranks, g, 1, 1);
  const std::vector<std::string> before = list_dir(dir);

  SUBCASE("one rank's shard") {
    auto errors = on_ranks(4, [&](int r) {
      CollectiveShardGroup group(g.collective, r);
      ranks[r]->manager->save_sharded(2, group, [&](const std::string& path) {
        if (r == 2) raise(Code::ResourceExhausted, "injected: disk full");
        ranks[r]->ckpt->write_snapshot(shard_snapshot(ranks[r]->ckpt->snapshot(), r, 4), path);
      });
    });
    CHECK(errors[2] == "injected: disk full");
    CHECK(errors[0].find("rank 2 could not write its shard") != std::string::npos);
  }
  SUBCASE("the index commit") {
    fs::create_directories(dir + "/ckpt-2/blocker");  // rank 0 cannot rename the index into place
    auto errors = on_ranks(4, [&](int r) {
      CollectiveShardGroup group(g.collective, r);
      save_sharded(*ranks[r]->ckpt, *ranks[r]->manager, group, 2);
    });
    CHECK(errors[0].find("rename") != std::string::npos);
    CHECK(errors[3].find("rank 0 could not write the index") != std::string::npos);
    fs::remove_all(dir + "/ckpt-2");
  }
  for (auto& r : ranks) CHECK(names(r->manager->checkpoints()) == std::vector<std::string>{"ckpt-1"});
  CHECK(list_dir(dir) == before);
  Rank fresh(dir, 2);
  CHECK(names(fresh.manager->checkpoints()) == std::vector<std::string>{"ckpt-1"});
  fresh.ckpt->restore(*fresh.manager->latest())->assert_consumed();
  fresh.check_step(1);
  // The group is still in step: the next save commits.
  save_step(ranks, g, 2, 2);
  CHECK(count_shards(dir) == 8);
}

TEST_CASE("a lost state file is rebuilt from intact indices; stray shards are swept") {
  const std::string dir = make_temp_dir();
  auto ranks = make_ranks(2, dir, -1);
  Group g(ranks);
  save_step(ranks, g, 1, 1);
  save_step(ranks, g, 2, 2);
  fs::remove(dir + "/" + CheckpointManager::kStateFile);
  // Checkpoint 2's second shard replaced by checkpoint 1's (a valid file of the same size, other
  // values): checkpoint 2 no longer counts.
  std::vector<std::string> shards = shard_paths(dir + "/ckpt-2");
  REQUIRE(shards.size() == 2);
  fs::copy_file(shard_paths(dir + "/ckpt-1")[1], shards[1], fs::copy_options::overwrite_existing);
  CHECK_THROWS_WITH(WeightsFile::open(dir + "/ckpt-2"), doctest::Contains("is not the file the index names"));
  // A crashed save's shard, which no index names.
  write_file(dir + "/ckpt-9.shard-0-of-2-00000000000000aa", "partial");
  auto again = make_ranks(2, dir, -1);
  CHECK(names(again[0]->manager->checkpoints()) == std::vector<std::string>{"ckpt-1"});
  Group g2(again);
  save_step(again, g2, 3, 3);
  CHECK_FALSE(fs::exists(dir + "/ckpt-9.shard-0-of-2-00000000000000aa"));
  for (auto& r : again) CHECK(names(r->manager->checkpoints()) == std::vector<std::string>{"ckpt-1", "ckpt-3"});
}

}  // namespace
}  // namespace cairn::test
