// The ranks of a sharded checkpoint save (CheckpointManager::save_sharded) as the members of a
// distribute::Collective: threads over a LocalCollective, processes over an MpiCollective.
#pragma once

#include "runtime/checkpoint/manager.h"
#include "runtime/distribute/collective.h"

namespace cairn::ckpt {

class CollectiveShardGroup final : public ShardGroup {
 public:
  // Member `rank` of `collective` (InvalidArgument when out of range).
  CollectiveShardGroup(Ref<distribute::Collective> collective, int rank);
  int rank() const override { return rank_; }
  int size() const override { return collective_->size(); }
  std::vector<uint64_t> all_gather(const std::vector<uint64_t>& mine) override;

 private:
  Ref<distribute::Collective> collective_;
  int rank_;
};

}  // namespace cairn::ckpt
