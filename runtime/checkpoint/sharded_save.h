// Saving a Checkpoint as a sharded checkpoint (shard_index.h) from several ranks that hold the same
// values (data parallelism): the values are divided among the ranks by size, each writes its share,
// and rank 0 commits the index through the manager. Restoring needs nothing of this: a restore
// given the index reads every value from whichever shard holds it, with any number of ranks or none.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/manager.h"

namespace cairn::ckpt {

// Rank `rank`'s share of a snapshot among `count`: the values assign_shards gives it, and the
// object graph with only their attributes (so the shard is an ordinary, valid checkpoint file).
Checkpoint::Snapshot shard_snapshot(const Checkpoint::Snapshot& snapshot, int rank, int count);

// One rank's part of a sharded save of `ckpt` through `manager` (every rank of `group` calls it
// with the same number and the same variables; see save_sharded in manager.h). Adds one to the
// save counter, as a manager's save does; `number` < 0 numbers the checkpoint by the counter.
// Always synchronous, even with CheckpointOptions::async: its collectives must not interleave with
// the training step's. Returns the index's path.
std::string save_sharded(Checkpoint& ckpt, CheckpointManager& manager, ShardGroup& group, int64_t number);

}  // namespace cairn::ckpt
