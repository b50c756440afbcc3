#include "runtime/checkpoint/sharded_save.h"

#include <unordered_set>

#include "runtime/checkpoint/shard_index.h"

namespace cairn::ckpt {
namespace {

uint64_t value_bytes(const SaveEntry& e) {
  if (e.is_string) return e.bytes.size();
  return static_cast<uint64_t>(e.tensor.num_elements()) * dtype_size(e.tensor.dtype());
}

}  // namespace

Checkpoint::Snapshot shard_snapshot(const Checkpoint::Snapshot& snapshot, int rank, int count) {
  std::vector<std::pair<std::string, uint64_t>> sized;
  for (const SaveEntry& e : snapshot.entries) sized.emplace_back(e.key, value_bytes(e));
  const std::vector<int> owner = assign_shards(sized, count);
  Checkpoint::Snapshot out;
  out.metadata = snapshot.metadata;
  std::unordered_set<std::string> mine;
  for (size_t i = 0; i < snapshot.entries.size(); ++i) {
    if (owner[i] != rank) continue;
    out.entries.push_back(snapshot.entries[i]);
    mine.insert(snapshot.entries[i].key);
  }
  out.graph = snapshot.graph;
  for (Node& n : out.graph.nodes) {
    std::vector<Attribute> kept;
    for (Attribute& a : n.attributes)
      if (mine.count(a.key)) kept.push_back(std::move(a));
    n.attributes = std::move(kept);
  }
  return out;
}

std::string save_sharded(Checkpoint& ckpt, CheckpointManager& manager, ShardGroup& group, int64_t number) {
  ckpt.sync();  // an earlier background failure surfaces here, before anything changes
  const int64_t counter = ckpt.increment_save_counter("save_sharded");
  if (number < 0) number = counter;
  // The snapshot is taken inside the write, so that its errors reach the other ranks as a failed
  // shard rather than leaving them to wait for this one.
  return manager.save_sharded(number, group, [&](const std::string& path) {
    ckpt.write_snapshot(shard_snapshot(ckpt.snapshot(), group.rank(), group.size()), path);
  });
}

}  // namespace cairn::ckpt
