#include "runtime/checkpoint/manager.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/util/test_util.h"

namespace fs = std::filesystem;

namespace cairn::ckpt {
namespace {

// A scratch directory per test case, removed afterwards.
struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("cairn_manager_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int counter = 0;
};

// Checkpoints here are files that start with "OK".
void fake_write(const std::string& path) { write_file_atomically(path, "OK " + path); }
bool fake_verify(const std::string& path) {
  std::ifstream in(path);
  std::string head(2, '\0');
  in.read(head.data(), 2);
  return in && head == "OK";
}

std::vector<std::string> names(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

}  // namespace

TEST_CASE("max_to_keep deletes the oldest, and a restart reads the state back") {
  TempDir dir;
  ManagerOptions opts;
  opts.max_to_keep = 2;
  {
    CheckpointManager m(dir.path.string(), opts, fake_verify);
    CHECK_FALSE(m.latest().has_value());
    CHECK(m.checkpoints().empty());
    for (int n = 1; n <= 3; ++n) m.save(n, fake_write);
    CHECK(names(m.checkpoints()) == std::vector<std::string>{"ckpt-2", "ckpt-3"});
    CHECK(fs::path(*m.latest()).filename() == "ckpt-3");
    CHECK_FALSE(fs::exists(dir.path / "ckpt-1"));
    CHECK(fs::exists(dir.path / "ckpt-2"));
  }
  CheckpointManager again(dir.path.string(), opts, fake_verify);
  CHECK(names(again.checkpoints()) == std::vector<std::string>{"ckpt-2", "ckpt-3"});
  again.save(4, fake_write);
  CHECK(names(again.checkpoints()) == std::vector<std::string>{"ckpt-3", "ckpt-4"});
}

TEST_CASE("a lost or damaged state file is rebuilt by scanning for intact checkpoints") {
  TempDir dir;
  ManagerOptions opts;
  opts.max_to_keep = -1;
  {
    CheckpointManager m(dir.path.string(), opts, fake_verify);
    for (int n : {1, 2, 10}) m.save(n, fake_write);
  }
  SUBCASE("damaged") {
    std::ofstream(dir.path / CheckpointManager::kStateFile, std::ios::app) << "garbage\n";
  }
  SUBCASE("missing") { fs::remove(dir.path / CheckpointManager::kStateFile); }
  // Noise the scan must ignore: a damaged checkpoint, unrelated names, a foreign prefix.
  std::ofstream(dir.path / "ckpt-7") << "XX broken";
  std::ofstream(dir.path / "ckpt-x") << "OK";
  std::ofstream(dir.path / "other-3") << "OK";
  CheckpointManager m(dir.path.string(), opts, fake_verify);
  CHECK(names(m.checkpoints()) == std::vector<std::string>{"ckpt-1", "ckpt-2", "ckpt-10"});
  CHECK(fs::path(*m.latest()).filename() == "ckpt-10");
}

TEST_CASE("temporary files left by a crash are removed on start") {
  TempDir dir;
  fs::create_directories(dir.path);
  std::ofstream(dir.path / "ckpt-3.tmp-1234") << "partial";
  std::ofstream(dir.path / "checkpoint.tmp-99") << "partial";
  std::ofstream(dir.path / "unrelated.tmp-5") << "not ours";
  CheckpointManager m(dir.path.string(), ManagerOptions{}, fake_verify);
  CHECK_FALSE(fs::exists(dir.path / "ckpt-3.tmp-1234"));
  CHECK_FALSE(fs::exists(dir.path / "checkpoint.tmp-99"));
  CHECK(fs::exists(dir.path / "unrelated.tmp-5"));
  CHECK(m.checkpoints().empty());
}

TEST_CASE("keep_checkpoint_every_n_hours preserves one checkpoint per interval") {
  TempDir dir;
  double now = 1000.0;
  ManagerOptions opts;
  opts.max_to_keep = 1;
  opts.keep_checkpoint_every_n_hours = 1.0;
  CheckpointManager m(dir.path.string(), opts, fake_verify, [&] { return now; });
  for (int n = 1; n <= 6; ++n) {
    m.save(n, fake_write);
    now += 1800;  // half an hour per save
  }
  // ckpt-1 (t=1000) is not an hour past the start; ckpt-2 (t=2800) is not either; ckpt-3
  // (t=4600) is, and so is ckpt-5 (t=8200) an hour after it. Those stay on disk, unlisted.
  CHECK(names(m.checkpoints()) == std::vector<std::string>{"ckpt-6"});
  CHECK_FALSE(fs::exists(dir.path / "ckpt-1"));
  CHECK_FALSE(fs::exists(dir.path / "ckpt-2"));
  CHECK(fs::exists(dir.path / "ckpt-3"));
  CHECK_FALSE(fs::exists(dir.path / "ckpt-4"));
  CHECK(fs::exists(dir.path / "ckpt-5"));
}

TEST_CASE("saving an existing number replaces its entry; bad options are errors") {
  TempDir dir;
  CheckpointManager m(dir.path.string(), ManagerOptions{}, fake_verify);
  m.save(5, fake_write);
  m.save(6, fake_write);
  m.save(5, fake_write);
  CHECK(names(m.checkpoints()) == std::vector<std::string>{"ckpt-6", "ckpt-5"});
  ManagerOptions zero;
  zero.max_to_keep = 0;
  CHECK_THROWS_CODE(CheckpointManager(dir.path.string(), zero, fake_verify), Code::InvalidArgument, "max_to_keep");
  ManagerOptions slash;
  slash.checkpoint_name = "a/b";
  CHECK_THROWS_CODE(CheckpointManager(dir.path.string(), slash, fake_verify), Code::InvalidArgument, "not a plain file name");
}

TEST_CASE("a failed write leaves the previous state untouched") {
  TempDir dir;
  CheckpointManager m(dir.path.string(), ManagerOptions{}, fake_verify);
  m.save(1, fake_write);
  CHECK_THROWS_CODE(m.save(2, [](const std::string&) { raise(Code::ResourceExhausted, "disk full"); }),
                    Code::ResourceExhausted, "disk full");
  CHECK(names(m.checkpoints()) == std::vector<std::string>{"ckpt-1"});
  CheckpointManager again(dir.path.string(), ManagerOptions{}, fake_verify);
  CHECK(names(again.checkpoints()) == std::vector<std::string>{"ckpt-1"});
}

}  // namespace cairn::ckpt
