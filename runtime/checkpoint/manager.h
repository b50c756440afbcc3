// CheckpointManager: keeps the last `max_to_keep` checkpoints in a directory (plus one every
// `keep_checkpoint_every_n_hours`), tracks the latest and the list oldest first, and survives
// restarts and crashes (CHECKPOINT.md, "Manager"). It knows nothing about what a checkpoint holds:
// it is given a function that writes one file atomically and one that says whether a file is an
// intact checkpoint.
//
// Sharded checkpoints (shard_index.h): several ranks save one checkpoint together through
// save_sharded; the manager lists the index, and deletes its shards with it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cairn::ckpt {

struct ManagerOptions {
  std::string checkpoint_name = "ckpt";  // files are <directory>/<checkpoint_name>-<N>
  int64_t max_to_keep = 5;               // < 0 keeps all; 0 is an error (TF's rule)
  double keep_checkpoint_every_n_hours = 0;  // 0 = off
};

// The ranks that save one sharded checkpoint together (collective_group.h adapts a Collective).
class ShardGroup {
 public:
  virtual ~ShardGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `mine` (the same length on every rank), concatenated in rank order. Returns once
  // every rank has called it; throws (DeadlineExceeded, ...) when a rank never comes.
  virtual std::vector<uint64_t> all_gather(const std::vector<uint64_t>& mine) = 0;
};

class CheckpointManager {
 public:
  using WriteFn = std::function<void(const std::string& path)>;  // writes atomically or throws
  using VerifyFn = std::function<bool(const std::string& path)>;  // true when the file is intact
  using ClockFn = std::function<double()>;                        // seconds since the epoch

  // Reads the state file (or, when it is missing or damaged, rebuilds the list by scanning the
  // directory with `verify`), and removes temporary files a crash left behind. Creates the
  // directory if needed.
  CheckpointManager(std::string directory, ManagerOptions options, VerifyFn verify, ClockFn clock = {});

  // Writes checkpoint number `number` through `write`, then records it in the state file (after the
  // checkpoint is durable) and deletes checkpoints that fall out of the retention policy.
  // Returns the new checkpoint's path.
  std::string save(int64_t number, const WriteFn& write);
  // A sharded save: every rank of `group` calls it with the same number, on a manager over the
  // same directory (shared by every rank). Each writes its shard through `write_shard` (a path
  // beside the index); once every shard is durable, rank 0 writes the index and the state file and
  // deletes what falls out of retention (and shards no checkpoint names: left by crashed saves);
  // the other ranks then read the state back. When any rank's shard or rank 0's commit fails,
  // every rank throws, this save's shards are removed and the previous checkpoints stay listed.
  // Returns the index's path (the checkpoint's path).
  std::string save_sharded(int64_t number, ShardGroup& group, const WriteFn& write_shard);

  const std::string& directory() const { return directory_; }
  const std::optional<std::string>& latest() const { return latest_; }
  const std::vector<std::string>& checkpoints() const { return paths_; }  // oldest first
  std::string path_for(int64_t number) const;

  static constexpr const char* kStateFile = "checkpoint";

 private:
  struct Entry {
    std::string path;
    double timestamp;
  };
  bool load_state();
  void rebuild_from_directory();
  void write_state() const;
  std::vector<std::string> sweep();
  void refresh_views();
  void clean_temporaries() const;
  // Rank 0's part of a sharded save once every shard is durable: the index, then the state.
  void commit_sharded(const std::string& path, const std::vector<std::string>& shard_files,
                      const std::vector<uint64_t>& reports);
  // Records `path` as the newest checkpoint, writes the state file and deletes what retention drops.
  void record_and_sweep(const std::string& path);
  // Shard files in the directory that no listed checkpoint names.
  std::vector<std::string> orphan_shards() const;

  std::string directory_;
  ManagerOptions options_;
  VerifyFn verify_;
  ClockFn clock_;
  std::vector<Entry> entries_;  // oldest first
  double last_preserved_ = 0;
  std::optional<std::string> latest_;
  std::vector<std::string> paths_;
};

// Durability helpers shared with the checkpoint writer.
void fsync_directory(const std::string& directory);
// Writes `contents` to `path` atomically: temp file in the same directory, fsync, rename, fsync dir.
void write_file_atomically(const std::string& path, const std::string& contents);
// Deletes a checkpoint: the file, and when it is a shard index, the shards it names (best effort).
void remove_checkpoint_files(const std::string& path);
// The paths of the shards `path` names when it is a shard index; empty otherwise.
std::vector<std::string> shard_paths(const std::string& path);

}  // namespace cairn::ckpt
